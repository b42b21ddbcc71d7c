//! The form the LLM writes a plan in: a flat, JSON-friendly mirror of
//! [`Decomposition`] with the JSON Schema that constrains its decoding, and
//! the checks that turn an answer into a decomposition or into problems
//! (JSON pointer + message) the LLM is asked to repair.
//!
//! The schema is hand-tuned for grammar-constrained decoding (llama.cpp):
//! every string has a `pattern` or `enum`, arrays and integers are bounded.
//! Text patterns are ASCII-only, so a Chinese description gets an English
//! plan; the IR the library builds does not depend on the plan's wording.

use crate::decompose::{
    Comparison, ConditionSpec, Decomposition, FanOut, FanOutValues, ResourceSpec, ScheduleSpec,
    Stage, Subtask, TaskKind,
};
use crate::library::Library;
use crate::safety::{self, Warning, WarningCode};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const TEXT: &str = "^[A-Za-z0-9 ,.:;()/_+=%-]{1,120}$";
const IDENT: &str = "^[a-z][a-z0-9_]{0,31}$";
const TARGET: &str = "^[A-Za-z0-9_./:=?&%+-]{1,160}$";
const COMMAND: &str = "^[A-Za-z0-9 _./:=,%+*<>|&@-]{1,160}$";
const VALUE: &str = "^[A-Za-z0-9._-]{1,24}$";
const CRON: &str = "^[0-9*/,-]{1,12}( [0-9*/,-]{1,12}){4}$";
const OPERATORS: [&str; 6] = ["eq", "ne", "lt", "le", "gt", "ge"];

pub(crate) const MAX_STAGES: usize = 8;
pub(crate) const MAX_TASKS: usize = 6;
const MAX_VALUES: usize = 16;
const MAX_RETRY: u32 = 10;

/// One problem with an answer, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Issue {
    /// JSON pointer into the answer (or, prefixed `workflow`, into the IR).
    pub path: String,
    pub message: String,
}

impl Issue {
    pub fn new(path: impl Into<String>, message: impl Into<String>) -> Issue {
        Issue {
            path: path.into(),
            message: message.into(),
        }
    }
}

