//! Following one Workflow: its `status.nodes` in Couler's terms (see the
//! mapping in the [module docs](super)).

use super::{ArgoConfig, Tracked, pod_name};
use crate::track::{Reporter, gather, map_state, tail};
use crate::{RunOutcome, StepMetrics, StepPhase, StepState, Update};
use couler_objects::Digest;
use couler_optimizer::{ArtifactRef, StepOutputs};
use futures::StreamExt;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, LogParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;

/// `status.nodes`, by id and by name.
pub(super) struct Nodes<'a> {
    by_id: HashMap<&'a str, &'a Value>,
    by_name: HashMap<&'a str, &'a Value>,
}

impl<'a> Nodes<'a> {
    pub(super) fn of(workflow: &'a Value) -> Nodes<'a> {
        let mut nodes = Nodes {
            by_id: HashMap::new(),
            by_name: HashMap::new(),
        };
        for (id, node) in workflow["status"]["nodes"]
            .as_object()
            .into_iter()
            .flatten()
        {
            nodes.by_id.insert(id.as_str(), node);
            if let Some(name) = node["name"].as_str() {
                nodes.by_name.insert(name, node);
            }
        }
        nodes
    }

    /// A step's node: the wrapped task's, else the task's.
    fn step(&self, t: &Tracked) -> Option<&'a Value> {
        t.inner
            .as_deref()
            .and_then(|n| self.by_name.get(n))
            .or_else(|| self.by_name.get(t.node.as_str()))
            .copied()
    }

    /// A task group's instances, by index.
    fn instances(&self, group: &Value) -> Vec<(usize, &'a Value)> {
        let prefix = format!("{}(", group["name"].as_str().unwrap_or_default());
        let mut found: Vec<(usize, &Value)> = self
            .by_name
            .iter()
            .filter_map(|(name, node)| {
                let (index, _) = name.strip_prefix(&prefix)?.split_once(':')?;
                Some((index.parse().ok()?, *node))
            })
            .collect();
        found.sort_by_key(|(i, _)| *i);
        found
    }

    /// The pod nodes that ran a node: its attempts for a retry node.
    fn attempts(&self, node: &'a Value) -> Vec<&'a Value> {
        match node["type"].as_str() {
            Some("Pod") => vec![node],
            Some("Retry") => {
                let mut attempts: Vec<&Value> = node["children"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| self.by_id.get(c.as_str()?).copied())
                    .filter(|c| c["type"] == "Pod")
                    .collect();
                attempts.sort_by_key(|c| attempt_index(c["name"].as_str().unwrap_or_default()));
                attempts
            }
            _ => Vec::new(),
        }
    }

    /// The attempts of a step (instance) named by the scheduler, found
    /// by task names (the step names, for all but digit-led and very
    /// long ones): `logs` has no plan to map names with.
    pub(super) fn attempts_of_step(&self, step: &str) -> Option<Vec<&'a Value>> {
        let (base, index) = crate::track::instance(step);
        let task = |n: &&&Value| {
            let d = n["displayName"].as_str().unwrap_or_default();
            d == base || d.strip_prefix('s') == Some(base)
        };
        let mut candidates: Vec<&Value> = self.by_name.values().filter(task).copied().collect();
        candidates.sort_by_key(|n| n["name"].as_str().map_or(0, str::len));
        // The innermost task of that name (a wrapped step's).
        let node = candidates.into_iter().rev().find(|n| n["type"] != "DAG")?;
        let node = match (index, node["type"].as_str()) {
            (Some(i), Some("TaskGroup")) => {
                self.instances(node).into_iter().find(|(j, _)| *j == i)?.1
            }
            (None, _) => node,
            _ => return None,
        };
        let attempts = self.attempts(node);
        (!attempts.is_empty()).then_some(attempts)
    }
}

/// `name(3)` → 3.
fn attempt_index(name: &str) -> u32 {
    name.rsplit_once('(')
        .and_then(|(_, n)| n.strip_suffix(')')?.parse().ok())
        .unwrap_or(0)
}

/// What the tracker made of one step (instance) in one look.
#[derive(Debug, Clone)]
struct Seen {
    phase: StepPhase,
    attempt: u32,
    message: Option<String>,
    node_id: Option<String>,
    outputs: StepOutputs,
    metrics: Option<StepMetrics>,
    /// The pod of the last attempt, for logs.
    pod: Option<String>,
}

impl Seen {
    fn bare(phase: StepPhase, message: Option<&str>) -> Seen {
        Seen {
            phase,
            attempt: 0,
            message: message.map(str::to_owned),
            node_id: None,
            outputs: StepOutputs::default(),
            metrics: None,
            pod: None,
        }
    }
}

