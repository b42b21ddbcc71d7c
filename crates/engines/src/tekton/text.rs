//! `{{…}}` references in step text, turned into Tekton variables.
//!
//! Step text reads other tasks' results through task parameters: the
//! pipeline task passes `$(tasks.S.results.R)` as parameter `step_S_R` and
//! the step reads `$(params.step_S_R)`. Tekton derives the ordering edge
//! from that result reference. Outputs of reused (cached) steps become
//! literals; paths become the paths the step declared.

use super::Ctx;
use couler_ir::Step;
use couler_ir::refs::{Ref, Segment, segments};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The workspace that carries artifacts between tasks.
pub const ARTIFACTS: &str = "artifacts";

/// Where a string sits: step text is read through task parameters, `when`
/// inputs read results directly.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Site {
    Data,
    When,
}

/// Which output of a step is read.
#[derive(Clone, Copy)]
pub enum Output<'a> {
    Result,
    Parameter(&'a str),
}

/// Problems found while compiling: features Tekton cannot express, and
/// plans that are inconsistent (a reused step without the output a
/// consumer reads).
#[derive(Default)]
pub struct Problems {
    pub unsupported: Vec<String>,
    pub invalid: Vec<String>,
}

impl Problems {
    pub fn unsupported(&mut self, step: &str, feature: impl std::fmt::Display) {
        let message = format!("step `{step}`: {feature}");
        if !self.unsupported.contains(&message) {
            self.unsupported.push(message);
        }
    }

    pub fn invalid(&mut self, step: &str, what: impl std::fmt::Display) {
        let message = format!("step `{step}`: {what}");
        if !self.invalid.contains(&message) {
            self.invalid.push(message);
        }
    }
}

/// Translates the text of one step and records what its task needs.
/// The task parameter holding `$(tasks.status)` for an exit handler.
pub const STATUS_PARAM: &str = "workflow_status";
/// Stands for `{{workflow.status}}` in an exit handler's text until the
/// wrapper replaces it with `succeeded` or `failed` at run time (Tekton
/// says `Succeeded`, `Completed` or `Failed`, and cannot map values).
pub const STATUS_TOKEN: &str = "@COULER_WORKFLOW_STATUS@";

pub struct Translator<'a, 'p> {
    pub ctx: &'a Ctx<'p>,
    pub step: &'p Step,
    exit: bool,
    pub problems: &'a mut Problems,
    /// Task parameters: name → the value the pipeline task passes.
    pub params: BTreeMap<String, String>,
    /// Plan indexes of the steps whose results this task reads.
    pub reads: BTreeSet<usize>,
    /// Item fields read as `{{item.FIELD}}`.
    pub item_fields: BTreeSet<String>,
    pub uses_workspace: bool,
}

impl<'a, 'p> Translator<'a, 'p> {
    pub fn new(ctx: &'a Ctx<'p>, index: usize, problems: &'a mut Problems) -> Self {
        Translator {
            ctx,
            step: ctx.plan.ir_step(index),
            exit: ctx.plan.steps[index].exit_handler,
            problems,
            params: BTreeMap::new(),
            reads: BTreeSet::new(),
            item_fields: BTreeSet::new(),
            uses_workspace: false,
        }
    }

