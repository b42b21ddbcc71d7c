//! A workflow-controller for Argo `Workflow`s (`argoproj.io/v1alpha1`) on
//! the fake cluster.
//!
//! It watches `workflows` in every namespace and runs each new one the way
//! Argo documents, writing `status` in Argo's shapes (`phase`, `startedAt`,
//! `finishedAt`, `message`, and `nodes` keyed by node id: DAG, TaskGroup,
//! Retry, Pod, Skipped and Suspend nodes with their `boundaryID`,
//! `children`, `outputs` …). Pods are `v1` Pod objects in the store, named
//! the v2 way (`<workflow>-<template>-<fnv32a(node name)>`), and run by
//! the [`Kubelet`](crate::kubelet::Kubelet) (images are not pulled).
//!
//! What runs: `dag` templates (`depends` with task results, `dependencies`,
//! `when`, `withItems`/`withParam`, `parallelism`, output parameters from
//! tasks), `container` and `script` templates (the script's `source` is a
//! file in the pod, `/tmp/.argo/staging/script`, passed to `command`),
//! `suspend` with a duration, `retryStrategy` (`limit`, `retryPolicy`,
//! `backoff`), `activeDeadlineSeconds` (templates and the workflow),
//! `spec.shutdown` (`Terminate`, or `Stop`, which still runs `onExit`),
//! `onExit`, `spec.parallelism`, and the usual tags (`inputs`, `outputs`,
//! `tasks`, `item`, `workflow.*`, `{{=expression}}`).
//!
//! Where it differs from a cluster: artifacts go to a directory (the
//! bucket of the artifact repository, keys `<workflow>/<pod>/<artifact>`,
//! files stored as they are rather than as `.tgz`) and are reported with
//! an `s3.key`; only paths under `/tmp` can carry files in and out of a
//! pod; a container killed by `SIGKILL` from inside is reported as
//! Kubernetes reports an OOM kill (`OOMKilled (exit code 137)`), which is
//! how the kernel usually ends one; `steps` and `resource` templates are
//! refused (the node errors).

mod exec;
pub mod expr;
mod pod;
pub mod text;
mod values;

use crate::kube::{Cluster, EventType, Resource, Store, now};
use crate::kubelet::Kubelet;
use exec::{Args, Call};
use serde::Serialize;
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use text::Scope;
use tokio::sync::{Semaphore, watch};

/// `argoproj.io/v1alpha1` `workflows`.
pub fn workflows() -> Resource {
    Resource::new("argoproj.io", "v1alpha1", "workflows")
}

/// Core `v1` `pods`.
pub fn pods() -> Resource {
    Resource::new("", "v1", "pods")
}

/// How the controller is set up (Argo's controller config and env).
#[derive(Debug, Clone)]
pub struct Config {
    /// The artifact repository's bucket, on this machine.
    pub artifact_dir: PathBuf,
    /// Failure messages `OnTransientError` retries besides Argo's own
    /// transient errors (quota, throttling): alternatives separated by
    /// `|`, each matched as a substring, as `TRANSIENT_ERROR_PATTERN`.
    pub transient_error_pattern: String,
}

impl Config {
    /// Artifacts under `artifact_dir`; OOM kills count as transient.
    pub fn new(artifact_dir: impl Into<PathBuf>) -> Config {
        Config {
            artifact_dir: artifact_dir.into(),
            transient_error_pattern: "OOMKilled".into(),
        }
    }

    fn transient(&self, message: &str) -> bool {
        const ARGO: &[&str] = &["exceeded quota", "Too Many Requests", "connection reset"];
        ARGO.iter().any(|p| message.contains(p))
            || self
                .transient_error_pattern
                .split('|')
                .any(|p| !p.is_empty() && message.contains(p))
    }
}

/// Starts the controller over `cluster`; it runs until aborted.
pub fn spawn(cluster: &Cluster, config: Config) -> tokio::task::JoinHandle<()> {
    let store = cluster.store.clone();
    let kubelet = cluster.kubelet.clone();
    tokio::spawn(async move { control(store, kubelet, config).await })
}

/// Why a workflow stops early; later variants win over earlier ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Halt {
    None,
    /// The workflow's `activeDeadlineSeconds` passed.
    Deadline,
    /// `spec.shutdown: Stop`: running pods are killed, `onExit` runs.
    Stop,
    /// `spec.shutdown: Terminate` (or the Workflow was deleted).
    Terminate,
}

impl Halt {
    fn raise(sender: &watch::Sender<Halt>, to: Halt) {
        sender.send_if_modified(|h| {
            let raise = to > *h;
            if raise {
                *h = to;
            }
            raise
        });
    }

