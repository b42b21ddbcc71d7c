//! Watches one DAG run: lists its task instances and turns what changed
//! into updates (the mapping is described in the adapter's module docs).

use super::Operator;
use super::adapter::{AirflowConfig, CANCEL_NOTE, instance};
use super::api::{Api, ApiError, bash_output, failure, json_list, render_log};
use crate::{RunOutcome, StepMetrics, StepPhase, StepState, Update};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use reqwest::Method;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const PAGE: usize = 100;
const LOG_TAIL_BYTES: usize = 64 * 1024;

/// One task instance as the list endpoint returns it.
#[derive(Debug, Clone)]
pub(super) struct Ti {
    task: String,
    index: i64,
    state: String,
    try_number: u32,
    duration: Option<f64>,
}

impl Ti {
    pub(super) fn from_json(v: &Value) -> Option<Ti> {
        Some(Ti {
            task: v["task_id"].as_str()?.to_owned(),
            index: v["map_index"].as_i64().unwrap_or(-1),
            state: v["state"].as_str().unwrap_or("none").to_owned(),
            try_number: v["try_number"].as_u64().unwrap_or(0) as u32,
            duration: v["duration"].as_f64(),
        })
    }
}

/// What the poller decided about one step (instance) in one poll.
pub(super) struct Seen {
    phase: StepPhase,
    attempt: u32,
    message: Option<String>,
    ti: Option<Ti>,
}

/// Watches one DAG run and turns its task instances into updates.
pub(super) struct Poller {
    api: Arc<Api>,
    dag_id: String,
    run_id: String,
    /// Emitted steps (main, then exit handlers) and whether each is a map
    /// step, has a `when` gate.
    steps: Vec<(String, bool, bool)>,
    /// Reused steps' reports, sent once.
    reused: Vec<StepState>,
    /// What was last reported per step (instance): phase and attempt.
    reported: HashMap<String, (StepPhase, u32)>,
    /// Outputs of finished instances of map steps.
    instance_outputs: HashMap<String, StepOutputs>,
    operator: Operator,
    every: Duration,
    tx: mpsc::Sender<Update>,
}

impl Poller {
    pub(super) fn new(
        api: Arc<Api>,
        dag_id: String,
        run_id: String,
        plan: &Plan,
        resume: Vec<StepState>,
        config: &AirflowConfig,
        tx: mpsc::Sender<Update>,
    ) -> Poller {
        let mut steps = Vec::new();
        let mut reused = Vec::new();
        let reported: HashMap<String, (StepPhase, u32)> = resume
            .into_iter()
            .map(|s| (s.name, (s.phase, s.attempt)))
            .collect();
        for (i, planned) in plan.steps.iter().enumerate() {
            let step = plan.ir_step(i);
            match &planned.action {
                Action::Run => {
                    steps.push((step.name.clone(), step.map.is_some(), !step.when.is_empty()))
                }
                Action::Reuse { status, outputs } => {
                    if reported.get(&step.name).is_some_and(|r| r.0.is_terminal()) {
                        continue;
                    }
                    let (phase, message) = match status {
                        ReuseStatus::Succeeded => {
                            (StepPhase::Succeeded, "kept from an earlier attempt")
                        }
                        ReuseStatus::Skipped => {
                            (StepPhase::Skipped, "skipped in an earlier attempt")
                        }
                        ReuseStatus::Cached => (StepPhase::Cached, "reused from the cache"),
                    };
                    reused.push(StepState {
                        name: step.name.clone(),
                        phase,
                        attempt: 0,
                        message: Some(message.into()),
                        outputs: outputs.clone(),
                        metrics: None,
                        engine_ref: None,
                        logs: None,
                    });
                }
            }
        }
        Poller {
            api,
            dag_id,
            run_id,
            steps,
            reused,
            reported,
            instance_outputs: HashMap::new(),
            operator: config.operator,
            every: Duration::from_millis(config.poll_ms.max(50)),
            tx,
        }
    }

