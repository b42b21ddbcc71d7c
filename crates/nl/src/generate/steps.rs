//! Algorithm 1's generation step as the paper has it: once the plan is
//! placed (each subtask on its best library template, wired to the others),
//! the LLM writes each step's IR — what it runs, resources, retries,
//! timeout — as JSON constrained by a schema cut from the IR's own
//! ([`step_schema`]), with the retrieved templates as references. Each
//! answer is merged into the wiring, validated with the whole workflow by
//! `couler_ir`, screened for unsafe commands and secret values, and checked
//! against the image policy; problems go back with their JSON pointers for
//! repair. A step the LLM cannot get right keeps its template; a failing
//! LLM or an exhausted budget leaves the remaining steps as templates.

use super::session::{Context, Failure, Meter, converse};
use super::step_schema::{AUTHORED, Runs, step_schema};
use super::wire::{Issue, strip_fence};
use super::{Draft, prompt};
use crate::library::Template;
use crate::offline::{Plan, StepExplanation};
use crate::safety::{self, Warning, WarningCode};
use couler_ir::{Limits, Step, Workflow};
use serde_json::{Map, Value};

/// Where a step sits in its workflow.
#[derive(Debug, Clone, Copy)]
struct Slot {
    on_exit: bool,
    index: usize,
}

impl Slot {
    fn all(workflow: &Workflow) -> Vec<Slot> {
        let steps = (0..workflow.steps.len()).map(|index| Slot {
            on_exit: false,
            index,
        });
        let on_exit = (0..workflow.on_exit.len()).map(|index| Slot {
            on_exit: true,
            index,
        });
        steps.chain(on_exit).collect()
    }

    fn get(self, workflow: &Workflow) -> &Step {
        if self.on_exit {
            &workflow.on_exit[self.index]
        } else {
            &workflow.steps[self.index]
        }
    }

    /// The step's JSON pointer in the workflow document.
    fn pointer(self) -> String {
        let list = if self.on_exit { "onExit" } else { "steps" };
        format!("/{list}/{}", self.index)
    }
}

/// Has the LLM write every step of `plan` in turn, for `request` (the
/// description, and a revision's feedback); returns what the user should
/// know (steps kept as templates, and why). In a revision, a step the
/// `previous` draft had starts from what was written there.
pub(crate) async fn write(
    cx: &Context<'_>,
    meter: &mut Meter,
    plan: &mut Plan,
    request: &str,
    previous: Option<&Draft>,
) -> Vec<Warning> {
    let mut warnings = Vec::new();
    if let Some(previous) = previous {
        plan.workflow = carried_over(plan, previous);
    }
    let slots = Slot::all(&plan.workflow);
    for (n, &slot) in slots.iter().enumerate() {
        let step = slot.get(&plan.workflow);
        let Some(runs) = runs(step) else {
            continue; // Training jobs keep their template.
        };
        let Some(explanation) = plan.explanations.iter().find(|e| e.step == step.name) else {
            continue;
        };
        let references = references(cx, explanation);
        let images = images(cx, step, &references);
        let schema = step_schema(runs, &images);
        let ask = prompt::step(request, step, explanation, &references);
        let name = step.name.clone();
        let written = converse(cx, meter, ask, &schema, 0.0, |answer| {
            adopt(cx, &plan.workflow, slot, answer)
        })
        .await;
        match written {
            Ok(workflow) => {
                plan.workflow = workflow;
                if let Some(e) = plan.explanations.iter_mut().find(|e| e.step == name) {
                    e.why
                        .push_str(" The LLM wrote the step, with this template as reference.");
                }
            }
            Err(failure @ Failure::Unusable { .. }) => warnings.push(kept(format!(
                "step {name:?} keeps its library template: {failure}"
            ))),
            Err(failure) => {
                let rest: Vec<String> = slots[n..]
                    .iter()
                    .map(|s| format!("{:?}", s.get(&plan.workflow).name))
                    .collect();
                warnings.push(kept(format!(
                    "steps {} keep their library templates: {failure}",
                    rest.join(", ")
                )));
                break;
            }
        }
    }
    warnings
}

