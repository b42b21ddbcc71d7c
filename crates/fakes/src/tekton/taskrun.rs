//! The TaskRun controller: runs a TaskRun's steps, in order, in one pod
//! (`<taskrun>-pod`, then `-pod-retry1` … per retry) through the kubelet,
//! and writes Tekton's status: conditions, `podName`, times, `steps[]`,
//! `results` and `retriesStatus`. `spec.timeout` (default 60m, `0s`: none)
//! applies to each attempt; `spec.status: TaskRunCancelled` kills the pod.
//!
//! Inside the pod, Tekton's `/tekton/results/R` is `/tmp/tekton/results/R`
//! (the pod's private `/tmp`), an `emptyDir` workspace is
//! `/tmp/tekton/workspaces/W`, and a claim is a host directory shared by
//! every pod of the namespace that binds it. Step images are ignored.

use super::vars::{self, Val};
use super::{pods, taskruns, tasks};
use crate::kube::{EventType, Store, now};
use crate::kubelet::{Container, Kubelet};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::fmt::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::task::JoinSet;

/// Tekton's default TaskRun timeout.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(3600);

/// Watches TaskRuns in every namespace and runs the new ones.
pub(super) async fn control(store: Arc<Store>, kubelet: Arc<Kubelet>) {
    let mut events = store.watch(&taskruns(), None, Some(0));
    let mut cancels: HashMap<(String, String), watch::Sender<bool>> = HashMap::new();
    let mut running = JoinSet::new();
    while let Some((_, event)) = events.recv().await {
        while let Some(Ok(key)) = running.try_join_next() {
            cancels.remove(&key);
        }
        let key = (event.namespace.clone(), event.name().to_owned());
        let cancelled = event.object["spec"]["status"] == "TaskRunCancelled";
        match event.kind {
            EventType::Added if !is_done(&event.object) && !cancels.contains_key(&key) => {
                let (tx, rx) = watch::channel(cancelled);
                cancels.insert(key.clone(), tx);
                let run = Execution {
                    store: store.clone(),
                    kubelet: kubelet.clone(),
                    namespace: key.0.clone(),
                    name: key.1.clone(),
                    cancel: rx,
                };
                running.spawn(async move {
                    run.execute().await;
                    key
                });
            }
            EventType::Modified | EventType::Deleted
                if cancelled || event.kind == EventType::Deleted =>
            {
                if let Some(tx) = cancels.get(&key) {
                    let _ = tx.send(true);
                }
            }
            _ => {}
        }
    }
}

/// Whether a TaskRun (or PipelineRun) has a final `Succeeded` condition.
pub(super) fn is_done(object: &Value) -> bool {
    condition(object).is_some_and(|c| c["status"] != "Unknown")
}

/// The `Succeeded` condition.
pub(super) fn condition(object: &Value) -> Option<&Value> {
    object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Succeeded")
}

pub(super) fn condition_json(status: &str, reason: &str, message: &str) -> Value {
    json!([{
        "type": "Succeeded",
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now(),
    }])
}

/// How one attempt ended.
enum End {
    Exited,
    TimedOut,
    Cancelled,
}

struct Execution {
    store: Arc<Store>,
    kubelet: Arc<Kubelet>,
    namespace: String,
    name: String,
    cancel: watch::Receiver<bool>,
}

impl Execution {
    fn update(&self, change: impl FnOnce(&mut Value)) -> Option<Value> {
        self.store
            .update(&taskruns(), &self.namespace, &self.name, change)
    }

    fn fail(&self, reason: &str, message: &str) {
        self.update(|tr| {
            tr["status"]["conditions"] = condition_json("False", reason, message);
            tr["status"]["completionTime"] = now().into();
        });
    }

