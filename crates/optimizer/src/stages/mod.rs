//! Running a staged plan: which sub-workflows ("stages") to hand to the
//! engine next, from what the run's steps have recorded so far.
//!
//! A plan is staged when it was split into parts or holds hyperparameter
//! searches ([`Plan::is_staged`]). Each stage is a self-contained [`Plan`]
//! an engine runs like any other: the stage's own steps, plus the upstream
//! steps they read from as `Reuse` stand-ins carrying the recorded outputs
//! (parameters and artifacts cross the cut that way).
//!
//! - A part starts once every step it reads from other parts has finished
//!   (succeeded, skipped or cached), even while the rest of those parts
//!   still runs.
//! - A `tune` step is a part of its own: its trials run in batches (one
//!   stage per batch, see [`crate::tune::next`]); when the search is done
//!   the step takes the best trial's outputs.
//! - Once a step fails (a trial's failure is only data for its search) or
//!   the run is cancelled, nothing new starts; when the running stages
//!   have ended, never-started steps are cancelled and the exit handlers
//!   run as a last stage, with `{{workflow.status}}` written in.
//!
//! [`advance`] is pure: a scheduler that takes a run over calls it with the
//! steps' recorded states and gets the same answer, then re-attaches to the
//! stages still running (starting a stage is idempotent per stage id).

use crate::tune::{self, Next, TrialOutcome};
use crate::{Action, Plan, PlannedStep, ReuseStatus, StepOutputs};
use couler_ir::refs::{Ref, Segment, segments};
use couler_ir::{Dag, Script, Step, Workflow};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The id of the stage that runs the exit handlers.
pub const EXIT_STAGE: &str = "exit";

/// What a run's step has recorded.
#[derive(Debug, Clone, PartialEq)]
pub enum Progress {
    Running,
    /// Succeeded, skipped or cached, with its outputs.
    Done(ReuseStatus, StepOutputs),
    Failed(String),
    Cancelled,
}

/// One engine submission.
#[derive(Debug, Clone, PartialEq)]
pub struct Stage {
    /// Stable, unique within the run attempt: `p3`, `train-t4`, `exit`.
    pub id: String,
    pub plan: Plan,
    /// The steps this stage runs; the others in its plan are stand-ins.
    pub runs: BTreeSet<String>,
    /// Whether the scheduler looks the stage's steps up in the cache when
    /// it starts it: the stage reads outputs other stages recorded, which
    /// planning could not key with, and it has not started before (a stage
    /// re-attached after a takeover keeps the plan it started with).
    pub look_up: bool,
}

