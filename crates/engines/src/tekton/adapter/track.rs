//! The tracker behind [`super::TektonAdapter::start`]: watches one
//! PipelineRun and its TaskRuns and turns them into [`Update`]s (the
//! mapping is in the adapter's module docs).

use super::{Kind, Runs, STEPS_ANNOTATION, TektonConfig, finished, pod_log, whole};
use crate::track::{Reporter, gather, map_state, split_plan, tail};
use crate::{RunOutcome, StepMetrics, StepPhase, StepState, Update};
use couler_ir::Limits;
use couler_optimizer::{Plan, StepOutputs};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, ListParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use tokio::sync::mpsc;

/// A running IR step and where its state lives.
#[derive(Debug, Clone)]
struct StepInfo {
    name: String,
    /// The pipeline task that runs it.
    task: String,
    /// Runs as one step among several of a finally task.
    merged: bool,
    mapped: bool,
    /// The result holding its standard output, if the compiler made one.
    stdout: Option<String>,
    /// Output parameter names.
    parameters: Vec<String>,
    /// Steps it waits for, transitively.
    upstream: BTreeSet<String>,
}

/// What the tracker decided about one step (instance).
struct Seen<'a> {
    phase: StepPhase,
    attempt: u32,
    message: Option<String>,
    tr: Option<&'a Value>,
}

/// Watches one PipelineRun and turns it into updates.
pub(super) struct Tracker {
    client: kube::Client,
    ns: String,
    name: String,
    steps: Vec<StepInfo>,
    reused: Vec<StepState>,
    reporter: Reporter,
    /// Outputs of succeeded steps (instances), read once.
    outputs: HashMap<String, StepOutputs>,
    tail: usize,
    watch_timeout: u32,
}

impl Tracker {
    #[allow(clippy::too_many_arguments)]
    pub(super) fn new(
        client: kube::Client,
        ns: &str,
        name: &str,
        plan: &Plan,
        pipeline: &Value,
        resume: Vec<StepState>,
        config: &TektonConfig,
        tx: mpsc::Sender<Update>,
    ) -> Tracker {
        let ctx = crate::tekton::Ctx::new(plan);
        let mut merged: HashMap<String, String> = HashMap::new();
        for t in pipeline["spec"]["finally"].as_array().into_iter().flatten() {
            let task = t["name"].as_str().unwrap_or_default();
            if let Some(members) =
                t["taskSpec"]["metadata"]["annotations"][STEPS_ANNOTATION].as_str()
            {
                for m in members.split(',') {
                    merged.insert(m.to_owned(), task.to_owned());
                }
            }
        }
        let upstream = upstream_steps(plan);
        let (run, reused) = split_plan(plan);
        let steps = run
            .into_iter()
            .map(|(i, step)| StepInfo {
                name: step.name.clone(),
                task: merged
                    .get(&step.name)
                    .cloned()
                    .unwrap_or_else(|| step.name.clone()),
                merged: merged.contains_key(&step.name),
                mapped: step.map.is_some(),
                stdout: ctx.stdout[i].clone(),
                parameters: step
                    .outputs
                    .iter()
                    .flat_map(|o| &o.parameters)
                    .map(|p| p.name.clone())
                    .collect(),
                upstream: upstream.get(&step.name).cloned().unwrap_or_default(),
            })
            .collect();
        Tracker {
            client,
            ns: ns.to_owned(),
            name: name.to_owned(),
            steps,
            reused,
            reporter: Reporter::new(tx, resume),
            outputs: HashMap::new(),
            tail: config.log_tail_bytes,
            watch_timeout: config.watch_timeout_secs.max(1),
        }
    }

    fn api(&self, kind: Kind) -> Api<DynamicObject> {
        Api::namespaced_with(self.client.clone(), &self.ns, &kind.resource())
    }

    fn selector(&self) -> String {
        format!("tekton.dev/pipelineRun={}", self.name)
    }

