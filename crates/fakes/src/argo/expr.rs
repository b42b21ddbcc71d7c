//! The expressions Argo evaluates: govaluate for `when` (and for `depends`,
//! once each task reference is written in as `true` or `false`), and
//! expr-lang for `{{=…}}` tags. One evaluator covers what the two share:
//! numbers, `'…'`/`"…"` strings, `true`/`false`/`nil`, names with `.x` and
//! `['x']` lookups, list literals, `!`/`not`, `== != < > <= >= in`, `+ - * /
//! %`, `&&`/`and`, `||`/`or`, `c ? a : b`, and the functions `string`,
//! `int`, `float`, `asInt`, `asFloat`, `len`.

use serde_json::Value;
use std::collections::BTreeMap;

/// A value of an expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Nil,
    Bool(bool),
    Num(f64),
    Str(String),
    List(Vec<Val>),
    Map(BTreeMap<String, Val>),
}

impl Val {
    pub fn from_json(v: &Value) -> Val {
        match v {
            Value::Null => Val::Nil,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => Val::Num(n.as_f64().unwrap_or_default()),
            Value::String(s) => Val::Str(s.clone()),
            Value::Array(a) => Val::List(a.iter().map(Val::from_json).collect()),
            Value::Object(o) => Val::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Val::from_json(v)))
                    .collect(),
            ),
        }
    }

    fn to_json(&self) -> Value {
        match self {
            Val::Nil => Value::Null,
            Val::Bool(b) => Value::Bool(*b),
            Val::Num(n) if n.fract() == 0.0 && n.abs() < 1e15 => Value::from(*n as i64),
            Val::Num(n) => Value::from(*n),
            Val::Str(s) => Value::String(s.clone()),
            Val::List(l) => Value::Array(l.iter().map(Val::to_json).collect()),
            Val::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
        }
    }

    /// The value written into text: strings as they are, whole numbers
    /// without a fraction, lists and maps as JSON.
    pub fn text(&self) -> String {
        match self {
            Val::Nil => String::new(),
            Val::Str(s) => s.clone(),
            other => other.to_json().to_string(),
        }
    }

    fn number(&self) -> Option<f64> {
        match self {
            Val::Num(n) => Some(*n),
            Val::Str(s) => s.trim().parse().ok(),
            _ => None,
        }
    }
}

/// Evaluates `source` with `env` (a map of names).
pub fn eval(source: &str, env: &BTreeMap<String, Val>) -> Result<Val, String> {
    let tokens = lex(source)?;
    let mut p = Parser { tokens, at: 0, env };
    let v = p.ternary()?;
    match p.tokens.get(p.at) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected {t:?} in {source:?}")),
    }
}

/// Evaluates a condition; anything but a boolean is an error.
pub fn condition(source: &str, env: &BTreeMap<String, Val>) -> Result<bool, String> {
    match eval(source, env)? {
        Val::Bool(b) => Ok(b),
        other => Err(format!(
            "{source:?} is not a boolean expression (it is {})",
            other.text()
        )),
    }
}

/// How a task of a DAG ended, for `depends`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskResult {
    Succeeded,
    Failed,
    Errored,
    Skipped,
    Omitted,
}