/// A step the scheduler settles itself (a `tune` step, or a step that will
/// never start).
#[derive(Debug, Clone, PartialEq)]
pub enum Settle {
    Running(String),
    Succeeded(StepOutputs, String),
    Failed(String),
    Cancelled(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Succeeded,
    Failed,
    Cancelled,
}

/// What to do next.
#[derive(Debug, Default)]
pub struct Advance {
    /// Stages that should be running and are not in `active`.
    pub start: Vec<Stage>,
    pub settle: Vec<(String, Settle)>,
    /// Searches that ended, with their trial tables.
    pub tuned: Vec<(String, tune::Summary)>,
    /// The run is over.
    pub finish: Option<(Outcome, Option<String>)>,
}

/// Decides the next stages. `steps` holds the recorded state of every step
/// that has one (absent: pending); `active` the ids of stages running now.
/// Settling changes `steps`, so after applying `settle` call again until it
/// comes back empty.
pub fn advance(
    plan: &Plan,
    dag: &Dag,
    steps: &BTreeMap<String, Progress>,
    cancelled: bool,
    active: &BTreeSet<String>,
) -> Advance {
    let mut out = Advance::default();
    let index: HashMap<&str, usize> = plan
        .workflow
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let done = |name: &str| matches!(steps.get(name), Some(Progress::Done(..)));
    let failed_step = plan
        .workflow
        .steps
        .iter()
        .find_map(|s| match steps.get(&s.name) {
            Some(Progress::Failed(m)) => Some(format!("step `{}` failed: {m}", s.name)),
            Some(Progress::Cancelled) if !cancelled => {
                Some(format!("step `{}` was cancelled", s.name))
            }
            _ => None,
        });
    let parts = parts_of(plan);
    let part_done: Vec<bool> = parts.iter().map(|p| p.iter().all(|s| done(s))).collect();
    let stopping = cancelled || failed_step.is_some();

    if !stopping {
        for (k, part) in parts.iter().enumerate() {
            if part_done[k] || !reads_done(plan, dag, part, &index, &done) {
                continue;
            }
            match part.as_slice() {
                [only] if plan.tuning.contains_key(*only) => {
                    let i = index[*only];
                    search_step(plan, dag, i, steps, active, &mut out);
                }
                _ => {
                    let id = format!("p{k}");
                    if !active.contains(&id) {
                        let own: Vec<usize> = part.iter().map(|s| index[*s]).collect();
                        out.start.push(part_stage(plan, dag, id, &own, steps));
                    }
                }
            }
        }
        if !part_done.iter().all(|&d| d) {
            return out;
        }
    } else {
        // Running stages finish (or are cancelled) before anything else.
        if !active.is_empty() {
            return out;
        }
        // After a takeover: re-attach parts that were running.
        for (k, part) in parts.iter().enumerate() {
            let running = part
                .iter()
                .any(|s| matches!(steps.get(*s), Some(Progress::Running)));
            if running && !plan.tuning.contains_key(part[0]) {
                let own: Vec<usize> = part.iter().map(|s| index[*s]).collect();
                out.start
                    .push(part_stage(plan, dag, format!("p{k}"), &own, steps));
            }
        }
        if !out.start.is_empty() {
            return out;
        }
        let why = if cancelled {
            "the run was cancelled"
        } else {
            "not started: an earlier step failed"
        };
        let exits: BTreeSet<&str> = plan
            .workflow
            .on_exit
            .iter()
            .map(|s| s.name.as_str())
            .collect();
        for s in &plan.workflow.steps {
            if steps.get(&s.name).is_none() {
                out.settle
                    .push((s.name.clone(), Settle::Cancelled(why.to_owned())));
            }
        }
        // Steps (and trials) still marked running belong to no stage now.
        for (name, progress) in steps {
            if *progress == Progress::Running && !exits.contains(name.as_str()) {
                out.settle
                    .push((name.clone(), Settle::Cancelled(why.to_owned())));
            }
        }
        if !out.settle.is_empty() {
            return out;
        }
    }

    // The main DAG is over: exit handlers, then the outcome.
    let (outcome, status) = if cancelled {
        (Outcome::Cancelled, "cancelled")
    } else if failed_step.is_some() {
        (Outcome::Failed, "failed")
    } else {
        (Outcome::Succeeded, "succeeded")
    };
    let exit_pending = plan.workflow.on_exit.iter().any(|s| {
        !matches!(
            steps.get(&s.name),
            Some(Progress::Done(..) | Progress::Failed(_) | Progress::Cancelled)
        )
    });
    if exit_pending {
        if !active.contains(EXIT_STAGE) {
            out.start.push(exit_stage(plan, dag, status, steps));
        }
        return out;
    }
    let exit_failure = plan
        .workflow
        .on_exit
        .iter()
        .find_map(|s| match steps.get(&s.name) {
            Some(Progress::Failed(m)) => Some(format!("exit handler `{}` failed: {m}", s.name)),
            _ => None,
        });
    out.finish = Some(match (outcome, exit_failure) {
        (Outcome::Succeeded, Some(m)) => (Outcome::Failed, Some(m)),
        (Outcome::Failed, _) => (Outcome::Failed, failed_step),
        (o, _) => (o, None),
    });
    out
}

/// The steps outside `own` that its steps read (repeats possible).
fn reads_outside<'a>(dag: &'a Dag, own: &'a BTreeSet<usize>) -> impl Iterator<Item = usize> + 'a {
    own.iter().flat_map(move |&i| {
        dag.steps
            .upstream(i as u32)
            .iter()
            .map(|&u| u as usize)
            .filter(|u| !own.contains(u))
    })
}

/// Whether every step outside `part` that one of its steps reads has
/// finished: a part starts as soon as what it reads is recorded, not when
/// the whole of each part it reads from has finished.
fn reads_done(
    plan: &Plan,
    dag: &Dag,
    part: &[&str],
    index: &HashMap<&str, usize>,
    done: &impl Fn(&str) -> bool,
) -> bool {
    let own: BTreeSet<usize> = part.iter().map(|s| index[*s]).collect();
    reads_outside(dag, &own).all(|u| done(&plan.workflow.steps[u].name))
}

/// The steps of each part; an unsplit plan is one part of every step.
fn parts_of(plan: &Plan) -> Vec<Vec<&str>> {
    if plan.parts.is_empty() {
        return vec![
            plan.workflow
                .steps
                .iter()
                .map(|s| s.name.as_str())
                .collect(),
        ];
    }
    plan.parts
        .iter()
        .map(|p| p.steps.iter().map(String::as_str).collect())
        .collect()
}

/// The next move of one `tune` step's search.
fn search_step(
    plan: &Plan,
    dag: &Dag,
    i: usize,
    steps: &BTreeMap<String, Progress>,
    active: &BTreeSet<String>,
    out: &mut Advance,
) {
    let step = &plan.workflow.steps[i];
    let (Some(spec), Some(search)) = (&step.tune, plan.tuning.get(&step.name)) else {
        return;
    };
    let mut outcomes = BTreeMap::new();
    let prefix = format!("{}-", step.name);
    for (name, progress) in steps.range(prefix.clone()..) {
        let Some(id) = name.strip_prefix(&prefix) else {
            break;
        };
        if !is_trial_id(id) {
            continue;
        }
        let outcome = match progress {
            Progress::Done(ReuseStatus::Skipped, _) => TrialOutcome::Failed {
                message: "skipped".into(),
            },
            Progress::Done(status, outputs) => objective(
                outputs,
                &spec.objective.metric,
                matches!(status, ReuseStatus::Cached | ReuseStatus::NotNeeded),
            ),
            Progress::Failed(m) => TrialOutcome::Failed { message: m.clone() },
            Progress::Cancelled => TrialOutcome::Failed {
                message: "cancelled".into(),
            },
            Progress::Running => continue,
        };
        outcomes.insert(id.to_owned(), outcome);
    }
    match tune::next(spec, search, &outcomes) {
        Next::Run(batch) => {
            let id = format!("{}-{}", step.name, batch[0].id);
            if active.contains(&id) {
                return;
            }
            if !matches!(steps.get(&step.name), Some(Progress::Running)) {
                out.settle.push((
                    step.name.clone(),
                    Settle::Running(format!("running {} trials", search.configs.len())),
                ));
            }
            let trials: Vec<Step> = batch.iter().map(|t| trial_step(step, t)).collect();
            out.start.push(trial_stage(plan, dag, id, i, trials, steps));
        }
        Next::Done(summary) => {
            let best = format!("{}-{}", step.name, summary.best);
            let outputs = match steps.get(&best) {
                Some(Progress::Done(_, o)) => o.clone(),
                _ => StepOutputs::default(),
            };
            let message = format!(
                "best of {} trials: {} ({} = {}); {}",
                summary
                    .trials
                    .iter()
                    .filter(|t| t.status != "not-run")
                    .count(),
                summary.best,
                spec.objective.metric,
                summary.objective,
                summary.reason
            );
            out.settle
                .push((step.name.clone(), Settle::Succeeded(outputs, message)));
            out.tuned.push((step.name.clone(), summary));
        }
        Next::Failed(why) => out.settle.push((step.name.clone(), Settle::Failed(why))),
    }
}

/// `t3` or `t3-r1`.
fn is_trial_id(id: &str) -> bool {
    let Some(rest) = id.strip_prefix('t') else {
        return false;
    };
    let (config, rung) = rest.split_once("-r").unwrap_or((rest, "0"));
    [config, rung]
        .iter()
        .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A finished trial's outcome; `cached` when it did not run.
fn objective(outputs: &StepOutputs, metric: &str, cached: bool) -> TrialOutcome {
    match outputs
        .parameters
        .get(metric)
        .map(|v| v.trim().parse::<f64>())
    {
        Some(Ok(v)) if v.is_finite() => TrialOutcome::Succeeded {
            objective: v,
            cached,
        },
        Some(_) => TrialOutcome::Failed {
            message: format!("its output parameter `{metric}` is not a number"),
        },
        None => TrialOutcome::Failed {
            message: format!("it did not write the output parameter `{metric}`"),
        },
    }
}

/// The step name of a trial: `<step>-<trial id>`.
pub fn trial_name(step: &str, trial: &str) -> String {
    format!("{step}-{trial}")
}

/// A trial as an ordinary step: the `tune` block gone, its configuration
/// and budget written into the step's text.
pub fn trial_step(step: &Step, trial: &tune::Trial) -> Step {
    let mut s = step.clone();
    s.name = trial_name(&step.name, &trial.id);
    s.tune = None;
    let budget = trial.budget.map(|b| b.to_string());
    crate::visit_text(&mut s, &|text: &mut String| {
        if !couler_ir::refs::has_references(text) {
            return;
        }
        let mut out = String::with_capacity(text.len());
        for seg in segments(text) {
            match seg {
                Ok(Segment::Text(t)) => out.push_str(t),
                Ok(Segment::Ref(Ref::TrialParameter(p))) => {
                    out.push_str(trial.parameters.get(p).map_or("", String::as_str))
                }
                Ok(Segment::Ref(Ref::TrialBudget)) => out.push_str(budget.as_deref().unwrap_or("")),
                Ok(Segment::Ref(r)) => out.push_str(&r.to_string()),
                Err(_) => return,
            }
        }
        *text = out;
    });
    s
}

/// A stage of a part's steps.
fn part_stage(
    plan: &Plan,
    dag: &Dag,
    id: String,
    own: &[usize],
    steps: &BTreeMap<String, Progress>,
) -> Stage {
    let own_set: BTreeSet<usize> = own.iter().copied().collect();
    let mut builder = StageBuilder::new(plan, steps);
    let mut reads_others = false;
    for u in reads_outside(dag, &own_set) {
        builder.stand_in(&plan.workflow.steps[u]);
        reads_others = true;
    }
    let started = own
        .iter()
        .any(|&i| steps.contains_key(&plan.workflow.steps[i].name));
    for &i in own {
        let depends = depends_of(plan, dag, false, i as u32);
        builder.own(
            plan.workflow.steps[i].clone(),
            depends,
            &plan.steps[i].action,
        );
    }
    builder.finish(id, reads_others && !started)
}

/// A stage of one batch of a search's trials.
fn trial_stage(
    plan: &Plan,
    dag: &Dag,
    id: String,
    tune_step: usize,
    trials: Vec<Step>,
    steps: &BTreeMap<String, Progress>,
) -> Stage {
    let mut builder = StageBuilder::new(plan, steps);
    for &u in dag.steps.upstream(tune_step as u32) {
        builder.stand_in(&plan.workflow.steps[u as usize]);
    }
    let upstream = depends_of(plan, dag, false, tune_step as u32);
    let started = trials.iter().any(|t| steps.contains_key(&t.name));
    for trial in trials {
        builder.own(trial, upstream.clone(), &Action::Run);
    }
    builder.finish(id, !started)
}

/// The exit handlers as a stage of their own, `{{workflow.status}}` set.
fn exit_stage(plan: &Plan, dag: &Dag, status: &str, steps: &BTreeMap<String, Progress>) -> Stage {
    let mut builder = StageBuilder::new(plan, steps);
    builder.exit = true;
    let by_name: HashMap<&str, &Step> = plan
        .workflow
        .steps
        .iter()
        .map(|s| (s.name.as_str(), s))
        .collect();
    for (i, handler) in plan.workflow.on_exit.iter().enumerate() {
        let mut handler = handler.clone();
        let mut read = BTreeSet::new();
        let collect = std::cell::RefCell::new(&mut read);
        crate::visit_text(&mut handler, &|text: &mut String| {
            if !couler_ir::refs::has_references(text) {
                return;
            }
            let mut out = String::with_capacity(text.len());
            for seg in segments(text) {
                match seg {
                    Ok(Segment::Text(t)) => out.push_str(t),
                    Ok(Segment::Ref(Ref::WorkflowStatus)) => out.push_str(status),
                    Ok(Segment::Ref(r)) => {
                        if let Some(s) = r.step() {
                            collect.borrow_mut().insert(s.to_owned());
                        }
                        out.push_str(&r.to_string());
                    }
                    Err(_) => return,
                }
            }
            *text = out;
        });
        for artifact in handler.inputs.iter().flat_map(|i| &i.artifacts) {
            if let Some(Ok(Segment::Ref(r))) = segments(&artifact.from).next()
                && let Some(s) = r.step()
            {
                read.insert(s.to_owned());
            }
        }
        let mut depends = depends_of(plan, dag, true, i as u32);
        for name in read {
            if let Some(s) = by_name.get(name.as_str()) {
                builder.stand_in(s);
            }
        }
        depends.retain(|d| !by_name.contains_key(d.as_str()));
        builder.own(handler, depends, &Action::Run);
    }
    builder.finish(EXIT_STAGE.into(), false)
}

/// A step's `depends` in a stage, where groups are gone: its upstream
/// steps by name, or, when its entries ask for outcomes, each of its
/// requirements written out over step names.
fn depends_of(plan: &Plan, dag: &Dag, exit: bool, node: u32) -> Vec<String> {
    let steps = if exit {
        &plan.workflow.on_exit
    } else {
        &plan.workflow.steps
    };
    let requirements = dag.requirements(exit);
    if requirements.is_plain(node) {
        return (dag.graph(exit).upstream(node).iter())
            .map(|&u| steps[u as usize].name.clone())
            .collect();
    }
    (requirements.of(node).iter())
        .map(|r| {
            r.expr
                .map(&mut |&u| steps[u as usize].name.as_str())
                .to_string()
        })
        .collect()
}

/// Assembles a stage's plan.
struct StageBuilder<'a> {
    plan: &'a Plan,
    steps: &'a BTreeMap<String, Progress>,
    workflow_steps: Vec<Step>,
    planned: Vec<PlannedStep>,
    seen: BTreeSet<String>,
    runs: BTreeSet<String>,
    /// Building the exit stage.
    exit: bool,
}

impl<'a> StageBuilder<'a> {
    fn new(plan: &'a Plan, steps: &'a BTreeMap<String, Progress>) -> Self {
        StageBuilder {
            plan,
            steps,
            workflow_steps: Vec::new(),
            planned: Vec::new(),
            seen: BTreeSet::new(),
            runs: BTreeSet::new(),
            exit: false,
        }
    }

