//! One run's driver: walks the main DAG and then the exit handlers, starts
//! each step when its upstream steps are done and its `depends` hold
//! (skipping it otherwise), and turns the end of the run into
//! `Update::Finished` by the rule of [`run_failure`].

use super::Shared;
use super::step::{self, StepEnd};
use crate::{RunOutcome, RunSpec, StepPhase, StepState, Update};
use couler_ir::depends::{Ended, Requirements, State, run_failure};
use couler_ir::{Dag, Graph};
use couler_optimizer::{Action, Plan, StepOutputs};
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, RwLock};
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// What every step task of a run shares.
pub(super) struct Run {
    pub spec: RunSpec,
    pub plan: Arc<Plan>,
    /// `<data_dir>/runs/<run>/<attempt>`.
    pub dir: PathBuf,
    pub engine: Arc<Shared>,
    pub updates: mpsc::Sender<Update>,
    /// Outputs of finished steps by name (map steps: aggregated).
    pub outputs: RwLock<HashMap<String, Arc<StepOutputs>>>,
    /// Last known states from an earlier start, by step (instance) name.
    pub resume: HashMap<String, StepState>,
    /// The run directory existed before this start: look for earlier tries.
    pub existed: bool,
    /// The workflow's `parallelism`.
    pub slots: Option<Arc<Semaphore>>,
    /// Nobody reads the updates any more: stop driving, leave processes be.
    pub detached: CancellationToken,
}

impl Run {
    pub(super) async fn send(&self, update: Update) {
        if self.updates.send(update).await.is_err() {
            self.detached.cancel();
        }
    }
}

/// The main DAG or the exit handlers.
pub(super) struct Phase {
    /// Stop running steps (user cancel).
    pub cancel: CancellationToken,
    /// Start nothing new but steps that handle outcomes (a failure is
    /// sure to fail the run), or nothing at all (`cancel`).
    pub halt: CancellationToken,
    pub exit: bool,
    /// `{{workflow.status}}`, for exit handlers.
    pub status: Option<&'static str>,
}

impl Phase {
    fn new(cancel: CancellationToken, exit: bool, status: Option<&'static str>) -> Arc<Phase> {
        Arc::new(Phase {
            halt: cancel.child_token(),
            cancel,
            exit,
            status,
        })
    }

    /// Why a step that never started is reported cancelled.
    pub(super) fn not_started_reason(&self) -> &'static str {
        if self.cancel.is_cancelled() {
            "run cancelled"
        } else {
            "the run failed"
        }
    }
}

struct PhaseEnd {
    failure: Option<String>,
    cancelled: bool,
}

/// Drives a run to its end. `cancel` holds the token `cancel()` trips;
/// it is swapped for a fresh one when the exit handlers start.
#[tracing::instrument(skip_all, fields(run = %run.spec.run, attempt = run.spec.attempt))]
pub(super) async fn drive(
    run: Arc<Run>,
    dag: Dag,
    cancel: Arc<Mutex<CancellationToken>>,
    cancelled_earlier: bool,
) {
    let token = cancel.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if cancelled_earlier {
        token.cancel();
    }
    let main = Phase::new(token, false, None);
    let Some(main_end) = run_phase(&run, &dag, &main).await else {
        return;
    };
    // A main DAG stopped by the run's deadline failed.
    let expired = match main_end.cancelled {
        true => tokio::fs::read_to_string(run.dir.join(super::DEADLINE_FILE))
            .await
            .ok(),
        false => None,
    };
    let failure = main_end.failure.or(expired);
    let status = match (&failure, main_end.cancelled) {
        (Some(_), _) => "failed",
        (None, true) => "cancelled",
        (None, false) => "succeeded",
    };
    let token = CancellationToken::new();
    *cancel.lock().unwrap_or_else(|e| e.into_inner()) = token.clone();
    let exit = Phase::new(token, true, Some(status));
    let Some(exit_end) = run_phase(&run, &dag, &exit).await else {
        return;
    };
    let (outcome, message) = if let Some(failure) = failure {
        (RunOutcome::Failed, Some(failure))
    } else if main_end.cancelled {
        (RunOutcome::Cancelled, Some("cancelled".to_owned()))
    } else if let Some(failure) = exit_end.failure {
        (RunOutcome::Failed, Some(format!("exit handler {failure}")))
    } else if exit_end.cancelled {
        (RunOutcome::Cancelled, Some("cancelled".to_owned()))
    } else {
        (RunOutcome::Succeeded, None)
    };
    tracing::debug!(?outcome, "run finished");
    run.send(Update::Finished { outcome, message }).await;
}

