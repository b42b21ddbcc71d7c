//! Argo's small languages: `{{…}}` tags in strings and govaluate `when`
//! expressions (enhanced `depends` expressions are in `depends`).

use couler_ir::scalar::ParamValue;
use couler_ir::{Condition, Operator};

/// A piece of an Argo string: literal text or a `{{…}}` tag.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Piece<'a> {
    Text(&'a str),
    /// The tag's inner text, trimmed.
    Tag(&'a str),
    /// An unterminated `{{` and the text after it.
    Unterminated(&'a str),
}

pub(super) fn pieces(s: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = s;
    while !rest.is_empty() {
        match rest.find("{{") {
            Some(0) => match rest.find("}}") {
                Some(end) => {
                    out.push(Piece::Tag(rest[2..end].trim()));
                    rest = &rest[end + 2..];
                }
                None => {
                    out.push(Piece::Unterminated(&rest[2..]));
                    rest = "";
                }
            },
            Some(start) => {
                out.push(Piece::Text(&rest[..start]));
                rest = &rest[start..];
            }
            None => {
                out.push(Piece::Text(rest));
                rest = "";
            }
        }
    }
    out
}

/// Names of sibling tasks or steps a string reads (`{{tasks.X.…}}`,
/// `{{steps.X.…}}`), for ordering.
pub(super) fn sibling_reads(s: &str) -> Vec<&str> {
    pieces(s)
        .into_iter()
        .filter_map(|p| match p {
            Piece::Tag(tag) => {
                let mut parts = tag.split('.');
                match (parts.next(), parts.next()) {
                    (Some("tasks" | "steps"), Some(name)) => Some(name),
                    _ => None,
                }
            }
            _ => None,
        })
        .collect()
}

/// Splits `s` at every top-level occurrence of `sep` (outside quotes,
/// parentheses and `{{…}}`).
fn split_top<'a>(s: &'a str, sep: &str) -> Vec<&'a str> {
    let mut parts = Vec::new();
    let (mut depth, mut quote, mut start, mut i) = (0i32, None::<u8>, 0, 0);
    let b = s.as_bytes();
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'\'' || c == b'"' => quote = Some(c),
            None if b[i..].starts_with(b"{{") => {
                depth += 1;
                i += 2;
                continue;
            }
            None if b[i..].starts_with(b"}}") => {
                depth -= 1;
                i += 2;
                continue;
            }
            None if c == b'(' => depth += 1,
            None if c == b')' => depth -= 1,
            None if depth == 0 && b[i..].starts_with(sep.as_bytes()) => {
                parts.push(&s[start..i]);
                i += sep.len();
                start = i;
                continue;
            }
            None => {}
        }
        i += 1;
    }
    parts.push(&s[start..]);
    parts
}

/// `s` without parentheses around the whole of it.
fn strip_parens(s: &str) -> &str {
    let mut s = s.trim();
    while s.starts_with('(') && s.ends_with(')') && closes_at_end(s) {
        s = s[1..s.len() - 1].trim();
    }
    s
}