    /// An upstream step of another stage: its declared outputs and its
    /// recorded result, nothing it would run.
    fn stand_in(&mut self, step: &Step) {
        if !self.seen.insert(step.name.clone()) {
            return;
        }
        // Exit handlers run whatever became of the steps they read.
        let (status, outputs) = match self.steps.get(&step.name) {
            Some(Progress::Done(status, outputs)) if !self.exit => (*status, outputs.clone()),
            Some(Progress::Done(_, outputs)) => (ReuseStatus::Succeeded, outputs.clone()),
            _ if self.exit => (ReuseStatus::Succeeded, StepOutputs::default()),
            _ => (ReuseStatus::Skipped, StepOutputs::default()),
        };
        self.workflow_steps.push(Step {
            name: step.name.clone(),
            description: None,
            container: None,
            script: Some(Script {
                image: step.image().unwrap_or("scratch").to_owned(),
                command: vec!["sh".into()],
                source: "true".into(),
                env: Vec::new(),
                working_dir: None,
            }),
            job: None,
            resources: None,
            hints: None,
            inputs: None,
            outputs: step.outputs.clone(),
            depends: Vec::new(),
            when: Vec::new(),
            map: None,
            repeat: None,
            retry: None,
            timeout: None,
            cache: None,
            tune: None,
        });
        self.planned.push(PlannedStep {
            name: step.name.clone(),
            exit_handler: false,
            action: Action::Reuse { status, outputs },
        });
    }

