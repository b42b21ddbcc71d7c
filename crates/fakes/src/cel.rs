//! The subset of CEL that KFP evaluates in `triggerPolicy.condition` and
//! `parameterExpressionSelector`, and Tekton in `when: [{cel: …}]` (once
//! its variables are substituted into the text): literals, lists, member
//! and index access, `double`/`int`/`string`/`size`/`parseJson`, `!`,
//! unary `-`, comparisons, `in`, `&&`, `||` and `?:`, over JSON values.
//!
//! Hand-written rather than `cel-interpreter`: that crate (0.10) answers
//! `null` for a missing map key or list index where CEL fails, and a fake
//! that fails there is what catches a compiler that names a parameter it
//! did not bind.

use serde_json::{Map, Value};

/// Evaluates `expr` with the top-level names in `vars`.
pub fn eval(expr: &str, vars: &Map<String, Value>) -> Result<Value, String> {
    let tokens = lex(expr)?;
    let mut p = Parser { tokens, at: 0 };
    let ast = p.ternary()?;
    if p.at != p.tokens.len() {
        return Err(format!("unexpected {:?} in {expr:?}", p.tokens[p.at]));
    }
    ast.eval(vars)
}

/// Evaluates a condition: a result that is not a bool is an error.
pub fn condition(expr: &str, vars: &Map<String, Value>) -> Result<bool, String> {
    match eval(expr, vars)? {
        Value::Bool(b) => Ok(b),
        other => Err(format!("condition {expr:?} is not a bool: {other}")),
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Str(String),
    Num(f64),
    Ident(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "?", ":", "(", ")", "[", "]", ",", ".", "-",
];

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut text = String::new();
            i += 1;
            loop {
                let Some(&d) = chars.get(i) else {
                    return Err(format!("unterminated string in {s:?}"));
                };
                i += 1;
                if d == c {
                    break;
                }
                if d != '\\' {
                    text.push(d);
                    continue;
                }
                let e = *chars.get(i).ok_or("dangling escape")?;
                i += 1;
                match e {
                    'n' => text.push('\n'),
                    'r' => text.push('\r'),
                    't' => text.push('\t'),
                    'u' => {
                        let hex: String = chars.get(i..i + 4).ok_or("short \\u")?.iter().collect();
                        i += 4;
                        let n = u32::from_str_radix(&hex, 16).map_err(|e| e.to_string())?;
                        text.push(char::from_u32(n).ok_or("bad \\u escape")?);
                    }
                    other => text.push(other),
                }
            }
            out.push(Tok::Str(text));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len()
                && (chars[i].is_ascii_alphanumeric()
                    || chars[i] == '.'
                    || ((chars[i] == '-' || chars[i] == '+') && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let n = text
                .trim_end_matches(['u', 'U'])
                .parse::<f64>()
                .map_err(|_| format!("bad number {text:?}"))?;
            out.push(Tok::Num(n));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(Tok::Ident(chars[start..i].iter().collect()));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("unexpected {c:?} in {s:?}"))?;
            i += op.chars().count();
            out.push(Tok::Op(op));
        }
    }
    Ok(out)
}

#[derive(Debug)]
enum Ast {
    Lit(Value),
    List(Vec<Ast>),
    Var(String),
    Member(Box<Ast>, String),
    Index(Box<Ast>, Box<Ast>),
    Call(String, Vec<Ast>),
    Not(Box<Ast>),
    Neg(Box<Ast>),
    Bin(&'static str, Box<Ast>, Box<Ast>),
    Cond(Box<Ast>, Box<Ast>, Box<Ast>),
}

struct Parser {
    tokens: Vec<Tok>,
    at: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat(op) {
            Ok(())
        } else {
            Err(format!("expected {op:?}, found {:?}", self.peek()))
        }
    }

    fn ternary(&mut self) -> Result<Ast, String> {
        let cond = self.binary(0)?;
        if !self.eat("?") {
            return Ok(cond);
        }
        let then = self.ternary()?;
        self.expect(":")?;
        let otherwise = self.ternary()?;
        Ok(Ast::Cond(
            Box::new(cond),
            Box::new(then),
            Box::new(otherwise),
        ))
    }

    /// Precedence climbing: `||` < `&&` < relations.
    fn binary(&mut self, level: u8) -> Result<Ast, String> {
        const LEVELS: [&[&str]; 3] = [&["||"], &["&&"], &["==", "!=", "<", "<=", ">", ">=", "in"]];
        if level as usize == LEVELS.len() {
            return self.unary();
        }
        let mut lhs = self.binary(level + 1)?;
        loop {
            let op = match self.peek() {
                Some(Tok::Op(o)) if LEVELS[level as usize].contains(o) => *o,
                Some(Tok::Ident(i)) if i == "in" && level == 2 => "in",
                _ => return Ok(lhs),
            };
            self.at += 1;
            let rhs = self.binary(level + 1)?;
            lhs = Ast::Bin(op, Box::new(lhs), Box::new(rhs));
        }
    }

