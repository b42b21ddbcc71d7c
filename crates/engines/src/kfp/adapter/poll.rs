//! Watching one KFP run: its task details turned into [`Update`]s.

use super::{Api, KfpConfig, Logs, terminal_run};
use crate::failure::FailureKind;
use crate::track::{LOG_TAIL_BYTES, Poll, Reporter, gather, poll_until_finished, split_plan, tail};
use crate::{RunOutcome, StepPhase, StepState, Update};
use couler_optimizer::{Plan, StepOutputs};
use reqwest::Method;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// One task of the run details, as far as the adapter needs it.
#[derive(Debug, Clone)]
pub(super) struct Task {
    pub id: String,
    pub name: String,
    pub parent: Option<String>,
    pub kind: String,
    pub iteration_index: Option<usize>,
    pub state: String,
    pub error: Option<String>,
    pub pod: Option<String>,
    pub failed_pods: Vec<String>,
    pub params: BTreeMap<String, Value>,
    pub artifacts: BTreeMap<String, Vec<String>>,
    pub start: Option<String>,
    pub end: Option<String>,
}

impl Task {
    fn parse(v: &Value) -> Option<Task> {
        let text = |k: &str| v[k].as_str().filter(|s| !s.is_empty()).map(str::to_owned);
        let outputs = &v["outputs"];
        Some(Task {
            id: text("task_id")?,
            name: text("display_name")?,
            parent: text("parent_task_id"),
            kind: text("type").unwrap_or_else(|| "RUNTIME".into()),
            iteration_index: v["type_attributes"]["iteration_index"]
                .as_str()
                .and_then(|i| i.parse().ok())
                .or_else(|| {
                    v["type_attributes"]["iteration_index"]
                        .as_u64()
                        .map(|i| i as usize)
                }),
            state: text("state").unwrap_or_else(|| "PENDING".into()),
            error: v["error"]["message"].as_str().map(str::to_owned),
            pod: text("pod_name"),
            failed_pods: v["executor_detail"]["failed_main_jobs"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            params: outputs["parameters"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| Some((p["parameter_key"].as_str()?.to_owned(), p["value"].clone())))
                .collect(),
            artifacts: outputs["artifacts"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| {
                    let ids = a["artifacts"]
                        .as_array()?
                        .iter()
                        .filter_map(|x| x["artifact_id"].as_str().map(str::to_owned))
                        .collect();
                    Some((a["artifact_key"].as_str()?.to_owned(), ids))
                })
                .collect(),
            start: text("start_time"),
            end: text("end_time"),
        })
    }

    /// The attempt a container task is on: one per pod so far.
    fn attempt(&self) -> u32 {
        (self.failed_pods.len() + usize::from(self.pod.is_some())) as u32
    }
}

/// All tasks of a run.
pub(super) struct Tasks {
    list: Vec<Task>,
    by_id: HashMap<String, usize>,
}

impl Tasks {
    pub fn parse(run: &Value) -> Tasks {
        let list: Vec<Task> = run["run_details"]["task_details"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Task::parse)
            .collect();
        let by_id = list
            .iter()
            .enumerate()
            .map(|(i, t)| (t.id.clone(), i))
            .collect();
        Tasks { list, by_id }
    }

    /// The loop iteration a task runs in, if any.
    fn iteration(&self, task: &Task) -> Option<usize> {
        let mut at = task;
        for _ in 0..64 {
            if let Some(i) = at.iteration_index {
                return Some(i);
            }
            at = &self.list[*self.by_id.get(at.parent.as_deref()?)?];
        }
        None
    }

    /// A step's container task (of instance `index` of a map step).
    pub fn runtime(&self, name: &str, index: Option<usize>) -> Option<&Task> {
        self.list
            .iter()
            .find(|t| t.kind == "RUNTIME" && t.name == name && self.iteration(t) == index)
    }

