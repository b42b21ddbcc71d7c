//! Running plans on Apache Airflow 3 through its REST API (`/api/v2`).
//!
//! `start` compiles the plan ([`compile_with`]), writes the DAG file into
//! the DAGs folder the dag processor reads, waits until the DAG is parsed
//! (and unpaused), then triggers a DAG run whose id is derived from the
//! [`RunSpec`]: a second `start` of the same run attempt (a scheduler
//! restart) gets `409 Conflict` and re-attaches to the existing run. A
//! poller lists the run's task instances every `poll_ms` and reports what
//! changed.
//!
//! # Mapping
//!
//! - Task ids are step names; `<step>__when`, `<step>__items`,
//!   `couler__status` and `couler__outcome` are helpers and not reported
//!   (a gate or item builder that fails makes its step fail). Mapped
//!   instances are `step[map_index]`; the step itself is reported from its
//!   instances, with outputs aggregated as JSON lists like the local engine.
//! - `running` → running, `up_for_retry` → running (attempt = try number),
//!   `success` → succeeded, `skipped` → skipped (a short-circuited `when`
//!   skips its step; skips propagate through `all_success`), `failed` →
//!   failed (the message names the exception; timeouts say "timed out"),
//!   `upstream_failed` → cancelled ("upstream failed"). Queued and
//!   scheduled tasks are not reported; a try that started and ended
//!   between two polls is reported running first.
//! - Outputs come from the `return_value` XCom the compiled wrapper pushes,
//!   which exists only for steps whose outputs another step reads. With
//!   the BashOperator, other steps' `result` is what the command printed
//!   as the task log shows it (standard output and error together); with
//!   pods they report none. Parameters only travel in XCom; artifacts are
//!   not reported. Terminal updates carry the log's tail.
//! - Failed API calls are retried (5 tries, from 200 ms): a SQLite-backed
//!   Airflow answers 500 while its database is locked.
//! - `Reuse` steps are not in the DAG and are reported once at start.
//! - Secrets: with the BashOperator, `start` writes each key a run reads to
//!   `<data_dir>/<dag_id>/<run_id>/.secrets/<name>/<key>` (0600, in 0700
//!   directories; the workers read it as `$COULER_RUN_DIR/.secrets/…`) and
//!   the poller removes them when the run ends. With pods, they are the
//!   Kubernetes Secrets `couler-secret-<tenant>-<name>` of the pods'
//!   namespace (see [`crate::k8s::secrets`]), read through the operator's
//!   `secrets`. Never Airflow Variables or Connections: those are stored in
//!   Airflow's database and shown to its users.
//! - Cancel notes the DAG run, then marks it failed; Airflow then fails the
//!   running tasks and skips the rest, which are reported cancelled, and
//!   the run finishes `Cancelled`. Exit handlers do not run after a cancel
//!   (Airflow stops the whole run).

use super::api::{Api, Auth, engine_error};
use super::poll::Poller;
use super::text::{id_part, secret_file};
use super::{AirflowOptions, ENGINE, Operator, compile_with};
use crate::k8s::{KubeConfig, secrets};
use crate::rest::ApiError;
use crate::track::{UPDATE_BUFFER, compile, join_attempts};
use crate::{EngineAdapter, EngineError, RunSpec, SecretValues, Started, StepState};
use async_trait::async_trait;
use couler_optimizer::Plan;
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The note `cancel` leaves on the DAG run, so any poller knows why it failed.
pub(super) const CANCEL_NOTE: &str = "cancelled by couler";

/// How the adapter authenticates to the API server.
#[derive(Debug, Clone)]
pub struct AirflowConfig {
    /// The API server, e.g. `http://127.0.0.1:8080`.
    pub base_url: String,
    /// The folder the dag processor reads (shared with this process).
    pub dags_folder: PathBuf,
    /// A user to log in as at `POST /auth/token` (with `password`) ...
    pub username: Option<String>,
    pub password: Option<SecretString>,
    /// ... or a bearer token obtained elsewhere (wins over the user).
    pub token: Option<SecretString>,
    /// How often task instances are listed.
    pub poll_ms: u64,
    /// How long `start` waits for a new DAG file to be parsed.
    pub parse_timeout_secs: u64,
    pub operator: Operator,
    /// The workers' data directory (their `COULER_AIRFLOW_DATA`) as this
    /// host sees it: with the BashOperator, a run's secrets are written
    /// under it; none: runs that read secrets are refused.
    pub data_dir: Option<PathBuf>,
    /// With the KubernetesPodOperator, the cluster its pods run on, where
    /// a run's secrets become Kubernetes Secrets; none: runs that read
    /// secrets are refused.
    pub kube: Option<KubeConfig>,
    /// The namespace of those pods (the operator's connection's).
    pub pods_namespace: String,
}