    fn unary(&mut self) -> Result<Ast, String> {
        if self.eat("!") {
            return Ok(Ast::Not(Box::new(self.unary()?)));
        }
        if self.eat("-") {
            return Ok(Ast::Neg(Box::new(self.unary()?)));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Ast, String> {
        let mut e = self.primary()?;
        loop {
            if self.eat(".") {
                match self.tokens.get(self.at).cloned() {
                    Some(Tok::Ident(name)) => {
                        self.at += 1;
                        e = Ast::Member(Box::new(e), name);
                    }
                    other => return Err(format!("expected a field name, found {other:?}")),
                }
            } else if self.eat("[") {
                let index = self.ternary()?;
                self.expect("]")?;
                e = Ast::Index(Box::new(e), Box::new(index));
            } else {
                return Ok(e);
            }
        }
    }

    fn primary(&mut self) -> Result<Ast, String> {
        let tok = self.tokens.get(self.at).cloned().ok_or("unexpected end")?;
        self.at += 1;
        match tok {
            Tok::Str(s) => Ok(Ast::Lit(Value::String(s))),
            Tok::Num(n) => Ok(Ast::Lit(number(n))),
            Tok::Ident(name) => match name.as_str() {
                "true" => Ok(Ast::Lit(Value::Bool(true))),
                "false" => Ok(Ast::Lit(Value::Bool(false))),
                "null" => Ok(Ast::Lit(Value::Null)),
                _ if self.eat("(") => {
                    let mut args = Vec::new();
                    if !self.eat(")") {
                        loop {
                            args.push(self.ternary()?);
                            if self.eat(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    Ok(Ast::Call(name, args))
                }
                _ => Ok(Ast::Var(name)),
            },
            Tok::Op("(") => {
                let e = self.ternary()?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Op("[") => {
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.ternary()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Ast::List(items))
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }
}

fn number(n: f64) -> Value {
    serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)
}

impl Ast {
    fn eval(&self, vars: &Map<String, Value>) -> Result<Value, String> {
        Ok(match self {
            Ast::Lit(v) => v.clone(),
            Ast::List(items) => Value::Array(
                items
                    .iter()
                    .map(|i| i.eval(vars))
                    .collect::<Result<_, _>>()?,
            ),
            Ast::Var(name) => vars
                .get(name)
                .cloned()
                .ok_or_else(|| format!("undeclared reference to {name:?}"))?,
            Ast::Member(e, field) => match e.eval(vars)? {
                Value::Object(m) => m
                    .get(field)
                    .cloned()
                    .ok_or_else(|| format!("no such key: {field}"))?,
                other => return Err(format!("cannot select {field} of {other}")),
            },
            Ast::Index(e, i) => match (e.eval(vars)?, i.eval(vars)?) {
                (Value::Object(m), Value::String(k)) => m
                    .get(&k)
                    .cloned()
                    .ok_or_else(|| format!("no such key: {k}"))?,
                (Value::Array(a), Value::Number(n)) => a
                    .get(n.as_f64().unwrap_or(-1.0) as usize)
                    .cloned()
                    .ok_or_else(|| format!("index {n} out of range"))?,
                (c, i) => return Err(format!("cannot index {c} with {i}")),
            },
            Ast::Call(f, args) => {
                let args: Vec<Value> = args
                    .iter()
                    .map(|a| a.eval(vars))
                    .collect::<Result<_, _>>()?;
                call(f, &args)?
            }
            Ast::Not(e) => match e.eval(vars)? {
                Value::Bool(b) => Value::Bool(!b),
                other => return Err(format!("cannot negate {other}")),
            },
            Ast::Neg(e) => match e.eval(vars)? {
                Value::Number(n) => number(-n.as_f64().unwrap_or(0.0)),
                other => return Err(format!("cannot negate {other}")),
            },
            Ast::Cond(c, a, b) => match c.eval(vars)? {
                Value::Bool(true) => a.eval(vars)?,
                Value::Bool(false) => b.eval(vars)?,
                other => return Err(format!("condition is not a bool: {other}")),
            },
            Ast::Bin(op, a, b) => binary(op, a, b, vars)?,
        })
    }
}

fn binary(op: &str, a: &Ast, b: &Ast, vars: &Map<String, Value>) -> Result<Value, String> {
    let bool_of = |v: Value| match v {
        Value::Bool(b) => Ok(b),
        other => Err(format!("{op} needs bools, got {other}")),
    };
    match op {
        // Short-circuiting, as CEL's logical operators are.
        "&&" => Ok(Value::Bool(
            bool_of(a.eval(vars)?)? && bool_of(b.eval(vars)?)?,
        )),
        "||" => Ok(Value::Bool(
            bool_of(a.eval(vars)?)? || bool_of(b.eval(vars)?)?,
        )),
        _ => {
            let (x, y) = (a.eval(vars)?, b.eval(vars)?);
            match op {
                "==" => Ok(Value::Bool(same(&x, &y))),
                "!=" => Ok(Value::Bool(!same(&x, &y))),
                "in" => match y {
                    Value::Array(items) => Ok(Value::Bool(items.iter().any(|i| same(&x, i)))),
                    Value::Object(m) => {
                        Ok(Value::Bool(x.as_str().is_some_and(|k| m.contains_key(k))))
                    }
                    other => Err(format!("`in` needs a list, got {other}")),
                },
                _ => {
                    let ordering = match (&x, &y) {
                        (Value::Number(m), Value::Number(n)) => m.as_f64().partial_cmp(&n.as_f64()),
                        (Value::String(m), Value::String(n)) => Some(m.cmp(n)),
                        _ => None,
                    }
                    .ok_or_else(|| format!("no such overload: {x} {op} {y}"))?;
                    Ok(Value::Bool(match op {
                        "<" => ordering.is_lt(),
                        "<=" => ordering.is_le(),
                        ">" => ordering.is_gt(),
                        _ => ordering.is_ge(),
                    }))
                }
            }
        }
    }
}

/// Equality; numbers compare by value (`3 == 3.0`).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(m), Value::Number(n)) => m.as_f64() == n.as_f64(),
        _ => a == b,
    }
}

fn call(f: &str, args: &[Value]) -> Result<Value, String> {
    let one = || match args {
        [a] => Ok(a),
        _ => Err(format!("{f} takes one argument")),
    };
    match f {
        "double" | "int" => {
            let n = match one()? {
                Value::Number(n) => n.as_f64().unwrap_or(f64::NAN),
                Value::String(s) => match s.trim() {
                    "inf" | "Infinity" => f64::INFINITY,
                    "-inf" | "-Infinity" => f64::NEG_INFINITY,
                    t => t
                        .parse::<f64>()
                        .map_err(|_| format!("{f}({s:?}): not a number"))?,
                },
                other => return Err(format!("{f}({other}): not a number")),
            };
            let n = if f == "int" { n.trunc() } else { n };
            // JSON has no infinities: keep them comparable as the largest doubles.
            Ok(number(if n.is_infinite() {
                n.signum() * f64::MAX
            } else {
                n
            }))
        }
        "string" => Ok(Value::String(match one()? {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })),
        "size" => Ok(number(match one()? {
            Value::String(s) => s.chars().count(),
            Value::Array(a) => a.len(),
            Value::Object(m) => m.len(),
            other => return Err(format!("size({other})")),
        } as f64)),
        "parseJson" => match one()? {
            Value::String(s) => serde_json::from_str(s).map_err(|e| format!("parseJson: {e}")),
            other => Err(format!("parseJson({other}): not a string")),
        },
        _ => Err(format!("unsupported function {f}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vars(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn conditions_as_the_compiler_writes_them() {
        let v = vars(
            json!({"inputs": {"parameter_values": {"pipelinechannel--flip-result": "heads", "n": "3"}}}),
        );
        let x = "inputs.parameter_values['pipelinechannel--flip-result']";
        assert!(condition(&format!("{x} == 'heads'"), &v).unwrap());
        assert!(!condition(&format!("{x} != 'heads'"), &v).unwrap());
        assert!(condition(&format!("{x} in ['a', 'heads']"), &v).unwrap());
        assert!(!condition(&format!("!({x} in ['a', 'heads'])"), &v).unwrap());
        let n = "double(inputs.parameter_values['n'])";
        assert!(condition(&format!("{n} >= 3.0"), &v).unwrap());
        assert!(condition(&format!("({n} < 4.0) && ({n} > 2.5)"), &v).unwrap());
        assert!(condition(&format!("{n} < double('inf')"), &v).unwrap());
        assert!(condition(&format!("{n} > -1.5e2"), &v).unwrap());
        assert!(condition(r"'it\'s' == 'it\'s'", &v).unwrap());
        assert!(condition("inputs.parameter_values['missing'] == 'x'", &v).is_err());
        assert!(condition("double('abc') > 1.0", &v).is_err());
    }

    #[test]
    fn selectors_as_the_compiler_writes_them() {
        let status = "struct_value.state == 'SUCCEEDED' ? 'succeeded' : (struct_value.state == 'FAILED' ? 'failed' : (struct_value.state == 'CANCELED' ? 'cancelled' : struct_value.state))";
        for (state, word) in [
            ("SUCCEEDED", "succeeded"),
            ("FAILED", "failed"),
            ("CANCELED", "cancelled"),
            ("X", "X"),
        ] {
            let v = vars(json!({"struct_value": {"state": state}}));
            assert_eq!(eval(status, &v).unwrap(), json!(word));
        }
        let v = vars(json!({"string_value": "{\"lr\": 0.1, \"name\": \"a\"}"}));
        assert_eq!(
            eval("parseJson(string_value)[\"name\"]", &v).unwrap(),
            json!("a")
        );
        assert_eq!(
            eval("parseJson(string_value)['lr']", &v).unwrap(),
            json!(0.1)
        );
        assert!(eval("1 == 1 extra", &v).is_err());
    }
}