    #[tracing::instrument(skip_all, fields(dag_id = %self.dag_id, run_id = %self.run_id))]
    pub(super) async fn run(mut self) {
        for state in std::mem::take(&mut self.reused) {
            self.reported
                .insert(state.name.clone(), (state.phase, state.attempt));
            if self.tx.send(Update::Step(state)).await.is_err() {
                return;
            }
        }
        let mut failures = 0u32;
        loop {
            if self.tx.is_closed() {
                return;
            }
            match self.poll().await {
                Ok(Some(finished)) => {
                    let _ = self.tx.send(finished).await;
                    return;
                }
                Ok(None) => failures = 0,
                Err(e) => {
                    // The API server may be restarting; keep trying.
                    failures += 1;
                    tracing::warn!(error = ?e, failures, "cannot poll the dag run");
                }
            }
            tokio::time::sleep(self.every).await;
        }
    }

    /// One look at the run: sends what changed; `Finished` when it ended.
    pub(super) async fn poll(&mut self) -> Result<Option<Update>, ApiError> {
        let path = [
            "dags",
            self.dag_id.as_str(),
            "dagRuns",
            self.run_id.as_str(),
        ];
        let dag_run = self.api.json(Method::GET, &path, &[], None).await?;
        let state = dag_run["state"].as_str().unwrap_or("queued").to_owned();
        let cancelled = dag_run["note"].as_str() == Some(CANCEL_NOTE);
        let ended = matches!(state.as_str(), "success" | "failed");
        let tis = self.task_instances().await?;

        let mut by_task: BTreeMap<&str, Vec<&Ti>> = BTreeMap::new();
        for ti in &tis {
            by_task.entry(ti.task.as_str()).or_default().push(ti);
        }
        let mut failed = Vec::new();
        for (name, mapped, gated) in self.steps.clone() {
            let own = by_task.get(name.as_str()).cloned().unwrap_or_default();
            let helper = |suffix: &str| {
                by_task
                    .get(format!("{name}{suffix}").as_str())
                    .and_then(|t| t.first().map(|t| t.state.clone()))
            };
            let gate_failed = gated && helper("__when").as_deref() == Some("failed");
            let items_failed = mapped && helper("__items").as_deref() == Some("failed");
            let instances: Vec<&Ti> = own.iter().copied().filter(|t| t.index >= 0).collect();
            let mut seen = if mapped && !instances.is_empty() {
                for ti in &instances {
                    let label = format!("{name}[{}]", ti.index);
                    let one = seen_of(Some(ti), ended, cancelled);
                    self.report(&label, one).await;
                }
                aggregate(&instances, ended, cancelled)
            } else {
                seen_of(own.first().copied(), ended, cancelled)
            };
            if seen.phase == StepPhase::Cancelled && (gate_failed || items_failed) && !cancelled {
                seen.phase = StepPhase::Failed;
                seen.message = Some(if gate_failed {
                    "its `when` condition could not be evaluated".into()
                } else {
                    "its map items could not be computed".into()
                });
            }
            if seen.phase == StepPhase::Failed {
                failed.push(name.clone());
            }
            self.report(&name, seen).await;
        }
        if !ended {
            return Ok(None);
        }
        let (outcome, message) = if cancelled {
            (RunOutcome::Cancelled, Some("cancelled".to_owned()))
        } else if state == "success" {
            (RunOutcome::Succeeded, None)
        } else if failed.is_empty() {
            (
                RunOutcome::Failed,
                Some("the Airflow DAG run failed".into()),
            )
        } else {
            let names: Vec<String> = failed.iter().map(|n| format!("`{n}`")).collect();
            (
                RunOutcome::Failed,
                Some(format!("step {} failed", names.join(", "))),
            )
        };
        Ok(Some(Update::Finished { outcome, message }))
    }