impl AirflowConfig {
    /// Logs in as `username`; polls every 500 ms, waits 120 s for parsing,
    /// runs steps with the BashOperator.
    pub fn new(
        base_url: impl Into<String>,
        dags_folder: impl Into<PathBuf>,
        username: impl Into<String>,
        password: SecretString,
    ) -> Self {
        AirflowConfig {
            base_url: base_url.into(),
            dags_folder: dags_folder.into(),
            username: Some(username.into()),
            password: Some(password),
            token: None,
            poll_ms: 500,
            parse_timeout_secs: 120,
            operator: Operator::Bash,
            data_dir: None,
            kube: None,
            pods_namespace: "default".into(),
        }
    }

    fn auth(&self) -> Result<Auth, EngineError> {
        match (&self.token, &self.username, &self.password) {
            (Some(token), _, _) => Ok(Auth::Token(token.clone())),
            (None, Some(username), Some(password)) => Ok(Auth::Password {
                username: username.clone(),
                password: password.clone(),
            }),
            _ => Err(EngineError::Other(
                "the Airflow adapter needs a token, or a username and a password".into(),
            )),
        }
    }
}

/// Runs plans as Airflow DAG runs. See the module docs.
pub struct AirflowAdapter {
    config: AirflowConfig,
    api: Arc<Api>,
}

impl AirflowAdapter {
    pub fn new(config: AirflowConfig) -> Result<AirflowAdapter, EngineError> {
        let api = Api::new(&config.base_url, config.auth()?)?;
        Ok(AirflowAdapter {
            config,
            api: Arc::new(api),
        })
    }

    /// Writes the DAG file unless it is already there with this content.
    async fn place_dag(&self, name: &str, content: &str) -> Result<(), EngineError> {
        let path = self.config.dags_folder.join(name);
        if tokio::fs::read_to_string(&path).await.ok().as_deref() == Some(content) {
            return Ok(());
        }
        // Written aside and renamed, so the dag processor never reads half a file.
        let tmp = self.config.dags_folder.join(format!(".{name}.tmp"));
        let io = |e: std::io::Error| EngineError::Unavailable {
            engine: ENGINE,
            message: format!("cannot write {}: {e}", path.display()),
        };
        tokio::fs::write(&tmp, content).await.map_err(io)?;
        tokio::fs::rename(&tmp, &path).await.map_err(io)
    }

    /// Waits until the dag processor has parsed the DAG, and unpauses it.
    async fn await_dag(&self, dag_id: &str, file: &str) -> Result<(), EngineError> {
        let deadline = Instant::now() + Duration::from_secs(self.config.parse_timeout_secs);
        loop {
            match self
                .api
                .json(Method::GET, &["dags", dag_id], &[], None)
                .await
            {
                Ok(dag) => {
                    if dag["is_paused"].as_bool() == Some(true) {
                        self.api
                            .json(
                                Method::PATCH,
                                &["dags", dag_id],
                                &[],
                                Some(json!({"is_paused": false})),
                            )
                            .await
                            .map_err(engine_error)?;
                    }
                    return Ok(());
                }
                Err(ApiError::Status(StatusCode::NOT_FOUND, _)) => {}
                Err(e) => return Err(engine_error(e)),
            }
            if let Some(error) = self.import_error(file).await {
                return Err(EngineError::Other(format!(
                    "Airflow cannot import the DAG file {file}: {error}"
                )));
            }
            if Instant::now() >= deadline {
                return Err(EngineError::Unavailable {
                    engine: ENGINE,
                    message: format!(
                        "the DAG {dag_id} was not parsed within {} s",
                        self.config.parse_timeout_secs
                    ),
                });
            }
            tokio::time::sleep(Duration::from_millis(self.config.poll_ms.max(100))).await;
        }
    }

    async fn import_error(&self, file: &str) -> Option<String> {
        let errors = self
            .api
            .json(
                Method::GET,
                &["importErrors"],
                &[("limit", "100".into())],
                None,
            )
            .await
            .ok()?;
        errors["import_errors"].as_array()?.iter().find_map(|e| {
            let name = e["filename"].as_str()?;
            let ours = name == file || name.ends_with(&format!("/{file}"));
            ours.then(|| e["stack_trace"].as_str().unwrap_or_default().to_owned())
        })
    }