    fn instances(&self, name: &str) -> Vec<(usize, &Task)> {
        let mut out: Vec<(usize, &Task)> = self
            .list
            .iter()
            .filter(|t| t.kind == "RUNTIME" && t.name == name)
            .filter_map(|t| Some((self.iteration(t)?, t)))
            .collect();
        out.sort_by_key(|(i, _)| *i);
        out
    }

    /// The group task of a step (its loop or condition), outermost first.
    fn group(&self, name: &str, kind: &str) -> Option<&Task> {
        self.list.iter().find(|t| t.name == name && t.kind == kind)
    }
}

struct StepInfo {
    name: String,
    map: bool,
    /// Output parameters the step declares (the rest is its stdout).
    declared: HashSet<String>,
}

/// What was seen of one step (instance) in one poll.
struct Seen {
    name: String,
    phase: StepPhase,
    attempt: u32,
    message: Option<String>,
    task: Option<Task>,
    /// A map step: outputs are its instances'.
    instances: Option<Vec<Task>>,
    time: String,
    /// What a held transient failure really was.
    held: Option<(StepPhase, Option<String>)>,
}

pub(super) struct Poller {
    api: Arc<Api>,
    run_id: String,
    steps: Vec<StepInfo>,
    reused: Vec<StepState>,
    reporter: Reporter,
    /// Outputs of succeeded container tasks, by task id.
    outputs: HashMap<String, StepOutputs>,
    logs: Option<Logs>,
    /// Steps retried on transient failures only, and how often.
    transient: HashMap<String, u32>,
    every: Duration,
}

impl Poller {
    pub fn with_transient(mut self, transient: HashMap<String, u32>) -> Poller {
        self.transient = transient;
        self
    }

    pub fn new(
        api: Arc<Api>,
        run_id: String,
        plan: &Plan,
        resume: Vec<StepState>,
        logs: Option<Logs>,
        config: &KfpConfig,
        tx: mpsc::Sender<Update>,
    ) -> Poller {
        let (run, reused) = split_plan(plan);
        let steps = run
            .into_iter()
            .map(|(_, step)| StepInfo {
                name: step.name.clone(),
                map: step.map.is_some(),
                declared: step
                    .outputs
                    .iter()
                    .flat_map(|o| o.parameters.iter().map(|p| p.name.clone()))
                    .collect(),
            })
            .collect();
        Poller {
            api,
            run_id,
            steps,
            reused,
            reporter: Reporter::new(tx, resume),
            outputs: HashMap::new(),
            logs,
            transient: HashMap::new(),
            every: Duration::from_millis(config.poll_ms.max(20)),
        }
    }

    #[tracing::instrument(skip_all, fields(run_id = %self.run_id))]
    pub async fn run(mut self) {
        let reused = std::mem::take(&mut self.reused);
        let every = self.every;
        poll_until_finished(&mut self, reused, every).await;
    }

