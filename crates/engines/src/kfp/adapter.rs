//! Running plans on Kubeflow Pipelines v2 through its REST API
//! (`/apis/v2beta1`).
//!
//! `start` compiles the plan, uploads it (pipeline `couler-<tenant>-<workflow>`,
//! one version per distinct content, named by its hash) and creates a run
//! whose display name is derived from the [`RunSpec`]: a second `start` of
//! the same run attempt (a scheduler restart) finds that run by name and
//! re-attaches instead of creating another. A poller reads the run's
//! details every `poll_ms` and reports what changed.
//!
//! # Mapping
//!
//! - A step is the `RUNTIME` (container) task whose display name is the
//!   step's name; `map` instances are those under the `LOOP_ITERATION`
//!   task with `iteration_index` i, reported as `step[i]`, and the step
//!   itself follows its `LOOP` task, with outputs aggregated as JSON lists.
//!   A step whose condition (`CONDITION` task) is false is skipped.
//! - `RUNNING`/`CANCELING` → running (attempt = failed pods + 1),
//!   `SUCCEEDED`, `SKIPPED`, `FAILED` (a pod deadline says "timed out"),
//!   `CANCELED` → cancelled. Steps with no task when the run ends were never
//!   started: cancelled ("upstream failed" in a failed run).
//! - Outputs: output parameters from the task's `outputs`; the stdout
//!   `result` from the compiled wrapper's output where another step reads
//!   it, otherwise from the pod's log (standard output and error, as
//!   Kubernetes serves them) when `kube` is configured; artifacts are
//!   downloaded once through `GET /artifacts/{id}?view=DOWNLOAD` to record
//!   their BLAKE3 digest and size (directories are not digested).
//! - Secrets: a step's secret env var reads the Kubernetes Secret
//!   `couler-secret-<tenant>-<name>` in the pods' namespace (KFP's
//!   `secretAsEnv`), which `start` writes first from the run's revealed
//!   secrets (see [`crate::k8s::secrets`]); that needs `kube`.
//! - Logs: KFP's API has no logs endpoint; with `kube` set, they are the
//!   pods' logs from the Kubernetes API (every attempt), otherwise `logs`
//!   fails with [`EngineError::Unsupported`].
//! - Cancel is `:terminate`: running pods are stopped, nothing new starts
//!   but exit handlers, and the run ends `CANCELED`.
//! - `retry` becomes the task's `retryPolicy`, except `retry.on:
//!   transient`: KFP retries every failure, so such a step is compiled
//!   without one and the adapter does the retrying. A failure the adapter
//!   classifies as transient (`crate::failure::classify`; exit code 137 is
//!   a SIGKILL) is reported as running, and when the run has failed of
//!   nothing else, `:retry` runs it again: KFP keeps what succeeded and
//!   runs the failed task again in a new pod (the next attempt).