/// The plan with what the `previous` draft wrote of each step placed from
/// the same template again (its description and what it runs). Resources,
/// retries and timeouts stay the new plan's: the feedback may have changed
/// them. Kept only if the result is valid.
fn carried_over(plan: &Plan, previous: &Draft) -> Workflow {
    let workflow = &plan.workflow;
    let Ok(mut document) = serde_json::to_value(workflow) else {
        return workflow.clone();
    };
    let template = |explanations: &[StepExplanation], step: &str| {
        explanations
            .iter()
            .find(|e| e.step == step)
            .map(|e| e.template.clone())
    };
    for slot in Slot::all(workflow) {
        let step = slot.get(workflow);
        let same = template(&plan.explanations, &step.name)
            .is_some_and(|t| template(&previous.explanations, &step.name) == Some(t));
        let earlier = previous
            .workflow
            .steps
            .iter()
            .chain(&previous.workflow.on_exit)
            .find(|p| same && p.name == step.name && runs(p) == runs(step));
        let Some(Value::Object(earlier)) = earlier.and_then(|e| serde_json::to_value(e).ok())
        else {
            continue;
        };
        let written: Map<String, Value> = earlier
            .into_iter()
            .filter(|(k, _)| matches!(k.as_str(), "description" | "container" | "script"))
            .collect();
        if let Some(target) = document.pointer_mut(&slot.pointer()) {
            *target = merge(step, written);
        }
    }
    couler_ir::load_value(document, &Limits::default()).unwrap_or_else(|_| workflow.clone())
}

fn kept(message: String) -> Warning {
    Warning {
        code: WarningCode::Assumption,
        message,
        span: None,
    }
}

fn runs(step: &Step) -> Option<Runs> {
    match (&step.container, &step.script) {
        (Some(_), _) => Some(Runs::Container),
        (_, Some(_)) => Some(Runs::Script),
        _ => None,
    }
}

/// The template the step was placed from, then the next best of its kind.
fn references<'a>(cx: &'a Context<'_>, e: &StepExplanation) -> Vec<&'a Template> {
    let library = cx.request.library;
    let mut out: Vec<&Template> = library.get(&e.template).into_iter().collect();
    let query = format!("{} {}", e.kind, e.text);
    for ranked in library.rank(&query) {
        if out.len() >= cx.config.references.max(1) {
            break;
        }
        if ranked.template.kind == e.kind && !out.iter().any(|t| t.id == ranked.template.id) {
            out.push(ranked.template);
        }
    }
    out
}

/// The step's own image and the references', as far as the policy allows.
fn images(cx: &Context<'_>, step: &Step, references: &[&Template]) -> Vec<String> {
    let theirs = references.iter().filter_map(|t| t.image());
    let mut out: Vec<String> = Vec::new();
    for image in step.image().into_iter().chain(theirs) {
        if cx.options.images.allows(image) && !out.iter().any(|i| i == image) {
            out.push(image.to_owned());
        }
    }
    out
}

/// An answer → the workflow with the step written in, or its problems,
/// each at its pointer into the answer. Secrets cannot be written (only
/// the wiring adds the ones the request named) and images must be allowed,
/// so the written workflow meets the same policy as the placed one.
fn adopt(
    cx: &Context<'_>,
    workflow: &Workflow,
    slot: Slot,
    answer: &str,
) -> Result<Workflow, Vec<Issue>> {
    let answer: Value = serde_json::from_str(strip_fence(answer)).map_err(|e| {
        vec![Issue::new(
            "",
            format!("the answer is not a JSON object: {e}"),
        )]
    })?;
    let Value::Object(answer) = answer else {
        return Err(vec![Issue::new("", "the answer must be one JSON object")]);
    };
    let mut issues: Vec<Issue> = answer
        .keys()
        .filter(|k| !AUTHORED.contains(&k.as_str()))
        .map(|k| {
            Issue::new(
                format!("/{k}"),
                "the step's name, inputs, outputs and dependencies are fixed; leave this out",
            )
        })
        .collect();
    issues.extend(unsafe_text(&answer));
    issues.extend(disallowed_images(cx, &answer));
    if !issues.is_empty() {
        return Err(issues);
    }
    let step = slot.get(workflow);
    let merged = merge(step, answer);
    let mut document =
        serde_json::to_value(workflow).map_err(|e| vec![Issue::new("", e.to_string())])?;
    if let Some(target) = document.pointer_mut(&slot.pointer()) {
        *target = merged;
    }
    couler_ir::load_value(document, &Limits::default()).map_err(|problems| {
        let at = slot.pointer();
        problems
            .iter()
            .map(|p| match p.path.strip_prefix(&at) {
                Some(rest) => Issue::new(rest, p.message.clone()),
                None => Issue::new(format!("workflow{}", p.path), p.message.clone()),
            })
            .collect()
    })
}

