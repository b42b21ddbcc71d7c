//! Executes a run's `PipelineSpec` the way KFP's driver and launcher do:
//! DAG tasks in dependency order, inputs bound from component inputs,
//! upstream outputs and constants, `triggerPolicy` conditions (CEL),
//! `parameterIterator` fan-outs with `parallelismLimit` and their outputs
//! collected as lists, nested DAGs, importers, `retryPolicy`, and the
//! Kubernetes platform spec's `activeDeadlineSeconds`.
//!
//! A `:terminate` kills the running pods and starts nothing new, except
//! what runs behind an `ALL_UPSTREAM_TASKS_COMPLETED` task (the SDK's exit
//! handlers), which still runs and sees the `CANCELED` final status.
//! A `:retry` executes the spec again over the same task records: tasks
//! that succeeded (or were skipped) keep their outputs, the others run
//! again, a container in a new pod (its next attempt).

mod pods;

use super::launcher;
use super::store::{Artifact, Task};
use super::{Shared, store};
use crate::cel;
use futures::FutureExt;
use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use tokio::sync::watch;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Succeeded,
    Failed,
    Skipped,
    Canceled,
    /// Never created: an upstream task failed or the run was terminated.
    NotRun,
}

impl State {
    fn api(self) -> &'static str {
        match self {
            State::Succeeded => "SUCCEEDED",
            State::Failed => "FAILED",
            State::Skipped => "SKIPPED",
            State::Canceled | State::NotRun => "CANCELED",
        }
    }
}

/// Parameters and artifacts flowing into or out of a task.
#[derive(Debug, Clone, Default)]
struct Io {
    params: Map<String, Value>,
    artifacts: BTreeMap<String, Vec<Artifact>>,
}

#[derive(Debug, Clone)]
struct Done {
    state: State,
    outputs: Io,
    error: Option<String>,
}

impl Done {
    fn bare(state: State, error: Option<String>) -> Done {
        Done {
            state,
            outputs: Io::default(),
            error,
        }
    }
}

/// One run being executed.
pub struct Exec {
    shared: Arc<Shared>,
    run_id: String,
    job_name: String,
    spec: Value,
    platform: Value,
    terminate: watch::Receiver<bool>,
}

/// Runs the pipeline to its end and records the run's final state.
pub async fn execute(
    shared: Arc<Shared>,
    run_id: String,
    spec: Value,
    platform: Value,
    parameters: Map<String, Value>,
    terminate: watch::Receiver<bool>,
) {
    let job_name = spec["pipelineInfo"]["name"]
        .as_str()
        .unwrap_or("pipeline")
        .to_owned();
    let exec = Arc::new(Exec {
        shared,
        run_id,
        job_name,
        spec,
        platform,
        terminate,
    });
    let mut inputs = Io::default();
    if let Some(defs) = exec.spec["root"]["inputDefinitions"]["parameters"].as_object() {
        for (k, d) in defs {
            if let Some(v) = d.get("defaultValue") {
                inputs.params.insert(k.clone(), v.clone());
            }
        }
    }
    inputs.params.extend(parameters);
    exec.update_run(|r| r.set_state("RUNNING"));
    let root = exec.spec["root"].clone();
    let (state, _) = exec.clone().dag(root, inputs, None, false).await;
    let terminated = exec.terminated();
    exec.update_run(|r| {
        r.set_state(match state {
            _ if terminated => "CANCELED",
            State::Succeeded | State::Skipped => "SUCCEEDED",
            _ => "FAILED",
        });
        r.finished_at = Some(super::store::now());
    });
}

impl Exec {
    fn terminated(&self) -> bool {
        *self.terminate.borrow()
    }

    fn update_run(&self, f: impl FnOnce(&mut super::store::Run)) {
        let mut db = self.shared.db.lock().unwrap();
        if let Some(run) = db.run_mut(&self.run_id) {
            f(run);
        }
    }

