//! Templates written in a description ("/data/log/{{date}}/_SUCCESS",
//! Airflow's "{{ ds }}") that are no Couler reference: the workflow keeps
//! them as text ("<date>") and a warning says to fill them in, instead of
//! failing validation.

use crate::safety::{Warning, WarningCode};
use serde_json::Value;

/// Rewrites every `{{X}}` in the strings below `value` that is not a valid
/// reference to `<X>`, and says which ones in `warnings`.
pub fn keep_literal(value: &mut Value, warnings: &mut Vec<Warning>) {
    let mut kept: Vec<String> = Vec::new();
    rewrite(value, &mut kept);
    kept.sort();
    kept.dedup();
    for expr in kept {
        warnings.push(Warning {
            code: WarningCode::Assumption,
            message: format!(
                "\"{{{{{expr}}}}}\" is not a reference Couler knows (a workflow parameter, a step's output, an input or the fan-out's item); it is kept as the text <{expr}>: replace it in the step"
            ),
            span: None,
        });
    }
}

fn rewrite(value: &mut Value, kept: &mut Vec<String>) {
    match value {
        Value::String(s) if couler_ir::refs::has_references(s) => *s = literal(s, kept),
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite(v, kept)),
        Value::Object(map) => map.values_mut().for_each(|v| rewrite(v, kept)),
        _ => {}
    }
}

fn literal(s: &str, kept: &mut Vec<String>) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find("{{") {
        let Some(close) = rest[open..].find("}}").map(|c| open + c) else {
            break;
        };
        out.push_str(&rest[..open]);
        let whole = &rest[open..close + 2];
        if couler_ir::refs::references(whole).all(|r| r.is_ok()) {
            out.push_str(whole);
        } else {
            let expr = rest[open + 2..close].trim();
            kept.push(expr.to_owned());
            out.push('<');
            out.push_str(expr);
            out.push('>');
        }
        rest = &rest[close + 2..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_templates_become_text_and_known_references_stay() {
        let mut warnings = Vec::new();
        let mut v = serde_json::json!({"env": [{"value": "/data/{{ ds }}/x-{{inputs.artifacts.data.path}}"}]});
        keep_literal(&mut v, &mut warnings);
        assert_eq!(
            v["env"][0]["value"],
            "/data/<ds>/x-{{inputs.artifacts.data.path}}"
        );
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].message.contains("{{ds}}"),
            "{}",
            warnings[0].message
        );
    }
}