use super::{ENGINE, build_spec};
use crate::k8s::{KubeConfig, secrets};
use crate::rest::ApiError;
use crate::track::{UPDATE_BUFFER, compile, instance, join_attempts};
use crate::{EngineAdapter, EngineError, RunSpec, Started, StepState};
use async_trait::async_trait;
use couler_ir::RetryOn;
use couler_optimizer::{ArtifactRef, Plan};
use reqwest::{Method, StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::Arc;
use tokio::sync::mpsc;

/// Settings of a [`KfpAdapter`].
#[derive(Debug, Clone)]
pub struct KfpConfig {
    /// The API server (or the gateway in front of it), e.g.
    /// `http://ml-pipeline.kubeflow:8888`.
    pub base_url: String,
    /// A bearer token (multi-user deployments behind an auth proxy).
    pub token: Option<SecretString>,
    /// How often run details are read.
    pub poll_ms: u64,
    /// The experiment runs go to; none: KFP's default experiment.
    pub experiment_id: Option<String>,
    /// The cluster KFP runs pods on, to read pod logs (and stdout results)
    /// and to write the tenant secrets runs read; none: no logs, and runs
    /// that read secrets are refused.
    pub kube: Option<KubeConfig>,
    /// The namespace of the pods (`kubeflow` in single-user mode).
    pub pods_namespace: String,
}

impl KfpConfig {
    /// Polls every 500 ms; no token, default experiment, no logs.
    pub fn new(base_url: impl Into<String>) -> KfpConfig {
        KfpConfig {
            base_url: base_url.into(),
            token: None,
            poll_ms: 500,
            experiment_id: None,
            kube: None,
            pods_namespace: "kubeflow".into(),
        }
    }
}

/// Runs plans as KFP runs. See the module docs.
pub struct KfpAdapter {
    config: KfpConfig,
    api: Arc<Api>,
}

impl KfpAdapter {
    pub fn new(config: KfpConfig) -> Result<KfpAdapter, EngineError> {
        let api = Api::new(&config)?;
        Ok(KfpAdapter {
            config,
            api: Arc::new(api),
        })
    }

    /// Writes the tenant secrets the run reads into the pods' namespace,
    /// which needs the `kube` cluster.
    async fn deliver_secrets(&self, run: &RunSpec) -> Result<(), EngineError> {
        if run.secrets.is_empty() {
            return Ok(());
        }
        let Some(kube) = &self.config.kube else {
            return Err(EngineError::Other(
                "this run's steps read tenant secrets, which the KFP engine delivers as Kubernetes Secrets in the pods' namespace: configure the engine's `kube` cluster".into(),
            ));
        };
        let placement = secrets::Namespace::Shared {
            tenant: &run.tenant,
        };
        let client = kube.client(ENGINE).await?;
        let namespace = &self.config.pods_namespace;
        secrets::sync(
            client,
            namespace,
            placement,
            &run.tenant,
            &run.secrets,
            ENGINE,
        )
        .await
    }

    /// Uploads the package unless this content is already a version;
    /// returns `(pipeline_id, pipeline_version_id)`.
    async fn upload(&self, pipeline: &str, package: &str) -> Result<(String, String), EngineError> {
        let version = format!(
            "{pipeline}-{}",
            &blake3::hash(package.as_bytes()).to_hex()[..16]
        );
        let pipeline_id = match self.find("pipelines", "pipelines", pipeline).await? {
            Some(p) => id_of(&p, "pipeline_id")?,
            None => {
                let query = [("name", pipeline), ("display_name", pipeline)];
                match self.api.upload("pipelines/upload", &query, package).await {
                    Ok(p) => id_of(&p, "pipeline_id")?,
                    // Another start uploaded it meanwhile.
                    Err(ApiError::Status(StatusCode::CONFLICT, _)) => {
                        let p = self.find("pipelines", "pipelines", pipeline).await?;
                        id_of(&p.unwrap_or_default(), "pipeline_id")?
                    }
                    Err(e) => return Err(engine_error(e)),
                }
            }
        };
        let versions = format!("pipelines/{pipeline_id}/versions");
        if let Some(v) = self.find(&versions, "pipeline_versions", &version).await? {
            return Ok((pipeline_id, id_of(&v, "pipeline_version_id")?));
        }
        let query = [
            ("name", version.as_str()),
            ("display_name", version.as_str()),
            ("pipelineid", pipeline_id.as_str()),
        ];
        let v = match self
            .api
            .upload("pipelines/upload_version", &query, package)
            .await
        {
            Ok(v) => v,
            Err(ApiError::Status(StatusCode::CONFLICT, _)) => self
                .find(&versions, "pipeline_versions", &version)
                .await?
                .unwrap_or_default(),
            Err(e) => return Err(engine_error(e)),
        };
        Ok((pipeline_id, id_of(&v, "pipeline_version_id")?))
    }

    /// The details of the KFP run `engine_ref`, checked against the run.
    async fn details(&self, run: &RunSpec, engine_ref: &str) -> Result<Value, EngineError> {
        let details = self
            .api
            .json(Method::GET, &format!("runs/{engine_ref}"), &[], None)
            .await
            .map_err(engine_error)?;
        if details["display_name"] != run_name(run) {
            return Err(EngineError::Other(format!(
                "{engine_ref:?} is not the KFP run of run {} attempt {}",
                run.run, run.attempt
            )));
        }
        Ok(details)
    }

    /// The first item of a listing whose display name is `name`.
    /// Creates the run exactly once: a create that failed on the way may
    /// still have happened, so before trying again the run is looked up by
    /// its name.
    async fn create_run(&self, name: &str, body: Value) -> Result<Value, EngineError> {
        let mut delay = std::time::Duration::from_millis(200);
        for _ in 0..4 {
            match self
                .api
                .json(Method::POST, "runs", &[], Some(body.clone()))
                .await
            {
                Err(e) if e.transient() => {
                    tracing::debug!(error = ?e, "creating the kfp run failed; looking for it");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    if let Some(existing) = self.find("runs", "runs", name).await? {
                        return Ok(existing);
                    }
                }
                other => return other.map_err(engine_error),
            }
        }
        self.api
            .json(Method::POST, "runs", &[], Some(body))
            .await
            .map_err(engine_error)
    }

    async fn find(&self, path: &str, key: &str, name: &str) -> Result<Option<Value>, EngineError> {
        let filter = json!({"predicates": [{"key": "display_name", "operation": "EQUALS", "string_value": name}]});
        let query = [
            ("filter", filter.to_string()),
            ("page_size", "10".to_owned()),
        ];
        let mut page = self
            .api
            .json(Method::GET, path, &query, None)
            .await
            .map_err(engine_error)?;
        Ok(match page[key].take() {
            Value::Array(items) => items.into_iter().find(|i| i["display_name"] == name),
            _ => None,
        })
    }
}

#[async_trait]
impl EngineAdapter for KfpAdapter {
    fn name(&self) -> &'static str {
        ENGINE
    }

    #[tracing::instrument(skip_all, fields(run = %run.run, attempt = run.attempt))]
    async fn start(
        &self,
        run: &RunSpec,
        plan: Arc<Plan>,
        resume: Vec<StepState>,
    ) -> Result<Started, EngineError> {
        self.deliver_secrets(run).await?;
        let display_name = run_name(run);
        let (plan, transient) = split_transient(plan);
        let run_id = match self.find("runs", "runs", &display_name).await? {
            Some(existing) => {
                tracing::info!(run_name = %display_name, "re-attaching to an existing kfp run");
                id_of(&existing, "run_id")?
            }
            None => {
                let package = compile(&plan, run, package).await?;
                let pipeline = pipeline_name(&run.tenant, &plan.workflow.name);
                let (pipeline_id, version_id) = self.upload(&pipeline, &package).await?;
                let mut body = json!({
                    "display_name": display_name,
                    "description": format!("Couler run {} attempt {}", run.run, run.attempt),
                    "pipeline_version_reference": {"pipeline_id": pipeline_id, "pipeline_version_id": version_id},
                    "runtime_config": {"parameters": {}},
                });
                if let Some(e) = &self.config.experiment_id {
                    body["experiment_id"] = json!(e);
                }
                let created = self.create_run(&display_name, body).await?;
                id_of(&created, "run_id")?
            }
        };
        let (tx, rx) = mpsc::channel(UPDATE_BUFFER);
        let logs = match &self.config.kube {
            Some(kube) => Some(Logs {
                client: kube.client(ENGINE).await?,
                namespace: self.config.pods_namespace.clone(),
            }),
            None => None,
        };
        let poller = Poller::new(
            self.api.clone(),
            run_id.clone(),
            &plan,
            resume,
            logs,
            &self.config,
            tx,
        )
        .with_transient(transient);
        tokio::spawn(poller.run());
        Ok(Started {
            engine_ref: run_id,
            updates: rx,
        })
    }

    async fn cancel(&self, run: &RunSpec, engine_ref: &str) -> Result<(), EngineError> {
        let details = self.details(run, engine_ref).await?;
        if terminal_run(details["state"].as_str().unwrap_or_default()) {
            return Ok(());
        }
        self.api
            .json(
                Method::POST,
                &format!("runs/{engine_ref}:terminate"),
                &[],
                None,
            )
            .await
            .map_err(engine_error)?;
        Ok(())
    }

    async fn logs(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        step: &str,
    ) -> Result<String, EngineError> {
        let Some(kube) = &self.config.kube else {
            return Err(EngineError::Unsupported {
                engine: ENGINE,
                feature: "step logs: the KFP API serves none; configure the adapter's `kube` cluster to read them from the pods".into(),
            });
        };
        let details = self.details(run, engine_ref).await?;
        let tasks = Tasks::parse(&details);
        let (name, index) = instance(step);
        let task = tasks.runtime(name, index).ok_or_else(|| {
            EngineError::Other(format!(
                "the KFP run {engine_ref} has no task for step {step:?}"
            ))
        })?;
        let logs = Logs {
            client: kube.client(ENGINE).await?,
            namespace: self.config.pods_namespace.clone(),
        };
        let pods: Vec<&String> = task.failed_pods.iter().chain(task.pod.iter()).collect();
        let mut attempts = Vec::new();
        for (n, pod) in pods.iter().enumerate() {
            attempts.push((n as u32 + 1, logs.get(pod).await?));
        }
        Ok(join_attempts(attempts))
    }
}