impl std::fmt::Display for Issue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.message)
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct WirePlan {
    pub stages: Vec<WireStage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_exit: Vec<WireTask>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct WireStage {
    pub tasks: Vec<WireTask>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct WireTask {
    pub kind: String,
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_out: Option<WireFanOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<WireCondition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WireFanOut {
    pub parameter: String,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct WireCondition {
    pub metric: String,
    pub operator: String,
    /// Models write `0.9` as often as `"0.9"`; both are taken.
    pub value: Value,
}

/// The schema of an answer. `full: false` asks only for the outline (kinds
/// and words per stage), `true` for every detail. Kinds are limited to
/// those the library has templates for.
pub(crate) fn schema(library: &Library, full: bool) -> Value {
    let kinds = library_kinds(library);
    let string = |pattern: &str| json!({"type": "string", "pattern": pattern});
    let int = |max: u32| json!({"type": "integer", "minimum": 0, "maximum": max});
    let mut task_props = serde_json::Map::new();
    task_props.insert(
        "kind".into(),
        json!({"type": "string", "enum": kinds.iter().map(|k| k.as_str()).collect::<Vec<_>>()}),
    );
    task_props.insert("text".into(), string(TEXT));
    if full {
        task_props.insert("model".into(), string(IDENT));
        task_props.insert("target".into(), string(TARGET));
        task_props.insert("command".into(), string(COMMAND));
        task_props.insert(
            "fan_out".into(),
            json!({
                "type": "object",
                "properties": {
                    "parameter": string(IDENT),
                    "values": {"type": "array", "items": string(VALUE), "minItems": 1, "maxItems": MAX_VALUES},
                },
                "required": ["parameter", "values"],
                "additionalProperties": false,
            }),
        );
        task_props.insert(
            "condition".into(),
            json!({
                "type": "object",
                "properties": {
                    "metric": string(IDENT),
                    "operator": {"type": "string", "enum": OPERATORS},
                    "value": string(VALUE),
                },
                "required": ["metric", "operator", "value"],
                "additionalProperties": false,
            }),
        );
        task_props.insert("retry".into(), int(MAX_RETRY));
        task_props.insert("gpus".into(), int(16));
        task_props.insert("cpus".into(), int(128));
        task_props.insert("memory_gib".into(), int(1024));
        task_props.insert("workers".into(), int(64));
    }
    let task = json!({
        "type": "object",
        "properties": task_props,
        "required": ["kind", "text"],
        "additionalProperties": false,
    });
    let mut props = serde_json::Map::new();
    props.insert(
        "stages".into(),
        json!({
            "type": "array",
            "minItems": 1,
            "maxItems": MAX_STAGES,
            "items": {
                "type": "object",
                "properties": {"tasks": {"type": "array", "items": task, "minItems": 1, "maxItems": MAX_TASKS}},
                "required": ["tasks"],
                "additionalProperties": false,
            },
        }),
    );
    if full {
        props.insert("schedule".into(), string(CRON));
        props.insert("retry".into(), int(MAX_RETRY));
        props.insert(
            "on_exit".into(),
            json!({"type": "array", "items": task, "maxItems": 2}),
        );
    }
    json!({
        "type": "object",
        "properties": props,
        "required": ["stages"],
        "additionalProperties": false,
    })
}

/// The kinds the library has a template for, in [`TaskKind::ALL`] order.
pub(crate) fn library_kinds(library: &Library) -> Vec<TaskKind> {
    TaskKind::ALL
        .into_iter()
        .filter(|k| library.templates().iter().any(|t| t.kind == *k))
        .collect()
}

/// An answer's JSON without the code fence some models put around it.
pub(crate) fn strip_fence(answer: &str) -> &str {
    let text = answer.trim();
    text.strip_prefix("```json")
        .or_else(|| text.strip_prefix("```"))
        .and_then(|t| t.strip_suffix("```"))
        .unwrap_or(text)
}

/// Parses an answer's JSON (a code fence around it is tolerated).
pub(crate) fn parse(answer: &str) -> Result<WirePlan, Vec<Issue>> {
    serde_json::from_str(strip_fence(answer)).map_err(|e| {
        vec![Issue::new(
            "",
            format!("the answer is not a JSON object of the requested shape: {e}"),
        )]
    })
}

/// What a checked answer gives: the decomposition and the steps dropped as
/// unsafe.
pub(crate) struct Checked {
    pub decomposition: Decomposition,
    pub warnings: Vec<Warning>,
}

/// Checks an answer and turns it into a decomposition whose secrets are
/// `named_secrets` (the ones the description named; never the LLM's). A
/// shell task may leave out its command: it is a generic step.
/// Subtasks that pipe downloads into a shell or carry secret values are
/// dropped with a warning rather than repaired.
pub(crate) fn check(
    plan: &WirePlan,
    library: &Library,
    named_secrets: &[String],
) -> Result<Checked, Vec<Issue>> {
    let kinds = library_kinds(library);
    let mut issues = Vec::new();
    let mut warnings = Vec::new();
    let mut stages = Vec::new();
    if plan.stages.is_empty() {
        issues.push(Issue::new(
            "/stages",
            "give at least one stage with one task",
        ));
    }
    for (i, stage) in plan.stages.iter().enumerate() {
        let path = format!("/stages/{i}/tasks");
        if stage.tasks.is_empty() {
            issues.push(Issue::new(&path, "a stage needs at least one task"));
        }
        let tasks: Vec<Subtask> = stage
            .tasks
            .iter()
            .enumerate()
            .filter_map(|(j, t)| {
                task(
                    t,
                    &format!("{path}/{j}"),
                    &kinds,
                    &mut issues,
                    &mut warnings,
                )
            })
            .collect();
        // (A stage that loads and reads data at once is put in order by
        // the builder.)
        if !tasks.is_empty() {
            stages.push(Stage { tasks });
        }
    }
    let on_exit: Vec<Subtask> = plan
        .on_exit
        .iter()
        .enumerate()
        .filter_map(|(j, t)| {
            task(
                t,
                &format!("/on_exit/{j}"),
                &kinds,
                &mut issues,
                &mut warnings,
            )
        })
        .collect();
    if issues.is_empty() && stages.is_empty() && on_exit.is_empty() {
        issues.push(Issue::new(
            "/stages",
            "no usable task is left; give the steps the request asks for",
        ));
    }
    let schedule = plan.schedule.as_ref().and_then(|cron| {
        if cron.split_whitespace().count() == 5 {
            Some(ScheduleSpec {
                cron: cron.clone(),
                text: format!("cron {cron}"),
            })
        } else {
            issues.push(Issue::new(
                "/schedule",
                "a schedule is a five-field cron expression",
            ));
            None
        }
    });
    if plan.retry.is_some_and(|r| r > MAX_RETRY) {
        issues.push(Issue::new("/retry", format!("at most {MAX_RETRY} retries")));
    }
    if !issues.is_empty() {
        return Err(issues);
    }
    Ok(Checked {
        decomposition: Decomposition {
            stages,
            schedule,
            retry: plan.retry,
            on_exit,
            secrets: named_secrets.to_vec(),
        },
        warnings,
    })
}

fn task(
    t: &WireTask,
    path: &str,
    kinds: &[TaskKind],
    issues: &mut Vec<Issue>,
    warnings: &mut Vec<Warning>,
) -> Option<Subtask> {
    if let Some(warning) = unsafe_fields(t) {
        warnings.push(warning);
        return None;
    }
    let before = issues.len();
    let kind = match kinds.iter().find(|k| k.as_str() == t.kind) {
        Some(kind) => Some(*kind),
        None => {
            let known: Vec<&str> = kinds.iter().map(|k| k.as_str()).collect();
            issues.push(Issue::new(
                format!("{path}/kind"),
                format!("unknown kind {:?}; use one of {}", t.kind, known.join(", ")),
            ));
            None
        }
    };
    if t.text.trim().is_empty() {
        issues.push(Issue::new(
            format!("{path}/text"),
            "say in a few words what the task does",
        ));
    }
    let command = t
        .command
        .as_deref()
        .map(str::trim)
        .filter(|c| !c.is_empty());
    // A shell task without a command is an action the library has no
    // template for: a generic step the user fills in.
    let fan_out = t.fan_out.as_ref().map(|f| {
        let ident = |s: &str| {
            s.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        };
        if !ident(&f.parameter) {
            issues.push(Issue::new(
                format!("{path}/fan_out/parameter"),
                "the parameter is a lowercase identifier such as batch_size",
            ));
        }
        if f.values.is_empty() || f.values.len() > MAX_VALUES {
            issues.push(Issue::new(
                format!("{path}/fan_out/values"),
                format!("give 1 to {MAX_VALUES} values"),
            ));
        }
        FanOut {
            parameter: f.parameter.clone(),
            values: FanOutValues::List(f.values.clone()),
        }
    });
    let condition = t.condition.as_ref().and_then(|c| {
        let operator = match c.operator.as_str() {
            "eq" => Comparison::Eq,
            "ne" => Comparison::Ne,
            "lt" => Comparison::Lt,
            "le" => Comparison::Le,
            "gt" => Comparison::Gt,
            "ge" => Comparison::Ge,
            other => {
                issues.push(Issue::new(
                    format!("{path}/condition/operator"),
                    format!(
                        "unknown operator {other:?}; use one of {}",
                        OPERATORS.join(", ")
                    ),
                ));
                return None;
            }
        };
        let value = match &c.value {
            Value::String(s) if !s.trim().is_empty() => s.trim().to_owned(),
            Value::Number(n) => n.to_string(),
            Value::Bool(b) => b.to_string(),
            _ => {
                issues.push(Issue::new(
                    format!("{path}/condition/value"),
                    "the value to compare with, such as 0.9",
                ));
                return None;
            }
        };
        if c.metric.trim().is_empty() {
            issues.push(Issue::new(
                format!("{path}/condition/metric"),
                "name the metric, such as accuracy",
            ));
        }
        Some(ConditionSpec {
            metric: c.metric.trim().to_owned(),
            operator,
            value,
        })
    });
    if t.retry.is_some_and(|r| r > MAX_RETRY) {
        issues.push(Issue::new(
            format!("{path}/retry"),
            format!("at most {MAX_RETRY} retries"),
        ));
    }
    let kind = kind?;
    if issues.len() > before {
        return None;
    }
    let nonempty = |s: &Option<String>| {
        s.as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
    };
    Some(Subtask {
        model: nonempty(&t.model).map(|m| m.to_ascii_lowercase()),
        target: nonempty(&t.target),
        command: command.map(str::to_owned),
        fan_out,
        condition,
        retry: t.retry,
        resources: ResourceSpec {
            gpus: t.gpus.filter(|&n| n > 0),
            cpus: t.cpus.filter(|&n| n > 0),
            memory_gib: t.memory_gib.filter(|&n| n > 0),
            workers: t.workers.filter(|&n| n > 0),
        },
        ..Subtask::new(kind, t.text.trim())
    })
}

/// A warning when a task's words, command or target would run downloaded
/// code or carry a secret value: such a task is dropped, not repaired.
fn unsafe_fields(t: &WireTask) -> Option<Warning> {
    let fields = [Some(&t.text), t.command.as_ref(), t.target.as_ref()];
    for field in fields.into_iter().flatten() {
        if let Some(code) = safety::unsafe_text(field) {
            let what = match code {
                WarningCode::SecretValue => "carried what looks like a secret value",
                _ => "would run downloaded or destructive code",
            };
            return Some(Warning {
                code,
                message: format!(
                    "the LLM proposed a {} step that {what}; it was dropped",
                    t.kind
                ),
                span: None,
            });
        }
    }
    None
}

impl WirePlan {
    /// Kinds and words only, as the outline call answers.
    pub(crate) fn outline(d: &Decomposition) -> WirePlan {
        WirePlan {
            stages: d
                .stages
                .iter()
                .map(|s| WireStage {
                    tasks: s
                        .tasks
                        .iter()
                        .map(|t| WireTask {
                            kind: t.kind.as_str().to_owned(),
                            text: t.text.chars().take(120).collect(),
                            ..WireTask::default()
                        })
                        .collect(),
                })
                .collect(),
            ..WirePlan::default()
        }
    }
}

impl From<&Decomposition> for WirePlan {
    fn from(d: &Decomposition) -> WirePlan {
        WirePlan {
            stages: d
                .stages
                .iter()
                .map(|s| WireStage {
                    tasks: s.tasks.iter().map(WireTask::from).collect(),
                })
                .collect(),
            schedule: d.schedule.as_ref().map(|s| s.cron.clone()),
            retry: d.retry,
            on_exit: d.on_exit.iter().map(WireTask::from).collect(),
        }
    }
}

impl From<&Subtask> for WireTask {
    fn from(t: &Subtask) -> WireTask {
        WireTask {
            kind: t.kind.as_str().to_owned(),
            text: t.text.clone(),
            model: t.model.clone(),
            target: t.target.clone(),
            command: t.command.clone(),
            fan_out: t.fan_out.as_ref().map(|f| WireFanOut {
                parameter: f.parameter.clone(),
                values: f.items(),
            }),
            condition: t.condition.as_ref().map(|c| WireCondition {
                metric: c.metric.clone(),
                operator: format!("{:?}", c.operator).to_ascii_lowercase(),
                value: Value::String(c.value.clone()),
            }),
            retry: t.retry,
            gpus: t.resources.gpus,
            cpus: t.resources.cpus,
            memory_gib: t.resources.memory_gib,
            workers: t.resources.workers,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell_without_command() -> WirePlan {
        WirePlan {
            stages: vec![WireStage {
                tasks: vec![WireTask {
                    kind: "shell".into(),
                    text: "run the tests".into(),
                    ..WireTask::default()
                }],
            }],
            ..WirePlan::default()
        }
    }

    #[test]
    fn a_shell_task_without_a_command_is_a_generic_step() {
        let library = Library::builtin();
        let plan = shell_without_command();
        assert!(check(&plan, &library, &[]).is_ok());
        let d = check(&plan, &library, &[]).expect("accepted").decomposition;
        let built = crate::offline::OfflinePlanner::default()
            .build(d, "run the tests", &Default::default())
            .expect("a generic step builds");
        assert_eq!(
            built.explanations[0].template,
            crate::library::GENERIC_TEMPLATE
        );
        assert!(
            built
                .warnings
                .iter()
                .any(|w| w.code == WarningCode::Incomplete)
        );
    }

    #[test]
    fn secrets_come_from_the_description_not_the_answer() {
        let library = Library::builtin();
        let named = vec!["db-password".to_owned()];
        let checked = check(&shell_without_command(), &library, &named).unwrap();
        assert_eq!(checked.decomposition.secrets, named);
    }

    #[test]
    fn a_decomposition_round_trips_through_the_wire_form() {
        let library = Library::builtin();
        let mut plan = shell_without_command();
        plan.stages[0].tasks[0].command = Some("make test".into());
        plan.stages[0].tasks[0].fan_out = Some(WireFanOut {
            parameter: "shard".into(),
            values: vec!["1".into(), "2".into()],
        });
        plan.stages[0].tasks[0].condition = Some(WireCondition {
            metric: "accuracy".into(),
            operator: "ge".into(),
            value: json!(0.9),
        });
        let d = check(&plan, &library, &[]).unwrap().decomposition;
        let again = WirePlan::from(&d);
        let task = &again.stages[0].tasks[0];
        assert_eq!(task.condition.as_ref().unwrap().operator, "ge");
        assert_eq!(task.condition.as_ref().unwrap().value, json!("0.9"));
        assert_eq!(check(&again, &library, &[]).unwrap().decomposition, d);
    }
}
