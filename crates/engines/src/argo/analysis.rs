//! What is decided before anything is emitted: which steps run, their task
//! and template names, the shape each takes in Argo, which of their outputs
//! other steps read, and every feature Argo cannot express.

use super::names::{MAX_NAME, Names};
use super::unsupported;
use crate::EngineError;
use couler_ir::depends::Ended;
use couler_ir::refs::{Ref, references, sole_reference};
use couler_ir::{Dag, Step, StepKind};
use couler_optimizer::{Action, Plan, ReuseStatus};
use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// How a running step appears in Argo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shape {
    /// One task calling the step's template.
    Plain,
    /// A task fanned out with `withItems`/`withParam`.
    Map,
    /// A recursive `steps` template calling the step's template while its
    /// condition holds.
    Loop,
}

/// Outputs of one step that other steps read.
#[derive(Debug, Default)]
pub(super) struct Reads<'a> {
    pub result: bool,
    pub parameters: BTreeSet<&'a str>,
    pub artifacts: BTreeSet<&'a str>,
}

/// Global output names (`{{workflow.outputs.…}}`) under which a main step
/// hands the outputs exit handlers read across to the exit-handler DAG.
#[derive(Debug, Default)]
pub(super) struct Globals<'a> {
    pub result: Option<String>,
    pub parameters: BTreeMap<&'a str, String>,
    pub artifacts: BTreeMap<&'a str, String>,
}

/// One planned step.
pub(super) struct StepInfo<'a> {
    pub ir: &'a Step,
    pub exit: bool,
    /// Index in its graph (`dag.steps` or `dag.on_exit`).
    pub node: u32,
    pub action: &'a Action,
    /// Task name in its DAG.
    pub task: String,
    /// The template that runs the step (named after the step).
    pub body: String,
    /// The template the DAG task calls instead, for wrapped and loop steps.
    pub outer: Option<String>,
    pub shape: Shape,
    /// Called through a one-task DAG template that exports its outputs
    /// (fan-out parallelism, or outputs read by exit handlers).
    pub wrapped: bool,
    pub read: Reads<'a>,
    pub globals: Globals<'a>,
    /// The outer template's output parameter carrying the step's result.
    pub result_param: String,
    /// A reused upstream step was skipped, so this step is skipped too.
    pub skipped: bool,
}

impl StepInfo<'_> {
    pub fn runs(&self) -> bool {
        matches!(self.action, Action::Run)
    }

    /// Whether consumers read outputs from an outer template rather than
    /// from the step's own template.
    pub fn exports(&self) -> bool {
        self.wrapped || self.shape == Shape::Loop
    }
}

pub(super) struct Analysis<'a> {
    pub plan: &'a Plan,
    pub dag: Cow<'a, Dag>,
    /// `plan.steps` order: main steps, then exit handlers.
    pub steps: Vec<StepInfo<'a>>,
    pub by_name: HashMap<&'a str, usize>,
    pub main_template: String,
    pub exit_template: String,
    pub noop_template: String,
    /// Labels every pod carries (tenant and run).
    pub labels: BTreeMap<String, String>,
}

impl<'a> Analysis<'a> {
    pub fn step(&self, name: &str) -> Option<&StepInfo<'a>> {
        self.by_name.get(name).map(|&i| &self.steps[i])
    }

    /// Main steps, or exit handlers, in declaration order.
    pub fn phase(&self, exit: bool) -> impl Iterator<Item = &StepInfo<'a>> {
        self.steps.iter().filter(move |s| s.exit == exit)
    }
}

