//! One attempt of a container or script template: a `v1` Pod in the store
//! run by the kubelet, with input artifacts placed in its `/tmp` before it
//! starts and outputs collected after it ends.

use super::exec::{Art, Call, Inputs, Outcome, Outputs, Source};
use super::text::{self, Scope};
use super::{Halt, NewNode, Run, pods, seconds, text_of};
use crate::kube::now;
use crate::kubelet::Container;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where a script's source is written, inside the pod.
const SCRIPT_PATH: &str = "/tmp/.argo/staging/script";

/// Why the controller killed a pod.
enum Killed {
    Deadline,
    Halt(Halt),
}

pub(super) async fn run_pod(run: &Arc<Run>, call: &Call, tmpl: &Value, inputs: &Inputs) -> Outcome {
    let id = run.add_node(NewNode {
        name: &call.name,
        display: &call.display,
        kind: "Pod",
        template: &call.template,
        phase: "Pending",
        boundary: call.boundary.as_deref(),
        parents: &call.parents,
        message: None,
        inputs: None,
    });
    let pod = text::pod_name(&run.name, &call.template, &call.name);
    let mut outcome = Outcome {
        node: id.clone(),
        phase: "Failed",
        message: None,
        outputs: Outputs::default(),
    };
    let _permit = match &run.pods_at_once {
        Some(s) => Some(s.clone().acquire_owned().await.expect("never closed")),
        None => None,
    };
    if let Some(halt) = run.halted(call.exit) {
        outcome.message = Some(halt.node_message());
        run.finish(&id, &outcome);
        return outcome;
    }
    let scope = pod_scope(run, call, tmpl, inputs, &pod, &id);
    let (container, image) = match prepare(run, tmpl, inputs, &pod, &scope) {
        Ok(c) => c,
        Err(e) => {
            outcome.phase = "Error";
            outcome.message = Some(e);
            run.finish(&id, &outcome);
            return outcome;
        }
    };
    let pod_object = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": pod,
            "labels": pod_labels(run, tmpl),
            "annotations": {
                "workflows.argoproj.io/node-id": id,
                "workflows.argoproj.io/node-name": call.name,
            },
        },
        "spec": {
            "restartPolicy": "Never",
            "containers": [{"name": "main", "image": image, "command": container.argv}],
        },
        "status": {"phase": "Running", "startTime": now()},
    });
    let _ = run.store.create(&pods(), &run.namespace, pod_object);
    run.update(&id, |n| n.phase = "Running");

    let started = Instant::now();
    let deadline = seconds(&tmpl["activeDeadlineSeconds"]).map(Duration::from_secs_f64);
    let mut halt = run.halt.subscribe();
    let exit_handler = call.exit;
    let running = run.kubelet.run(&run.namespace, &pod, &container);
    tokio::pin!(running);
    let mut killed = None;
    let exit = loop {
        tokio::select! {
            exit = &mut running => break exit,
            _ = sleep_for(deadline), if killed.is_none() => {
                killed = Some(Killed::Deadline);
                run.kubelet.kill(&run.namespace, &pod);
            }
            _ = halt.wait_for(|h: &Halt| h.stops(exit_handler)), if killed.is_none() => {
                killed = Some(Killed::Halt(*run.halt.borrow()));
                run.kubelet.kill(&run.namespace, &pod);
            }
        }
    };
    let wall = started.elapsed();
    match exit {
        Err(e) => {
            outcome.phase = "Error";
            outcome.message = Some(format!("failed to start the container: {e}"));
        }
        Ok(exit) => {
            outcome.outputs.exit_code = Some(exit.code.to_string());
            let stdout = exit.stdout.strip_suffix('\n').unwrap_or(&exit.stdout);
            outcome.outputs.result = Some(stdout.to_owned());
            outcome.message = match killed {
                Some(Killed::Deadline) => {
                    Some("Pod was active on the node longer than the specified deadline".into())
                }
                Some(Killed::Halt(h)) => Some(h.node_message()),
                None if exit.code == 0 => None,
                None if exit.code == 137 => Some("OOMKilled (exit code 137)".into()),
                None => Some(format!("Error (exit code {})", exit.code)),
            };
            if exit.succeeded() {
                outcome.phase = "Succeeded";
                if let Err(e) = collect(run, tmpl, &pod, &scope, &mut outcome.outputs) {
                    outcome.phase = "Error";
                    outcome.message = Some(e);
                }
            }
        }
    }
    let pod_phase = if outcome.phase == "Succeeded" {
        "Succeeded"
    } else {
        "Failed"
    };
    let code = outcome.outputs.exit_code.clone();
    run.store.update(&pods(), &run.namespace, &pod, |p| {
        p["status"]["phase"] = pod_phase.into();
        p["status"]["containerStatuses"] = json!([{
            "name": "main",
            "state": {"terminated": {
                "exitCode": code.and_then(|c| c.parse::<i64>().ok()),
                "reason": if pod_phase == "Succeeded" { "Completed" } else { "Error" },
                "finishedAt": now(),
            }},
        }]);
        p["metadata"]["labels"]["workflows.argoproj.io/completed"] = "true".into();
    });
    let secs = wall.as_secs().max(1);
    run.update(&id, |n| {
        n.resources_duration = Some([("cpu", secs), ("memory", secs)].into_iter().collect());
    });
    run.finish(&id, &outcome);
    outcome
}