/// Whether the `(` opening `s` closes at its last character.
fn closes_at_end(s: &str) -> bool {
    let (mut depth, mut quote) = (0i32, None::<char>);
    for (i, c) in s.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '(' => depth += 1,
            None if c == ')' => {
                depth -= 1;
                if depth == 0 {
                    return i == s.len() - 1;
                }
            }
            None => {}
        }
    }
    false
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    let b = s.as_bytes();
    if b.len() >= 2 && (b[0] == b'\'' || b[0] == b'"') && b[b.len() - 1] == b[0] {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

const OPERATORS: [(&str, Option<Operator>); 8] = [
    ("==", Some(Operator::Eq)),
    ("!=", Some(Operator::Ne)),
    ("<=", Some(Operator::Le)),
    (">=", Some(Operator::Ge)),
    ("=~", None),
    ("!~", None),
    ("<", Some(Operator::Lt)),
    (">", Some(Operator::Gt)),
];

/// One comparison: (input, operator, value).
fn comparison(term: &str) -> Result<(String, Operator, String), String> {
    let term = strip_parens(term);
    if split_top(term, "&&").len() > 1 || split_top(term, "||").len() > 1 {
        return Err("`&&` inside `||` has no IR form".into());
    }
    for (symbol, operator) in OPERATORS {
        let sides = split_top(term, symbol);
        if sides.len() == 1 {
            continue;
        }
        let Some(operator) = operator else {
            return Err(format!(
                "the regular-expression match `{symbol}` has no IR operator"
            ));
        };
        if sides.len() != 2 {
            return Err(format!("`{term}` chains comparisons"));
        }
        let (left, right) = (unquote(sides[0]), unquote(sides[1]));
        let (l_ref, r_ref) = (left.contains("{{"), right.contains("{{"));
        return match (l_ref, r_ref) {
            (true, true) => Err(format!(
                "`{term}` compares two values known only at run time"
            )),
            (false, true) => Ok((right.to_owned(), flip(operator), left.to_owned())),
            _ => Ok((left.to_owned(), operator, right.to_owned())),
        };
    }
    if term.starts_with('!') {
        return Err(format!("negation `{term}` has no IR form"));
    }
    // A bare value is a boolean test.
    Ok((unquote(term).to_owned(), Operator::Eq, "true".to_owned()))
}

fn flip(op: Operator) -> Operator {
    match op {
        Operator::Lt => Operator::Gt,
        Operator::Gt => Operator::Lt,
        Operator::Le => Operator::Ge,
        Operator::Ge => Operator::Le,
        other => other,
    }
}

/// A govaluate `when` (its tags already rewritten to IR references) as IR
/// conditions, all of which must hold; `Err` says why it has no IR form.
pub(super) fn when(expression: &str) -> Result<Vec<Condition>, String> {
    let mut conditions = Vec::new();
    for term in split_top(strip_parens(expression), "&&") {
        let term = strip_parens(term);
        if term.is_empty() {
            return Err("an empty operand of `&&`".into());
        }
        let alternatives = split_top(term, "||");
        let condition = if alternatives.len() == 1 {
            let (input, operator, value) = comparison(term)?;
            Condition {
                value: Some(ParamValue(value)),
                ..condition(input, operator)
            }
        } else {
            // `x == a || x == b` is `x in [a, b]`; nothing else is.
            let mut input = None;
            let mut values = Vec::new();
            for alternative in alternatives {
                match comparison(alternative)? {
                    (i, Operator::Eq, v) if input.as_ref().is_none_or(|x| *x == i) => {
                        input = Some(i);
                        values.push(ParamValue(v));
                    }
                    _ => return Err(format!("`{term}`: only `x == a || x == b` has an IR form")),
                }
            }
            Condition {
                values,
                ..condition(input.unwrap_or_default(), Operator::In)
            }
        };
        conditions.push(status_values(condition));
    }
    for c in &conditions {
        if let Some(v) = &c.value {
            if v.as_str().contains("{{") {
                return Err("a compared value is known only at run time".into());
            }
            if c.operator.is_numeric() && v.as_str().trim().parse::<f64>().is_err() {
                return Err(format!(
                    "`{}` compares {:?} as a number",
                    c.operator,
                    v.as_str()
                ));
            }
        }
    }
    Ok(conditions)
}

fn condition(input: String, operator: Operator) -> Condition {
    Condition {
        input,
        operator,
        value: None,
        values: Vec::new(),
    }
}

/// Argo's workflow phases as Couler's statuses.
fn status_values(mut c: Condition) -> Condition {
    if c.input.trim() != "{{workflow.status}}" {
        return c;
    }
    let map = |v: &mut ParamValue| {
        let lower = match v.as_str() {
            "Succeeded" => "succeeded",
            "Failed" | "Error" => "failed",
            _ => return,
        };
        *v = ParamValue(lower.to_owned());
    };
    c.value.iter_mut().for_each(map);
    c.values.iter_mut().for_each(map);
    c
}