pub(super) fn analyse(
    plan: &Plan,
    labels: BTreeMap<String, String>,
) -> Result<Analysis<'_>, EngineError> {
    let wf = &plan.workflow;
    let dag = crate::compile::dag(plan)?;
    if plan.steps.len() != wf.steps.len() + wf.on_exit.len() {
        return Err(EngineError::Other(format!(
            "the plan lists {} steps but its workflow has {}",
            plan.steps.len(),
            wf.steps.len() + wf.on_exit.len()
        )));
    }

    // Steps keep their names as template names, so pods carry them.
    let mut templates = Names::objects();
    for s in wf.steps.iter().chain(&wf.on_exit) {
        templates.reserve(&s.name);
    }
    let main_template = templates.take("main", MAX_NAME);
    let exit_template = templates.take("exit-handler", MAX_NAME);
    let noop_template = templates.take("nothing-to-run", MAX_NAME);
    let main_tasks = task_names(&wf.steps);
    let exit_tasks = task_names(&wf.on_exit);

    let mut steps = Vec::with_capacity(plan.steps.len());
    let mut by_name = HashMap::with_capacity(plan.steps.len());
    for (i, planned) in plan.steps.iter().enumerate() {
        let ir = plan.ir_step(i);
        if planned.name != ir.name {
            return Err(EngineError::Other(format!(
                "planned step {:?} does not match workflow step {:?}",
                planned.name, ir.name
            )));
        }
        let exit = i >= wf.steps.len();
        let node = if exit { i - wf.steps.len() } else { i } as u32;
        let task = if exit { &exit_tasks } else { &main_tasks }[node as usize].clone();
        let shape = match (&ir.map, &ir.repeat) {
            (Some(_), _) => Shape::Map,
            (None, Some(_)) => Shape::Loop,
            (None, None) => Shape::Plain,
        };
        by_name.insert(ir.name.as_str(), i);
        steps.push(StepInfo {
            ir,
            exit,
            node,
            action: &planned.action,
            task,
            body: ir.name.clone(),
            outer: None,
            shape,
            wrapped: false,
            read: Reads::default(),
            globals: Globals::default(),
            result_param: String::new(),
            skipped: false,
        });
    }
    let mut analysis = Analysis {
        plan,
        dag,
        steps,
        by_name,
        main_template,
        exit_template,
        noop_template,
        labels,
    };
    analysis.find_reads()?;
    analysis.find_skips();
    analysis.decide_shapes(&mut templates)?;
    Ok(analysis)
}

/// Task names: the step names, except that Argo refuses task names that
/// start with a digit in a DAG using `depends`.
fn task_names(steps: &[Step]) -> Vec<String> {
    let mut names = Names::objects();
    for s in steps {
        if !s.name.starts_with(|c: char| c.is_ascii_digit()) {
            names.reserve(&s.name);
        }
    }
    steps
        .iter()
        .map(|s| {
            if s.name.starts_with(|c: char| c.is_ascii_digit()) {
                names.take(&format!("s{}", s.name), MAX_NAME)
            } else {
                s.name.clone()
            }
        })
        .collect()
}

/// Every string of a step that may read other steps' outputs.
pub(super) fn texts(step: &Step) -> Vec<&str> {
    let mut out: Vec<&str> = Vec::new();
    let (command, args, env, dir) = match step.kind() {
        Some(StepKind::Container(c)) => (&c.command, &c.args[..], &c.env, &c.working_dir),
        Some(StepKind::Script(s)) => {
            out.push(&s.source);
            (&s.command, &[][..], &s.env, &s.working_dir)
        }
        Some(StepKind::Job(j)) => {
            out.extend(
                j.replicas
                    .values()
                    .flat_map(|r| r.command.iter().chain(&r.args))
                    .map(String::as_str),
            );
            (&j.command, &j.args[..], &j.env, &j.working_dir)
        }
        None => return out,
    };
    out.extend(command.iter().chain(args).map(String::as_str));
    out.extend(env.iter().filter_map(|e| e.value.as_deref()));
    out.extend(dir.as_deref());
    out
}