    async fn execute(mut self) {
        let Some(tr) = self.store.get(&taskruns(), &self.namespace, &self.name) else {
            return;
        };
        let spec = tr["spec"].clone();
        let task_spec = match (&spec["taskSpec"], spec["taskRef"]["name"].as_str()) {
            (Value::Object(_), _) => spec["taskSpec"].clone(),
            (_, Some(task)) => match self.store.get(&tasks(), &self.namespace, task) {
                Some(t) => t["spec"].clone(),
                None => {
                    let message = format!("tasks.tekton.dev \"{task}\" not found");
                    return self.fail("CouldntGetTask", &message);
                }
            },
            _ => {
                return self.fail(
                    "TaskRunValidationFailed",
                    "the TaskRun has no taskSpec or taskRef",
                );
            }
        };
        let retries = spec["retries"].as_u64().unwrap_or(0);
        let timeout_text = spec["timeout"].as_str().unwrap_or("1h0m0s").to_owned();
        let timeout = match vars::go_duration(&timeout_text) {
            Some(Duration::ZERO) => None,
            Some(d) => Some(d),
            None if spec["timeout"].is_null() => Some(DEFAULT_TIMEOUT),
            None => {
                let message = format!("invalid timeout {timeout_text:?}");
                return self.fail("TaskRunValidationFailed", &message);
            }
        };
        let mut retries_status: Vec<Value> = Vec::new();
        for attempt in 0..=retries {
            let pod = if attempt == 0 {
                format!("{}-pod", self.name)
            } else {
                format!("{}-pod-retry{attempt}", self.name)
            };
            let start = now();
            let history = retries_status.clone();
            let spec_copy = task_spec.clone();
            let written = self.update(|tr| {
                tr["status"] = json!({
                    "podName": pod,
                    "startTime": start,
                    "conditions": condition_json("Unknown", "Running", "Not all Steps in the Task have finished executing"),
                    "taskSpec": spec_copy,
                });
                if !history.is_empty() {
                    tr["status"]["retriesStatus"] = history.into();
                }
            });
            let Some(tr) = written else { return };
            let (mut status, end) = self.attempt(&tr, &task_spec, &pod, attempt, timeout).await;
            status["startTime"] = start.into();
            status["completionTime"] = now().into();
            let (state, reason, message) = match end {
                End::Cancelled => {
                    let why = tr["spec"]["statusMessage"].as_str().unwrap_or_default();
                    let latest = self.store.get(&taskruns(), &self.namespace, &self.name);
                    let why = latest
                        .as_ref()
                        .and_then(|t| t["spec"]["statusMessage"].as_str())
                        .unwrap_or(why);
                    (
                        "False",
                        "TaskRunCancelled",
                        format!("TaskRun {:?} was cancelled. {why}", self.name),
                    )
                }
                End::TimedOut => (
                    "False",
                    "TaskRunTimeout",
                    format!(
                        "TaskRun {:?} failed to finish within {timeout_text:?}",
                        self.name
                    ),
                ),
                End::Exited => match failed_step(&status) {
                    None => (
                        "True",
                        "Succeeded",
                        "All Steps have completed executing".to_owned(),
                    ),
                    Some(message) => ("False", "Failed", message),
                },
            };
            status["conditions"] = condition_json(state, reason, &message);
            status.as_object_mut().map(|s| s.remove("failure"));
            let retry = state == "False" && !matches!(end, End::Cancelled) && attempt < retries;
            if retry {
                status.as_object_mut().map(|s| s.remove("taskSpec"));
                retries_status.push(status);
                continue;
            }
            if !retries_status.is_empty() {
                status["retriesStatus"] = retries_status.into();
            }
            self.update(|tr| tr["status"] = status);
            return;
        }
    }