    async fn poll(&mut self) -> Result<Option<Update>, super::ApiError> {
        let details = self
            .api
            .json(Method::GET, &format!("runs/{}", self.run_id), &[], None)
            .await?;
        let state = details["state"].as_str().unwrap_or("PENDING").to_owned();
        let ended = terminal_run(&state);
        let tasks = Tasks::parse(&details);
        let mut seen = Vec::new();
        for step in &self.steps {
            let never = || {
                let message = match state.as_str() {
                    "FAILED" => "upstream failed",
                    "CANCELED" => "cancelled",
                    _ => "never started",
                };
                Seen::of(&step.name, None, None).ended(ended, message)
            };
            if step.map {
                let instances = tasks.instances(&step.name);
                for (i, t) in &instances {
                    seen.push(Seen::of(&format!("{}[{i}]", step.name), Some(t), None));
                }
                let group = tasks
                    .group(&step.name, "LOOP")
                    .or_else(|| tasks.group(&step.name, "CONDITION"));
                let all: Vec<Task> = instances.into_iter().map(|(_, t)| t.clone()).collect();
                seen.push(match group {
                    Some(g) => Seen::of(&step.name, Some(g), Some(all)),
                    None => never(),
                });
            } else {
                let task = tasks
                    .runtime(&step.name, None)
                    .or_else(|| tasks.group(&step.name, "CONDITION"));
                seen.push(match task {
                    Some(t) => Seen::of(&step.name, Some(t), None),
                    None => never(),
                });
            }
        }
        // In the order things happened: a step ran after those it waited for.
        seen.sort_by(|a, b| a.time.cmp(&b.time));
        let held = self.hold_transient(&mut seen);
        if held && state == "FAILED" && !seen.iter().any(|s| s.phase == StepPhase::Failed) {
            match self
                .api
                .json(
                    Method::POST,
                    &format!("runs/{}:retry", self.run_id),
                    &[],
                    None,
                )
                .await
            {
                Ok(_) => {
                    tracing::info!("retrying the kfp run after a transient failure");
                    for s in seen
                        .into_iter()
                        .filter(|s| !s.phase.is_terminal() || s.phase == StepPhase::Succeeded)
                    {
                        self.report(s).await;
                    }
                    return Ok(None);
                }
                Err(e) => {
                    tracing::warn!(error = ?e, "cannot retry the kfp run");
                    for s in &mut seen {
                        s.release();
                    }
                }
            }
        }
        let mut failed = Vec::new();
        for s in seen {
            if s.phase == StepPhase::Failed && !s.name.contains('[') {
                failed.push(format!("`{}`", s.name));
            }
            self.report(s).await;
        }
        if !ended {
            return Ok(None);
        }
        let (outcome, message) = match state.as_str() {
            "SUCCEEDED" | "SKIPPED" => (RunOutcome::Succeeded, None),
            "CANCELED" => (RunOutcome::Cancelled, Some("cancelled".to_owned())),
            _ if failed.is_empty() => (RunOutcome::Failed, Some("the KFP run failed".to_owned())),
            _ => (
                RunOutcome::Failed,
                Some(format!("step {} failed", failed.join(", "))),
            ),
        };
        Ok(Some(Update::Finished { outcome, message }))
    }

    /// Sends a step's state if it changed; outputs and logs when terminal.
    async fn report(&mut self, seen: Seen) {
        if !self.reporter.is_news(&seen.name, seen.phase, seen.attempt) {
            return;
        }
        let mut state = StepState {
            name: seen.name.clone(),
            phase: seen.phase,
            attempt: seen.attempt,
            message: seen.message.clone(),
            outputs: StepOutputs::default(),
            metrics: None,
            engine_ref: seen.task.as_ref().map(|t| t.id.clone()),
            logs: None,
        };
        self.reporter.running_first(&state).await;
        let pod = seen.task.as_ref().and_then(|t| t.pod.clone());
        if let (true, Some(pod)) = (seen.phase.is_terminal(), &pod) {
            let log = self.log(pod).await;
            if seen.phase == StepPhase::Failed
                && let (Some(m), Some(last)) = (&state.message, log.as_deref().and_then(last_line))
                && !m.starts_with("timed out")
            {
                state.message = Some(format!("{m}: {last}"));
            }
            state.logs = log.map(|l| tail(l, LOG_TAIL_BYTES));
        }
        if seen.phase == StepPhase::Succeeded {
            state.outputs = match (&seen.instances, &seen.task) {
                (Some(instances), _) => self.aggregate(&seen.name, instances).await,
                (None, Some(task)) => self.outputs_of(&seen.name, task).await,
                (None, None) => StepOutputs::default(),
            };
        }
        self.reporter.send(state).await;
    }