    pub(super) async fn task_instances(&self) -> Result<Vec<Ti>, ApiError> {
        let path = [
            "dags",
            self.dag_id.as_str(),
            "dagRuns",
            self.run_id.as_str(),
            "taskInstances",
        ];
        let mut out = Vec::new();
        loop {
            let query = [
                ("limit", PAGE.to_string()),
                ("offset", out.len().to_string()),
            ];
            let page = self.api.json(Method::GET, &path, &query, None).await?;
            let items = page["task_instances"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let n = items.len();
            out.extend(items.iter().filter_map(Ti::from_json));
            let total = page["total_entries"].as_u64().unwrap_or(0) as usize;
            if n < PAGE || out.len() >= total {
                return Ok(out);
            }
        }
    }

    /// Sends the step's state if it changed, with outputs and logs when terminal.
    pub(super) async fn report(&mut self, name: &str, seen: Seen) {
        if seen.phase == StepPhase::Pending {
            return;
        }
        let now = (seen.phase, seen.attempt);
        match self.reported.get(name) {
            Some(last) if *last == now => return,
            // Terminal states are final, whatever a later poll shows.
            Some((last, _)) if last.is_terminal() => return,
            _ => {}
        }
        let mut state = StepState {
            name: name.to_owned(),
            phase: seen.phase,
            attempt: seen.attempt,
            message: seen.message,
            outputs: StepOutputs::default(),
            metrics: None,
            engine_ref: None,
            logs: None,
        };
        let mut events: Option<Vec<Value>> = None;
        if let Some(ti) = &seen.ti {
            let mut engine_ref = format!("{}/{}/{}", self.dag_id, self.run_id, ti.task);
            if ti.index >= 0 {
                engine_ref.push_str(&format!("/{}", ti.index));
            }
            state.engine_ref = Some(engine_ref);
            // A try that started and ended between two polls still ran:
            // report it running first, as every engine does.
            let ran = matches!(seen.phase, StepPhase::Succeeded | StepPhase::Failed);
            let running = (StepPhase::Running, seen.attempt);
            if ran && ti.try_number > 0 && self.reported.get(name) != Some(&running) {
                let before = StepState {
                    phase: StepPhase::Running,
                    message: None,
                    ..state.clone()
                };
                let _ = self.tx.send(Update::Step(before)).await;
            }
            if seen.phase.is_terminal() {
                state.metrics = ti.duration.map(|d| StepMetrics {
                    wall_ms: (d * 1000.0) as u64,
                    ..Default::default()
                });
                if ti.try_number > 0 && seen.phase != StepPhase::Skipped {
                    events = self
                        .api
                        .log_events(
                            &self.dag_id,
                            &self.run_id,
                            &ti.task,
                            ti.index,
                            ti.try_number.into(),
                        )
                        .await
                        .ok();
                    state.logs = events.as_deref().map(|e| tail(render_log(e)));
                    if seen.phase == StepPhase::Failed && state.message.is_none() {
                        state.message = events.as_deref().and_then(failure);
                    }
                }
            }
        }
        if seen.phase == StepPhase::Succeeded {
            state.outputs = self.outputs_of(name, seen.ti.as_ref()).await;
            if state.outputs.result.is_none() && self.operator == Operator::Bash {
                state.outputs.result = events.as_deref().and_then(bash_output);
            }
            if seen.ti.as_ref().is_some_and(|t| t.index >= 0) {
                self.instance_outputs
                    .insert(name.to_owned(), state.outputs.clone());
            }
        }
        self.reported.insert(name.to_owned(), now);
        let _ = self.tx.send(Update::Step(state)).await;
    }

    /// A succeeded step's outputs: its XCom, or its instances' aggregated.
    pub(super) async fn outputs_of(&mut self, name: &str, ti: Option<&Ti>) -> StepOutputs {
        if let Some(ti) = ti {
            let pushed = self
                .api
                .outputs(&self.dag_id, &self.run_id, &ti.task, ti.index)
                .await
                .ok()
                .flatten();
            return pushed.unwrap_or_default();
        }
        // A map step: every instance's outputs, in index order.
        let prefix = format!("{name}[");
        let mut instances: Vec<(i64, &StepOutputs)> = self
            .instance_outputs
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (instance(k).1, v))
            .collect();
        instances.sort_by_key(|(i, _)| *i);
        let all: Vec<&StepOutputs> = instances.into_iter().map(|(_, o)| o).collect();
        let mut outputs = StepOutputs {
            result: Some(json_list(
                all.iter().map(|o| o.result.as_deref().unwrap_or_default()),
            )),
            ..Default::default()
        };
        let names: HashSet<&String> = all.iter().flat_map(|o| o.parameters.keys()).collect();
        for p in names {
            let values = all
                .iter()
                .map(|o| o.parameters.get(p).map(String::as_str).unwrap_or_default());
            outputs.parameters.insert(p.clone(), json_list(values));
        }
        outputs
    }
}