    pub fn name(&self) -> &'p str {
        &self.step.name
    }

    /// Step text (command, args, source, env, working directory).
    pub fn data(&mut self, s: &str) -> String {
        self.translate(s, Site::Data)
    }

    /// A `when` input.
    pub fn when(&mut self, s: &str) -> String {
        self.translate(s, Site::When)
    }

    fn translate(&mut self, s: &str, site: Site) -> String {
        if !couler_ir::refs::has_references(s) {
            return s.to_owned();
        }
        let mut out = String::with_capacity(s.len() + 16);
        for segment in segments(s) {
            match segment {
                Ok(Segment::Text(t)) => out.push_str(t),
                Ok(Segment::Ref(r)) => self.reference(r, site, &mut out),
                // Validation rejected malformed references; keep the text.
                Err(_) => return s.to_owned(),
            }
        }
        out
    }

    fn reference(&mut self, r: Ref<'_>, site: Site, out: &mut String) {
        let name = self.name();
        match r {
            Ref::WorkflowParameter(p) => match self.ctx.plan.parameters.get(p) {
                Some(v) => out.push_str(v),
                None => self
                    .problems
                    .invalid(name, format_args!("{r}: the plan has no value for it")),
            },
            Ref::WorkflowName => out.push_str(&self.ctx.plan.workflow.name),
            Ref::WorkflowStatus if self.exit => match site {
                Site::When => out.push_str("$(tasks.status)"),
                // The wrapper puts Couler's word there (see `script`).
                Site::Data => {
                    self.params
                        .insert(STATUS_PARAM.to_owned(), "$(tasks.status)".to_owned());
                    out.push_str(STATUS_TOKEN);
                }
            },
            Ref::WorkflowStatus => self
                .problems
                .invalid(name, format_args!("{r} outside an exit handler")),
            Ref::StepResult(s) => self.output(s, Output::Result, site, out),
            Ref::StepParameter(s, p) => self.output(s, Output::Parameter(p), site, out),
            Ref::StepArtifact(s, a) => self.artifact(s, a, out),
            Ref::Item(_) if site == Site::When => self.problems.unsupported(
                name,
                format_args!(
                    "a `when` condition reads {r}; Tekton evaluates `when` once for a matrix task, before it fans out"
                ),
            ),
            Ref::Item(None) => out.push_str("$(params.item)"),
            Ref::Item(Some(field)) => {
                if field
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                {
                    self.item_fields.insert(field.to_owned());
                    let _ = write!(out, "$(params.item_{field})");
                } else {
                    self.problems.unsupported(
                        name,
                        format_args!("{r}: the field name cannot be a Tekton parameter name"),
                    )
                }
            }
            Ref::TrialParameter(_) | Ref::TrialBudget => self.problems.unsupported(
                name,
                format_args!(
                    "{r}: hyperparameter trials are expanded and run in stages by the scheduler"
                ),
            ),
            Ref::InputArtifactPath(a) => {
                let path = self
                    .step
                    .inputs
                    .iter()
                    .flat_map(|i| &i.artifacts)
                    .find(|x| x.name == a)
                    .map(|x| x.path.as_str());
                self.path(r, path, out)
            }
            Ref::OutputParameterPath(p) => {
                let path = self.step.output_parameter(p).map(|x| x.path.as_str());
                self.path(r, path, out)
            }
            Ref::OutputArtifactPath(a) => {
                let path = self.step.output_artifact(a).map(|x| x.path.as_str());
                self.path(r, path, out)
            }
        }
    }

    fn path(&mut self, r: Ref<'_>, path: Option<&str>, out: &mut String) {
        match path {
            Some(p) => out.push_str(p),
            None => self.problems.invalid(
                self.name(),
                format_args!("{r} names nothing the step declares"),
            ),
        }
    }

    fn output(&mut self, source: &str, output: Output<'_>, site: Site, out: &mut String) {
        let me = self.name();
        let Some(&j) = self.ctx.index.get(source) else {
            self.problems
                .invalid(me, format_args!("reads unknown step `{source}`"));
            return;
        };
        if let Some(outputs) = self.ctx.reused(j) {
            let value = match output {
                Output::Result => outputs.result.as_deref(),
                Output::Parameter(p) => outputs.parameters.get(p).map(String::as_str),
            };
            return match value {
                Some(v) => out.push_str(v),
                None => self.problems.invalid(
                    me,
                    format_args!(
                        "reads {} of step `{source}`, which is reused but recorded none",
                        describe(output)
                    ),
                ),
            };
        }
        if self.ctx.mapped[j] {
            return self.problems.unsupported(
                me,
                format_args!(
                    "reads {} of mapped step `{source}` as one value; Tekton gathers a matrix task's results into an array that only another matrix (`map.from`) can read",
                    describe(output)
                ),
            );
        }
        let Some(result) = self.ctx.result_name(j, output) else {
            return self.problems.unsupported(
                me,
                format_args!(
                    "reads {} of step `{source}`, whose name is not a valid Tekton result name",
                    describe(output)
                ),
            );
        };
        self.reads.insert(j);
        let reference = format!("$(tasks.{source}.results.{result})");
        match site {
            Site::When => out.push_str(&reference),
            // A task parameter the step reads, fed the result.
            Site::Data => {
                let name = format!("step_{source}_{result}");
                let _ = write!(out, "$(params.{name})");
                self.params.insert(name, reference);
            }
        }
    }

    fn artifact(&mut self, source: &str, artifact: &str, out: &mut String) {
        let me = self.name();
        let Some(&j) = self.ctx.index.get(source) else {
            self.problems
                .invalid(me, format_args!("reads unknown step `{source}`"));
            return;
        };
        if let Some(outputs) = self.ctx.reused(j) {
            return match outputs.artifacts.get(artifact) {
                Some(a) => out.push_str(&a.location),
                None => self.problems.invalid(
                    me,
                    format_args!(
                        "reads artifact `{artifact}` of step `{source}`, which is reused but recorded none"
                    ),
                ),
            };
        }
        match self.ctx.artifact_dir(j, artifact) {
            Some(dir) => {
                self.uses_workspace = true;
                let _ = write!(out, "$(workspaces.{ARTIFACTS}.path)/{dir}");
            }
            None => self.problems.unsupported(
                me,
                format_args!(
                    "reads artifact `{artifact}` of mapped step `{source}`; each matrix instance keeps its own copy"
                ),
            ),
        }
    }
}

fn describe(output: Output<'_>) -> String {
    match output {
        Output::Result => "the result (standard output)".to_owned(),
        Output::Parameter(p) => format!("output parameter `{p}`"),
    }
}

/// Every string of a step that may hold references to other steps: what it
/// runs, its `when` inputs and its `map.from`.
pub fn texts(step: &Step) -> Vec<&str> {
    fn env<'s>(env: &'s [couler_ir::EnvVar], out: &mut Vec<&'s str>) {
        out.extend(env.iter().filter_map(|v| v.value.as_deref()));
    }
    let mut out: Vec<&str> = Vec::new();
    if let Some(c) = &step.container {
        out.extend(c.command.iter().chain(&c.args).map(String::as_str));
        env(&c.env, &mut out);
        out.extend(c.working_dir.as_deref());
    }
    if let Some(s) = &step.script {
        out.extend(s.command.iter().map(String::as_str));
        out.push(&s.source);
        env(&s.env, &mut out);
        out.extend(s.working_dir.as_deref());
    }
    if let Some(j) = &step.job {
        out.extend(j.texts().map(String::as_str));
        env(&j.env, &mut out);
        out.extend(j.working_dir.as_deref());
    }
    out.extend(step.when.iter().map(|c| c.input.as_str()));
    out.extend(step.map.as_ref().and_then(|m| m.from.as_deref()));
    out
}
