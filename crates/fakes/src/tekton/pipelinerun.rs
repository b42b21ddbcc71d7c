//! The PipelineRun controller: resolves the pipeline (`pipelineSpec` or
//! `pipelineRef`), creates one TaskRun per ready task (per combination for
//! a `matrix`), skips what Tekton skips (`when`, missing results, stopping
//! after a failure, cancellation, timeouts), runs `finally` once the DAG is
//! done, and writes Tekton's status (`conditions`, `childReferences`,
//! `skippedTasks`). Level-triggered like Tekton's reconciler: each
//! reconcile reads the TaskRuns from the store and acts on what it sees.

use super::children::{self, child_name, parents, result_refs};
use super::taskrun::{condition, condition_json, is_done};
use super::vars::{self, Val};
use super::{pipelineruns, pipelines, taskruns};
use crate::kube::{EventType, Store, now};
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Tekton's skipping reasons.
pub const WHEN_SKIP: &str = "When Expressions evaluated to false";
pub const PARENT_SKIP: &str = "Parent Tasks were skipped";
pub const MISSING_RESULTS_SKIP: &str = "Results were missing";
pub const STOPPING_SKIP: &str = "PipelineRun was stopping";
pub const CANCELLED_SKIP: &str = "PipelineRun was gracefully cancelled";
pub const STOPPED_SKIP: &str = "PipelineRun was gracefully stopped";
pub const TIMEOUT_SKIP: &str = "PipelineRun timeout has been reached";
pub const TASKS_TIMEOUT_SKIP: &str = "PipelineRun Tasks timeout has been reached";
pub const FINALLY_TIMEOUT_SKIP: &str = "PipelineRun Finally timeout has been reached";
pub const EMPTY_MATRIX_SKIP: &str = "Matrix Parameters have an empty array";