/// Images the policy does not allow (a server that ignores the schema's
/// `enum` can still write them).
fn disallowed_images(cx: &Context<'_>, answer: &Map<String, Value>) -> Vec<Issue> {
    ["container", "script"]
        .iter()
        .filter_map(|key| {
            let image = answer.get(*key)?.get("image")?.as_str()?;
            (!cx.options.images.allows(image)).then(|| {
                Issue::new(
                    format!("/{key}/image"),
                    format!(
                        "image {image:?} is not allowed here; use one of the references' images"
                    ),
                )
            })
        })
        .collect()
}

/// The draft step with the answer's fields written over it: what the
/// answer leaves out (at the top and inside what the step runs) stays the
/// draft's, and the environment variables the wiring sets win over the
/// answer's of the same name.
fn merge(step: &Step, answer: Map<String, Value>) -> Value {
    let mut merged = serde_json::to_value(step).unwrap_or_default();
    let Some(object) = merged.as_object_mut() else {
        return merged;
    };
    for (key, value) in answer {
        match (object.get_mut(&key), value) {
            (Some(Value::Object(draft)), Value::Object(body))
                if matches!(key.as_str(), "container" | "script") =>
            {
                let wired = draft.remove("env");
                draft.extend(body);
                let env = with_wired_env(wired, draft.remove("env"));
                if !env.is_empty() {
                    draft.insert("env".into(), Value::Array(env));
                }
            }
            (_, value) => {
                object.insert(key, value);
            }
        }
    }
    merged
}

fn with_wired_env(wired: Option<Value>, theirs: Option<Value>) -> Vec<Value> {
    let as_list = |v: Option<Value>| match v {
        Some(Value::Array(list)) => list,
        _ => Vec::new(),
    };
    let name = |v: &Value| v.get("name").and_then(Value::as_str).map(str::to_owned);
    let mut env = as_list(wired);
    let wired_names: Vec<String> = env.iter().filter_map(name).collect();
    env.extend(
        as_list(theirs)
            .into_iter()
            .filter(|v| name(v).is_none_or(|n| !wired_names.contains(&n))),
    );
    env
}

/// Commands, arguments, sources and environment values that would run
/// downloaded or destructive code or carry a secret value.
fn unsafe_text(answer: &Map<String, Value>) -> Vec<Issue> {
    let mut issues = Vec::new();
    let mut texts: Vec<(String, &str)> = Vec::new();
    for key in ["container", "script"] {
        let Some(body) = answer.get(key) else {
            continue;
        };
        for list in ["command", "args"] {
            for (i, v) in body
                .get(list)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .enumerate()
            {
                if let Some(text) = v.as_str() {
                    texts.push((format!("/{key}/{list}/{i}"), text));
                }
            }
        }
        if let Some(source) = body.get("source").and_then(Value::as_str) {
            texts.push((format!("/{key}/source"), source));
        }
        for (i, var) in body
            .get("env")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            if var.get("secret").is_some() {
                issues.push(Issue::new(
                    format!("/{key}/env/{i}/secret"),
                    "steps may not read secrets; the plan adds the ones the request names",
                ));
            }
            if let Some(text) = var.get("value").and_then(Value::as_str) {
                texts.push((format!("/{key}/env/{i}/value"), text));
            }
        }
    }
    for (path, text) in texts {
        if let Some(code) = safety::unsafe_text(text) {
            let message = match code {
                WarningCode::SecretValue => {
                    "this looks like a secret value; never write secret values into a step"
                }
                _ => "this runs downloaded or destructive code; write the step without it",
            };
            issues.push(Issue::new(path, message));
        }
    }
    issues
}