    /// Shows transient failures of steps that retry on them (with tries
    /// left) as still running; whether any was.
    fn hold_transient(&self, seen: &mut [Seen]) -> bool {
        let mut held_steps = HashSet::new();
        for s in seen.iter_mut() {
            let base = s.name.split('[').next().unwrap_or_default().to_owned();
            let Some(&limit) = self.transient.get(&base) else {
                continue;
            };
            let Some(task) = s.task.as_ref().filter(|t| t.kind == "RUNTIME") else {
                continue;
            };
            let message = task.error.clone().unwrap_or_default();
            let kind = crate::failure::classify(&message, signal(&message));
            if s.phase == StepPhase::Failed
                && kind == FailureKind::Transient
                && task.attempt() <= limit
            {
                s.held = Some((s.phase, s.message.take()));
                s.phase = StepPhase::Running;
                s.message = Some(format!("{message}; retrying"));
                held_steps.insert(base);
            }
        }
        // A map step fails when an instance does: held with it.
        for s in seen.iter_mut() {
            if s.instances.is_some() && s.phase == StepPhase::Failed && held_steps.contains(&s.name)
            {
                s.held = Some((s.phase, s.message.take()));
                s.phase = StepPhase::Running;
            }
        }
        !held_steps.is_empty()
    }

    async fn log(&self, pod: &str) -> Option<String> {
        let logs = self.logs.as_ref()?;
        match logs.get(pod).await {
            Ok(text) => Some(text),
            Err(e) => {
                tracing::debug!(error = %e, pod, "no pod log");
                None
            }
        }
    }

    /// A succeeded container task's outputs (once per task).
    async fn outputs_of(&mut self, step: &str, task: &Task) -> StepOutputs {
        if let Some(o) = self.outputs.get(&task.id) {
            return o.clone();
        }
        let base = step.split('[').next().unwrap_or(step);
        let declared = self
            .steps
            .iter()
            .find(|s| s.name == base)
            .map(|s| s.declared.clone())
            .unwrap_or_default();
        let mut outputs = StepOutputs::default();
        for (k, v) in &task.params {
            let text = match v {
                Value::String(s) => s.trim_end().to_owned(),
                other => other.to_string(),
            };
            if declared.contains(k) {
                outputs.parameters.insert(k.clone(), text);
            } else {
                // The compiled wrapper's copy of standard output.
                outputs.result = Some(text.trim().to_owned());
            }
        }
        if outputs.result.is_none()
            && let Some(pod) = &task.pod
        {
            outputs.result = self.log(pod).await.map(|l| l.trim().to_owned());
        }
        for (k, ids) in &task.artifacts {
            let Some(id) = ids.first() else { continue };
            match self.api.artifact(id).await {
                Ok(a) => {
                    outputs.artifacts.insert(k.clone(), a);
                }
                Err(e) => tracing::warn!(error = ?e, artifact = %id, "cannot read an artifact"),
            }
        }
        self.outputs.insert(task.id.clone(), outputs.clone());
        outputs
    }

    /// A map step's outputs: its instances', as JSON lists in index order.
    async fn aggregate(&mut self, step: &str, instances: &[Task]) -> StepOutputs {
        let mut all = Vec::new();
        for (i, t) in instances.iter().enumerate() {
            all.push(self.outputs_of(&format!("{step}[{i}]"), t).await);
        }
        gather(&all)
    }
}

impl Poll for Poller {
    type Error = super::ApiError;

    fn reporter(&mut self) -> &mut Reporter {
        &mut self.reporter
    }