/// Watches one Workflow and turns its nodes into updates.
pub(super) struct Tracker {
    workflow: String,
    steps: Vec<Tracked>,
    reused: Vec<StepState>,
    reporter: Reporter,
    pods: Api<Pod>,
    config: Arc<ArgoConfig>,
    /// Each output artifact's digest by location, read once.
    digests: HashMap<String, Option<Digest>>,
}

/// How many artifacts are read at once.
const CONCURRENT_DIGESTS: usize = 4;
/// The most one artifact is read for; one that takes longer is not
/// reported (nor cached).
const DIGEST_LIMIT: std::time::Duration = std::time::Duration::from_secs(600);

impl Tracker {
    pub(super) fn new(
        workflow: String,
        steps: Vec<Tracked>,
        reused: Vec<StepState>,
        resume: Vec<StepState>,
        pods: Api<Pod>,
        config: Arc<ArgoConfig>,
        tx: mpsc::Sender<Update>,
    ) -> Tracker {
        Tracker {
            workflow,
            steps,
            reused,
            reporter: Reporter::new(tx, resume),
            pods,
            config,
            digests: HashMap::new(),
        }
    }

    #[tracing::instrument(skip_all, fields(workflow = %self.workflow))]
    pub(super) async fn run(mut self, api: Api<DynamicObject>) {
        let reused = std::mem::take(&mut self.reused);
        if !self.reporter.send_reused(reused).await {
            return;
        }
        let config = watcher::Config::default().fields(&format!("metadata.name={}", self.workflow));
        let events = watcher(api, config).default_backoff();
        tokio::pin!(events);
        loop {
            let event = tokio::select! {
                _ = self.reporter.closed() => return,
                event = events.next() => event,
            };
            match event {
                Some(Ok(watcher::Event::Apply(wf) | watcher::Event::InitApply(wf))) => {
                    if let Some(finished) = self.look(&wf.data).await {
                        self.reporter.send_raw(finished).await;
                        return;
                    }
                }
                Some(Ok(watcher::Event::Delete(_))) => {
                    let finished = Update::Finished {
                        outcome: RunOutcome::Failed,
                        message: Some("the Argo Workflow was deleted".into()),
                    };
                    self.reporter.send_raw(finished).await;
                    return;
                }
                Some(Ok(_)) => {}
                // The watcher re-lists and backs off by itself.
                Some(Err(e)) => tracing::warn!(error = %e, "watching the workflow failed"),
                None => return,
            }
        }
    }

    /// One look at the Workflow: sends what changed; `Finished` when it ended.
    async fn look(&mut self, wf: &Value) -> Option<Update> {
        self.digest_artifacts(&wf["status"]["nodes"]).await;
        let nodes = Nodes::of(wf);
        let status = &wf["status"];
        let phase = status["phase"].as_str().unwrap_or_default();
        let ended =
            matches!(phase, "Succeeded" | "Failed" | "Error") && !status["finishedAt"].is_null();
        let cancelled = wf["spec"]["shutdown"].is_string();
        let mut failed = Vec::new();
        for step in self.steps.clone() {
            let seen = match nodes.step(&step) {
                Some(group) if group["type"] == "TaskGroup" => {
                    let mut all = Vec::new();
                    for (i, node) in nodes.instances(group) {
                        let one = self.seen(&nodes, node, &step, cancelled);
                        self.report(&format!("{}[{i}]", step.name), one.clone())
                            .await;
                        all.push(one);
                    }
                    if all.is_empty() {
                        self.seen(&nodes, group, &step, cancelled)
                    } else if !node_ended(group) {
                        // More instances may come (a `parallelism` bound
                        // creates them as others end).
                        let mut running = Seen::bare(StepPhase::Running, None);
                        running.attempt = 1;
                        running
                    } else {
                        aggregate(&all)
                    }
                }
                Some(node) => self.seen(&nodes, node, &step, cancelled),
                None if ended => {
                    let why = if self.blocked(&nodes, &step) {
                        "upstream failed"
                    } else if cancelled {
                        "cancelled"
                    } else {
                        "never started"
                    };
                    Seen::bare(StepPhase::Cancelled, Some(why))
                }
                None => continue,
            };
            if seen.phase == StepPhase::Failed {
                failed.push(format!("`{}`", step.name));
            }
            self.report(&step.name, seen).await;
        }
        if !ended {
            return None;
        }
        let (outcome, message) = if cancelled {
            (RunOutcome::Cancelled, Some("cancelled".to_owned()))
        } else if phase == "Succeeded" {
            (RunOutcome::Succeeded, None)
        } else if failed.is_empty() {
            let m = status["message"]
                .as_str()
                .unwrap_or("the Argo Workflow failed");
            (RunOutcome::Failed, Some(m.to_owned()))
        } else {
            (
                RunOutcome::Failed,
                Some(format!("step {} failed", failed.join(", "))),
            )
        };
        Some(Update::Finished { outcome, message })
    }