impl<'a> Analysis<'a> {
    /// Marks, for every running step, the outputs it reads of other steps.
    fn find_reads(&mut self) -> Result<(), EngineError> {
        let mut marks: Vec<(usize, bool, Ref<'a>)> = Vec::new();
        for s in &self.steps {
            if !s.runs() {
                continue;
            }
            let ir: &'a Step = s.ir;
            if ir.tune.is_some() {
                return Err(unsupported(
                    &ir.name,
                    "`tune`: the scheduler runs hyperparameter trials in stages; compile each stage's plan instead of the whole search".into(),
                ));
            }
            let mut strings = texts(ir);
            strings.extend(ir.when.iter().map(|c| c.input.as_str()));
            strings.extend(ir.map.as_ref().and_then(|m| m.from.as_deref()));
            strings.extend(
                ir.inputs
                    .iter()
                    .flat_map(|i| &i.artifacts)
                    .map(|a| a.from.as_str()),
            );
            for text in strings {
                for r in references(text) {
                    let r =
                        r.map_err(|e| EngineError::Other(format!("step {:?}: {e}", ir.name)))?;
                    if let Some(target) = r.step()
                        && target != ir.name
                    {
                        let t = *self.by_name.get(target).ok_or_else(|| {
                            EngineError::Other(format!(
                                "step {:?} reads unknown step {target:?}",
                                ir.name
                            ))
                        })?;
                        marks.push((t, s.exit && !self.steps[t].exit, r));
                    }
                    if matches!(r, Ref::TrialParameter(_) | Ref::TrialBudget) {
                        return Err(unsupported(
                            &ir.name,
                            format!("{r} (hyperparameter trials are expanded by the scheduler)"),
                        ));
                    }
                }
            }
        }
        for (target, across, r) in marks {
            let t = &mut self.steps[target];
            let mark = |reads: &mut Reads<'a>| match r {
                Ref::StepResult(_) => reads.result = true,
                Ref::StepParameter(_, p) => {
                    reads.parameters.insert(p);
                }
                Ref::StepArtifact(_, a) => {
                    reads.artifacts.insert(a);
                }
                _ => {}
            };
            mark(&mut t.read);
            if across && t.runs() {
                let mut exit_reads = Reads::default();
                mark(&mut exit_reads);
                // Global names are allocated once every read is known.
                if exit_reads.result {
                    t.globals.result.get_or_insert_with(String::new);
                }
                for p in exit_reads.parameters {
                    t.globals.parameters.entry(p).or_default();
                }
                for a in exit_reads.artifacts {
                    t.globals.artifacts.entry(a).or_default();
                }
            }
        }
        let mut globals = Names::parameters();
        for t in &mut self.steps {
            let name = &t.ir.name;
            if let Some(g) = &mut t.globals.result {
                *g = globals.take(&format!("{name}-result"), MAX_NAME);
            }
            for (p, g) in &mut t.globals.parameters {
                *g = globals.take(&format!("{name}-{p}"), MAX_NAME);
            }
            for (a, g) in &mut t.globals.artifacts {
                *g = globals.take(&format!("{name}-{a}"), MAX_NAME);
            }
        }
        Ok(())
    }

    /// Shapes, outer templates, and what Argo cannot do with a step.
    fn decide_shapes(&mut self, templates: &mut Names) -> Result<(), EngineError> {
        for s in &mut self.steps {
            if !s.runs() {
                continue;
            }
            let ir = s.ir;
            let name = &ir.name;
            if let Some(StepKind::Job(_)) = ir.kind() {
                job_limits(s)?;
            }
            let exit_read = s.globals.result.is_some()
                || !s.globals.parameters.is_empty()
                || !s.globals.artifacts.is_empty();
            match s.shape {
                Shape::Map => {
                    if let Some(a) = s.read.artifacts.first() {
                        return Err(unsupported(
                            name,
                            format!(
                                "output artifact {a:?} of a `map` step is read by another step; Argo cannot pass on the artifacts of a fanned-out task"
                            ),
                        ));
                    }
                    let parallel = ir.map.as_ref().is_some_and(|m| m.parallelism.is_some());
                    // Argo judges a fanned-out task's `when` per instance and
                    // calls the group succeeded when every instance was
                    // skipped; a condition on the whole step goes on a
                    // wrapper, so that skipping it skips its dependents.
                    let whole_when =
                        s.skipped || ir.when.iter().any(|c| !super::values::reads_item(c));
                    s.wrapped = parallel || exit_read || whole_when;
                }
                Shape::Plain => s.wrapped = s.globals.result.is_some(),
                Shape::Loop => {}
            }
            if s.wrapped {
                let suffix = if s.shape == Shape::Map {
                    "fanout"
                } else {
                    "export"
                };
                s.outer = Some(templates.take(&format!("{name}-{suffix}"), MAX_NAME));
            } else if s.shape == Shape::Loop {
                s.outer = Some(templates.take(&format!("{name}-while"), MAX_NAME));
            }
            if s.exports() {
                let mut params = Names::parameters();
                for p in ir.outputs.iter().flat_map(|o| &o.parameters) {
                    params.reserve(&p.name);
                }
                s.result_param = params.take("result", MAX_NAME);
            }
        }
        Ok(())
    }