/// Runs one graph; `None` when the run was detached.
async fn run_phase(run: &Arc<Run>, dag: &Dag, phase: &Arc<Phase>) -> Option<PhaseEnd> {
    let graph = dag.graph(phase.exit);
    let requirements = dag.requirements(phase.exit);
    let offset = if phase.exit {
        run.plan.workflow.steps.len()
    } else {
        0
    };
    let actions: HashMap<(&str, bool), &Action> = run
        .plan
        .steps
        .iter()
        .map(|p| ((p.name.as_str(), p.exit_handler), &p.action))
        .collect();
    let mut state = PhaseState::new(graph, requirements);
    let mut tasks = JoinSet::new();
    let mut running: HashMap<tokio::task::Id, u32> = HashMap::new();
    loop {
        while let Some(node) = state.ready.pop_front() {
            let index = offset + node as usize;
            let ir = run.plan.ir_step(index);
            let action = actions.get(&(ir.name.as_str(), phase.exit)).copied();
            if let Some(end) = settled(run, &ir.name, action).await {
                // Known without running anything: settle it even when halted.
                state.complete(run, phase, graph, node, &ir.name, end);
                continue;
            }
            // Once the run is sure to fail, only steps whose depends
            // handle outcomes still start (as they would in Argo); a
            // cancel stops everything.
            let plain = requirements.is_plain(node);
            let blocked = (graph.upstream(node).iter())
                .any(|&u| state.done[u as usize] == Some(StepPhase::Cancelled));
            if phase.cancel.is_cancelled() || (phase.halt.is_cancelled() && plain) || blocked {
                continue; // reported by `cancel_rest`
            }
            if let Some(end) = not_required(run, phase, &state, node, &ir.name).await {
                state.complete(run, phase, graph, node, &ir.name, end);
                continue;
            }
            let halt = if plain {
                phase.halt.child_token()
            } else {
                phase.cancel.child_token()
            };
            let (run, phase) = (run.clone(), phase.clone());
            let handle = tasks.spawn(async move { step::run_step(run, phase, index, halt).await });
            running.insert(handle.id(), node);
        }
        if tasks.is_empty() {
            break;
        }
        tokio::select! {
            joined = tasks.join_next_with_id() => {
                let (id, end) = match joined.expect("tasks is not empty") {
                    Ok((id, end)) => (id, end),
                    Err(e) => (e.id(), StepEnd::failed(format!("internal error: {e}"))),
                };
                let node = running.remove(&id).expect("every task is a node");
                let name = &run.plan.ir_step(offset + node as usize).name;
                state.complete(run, phase, graph, node, name, end);
            }
            _ = run.detached.cancelled() => return None,
        }
        if run.detached.is_cancelled() {
            return None;
        }
    }
    state.cancel_rest(run, phase, graph, offset).await;
    if run.detached.is_cancelled() {
        return None;
    }
    Some(PhaseEnd {
        failure: state.failure,
        cancelled: phase.cancel.is_cancelled() || state.cancelled,
    })
}

/// A step settled without running it: finished in an earlier start
/// (not reported again) or reused by the plan (reported once).
async fn settled(run: &Run, name: &str, action: Option<&Action>) -> Option<StepEnd> {
    if let Some(earlier) = run.resume.get(name)
        && earlier.phase.is_terminal()
    {
        return Some(StepEnd {
            phase: earlier.phase,
            outputs: Arc::new(earlier.outputs.clone()),
            message: earlier.message.clone(),
        });
    }
    let Some(Action::Reuse { status, outputs }) = action else {
        return None;
    };
    let reused = crate::track::reused_state(name, *status, outputs);
    let end = StepEnd {
        phase: reused.phase,
        outputs: Arc::new(reused.outputs),
        message: reused.message,
    };
    run.send(Update::Step(end.state(name))).await;
    Some(end)
}

/// A step whose depends do not hold is skipped, naming why: an upstream
/// step it needed to succeed was skipped (or failed, where the failure is
/// handled elsewhere), or an entry is false.
async fn not_required(
    run: &Run,
    phase: &Phase,
    state: &PhaseState<'_>,
    node: u32,
    name: &str,
) -> Option<StepEnd> {
    let offset = if phase.exit {
        run.plan.workflow.steps.len()
    } else {
        0
    };
    let step_name = |u: u32| run.plan.ir_step(offset + u as usize).name.as_str();
    let ended = |u: &u32| state.ended(*u);
    let requirement = state.requirements.first_false(node, &ended)?;
    // A skip behind a skipped step that had to succeed names the first
    // such step in graph order, as plain dependencies always have.
    let skipped_upstream = (state.requirements.of(node).iter())
        .filter(|r| r.expr.is_conjunction_of_successes())
        .flat_map(|r| r.expr.names())
        .filter(|&&u| state.ended(u) == Some(Ended::Skipped))
        .min();
    let message = if let Some(&up) = skipped_upstream {
        format!("upstream step `{}` was skipped", step_name(up))
    } else {
        let ir = run.plan.ir_step(offset + node as usize);
        let text = requirement
            .entry
            .and_then(|i| ir.depends.get(i))
            .cloned()
            .unwrap_or_else(|| requirement.expr.map(&mut |&u| step_name(u)).to_string());
        let mut seen = Vec::new();
        let outcomes: Vec<String> = requirement
            .expr
            .names()
            .into_iter()
            .filter(|u| {
                let new = !seen.contains(*u);
                seen.push(**u);
                new
            })
            .filter_map(|&u| Some(format!("{} {}", step_name(u), state.ended(u)?.as_str())))
            .collect();
        format!(
            "`depends` entry `{text}` is false ({})",
            outcomes.join(", ")
        )
    };
    let end = StepEnd {
        phase: StepPhase::Skipped,
        outputs: Arc::default(),
        message: Some(message),
    };
    run.send(Update::Step(end.state(name))).await;
    Some(end)
}