    /// Digests the output artifacts of succeeded nodes not read yet.
    async fn digest_artifacts(&mut self, nodes: &Value) {
        let mut new: Vec<String> = nodes
            .as_object()
            .into_iter()
            .flat_map(|nodes| nodes.values())
            .filter(|node| node["phase"] == "Succeeded")
            .flat_map(|node| {
                node["outputs"]["artifacts"]
                    .as_array()
                    .into_iter()
                    .flatten()
            })
            .filter_map(|a| a["s3"]["key"].as_str())
            .map(|key| self.config.location(key))
            .filter(|location| !self.digests.contains_key(location))
            .collect();
        new.sort();
        new.dedup();
        let stores = &self.config.artifact_stores;
        // Built before they are streamed, so that the tracker's future
        // stays sendable.
        let reads: Vec<_> = new
            .into_iter()
            .map(|location| async move {
                let read = tokio::time::timeout(DIGEST_LIMIT, stores.digest(&location)).await;
                let digest = match read {
                    Ok(Ok(digest)) => digest,
                    Ok(Err(e)) => {
                        tracing::warn!(error = %e, "cannot read an output artifact");
                        None
                    }
                    Err(_) => {
                        tracing::warn!(location, "reading an output artifact took too long");
                        None
                    }
                };
                (location, digest)
            })
            .collect();
        let read: Vec<_> = futures::stream::iter(reads)
            .buffer_unordered(CONCURRENT_DIGESTS)
            .collect()
            .await;
        self.digests.extend(read);
    }

    /// Whether a failed (or errored) upstream step kept `step` from running.
    fn blocked(&self, nodes: &Nodes<'_>, step: &Tracked) -> bool {
        step.upstream.iter().any(|u| {
            let Some(up) = self.steps.iter().find(|s| s.name == *u) else {
                return false;
            };
            match nodes.step(up).and_then(|n| n["phase"].as_str()) {
                Some("Failed" | "Error") => true,
                Some("Omitted") | None => self.blocked(nodes, up),
                _ => false,
            }
        })
    }

    /// One node (a task's, or an instance's) in Couler's terms.
    fn seen(&self, nodes: &Nodes<'_>, node: &Value, step: &Tracked, cancelled: bool) -> Seen {
        let attempts = nodes.attempts(node);
        let last = attempts.last().copied().unwrap_or(node);
        let message = last["message"]
            .as_str()
            .or(node["message"].as_str())
            .map(str::to_owned);
        let (phase, message) = match node["phase"].as_str().unwrap_or_default() {
            "Running" if last["phase"] == "Failed" || last["phase"] == "Error" => (
                StepPhase::Running,
                message.map(|m| format!("attempt {} failed: {m}; retrying", attempts.len())),
            ),
            "Running" => (StepPhase::Running, None),
            "Succeeded" => (StepPhase::Succeeded, None),
            "Skipped" => (StepPhase::Skipped, message),
            "Omitted" if self.blocked(nodes, step) => {
                (StepPhase::Cancelled, Some("upstream failed".to_owned()))
            }
            "Omitted" => (StepPhase::Skipped, message),
            "Failed" | "Error"
                if cancelled && message.as_deref().is_some_and(|m| m.contains("shutdown")) =>
            {
                (StepPhase::Cancelled, Some("cancelled".to_owned()))
            }
            "Failed" | "Error" => {
                let m = message.unwrap_or_else(|| "failed".into());
                let m = if m.contains("deadline") {
                    format!("timed out: {m}")
                } else {
                    m
                };
                (StepPhase::Failed, Some(m))
            }
            _ => (StepPhase::Pending, None),
        };
        let ran = !matches!(phase, StepPhase::Pending | StepPhase::Skipped) && !attempts.is_empty();
        let outputs = &last["outputs"];
        let mut seen = Seen {
            phase,
            attempt: if ran { attempts.len() as u32 } else { 0 },
            message,
            node_id: node["id"].as_str().map(str::to_owned),
            outputs: StepOutputs::default(),
            metrics: None,
            pod: (last["type"] == "Pod").then(|| pod_name(&self.workflow, last)),
        };
        if phase.is_terminal() && ran {
            seen.metrics = Some(StepMetrics {
                wall_ms: wall_ms(last).unwrap_or_default(),
                exit_code: outputs["exitCode"].as_str().and_then(|c| c.parse().ok()),
                ..Default::default()
            });
        }
        if phase == StepPhase::Succeeded {
            let outputs = if attempts.is_empty() {
                &node["outputs"]
            } else {
                outputs
            };
            seen.outputs = self.outputs(outputs);
        }
        seen
    }