    /// Runs one pod; returns the attempt's status and how it ended.
    async fn attempt(
        &mut self,
        tr: &Value,
        task_spec: &Value,
        pod: &str,
        attempt: u64,
        timeout: Option<Duration>,
    ) -> (Value, End) {
        let ns = self.namespace.clone();
        let tmp = self.kubelet.tmp(&ns, pod);
        let steps = self.prepare(tr, task_spec, pod, attempt);
        let steps = match steps {
            Ok(steps) => steps,
            Err(message) => {
                return (
                    json!({"podName": pod, "steps": [], "failure": message}),
                    End::Exited,
                );
            }
        };
        self.create_pod(tr, pod, &steps);
        let container = Container {
            argv: vec!["sh".into(), "/tmp/tekton/driver.sh".into()],
            ..Container::default()
        };
        let kubelet = self.kubelet.clone();
        let (ns2, pod2) = (ns.clone(), pod.to_owned());
        let mut run = tokio::spawn(async move { kubelet.run(&ns2, &pod2, &container).await });
        // A controller that stops (a test ending) takes its pods along.
        let mut guard = KillOnDrop {
            kubelet: &self.kubelet,
            namespace: &ns,
            pod,
            armed: true,
        };
        let deadline = async {
            match timeout {
                Some(t) => tokio::time::sleep(t).await,
                None => std::future::pending().await,
            }
        };
        let mut cancel = self.cancel.clone();
        let mut end = End::Exited;
        let exit = tokio::select! {
            exit = &mut run => exit,
            _ = deadline => {
                end = End::TimedOut;
                self.kubelet.kill(&ns, pod);
                run.await
            }
            _ = async { cancel.wait_for(|c| *c).await.is_ok() } => {
                end = End::Cancelled;
                self.kubelet.kill(&ns, pod);
                run.await
            }
        };
        let exit = match exit {
            Ok(Ok(exit)) => Some(exit),
            Ok(Err(e)) => {
                tracing::warn!(error = %e, pod, "the kubelet could not run the pod");
                None
            }
            Err(_) => None,
        };
        guard.armed = false;
        let finished = now();
        let mut states = Vec::new();
        let mut ran_out = false;
        for (i, step) in steps.iter().enumerate() {
            let code = std::fs::read_to_string(tmp.join(format!("tekton/steps/{i}")))
                .ok()
                .and_then(|c| c.trim().parse::<i64>().ok());
            let (code, reason) = match code {
                Some(0) => (0, "Completed"),
                Some(124) if step.timeout.is_some() => (124, "TimeoutExceeded"),
                Some(c) => (c, "Error"),
                None if ran_out => (1, "Skipped"),
                None => {
                    ran_out = true;
                    match end {
                        End::Cancelled => (137, "TaskRunCancelled"),
                        End::TimedOut => (137, "TaskRunTimeout"),
                        End::Exited => (exit.as_ref().map_or(1, |e| i64::from(e.code)), "Error"),
                    }
                }
            };
            if code != 0 {
                ran_out = true;
            }
            states.push(json!({
                "name": step.name,
                "container": format!("step-{}", step.name),
                "terminated": {
                    "exitCode": code,
                    "reason": if code == 0 { "Completed" } else { "Error" },
                    "finishedAt": finished,
                },
                "terminationReason": reason,
            }));
        }
        let mut status = json!({"podName": pod, "steps": states});
        let results = read_results(task_spec, &tmp.join("tekton/results"));
        if !results.is_empty() {
            status["results"] = results.into();
        }
        if exit.is_none() {
            status["failure"] = "the pod could not be started".into();
        }
        let phase = if matches!(end, End::Exited) && failed_step(&status).is_none() {
            "Succeeded"
        } else {
            "Failed"
        };
        self.store
            .update(&pods(), &ns, pod, |p| p["status"]["phase"] = phase.into());
        (status, end)
    }