    /// Puts the run's secrets where its steps read them: files of the run's
    /// directory with the BashOperator (returned, so the poller removes
    /// them when the run ends), Kubernetes Secrets with pods.
    async fn deliver_secrets(
        &self,
        run: &RunSpec,
        dag_id: &str,
        run_id: &str,
    ) -> Result<Option<PathBuf>, EngineError> {
        if run.secrets.is_empty() {
            return Ok(None);
        }
        match self.config.operator {
            Operator::Bash => {
                let Some(data) = &self.config.data_dir else {
                    return Err(EngineError::Other(
                        "this run's steps read tenant secrets, which the Airflow engine writes into its workers' data directory: configure the engine's `data_dir`".into(),
                    ));
                };
                let dir = data.join(dag_id).join(run_id).join(".secrets");
                let secrets = run.secrets.clone();
                let to = dir.clone();
                tokio::task::spawn_blocking(move || write_secrets(&to, &secrets))
                    .await
                    .map_err(|e| EngineError::Other(e.to_string()))?
                    .map_err(|e| EngineError::Unavailable {
                        engine: ENGINE,
                        message: format!(
                            "cannot write the run's secrets under {}: {e}",
                            dir.display()
                        ),
                    })?;
                Ok(Some(dir))
            }
            Operator::KubernetesPod => {
                let Some(kube) = &self.config.kube else {
                    return Err(EngineError::Other(
                        "this run's steps read tenant secrets, which the Airflow engine delivers to its pods as Kubernetes Secrets: configure the engine's `kube` cluster".into(),
                    ));
                };
                let tenant = &run.tenant;
                let placement = secrets::Namespace::Shared { tenant };
                let client = kube.client(ENGINE).await?;
                let namespace = &self.config.pods_namespace;
                secrets::sync(client, namespace, placement, tenant, &run.secrets, ENGINE).await?;
                Ok(None)
            }
        }
    }

    /// Triggers the run, or finds it when an earlier start already did.
    async fn trigger(&self, dag_id: &str, run_id: &str, plan: &Plan) -> Result<(), EngineError> {
        let body = json!({
            "dag_run_id": run_id,
            "logical_date": null,
            "conf": plan.parameters,
        });
        let path = ["dags", dag_id, "dagRuns"];
        match self.api.json(Method::POST, &path, &[], Some(body)).await {
            Ok(_) => Ok(()),
            Err(ApiError::Status(StatusCode::CONFLICT, _)) => {
                tracing::info!(dag_id, run_id, "re-attaching to an existing dag run");
                Ok(())
            }
            Err(e) => Err(engine_error(e)),
        }
    }
}

#[async_trait]
impl EngineAdapter for AirflowAdapter {
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
        let options = AirflowOptions {
            operator: self.config.operator,
        };
        let compiled = compile(&plan, run, move |plan, run| {
            compile_with(plan, run, &options)
        })
        .await?;
        let file = compiled
            .files
            .into_iter()
            .next()
            .ok_or_else(|| EngineError::Other("the compiler produced no DAG file".into()))?;
        let dag_id = file.name.trim_end_matches(".py").to_owned();
        let run_id = dag_run_id(run);
        let secrets_dir = self.deliver_secrets(run, &dag_id, &run_id).await?;
        self.place_dag(&file.name, &file.content).await?;
        self.await_dag(&dag_id, &file.name).await?;
        self.trigger(&dag_id, &run_id, &plan).await?;