/// The last bytes of a log, cut at a character boundary.
pub(super) fn tail(mut log: String) -> String {
    if log.len() > LOG_TAIL_BYTES {
        let mut cut = log.len() - LOG_TAIL_BYTES;
        while !log.is_char_boundary(cut) {
            cut += 1;
        }
        log.drain(..cut);
    }
    log
}

/// One task instance's state in Couler's terms.
pub(super) fn seen_of(ti: Option<&Ti>, ended: bool, cancelled: bool) -> Seen {
    let Some(ti) = ti else {
        let phase = if ended || cancelled {
            StepPhase::Cancelled
        } else {
            StepPhase::Pending
        };
        return Seen {
            phase,
            attempt: 0,
            message: cancelled.then(|| "cancelled".into()),
            ti: None,
        };
    };
    let (phase, message) = match ti.state.as_str() {
        "running" => (StepPhase::Running, None),
        "up_for_retry" => (StepPhase::Running, Some("failed; retrying".to_owned())),
        "success" => (StepPhase::Succeeded, None),
        // Airflow fails running and skips unstarted tasks of a run marked failed.
        "skipped" | "failed" | "upstream_failed" if cancelled => {
            (StepPhase::Cancelled, Some("cancelled".to_owned()))
        }
        "skipped" => (StepPhase::Skipped, None),
        "failed" => (StepPhase::Failed, None),
        "upstream_failed" => (StepPhase::Cancelled, Some("upstream failed".to_owned())),
        "removed" => (
            StepPhase::Cancelled,
            Some("removed from the DAG".to_owned()),
        ),
        _ if ended => (StepPhase::Cancelled, Some("never started".to_owned())),
        _ => (StepPhase::Pending, None),
    };
    let attempt = if phase == StepPhase::Pending {
        0
    } else {
        ti.try_number
    };
    Seen {
        phase,
        attempt,
        message,
        ti: Some(ti.clone()),
    }
}

/// A map step's state from its instances.
pub(super) fn aggregate(instances: &[&Ti], ended: bool, cancelled: bool) -> Seen {
    let seen: Vec<Seen> = instances
        .iter()
        .map(|t| seen_of(Some(t), ended, cancelled))
        .collect();
    let any = |p: StepPhase| seen.iter().any(|s| s.phase == p);
    let phase = if seen.iter().any(|s| !s.phase.is_terminal()) {
        if any(StepPhase::Running) {
            StepPhase::Running
        } else {
            StepPhase::Pending
        }
    } else if any(StepPhase::Failed) {
        StepPhase::Failed
    } else if any(StepPhase::Cancelled) {
        StepPhase::Cancelled
    } else if seen.iter().all(|s| s.phase == StepPhase::Skipped) {
        StepPhase::Skipped
    } else {
        StepPhase::Succeeded
    };
    let message = match phase {
        StepPhase::Failed => {
            let failed: Vec<String> = instances
                .iter()
                .zip(&seen)
                .filter(|(_, s)| s.phase == StepPhase::Failed)
                .map(|(t, _)| t.index.to_string())
                .collect();
            Some(format!("instance(s) {} failed", failed.join(", ")))
        }
        _ => None,
    };
    Seen {
        phase,
        attempt: u32::from(phase != StepPhase::Pending),
        message,
        ti: None,
    }
}