/// The plan without its transient-only retries, which the adapter does
/// itself, and those retries' limits by step.
fn split_transient(plan: Arc<Plan>) -> (Arc<Plan>, HashMap<String, u32>) {
    let transient =
        |s: &couler_ir::Step| s.retry.as_ref().is_some_and(|r| r.on == RetryOn::Transient);
    let wf = &plan.workflow;
    if !wf.steps.iter().chain(&wf.on_exit).any(transient) {
        return (plan, HashMap::new());
    }
    let mut plan = (*plan).clone();
    let mut limits = HashMap::new();
    let wf = &mut plan.workflow;
    for step in wf.steps.iter_mut().chain(wf.on_exit.iter_mut()) {
        if transient(step) {
            limits.insert(step.name.clone(), step.retry.take().map_or(0, |r| r.limit));
        }
    }
    (Arc::new(plan), limits)
}

/// The pipeline package: the pipeline spec, then the platform spec, as
/// YAML documents written as JSON.
fn package(plan: &Plan, run: &RunSpec) -> Result<String, EngineError> {
    let built = build_spec(plan, run)?;
    Ok(format!(
        "{}\n---\n{}\n",
        to_json(&built.pipeline)?,
        to_json(&built.platform)?
    ))
}

fn to_json<T: serde::Serialize>(value: &T) -> Result<String, EngineError> {
    serde_json::to_string(value)
        .map_err(|e| EngineError::Other(format!("rendering the KFP pipeline: {e}")))
}

