//! The API server's records (pipelines, versions, runs, tasks, artifacts)
//! and their `v2beta1` JSON shapes.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use tokio::sync::watch;

pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[derive(Debug, Clone)]
pub struct Pipeline {
    pub id: String,
    pub name: String,
    pub display_name: String,
    pub created_at: String,
}

impl Pipeline {
    pub fn json(&self) -> Value {
        json!({
            "pipeline_id": self.id,
            "name": self.name,
            "display_name": self.display_name,
            "created_at": self.created_at,
            "namespace": "",
        })
    }
}

#[derive(Debug, Clone)]
pub struct Version {
    pub id: String,
    pub pipeline_id: String,
    pub name: String,
    pub display_name: String,
    pub created_at: String,
    pub pipeline_spec: Value,
    pub platform_spec: Option<Value>,
}

impl Version {
    pub fn json(&self) -> Value {
        json!({
            "pipeline_id": self.pipeline_id,
            "pipeline_version_id": self.id,
            "name": self.name,
            "display_name": self.display_name,
            "created_at": self.created_at,
            "pipeline_spec": self.pipeline_spec,
        })
    }
}

/// One state change, as `state_history` lists them.
#[derive(Debug, Clone)]
pub struct Status {
    pub time: String,
    pub state: &'static str,
}

#[derive(Debug)]
pub struct Run {
    pub id: String,
    pub display_name: String,
    pub experiment_id: String,
    /// `(pipeline_id, pipeline_version_id)`, or none for an inline spec.
    pub version: Option<(String, String)>,
    pub pipeline_spec: Value,
    /// The Kubernetes platform spec (`Value::Null` when none).
    pub platform_spec: Value,
    pub parameters: Map<String, Value>,
    pub created_at: String,
    pub finished_at: Option<String>,
    pub state: &'static str,
    pub history: Vec<Status>,
    pub error: Option<String>,
    pub tasks: Vec<Task>,
    /// Flipped by `:terminate`; the driver watches it.
    pub terminate: watch::Sender<bool>,
}

impl Run {
    pub fn set_state(&mut self, state: &'static str) {
        if self.state != state {
            self.state = state;
            self.history.push(Status { time: now(), state });
        }
    }

    pub fn task_mut(&mut self, id: &str) -> Option<&mut Task> {
        self.tasks.iter_mut().find(|t| t.id == id)
    }

    pub fn json(&self) -> Value {
        let mut run = json!({
            "experiment_id": self.experiment_id,
            "run_id": self.id,
            "display_name": self.display_name,
            "storage_state": "AVAILABLE",
            "runtime_config": {"parameters": self.parameters},
            "service_account": "pipeline-runner",
            "created_at": self.created_at,
            "scheduled_at": self.created_at,
            "finished_at": self.finished_at.clone().unwrap_or_else(|| "1970-01-01T00:00:00Z".into()),
            "state": self.state,
            "state_history": history(&self.history),
            "run_details": {
                "task_details": self.tasks.iter().map(|t| t.json(self)).collect::<Vec<_>>(),
            },
        });
        match &self.version {
            Some((pipeline_id, version_id)) => {
                run["pipeline_version_reference"] =
                    json!({"pipeline_id": pipeline_id, "pipeline_version_id": version_id});
            }
            None => run["pipeline_spec"] = self.pipeline_spec.clone(),
        }
        if let Some(message) = &self.error {
            run["error"] = json!({"code": 2, "message": message});
        }
        run
    }
}

fn history(h: &[Status]) -> Vec<Value> {
    h.iter()
        .map(|s| json!({"update_time": s.time, "state": s.state}))
        .collect()
}

#[derive(Debug, Clone)]
pub struct Task {
    pub id: String,
    pub display_name: String,
    pub parent: Option<String>,
    /// `RUNTIME` (a pod), `DAG`, `CONDITION`, `LOOP`, `LOOP_ITERATION`, `IMPORTER`.
    pub kind: &'static str,
    pub iteration_index: Option<usize>,
    pub iteration_count: Option<usize>,
    pub state: &'static str,
    pub create_time: String,
    pub start_time: Option<String>,
    pub end_time: Option<String>,
    pub history: Vec<Status>,
    pub error: Option<String>,
    /// The pod of the current (or last) attempt, and the failed ones before.
    pub pod: Option<String>,
    pub failed_pods: Vec<String>,
    pub inputs: Map<String, Value>,
    pub output_parameters: Map<String, Value>,
    pub output_artifacts: BTreeMap<String, Vec<u64>>,
}