    #[tracing::instrument(skip_all, fields(namespace = %self.ns, pipelinerun = %self.name))]
    pub(super) async fn run(mut self) {
        let reused = std::mem::take(&mut self.reused);
        if !self.reporter.send_reused(reused).await {
            return;
        }
        enum Watched {
            Run(watcher::Event<DynamicObject>),
            Task(watcher::Event<DynamicObject>),
        }
        let runs = watcher(
            self.api(Kind::PipelineRun),
            watcher::Config::default()
                .timeout(self.watch_timeout)
                .fields(&format!("metadata.name={}", self.name)),
        )
        .default_backoff()
        .map(|e| e.map(Watched::Run));
        let tasks = watcher(
            self.api(Kind::TaskRun),
            watcher::Config::default()
                .timeout(self.watch_timeout)
                .labels(&self.selector()),
        )
        .default_backoff()
        .map(|e| e.map(Watched::Task));
        let mut events = std::pin::pin!(futures::stream::select(runs, tasks));
        let mut pr: Option<Value> = None;
        let mut trs: BTreeMap<String, Value> = BTreeMap::new();
        loop {
            let event = tokio::select! {
                _ = self.reporter.closed() => return,
                event = events.next() => event,
            };
            let Some(event) = event else { return };
            match event {
                Ok(Watched::Run(watcher::Event::Apply(o) | watcher::Event::InitApply(o))) => {
                    pr = Some(whole(o))
                }
                Ok(Watched::Run(watcher::Event::Delete(_))) => {
                    // Deleted behind Couler's back: not a cancel anyone
                    // asked for (the Argo adapter says the same).
                    let message = format!("the PipelineRun {} was deleted", self.name);
                    let finished = Update::Finished {
                        outcome: RunOutcome::Failed,
                        message: Some(message),
                    };
                    self.reporter.send_raw(finished).await;
                    return;
                }
                Ok(Watched::Task(watcher::Event::Apply(o) | watcher::Event::InitApply(o))) => {
                    trs.insert(o.metadata.name.clone().unwrap_or_default(), whole(o));
                }
                Ok(Watched::Task(watcher::Event::Delete(o))) => {
                    trs.remove(o.metadata.name.as_deref().unwrap_or_default());
                }
                Ok(_) => continue,
                Err(e) => {
                    // The watcher backs off and re-lists; keep going.
                    tracing::warn!(error = %e, "the watch failed");
                    continue;
                }
            }
            let Some(current) = &pr else { continue };
            let ended = finished(current).is_some();
            let all = if ended {
                // The final word: list afresh, the TaskRun watch may lag.
                // Retried (about 3 s in all); if the API server stays away,
                // what the watch saw is the best there is: waiting for the
                // next event could take a whole watch timeout.
                let api = self.api(Kind::TaskRun);
                let params = ListParams::default().labels(&self.selector());
                let listed = crate::rest::retrying(|| api.list(&params), |_| true).await;
                match listed {
                    Ok(list) => list.items.into_iter().map(whole).collect(),
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot list taskruns; using the watched ones");
                        trs.values().cloned().collect()
                    }
                }
            } else {
                trs.values().cloned().collect()
            };
            if let Some(done) = self.observe(current, all).await {
                self.reporter.send_raw(done).await;
                return;
            }
        }
    }

    /// Reports what changed; `Finished` once the PipelineRun is done.
    async fn observe(&mut self, pr: &Value, trs: Vec<Value>) -> Option<Update> {
        let runs = Runs::new(pr, trs);
        let ended = finished(pr);
        let skipped: HashMap<&str, &str> = pr["status"]["skippedTasks"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| {
                Some((
                    s["name"].as_str()?,
                    s["reason"].as_str().unwrap_or_default(),
                ))
            })
            .collect();
        let mut phases: HashMap<String, StepPhase> = HashMap::new();
        for info in self.steps.clone() {
            let mine = runs.of(&info.task);
            let seen = if info.merged {
                member_seen(&info.name, mine.first().copied(), ended.is_some())
            } else if info.mapped && !mine.is_empty() {
                let mut instances = Vec::new();
                for (i, tr) in mine.iter().enumerate() {
                    let one = taskrun_seen(tr);
                    let outputs = self
                        .report(&format!("{}[{i}]", info.name), &info, &one)
                        .await;
                    instances.push((one.phase, outputs));
                }
                let state = map_state(instances.iter().map(|(p, _)| *p).enumerate());
                if state.phase == StepPhase::Succeeded {
                    let all: Vec<StepOutputs> = instances
                        .into_iter()
                        .map(|(_, o)| o.unwrap_or_default())
                        .collect();
                    self.send_aggregate(&info, state.phase, gather(&all)).await;
                    phases.insert(info.name.clone(), state.phase);
                    continue;
                }
                Seen {
                    phase: state.phase,
                    attempt: state.attempt,
                    message: state.message,
                    tr: None,
                }
            } else if let Some(tr) = mine.first() {
                taskrun_seen(tr)
            } else if let Some(reason) = skipped.get(info.task.as_str()) {
                let (phase, message) = skip_phase(reason, &info, &phases);
                Seen {
                    phase,
                    attempt: 0,
                    message: Some(message),
                    tr: None,
                }
            } else if ended.is_some() {
                Seen {
                    phase: StepPhase::Cancelled,
                    attempt: 0,
                    message: Some("never started".into()),
                    tr: None,
                }
            } else {
                Seen {
                    phase: StepPhase::Pending,
                    attempt: 0,
                    message: None,
                    tr: None,
                }
            };
            phases.insert(info.name.clone(), seen.phase);
            self.report(&info.name, &info, &seen).await;
        }
        let (succeeded, reason) = ended?;
        let condition = pr["status"]["conditions"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["type"] == "Succeeded"))
            .and_then(|c| c["message"].as_str())
            .unwrap_or_default()
            .to_owned();
        let failed: Vec<String> = self
            .steps
            .iter()
            .filter(|s| phases.get(&s.name) == Some(&StepPhase::Failed))
            .map(|s| format!("`{}`", s.name))
            .collect();
        let (outcome, message) = if succeeded {
            (RunOutcome::Succeeded, None)
        } else if reason == "Cancelled" {
            (RunOutcome::Cancelled, Some("cancelled".to_owned()))
        } else if failed.is_empty() {
            (
                RunOutcome::Failed,
                Some(format!("the PipelineRun failed ({reason}): {condition}")),
            )
        } else {
            (
                RunOutcome::Failed,
                Some(format!(
                    "step {} failed ({reason}: {condition})",
                    failed.join(", ")
                )),
            )
        };
        Some(Update::Finished { outcome, message })
    }

    /// Sends a step's state if it changed; returns its outputs when it
    /// succeeded.
    async fn report(
        &mut self,
        name: &str,
        info: &StepInfo,
        seen: &Seen<'_>,
    ) -> Option<StepOutputs> {
        if seen.phase == StepPhase::Pending {
            return None;
        }
        let last = self.reporter.last(name);
        if !self.reporter.is_news(name, seen.phase, seen.attempt) {
            // Already said; a map step still needs its instances' outputs.
            let tr = seen.tr.filter(|_| seen.phase == StepPhase::Succeeded)?;
            if let Some(o) = self.outputs.get(name) {
                return Some(o.clone());
            }
            let o = self.outputs(info, tr).await;
            self.outputs.insert(name.to_owned(), o.clone());
            return Some(o);
        }
        let mut state = StepState {
            name: name.to_owned(),
            phase: seen.phase,
            attempt: seen.attempt,
            message: seen.message.clone(),
            outputs: StepOutputs::default(),
            metrics: None,
            engine_ref: seen
                .tr
                .and_then(|t| t["metadata"]["name"].as_str())
                .map(str::to_owned),
            logs: None,
        };
        if seen.tr.is_some() && seen.attempt > 0 {
            // Attempts that started and ended unseen still ran.
            let first_unseen = match last {
                Some((StepPhase::Running, a)) => a + 1,
                Some((_, a)) => a.max(1),
                None => 1,
            };
            let upto = if seen.phase == StepPhase::Running {
                seen.attempt
            } else {
                seen.attempt + 1
            };
            for attempt in first_unseen..upto {
                let before = StepState {
                    phase: StepPhase::Running,
                    attempt,
                    message: None,
                    ..state.clone()
                };
                self.reporter.send_raw(Update::Step(before)).await;
            }
        }
        let mut outputs = None;
        if let Some(tr) = seen.tr
            && seen.phase.is_terminal()
        {
            let container = if info.merged {
                name.to_owned()
            } else {
                main_step(tr).unwrap_or_else(|| info.name.clone())
            };
            let log = self.log(tr, &container).await;
            state.metrics = Some(StepMetrics {
                wall_ms: wall_ms(tr).unwrap_or_default(),
                exit_code: step_exit(tr, &container),
                ..StepMetrics::default()
            });
            if seen.phase == StepPhase::Succeeded {
                let mut o = self.outputs(info, tr).await;
                if info.merged {
                    o.result = o
                        .result
                        .or_else(|| log.as_deref().map(|l| l.trim().to_owned()));
                }
                state.outputs = o.clone();
                self.outputs.insert(name.to_owned(), o.clone());
                outputs = Some(o);
            }
            state.logs = log.map(|l| tail(l, self.tail));
        }
        self.reporter.send(state).await;
        outputs
    }

    async fn send_aggregate(&mut self, info: &StepInfo, phase: StepPhase, outputs: StepOutputs) {
        if self.reporter.is_final(&info.name) {
            return;
        }
        let state = StepState {
            name: info.name.clone(),
            phase,
            attempt: 1,
            message: None,
            outputs,
            metrics: None,
            engine_ref: None,
            logs: None,
        };
        self.reporter.send(state).await;
    }

    /// A succeeded TaskRun's outputs.
    async fn outputs(&self, info: &StepInfo, tr: &Value) -> StepOutputs {
        let results: HashMap<&str, String> = tr["status"]["results"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| {
                let value = match &r["value"] {
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((r["name"].as_str()?, value))
            })
            .collect();
        let mut outputs = StepOutputs::default();
        for p in &info.parameters {
            if let Some(v) = results.get(p.as_str()) {
                outputs.parameters.insert(p.clone(), v.clone());
            }
        }
        outputs.result = match &info.stdout {
            Some(r) => results.get(r.as_str()).cloned(),
            None if info.merged => None,
            None => {
                let step = main_step(tr).unwrap_or_else(|| info.name.clone());
                self.log(tr, &step).await.map(|l| l.trim().to_owned())
            }
        };
        outputs
    }

    async fn log(&self, tr: &Value, step: &str) -> Option<String> {
        let pod = tr["status"]["podName"].as_str()?;
        let pods = Api::<Pod>::namespaced(self.client.clone(), &self.ns);
        match pod_log(&pods, pod, step).await {
            Ok(log) => Some(log),
            Err(e) => {
                tracing::debug!(pod, error = %e, "no pod log");
                None
            }
        }
    }
}