    /// Whether this stops work in the main DAG (`exit == false`) or in
    /// the exit handler.
    fn stops(self, exit: bool) -> bool {
        if exit {
            self == Halt::Terminate
        } else {
            self != Halt::None
        }
    }

    fn node_message(self) -> String {
        match self {
            Halt::Deadline => "Step exceeded its deadline".into(),
            Halt::Stop => "workflow shutdown with strategy:  Stop".into(),
            _ => "workflow shutdown with strategy:  Terminate".into(),
        }
    }
}

async fn control(store: Arc<Store>, kubelet: Arc<Kubelet>, config: Config) {
    let mut events = store.watch(&workflows(), None, Some(0));
    let mut running: HashMap<(String, String), Arc<watch::Sender<Halt>>> = HashMap::new();
    while let Some((_, event)) = events.recv().await {
        running.retain(|_, halt| Arc::strong_count(halt) > 1);
        let key = (event.namespace.clone(), event.name().to_owned());
        match event.kind {
            EventType::Added => {
                let phase = event.object["status"]["phase"].as_str().unwrap_or_default();
                if !phase.is_empty() || running.contains_key(&key) {
                    continue;
                }
                let (halt, _) = watch::channel(Halt::None);
                let halt = Arc::new(halt);
                running.insert(key.clone(), halt.clone());
                let run = Run::new(
                    store.clone(),
                    kubelet.clone(),
                    config.clone(),
                    &event.namespace,
                    event.object.clone(),
                    halt,
                );
                tokio::spawn(run.run());
            }
            EventType::Modified => {
                if let Some(halt) = running.get(&key) {
                    match event.object["spec"]["shutdown"].as_str() {
                        Some("Terminate") => Halt::raise(halt, Halt::Terminate),
                        Some("Stop") => Halt::raise(halt, Halt::Stop),
                        _ => {}
                    }
                }
            }
            EventType::Deleted => {
                if let Some(halt) = running.remove(&key) {
                    Halt::raise(&halt, Halt::Terminate);
                }
            }
        }
    }
}

/// One node of `status.nodes`, as Argo writes it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
struct Node {
    id: String,
    name: String,
    display_name: String,
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "String::is_empty")]
    template_name: String,
    phase: &'static str,
    #[serde(rename = "boundaryID", skip_serializing_if = "Option::is_none")]
    boundary_id: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    children: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    outbound_nodes: Vec<String>,
    started_at: String,
    finished_at: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    inputs: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    outputs: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resources_duration: Option<BTreeMap<&'static str, u64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    host_node_name: Option<String>,
}

/// The workflow-level part of `status`.
struct Overall {
    phase: &'static str,
    started_at: String,
    finished_at: Option<String>,
    message: Option<String>,
}

/// One workflow being run.
struct Run {
    store: Arc<Store>,
    kubelet: Arc<Kubelet>,
    config: Config,
    namespace: String,
    name: String,
    spec: Value,
    pod_labels: BTreeMap<String, String>,
    templates: HashMap<String, Value>,
    nodes: Mutex<BTreeMap<String, Node>>,
    overall: Mutex<Overall>,
    /// `workflow.*` tags.
    globals: Mutex<Scope>,
    /// `workflow.outputs.artifacts.*`, for `from`.
    global_artifacts: Mutex<HashMap<String, exec::Source>>,
    halt: Arc<watch::Sender<Halt>>,
    /// `spec.parallelism`: pods running at once.
    pods_at_once: Option<Arc<Semaphore>>,
}