struct PhaseState<'d> {
    graph: &'d Graph,
    requirements: &'d Requirements,
    /// Upstream steps not done yet, per node.
    waiting: Vec<u32>,
    done: Vec<Option<StepPhase>>,
    ready: VecDeque<u32>,
    /// Why each failed step failed, until one of them fails the run.
    failed: HashMap<u32, String>,
    /// The failure that fails the run (see [`run_failure`]).
    failure: Option<String>,
    /// Some step ended cancelled (the run cannot have succeeded).
    cancelled: bool,
}

impl<'d> PhaseState<'d> {
    fn new(graph: &'d Graph, requirements: &'d Requirements) -> PhaseState<'d> {
        let waiting: Vec<u32> = (0..graph.len() as u32)
            .map(|n| graph.upstream(n).len() as u32)
            .collect();
        let ready = graph
            .order()
            .iter()
            .copied()
            .filter(|&n| waiting[n as usize] == 0)
            .collect();
        PhaseState {
            graph,
            requirements,
            waiting,
            done: vec![None; graph.len()],
            ready,
            failed: HashMap::new(),
            failure: None,
            cancelled: false,
        }
    }

    fn complete(
        &mut self,
        run: &Run,
        phase: &Phase,
        graph: &Graph,
        node: u32,
        name: &str,
        end: StepEnd,
    ) {
        self.done[node as usize] = Some(end.phase);
        match end.phase {
            StepPhase::Succeeded | StepPhase::Cached => {
                run.outputs
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(name.to_owned(), end.outputs);
            }
            StepPhase::Failed => {
                let why = end.message.as_deref().unwrap_or("failed");
                self.failed
                    .insert(node, format!("step `{name}` failed: {why}"));
            }
            StepPhase::Cancelled => self.cancelled = true,
            _ => {}
        }
        // A failure fails the run once no step that could handle it can
        // still run; then nothing new starts but the handlers.
        if self.failure.is_none() && !self.failed.is_empty() {
            let state = |n: u32| self.state(n);
            if let Some(f) = run_failure(self.graph, self.requirements, &state) {
                self.failure = self.failed.get(&f).cloned();
                phase.halt.cancel();
            }
        }
        for &next in graph.downstream(node) {
            let waiting = &mut self.waiting[next as usize];
            *waiting -= 1;
            if *waiting == 0 {
                self.ready.push_back(next);
            }
        }
    }

    /// How a node ended, as `depends` sees it; `None` while it has not.
    fn ended(&self, node: u32) -> Option<Ended> {
        match self.done[node as usize]? {
            StepPhase::Succeeded | StepPhase::Cached => Some(Ended::Succeeded),
            StepPhase::Failed => Some(Ended::Failed),
            StepPhase::Skipped => Some(Ended::Skipped),
            StepPhase::Cancelled | StepPhase::Pending | StepPhase::Running => None,
        }
    }

    fn state(&self, node: u32) -> State {
        match (self.ended(node), self.done[node as usize]) {
            (Some(e), _) => State::Ended(e),
            (None, Some(StepPhase::Cancelled)) => State::Cancelled,
            (None, _) => State::Pending,
        }
    }

    /// Reports every step that never started as cancelled, so that a
    /// retry from failure runs it.
    async fn cancel_rest(&self, run: &Run, phase: &Phase, graph: &Graph, offset: usize) {
        let mut blocked = vec![false; graph.len()];
        for &node in graph.order() {
            let n = node as usize;
            if self.done[n].is_some() {
                continue;
            }
            blocked[n] = graph.upstream(node).iter().any(|&u| {
                blocked[u as usize]
                    || matches!(
                        self.done[u as usize],
                        Some(StepPhase::Failed | StepPhase::Cancelled)
                    )
            });
            let message = if blocked[n] && self.failure.is_some() {
                "upstream failed"
            } else {
                phase.not_started_reason()
            };
            let end = StepEnd {
                phase: StepPhase::Cancelled,
                outputs: Arc::default(),
                message: Some(message.into()),
            };
            run.send(Update::Step(end.state(&run.plan.ir_step(offset + n).name)))
                .await;
        }
    }
}