    fn update_task(&self, id: &str, f: impl FnOnce(&mut Task)) {
        self.update_run(|r| {
            if let Some(t) = r.task_mut(id) {
                f(t);
            }
        });
    }

    /// The task record `name` under `parent`: a new one, or, when the run
    /// is retried, the earlier one, whose outputs stand if it succeeded (or
    /// was skipped) and which runs again otherwise.
    fn open_task(
        &self,
        name: &str,
        parent: Option<&str>,
        kind: &'static str,
    ) -> (String, Option<Done>) {
        let mut db = self.shared.db.lock().unwrap();
        let earlier = {
            let store::Db {
                runs, artifacts, ..
            } = &mut *db;
            let Some(run) = runs.iter_mut().find(|r| r.id == self.run_id) else {
                return (String::new(), Some(Done::bare(State::Canceled, None)));
            };
            run.tasks
                .iter_mut()
                .find(|t| t.parent.as_deref() == parent && t.display_name == name)
                .map(|t| {
                    if matches!(t.state, "SUCCEEDED" | "SKIPPED") {
                        let mut outputs = Io {
                            params: t.output_parameters.clone(),
                            ..Io::default()
                        };
                        for (key, ids) in &t.output_artifacts {
                            let list = artifacts
                                .iter()
                                .filter(|a| ids.contains(&a.id))
                                .cloned()
                                .collect();
                            outputs.artifacts.insert(key.clone(), list);
                        }
                        let state = if t.state == "SKIPPED" {
                            State::Skipped
                        } else {
                            State::Succeeded
                        };
                        return (
                            t.id.clone(),
                            Some(Done {
                                state,
                                outputs,
                                error: None,
                            }),
                        );
                    }
                    t.error = None;
                    t.end_time = None;
                    t.set_state("PENDING");
                    (t.id.clone(), None)
                })
        };
        if let Some(found) = earlier {
            return found;
        }
        let id = db.uuid();
        if let Some(run) = db.run_mut(&self.run_id) {
            run.tasks.push(Task::new(
                id.clone(),
                name.to_owned(),
                parent.map(str::to_owned),
                kind,
            ));
        }
        (id, None)
    }

    fn finish(&self, id: &str, done: Done) -> Done {
        self.update_task(id, |t| {
            t.error = done.error.clone();
            t.output_parameters = done.outputs.params.clone();
            t.output_artifacts = done
                .outputs
                .artifacts
                .iter()
                .map(|(k, v)| (k.clone(), v.iter().map(|a| a.id).collect()))
                .collect();
            t.set_state(done.state.api());
        });
        done
    }

    fn component(&self, name: &str) -> Value {
        self.spec["components"][name].clone()
    }