impl Run {
    fn new(
        store: Arc<Store>,
        kubelet: Arc<Kubelet>,
        config: Config,
        namespace: &str,
        object: Value,
        halt: Arc<watch::Sender<Halt>>,
    ) -> Arc<Run> {
        let name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let spec = object["spec"].clone();
        let templates = spec["templates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| Some((t["name"].as_str()?.to_owned(), t.clone())))
            .collect();
        let pod_labels = strings(&spec["podMetadata"]["labels"]);
        let mut globals = Scope::from([
            ("workflow.name".to_owned(), name.clone()),
            ("workflow.namespace".to_owned(), namespace.to_owned()),
            ("workflow.status".to_owned(), "Running".to_owned()),
            (
                "workflow.uid".to_owned(),
                object["metadata"]["uid"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ),
            (
                "workflow.creationTimestamp".to_owned(),
                object["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            ),
        ]);
        for p in spec["arguments"]["parameters"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(n) = p["name"].as_str() {
                globals.insert(format!("workflow.parameters.{n}"), text_of(&p["value"]));
            }
        }
        let pods_at_once = spec["parallelism"]
            .as_u64()
            .map(|n| Arc::new(Semaphore::new(n.max(1) as usize)));
        let run = Run {
            store,
            kubelet,
            config,
            namespace: namespace.to_owned(),
            name,
            spec,
            pod_labels,
            templates,
            nodes: Mutex::new(BTreeMap::new()),
            overall: Mutex::new(Overall {
                phase: "Running",
                started_at: now(),
                finished_at: None,
                message: None,
            }),
            globals: Mutex::new(globals),
            global_artifacts: Mutex::new(HashMap::new()),
            halt,
            pods_at_once,
        };
        run.refresh_metadata(&object);
        Arc::new(run)
    }

    /// `workflow.annotations.*` and `workflow.labels.*` from the object,
    /// as Argo re-reads them on every pass.
    fn refresh_metadata(&self, object: &Value) {
        let mut globals = self.globals.lock().unwrap();
        globals.retain(|k, _| {
            !k.starts_with("workflow.annotations.") && !k.starts_with("workflow.labels.")
        });
        for (kind, field) in [("annotations", "annotations"), ("labels", "labels")] {
            for (k, v) in strings(&object["metadata"][field]) {
                globals.insert(format!("workflow.{kind}.{k}"), v);
            }
        }
    }

    fn halted(&self, exit: bool) -> Option<Halt> {
        let halt = *self.halt.borrow();
        halt.stops(exit).then_some(halt)
    }

    async fn run(self: Arc<Run>) {
        self.publish();
        if let Some(seconds) = seconds(&self.spec["activeDeadlineSeconds"]) {
            let halt = self.halt.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs_f64(seconds)) => Halt::raise(&halt, Halt::Deadline),
                    _ = halt.closed() => {}
                }
            });
        }
        let entrypoint = self.spec["entrypoint"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        let arguments = Args::from_json(&self.spec["arguments"]);
        let main = exec::execute(
            &self,
            Call::root(&self.name, &self.name, &entrypoint, arguments, false),
        )
        .await;
        let mut phase = main.phase;
        let halt = *self.halt.borrow();
        let mut message = match halt {
            Halt::None => main.message.clone(),
            Halt::Deadline => Some("Max duration limit exceeded".into()),
            Halt::Stop => Some("Stopped with strategy 'Stop'".into()),
            Halt::Terminate => Some("Stopped with strategy 'Terminate'".into()),
        };
        if halt != Halt::None && phase == "Succeeded" {
            phase = "Failed";
        }
        if let Some(on_exit) = self.spec["onExit"]
            .as_str()
            .filter(|_| halt != Halt::Terminate)
        {
            if let Some(object) = self.store.get(&workflows(), &self.namespace, &self.name) {
                self.refresh_metadata(&object);
            }
            let failures = self.failures();
            {
                let mut globals = self.globals.lock().unwrap();
                globals.insert("workflow.status".into(), phase.into());
                globals.insert("workflow.failures".into(), failures);
            }
            let name = format!("{}.onExit", self.name);
            let exit = exec::execute(
                &self,
                Call::root(&name, &name, on_exit, Args::default(), true),
            )
            .await;
            if exit.phase != "Succeeded" && phase == "Succeeded" {
                phase = exit.phase;
                message = exit.message;
            }
        }
        {
            let mut overall = self.overall.lock().unwrap();
            overall.phase = phase;
            overall.message = message;
            overall.finished_at = Some(now());
        }
        self.publish();
    }

    /// `workflow.failures`: the failed pods, as JSON.
    fn failures(&self) -> String {
        let nodes = self.nodes.lock().unwrap();
        let failed: Vec<Value> = nodes
            .values()
            .filter(|n| n.kind == "Pod" && matches!(n.phase, "Failed" | "Error"))
            .map(|n| {
                json!({
                    "displayName": n.display_name,
                    "message": n.message,
                    "templateName": n.template_name,
                    "phase": n.phase,
                    "podName": text::pod_name(&self.name, &n.template_name, &n.name),
                    "finishedAt": n.finished_at,
                })
            })
            .collect();
        Value::Array(failed).to_string()
    }

    /// Writes `status` (and Argo's phase labels) to the Workflow.
    fn publish(&self) {
        let status = {
            let overall = self.overall.lock().unwrap();
            let nodes = self.nodes.lock().unwrap();
            let mut status = json!({
                "phase": overall.phase,
                "startedAt": overall.started_at,
                "finishedAt": overall.finished_at,
                "nodes": nodes.iter().map(|(id, n)| (id.clone(), serde_json::to_value(n).expect("a node"))).collect::<serde_json::Map<_, _>>(),
            });
            if let Some(m) = &overall.message {
                status["message"] = m.clone().into();
            }
            if overall.finished_at.is_some() {
                status["conditions"] = json!([{"type": "Completed", "status": "True"}]);
            }
            status
        };
        let phase = status["phase"].clone();
        let done = !status["finishedAt"].is_null();
        self.store
            .update(&workflows(), &self.namespace, &self.name, |o| {
                o["status"] = status;
                let labels = &mut o["metadata"]["labels"];
                if !labels.is_object() {
                    *labels = json!({});
                }
                labels["workflows.argoproj.io/phase"] = phase;
                if done {
                    labels["workflows.argoproj.io/completed"] = "true".into();
                }
            });
    }

    /// Adds a node (a child of each of `parents`) and publishes.
    fn add_node(&self, new: NewNode<'_>) -> String {
        let id = text::node_id(&self.name, new.name);
        {
            let mut nodes = self.nodes.lock().unwrap();
            for parent in new.parents {
                if let Some(p) = nodes.get_mut(parent)
                    && !p.children.contains(&id)
                {
                    p.children.push(id.clone());
                }
            }
            let finished = matches!(new.phase, "Skipped" | "Omitted" | "Error");
            nodes.insert(
                id.clone(),
                Node {
                    id: id.clone(),
                    name: new.name.to_owned(),
                    display_name: new.display.to_owned(),
                    kind: new.kind,
                    template_name: new.template.to_owned(),
                    phase: new.phase,
                    boundary_id: new.boundary.map(str::to_owned),
                    children: Vec::new(),
                    outbound_nodes: Vec::new(),
                    started_at: now(),
                    finished_at: finished.then(now),
                    message: new.message,
                    inputs: new.inputs,
                    outputs: None,
                    resources_duration: None,
                    host_node_name: (new.kind == "Pod").then(|| "fake-node".to_owned()),
                },
            );
        }
        self.publish();
        id
    }

    /// Changes a node and publishes.
    fn update(&self, id: &str, change: impl FnOnce(&mut Node)) {
        if let Some(node) = self.nodes.lock().unwrap().get_mut(id) {
            change(node);
        }
        self.publish();
    }

    /// Ends a node.
    fn finish(&self, id: &str, outcome: &exec::Outcome) {
        self.update(id, |n| {
            n.phase = outcome.phase;
            n.message = outcome.message.clone();
            n.finished_at = Some(now());
            if let Some(outputs) = outcome.outputs.to_json() {
                n.outputs = Some(outputs);
            }
        });
    }

    /// The nodes a node's dependents hang from: itself for pods and
    /// skips, its last attempt for retries, its instances' for task
    /// groups, and its leaves for DAGs.
    fn outbound(&self, id: &str) -> Vec<String> {
        let nodes = self.nodes.lock().unwrap();
        outbound_of(&nodes, id)
    }
}

fn outbound_of(nodes: &BTreeMap<String, Node>, id: &str) -> Vec<String> {
    let Some(node) = nodes.get(id) else {
        return Vec::new();
    };
    match node.kind {
        "Retry" => match node.children.last() {
            Some(last) => vec![last.clone()],
            None => vec![id.to_owned()],
        },
        "TaskGroup" if !node.children.is_empty() => node
            .children
            .iter()
            .flat_map(|c| outbound_of(nodes, c))
            .collect(),
        "DAG" if !node.outbound_nodes.is_empty() => node.outbound_nodes.clone(),
        _ => vec![id.to_owned()],
    }
}

/// A node about to be added.
struct NewNode<'a> {
    name: &'a str,
    display: &'a str,
    kind: &'static str,
    template: &'a str,
    phase: &'static str,
    boundary: Option<&'a str>,
    parents: &'a [String],
    message: Option<String>,
    inputs: Option<Value>,
}