/// Evaluates a `depends` expression: `a`, `a.Succeeded`, `a.Failed`,
/// `a.Errored`, `a.Skipped`, `a.Omitted`, `a.Daemoned`, `a.Completed`,
/// `a.AnySucceeded`, `a.AllFailed` … joined by `&&`, `||`, `!` and
/// parentheses. `result(task)` gives a finished task's result (for a
/// fanned-out task, every instance's).
pub fn depends(
    source: &str,
    result: &dyn Fn(&str) -> Option<Vec<TaskResult>>,
) -> Result<bool, String> {
    let mut rewritten = String::with_capacity(source.len());
    for (word, is_name) in depends_words(source) {
        if !is_name {
            rewritten.push_str(word);
            continue;
        }
        let (task, property) = match word.split_once('.') {
            Some((t, p)) => (t, Some(p)),
            None => (word, None),
        };
        let results = result(task).ok_or_else(|| format!("{task:?} has not finished"))?;
        let any = |r: TaskResult| results.contains(&r);
        let value = match property {
            // A bare name: the task did not fail.
            None => {
                !results.is_empty()
                    && results
                        .iter()
                        .all(|r| matches!(r, TaskResult::Succeeded | TaskResult::Skipped))
            }
            Some("Succeeded") => {
                !results.is_empty() && results.iter().all(|r| *r == TaskResult::Succeeded)
            }
            Some("Failed") => any(TaskResult::Failed),
            Some("Errored") => any(TaskResult::Errored),
            Some("Skipped") => {
                !results.is_empty() && results.iter().all(|r| *r == TaskResult::Skipped)
            }
            Some("Omitted") => {
                !results.is_empty() && results.iter().all(|r| *r == TaskResult::Omitted)
            }
            Some("Daemoned") => false,
            Some("Completed") => {
                !results.is_empty()
                    && results
                        .iter()
                        .all(|r| matches!(r, TaskResult::Succeeded | TaskResult::Failed))
            }
            Some("AnySucceeded") => any(TaskResult::Succeeded),
            Some("AllFailed") => {
                !results.is_empty() && results.iter().all(|r| *r == TaskResult::Failed)
            }
            Some("AnyFailed") => any(TaskResult::Failed),
            Some(other) => return Err(format!("unknown task result {other:?} in {source:?}")),
        };
        rewritten.push_str(if value { "true" } else { "false" });
    }
    condition(&rewritten, &BTreeMap::new())
}

/// The tasks a `depends` expression names.
pub fn depends_tasks(source: &str) -> Vec<String> {
    let mut tasks: Vec<String> = Vec::new();
    for (word, is_name) in depends_words(source) {
        if is_name {
            let task = word.split_once('.').map_or(word, |(t, _)| t);
            if !tasks.iter().any(|t| t == task) {
                tasks.push(task.to_owned());
            }
        }
    }
    tasks
}

/// `depends` split into task references (names may hold `-`) and the rest.
fn depends_words(source: &str) -> Vec<(&str, bool)> {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    let mut words = Vec::new();
    let mut start = 0;
    let mut in_name = false;
    for (i, c) in source.char_indices() {
        if is_name_char(c) != in_name {
            if i > start {
                words.push((&source[start..i], in_name));
            }
            start = i;
            in_name = !in_name;
        }
    }
    if start < source.len() {
        words.push((&source[start..], in_name));
    }
    words
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(f64),
    Str(String),
    Name(String),
    Op(&'static str),
}

const OPS: &[&str] = &[
    "&&", "||", "==", "!=", "<=", ">=", "<", ">", "!", "+", "-", "*", "/", "%", "(", ")", "[", "]",
    ".", "?", ":", ",",
];

fn lex(source: &str) -> Result<Vec<Tok>, String> {
    let chars: Vec<char> = source.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let mut text = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err(format!("unterminated string in {source:?}")),
                    Some('\\') if chars.get(i + 1).is_some() => {
                        text.push(chars[i + 1]);
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        text.push(other);
                        i += 1;
                    }
                }
            }
            tokens.push(Tok::Str(text));
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                // `1.x` is not a number followed by a member.
                if chars[i] == '.' && !chars.get(i + 1).is_some_and(char::is_ascii_digit) {
                    break;
                }
                i += 1;
            }
            let text: String = chars[start..i].iter().collect();
            let n = text
                .parse()
                .map_err(|_| format!("bad number {text:?} in {source:?}"))?;
            tokens.push(Tok::Num(n));
        } else if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while i < chars.len()
                && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '$')
            {
                i += 1;
            }
            tokens.push(Tok::Name(chars[start..i].iter().collect()));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let op = OPS
                .iter()
                .find(|op| rest.starts_with(**op))
                .ok_or_else(|| format!("unexpected {c:?} in {source:?}"))?;
            tokens.push(Tok::Op(op));
            i += op.len();
        }
    }
    Ok(tokens)
}