async fn sleep_for(d: Option<Duration>) {
    match d {
        Some(d) => tokio::time::sleep(d).await,
        None => std::future::pending().await,
    }
}

fn pod_labels(run: &Run, tmpl: &Value) -> Value {
    let mut labels: serde_json::Map<String, Value> = run
        .pod_labels
        .iter()
        .map(|(k, v)| (k.clone(), v.clone().into()))
        .collect();
    if let Some(own) = tmpl["metadata"]["labels"].as_object() {
        labels.extend(own.clone());
    }
    labels.insert(
        "workflows.argoproj.io/workflow".into(),
        run.name.clone().into(),
    );
    labels.insert("workflows.argoproj.io/completed".into(), "false".into());
    Value::Object(labels)
}

/// What the template's text can refer to inside this pod.
fn pod_scope(run: &Run, call: &Call, tmpl: &Value, inputs: &Inputs, pod: &str, id: &str) -> Scope {
    let mut scope = run.globals.lock().unwrap().clone();
    scope.extend(inputs.scope());
    scope.insert("pod.name".into(), pod.to_owned());
    scope.insert("node.name".into(), call.name.clone());
    scope.insert("node.id".into(), id.to_owned());
    let retries = call
        .name
        .rsplit_once('(')
        .and_then(|(_, n)| n.strip_suffix(')')?.parse::<u32>().ok())
        .unwrap_or(0);
    scope.insert("retries".into(), retries.to_string());
    for kind in ["parameters", "artifacts"] {
        for o in tmpl["outputs"][kind].as_array().into_iter().flatten() {
            let path = o["valueFrom"]["path"].as_str().or(o["path"].as_str());
            if let (Some(n), Some(p)) = (o["name"].as_str(), path) {
                scope.insert(format!("outputs.{kind}.{n}.path"), p.to_owned());
            }
        }
    }
    scope
}