        let (tx, rx) = mpsc::channel(UPDATE_BUFFER);
        let poller = Poller::new(
            self.api.clone(),
            dag_id.clone(),
            run_id.clone(),
            &plan,
            resume,
            &self.config,
            tx,
        )
        .removing_secrets(secrets_dir);
        tokio::spawn(poller.run());
        Ok(Started {
            engine_ref: format!("{dag_id}/{run_id}"),
            updates: rx,
        })
    }

    async fn cancel(&self, run: &RunSpec, engine_ref: &str) -> Result<(), EngineError> {
        let (dag_id, run_id) = split_ref(run, engine_ref)?;
        let path = ["dags", dag_id, "dagRuns", run_id];
        // A run that already ended keeps its outcome.
        let dag_run = self
            .api
            .json(Method::GET, &path, &[], None)
            .await
            .map_err(engine_error)?;
        if matches!(dag_run["state"].as_str(), Some("success" | "failed")) {
            return Ok(());
        }
        // The note first: Airflow commits a new state (and stops the tasks)
        // before it writes a note sent with it, and a poller must never see
        // a task stopped by the cancel without the note that explains it.
        let note = json!({"note": CANCEL_NOTE});
        self.api
            .json(Method::PATCH, &path, &[], Some(note))
            .await
            .map_err(engine_error)?;
        let state = json!({"state": "failed"});
        self.api
            .json(Method::PATCH, &path, &[], Some(state))
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
        let (dag_id, run_id) = split_ref(run, engine_ref)?;
        let (task, index) = instance(step);
        let mut path = vec!["dags", dag_id, "dagRuns", run_id, "taskInstances", task];
        let index_text = index.to_string();
        if index >= 0 {
            path.push(&index_text);
        }
        let ti = self
            .api
            .json(Method::GET, &path, &[], None)
            .await
            .map_err(engine_error)?;
        let tries = ti["try_number"].as_u64().unwrap_or(0);
        let mut logs = Vec::new();
        for n in 1..=tries {
            let log = self
                .api
                .log(dag_id, run_id, task, index, n)
                .await
                .map_err(engine_error)?;
            logs.push((n as u32, log));
        }
        Ok(join_attempts(logs))
    }
}

/// Writes each secret key to `dir/<secret_file>`, readable by this user
/// only (directories 0700, files 0600).
fn write_secrets(dir: &Path, secrets: &SecretValues) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    let mut dirs = std::fs::DirBuilder::new();
    dirs.recursive(true).mode(0o700);
    for (name, keys) in secrets.iter() {
        for (key, value) in keys {
            let path = dir.join(secret_file(name, key));
            dirs.create(path.parent().unwrap_or(dir))?;
            let mut file = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .mode(0o600)
                .open(&path)?;
            std::io::Write::write_all(&mut file, value.expose_secret().as_bytes())?;
        }
    }
    Ok(())
}

/// The DAG run id of a run attempt (stage): the same on every start.
fn dag_run_id(run: &RunSpec) -> String {
    let mut id = format!("couler__{}__{}", id_part(&run.run), run.attempt);
    if let Some(stage) = &run.stage {
        id.push_str("__");
        id.push_str(&id_part(stage));
    }
    id
}

/// `<dag_id>/<run_id>`, checked against the run.
fn split_ref<'r>(run: &RunSpec, engine_ref: &'r str) -> Result<(&'r str, &'r str), EngineError> {
    match engine_ref.split_once('/') {
        Some((dag_id, run_id)) if run_id == dag_run_id(run) && !dag_id.is_empty() => {
            Ok((dag_id, run_id))
        }
        _ => Err(EngineError::Other(format!(
            "{engine_ref:?} is not the Airflow DAG run of run {} attempt {}",
            run.run, run.attempt
        ))),
    }
}

/// `train[2]` → (`train`, 2); `train` → (`train`, -1).
pub(super) fn instance(step: &str) -> (&str, i64) {
    let (task, index) = crate::track::instance(step);
    (task, index.map_or(-1, |i| i as i64))
}

#[cfg(test)]
mod tests {
    use super::super::api::decode_outputs;
    use super::*;
    use serde_json::Value;

    #[test]
    fn decodes_the_wrappers_outputs() {
        let v = json!({"result": "aGVsbG8K", "parameters": {"n": "Mw=="}});
        let o = decode_outputs(&v).unwrap();
        assert_eq!(o.result.as_deref(), Some("hello"));
        assert_eq!(o.parameters.get("n").unwrap(), "3");
        let text = Value::String(v.to_string());
        assert_eq!(decode_outputs(&text), Some(o));
        assert_eq!(decode_outputs(&json!(null)), None);
    }

    #[test]
    fn run_ids_are_stable_and_checked() {
        let run = RunSpec::new("tnt_a", "run_1", 2).stage("s/1");
        assert_eq!(dag_run_id(&run), "couler__run_1__2__s_1");
        let engine_ref = format!("couler_wf_run_1/{}", dag_run_id(&run));
        assert!(split_ref(&run, &engine_ref).is_ok());
        assert!(split_ref(&RunSpec::new("tnt_a", "run_1", 1), &engine_ref).is_err());
    }

    #[test]
    fn instances() {
        assert_eq!(instance("train[2]"), ("train", 2));
        assert_eq!(instance("train"), ("train", -1));
    }
}