    fn outputs(&self, outputs: &Value) -> StepOutputs {
        let mut out = StepOutputs {
            result: outputs["result"].as_str().map(str::to_owned),
            ..Default::default()
        };
        for p in outputs["parameters"].as_array().into_iter().flatten() {
            if let Some(name) = p["name"].as_str() {
                let value = p["value"].as_str().unwrap_or_default();
                out.parameters.insert(name.to_owned(), value.to_owned());
            }
        }
        for a in outputs["artifacts"].as_array().into_iter().flatten() {
            let (Some(name), Some(key)) = (a["name"].as_str(), a["s3"]["key"].as_str()) else {
                continue;
            };
            let location = self.config.location(key);
            if let Some(Some(digest)) = self.digests.get(&location) {
                let artifact = ArtifactRef {
                    digest: digest.hex.clone(),
                    size: digest.size,
                    location,
                };
                out.artifacts.insert(name.to_owned(), artifact);
            }
        }
        out
    }

    /// Sends the step's state if it changed, with logs when terminal.
    async fn report(&mut self, name: &str, seen: Seen) {
        if !self.reporter.is_news(name, seen.phase, seen.attempt) {
            return;
        }
        let mut state = StepState {
            name: name.to_owned(),
            phase: seen.phase,
            attempt: seen.attempt,
            message: seen.message,
            outputs: seen.outputs,
            metrics: seen.metrics,
            engine_ref: seen.node_id,
            logs: None,
        };
        self.reporter.running_first(&state).await;
        let ran = matches!(seen.phase, StepPhase::Succeeded | StepPhase::Failed);
        if ran && let Some(pod) = &seen.pod {
            match self.pods.logs(pod, &LogParams::default()).await {
                Ok(log) => state.logs = Some(tail(log, self.config.log_tail_bytes)),
                Err(e) => tracing::debug!(pod, error = %e, "no logs"),
            }
        }
        self.reporter.send(state).await;
    }
}

/// Whether Argo is done with a node.
fn node_ended(node: &Value) -> bool {
    matches!(
        node["phase"].as_str(),
        Some("Succeeded" | "Failed" | "Error" | "Skipped" | "Omitted")
    )
}

/// A map step's state from its instances; outputs as JSON lists.
fn aggregate(instances: &[Seen]) -> Seen {
    let state = map_state(instances.iter().map(|s| s.phase).enumerate());
    let mut seen = Seen::bare(state.phase, None);
    seen.attempt = state.attempt;
    seen.message = state.message;
    if state.phase == StepPhase::Succeeded {
        seen.outputs = gather(
            instances
                .iter()
                .filter(|s| s.phase == StepPhase::Succeeded)
                .map(|s| &s.outputs),
        );
    }
    seen
}

fn wall_ms(node: &Value) -> Option<u64> {
    let at = |field: &str| {
        node[field]
            .as_str()?
            .parse::<k8s_openapi::jiff::Timestamp>()
            .ok()
    };
    let ms = at("finishedAt")?.as_millisecond() - at("startedAt")?.as_millisecond();
    u64::try_from(ms).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_attempts_and_instances() {
        let wf = json!({"status": {"nodes": {
            "wf-1": {"id": "wf-1", "name": "wf.t", "displayName": "t", "type": "Retry", "children": ["wf-3", "wf-2"]},
            "wf-2": {"id": "wf-2", "name": "wf.t(0)", "displayName": "t(0)", "type": "Pod"},
            "wf-3": {"id": "wf-3", "name": "wf.t(1)", "displayName": "t(1)", "type": "Pod"},
            "wf-4": {"id": "wf-4", "name": "wf.m", "displayName": "m", "type": "TaskGroup"},
            "wf-5": {"id": "wf-5", "name": "wf.m(1:b)", "displayName": "m(1:b)", "type": "Pod"},
            "wf-6": {"id": "wf-6", "name": "wf.m(0:a)", "displayName": "m(0:a)", "type": "Pod"},
        }}});
        let nodes = Nodes::of(&wf);
        let names = |v: Vec<&Value>| {
            v.iter()
                .map(|n| n["name"].as_str().unwrap().to_owned())
                .collect::<Vec<_>>()
        };
        assert_eq!(
            names(nodes.attempts_of_step("t").unwrap()),
            ["wf.t(0)", "wf.t(1)"]
        );
        assert_eq!(
            names(nodes.attempts_of_step("m[1]").unwrap()),
            ["wf.m(1:b)"]
        );
        assert!(nodes.attempts_of_step("m[2]").is_none());
    }
}
