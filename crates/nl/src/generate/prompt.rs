//! The prompts of one generation: outline (decomposition), plan (details,
//! with library references), repair, critique and revision. Prompts stay
//! short: small local models serve a 2048-token context.

use super::step_schema::AUTHORED;
use super::wire::{Issue, WirePlan, library_kinds};
use crate::decompose::Decomposition;
use crate::library::{Library, Template};
use crate::offline::StepExplanation;
use couler_ir::{Step, Workflow};

/// A workflow shown to the LLM is cut to this many bytes.
const MAX_IR_BYTES: usize = 3000;
const MAX_REFERENCE_CHARS: usize = 100;
/// A step draft shown to the LLM is cut to this many bytes.
const MAX_STEP_BYTES: usize = 2000;

#[derive(Debug, Clone)]
pub(crate) struct Prompt {
    pub system: String,
    pub user: String,
}

fn kinds(library: &Library) -> String {
    library_kinds(library)
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// The outline call. `reading` is the offline planner's reading of the
/// request (its structure: order, parallel groups, conditions), given as a
/// starting point the LLM corrects.
pub(crate) fn outline(
    library: &Library,
    description: &str,
    reading: Option<&Decomposition>,
) -> Prompt {
    let mut user = description.to_owned();
    if let Some(d) = reading {
        user.push_str(&format!(
            "\nA rule-based reading of the request (correct it where it is wrong): {}",
            serde_json::to_string(&WirePlan::outline(d)).unwrap_or_default()
        ));
    }
    Prompt {
        system: format!(
            "You split a request for a machine-learning workflow into stages. Stages run in \
             order; the tasks of one stage run in parallel. Task kinds: {}. One task per action \
             the request asks for, and none it does not: no load step unless it asks to load, \
             and a sentence that states the goal is not a task. An action no kind fits is a \
             shell task. Give each task its kind and the request's own words for it. Answer \
             with one JSON object \
             {{\"stages\":[{{\"tasks\":[{{\"kind\":\"...\",\"text\":\"...\"}}]}}]}}.",
            kinds(library)
        ),
        user,
    }
}

const PLAN_SYSTEM: &str = "You complete the plan of a machine-learning workflow. Keep its stages \
and their order unless the request says otherwise. Per task you may set: model (the model \
family of a train task, e.g. xgboost, lstm), target (the URL, bucket or path a task reads or \
writes), command (shell tasks only), fan_out {parameter, values} for one copy per value, \
condition {metric, operator: eq|ne|lt|le|gt|ge, value} to run only if it holds, retry, gpus, \
cpus, memory_gib, workers. Set only what the request asks for. The library steps listed as \
references are what each task will run. Answer with one JSON object of the same shape as the plan.";

/// The plan call: the outline, what the library offers per task, and any
/// reviewer notes from a low-scored earlier attempt.
pub(crate) fn plan(
    library: &Library,
    references: usize,
    description: &str,
    outline: &WirePlan,
    decomposition: Option<&Decomposition>,
    notes: &[String],
) -> Prompt {
    let mut user = format!(
        "Request: {description}\nPlan: {}\n",
        serde_json::to_string(outline).unwrap_or_default()
    );
    if let Some(d) = decomposition {
        user.push_str(&reference_lines(library, references, d));
    }
    if !notes.is_empty() {
        user.push_str("A reviewer found these faults in an earlier attempt; avoid them:\n");
        for note in notes {
            user.push_str(&format!("- {note}\n"));
        }
    }
    Prompt {
        system: PLAN_SYSTEM.to_owned(),
        user,
    }
}

/// Retrieval (Couler's "Code Lake"): the top templates per subtask.
pub(crate) fn reference_lines(library: &Library, references: usize, d: &Decomposition) -> String {
    if references == 0 {
        return String::new();
    }
    let mut out = String::from("References (library steps per task):\n");
    for (i, stage) in d.stages.iter().enumerate() {
        for (j, task) in stage.tasks.iter().enumerate() {
            let ranked = library.rank_for(task);
            let refs: Vec<String> = ranked
                .iter()
                .take(references)
                .map(|r| format!("{} ({})", r.template.id, short(&r.template.description)))
                .collect();
            out.push_str(&format!(
                "- stage {i} task {j} ({}): {}\n",
                task.kind,
                refs.join("; ")
            ));
        }
    }
    out
}

fn short(text: &str) -> String {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match text.char_indices().nth(MAX_REFERENCE_CHARS) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

const STEP_SYSTEM: &str = "You write one step of a machine-learning workflow as JSON in \
Couler's IR. Write what the step runs: `container` (image, command, args, env) or `script` \
(image, command, source, env), and resources, retry and timeout where the request asks for \
them. The step's inputs, outputs and wired environment variables are fixed: its program reads \
and writes exactly those. The draft is a library step placed for this task: write only what \
must change for the request, and the image; what you leave out stays as in the draft. Never \
write secret values, and never pipe downloads into a shell. Answer with one JSON object.";

/// The step-writing call: the request, the subtask, the step's fixed
/// wiring, the references and the draft placed from the best of them.
pub(crate) fn step(
    description: &str,
    step: &Step,
    explanation: &StepExplanation,
    references: &[&Template],
) -> Prompt {
    let mut user = format!(
        "Request: {description}\nStep `{}` ({}): {}. {}\n",
        step.name, explanation.kind, explanation.text, explanation.why
    );
    user.push_str(&wiring(step));
    user.push_str("References (library steps):\n");
    for t in references {
        let image = t.image().unwrap_or("-");
        user.push_str(&format!(
            "- {} ({}), image {image}\n",
            t.id,
            short(&t.description)
        ));
    }
    let mut draft = serde_json::to_value(step).unwrap_or_default();
    if let Some(object) = draft.as_object_mut() {
        object.retain(|k, _| AUTHORED.contains(&k.as_str()));
    }
    user.push_str(&format!(
        "Draft:\n{}\nAnswer with the step.",
        cut(&draft.to_string(), MAX_STEP_BYTES)
    ));
    Prompt {
        system: STEP_SYSTEM.to_owned(),
        user,
    }
}

/// What other steps rely on: where inputs appear, what must be written,
/// and the environment the wiring sets.
fn wiring(step: &Step) -> String {
    let mut parts = Vec::new();
    if let Some(inputs) = &step.inputs {
        for a in &inputs.artifacts {
            parts.push(format!("input {} at {}", a.name, a.path));
        }
    }
    if let Some(outputs) = &step.outputs {
        for a in &outputs.artifacts {
            parts.push(format!("output artifact {} written to {}", a.name, a.path));
        }
        for p in &outputs.parameters {
            parts.push(format!("output parameter {} written to {}", p.name, p.path));
        }
    }
    let env: Vec<&str> = step.env().iter().map(|v| v.name.as_str()).collect();
    if !env.is_empty() {
        parts.push(format!("environment {}", env.join(", ")));
    }
    if parts.is_empty() {
        return String::new();
    }
    format!("Fixed wiring: {}.\n", parts.join("; "))
}

/// The same question again, with the previous answer and what is wrong
/// with it, each problem at its JSON pointer.
pub(crate) fn repair(asked: &Prompt, answer: &str, issues: &[Issue]) -> Prompt {
    let mut user = format!(
        "{}\nYour previous answer:\n{}\nIts problems (JSON pointer: message):\n",
        asked.user,
        cut(answer, MAX_IR_BYTES)
    );
    for issue in issues {
        user.push_str(&format!("- {issue}\n"));
    }
    user.push_str("Answer again with the corrected JSON object.");
    Prompt {
        system: asked.system.clone(),
        user,
    }
}

pub(crate) fn critique(description: &str, explanations: &[StepExplanation]) -> Prompt {
    let mut user = format!("Request: {description}\nWorkflow steps, in order:\n");
    for e in explanations {
        user.push_str(&format!(
            "- {} ({}, {}): {}\n",
            e.step, e.kind, e.template, e.why
        ));
    }
    Prompt {
        system: "You review a generated machine-learning workflow against the request. Score \
                 from 0 to 1 how faithfully it does what was asked: the steps, their order, what \
                 runs in parallel, fan-outs, conditions and resources. List what is missing or \
                 wrong, if anything. Answer with one JSON object {\"score\":0.0,\"issues\":[]}."
            .into(),
        user,
    }
}

/// The previous draft's IR and plan and the user's change request.
pub(crate) fn revise(
    library: &Library,
    references: usize,
    description: &str,
    previous: &Decomposition,
    workflow: &Workflow,
    feedback: &str,
) -> Prompt {
    let ir = serde_json::to_string(workflow).unwrap_or_default();
    let user = format!(
        "Request: {description}\nCurrent workflow (IR): {}\nPlan: {}\n{}Change requested by the \
         user: {feedback}\nAnswer with the changed plan.",
        cut(&ir, MAX_IR_BYTES),
        serde_json::to_string(&WirePlan::from(previous)).unwrap_or_default(),
        reference_lines(library, references, previous),
    );
    Prompt {
        system: PLAN_SYSTEM.to_owned(),
        user,
    }
}

fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