/// A JSON object of strings.
fn strings(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), text_of(v)))
        .collect()
}

/// A JSON value as Argo writes it into text.
fn text_of(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// IntOrString seconds (`"5"`, `5`) or a duration (`"2s"`, `"1m"`, `"1h"`).
fn seconds(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => {
            let s = s.trim();
            let (number, unit) = match s.find(|c: char| c.is_ascii_alphabetic()) {
                Some(i) => s.split_at(i),
                None => (s, "s"),
            };
            let n: f64 = number.parse().ok()?;
            let scale = match unit {
                "ms" => 0.001,
                "s" => 1.0,
                "m" => 60.0,
                "h" => 3600.0,
                _ => return None,
            };
            Some(n * scale)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_argo() {
        assert_eq!(seconds(&json!("1")), Some(1.0));
        assert_eq!(seconds(&json!(2)), Some(2.0));
        assert_eq!(seconds(&json!("2m")), Some(120.0));
        assert_eq!(seconds(&json!("500ms")), Some(0.5));
        assert_eq!(seconds(&json!("x")), None);
    }

    #[test]
    fn transient_errors_match_the_pattern() {
        let c = Config::new("/nowhere");
        assert!(c.transient("OOMKilled (exit code 137)"));
        assert!(c.transient("pods is forbidden: exceeded quota"));
        assert!(!c.transient("Error (exit code 1)"));
    }
}