/// Watches PipelineRuns in every namespace and executes the new ones.
pub(super) async fn control(store: Arc<Store>) {
    let mut events = store.watch(&pipelineruns(), None, Some(0));
    let mut active: HashSet<(String, String)> = HashSet::new();
    let mut running = JoinSet::new();
    while let Some((_, event)) = events.recv().await {
        while let Some(Ok(key)) = running.try_join_next() {
            active.remove(&key);
        }
        let key = (event.namespace.clone(), event.name().to_owned());
        if event.kind == EventType::Added && !is_done(&event.object) && active.insert(key.clone()) {
            let store = store.clone();
            running.spawn(async move {
                Executor::run(store, &key.0, &key.1).await;
                key
            });
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Pending,
    Running,
    Succeeded,
    Failed,
    Cancelled,
    Skipped(String),
}

impl State {
    fn is_done(&self) -> bool {
        !matches!(self, State::Pending | State::Running)
    }
}

struct Executor {
    store: Arc<Store>,
    namespace: String,
    name: String,
    uid: Value,
    pipeline: String,
    spec: Value,
    params: HashMap<String, Val>,
    /// TaskRun names per pipeline task, in creation order.
    created: Vec<(String, String)>,
    /// (task, reason, when expressions), in the order they were skipped.
    skipped: Vec<(String, String, Value)>,
    /// A run-level failure (reason, message) that stops the DAG.
    failure: Option<(String, String)>,
    started: Instant,
    started_at: String,
    finally_started: Option<(Instant, String)>,
    cancelled: HashSet<String>,
    written: Value,
}

impl Executor {
    async fn run(store: Arc<Store>, namespace: &str, name: &str) {
        let mut trs = store.watch(&taskruns(), Some(namespace), None);
        let mut prs = store.watch(&pipelineruns(), Some(namespace), None);
        let Some(pr) = store.get(&pipelineruns(), namespace, name) else {
            return;
        };
        let mut ex = Executor {
            store: store.clone(),
            namespace: namespace.to_owned(),
            name: name.to_owned(),
            uid: pr["metadata"]["uid"].clone(),
            pipeline: String::new(),
            spec: Value::Null,
            params: HashMap::new(),
            created: Vec::new(),
            skipped: Vec::new(),
            failure: None,
            started: Instant::now(),
            started_at: pr["status"]["startTime"]
                .as_str()
                .map_or_else(now, str::to_owned),
            finally_started: None,
            cancelled: HashSet::new(),
            written: Value::Null,
        };
        if let Err((reason, message)) = ex.resolve(&pr) {
            store.update(&pipelineruns(), namespace, name, |pr| {
                pr["status"]["conditions"] = condition_json("False", &reason, &message);
                pr["status"]["startTime"] = now().into();
                pr["status"]["completionTime"] = now().into();
            });
            return;
        }
        ex.recover(&pr);
        loop {
            let Some(pr) = store.get(&pipelineruns(), namespace, name) else {
                return;
            };
            let Some(wake) = ex.reconcile(&pr) else {
                return;
            };
            let sleep = async {
                match wake {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                e = trs.recv() => if e.is_none() { return },
                e = prs.recv() => if e.is_none() { return },
                _ = sleep => {}
            }
            while trs.try_recv().is_ok() || prs.try_recv().is_ok() {}
        }
    }

    /// The pipeline spec and parameter values, with pipeline parameters and
    /// `context.pipelineRun.*` already substituted throughout (as Tekton
    /// does, embedded task specs included).
    fn resolve(&mut self, pr: &Value) -> Result<(), (String, String)> {
        let spec = match (
            &pr["spec"]["pipelineSpec"],
            pr["spec"]["pipelineRef"]["name"].as_str(),
        ) {
            (Value::Object(_), _) => pr["spec"]["pipelineSpec"].clone(),
            (_, Some(name)) => {
                self.pipeline = name.to_owned();
                match self.store.get(&pipelines(), &self.namespace, name) {
                    Some(p) => p["spec"].clone(),
                    None => {
                        return Err((
                            "CouldntGetPipeline".into(),
                            format!(
                                "Error retrieving pipeline for pipelinerun {}/{}: pipelines.tekton.dev \"{name}\" not found",
                                self.namespace, self.name
                            ),
                        ));
                    }
                }
            }
            _ => {
                return Err((
                    "PipelineRunValidationFailed".into(),
                    "no pipelineRef or pipelineSpec".into(),
                ));
            }
        };
        if self.pipeline.is_empty() {
            self.pipeline = self.name.clone();
        }
        for p in spec["params"].as_array().into_iter().flatten() {
            if let (Some(n), Some(d)) = (p["name"].as_str(), p.get("default")) {
                self.params.insert(format!("params.{n}"), Val::from_json(d));
            }
        }
        for p in pr["spec"]["params"].as_array().into_iter().flatten() {
            if let Some(n) = p["name"].as_str() {
                self.params
                    .insert(format!("params.{n}"), Val::from_json(&p["value"]));
            }
        }
        for p in spec["params"].as_array().into_iter().flatten() {
            let n = p["name"].as_str().unwrap_or_default();
            if !self.params.contains_key(&format!("params.{n}")) {
                return Err((
                    "ParameterMissing".into(),
                    format!("PipelineRun missing parameters: [{n}]"),
                ));
            }
        }
        let mut vars = self.params.clone();
        for (k, v) in [
            ("context.pipelineRun.name", self.name.clone()),
            ("context.pipelineRun.namespace", self.namespace.clone()),
            (
                "context.pipelineRun.uid",
                self.uid.as_str().unwrap_or_default().to_owned(),
            ),
            ("context.pipeline.name", self.pipeline.clone()),
        ] {
            vars.insert(k.to_owned(), Val::Str(v));
        }
        let mut spec = spec;
        vars::substitute_json(&mut spec, &|k| vars.get(k).cloned());
        self.spec = spec;
        Ok(())
    }

    /// Picks up what an earlier controller created for this run.
    fn recover(&mut self, pr: &Value) {
        for c in pr["status"]["childReferences"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let (Some(n), Some(t)) = (c["name"].as_str(), c["pipelineTaskName"].as_str()) {
                self.created.push((t.to_owned(), n.to_owned()));
            }
        }
        for s in pr["status"]["skippedTasks"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let (Some(n), Some(r)) = (s["name"].as_str(), s["reason"].as_str()) {
                self.skipped
                    .push((n.to_owned(), r.to_owned(), s["whenExpressions"].clone()));
            }
        }
    }

    fn tasks(&self, section: &str) -> Vec<Value> {
        self.spec[section].as_array().cloned().unwrap_or_default()
    }

    fn taskrun_objects(&self, task: &str) -> Vec<Value> {
        self.created
            .iter()
            .filter(|(t, _)| t == task)
            .filter_map(|(_, n)| self.store.get(&taskruns(), &self.namespace, n))
            .collect()
    }

    fn state(&self, task: &str) -> State {
        if let Some((_, reason, _)) = self.skipped.iter().find(|(t, _, _)| t == task) {
            return State::Skipped(reason.clone());
        }
        let runs = self.taskrun_objects(task);
        if runs.is_empty() {
            return if self.created.iter().any(|(t, _)| t == task) {
                State::Running
            } else {
                State::Pending
            };
        }
        if runs.iter().any(|r| !is_done(r)) {
            return State::Running;
        }
        let reasons: Vec<&str> = runs
            .iter()
            .map(|r| {
                condition(r)
                    .and_then(|c| c["reason"].as_str())
                    .unwrap_or_default()
            })
            .collect();
        if runs
            .iter()
            .all(|r| condition(r).is_some_and(|c| c["status"] == "True"))
        {
            State::Succeeded
        } else if reasons.contains(&"TaskRunCancelled") {
            State::Cancelled
        } else {
            State::Failed
        }
    }

    /// A result of a finished task: a string, or for a matrix task the
    /// array of its TaskRuns' values. `None` when missing.
    fn result(&self, task: &str, result: &str) -> Option<Val> {
        if self.state(task) != State::Succeeded {
            return None;
        }
        let runs = self.taskrun_objects(task);
        let values: Vec<Val> = runs
            .iter()
            .map(|r| {
                r["status"]["results"]
                    .as_array()?
                    .iter()
                    .find(|x| x["name"] == result)
                    .map(|x| Val::from_json(&x["value"]))
            })
            .collect::<Option<_>>()?;
        let matrix = self
            .task_named(task)
            .is_some_and(|t| t.get("matrix").is_some());
        if !matrix {
            return values.into_iter().next();
        }
        Some(Val::Arr(
            values
                .into_iter()
                .map(|v| match v {
                    Val::Str(s) => s,
                    Val::Arr(a) => serde_json::to_string(&a).unwrap_or_default(),
                })
                .collect(),
        ))
    }

    fn task_named(&self, name: &str) -> Option<Value> {
        self.tasks("tasks")
            .into_iter()
            .chain(self.tasks("finally"))
            .find(|t| t["name"] == name)
    }

    /// Variables a pipeline task reads: results, `tasks.status` and
    /// `tasks.T.status`/`reason`.
    fn lookup(&self, key: &str) -> Option<Val> {
        let parts: Vec<&str> = key.splitn(4, '.').collect();
        match parts.as_slice() {
            ["tasks", "status"] => Some(Val::Str(self.aggregate_status())),
            ["tasks", task, "status"] => Some(Val::Str(
                match self.state(task) {
                    State::Succeeded => "Succeeded",
                    State::Failed | State::Cancelled => "Failed",
                    _ => "None",
                }
                .into(),
            )),
            ["tasks", task, "reason"] => Some(Val::Str(
                self.taskrun_objects(task)
                    .first()
                    .and_then(|r| condition(r)?["reason"].as_str().map(str::to_owned))
                    .unwrap_or_default(),
            )),
            ["tasks", task, "results", result] => self.result(task, result),
            _ => None,
        }
    }

    fn aggregate_status(&self) -> String {
        let states: Vec<State> = self
            .tasks("tasks")
            .iter()
            .map(|t| self.state(t["name"].as_str().unwrap_or_default()))
            .collect();
        if states.iter().any(|s| !s.is_done()) {
            "None"
        } else if states
            .iter()
            .any(|s| matches!(s, State::Failed | State::Cancelled))
        {
            "Failed"
        } else if states.iter().any(|s| matches!(s, State::Skipped(_))) {
            "Completed"
        } else {
            "Succeeded"
        }
        .into()
    }

    fn skip(&mut self, task: &str, reason: &str, when: Value) {
        self.skipped
            .push((task.to_owned(), reason.to_owned(), when));
    }

    /// One look at the run; `None` when it is finished, else when to look
    /// again at the latest (a timeout), if ever.
    fn reconcile(&mut self, pr: &Value) -> Option<Option<Instant>> {
        if is_done(pr) {
            return None;
        }
        let mode = pr["spec"]["status"].as_str().unwrap_or_default().to_owned();
        if mode == "PipelineRunPending" && self.created.is_empty() {
            self.write(pr, json!({"conditions": condition_json("Unknown", "PipelineRunPending", "PipelineRun is pending")}));
            return Some(None);
        }
        let timeouts = &pr["spec"]["timeouts"];
        let limit = |field: &str, default: Option<Duration>| match timeouts[field].as_str() {
            Some(t) => vars::go_duration(t).filter(|d| !d.is_zero()),
            None => default,
        };
        let pipeline_limit = limit("pipeline", Some(DEFAULT_TIMEOUT));
        let tasks_limit = limit("tasks", None);
        let finally_limit = limit("finally", None);
        let elapsed = self.started.elapsed();
        let pipeline_out = pipeline_limit.is_some_and(|t| elapsed >= t);
        let tasks_out = tasks_limit.is_some_and(|t| elapsed >= t);
        let finally_out = match (&self.finally_started, finally_limit) {
            (Some((at, _)), Some(t)) => at.elapsed() >= t,
            _ => false,
        };
        let dag: Vec<Value> = self.tasks("tasks");
        let finally: Vec<Value> = self.tasks("finally");
        let dag_names: Vec<String> = dag
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect();

        // Stop what must stop.
        let hard = mode == "Cancelled" || pipeline_out;
        let message = if pipeline_out || tasks_out || finally_out {
            "TaskRun cancelled as the PipelineRun it belongs to has timed out."
        } else {
            "TaskRun cancelled as the PipelineRun it belongs to has been cancelled."
        };
        for (task, run) in self.created.clone() {
            let in_dag = dag_names.contains(&task);
            let stop = hard
                || (in_dag && (mode == "CancelledRunFinally" || tasks_out))
                || (!in_dag && finally_out);
            if stop && !self.cancelled.contains(&run) {
                self.cancelled.insert(run.clone());
                self.store.update(&taskruns(), &self.namespace, &run, |tr| {
                    if !is_done(tr) {
                        tr["spec"]["status"] = "TaskRunCancelled".into();
                        tr["spec"]["statusMessage"] = message.into();
                    }
                });
            }
        }

        // The DAG.
        let stop_reason = if mode == "Cancelled" {
            Some(STOPPING_SKIP)
        } else if pipeline_out {
            Some(TIMEOUT_SKIP)
        } else if tasks_out {
            Some(TASKS_TIMEOUT_SKIP)
        } else if mode == "CancelledRunFinally" {
            Some(CANCELLED_SKIP)
        } else if mode == "StoppedRunFinally" {
            Some(STOPPED_SKIP)
        } else if self.failure.is_some()
            || dag_names
                .iter()
                .any(|t| matches!(self.state(t), State::Failed | State::Cancelled))
        {
            Some(STOPPING_SKIP)
        } else {
            None
        };
        loop {
            let mut progressed = false;
            for task in &dag {
                let name = task["name"].as_str().unwrap_or_default();
                if self.state(name) != State::Pending {
                    continue;
                }
                if let Some(reason) = stop_reason.or(self.failure.as_ref().map(|_| STOPPING_SKIP)) {
                    self.skip(name, reason, Value::Null);
                    progressed = true;
                    continue;
                }
                let parents = parents(task);
                if parents.iter().any(|p| !self.state(p).is_done()) {
                    continue;
                }
                progressed = true;
                self.start_task(task, &parents, "tasks");
            }
            if !progressed {
                break;
            }
        }
        let dag_done = dag_names.iter().all(|t| self.state(t).is_done());

        // Finally, once the DAG is done.
        if dag_done && !finally.is_empty() {
            if self.finally_started.is_none() {
                self.finally_started = Some((Instant::now(), now()));
            }
            for task in &finally {
                let name = task["name"].as_str().unwrap_or_default();
                if self.state(name) != State::Pending {
                    continue;
                }
                if hard {
                    let reason = if pipeline_out {
                        TIMEOUT_SKIP
                    } else {
                        STOPPING_SKIP
                    };
                    self.skip(name, reason, Value::Null);
                } else if finally_out {
                    self.skip(name, FINALLY_TIMEOUT_SKIP, Value::Null);
                } else {
                    self.start_task(task, &parents(task), "finally");
                }
            }
        }
        let all: Vec<String> = dag_names
            .iter()
            .cloned()
            .chain(
                finally
                    .iter()
                    .map(|t| t["name"].as_str().unwrap_or_default().to_owned()),
            )
            .collect();
        let states: Vec<State> = all.iter().map(|t| self.state(t)).collect();
        let count = |f: &dyn Fn(&State) -> bool| states.iter().filter(|s| f(s)).count();
        let failed = count(&|s| *s == State::Failed);
        let cancelled = count(&|s| *s == State::Cancelled);
        let skipped = count(&|s| matches!(s, State::Skipped(_)));
        let completed =
            count(&|s| matches!(s, State::Succeeded | State::Failed | State::Cancelled));
        let incomplete = states.len() - completed - skipped;
        let done = incomplete == 0;
        let mut status = Map::new();
        if done {
            let cancel_mode = matches!(
                mode.as_str(),
                "Cancelled" | "CancelledRunFinally" | "StoppedRunFinally"
            );
            let summary = format!(
                "Tasks Completed: {completed} (Failed: {failed}, Cancelled {cancelled}), Skipped: {skipped}"
            );
            let (state, reason, message) = if let Some((reason, message)) = &self.failure {
                ("False", reason.clone(), message.clone())
            } else if pipeline_out || tasks_out {
                let limit = timeouts["pipeline"].as_str().unwrap_or("1h0m0s");
                (
                    "False",
                    "PipelineRunTimeout".into(),
                    format!(
                        "PipelineRun {:?} failed to finish within {limit:?}",
                        self.name
                    ),
                )
            } else if failed > 0 {
                ("False", "Failed".into(), summary)
            } else if cancel_mode {
                (
                    "False",
                    "Cancelled".into(),
                    format!("PipelineRun {:?} was cancelled", self.name),
                )
            } else if cancelled > 0 {
                ("False", "Cancelled".into(), summary)
            } else if skipped > 0 {
                ("True", "Completed".into(), summary)
            } else {
                ("True", "Succeeded".into(), summary)
            };
            status.insert(
                "conditions".into(),
                condition_json(state, &reason, &message),
            );
            status.insert("completionTime".into(), now().into());
        } else {
            let reason = match mode.as_str() {
                "CancelledRunFinally" => "CancelledRunningFinally",
                "StoppedRunFinally" => "StoppedRunningFinally",
                _ if stop_reason.is_some() => "PipelineRunStopping",
                _ => "Running",
            };
            let message = format!(
                "Tasks Completed: {completed} (Failed: {failed}, Cancelled {cancelled}), Incomplete: {incomplete}, Skipped: {skipped}"
            );
            status.insert(
                "conditions".into(),
                condition_json("Unknown", reason, &message),
            );
        }
        self.write(pr, Value::Object(status));
        if done {
            return None;
        }
        let mut wake: Option<Instant> = None;
        let mut at = |base: Instant, limit: Option<Duration>| {
            if let Some(l) = limit {
                let t = base + l;
                wake = Some(wake.map_or(t, |w: Instant| w.min(t)));
            }
        };
        at(self.started, pipeline_limit);
        at(self.started, tasks_limit);
        if let Some((f, _)) = &self.finally_started {
            at(*f, finally_limit);
        }
        Some(wake)
    }

    /// Decides a ready task: skip it, or create its TaskRun(s).
    fn start_task(&mut self, task: &Value, parents: &BTreeSet<String>, member_of: &str) {
        let name = task["name"].as_str().unwrap_or_default().to_owned();
        let is_finally = member_of == "finally";
        let reads = result_refs(task);
        if !is_finally {
            let skipped_parent = parents.iter().any(|p| match self.state(p) {
                State::Skipped(r) => r != WHEN_SKIP,
                _ => false,
            });
            if skipped_parent {
                return self.skip(&name, PARENT_SKIP, Value::Null);
            }
        }
        for (t, r) in &reads {
            if self.result(t, r).is_none() {
                let ran = matches!(self.state(t), State::Succeeded);
                if ran && !is_finally {
                    self.failure = Some((
                        "InvalidTaskResultReference".into(),
                        format!("Could not find result with name {r} for task {t}"),
                    ));
                    return self.skip(&name, STOPPING_SKIP, Value::Null);
                }
                return self.skip(&name, MISSING_RESULTS_SKIP, Value::Null);
            }
        }
        let lookup = |k: &str| self.lookup(k);
        let mut resolved = task.clone();
        // Results (and finally's statuses) substitute everywhere, the
        // embedded task spec included.
        vars::substitute_json(&mut resolved, &lookup);
        let when = resolved.get("when").cloned().unwrap_or(Value::Null);
        for expr in when.as_array().into_iter().flatten() {
            match vars::when_holds(expr) {
                Ok(true) => {}
                Ok(false) => return self.skip(&name, WHEN_SKIP, when.clone()),
                Err(e) => {
                    self.failure =
                        Some(("InvalidWhenExpression".into(), format!("task {name}: {e}")));
                    return self.skip(&name, STOPPING_SKIP, Value::Null);
                }
            }
        }
        let combos = match resolved.get("matrix") {
            None => vec![None],
            Some(m) => {
                let params: Vec<(String, Val)> = m["params"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| {
                        (
                            p["name"].as_str().unwrap_or_default().to_owned(),
                            Val::from_json(&p["value"]),
                        )
                    })
                    .collect();
                if params
                    .iter()
                    .any(|(_, v)| matches!(v, Val::Arr(a) if a.is_empty()))
                {
                    return self.skip(&name, EMPTY_MATRIX_SKIP, Value::Null);
                }
                let include: Vec<Vec<(String, String)>> = m["include"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|i| {
                        i["params"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|p| {
                                let v = match Val::from_json(&p["value"]) {
                                    Val::Str(s) => s,
                                    Val::Arr(a) => serde_json::to_string(&a).unwrap_or_default(),
                                };
                                (p["name"].as_str().unwrap_or_default().to_owned(), v)
                            })
                            .collect()
                    })
                    .collect();
                vars::combinations(&params, &include)
                    .into_iter()
                    .map(Some)
                    .collect()
            }
        };
        let matrix = combos.len() > 1 || resolved.get("matrix").is_some();
        for (i, combo) in combos.into_iter().enumerate() {
            let suffix = if matrix {
                format!("{name}-{i}")
            } else {
                name.clone()
            };
            let run = child_name(&self.name, &suffix);
            let pr = self
                .store
                .get(&pipelineruns(), &self.namespace, &self.name)
                .unwrap_or_default();
            let object = children::taskrun(&pr, &self.pipeline, &resolved, &run, combo, member_of);
            if let Err(e) = self.store.create(&taskruns(), &self.namespace, object) {
                tracing::warn!(taskrun = run, error = %e.message, "cannot create a TaskRun");
            }
            self.created.push((name.clone(), run));
        }
    }

    /// Writes the status when it changed (timestamps aside).
    fn write(&mut self, pr: &Value, mut status: Value) {
        let children: Vec<Value> = self
            .created
            .iter()
            .map(|(t, n)| json!({"apiVersion": "tekton.dev/v1", "kind": "TaskRun", "name": n, "pipelineTaskName": t}))
            .collect();
        let skipped: Vec<Value> = self
            .skipped
            .iter()
            .map(|(t, r, w)| {
                let mut s = json!({"name": t, "reason": r});
                if !w.is_null() {
                    s["whenExpressions"] = w.clone();
                }
                s
            })
            .collect();
        if !children.is_empty() {
            status["childReferences"] = children.into();
        }
        if !skipped.is_empty() {
            status["skippedTasks"] = skipped.into();
        }
        status["pipelineSpec"] = self.spec.clone();
        let comparable = {
            let mut c = status.clone();
            c["conditions"][0]["lastTransitionTime"] = Value::Null;
            c["completionTime"] = Value::Null;
            c
        };
        if comparable == self.written && pr["status"]["conditions"].is_array() {
            return;
        }
        self.written = comparable;
        status["startTime"] = self.started_at.clone().into();
        if let Some((_, at)) = &self.finally_started {
            status["finallyStartTime"] = at.clone().into();
        }
        self.store
            .update(&pipelineruns(), &self.namespace, &self.name, |pr| {
                pr["status"] = status
            });
    }
}
