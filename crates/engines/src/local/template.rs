//! Run-time references: what `{{…}}` means when a step instance starts, and
//! how `when`/`while` conditions are judged.

use super::declared::Files;
use couler_ir::refs::{Ref, Segment, segments};
use couler_ir::{Condition, Operator, Step};
use couler_optimizer::StepOutputs;
use serde_json::Value;
use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

/// Everything a reference can resolve against.
pub(super) struct Scope<'a> {
    /// Finished steps' outputs by step name (map steps: aggregated).
    pub outputs: &'a HashMap<String, Arc<StepOutputs>>,
    /// The step's own latest outputs, for `while` conditions.
    pub own: Option<(&'a str, &'a StepOutputs)>,
    pub item: Option<&'a Value>,
    /// The try's files, for `{{inputs|outputs.….path}}`.
    pub files: Option<&'a Files>,
    pub workflow_name: &'a str,
    pub parameters: &'a BTreeMap<String, String>,
    /// `succeeded`, `failed` or `cancelled`, in exit handlers.
    pub status: Option<&'a str>,
}

/// The part of a try directory its step sees (and writes): the rest holds
/// the engine's records of the try.
pub(super) fn work_dir(dir: &Path) -> std::path::PathBuf {
    dir.join("work")
}

impl Scope<'_> {
    /// Replaces every reference in `text`.
    pub(super) fn render(&self, text: &str) -> Result<String, String> {
        if !couler_ir::refs::has_references(text) {
            return Ok(text.to_owned());
        }
        let mut out = String::with_capacity(text.len());
        for segment in segments(text) {
            match segment.map_err(|e| e.to_string())? {
                Segment::Text(t) => out.push_str(t),
                Segment::Ref(r) => self
                    .resolve(r, &mut out)
                    .map_err(|why| format!("{r}: {why}"))?,
            }
        }
        Ok(out)
    }

    /// Renders every text field of `step` that runs, in place.
    pub(super) fn render_step(&self, step: &mut Step) -> Result<(), String> {
        let error = RefCell::new(None);
        couler_optimizer::visit_runnable_text(step, &|s: &mut String| {
            if error.borrow().is_some() || !couler_ir::refs::has_references(s) {
                return;
            }
            match self.render(s) {
                Ok(r) => *s = r,
                Err(e) => *error.borrow_mut() = Some(e),
            }
        });
        match error.into_inner() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    /// Whether every condition holds.
    pub(super) fn all_hold(&self, conditions: &[Condition]) -> Result<bool, String> {
        for c in conditions {
            if !self.holds(c)? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Explains the first condition that does not hold, for skip messages.
    pub(super) fn first_false(&self, conditions: &[Condition]) -> Option<String> {
        conditions.iter().find_map(|c| {
            let input = self.render(&c.input).ok()?;
            match self.holds(c) {
                Ok(false) => Some(format!("condition not met: {}", describe(c, input.trim()))),
                _ => None,
            }
        })
    }

    fn holds(&self, c: &Condition) -> Result<bool, String> {
        let input = self.render(&c.input)?;
        let input = input.trim();
        let value = c.value.as_ref().map(|v| v.as_str().trim());
        let equal = |other: &str| {
            input == other
                || matches!((input.parse::<f64>(), other.parse::<f64>()), (Ok(a), Ok(b)) if a == b)
        };
        let number = |s: &str| {
            s.parse::<f64>()
                .map_err(|_| format!("condition `{}`: {s:?} is not a number", describe(c, input)))
        };
        Ok(match c.operator {
            Operator::Eq => equal(value.unwrap_or_default()),
            Operator::Ne => !equal(value.unwrap_or_default()),
            Operator::In => c.values.iter().any(|v| equal(v.as_str().trim())),
            Operator::Notin => !c.values.iter().any(|v| equal(v.as_str().trim())),
            op => {
                let (a, b) = (number(input)?, number(value.unwrap_or_default())?);
                match op {
                    Operator::Lt => a < b,
                    Operator::Le => a <= b,
                    Operator::Gt => a > b,
                    _ => a >= b,
                }
            }
        })
    }

    fn resolve(&self, r: Ref<'_>, out: &mut String) -> Result<(), String> {
        match r {
            Ref::WorkflowParameter(p) => out.push_str(
                self.parameters
                    .get(p)
                    .ok_or_else(|| format!("parameter {p:?} has no value"))?,
            ),
            Ref::WorkflowName => out.push_str(self.workflow_name),
            Ref::WorkflowStatus => out.push_str(
                self.status
                    .ok_or("the workflow status is only known to exit handlers")?,
            ),
            Ref::StepResult(s) => out.push_str(
                self.step(s)?
                    .result
                    .as_deref()
                    .ok_or_else(|| format!("step `{s}` has no result"))?,
            ),
            Ref::StepParameter(s, p) => out.push_str(
                self.step(s)?
                    .parameters
                    .get(p)
                    .ok_or_else(|| format!("step `{s}` has no output parameter `{p}`"))?,
            ),
            Ref::StepArtifact(s, a) => out.push_str(
                &self
                    .step(s)?
                    .artifacts
                    .get(a)
                    .ok_or_else(|| format!("step `{s}` has no output artifact `{a}`"))?
                    .location,
            ),
            Ref::Item(field) => {
                let item = self.item.ok_or("there is no item outside a `map`")?;
                let value = match field {
                    None => item,
                    Some(k) => item
                        .get(k)
                        .ok_or_else(|| format!("the item has no field `{k}`"))?,
                };
                out.push_str(&item_text(value));
            }
            Ref::TrialParameter(_) | Ref::TrialBudget => {
                return Err("hyperparameter trials are not expanded for the local engine".into());
            }
            Ref::InputArtifactPath(a) => self.path(out, |f| f.input(a))?,
            Ref::OutputParameterPath(p) => self.path(out, |f| f.parameter(p))?,
            Ref::OutputArtifactPath(a) => self.path(out, |f| f.artifact(a))?,
        }
        Ok(())
    }

    fn step(&self, name: &str) -> Result<&StepOutputs, String> {
        if let Some((own, outputs)) = self.own
            && own == name
        {
            return Ok(outputs);
        }
        self.outputs
            .get(name)
            .map(|o| &**o)
            .ok_or_else(|| format!("step `{name}` has not finished"))
    }

    fn path(
        &self,
        out: &mut String,
        at: impl FnOnce(&Files) -> std::path::PathBuf,
    ) -> Result<(), String> {
        let files = self
            .files
            .ok_or("paths are only known inside a running step")?;
        out.push_str(&at(files).to_string_lossy());
        Ok(())
    }
}

fn describe(c: &Condition, input: &str) -> String {
    let rhs = match &c.value {
        Some(v) => format!("{:?}", v.as_str()),
        None => format!(
            "[{}]",
            c.values
                .iter()
                .map(|v| format!("{:?}", v.as_str()))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("{input:?} {} {rhs}", c.operator)
}

/// `{{item}}` text: strings and numbers as they are, anything else as JSON.
pub(super) fn item_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => other.to_string(),
    }
}

/// Whether any condition reads `{{item}}` (then it is judged per instance).
pub(super) fn reads_item(conditions: &[Condition]) -> bool {
    conditions
        .iter()
        .any(|c| couler_ir::refs::references(&c.input).any(|r| matches!(r, Ok(Ref::Item(_)))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_ir::scalar::ParamValue;
    use couler_optimizer::Named;

    fn scope<'a>(
        outputs: &'a HashMap<String, Arc<StepOutputs>>,
        item: Option<&'a Value>,
        params: &'a BTreeMap<String, String>,
    ) -> Scope<'a> {
        Scope {
            outputs,
            own: None,
            item,
            // The layout without the sandbox (see `declared` for the other).
            files: Some(Box::leak(Box::new(Files {
                work: "/w/work".into(),
                ..Files::default()
            }))),
            workflow_name: "wf",
            parameters: params,
            status: None,
        }
    }

    #[test]
    fn renders_results_parameters_items_and_paths() {
        let outputs = HashMap::from([(
            "a".to_owned(),
            Arc::new(StepOutputs {
                result: Some("hi".into()),
                parameters: Named::from_iter([("p".into(), "7".into())]),
                ..Default::default()
            }),
        )]);
        let item = serde_json::json!({"k": [1, 2], "n": 3});
        let params = BTreeMap::new();
        let s = scope(&outputs, Some(&item), &params);
        assert_eq!(
            s.render("{{steps.a.outputs.result}}-{{steps.a.outputs.parameters.p}} {{item.n}} {{item.k}} {{item}}")
                .unwrap(),
            r#"hi-7 3 [1,2] {"k":[1,2],"n":3}"#
        );
        assert_eq!(
            s.render("{{outputs.parameters.x.path}} {{inputs.artifacts.d.path}}")
                .unwrap(),
            "/w/work/outputs/parameters/x /w/work/inputs/d"
        );
        let err = s.render("{{steps.b.outputs.result}}").unwrap_err();
        assert!(err.contains("step `b` has not finished"), "{err}");
    }

    #[test]
    fn conditions_compare_text_and_numbers() {
        let outputs = HashMap::new();
        let params = BTreeMap::from([("x".to_owned(), "2.0".to_owned())]);
        let s = scope(&outputs, None, &params);
        let cond = |op, value: &str| Condition {
            input: "{{workflow.parameters.x}}".into(),
            operator: op,
            value: Some(ParamValue(value.into())),
            values: vec![],
        };
        assert!(s.holds(&cond(Operator::Eq, "2")).unwrap());
        assert!(s.holds(&cond(Operator::Gt, "1.5")).unwrap());
        assert!(!s.holds(&cond(Operator::Lt, "1.5")).unwrap());
        assert!(s.holds(&cond(Operator::Ne, "two")).unwrap());
        let inside = Condition {
            input: "{{workflow.parameters.x}}".into(),
            operator: Operator::In,
            value: None,
            values: vec![ParamValue("1".into()), ParamValue("2".into())],
        };
        assert!(s.holds(&inside).unwrap());
        let params = BTreeMap::from([("x".to_owned(), "abc".to_owned())]);
        let s = scope(&outputs, None, &params);
        assert!(s.holds(&cond(Operator::Ge, "1")).is_err());
    }
}