    /// Runs a DAG's tasks; returns its state and its declared outputs.
    fn dag(
        self: Arc<Self>,
        component: Value,
        inputs: Io,
        parent: Option<String>,
        exit: bool,
    ) -> BoxFuture<'static, (State, Io)> {
        async move {
            let tasks = component["dag"]["tasks"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            let deps = |t: &Value| -> Vec<String> {
                t["dependentTasks"]
                    .as_array()
                    .map(|d| {
                        d.iter()
                            .filter_map(|x| x.as_str().map(str::to_owned))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let mut pending: BTreeSet<String> = tasks.keys().cloned().collect();
            let mut done: BTreeMap<String, Done> = BTreeMap::new();
            let mut running = FuturesUnordered::new();
            loop {
                let ready: Vec<String> = pending
                    .iter()
                    .filter(|n| deps(&tasks[*n]).iter().all(|d| done.contains_key(d)))
                    .cloned()
                    .collect();
                for name in ready {
                    pending.remove(&name);
                    let task = tasks[&name].clone();
                    let after_all =
                        task["triggerPolicy"]["strategy"] == "ALL_UPSTREAM_TASKS_COMPLETED";
                    let upstream: Vec<State> = deps(&task).iter().map(|d| done[d].state).collect();
                    if !after_all {
                        let blocked = upstream
                            .iter()
                            .any(|s| matches!(s, State::Failed | State::Canceled | State::NotRun));
                        if blocked || (self.terminated() && !exit) {
                            done.insert(name, Done::bare(State::NotRun, None));
                            continue;
                        }
                        if upstream.contains(&State::Skipped) {
                            let display = display_name(&name, &task);
                            let (id, earlier) =
                                self.open_task(&display, parent.as_deref(), kind(&self, &task));
                            let skipped = match earlier {
                                Some(d) => d,
                                None => self.finish(&id, Done::bare(State::Skipped, None)),
                            };
                            done.insert(name, skipped);
                            continue;
                        }
                    }
                    let scope = Scope {
                        inputs: inputs.clone(),
                        done: done.clone(),
                    };
                    let exec = self.clone();
                    let parent = parent.clone();
                    let exit = exit || after_all;
                    running.push(async move {
                        let d = exec
                            .task(&name, &task, scope, parent.as_deref(), exit)
                            .await;
                        (name, d)
                    });
                }
                match running.next().await {
                    Some((name, d)) => {
                        done.insert(name, d);
                    }
                    None => {
                        // Dependencies on tasks that do not exist: never runnable.
                        for name in std::mem::take(&mut pending) {
                            done.insert(name, Done::bare(State::NotRun, None));
                        }
                        break;
                    }
                }
            }
            let any = |s: State| done.values().any(|d| d.state == s);
            let state = if any(State::Failed) {
                State::Failed
            } else if any(State::Canceled) || any(State::NotRun) {
                State::Canceled
            } else {
                State::Succeeded
            };
            (state, dag_outputs(&component, &done))
        }
        .boxed()
    }

    /// One task of a DAG: binds its inputs, checks its condition, then
    /// fans out or runs its component.
    async fn task(
        self: Arc<Self>,
        name: &str,
        task: &Value,
        scope: Scope,
        parent: Option<&str>,
        exit: bool,
    ) -> Done {
        let display = display_name(name, task);
        let (id, earlier) = self.open_task(&display, parent, kind(&self, task));
        if let Some(done) = earlier {
            return done;
        }
        let inputs = match self.bind(task, &scope) {
            Ok(io) => io,
            Err(e) => return self.finish(&id, Done::bare(State::Failed, Some(e))),
        };
        self.update_task(&id, |t| t.inputs = inputs.params.clone());
        if let Some(condition) = task["triggerPolicy"]["condition"].as_str() {
            let vars = json!({"inputs": {"parameter_values": inputs.params}});
            let vars = vars.as_object().cloned().unwrap_or_default();
            match cel::condition(condition, &vars) {
                Ok(true) => {}
                Ok(false) => return self.finish(&id, Done::bare(State::Skipped, None)),
                Err(e) => {
                    let message = format!("failed to evaluate the condition {condition:?}: {e}");
                    return self.finish(&id, Done::bare(State::Failed, Some(message)));
                }
            }
        }
        let component = self.component(task["componentRef"]["name"].as_str().unwrap_or_default());
        if task.get("parameterIterator").is_some() {
            return self
                .fan_out(&id, &display, task, component, inputs, exit)
                .await;
        }
        let done = self
            .body(&id, &display, task, component, inputs, exit)
            .await;
        self.finish(&id, done)
    }

    /// Runs a component (DAG, container or importer) for task `id`.
    async fn body(
        self: &Arc<Self>,
        id: &str,
        display: &str,
        task: &Value,
        component: Value,
        inputs: Io,
        exit: bool,
    ) -> Done {
        self.update_task(id, |t| t.set_state("RUNNING"));
        if component.get("dag").is_some() {
            let (state, outputs) = self
                .clone()
                .dag(component, inputs, Some(id.to_owned()), exit)
                .await;
            return Done {
                state,
                outputs,
                error: (state == State::Failed).then(|| "a task of the DAG failed".to_owned()),
            };
        }
        let label = component["executorLabel"].as_str().unwrap_or_default();
        let executor = &self.spec["deploymentSpec"]["executors"][label];
        if let Some(importer) = executor.get("importer") {
            return self.import(importer, &inputs);
        }
        if executor.get("container").is_none() {
            return Done::bare(
                State::Failed,
                Some(format!("executor {label:?} is not defined")),
            );
        }
        self.container(id, display, task, &component, label, inputs, exit)
            .await
    }

    fn fan_out<'a>(
        self: &'a Arc<Self>,
        id: &'a str,
        display: &'a str,
        task: &'a Value,
        component: Value,
        inputs: Io,
        exit: bool,
    ) -> BoxFuture<'a, Done> {
        async move {
            let iterator = &task["parameterIterator"];
            let items = match items(iterator, &inputs) {
                Ok(items) => items,
                Err(e) => return self.finish(id, Done::bare(State::Failed, Some(e))),
            };
            let item_input = iterator["itemInput"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            let limit = task["iteratorPolicy"]["parallelismLimit"]
                .as_u64()
                .filter(|&n| n > 0)
                .map_or(items.len().max(1), |n| n as usize);
            self.update_task(id, |t| {
                t.iteration_count = Some(items.len());
                t.set_state("RUNNING");
            });
            let runs = items.into_iter().enumerate().map(|(i, item)| {
                let mut io = inputs.clone();
                io.params.insert(item_input.clone(), item);
                let component = component.clone();
                async move {
                    let (child, earlier) = self.open_task(
                        &format!("{display}-iteration-{i}"),
                        Some(id),
                        "LOOP_ITERATION",
                    );
                    if let Some(done) = earlier {
                        return done;
                    }
                    self.update_task(&child, |t| t.iteration_index = Some(i));
                    if self.terminated() && !exit {
                        return self.finish(&child, Done::bare(State::Canceled, None));
                    }
                    let done = self.body(&child, display, task, component, io, exit).await;
                    self.finish(&child, done)
                }
            });
            let results: Vec<Done> = futures::stream::iter(runs).buffered(limit).collect().await;
            let state = if results.iter().any(|d| d.state == State::Failed) {
                State::Failed
            } else if results
                .iter()
                .any(|d| matches!(d.state, State::Canceled | State::NotRun))
            {
                State::Canceled
            } else {
                State::Succeeded
            };
            // Each declared output collected over the iterations, as a list.
            let mut outputs = Io::default();
            let declared = &component["outputDefinitions"];
            for key in declared["parameters"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.keys())
            {
                let values: Vec<Value> = results
                    .iter()
                    .map(|d| d.outputs.params.get(key).cloned().unwrap_or(Value::Null))
                    .collect();
                outputs.params.insert(key.clone(), Value::Array(values));
            }
            for key in declared["artifacts"]
                .as_object()
                .into_iter()
                .flat_map(|m| m.keys())
            {
                let all = results
                    .iter()
                    .flat_map(|d| d.outputs.artifacts.get(key).cloned().unwrap_or_default())
                    .collect();
                outputs.artifacts.insert(key.clone(), all);
            }
            let failed: Vec<String> = results
                .iter()
                .enumerate()
                .filter(|(_, d)| d.state == State::Failed)
                .map(|(i, _)| i.to_string())
                .collect();
            let error =
                (!failed.is_empty()).then(|| format!("iteration(s) {} failed", failed.join(", ")));
            self.finish(
                id,
                Done {
                    state,
                    outputs,
                    error,
                },
            )
        }
        .boxed()
    }

    /// The task's inputs from its DAG's inputs, upstream outputs and constants.
    fn bind(&self, task: &Value, scope: &Scope) -> Result<Io, String> {
        let mut io = Io::default();
        let params = task["inputs"]["parameters"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, spec) in params {
            let value = if let Some(name) = spec["componentInputParameter"].as_str() {
                match scope.inputs.params.get(name) {
                    Some(v) => v.clone(),
                    None => continue,
                }
            } else if let Some(out) = spec.get("taskOutputParameter") {
                let producer = out["producerTask"].as_str().unwrap_or_default();
                let key = out["outputParameterKey"].as_str().unwrap_or_default();
                scope
                    .done
                    .get(producer)
                    .and_then(|d| d.outputs.params.get(key))
                    .cloned()
                    .ok_or_else(|| {
                        format!("output parameter {key:?} of task {producer:?} is not available")
                    })?
            } else if let Some(constant) = spec["runtimeValue"].get("constant") {
                constant.clone()
            } else if let Some(status) = spec.get("taskFinalStatus") {
                let producer = status["producerTask"].as_str().unwrap_or_default();
                let d = scope.done.get(producer);
                json!({
                    "state": d.map_or("CANCELED", |d| d.state.api()),
                    "error": {"code": 0, "message": d.and_then(|d| d.error.clone()).unwrap_or_default()},
                    "pipelineJobResourceName": self.run_id,
                    "pipelineTaskName": producer,
                })
            } else {
                return Err(format!("input parameter {key:?} has no supported source"));
            };
            let value = match spec["parameterExpressionSelector"].as_str() {
                Some(selector) => select(selector, value)?,
                None => value,
            };
            io.params.insert(key, value);
        }
        let artifacts = task["inputs"]["artifacts"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, spec) in artifacts {
            let list = if let Some(out) = spec.get("taskOutputArtifact") {
                let producer = out["producerTask"].as_str().unwrap_or_default();
                let name = out["outputArtifactKey"].as_str().unwrap_or_default();
                scope
                    .done
                    .get(producer)
                    .and_then(|d| d.outputs.artifacts.get(name))
                    .cloned()
                    .ok_or_else(|| {
                        format!("output artifact {name:?} of task {producer:?} is not available")
                    })?
            } else if let Some(name) = spec["componentInputArtifact"].as_str() {
                scope
                    .inputs
                    .artifacts
                    .get(name)
                    .cloned()
                    .unwrap_or_default()
            } else {
                return Err(format!("input artifact {key:?} has no supported source"));
            };
            io.artifacts.insert(key, list);
        }
        Ok(io)
    }

    /// An importer: the artifact at a URI becomes the task's `artifact`.
    fn import(&self, importer: &Value, inputs: &Io) -> Done {
        let uri = match importer["artifactUri"]
            .get("runtimeParameter")
            .and_then(Value::as_str)
        {
            Some(p) => inputs.params.get(p).map(launcher::text),
            None => importer["artifactUri"]["constant"]
                .as_str()
                .map(str::to_owned),
        };
        let Some(uri) = uri else {
            return Done::bare(
                State::Failed,
                Some("the importer has no artifact URI".into()),
            );
        };
        let Some(host) = self.shared.host_of(&uri) else {
            return Done::bare(
                State::Failed,
                Some(format!("cannot import {uri:?}: unsupported scheme")),
            );
        };
        let artifact = self.shared.register(uri, host);
        let mut outputs = Io::default();
        outputs.artifacts.insert("artifact".into(), vec![artifact]);
        Done {
            state: State::Succeeded,
            outputs,
            error: None,
        }
    }
}

/// What a task's inputs come from: its DAG's inputs and finished siblings.
struct Scope {
    inputs: Io,
    done: BTreeMap<String, Done>,
}

fn display_name(name: &str, task: &Value) -> String {
    task["taskInfo"]["name"].as_str().unwrap_or(name).to_owned()
}

fn kind(exec: &Exec, task: &Value) -> &'static str {
    let component = exec.component(task["componentRef"]["name"].as_str().unwrap_or_default());
    if task.get("parameterIterator").is_some() {
        "LOOP"
    } else if component.get("dag").is_some() {
        if task["triggerPolicy"].get("condition").is_some() {
            "CONDITION"
        } else {
            "DAG"
        }
    } else {
        let label = component["executorLabel"].as_str().unwrap_or_default();
        if exec.spec["deploymentSpec"]["executors"][label]
            .get("importer")
            .is_some()
        {
            "IMPORTER"
        } else {
            "RUNTIME"
        }
    }
}

/// A DAG's outputs, picked from its tasks' outputs.
fn dag_outputs(component: &Value, done: &BTreeMap<String, Done>) -> Io {
    let mut io = Io::default();
    let outputs = &component["dag"]["outputs"];
    for (key, spec) in outputs["parameters"].as_object().into_iter().flatten() {
        let from = &spec["valueFromParameter"];
        let producer = from["producerSubtask"].as_str().unwrap_or_default();
        let name = from["outputParameterKey"].as_str().unwrap_or_default();
        if let Some(v) = done.get(producer).and_then(|d| d.outputs.params.get(name)) {
            io.params.insert(key.clone(), v.clone());
        }
    }
    for (key, spec) in outputs["artifacts"].as_object().into_iter().flatten() {
        for selector in spec["artifactSelectors"].as_array().into_iter().flatten() {
            let producer = selector["producerSubtask"].as_str().unwrap_or_default();
            let name = selector["outputArtifactKey"].as_str().unwrap_or_default();
            if let Some(list) = done
                .get(producer)
                .and_then(|d| d.outputs.artifacts.get(name))
            {
                io.artifacts
                    .entry(key.clone())
                    .or_default()
                    .extend(list.iter().cloned());
            }
        }
    }
    io
}

/// The items of a `parameterIterator`: a raw JSON list or a list input.
fn items(iterator: &Value, inputs: &Io) -> Result<Vec<Value>, String> {
    let value = if let Some(raw) = iterator["items"]["raw"].as_str() {
        Value::String(raw.to_owned())
    } else if let Some(name) = iterator["items"]["inputParameter"].as_str() {
        inputs
            .params
            .get(name)
            .cloned()
            .ok_or_else(|| format!("the loop input {name:?} is not available"))?
    } else {
        return Err("the parameterIterator has no items".into());
    };
    match value {
        Value::Array(items) => Ok(items),
        Value::String(s) => match serde_json::from_str(&s) {
            Ok(Value::Array(items)) => Ok(items),
            _ => Err(format!("cannot iterate over {s:?}: not a JSON list")),
        },
        other => Err(format!("cannot iterate over {other}")),
    }
}

/// Applies a `parameterExpressionSelector` to a value.
fn select(selector: &str, value: Value) -> Result<Value, String> {
    let key = match &value {
        Value::String(_) => "string_value",
        Value::Number(_) => "number_value",
        Value::Bool(_) => "bool_value",
        Value::Array(_) => "list_value",
        Value::Object(_) => "struct_value",
        Value::Null => "null_value",
    };
    let vars = Map::from_iter([(key.to_owned(), value)]);
    cel::eval(selector, &vars).map_err(|e| format!("parameterExpressionSelector {selector:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::pods::seconds;
    use super::*;

    #[test]
    fn durations_and_items() {
        assert_eq!(seconds("1s"), Some(1.0));
        assert_eq!(seconds("2m"), Some(120.0));
        assert_eq!(seconds("x"), None);
        let io = Io::default();
        let raw = json!({"items": {"raw": "[1,2,3]"}});
        assert_eq!(
            items(&raw, &io).unwrap(),
            vec![json!(1), json!(2), json!(3)]
        );
        let mut io = Io::default();
        io.params.insert("l".into(), json!(["a"]));
        let from = json!({"items": {"inputParameter": "l"}});
        assert_eq!(items(&from, &io).unwrap(), vec![json!("a")]);
        assert!(items(&json!({"items": {"raw": "nope"}}), &io).is_err());
    }

    #[test]
    fn selectors_see_typed_values() {
        assert_eq!(
            select("struct_value.state", json!({"state": "FAILED"})).unwrap(),
            json!("FAILED")
        );
        assert_eq!(
            select("parseJson(string_value)['a']", json!("{\"a\": 1}")).unwrap(),
            json!(1)
        );
    }
}