/// The task's last step: the one that runs the IR step (a retry backoff
/// step may come first).
fn main_step(tr: &Value) -> Option<String> {
    let steps = tr["status"]["taskSpec"]["steps"]
        .as_array()
        .or(tr["spec"]["taskSpec"]["steps"].as_array())?;
    steps.last()?["name"].as_str().map(str::to_owned)
}

/// The last attempt's duration, from its start and completion times.
fn wall_ms(tr: &Value) -> Option<u64> {
    let time = |field: &str| -> Option<k8s_openapi::jiff::Timestamp> {
        tr["status"][field].as_str()?.parse().ok()
    };
    let span = time("completionTime")?.duration_since(time("startTime")?);
    u64::try_from(span.as_millis()).ok()
}

fn step_exit(tr: &Value, step: &str) -> Option<i32> {
    tr["status"]["steps"]
        .as_array()?
        .iter()
        .find(|s| s["name"] == step)?["terminated"]["exitCode"]
        .as_i64()
        .map(|c| c as i32)
}

/// One TaskRun's state in Couler's terms.
fn taskrun_seen(tr: &Value) -> Seen<'_> {
    let status = &tr["status"];
    let retries = status["retriesStatus"].as_array().map_or(0, Vec::len) as u32;
    let started = status["podName"].is_string();
    let (phase, message) = match finished(tr) {
        None if started => (StepPhase::Running, None),
        None => (StepPhase::Pending, None),
        Some((true, _)) => (StepPhase::Succeeded, None),
        Some((false, reason)) => {
            let text = status["conditions"]
                .as_array()
                .and_then(|c| c.iter().find(|c| c["type"] == "Succeeded"))
                .and_then(|c| c["message"].as_str())
                .unwrap_or_default()
                .to_owned();
            match reason.as_str() {
                "TaskRunCancelled" => (StepPhase::Cancelled, Some(format!("cancelled: {text}"))),
                "TaskRunTimeout" => (StepPhase::Failed, Some(format!("timed out: {text}"))),
                _ => (StepPhase::Failed, Some(text)),
            }
        }
    };
    let attempt = if phase == StepPhase::Pending {
        0
    } else {
        retries + 1
    };
    Seen {
        phase,
        attempt,
        message,
        tr: Some(tr),
    }
}

