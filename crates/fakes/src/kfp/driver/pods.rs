//! A container task's pods: attempts, deadlines, files in and out.

use super::{Done, Exec, Io, State};
use crate::kfp::NAMESPACE;
use crate::kfp::launcher::{self, LocalArtifact, Placeholders};
use crate::kubelet::Container;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::sync::watch;

impl Exec {
    /// A container task: one pod per attempt, retried by its `retryPolicy`.
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn container(
        &self,
        id: &str,
        display: &str,
        task: &Value,
        component: &Value,
        label: &str,
        inputs: Io,
        exit: bool,
    ) -> Done {
        let retry = &task["retryPolicy"];
        let max_retries = number(&retry["maxRetryCount"]).unwrap_or(0.0) as u32;
        let mut backoff = retry["backoffDuration"]
            .as_str()
            .and_then(seconds)
            .unwrap_or(0.0);
        let factor = number(&retry["backoffFactor"]).unwrap_or(2.0);
        let max_backoff = retry["backoffMaxDuration"]
            .as_str()
            .and_then(seconds)
            .unwrap_or(3600.0);
        let platform =
            &self.platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"][label];
        let mut attempt = 0;
        loop {
            if self.terminated() && !exit {
                return Done::bare(State::Canceled, Some("the run was terminated".into()));
            }
            let pod = self.pod_name(display);
            self.update_task(id, |t| {
                if let Some(old) = t.pod.replace(pod.clone()) {
                    t.failed_pods.push(old);
                }
            });
            let container = &self.spec["deploymentSpec"]["executors"][label]["container"];
            let outcome = self
                .launch(id, &pod, container, platform, component, &inputs, exit)
                .await;
            match outcome {
                Ok(outputs) => {
                    return Done {
                        state: State::Succeeded,
                        outputs,
                        error: None,
                    };
                }
                Err(Failure::Terminated) => {
                    return Done::bare(State::Canceled, Some("the run was terminated".into()));
                }
                Err(Failure::Error(message)) if attempt >= max_retries => {
                    return Done::bare(State::Failed, Some(message));
                }
                Err(Failure::Error(message)) => {
                    let task_name = display;
                    tracing::debug!(task = %task_name, attempt, %message, "retrying a failed task");
                    attempt += 1;
                    let pause = Duration::from_secs_f64(backoff.min(max_backoff));
                    backoff *= factor;
                    let mut terminate = self.terminate.clone();
                    if !exit {
                        tokio::select! {
                            _ = tokio::time::sleep(pause) => {}
                            _ = terminated(&mut terminate) => {}
                        }
                    } else {
                        tokio::time::sleep(pause).await;
                    }
                }
            }
        }
    }