struct Parser<'e> {
    tokens: Vec<Tok>,
    at: usize,
    env: &'e BTreeMap<String, Val>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.tokens.get(self.at)
    }

    fn eat_op(&mut self, op: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Op(o)) if *o == op) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn eat_word(&mut self, word: &str) -> bool {
        if matches!(self.peek(), Some(Tok::Name(n)) if n == word) {
            self.at += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, op: &str) -> Result<(), String> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(format!("expected {op:?}, found {:?}", self.peek()))
        }
    }

    fn ternary(&mut self) -> Result<Val, String> {
        let c = self.or()?;
        if !self.eat_op("?") {
            return Ok(c);
        }
        let yes = self.ternary()?;
        self.expect(":")?;
        let no = self.ternary()?;
        match c {
            Val::Bool(true) => Ok(yes),
            Val::Bool(false) | Val::Nil => Ok(no),
            other => Err(format!("{} is not a boolean", other.text())),
        }
    }

    fn or(&mut self) -> Result<Val, String> {
        let mut left = self.and()?;
        while self.eat_op("||") || self.eat_word("or") {
            let right = self.and()?;
            left = Val::Bool(boolean(&left)? || boolean(&right)?);
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Val, String> {
        let mut left = self.comparison()?;
        while self.eat_op("&&") || self.eat_word("and") {
            let right = self.comparison()?;
            left = Val::Bool(boolean(&left)? && boolean(&right)?);
        }
        Ok(left)
    }

    fn comparison(&mut self) -> Result<Val, String> {
        let left = self.sum()?;
        for op in ["==", "!=", "<=", ">=", "<", ">"] {
            if self.eat_op(op) {
                let right = self.sum()?;
                return compare(op, &left, &right).map(Val::Bool);
            }
        }
        if self.eat_word("in") {
            let right = self.sum()?;
            return match right {
                Val::List(items) => Ok(Val::Bool(
                    items.iter().any(|i| compare("==", &left, i) == Ok(true)),
                )),
                Val::Map(m) => Ok(Val::Bool(m.contains_key(&left.text()))),
                other => Err(format!("`in` needs a list, not {}", other.text())),
            };
        }
        Ok(left)
    }

    fn sum(&mut self) -> Result<Val, String> {
        let mut left = self.product()?;
        loop {
            if self.eat_op("+") {
                let right = self.product()?;
                left = match (&left, &right) {
                    (Val::Num(a), Val::Num(b)) => Val::Num(a + b),
                    _ => Val::Str(left.text() + &right.text()),
                };
            } else if self.eat_op("-") {
                let right = self.product()?;
                left = Val::Num(arith(&left)? - arith(&right)?);
            } else {
                return Ok(left);
            }
        }
    }

    fn product(&mut self) -> Result<Val, String> {
        let mut left = self.unary()?;
        loop {
            let op = if self.eat_op("*") {
                '*'
            } else if self.eat_op("/") {
                '/'
            } else if self.eat_op("%") {
                '%'
            } else {
                return Ok(left);
            };
            let (a, b) = (arith(&left)?, arith(&self.unary()?)?);
            left = Val::Num(match op {
                '*' => a * b,
                '/' => a / b,
                _ => a % b,
            });
        }
    }

    fn unary(&mut self) -> Result<Val, String> {
        if self.eat_op("!") || self.eat_word("not") {
            return Ok(Val::Bool(!boolean(&self.unary()?)?));
        }
        if self.eat_op("-") {
            return Ok(Val::Num(-arith(&self.unary()?)?));
        }
        self.postfix()
    }

    fn postfix(&mut self) -> Result<Val, String> {
        let mut v = self.primary()?;
        loop {
            if self.eat_op(".") {
                match self.tokens.get(self.at).cloned() {
                    Some(Tok::Name(n)) => {
                        self.at += 1;
                        v = member(&v, &Val::Str(n));
                    }
                    other => return Err(format!("expected a name after '.', found {other:?}")),
                }
            } else if self.eat_op("[") {
                let key = self.ternary()?;
                self.expect("]")?;
                v = member(&v, &key);
            } else {
                return Ok(v);
            }
        }
    }

    fn primary(&mut self) -> Result<Val, String> {
        let token = self
            .tokens
            .get(self.at)
            .cloned()
            .ok_or("the expression ends early")?;
        self.at += 1;
        match token {
            Tok::Num(n) => Ok(Val::Num(n)),
            Tok::Str(s) => Ok(Val::Str(s)),
            Tok::Op("(") => {
                let v = self.ternary()?;
                self.expect(")")?;
                Ok(v)
            }
            Tok::Op("[") => {
                let mut items = Vec::new();
                if !self.eat_op("]") {
                    loop {
                        items.push(self.ternary()?);
                        if self.eat_op("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Ok(Val::List(items))
            }
            Tok::Name(n) => match n.as_str() {
                "true" => Ok(Val::Bool(true)),
                "false" => Ok(Val::Bool(false)),
                "nil" | "null" => Ok(Val::Nil),
                _ if self.eat_op("(") => {
                    let mut args = Vec::new();
                    if !self.eat_op(")") {
                        loop {
                            args.push(self.ternary()?);
                            if self.eat_op(")") {
                                break;
                            }
                            self.expect(",")?;
                        }
                    }
                    call(&n, &args)
                }
                _ => self
                    .env
                    .get(&n)
                    .cloned()
                    .ok_or_else(|| format!("unknown name {n:?}")),
            },
            Tok::Op(op) => Err(format!("unexpected {op:?}")),
        }
    }
}

fn boolean(v: &Val) -> Result<bool, String> {
    match v {
        Val::Bool(b) => Ok(*b),
        other => Err(format!("{:?} is not a boolean", other.text())),
    }
}

fn arith(v: &Val) -> Result<f64, String> {
    v.number()
        .ok_or_else(|| format!("{:?} is not a number", v.text()))
}

fn member(v: &Val, key: &Val) -> Val {
    match (v, key) {
        (Val::Map(m), k) => m.get(&k.text()).cloned().unwrap_or(Val::Nil),
        (Val::List(l), Val::Num(i)) => l.get(*i as usize).cloned().unwrap_or(Val::Nil),
        _ => Val::Nil,
    }
}

fn compare(op: &str, a: &Val, b: &Val) -> Result<bool, String> {
    use std::cmp::Ordering;
    let order = match (a, b) {
        (Val::Num(_), _) | (_, Val::Num(_)) => match (a.number(), b.number()) {
            (Some(x), Some(y)) => x.partial_cmp(&y),
            _ => None,
        },
        (Val::Str(x), Val::Str(y)) => Some(x.cmp(y)),
        _ => None,
    };
    match (op, order) {
        ("==", o) => Ok(o.map_or(a == b, |o| o == Ordering::Equal)),
        ("!=", o) => Ok(o.map_or(a != b, |o| o != Ordering::Equal)),
        (_, None) => Err(format!(
            "cannot compare {:?} and {:?} with {op}",
            a.text(),
            b.text()
        )),
        ("<", Some(o)) => Ok(o == Ordering::Less),
        (">", Some(o)) => Ok(o == Ordering::Greater),
        ("<=", Some(o)) => Ok(o != Ordering::Greater),
        (_, Some(o)) => Ok(o != Ordering::Less),
    }
}

fn call(name: &str, args: &[Val]) -> Result<Val, String> {
    let [arg] = args else {
        return Err(format!("{name} takes one argument"));
    };
    match name {
        "string" => Ok(Val::Str(arg.text())),
        "int" | "asInt" => Ok(Val::Num(arith(arg)?.trunc())),
        "float" | "asFloat" => Ok(Val::Num(arith(arg)?)),
        "len" => match arg {
            Val::List(l) => Ok(Val::Num(l.len() as f64)),
            Val::Map(m) => Ok(Val::Num(m.len() as f64)),
            other => Ok(Val::Num(other.text().chars().count() as f64)),
        },
        _ => Err(format!("unknown function {name:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> BTreeMap<String, Val> {
        let v = serde_json::json!({
            "workflow": {"status": "Failed", "annotations": {"couler-cancelled": "true"}},
            "inputs": {"parameters": {"n": "7"}},
        });
        match Val::from_json(&v) {
            Val::Map(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn when_conditions_compare_strings_and_numbers() {
        let none = BTreeMap::new();
        assert!(condition("'heads' == 'heads'", &none).unwrap());
        assert!(!condition("'tails' == 'heads'", &none).unwrap());
        assert!(condition("'a' != 'b' && 2 > 1", &none).unwrap());
        assert!(condition("10 > 9 || false", &none).unwrap());
        assert!(condition("1.5 <= 1.5 && !(3 < 2)", &none).unwrap());
        assert!(condition("'x' == 'y' || 'x' == 'x'", &none).unwrap());
        assert!(condition("'3' == 3", &none).unwrap());
        assert!(
            condition("tails == heads", &none).is_err(),
            "bare words are unknown names"
        );
        assert!(condition("'a'", &none).is_err());
        assert!(condition("1 +", &none).is_err());
    }

    #[test]
    fn expr_tags_read_the_environment() {
        let env = env();
        let status = "workflow.status == 'Succeeded' ? 'succeeded' : (workflow.annotations['couler-cancelled'] == 'true' ? 'cancelled' : 'failed')";
        assert_eq!(eval(status, &env).unwrap(), Val::Str("cancelled".into()));
        assert_eq!(
            eval("asInt(inputs.parameters.n) * 2 + 1", &env)
                .unwrap()
                .text(),
            "15"
        );
        assert_eq!(eval("workflow.missing", &env).unwrap(), Val::Nil);
        assert_eq!(eval("'b' in ['a', 'b']", &env).unwrap(), Val::Bool(true));
        assert_eq!(
            eval("len([1, 2]) == 2 and not false", &env).unwrap(),
            Val::Bool(true)
        );
        assert_eq!(eval("'a' + 'b'", &env).unwrap().text(), "ab");
        assert_eq!(eval("1.25", &env).unwrap().text(), "1.25");
    }

    #[test]
    fn depends_reads_task_results() {
        use TaskResult::*;
        let results = |t: &str| match t {
            "a" => Some(vec![Succeeded]),
            "b-1" => Some(vec![Failed]),
            "c" => Some(vec![Skipped]),
            "m" => Some(vec![Succeeded, Failed]),
            _ => None,
        };
        assert!(depends("a.Succeeded && b-1.Failed", &results).unwrap());
        assert!(
            depends("a && c", &results).unwrap(),
            "a bare name accepts a skip"
        );
        assert!(!depends("b-1", &results).unwrap());
        assert!(depends("(a.Failed || b-1.Completed) && !c.Succeeded", &results).unwrap());
        assert!(depends("c.Skipped && !a.Omitted && !a.Errored", &results).unwrap());
        assert!(depends("m.AnySucceeded && m.AnyFailed && !m.AllFailed", &results).unwrap());
        assert!(depends("a.Bogus", &results).is_err());
        assert!(depends("z", &results).is_err());
        assert_eq!(
            depends_tasks("a.Succeeded && (b-1 || !a.Failed)"),
            ["a", "b-1"]
        );
    }
}