/// One exit handler running as a step of a merged finally task.
fn member_seen<'a>(step: &str, tr: Option<&'a Value>, ended: bool) -> Seen<'a> {
    let Some(tr) = tr else {
        let phase = if ended {
            StepPhase::Cancelled
        } else {
            StepPhase::Pending
        };
        return Seen {
            phase,
            attempt: 0,
            message: ended.then(|| "never started".into()),
            tr: None,
        };
    };
    let whole = taskrun_seen(tr);
    let state = tr["status"]["steps"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["name"] == step));
    let (phase, message) = match state {
        Some(s) if s["terminationReason"] == "Skipped" => {
            (StepPhase::Cancelled, Some("upstream failed".to_owned()))
        }
        Some(s) => match s["terminated"]["exitCode"].as_i64() {
            Some(0) => (StepPhase::Succeeded, None),
            Some(code) if whole.phase == StepPhase::Cancelled => (
                StepPhase::Cancelled,
                Some(format!("cancelled (exit code {code})")),
            ),
            Some(code) => (StepPhase::Failed, Some(format!("exit code {code}"))),
            None => (StepPhase::Running, None),
        },
        None if whole.phase.is_terminal() => {
            (StepPhase::Cancelled, Some("never started".to_owned()))
        }
        None => (whole.phase, None),
    };
    Seen {
        phase,
        attempt: u32::from(phase != StepPhase::Pending),
        message,
        tr: Some(tr),
    }
}