/// A name part KFP accepts anywhere: lower-case letters, digits, `-`.
fn name_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect()
}

fn pipeline_name(tenant: &str, workflow: &str) -> String {
    format!("couler-{}-{}", name_part(tenant), name_part(workflow))
}

/// The run's display name: the same on every start of a run attempt.
fn run_name(run: &RunSpec) -> String {
    let mut name = format!(
        "couler-{}-{}-a{}",
        name_part(&run.tenant),
        name_part(&run.run),
        run.attempt
    );
    if let Some(stage) = &run.stage {
        name.push('-');
        name.push_str(&name_part(stage));
    }
    name
}

fn id_of(v: &Value, key: &str) -> Result<String, EngineError> {
    v[key]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .ok_or_else(|| EngineError::Other(format!("the KFP API answered without {key}: {v}")))
}

fn terminal_run(state: &str) -> bool {
    matches!(state, "SUCCEEDED" | "FAILED" | "CANCELED" | "SKIPPED")
}

/// What a failed KFP API call means for the run.
fn engine_error(e: ApiError) -> EngineError {
    e.for_engine(ENGINE, "KFP")
}

/// A small client of the `v2beta1` API.
struct Api {
    http: reqwest::Client,
    base: Url,
    token: Option<SecretString>,
}

impl Api {
    fn new(config: &KfpConfig) -> Result<Api, EngineError> {
        let http = crate::rest::http_client()?;
        let base = Url::parse(&config.base_url).map_err(|e| {
            EngineError::Other(format!("bad KFP base url {:?}: {e}", config.base_url))
        })?;
        Ok(Api {
            http,
            base,
            token: config.token.clone(),
        })
    }