    fn pod_name(&self, display: &str) -> String {
        let mut db = self.shared.db.lock().unwrap();
        let n = db.next_artifact_id();
        let base: String = display
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() {
                    c.to_ascii_lowercase()
                } else {
                    '-'
                }
            })
            .take(40)
            .collect();
        format!("{}-{base}-{n}", &self.run_id[..8.min(self.run_id.len())])
    }

    /// One attempt: lays out files, runs the pod, reads its outputs.
    #[allow(clippy::too_many_arguments)]
    async fn launch(
        &self,
        task_id: &str,
        pod: &str,
        container: &Value,
        platform: &Value,
        component: &Value,
        inputs: &Io,
        exit: bool,
    ) -> Result<Io, Failure> {
        let deadline = number(&platform["activeDeadlineSeconds"]);
        let kubelet = &self.shared.kubelet;
        let error = |e: String| Failure::Error(e);
        kubelet
            .prepare(NAMESPACE, pod)
            .map_err(|e| error(e.to_string()))?;
        let host = |path: &str| -> Result<PathBuf, Failure> {
            kubelet
                .host_path(NAMESPACE, pod, path)
                .ok_or_else(|| error(format!("{path} is outside the pod's /tmp")))
        };
        let mut ctx = Placeholders {
            parameters: inputs.params.clone(),
            job_name: self.job_name.clone(),
            job_uuid: self.run_id.clone(),
            task_name: pod.to_owned(),
            task_uuid: task_id.to_owned(),
            ..Default::default()
        };
        for (name, list) in &inputs.artifacts {
            let Some(artifact) = list.first() else {
                continue;
            };
            let path = launcher::input_artifact_path(name);
            copy(&artifact.host, &host(&path)?)
                .map_err(|e| error(format!("downloading {}: {e}", artifact.uri)))?;
            ctx.input_artifacts.insert(
                name.clone(),
                LocalArtifact {
                    path,
                    uri: artifact.uri.clone(),
                },
            );
        }
        let outputs = &component["outputDefinitions"];
        for name in outputs["parameters"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            let path = launcher::output_parameter_path(name);
            mkdir_parent(&host(&path)?).map_err(error)?;
            ctx.output_parameters.insert(name.clone(), path);
        }
        for name in outputs["artifacts"]
            .as_object()
            .into_iter()
            .flat_map(|m| m.keys())
        {
            let path = launcher::output_artifact_path(name);
            mkdir_parent(&host(&path)?).map_err(error)?;
            let uri = format!(
                "minio://mlpipeline/v2/artifacts/{}/{}/{}/{name}",
                self.job_name, self.run_id, task_id
            );
            ctx.output_artifacts
                .insert(name.clone(), LocalArtifact { path, uri });
        }
        let mut argv = Vec::new();
        for part in ["command", "args"] {
            for arg in container[part].as_array().into_iter().flatten() {
                argv.push(ctx.fill(arg.as_str().unwrap_or_default()).map_err(error)?);
            }
        }
        let mut env = container["env"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|e| {
                let value = ctx
                    .fill(e["value"].as_str().unwrap_or_default())
                    .map_err(error)?;
                Ok((e["name"].as_str().unwrap_or_default().to_owned(), value))
            })
            .collect::<Result<Vec<_>, Failure>>()?;
        for from in platform["secretAsEnv"].as_array().into_iter().flatten() {
            let secret = from["secretName"].as_str().unwrap_or_default();
            for pair in from["keyToEnv"].as_array().into_iter().flatten() {
                let key = pair["secretKey"].as_str().unwrap_or_default();
                let value = kubelet.secret(NAMESPACE, secret, key).map_err(error)?;
                env.push((
                    pair["envVar"].as_str().unwrap_or_default().to_owned(),
                    value,
                ));
            }
        }
        let spec = Container {
            argv,
            env,
            working_dir: None,
        };
        self.update_task(task_id, |t| t.set_state("RUNNING"));

        let run = kubelet.run(NAMESPACE, pod, &spec);
        tokio::pin!(run);
        let mut terminate = self.terminate.clone();
        let limit = deadline
            .map(Duration::from_secs_f64)
            .unwrap_or(Duration::MAX);
        let mut why = None;
        let exit_status = tokio::select! {
            r = &mut run => r,
            _ = tokio::time::sleep(limit) => {
                why = Some(Failure::Error("DeadlineExceeded: Pod was active on the node longer than the specified deadline".into()));
                kubelet.kill(NAMESPACE, pod);
                run.await
            }
            _ = terminated(&mut terminate), if !exit => {
                why = Some(Failure::Terminated);
                kubelet.kill(NAMESPACE, pod);
                run.await
            }
        }
        .map_err(|e| error(format!("cannot start the container: {e}")))?;
        if let Some(why) = why {
            return Err(why);
        }
        if !exit_status.succeeded() {
            return Err(error(format!("Error (exit code {})", exit_status.code)));
        }

        let mut out = Io::default();
        for (name, path) in &ctx.output_parameters {
            let text = std::fs::read_to_string(host(path)?).map_err(|e| {
                error(format!(
                    "failed to read output parameter {name:?} from {path}: {e}"
                ))
            })?;
            let kind = outputs["parameters"][name]["parameterType"]
                .as_str()
                .unwrap_or("STRING");
            let value = launcher::parse_parameter(&text, kind)
                .map_err(|e| error(format!("output parameter {name:?}: {e}")))?;
            out.params.insert(name.clone(), value);
        }
        for (name, local) in &ctx.output_artifacts {
            let from = host(&local.path)?;
            let to = self
                .shared
                .host_of(&local.uri)
                .ok_or_else(|| error("bad artifact uri".into()))?;
            copy(&from, &to)
                .map_err(|e| error(format!("failed to upload output artifact {name:?}: {e}")))?;
            out.artifacts.insert(
                name.clone(),
                vec![self.shared.register(local.uri.clone(), to)],
            );
        }
        Ok(out)
    }
}

/// Resolves once the run is terminated (never, if its server is gone).
async fn terminated(terminate: &mut watch::Receiver<bool>) {
    if terminate.wait_for(|t| *t).await.is_err() {
        std::future::pending::<()>().await;
    }
}

enum Failure {
    Error(String),
    Terminated,
}

fn number(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// `1s`, `1.5s`, `2m`, `1h` (protobuf durations are seconds).
pub(super) fn seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    let (n, unit) = s.split_at(s.find(|c: char| c.is_alphabetic()).unwrap_or(s.len()));
    let n: f64 = n.parse().ok()?;
    Some(match unit {
        "" | "s" => n,
        "ms" => n / 1000.0,
        "m" => n * 60.0,
        "h" => n * 3600.0,
        _ => return None,
    })
}

fn mkdir_parent(path: &Path) -> Result<(), String> {
    match path.parent() {
        Some(dir) => std::fs::create_dir_all(dir).map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

/// Copies a file or a directory tree.
fn copy(from: &Path, to: &Path) -> std::io::Result<()> {
    mkdir_parent(to).map_err(std::io::Error::other)?;
    if from.is_dir() {
        std::fs::create_dir_all(to)?;
        for entry in std::fs::read_dir(from)? {
            let entry = entry?;
            copy(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        std::fs::copy(from, to).map(|_| ())
    }
}