/// The container to run (and its image), with inputs placed in the pod.
fn prepare(
    run: &Run,
    tmpl: &Value,
    inputs: &Inputs,
    pod: &str,
    scope: &Scope,
) -> Result<(Container, String), String> {
    let script = tmpl["script"].is_object();
    let spec = if script {
        &tmpl["script"]
    } else {
        &tmpl["container"]
    };
    let list = |field: &str| -> Result<Vec<String>, String> {
        spec[field]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| text::substitute(&text_of(a), scope))
            .collect()
    };
    let mut argv = list("command")?;
    if argv.is_empty() {
        return Err(
            "the container has no command (the fake does not read images' entrypoints)".into(),
        );
    }
    let ns = &run.namespace;
    run.kubelet
        .prepare(ns, pod)
        .map_err(|e| format!("cannot create the pod's directory: {e}"))?;
    if script {
        let source = text::substitute(spec["source"].as_str().unwrap_or_default(), scope)?;
        write(&host(run, pod, SCRIPT_PATH)?, source.as_bytes())?;
        argv.push(SCRIPT_PATH.into());
    }
    argv.extend(list("args")?);
    let mut env = Vec::new();
    for e in spec["env"].as_array().into_iter().flatten() {
        let name = e["name"].as_str().unwrap_or_default().to_owned();
        let value = match run.kubelet.value_from(&run.namespace, e)? {
            Some(secret) => secret,
            None => text::substitute(&text_of(&e["value"]), scope)?,
        };
        env.push((name, value));
    }
    let working_dir = match spec["workingDir"].as_str() {
        Some(d) => Some(text::substitute(d, scope)?),
        None => None,
    };
    for a in &inputs.artifacts {
        let Some(path) = &a.path else { continue };
        let to = host(run, pod, path)?;
        match &a.source {
            Source::Raw(data) => write(&to, data.as_bytes())?,
            Source::Key(key) => copy_tree(&run.config.artifact_dir.join(key), &to)
                .map_err(|e| format!("failed to load artifact '{}': {e}", a.name))?,
        }
    }
    let image = spec["image"].as_str().unwrap_or_default().to_owned();
    Ok((
        Container {
            argv,
            env,
            working_dir,
        },
        image,
    ))
}

/// Output parameters and artifacts of a pod that succeeded.
fn collect(
    run: &Run,
    tmpl: &Value,
    pod: &str,
    scope: &Scope,
    outputs: &mut Outputs,
) -> Result<(), String> {
    for p in tmpl["outputs"]["parameters"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = p["name"].as_str().unwrap_or_default().to_owned();
        let from = &p["valueFrom"];
        let value = if let Some(path) = from["path"].as_str() {
            match std::fs::read(host(run, pod, path)?) {
                // Argo trims one trailing newline, for convenience.
                Ok(bytes) => {
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    text.strip_suffix('\n').map(str::to_owned).unwrap_or(text)
                }
                Err(_) if !from["default"].is_null() => text_of(&from["default"]),
                Err(_) => return Err(format!("open {path}: no such file or directory")),
            }
        } else {
            text::substitute(&text_of(&p["value"]), scope)?
        };
        if let Some(global) = p["globalName"].as_str() {
            run.globals.lock().unwrap().insert(
                format!("workflow.outputs.parameters.{global}"),
                value.clone(),
            );
        }
        outputs.parameters.push((name, value));
    }
    for a in tmpl["outputs"]["artifacts"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let name = a["name"].as_str().unwrap_or_default().to_owned();
        let Some(path) = a["path"].as_str() else {
            continue;
        };
        let from = host(run, pod, path)?;
        if !from.exists() {
            if a["optional"].as_bool() == Some(true) {
                continue;
            }
            return Err(format!("path {path} does not exist in the pod"));
        }
        let key = format!("{}/{pod}/{name}", run.name);
        copy_tree(&from, &run.config.artifact_dir.join(&key))
            .map_err(|e| format!("failed to save artifact '{name}': {e}"))?;
        let source = Source::Key(key);
        if let Some(global) = a["globalName"].as_str() {
            run.global_artifacts.lock().unwrap().insert(
                format!("workflow.outputs.artifacts.{global}"),
                source.clone(),
            );
        }
        outputs.artifacts.push(Art {
            name,
            path: Some(path.to_owned()),
            source,
        });
    }
    Ok(())
}

/// A path inside the pod, on the host.
fn host(run: &Run, pod: &str, path: &str) -> Result<std::path::PathBuf, String> {
    run.kubelet
        .host_path(&run.namespace, pod, path)
        .ok_or_else(|| format!("{path}: the fake controller only passes files under /tmp"))
}

fn write(to: &Path, data: &[u8]) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(to, data).map_err(|e| format!("{}: {e}", to.display()))
}

/// Copies a file, or a directory with everything in it.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}