    /// Steps behind a step reused as skipped are skipped as well.
    /// Marks the steps that cannot run because of reused steps' known
    /// outcomes: a `depends` requirement they make false.
    fn find_skips(&mut self) {
        let main = self.plan.workflow.steps.len();
        let reused: Vec<Option<Ended>> = self
            .steps
            .iter()
            .map(|s| reused_outcome(s.action))
            .collect();
        for s in &mut self.steps {
            let offset = if s.exit { main } else { 0 };
            let known = |u: &u32| reused[offset + *u as usize];
            s.skipped = (self.dag.requirements(s.exit).of(s.node).iter())
                .any(|r| r.expr.fold(&known) == Err(false));
        }
    }
}

/// How a reused step ended, as `depends` sees it; `None` for one that runs.
pub(super) fn reused_outcome(action: &Action) -> Option<Ended> {
    match action {
        Action::Run => None,
        Action::Reuse { status, .. } => Some(match status {
            ReuseStatus::Succeeded | ReuseStatus::Cached => Ended::Succeeded,
            ReuseStatus::Skipped | ReuseStatus::NotNeeded => Ended::Skipped,
        }),
    }
}

/// What a training job cannot do in Argo: a resource template creates the
/// job and watches its status, so there is no pod of Couler's own to place
/// input files in, collect output files from or read standard output of.
fn job_limits(s: &StepInfo<'_>) -> Result<(), EngineError> {
    let ir = s.ir;
    let name = &ir.name;
    if let Some(o) = &ir.outputs
        && (!o.parameters.is_empty() || !o.artifacts.is_empty())
    {
        return Err(unsupported(
            name,
            "outputs of a training job: Argo creates the job as a resource and cannot collect files from its pods".into(),
        ));
    }
    if ir.inputs.as_ref().is_some_and(|i| !i.artifacts.is_empty()) {
        return Err(unsupported(
            name,
            "input artifacts of a training job: Argo creates the job as a resource and cannot place files in its pods".into(),
        ));
    }
    if s.read.result {
        return Err(unsupported(
            name,
            "reading the result of a training job: a job created as an Argo resource has no standard output".into(),
        ));
    }
    if ir.repeat.is_some() {
        return Err(unsupported(
            name,
            "`while` on a training job: the condition reads outputs a job created as an Argo resource does not have".into(),
        ));
    }
    for text in texts(ir) {
        for r in references(text).flatten() {
            if let Ref::StepArtifact(..) = r {
                return Err(unsupported(
                    name,
                    format!(
                        "{r} in a training job: Argo passes artifacts as files, which a job created as a resource cannot receive"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// The artifact an input artifact's `from` names.
pub(super) fn artifact_source<'a>(
    step: &str,
    from: &'a str,
) -> Result<(&'a str, &'a str), EngineError> {
    match sole_reference(from) {
        Some(Ok(Ref::StepArtifact(s, a))) => Ok((s, a)),
        _ => Err(EngineError::Other(format!(
            "step {step:?}: input artifact `from` {from:?} is not a step's output artifact"
        ))),
    }
}