    /// A step of the stage, with what the plan decided for it: it runs,
    /// unless the plan reuses it (a cache hit, a step not needed) or it
    /// finished before (a takeover), which the stage reports as it is.
    fn own(&mut self, mut step: Step, depends: Vec<String>, planned: &Action) {
        step.depends = depends;
        let action = match self.steps.get(&step.name) {
            Some(Progress::Done(status, outputs)) => Action::Reuse {
                status: *status,
                outputs: outputs.clone(),
            },
            _ => planned.clone(),
        };
        self.seen.insert(step.name.clone());
        self.runs.insert(step.name.clone());
        self.planned.push(PlannedStep {
            name: step.name.clone(),
            exit_handler: false,
            action,
        });
        self.workflow_steps.push(step);
    }

    fn finish(self, id: String, look_up: bool) -> Stage {
        let w = &self.plan.workflow;
        let workflow = Workflow {
            api_version: w.api_version.clone(),
            name: w.name.clone(),
            description: None,
            labels: w.labels.clone(),
            parameters: w.parameters.clone(),
            steps: self.workflow_steps,
            groups: Vec::new(),
            on_exit: Vec::new(),
            parallelism: w.parallelism,
            schedule: None,
            // The run's deadline spans its stages: the scheduler keeps it.
            timeout: None,
        };
        Stage {
            id,
            plan: Plan {
                workflow,
                parameters: self.plan.parameters.clone(),
                steps: self.planned,
                decisions: Vec::new(),
                parts: Vec::new(),
                tuning: BTreeMap::new(),
                advice: Vec::new(),
                validated: None,
            },
            runs: self.runs,
            look_up,
        }
    }
}

#[cfg(test)]
mod tests;
