//! `when` conditions as the CEL expressions KFP evaluates in
//! `triggerPolicy.condition`, over the task's own inputs
//! (`inputs.parameter_values['…']`), in the shape the KFP SDK emits.

use couler_ir::{Condition, Operator};

/// A task input parameter.
pub fn input(name: &str) -> String {
    format!("inputs.parameter_values['{name}']")
}

/// A CEL string literal.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\'' => out.push_str("\\'"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('\'');
    out
}

/// A CEL double: numbers compare as numbers, as the IR's `lt`…`ge` do.
fn double(value: &str) -> String {
    match value.trim().parse::<f64>() {
        // Debug keeps a decimal point or exponent (`3.0`, `1e21`), which CEL
        // needs to read a double rather than an int.
        Ok(v) if v.is_finite() => format!("{v:?}"),
        _ => format!("double({})", string(value.trim())),
    }
}

/// `lhs OP value` for one condition; string comparison for `eq`/`ne`/`in`.
pub fn compare(lhs: &str, c: &Condition) -> String {
    let value = c.value.as_ref().map(|v| v.as_str()).unwrap_or_default();
    let list = || {
        let items: Vec<String> = c.values.iter().map(|v| string(v.as_str())).collect();
        format!("[{}]", items.join(", "))
    };
    match c.operator {
        Operator::Eq => format!("{lhs} == {}", string(value)),
        Operator::Ne => format!("{lhs} != {}", string(value)),
        Operator::In => format!("{lhs} in {}", list()),
        Operator::Notin => format!("!({lhs} in {})", list()),
        op => {
            let symbol = match op {
                Operator::Lt => "<",
                Operator::Le => "<=",
                Operator::Gt => ">",
                _ => ">=",
            };
            format!("double({lhs}) {symbol} {}", double(value))
        }
    }
}

/// The conjunction of conditions, `None` when there are none.
pub fn all(conditions: &[String]) -> Option<String> {
    match conditions {
        [] => None,
        [one] => Some(one.clone()),
        many => Some(
            many.iter()
                .map(|c| format!("({c})"))
                .collect::<Vec<_>>()
                .join(" && "),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_ir::scalar::ParamValue;

    fn cond(operator: Operator, value: Option<&str>, values: &[&str]) -> Condition {
        Condition {
            input: String::new(),
            operator,
            value: value.map(|v| ParamValue(v.to_owned())),
            values: values.iter().map(|v| ParamValue((*v).to_owned())).collect(),
        }
    }

    #[test]
    fn operators_render_as_kfp_does() {
        let x = input("pipelinechannel--flip-result");
        assert_eq!(
            compare(&x, &cond(Operator::Eq, Some("heads"), &[])),
            "inputs.parameter_values['pipelinechannel--flip-result'] == 'heads'"
        );
        assert_eq!(
            compare(&x, &cond(Operator::Notin, None, &["a", "b"])),
            format!("!({x} in ['a', 'b'])")
        );
        assert_eq!(
            compare(&x, &cond(Operator::Ge, Some("3"), &[])),
            format!("double({x}) >= 3.0")
        );
        assert_eq!(
            compare(&x, &cond(Operator::Lt, Some("inf"), &[])),
            format!("double({x}) < double('inf')")
        );
    }

    #[test]
    fn strings_are_escaped() {
        assert_eq!(string("it's a\\b\n"), r"'it\'s a\\b\n'");
    }

    #[test]
    fn conjunctions_parenthesize() {
        assert_eq!(all(&[]), None);
        assert_eq!(all(&["a".into()]).as_deref(), Some("a"));
        assert_eq!(
            all(&["a".into(), "b".into()]).as_deref(),
            Some("(a) && (b)")
        );
    }
}