    /// Writes the pod's steps and driver script; returns the steps.
    fn prepare(
        &self,
        tr: &Value,
        task_spec: &Value,
        pod: &str,
        attempt: u64,
    ) -> Result<Vec<StepPlan>, String> {
        let ns = &self.namespace;
        let tmp = self.kubelet.tmp(ns, pod);
        for dir in ["tekton/results", "tekton/scripts", "tekton/steps"] {
            std::fs::create_dir_all(tmp.join(dir)).map_err(|e| e.to_string())?;
        }
        let mut values: HashMap<String, Val> = HashMap::new();
        for p in task_spec["params"].as_array().into_iter().flatten() {
            if let (Some(name), Some(default)) = (p["name"].as_str(), p.get("default")) {
                values.insert(format!("params.{name}"), Val::from_json(default));
            }
        }
        for p in tr["spec"]["params"].as_array().into_iter().flatten() {
            if let Some(name) = p["name"].as_str() {
                values.insert(format!("params.{name}"), Val::from_json(&p["value"]));
            }
        }
        for r in task_spec["results"].as_array().into_iter().flatten() {
            if let Some(name) = r["name"].as_str() {
                let path = format!("/tmp/tekton/results/{name}");
                values.insert(format!("results.{name}.path"), Val::Str(path));
            }
        }
        for w in tr["spec"]["workspaces"].as_array().into_iter().flatten() {
            let Some(name) = w["name"].as_str() else {
                continue;
            };
            let (path, claim) = match w["persistentVolumeClaim"]["claimName"].as_str() {
                Some(claim) => (self.claim_dir(claim), claim.to_owned()),
                None => (tmp.join("tekton/workspaces").join(name), String::new()),
            };
            std::fs::create_dir_all(&path).map_err(|e| e.to_string())?;
            let inside = if claim.is_empty() {
                format!("/tmp/tekton/workspaces/{name}")
            } else {
                path.to_string_lossy().into_owned()
            };
            let sub = w["subPath"]
                .as_str()
                .map(|s| format!("/{s}"))
                .unwrap_or_default();
            values.insert(
                format!("workspaces.{name}.path"),
                Val::Str(format!("{inside}{sub}")),
            );
            values.insert(format!("workspaces.{name}.bound"), Val::Str("true".into()));
            values.insert(format!("workspaces.{name}.claim"), Val::Str(claim));
        }
        let meta = &tr["metadata"];
        let context = [
            ("context.taskRun.name", meta["name"].clone()),
            ("context.taskRun.namespace", meta["namespace"].clone()),
            ("context.taskRun.uid", meta["uid"].clone()),
            (
                "context.task.name",
                tr["spec"]["taskRef"]["name"]
                    .as_str()
                    .or_else(|| meta["labels"]["tekton.dev/pipelineTask"].as_str())
                    .unwrap_or(meta["name"].as_str().unwrap_or_default())
                    .into(),
            ),
            ("context.task.retry-count", attempt.to_string().into()),
        ];
        for (k, v) in context {
            values.insert(
                k.to_owned(),
                Val::Str(v.as_str().unwrap_or_default().to_owned()),
            );
        }
        let lookup = |key: &str| values.get(key).cloned();
        let mut steps = task_spec["steps"].clone();
        vars::substitute_json(&mut steps, &lookup);
        let mut plans = Vec::new();
        let mut driver = String::from(
            "#!/bin/sh\n# Runs a TaskRun's steps in order; a failed step skips the rest.\nrc=0\n",
        );
        for (i, step) in steps.as_array().into_iter().flatten().enumerate() {
            let name = step["name"]
                .as_str()
                .map_or_else(|| format!("unnamed-{i}"), str::to_owned);
            let strings = |field: &str| -> Vec<String> {
                step[field]
                    .as_array()
                    .map(|a| {
                        a.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let mut argv = Vec::new();
            if let Some(script) = step["script"].as_str() {
                let file = format!("tekton/scripts/script-{i}-{name}");
                let body = if script.starts_with("#!") {
                    script.to_owned()
                } else {
                    format!("#!/bin/sh\nset -e\n{script}")
                };
                write_executable(&tmp.join(&file), &body).map_err(|e| e.to_string())?;
                argv.push(format!("/tmp/{file}"));
            } else {
                argv.extend(strings("command"));
                if argv.is_empty() {
                    return Err(format!(
                        "step {name:?} has no command or script; this fake cannot run an image's entrypoint"
                    ));
                }
            }
            argv.extend(strings("args"));
            let timeout = step["timeout"]
                .as_str()
                .and_then(vars::go_duration)
                .filter(|d| !d.is_zero());
            let workdir = step["workingDir"].as_str().unwrap_or("/tmp");
            let mut line = format!("mkdir -p {wd} && cd {wd} && exec env", wd = quote(workdir));
            for e in step["env"].as_array().into_iter().flatten() {
                let value = match self.kubelet.value_from(&self.namespace, e)? {
                    Some(secret) => Some(secret),
                    None => e["value"].as_str().map(str::to_owned),
                };
                if let (Some(k), Some(v)) = (e["name"].as_str(), value) {
                    let _ = write!(line, " {}", quote(&format!("{k}={v}")));
                }
            }
            if let Some(t) = timeout {
                let _ = write!(line, " timeout -k 1 {}", t.as_secs_f64());
            }
            for a in &argv {
                let _ = write!(line, " {}", quote(a));
            }
            let _ = write!(
                driver,
                "if [ \"$rc\" -eq 0 ]; then\n  ( {line} )\n  rc=$?\n  echo \"$rc\" > /tmp/tekton/steps/{i}\nfi\n"
            );
            plans.push(StepPlan {
                name,
                image: step["image"].as_str().unwrap_or_default().to_owned(),
                timeout,
            });
        }
        driver.push_str("exit \"$rc\"\n");
        std::fs::write(tmp.join("tekton/driver.sh"), driver).map_err(|e| e.to_string())?;
        Ok(plans)
    }

    /// The host directory behind a persistent volume claim.
    fn claim_dir(&self, claim: &str) -> PathBuf {
        self.kubelet
            .tmp(&self.namespace, &format!("volumes/{claim}"))
    }

    fn create_pod(&self, tr: &Value, pod: &str, steps: &[StepPlan]) {
        let mut labels = tr["metadata"]["labels"].clone();
        if !labels.is_object() {
            labels = json!({});
        }
        labels["tekton.dev/taskRun"] = self.name.clone().into();
        let containers: Vec<Value> = steps
            .iter()
            .map(|s| json!({"name": format!("step-{}", s.name), "image": s.image}))
            .collect();
        let object = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": pod,
                "labels": labels,
                "ownerReferences": [{
                    "apiVersion": "tekton.dev/v1",
                    "kind": "TaskRun",
                    "name": self.name,
                    "uid": tr["metadata"]["uid"],
                    "controller": true,
                }],
            },
            "spec": {"containers": containers, "restartPolicy": "Never"},
            "status": {"phase": "Running", "startTime": now()},
        });
        if let Err(e) = self.store.create(&pods(), &self.namespace, object) {
            tracing::debug!(pod, error = %e.message, "pod object not created");
        }
    }
}