/// A skipped task's state: Tekton skips for conditions and for stopping.
fn skip_phase(
    reason: &str,
    info: &StepInfo,
    phases: &HashMap<String, StepPhase>,
) -> (StepPhase, String) {
    match reason {
        "When Expressions evaluated to false"
        | "Parent Tasks were skipped"
        | "Results were missing"
        | "Matrix Parameters have an empty array" => (StepPhase::Skipped, reason.to_owned()),
        "PipelineRun was stopping" => {
            let upstream_failed = info.upstream.iter().any(|u| {
                matches!(
                    phases.get(u),
                    Some(StepPhase::Failed | StepPhase::Cancelled)
                )
            });
            let message = if upstream_failed {
                "upstream failed"
            } else {
                "not started: another step failed"
            };
            (StepPhase::Cancelled, message.to_owned())
        }
        r if r.contains("timeout") => (StepPhase::Cancelled, format!("not started: {r}")),
        _ => (StepPhase::Cancelled, "cancelled".to_owned()),
    }
}

/// For each main step, the steps it waits for, transitively.
fn upstream_steps(plan: &Plan) -> HashMap<String, BTreeSet<String>> {
    let mut out: HashMap<String, BTreeSet<String>> = HashMap::new();
    let Ok(dag) = couler_ir::validate(&plan.workflow, &Limits::default()) else {
        return out;
    };
    let names: Vec<&str> = plan
        .workflow
        .steps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    for &node in dag.steps.order() {
        let mut set = BTreeSet::new();
        for &u in dag.steps.upstream(node) {
            let up = names[u as usize];
            set.insert(up.to_owned());
            set.extend(out.get(up).cloned().unwrap_or_default());
        }
        out.insert(names[node as usize].to_owned(), set);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn taskruns_map_to_phases_and_attempts() {
        let tr = json!({"status": {
            "podName": "x-pod-retry1",
            "retriesStatus": [{"podName": "x-pod"}],
            "conditions": [{"type": "Succeeded", "status": "False", "reason": "TaskRunTimeout", "message": "TaskRun \"x\" failed to finish within \"1s\""}],
        }});
        let seen = taskrun_seen(&tr);
        assert_eq!((seen.phase, seen.attempt), (StepPhase::Failed, 2));
        assert!(seen.message.unwrap().starts_with("timed out"));
        let pending = json!({"status": {}});
        assert_eq!(taskrun_seen(&pending).phase, StepPhase::Pending);
    }

    #[test]
    fn skips_are_skipped_or_cancelled() {
        let info = StepInfo {
            name: "after".into(),
            task: "after".into(),
            merged: false,
            mapped: false,
            stdout: None,
            parameters: Vec::new(),
            upstream: BTreeSet::from(["bad".to_owned()]),
        };
        let phases = HashMap::from([("bad".to_owned(), StepPhase::Failed)]);
        assert_eq!(
            skip_phase("PipelineRun was stopping", &info, &phases),
            (StepPhase::Cancelled, "upstream failed".into())
        );
        assert_eq!(
            skip_phase("When Expressions evaluated to false", &info, &phases).0,
            StepPhase::Skipped
        );
        assert_eq!(
            skip_phase("PipelineRun was gracefully cancelled", &info, &phases).0,
            StepPhase::Cancelled
        );
    }
}