    fn url(&self, path: &str, query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        let base = url.path().trim_end_matches('/').to_owned();
        url.set_path(&format!("{base}/apis/v2beta1/{path}"));
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// Sends with retries on 5xx and transport errors; the body is text.
    /// Sends the request; with `retry`, again after a passing failure
    /// (only for requests that are safe to repeat).
    async fn send(
        &self,
        request: impl Fn() -> reqwest::RequestBuilder,
        retry: bool,
    ) -> Result<String, ApiError> {
        let once = || async {
            let mut r = request();
            if let Some(t) = &self.token {
                r = r.bearer_auth(t.expose_secret());
            }
            let response = r
                .send()
                .await
                .map_err(|e| ApiError::Transport(format!("cannot reach KFP: {e}")))?;
            let status = response.status();
            let text = response.text().await.unwrap_or_default();
            if status.is_success() {
                return Ok(text);
            }
            // grpc-gateway errors: {"error", "code", "message", "details"}.
            let message = serde_json::from_str::<Value>(&text)
                .ok()
                .and_then(|v| v["message"].as_str().map(str::to_owned))
                .unwrap_or(text);
            Err(ApiError::Status(status, message))
        };
        if retry {
            crate::rest::retrying(once, ApiError::transient).await
        } else {
            once().await
        }
    }

    /// A JSON call; `POST`s are sent once (repeating one that reached the
    /// server could create a second run).
    async fn json(
        &self,
        method: Method,
        path: &str,
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        let pairs: Vec<(&str, &str)> = query.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let url = self.url(path, &pairs);
        let retry = method != Method::POST;
        let text = self
            .send(
                || {
                    let r = self.http.request(method.clone(), url.clone());
                    match &body {
                        Some(b) => r.json(b),
                        None => r,
                    }
                },
                retry,
            )
            .await?;
        if text.trim().is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .map_err(|e| ApiError::Transport(format!("unreadable answer from KFP: {e}")))
    }

    /// A `multipart/form-data` upload of the package as `uploadfile`.
    async fn upload(
        &self,
        path: &str,
        query: &[(&str, &str)],
        package: &str,
    ) -> Result<Value, ApiError> {
        let boundary = format!(
            "couler-{}",
            &blake3::hash(package.as_bytes()).to_hex()[..24]
        );
        let body = format!(
            "--{boundary}\r\nContent-Disposition: form-data; name=\"uploadfile\"; filename=\"pipeline.yaml\"\r\nContent-Type: application/x-yaml\r\n\r\n{package}\r\n--{boundary}--\r\n"
        );
        let url = self.url(path, query);
        // A repeated upload that already happened answers 409, which the
        // caller resolves by looking the pipeline up.
        let text = self
            .send(
                || {
                    self.http
                        .post(url.clone())
                        .header(
                            reqwest::header::CONTENT_TYPE,
                            format!("multipart/form-data; boundary={boundary}"),
                        )
                        .body(body.clone())
                },
                true,
            )
            .await?;
        serde_json::from_str(&text)
            .map_err(|e| ApiError::Transport(format!("unreadable answer from KFP: {e}")))
    }

    /// An artifact's digest, size and URI, from its download URL.
    async fn artifact(&self, id: &str) -> Result<ArtifactRef, ApiError> {
        let a = self
            .json(
                Method::GET,
                &format!("artifacts/{id}"),
                &[("view", "DOWNLOAD".into())],
                None,
            )
            .await?;
        let uri = a["uri"].as_str().unwrap_or_default().to_owned();
        let url = a["download_url"]
            .as_str()
            .ok_or_else(|| ApiError::Transport(format!("artifact {id} has no download_url")))?;
        // The download URL may be presigned: errors name the artifact only.
        let failed = |e: reqwest::Error| {
            ApiError::Transport(format!("downloading {uri}: {}", e.without_url()))
        };
        let response = self
            .http
            .get(url)
            .send()
            .await
            .and_then(|r| r.error_for_status())
            .map_err(failed)?;
        // Hashed as it streams: a model need not fit in memory.
        let mut hasher = blake3::Hasher::new();
        let mut size = 0;
        let mut body = response.bytes_stream();
        while let Some(chunk) = futures::StreamExt::next(&mut body).await {
            let chunk = chunk.map_err(failed)?;
            size += chunk.len() as u64;
            hasher.update(&chunk);
        }
        Ok(ArtifactRef {
            digest: hasher.finalize().to_hex().to_string(),
            size,
            location: uri,
        })
    }
}

/// Pod logs through the Kubernetes API.
struct Logs {
    client: kube::Client,
    namespace: String,
}

impl Logs {
    async fn get(&self, pod: &str) -> Result<String, EngineError> {
        use k8s_openapi::api::core::v1::Pod;
        let pods: kube::Api<Pod> = kube::Api::namespaced(self.client.clone(), &self.namespace);
        let params = kube::api::LogParams {
            container: Some("main".into()),
            ..Default::default()
        };
        pods.logs(pod, &params)
            .await
            .map_err(|e| EngineError::Unavailable {
                engine: ENGINE,
                message: format!("cannot read the logs of pod {pod}: {e}"),
            })
    }
}

mod poll;
use poll::{Poller, Tasks};