impl Task {
    pub fn new(
        id: String,
        display_name: String,
        parent: Option<String>,
        kind: &'static str,
    ) -> Task {
        let time = now();
        Task {
            id,
            display_name,
            parent,
            kind,
            iteration_index: None,
            iteration_count: None,
            state: "PENDING",
            create_time: time.clone(),
            start_time: None,
            end_time: None,
            history: vec![Status {
                time,
                state: "PENDING",
            }],
            error: None,
            pod: None,
            failed_pods: Vec::new(),
            inputs: Map::new(),
            output_parameters: Map::new(),
            output_artifacts: BTreeMap::new(),
        }
    }

    pub fn set_state(&mut self, state: &'static str) {
        if self.state == state {
            return;
        }
        let time = now();
        if state == "RUNNING" && self.start_time.is_none() {
            self.start_time = Some(time.clone());
        }
        if matches!(state, "SUCCEEDED" | "FAILED" | "SKIPPED" | "CANCELED") {
            self.end_time = Some(time.clone());
        }
        self.state = state;
        self.history.push(Status { time, state });
    }

    fn json(&self, run: &Run) -> Value {
        let children: Vec<Value> = run
            .tasks
            .iter()
            .filter(|t| t.parent.as_deref() == Some(&self.id))
            .map(|t| json!({"task_id": t.id, "pod_name": t.pod.clone().unwrap_or_default()}))
            .collect();
        let parameters: Vec<Value> = self
            .output_parameters
            .iter()
            .map(|(k, v)| json!({"parameter_key": k, "value": v}))
            .collect();
        let artifacts: Vec<Value> = self
            .output_artifacts
            .iter()
            .map(|(k, ids)| {
                let list: Vec<Value> = ids
                    .iter()
                    .map(|id| json!({"artifact_id": id.to_string()}))
                    .collect();
                json!({"artifact_key": k, "artifacts": list})
            })
            .collect();
        let inputs: Vec<Value> = self
            .inputs
            .iter()
            .map(|(k, v)| json!({"parameter_key": k, "value": v}))
            .collect();
        let mut type_attributes = Map::new();
        if let Some(i) = self.iteration_index {
            type_attributes.insert("iteration_index".into(), json!(i.to_string()));
        }
        if let Some(n) = self.iteration_count {
            type_attributes.insert("iteration_count".into(), json!(n.to_string()));
        }
        let mut task = json!({
            "run_id": run.id,
            "task_id": self.id,
            "display_name": self.display_name,
            "type": self.kind,
            "type_attributes": type_attributes,
            "create_time": self.create_time,
            "state": self.state,
            "state_history": history(&self.history),
            "parent_task_id": self.parent.clone().unwrap_or_default(),
            "child_tasks": children,
            "inputs": {"parameters": inputs},
            "outputs": {"parameters": parameters, "artifacts": artifacts},
        });
        if let Some(t) = &self.start_time {
            task["start_time"] = json!(t);
        }
        if let Some(t) = &self.end_time {
            task["end_time"] = json!(t);
        }
        if let Some(pod) = &self.pod {
            task["pod_name"] = json!(pod);
            task["executor_detail"] =
                json!({"main_job": pod, "failed_main_jobs": self.failed_pods});
        }
        if let Some(message) = &self.error {
            task["error"] = json!({"code": 2, "message": message});
        }
        task
    }
}

#[derive(Debug, Clone)]
pub struct Artifact {
    pub id: u64,
    pub uri: String,
    /// Where the bytes are on this machine.
    pub host: PathBuf,
    pub created_at: String,
}

/// Everything the server keeps.
#[derive(Debug, Default)]
pub struct Db {
    pub pipelines: Vec<Pipeline>,
    pub versions: Vec<Version>,
    pub runs: Vec<Run>,
    pub artifacts: Vec<Artifact>,
    seq: u64,
}

impl Db {
    /// A fresh id shaped like the UUIDs KFP hands out.
    pub fn uuid(&mut self) -> String {
        self.seq += 1;
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.subsec_nanos())
            .unwrap_or(0);
        format!(
            "{:08x}-{:04x}-4{:03x}-8{:03x}-{:012x}",
            nanos,
            std::process::id() & 0xffff,
            (self.seq >> 12) & 0xfff,
            self.seq & 0xfff,
            self.seq
        )
    }

    pub fn next_artifact_id(&mut self) -> u64 {
        self.seq += 1;
        self.seq
    }

    pub fn run_mut(&mut self, id: &str) -> Option<&mut Run> {
        self.runs.iter_mut().find(|r| r.id == id)
    }
}
