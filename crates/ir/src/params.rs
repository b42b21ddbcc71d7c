//! Run parameters against a workflow's declarations: the one check every
//! way of starting a run shares (the API, schedules, triggers).

use crate::problem::Pointer;
use crate::scalar::ParamValue;
use crate::{Code, Parameter, Problem, Problems};
use std::collections::BTreeMap;

/// Checks `given` against `declared` and fills in defaults: every value as
/// text, or every problem at once (each at `/parameters/NAME`).
pub fn resolve(
    declared: &[Parameter],
    given: &BTreeMap<String, ParamValue>,
) -> Result<BTreeMap<String, String>, Problems> {
    let mut problems = Vec::new();
    let problem = |name: &str, code, message: String| Problem {
        path: Pointer::root().key("parameters").key(name).to_string(),
        code,
        message,
    };
    for name in given.keys() {
        if !declared.iter().any(|p| &p.name == name) {
            problems.push(problem(
                name,
                Code::UnknownParameter,
                format!("the workflow declares no parameter {name:?}"),
            ));
        }
    }
    let mut resolved = BTreeMap::new();
    for p in declared {
        let value = match (given.get(&p.name), &p.default) {
            (Some(v), _) | (None, Some(v)) => v,
            (None, None) => {
                problems.push(problem(
                    &p.name,
                    Code::MissingField,
                    format!("parameter {:?} is required", p.name),
                ));
                continue;
            }
        };
        if !p.allowed.is_empty() && !p.allowed.contains(value) {
            let allowed: Vec<&str> = p.allowed.iter().map(ParamValue::as_str).collect();
            problems.push(problem(
                &p.name,
                Code::InvalidValue,
                format!("{:?} is not one of {}", value.as_str(), allowed.join(", ")),
            ));
        }
        resolved.insert(p.name.clone(), value.as_str().to_owned());
    }
    if problems.is_empty() {
        Ok(resolved)
    } else {
        Err(Problems(problems))
    }
}
