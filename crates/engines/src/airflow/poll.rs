//! Watches one DAG run: lists its task instances and turns what changed
//! into updates (the mapping is described in the adapter's module docs).

use super::Operator;
use super::adapter::{AirflowConfig, CANCEL_NOTE, instance};
use super::api::{Api, bash_output, failure, render_log};
use crate::rest::ApiError;
use crate::track::{
    LOG_TAIL_BYTES, Poll, Reporter, gather, map_state, poll_until_finished, split_plan, tail,
};
use crate::{RunOutcome, StepMetrics, StepPhase, StepState, Update};
use couler_optimizer::{Plan, StepOutputs};
use reqwest::Method;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const PAGE: usize = 100;

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
    reporter: Reporter,
    /// Outputs of finished instances of map steps.
    instance_outputs: HashMap<String, StepOutputs>,
    operator: Operator,
    every: Duration,
    /// The run's delivered secrets, removed when it ends.
    secrets_dir: Option<PathBuf>,
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
        let (run, reused) = split_plan(plan);
        let steps = run
            .into_iter()
            .map(|(_, step)| (step.name.clone(), step.map.is_some(), !step.when.is_empty()))
            .collect();
        // Instances that succeeded before a restart are not reported
        // again, but their map step still gathers their outputs.
        let instance_outputs = resume
            .iter()
            .filter(|s| s.phase == StepPhase::Succeeded && instance(&s.name).1 >= 0)
            .map(|s| (s.name.clone(), s.outputs.clone()))
            .collect();
        Poller {
            api,
            dag_id,
            run_id,
            steps,
            reused,
            reporter: Reporter::new(tx, resume),
            instance_outputs,
            operator: config.operator,
            every: Duration::from_millis(config.poll_ms.max(50)),
            secrets_dir: None,
        }
    }

    /// Removes `dir` (the run's delivered secrets) when the run ends.
    pub(super) fn removing_secrets(mut self, dir: Option<PathBuf>) -> Poller {
        self.secrets_dir = dir;
        self
    }

    #[tracing::instrument(skip_all, fields(dag_id = %self.dag_id, run_id = %self.run_id))]
    pub(super) async fn run(mut self) {
        let reused = std::mem::take(&mut self.reused);
        let every = self.every;
        poll_until_finished(&mut self, reused, every).await;
    }

    /// One look at the run: sends what changed; `Finished` when it ended.
    pub(super) async fn poll(&mut self) -> Result<Option<Update>, ApiError> {
        let path = [
            "dags",
            self.dag_id.as_str(),
            "dagRuns",
            self.run_id.as_str(),
        ];
        // The tasks before the run: `cancel` notes the run before failing
        // it, so a task stopped by a cancel is read with the note after it.
        let mut tis = self.task_instances().await?;
        let dag_run = self.api.json(Method::GET, &path, &[], None).await?;
        let state = dag_run["state"].as_str().unwrap_or("queued").to_owned();
        let cancelled = dag_run["note"].as_str() == Some(CANCEL_NOTE);
        let ended = matches!(state.as_str(), "success" | "failed");
        if ended {
            // Once per run: the tasks' final states, read after the run ended.
            tis = self.task_instances().await?;
        }

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
        if let Some(dir) = &self.secrets_dir
            && let Err(e) = tokio::fs::remove_dir_all(dir).await
            && e.kind() != std::io::ErrorKind::NotFound
        {
            tracing::warn!(dir = %dir.display(), error = %e, "cannot remove the run's secrets");
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
        // Counted in listed items: one that does not parse still took a place.
        let mut offset = 0;
        loop {
            let query = [("limit", PAGE.to_string()), ("offset", offset.to_string())];
            let page = self.api.json(Method::GET, &path, &query, None).await?;
            let items = page["task_instances"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let n = items.len();
            offset += n;
            out.extend(items.iter().filter_map(Ti::from_json));
            let total = page["total_entries"].as_u64().unwrap_or(0) as usize;
            if n < PAGE || offset >= total {
                return Ok(out);
            }
        }
    }

    /// Sends the step's state if it changed, with outputs and logs when terminal.
    pub(super) async fn report(&mut self, name: &str, seen: Seen) {
        if !self.reporter.is_news(name, seen.phase, seen.attempt) {
            return;
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
            self.reporter.running_first(&state).await;
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
                    state.logs = events
                        .as_deref()
                        .map(|e| tail(render_log(e), LOG_TAIL_BYTES));
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
        self.reporter.send(state).await;
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
        gather(instances.into_iter().map(|(_, o)| o))
    }
}

impl Poll for Poller {
    type Error = ApiError;

    fn reporter(&mut self) -> &mut Reporter {
        &mut self.reporter
    }

    async fn look(&mut self) -> Result<Option<Update>, ApiError> {
        self.poll().await
    }
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
    let state = map_state(
        instances
            .iter()
            .map(|t| (t.index, seen_of(Some(t), ended, cancelled).phase)),
    );
    Seen {
        phase: state.phase,
        attempt: state.attempt,
        message: state.message,
        ti: None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::api::Auth;
    use super::*;

    #[tokio::test]
    async fn map_steps_gather_instances_that_ended_before_a_restart() {
        let yaml = "apiVersion: couler.dev/v1alpha1\nname: m\nsteps:\n  - name: m\n    map: {items: [1, 2]}\n    container: {image: x, command: [echo, \"{{item}}\"]}\n";
        let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
        let plan = couler_optimizer::Pipeline::default()
            .plan(workflow, &Default::default(), |_, f| f())
            .unwrap();
        let url = "http://127.0.0.1:9";
        let api = Api::new(url, Auth::Token("t".to_owned().into())).unwrap();
        let config = AirflowConfig::new(url, "/nowhere", "u", "p".to_owned().into());
        let done = |i: usize, result: &str| StepState {
            name: format!("m[{i}]"),
            phase: StepPhase::Succeeded,
            attempt: 1,
            message: None,
            outputs: StepOutputs {
                result: Some(result.into()),
                ..StepOutputs::default()
            },
            metrics: None,
            engine_ref: None,
            logs: None,
        };
        let (tx, _rx) = mpsc::channel(8);
        let resume = vec![done(1, "b"), done(0, "a")];
        let mut poller = Poller::new(
            Arc::new(api),
            "d".into(),
            "r".into(),
            &plan,
            resume,
            &config,
            tx,
        );
        let outputs = poller.outputs_of("m", None).await;
        assert_eq!(outputs.result.as_deref(), Some(r#"["a","b"]"#));
    }
}