struct KillOnDrop<'a> {
    kubelet: &'a Kubelet,
    namespace: &'a str,
    pod: &'a str,
    armed: bool,
}

impl Drop for KillOnDrop<'_> {
    fn drop(&mut self) {
        if self.armed {
            self.kubelet.kill(self.namespace, self.pod);
        }
    }
}

struct StepPlan {
    name: String,
    image: String,
    timeout: Option<Duration>,
}

/// Why an attempt failed (`None`: it succeeded), as Tekton words it.
fn failed_step(status: &Value) -> Option<String> {
    if let Some(f) = status["failure"].as_str() {
        return Some(f.to_owned());
    }
    status["steps"].as_array()?.iter().find_map(|s| {
        let code = s["terminated"]["exitCode"].as_i64()?;
        let name = s["name"].as_str().unwrap_or_default();
        match s["terminationReason"].as_str() {
            Some("TimeoutExceeded") => Some(format!(
                "\"step-{name}\" exited because the step exceeded the specified timeout limit"
            )),
            _ if code != 0 => Some(format!("\"step-{name}\" exited with code {code}")),
            _ => None,
        }
    })
}

/// The declared results the steps wrote (arrays as JSON lists).
fn read_results(task_spec: &Value, dir: &std::path::Path) -> Vec<Value> {
    let mut out = Vec::new();
    for r in task_spec["results"].as_array().into_iter().flatten() {
        let Some(name) = r["name"].as_str() else {
            continue;
        };
        let Ok(text) = std::fs::read_to_string(dir.join(name)) else {
            continue;
        };
        let kind = r["type"].as_str().unwrap_or("string");
        let value = match kind {
            "array" => match serde_json::from_str::<Vec<Value>>(&text) {
                Ok(items) => Val::from_json(&Value::Array(items)).to_json(),
                Err(_) => text.into(),
            },
            _ => text.into(),
        };
        out.push(json!({"name": name, "type": kind, "value": value}));
    }
    out
}

fn write_executable(path: &std::path::Path, body: &str) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, body)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
}

/// One POSIX shell word.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}