    async fn look(&mut self) -> Result<Option<Update>, super::ApiError> {
        self.poll().await
    }
}

impl Seen {
    fn of(name: &str, task: Option<&Task>, instances: Option<Vec<Task>>) -> Seen {
        let Some(task) = task else {
            return Seen {
                name: name.to_owned(),
                phase: StepPhase::Pending,
                attempt: 0,
                message: None,
                task: None,
                instances,
                time: String::new(),
                held: None,
            };
        };
        let timeout = task
            .error
            .as_deref()
            .is_some_and(|e| e.contains("DeadlineExceeded"));
        let (phase, message) = match task.state.as_str() {
            "RUNNING" | "CANCELING" | "PAUSED" => (StepPhase::Running, None),
            "SUCCEEDED" => (StepPhase::Succeeded, None),
            "SKIPPED" => (StepPhase::Skipped, None),
            "FAILED" if timeout => (
                StepPhase::Failed,
                Some(format!(
                    "timed out: {}",
                    task.error.clone().unwrap_or_default()
                )),
            ),
            "FAILED" => (StepPhase::Failed, task.error.clone()),
            "CANCELED" => (StepPhase::Cancelled, Some("cancelled".to_owned())),
            _ => (StepPhase::Pending, None),
        };
        let attempt = match phase {
            StepPhase::Pending | StepPhase::Skipped => 0,
            _ if instances.is_some() || task.kind != "RUNTIME" => 1,
            _ => task.attempt(),
        };
        let time = if phase.is_terminal() {
            task.end.clone()
        } else {
            task.start.clone()
        };
        Seen {
            name: name.to_owned(),
            phase,
            attempt,
            message,
            task: Some(task.clone()),
            instances,
            time: time.unwrap_or_default(),
            held: None,
        }
    }

    /// Undoes [`Poller::hold_transient`].
    fn release(&mut self) {
        if let Some((phase, message)) = self.held.take() {
            self.phase = phase;
            self.message = message;
        }
    }

    /// A step with no task: cancelled once the run has ended.
    fn ended(mut self, ended: bool, message: &str) -> Seen {
        if ended {
            self.phase = StepPhase::Cancelled;
            self.message = Some(message.to_owned());
            // After everything that did happen.
            self.time = "~".to_owned();
        }
        self
    }
}

/// The signal that ended a container, from KFP's `exit code N` (128 + N).
fn signal(message: &str) -> Option<i32> {
    let (_, rest) = message.split_once("exit code ")?;
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    digits
        .parse::<i32>()
        .ok()
        .filter(|c| *c > 128)
        .map(|c| c - 128)
}

fn last_line(log: &str) -> Option<&str> {
    log.lines().rev().map(str::trim).find(|l| !l.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tasks_map_to_steps_and_instances() {
        let run = json!({"run_details": {"task_details": [
            {"task_id": "1", "display_name": "double", "type": "LOOP", "state": "RUNNING"},
            {"task_id": "2", "display_name": "double-iteration-1", "type": "LOOP_ITERATION",
             "parent_task_id": "1", "type_attributes": {"iteration_index": "1"}, "state": "RUNNING"},
            {"task_id": "3", "display_name": "double", "type": "RUNTIME", "parent_task_id": "2",
             "state": "FAILED", "pod_name": "p2", "executor_detail": {"failed_main_jobs": ["p1"]},
             "error": {"message": "DeadlineExceeded: too long"}},
            {"task_id": "4", "display_name": "heads", "type": "CONDITION", "state": "SKIPPED"},
        ]}});
        let tasks = Tasks::parse(&run);
        let t = tasks.runtime("double", Some(1)).unwrap();
        assert_eq!(t.attempt(), 2);
        assert!(tasks.runtime("double", None).is_none());
        let seen = Seen::of("double[1]", Some(t), None);
        assert_eq!((seen.phase, seen.attempt), (StepPhase::Failed, 2));
        assert!(seen.message.unwrap().starts_with("timed out"));
        let heads = Seen::of("heads", tasks.group("heads", "CONDITION"), None);
        assert_eq!((heads.phase, heads.attempt), (StepPhase::Skipped, 0));
        let never = Seen::of("x", None, None).ended(true, "upstream failed");
        assert_eq!(never.phase, StepPhase::Cancelled);
    }

    #[test]
    fn last_lines_and_signals() {
        assert_eq!(last_line("a\nb\n\n"), Some("b"));
        assert_eq!(signal("Error (exit code 137)"), Some(9));
        assert_eq!(signal("Error (exit code 3)"), None);
    }
}
