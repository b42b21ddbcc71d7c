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
//! - Cancel marks the DAG run failed with a note; Airflow then fails the
//!   running tasks and skips the rest, which are reported cancelled, and
//!   the run finishes `Cancelled`. Exit handlers do not run after a cancel
//!   (Airflow stops the whole run).

use super::text::id_part;
use super::{AirflowOptions, ENGINE, Operator, compile_with};
use crate::{
    EngineAdapter, EngineError, RunOutcome, RunSpec, Started, StepMetrics, StepPhase, StepState,
    Update,
};
use async_trait::async_trait;
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use reqwest::{Method, StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{Mutex, mpsc};

const UPDATE_BUFFER: usize = 1024;
/// The note `cancel` leaves on the DAG run, so any poller knows why it failed.
const CANCEL_NOTE: &str = "cancelled by couler";
const PAGE: usize = 100;
const LOG_TAIL_BYTES: usize = 64 * 1024;
/// Tries of one API call, and the first pause between them (doubling).
const RETRIES: u32 = 5;
const RETRY_DELAY: Duration = Duration::from_millis(200);

/// How the adapter authenticates to the API server.
#[derive(Clone)]
enum Auth {
    /// Exchanged for a token at `POST /auth/token` (simple auth manager),
    /// again when the token expires.
    Password {
        username: String,
        password: SecretString,
    },
    /// A bearer token obtained elsewhere.
    Token(SecretString),
}

/// Settings of an [`AirflowAdapter`].
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
                            .await?;
                    }
                    return Ok(());
                }
                Err(ApiError::Status(StatusCode::NOT_FOUND, _)) => {}
                Err(e) => return Err(e.into()),
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
            Err(e) => Err(e.into()),
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
        let compiled = {
            let (plan, run) = (plan.clone(), run.clone());
            tokio::task::spawn_blocking(move || compile_with(&plan, &run, &options))
                .await
                .map_err(|e| EngineError::Other(format!("internal error: {e}")))??
        };
        let file = compiled
            .files
            .into_iter()
            .next()
            .ok_or_else(|| EngineError::Other("the compiler produced no DAG file".into()))?;
        let dag_id = file.name.trim_end_matches(".py").to_owned();
        let run_id = dag_run_id(run);
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
        );
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
        let dag_run = self.api.json(Method::GET, &path, &[], None).await?;
        if matches!(dag_run["state"].as_str(), Some("success" | "failed")) {
            return Ok(());
        }
        let body = json!({"state": "failed", "note": CANCEL_NOTE});
        self.api.json(Method::PATCH, &path, &[], Some(body)).await?;
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
        let ti = self.api.json(Method::GET, &path, &[], None).await?;
        let tries = ti["try_number"].as_u64().unwrap_or(0);
        let mut text = String::new();
        for n in 1..=tries {
            let log = self.api.log(dag_id, run_id, task, index, n).await?;
            if tries > 1 {
                if n > 1 && !text.ends_with('\n') {
                    text.push('\n');
                }
                text.push_str(&format!("=== attempt {n} ===\n"));
            }
            text.push_str(&log);
        }
        Ok(text)
    }
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
fn instance(step: &str) -> (&str, i64) {
    if let Some((task, rest)) = step.split_once('[')
        && let Some(Ok(i)) = rest.strip_suffix(']').map(str::parse::<i64>)
    {
        return (task, i);
    }
    (step, -1)
}

#[derive(Debug)]
enum ApiError {
    /// The server answered with an error status.
    Status(StatusCode, String),
    /// No answer (connection refused, timeout) or an unreadable one.
    Transport(String),
}

impl ApiError {
    /// Whether trying again may help.
    fn transient(&self) -> bool {
        match self {
            ApiError::Status(status, _) => status.is_server_error(),
            ApiError::Transport(_) => true,
        }
    }
}

impl From<ApiError> for EngineError {
    fn from(e: ApiError) -> EngineError {
        match e {
            ApiError::Status(status, body) if status.is_server_error() => {
                EngineError::Unavailable {
                    engine: ENGINE,
                    message: format!("{status}: {body}"),
                }
            }
            ApiError::Status(status, body) => {
                EngineError::Other(format!("the Airflow API refused ({status}): {body}"))
            }
            ApiError::Transport(message) => EngineError::Unavailable {
                engine: ENGINE,
                message,
            },
        }
    }
}

/// A small client of the REST API with token handling.
struct Api {
    http: reqwest::Client,
    base: Url,
    auth: Auth,
    token: Mutex<Option<SecretString>>,
}

impl Api {
    fn new(base_url: &str, auth: Auth) -> Result<Api, EngineError> {
        // reqwest is built without a default TLS provider; pick ring once.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let base = Url::parse(base_url)
            .map_err(|e| EngineError::Other(format!("bad Airflow base url {base_url:?}: {e}")))?;
        let http = reqwest::Client::builder()
            .user_agent(concat!("couler/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(5))
            .timeout(Duration::from_secs(60))
            .build()
            .map_err(|e| EngineError::Other(format!("cannot build the http client: {e}")))?;
        let token = match &auth {
            Auth::Token(t) => Some(t.clone()),
            Auth::Password { .. } => None,
        };
        Ok(Api {
            http,
            base,
            auth,
            token: Mutex::new(token),
        })
    }

    fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["api", "v2"]).extend(segments);
        }
        url
    }

    async fn token(&self, renew: bool) -> Result<SecretString, ApiError> {
        let mut token = self.token.lock().await;
        if let (Some(t), false) = (token.as_ref(), renew) {
            return Ok(t.clone());
        }
        let Auth::Password { username, password } = &self.auth else {
            return token
                .clone()
                .ok_or_else(|| ApiError::Transport("no token".into()));
        };
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["auth", "token"]);
        }
        let body = json!({"username": username, "password": password.expose_secret()});
        let response = self
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| ApiError::Transport(format!("cannot reach Airflow: {e}")))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(ApiError::Status(
                status,
                format!("login as {username}: {text}"),
            ));
        }
        let access: Value = serde_json::from_str(&text)
            .map_err(|e| ApiError::Transport(format!("unreadable token response: {e}")))?;
        let access = access["access_token"]
            .as_str()
            .ok_or_else(|| ApiError::Transport("the token response has no access_token".into()))?;
        let fresh = SecretString::from(access.to_owned());
        *token = Some(fresh.clone());
        Ok(fresh)
    }

    /// One request; a `401` renews the token once.
    async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        accept: &str,
    ) -> Result<String, ApiError> {
        let mut renew = false;
        loop {
            let token = self.token(renew).await?;
            let mut request = self
                .http
                .request(method.clone(), url.clone())
                .bearer_auth(token.expose_secret())
                .header(reqwest::header::ACCEPT, accept);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .map_err(|e| ApiError::Transport(format!("cannot reach Airflow: {e}")))?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED
                && !renew
                && matches!(self.auth, Auth::Password { .. })
            {
                renew = true;
                continue;
            }
            let text = response
                .text()
                .await
                .map_err(|e| ApiError::Transport(format!("cannot read Airflow's answer: {e}")))?;
            if !status.is_success() {
                let detail = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.get("detail").map(|d| d.to_string()))
                    .unwrap_or(text);
                return Err(ApiError::Status(status, detail));
            }
            return Ok(text);
        }
    }

    async fn json(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        let mut url = self.url(segments);
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        // Every call is safe to repeat (a repeated trigger finds its run);
        // SQLite-backed servers answer 500 while the database is locked.
        let mut delay = RETRY_DELAY;
        let mut tries = 1;
        let text = loop {
            match self
                .send(
                    method.clone(),
                    url.clone(),
                    body.as_ref(),
                    "application/json",
                )
                .await
            {
                Err(e) if tries < RETRIES && e.transient() => {
                    tracing::debug!(error = ?e, tries, "retrying an Airflow API call");
                    tokio::time::sleep(delay).await;
                    delay *= 2;
                    tries += 1;
                }
                other => break other?,
            }
        };
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .map_err(|e| ApiError::Transport(format!("unreadable answer from Airflow: {e}")))
    }

    /// One try's structured log lines.
    async fn log_events(
        &self,
        dag_id: &str,
        run_id: &str,
        task: &str,
        index: i64,
        try_number: u64,
    ) -> Result<Vec<Value>, ApiError> {
        let n = try_number.to_string();
        let path = [
            "dags",
            dag_id,
            "dagRuns",
            run_id,
            "taskInstances",
            task,
            "logs",
            n.as_str(),
        ];
        let query = [
            ("full_content", "true".to_owned()),
            ("map_index", index.to_string()),
        ];
        let mut log = self.json(Method::GET, &path, &query, None).await?;
        Ok(match log["content"].take() {
            Value::Array(lines) => lines,
            _ => Vec::new(),
        })
    }

    /// One try's log as text.
    async fn log(
        &self,
        dag_id: &str,
        run_id: &str,
        task: &str,
        index: i64,
        try_number: u64,
    ) -> Result<String, ApiError> {
        let events = self
            .log_events(dag_id, run_id, task, index, try_number)
            .await?;
        Ok(render_log(&events))
    }

    /// The outputs a step's wrapper pushed, if it pushed any.
    async fn outputs(
        &self,
        dag_id: &str,
        run_id: &str,
        task: &str,
        index: i64,
    ) -> Result<Option<StepOutputs>, ApiError> {
        let path = [
            "dags",
            dag_id,
            "dagRuns",
            run_id,
            "taskInstances",
            task,
            "xcomEntries",
            "return_value",
        ];
        let query = [("map_index", index.to_string())];
        match self.json(Method::GET, &path, &query, None).await {
            Ok(entry) => Ok(decode_outputs(&entry["value"])),
            Err(ApiError::Status(StatusCode::NOT_FOUND, _)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// `{"result": B64, "parameters": {P: B64}}`, possibly as JSON text.
fn decode_outputs(value: &Value) -> Option<StepOutputs> {
    use base64::Engine as _;
    let parsed;
    let value = match value {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        v => v,
    };
    let value = value.get("__data__").unwrap_or(value);
    let decode = |v: &Value| -> Option<String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(v.as_str()?)
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    };
    let result = decode(value.get("result")?)?;
    let mut outputs = StepOutputs {
        result: Some(result.trim().to_owned()),
        ..Default::default()
    };
    if let Some(params) = value.get("parameters").and_then(Value::as_object) {
        for (k, v) in params {
            // Trimmed at the end, as the local engine reads parameter files.
            outputs
                .parameters
                .insert(k.clone(), decode(v)?.trim_end().to_owned());
        }
    }
    Some(outputs)
}

/// A map step's aggregated output: JSON objects and arrays embedded,
/// anything else as a string (as the local engine and `couler_json_list`).
fn json_list<'v>(values: impl Iterator<Item = &'v str>) -> String {
    let parts: Vec<String> = values
        .map(|v| {
            let t = v.trim();
            if (t.starts_with('{') || t.starts_with('['))
                && serde_json::from_str::<Value>(t).is_ok()
            {
                t.to_owned()
            } else {
                Value::String(v.to_owned()).to_string()
            }
        })
        .collect();
    format!("[{}]", parts.join(","))
}

/// Log lines as text: the event of each structured line.
fn render_log(events: &[Value]) -> String {
    let mut text = String::new();
    for line in events {
        match line.get("event") {
            Some(Value::String(e)) => text.push_str(e),
            Some(other) => text.push_str(&other.to_string()),
            None => match line {
                Value::String(s) => text.push_str(s),
                other => text.push_str(&other.to_string()),
            },
        }
        text.push('\n');
    }
    text
}

/// What a BashOperator's command printed (standard output and error, as
/// its subprocess hook logs them between `Output:` and the exit line),
/// trimmed: the `result` of a step whose outputs travel in no XCom.
fn bash_output(events: &[Value]) -> Option<String> {
    let hook = |e: &Value| {
        e["logger"]
            .as_str()
            .is_some_and(|l| l.ends_with("SubprocessHook"))
    };
    let start = events
        .iter()
        .rposition(|e| hook(e) && e["event"].as_str() == Some("Output:"))?;
    let mut lines = Vec::new();
    for e in &events[start + 1..] {
        if !hook(e) {
            continue;
        }
        let text = e["event"].as_str().unwrap_or_default();
        if text.starts_with("Command exited with return code") {
            return Some(lines.join("\n").trim().to_owned());
        }
        lines.push(text);
    }
    None
}

/// Why a try failed, from the task runner's last error line: its
/// exception, with timeouts called so.
fn failure(events: &[Value]) -> Option<String> {
    let error = events.iter().rev().find(|e| e["level"] == "error")?;
    let detail = error["error_detail"]
        .as_array()
        .and_then(|d| d.last())
        .map(|d| {
            let kind = d["exc_type"].as_str().unwrap_or_default();
            let value = d["exc_value"].as_str().unwrap_or_default();
            (kind.to_owned(), value.to_owned())
        });
    let event = error["event"].as_str().unwrap_or("failed");
    Some(match detail {
        Some((kind, value)) if kind.contains("Timeout") => format!("timed out: {value}"),
        Some((kind, value)) if !kind.is_empty() => format!("{event}: {kind}: {value}"),
        _ => event.to_owned(),
    })
}

/// One task instance as the list endpoint returns it.
#[derive(Debug, Clone)]
struct Ti {
    task: String,
    index: i64,
    state: String,
    try_number: u32,
    duration: Option<f64>,
}

impl Ti {
    fn from_json(v: &Value) -> Option<Ti> {
        Some(Ti {
            task: v["task_id"].as_str()?.to_owned(),
            index: v["map_index"].as_i64().unwrap_or(-1),
            state: v["state"].as_str().unwrap_or("none").to_owned(),
            try_number: v["try_number"].as_u64().unwrap_or(0) as u32,
            duration: v["duration"].as_f64(),
        })
    }
}

/// What the poller decided about one step (instance) in one poll.
struct Seen {
    phase: StepPhase,
    attempt: u32,
    message: Option<String>,
    ti: Option<Ti>,
}

/// Watches one DAG run and turns its task instances into updates.
struct Poller {
    api: Arc<Api>,
    dag_id: String,
    run_id: String,
    /// Emitted steps (main, then exit handlers) and whether each is a map
    /// step, has a `when` gate.
    steps: Vec<(String, bool, bool)>,
    /// Reused steps' reports, sent once.
    reused: Vec<StepState>,
    /// What was last reported per step (instance): phase and attempt.
    reported: HashMap<String, (StepPhase, u32)>,
    /// Outputs of finished instances of map steps.
    instance_outputs: HashMap<String, StepOutputs>,
    operator: Operator,
    every: Duration,
    tx: mpsc::Sender<Update>,
}

impl Poller {
    fn new(
        api: Arc<Api>,
        dag_id: String,
        run_id: String,
        plan: &Plan,
        resume: Vec<StepState>,
        config: &AirflowConfig,
        tx: mpsc::Sender<Update>,
    ) -> Poller {
        let mut steps = Vec::new();
        let mut reused = Vec::new();
        let reported: HashMap<String, (StepPhase, u32)> = resume
            .into_iter()
            .map(|s| (s.name, (s.phase, s.attempt)))
            .collect();
        for (i, planned) in plan.steps.iter().enumerate() {
            let step = plan.ir_step(i);
            match &planned.action {
                Action::Run => {
                    steps.push((step.name.clone(), step.map.is_some(), !step.when.is_empty()))
                }
                Action::Reuse { status, outputs } => {
                    if reported.get(&step.name).is_some_and(|r| r.0.is_terminal()) {
                        continue;
                    }
                    let (phase, message) = match status {
                        ReuseStatus::Succeeded => {
                            (StepPhase::Succeeded, "kept from an earlier attempt")
                        }
                        ReuseStatus::Skipped => {
                            (StepPhase::Skipped, "skipped in an earlier attempt")
                        }
                        ReuseStatus::Cached => (StepPhase::Cached, "reused from the cache"),
                    };
                    reused.push(StepState {
                        name: step.name.clone(),
                        phase,
                        attempt: 0,
                        message: Some(message.into()),
                        outputs: outputs.clone(),
                        metrics: None,
                        engine_ref: None,
                        logs: None,
                    });
                }
            }
        }
        Poller {
            api,
            dag_id,
            run_id,
            steps,
            reused,
            reported,
            instance_outputs: HashMap::new(),
            operator: config.operator,
            every: Duration::from_millis(config.poll_ms.max(50)),
            tx,
        }
    }

    #[tracing::instrument(skip_all, fields(dag_id = %self.dag_id, run_id = %self.run_id))]
    async fn run(mut self) {
        for state in std::mem::take(&mut self.reused) {
            self.reported
                .insert(state.name.clone(), (state.phase, state.attempt));
            if self.tx.send(Update::Step(state)).await.is_err() {
                return;
            }
        }
        let mut failures = 0u32;
        loop {
            if self.tx.is_closed() {
                return;
            }
            match self.poll().await {
                Ok(Some(finished)) => {
                    let _ = self.tx.send(finished).await;
                    return;
                }
                Ok(None) => failures = 0,
                Err(e) => {
                    // The API server may be restarting; keep trying.
                    failures += 1;
                    tracing::warn!(error = ?e, failures, "cannot poll the dag run");
                }
            }
            tokio::time::sleep(self.every).await;
        }
    }

    /// One look at the run: sends what changed; `Finished` when it ended.
    async fn poll(&mut self) -> Result<Option<Update>, ApiError> {
        let path = [
            "dags",
            self.dag_id.as_str(),
            "dagRuns",
            self.run_id.as_str(),
        ];
        let dag_run = self.api.json(Method::GET, &path, &[], None).await?;
        let state = dag_run["state"].as_str().unwrap_or("queued").to_owned();
        let cancelled = dag_run["note"].as_str() == Some(CANCEL_NOTE);
        let ended = matches!(state.as_str(), "success" | "failed");
        let tis = self.task_instances().await?;

        let mut by_task: BTreeMap<&str, Vec<&Ti>> = BTreeMap::new();
        for ti in &tis {
            by_task.entry(ti.task.as_str()).or_default().push(ti);
        }
        let mut failed = Vec::new();
        for (name, mapped, gated) in self.steps.clone() {
            let own = by_task.get(name.as_str()).cloned().unwrap_or_default();
            let helper = |suffix: &str| {
                by_task
                    .get(format!("{name}{suffix}").as_str())
                    .and_then(|t| t.first().map(|t| t.state.clone()))
            };
            let gate_failed = gated && helper("__when").as_deref() == Some("failed");
            let items_failed = mapped && helper("__items").as_deref() == Some("failed");
            let instances: Vec<&Ti> = own.iter().copied().filter(|t| t.index >= 0).collect();
            let mut seen = if mapped && !instances.is_empty() {
                for ti in &instances {
                    let label = format!("{name}[{}]", ti.index);
                    let one = seen_of(Some(ti), ended, cancelled);
                    self.report(&label, one).await;
                }
                aggregate(&instances, ended, cancelled)
            } else {
                seen_of(own.first().copied(), ended, cancelled)
            };
            if seen.phase == StepPhase::Cancelled && (gate_failed || items_failed) && !cancelled {
                seen.phase = StepPhase::Failed;
                seen.message = Some(if gate_failed {
                    "its `when` condition could not be evaluated".into()
                } else {
                    "its map items could not be computed".into()
                });
            }
            if seen.phase == StepPhase::Failed {
                failed.push(name.clone());
            }
            self.report(&name, seen).await;
        }
        if !ended {
            return Ok(None);
        }
        let (outcome, message) = if cancelled {
            (RunOutcome::Cancelled, Some("cancelled".to_owned()))
        } else if state == "success" {
            (RunOutcome::Succeeded, None)
        } else if failed.is_empty() {
            (
                RunOutcome::Failed,
                Some("the Airflow DAG run failed".into()),
            )
        } else {
            let names: Vec<String> = failed.iter().map(|n| format!("`{n}`")).collect();
            (
                RunOutcome::Failed,
                Some(format!("step {} failed", names.join(", "))),
            )
        };
        Ok(Some(Update::Finished { outcome, message }))
    }

    async fn task_instances(&self) -> Result<Vec<Ti>, ApiError> {
        let path = [
            "dags",
            self.dag_id.as_str(),
            "dagRuns",
            self.run_id.as_str(),
            "taskInstances",
        ];
        let mut out = Vec::new();
        loop {
            let query = [
                ("limit", PAGE.to_string()),
                ("offset", out.len().to_string()),
            ];
            let page = self.api.json(Method::GET, &path, &query, None).await?;
            let items = page["task_instances"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let n = items.len();
            out.extend(items.iter().filter_map(Ti::from_json));
            let total = page["total_entries"].as_u64().unwrap_or(0) as usize;
            if n < PAGE || out.len() >= total {
                return Ok(out);
            }
        }
    }

    /// Sends the step's state if it changed, with outputs and logs when terminal.
    async fn report(&mut self, name: &str, seen: Seen) {
        if seen.phase == StepPhase::Pending {
            return;
        }
        let now = (seen.phase, seen.attempt);
        match self.reported.get(name) {
            Some(last) if *last == now => return,
            // Terminal states are final, whatever a later poll shows.
            Some((last, _)) if last.is_terminal() => return,
            _ => {}
        }
        let mut state = StepState {
            name: name.to_owned(),
            phase: seen.phase,
            attempt: seen.attempt,
            message: seen.message,
            outputs: StepOutputs::default(),
            metrics: None,
            engine_ref: None,
            logs: None,
        };
        let mut events: Option<Vec<Value>> = None;
        if let Some(ti) = &seen.ti {
            let mut engine_ref = format!("{}/{}/{}", self.dag_id, self.run_id, ti.task);
            if ti.index >= 0 {
                engine_ref.push_str(&format!("/{}", ti.index));
            }
            state.engine_ref = Some(engine_ref);
            // A try that started and ended between two polls still ran:
            // report it running first, as every engine does.
            let ran = matches!(seen.phase, StepPhase::Succeeded | StepPhase::Failed);
            let running = (StepPhase::Running, seen.attempt);
            if ran && ti.try_number > 0 && self.reported.get(name) != Some(&running) {
                let before = StepState {
                    phase: StepPhase::Running,
                    message: None,
                    ..state.clone()
                };
                let _ = self.tx.send(Update::Step(before)).await;
            }
            if seen.phase.is_terminal() {
                state.metrics = ti.duration.map(|d| StepMetrics {
                    wall_ms: (d * 1000.0) as u64,
                    ..Default::default()
                });
                if ti.try_number > 0 && seen.phase != StepPhase::Skipped {
                    events = self
                        .api
                        .log_events(
                            &self.dag_id,
                            &self.run_id,
                            &ti.task,
                            ti.index,
                            ti.try_number.into(),
                        )
                        .await
                        .ok();
                    state.logs = events.as_deref().map(|e| tail(render_log(e)));
                    if seen.phase == StepPhase::Failed && state.message.is_none() {
                        state.message = events.as_deref().and_then(failure);
                    }
                }
            }
        }
        if seen.phase == StepPhase::Succeeded {
            state.outputs = self.outputs_of(name, seen.ti.as_ref()).await;
            if state.outputs.result.is_none() && self.operator == Operator::Bash {
                state.outputs.result = events.as_deref().and_then(bash_output);
            }
            if seen.ti.as_ref().is_some_and(|t| t.index >= 0) {
                self.instance_outputs
                    .insert(name.to_owned(), state.outputs.clone());
            }
        }
        self.reported.insert(name.to_owned(), now);
        let _ = self.tx.send(Update::Step(state)).await;
    }

    /// A succeeded step's outputs: its XCom, or its instances' aggregated.
    async fn outputs_of(&mut self, name: &str, ti: Option<&Ti>) -> StepOutputs {
        if let Some(ti) = ti {
            let pushed = self
                .api
                .outputs(&self.dag_id, &self.run_id, &ti.task, ti.index)
                .await
                .ok()
                .flatten();
            return pushed.unwrap_or_default();
        }
        // A map step: every instance's outputs, in index order.
        let prefix = format!("{name}[");
        let mut instances: Vec<(i64, &StepOutputs)> = self
            .instance_outputs
            .iter()
            .filter(|(k, _)| k.starts_with(&prefix))
            .map(|(k, v)| (instance(k).1, v))
            .collect();
        instances.sort_by_key(|(i, _)| *i);
        let all: Vec<&StepOutputs> = instances.into_iter().map(|(_, o)| o).collect();
        let mut outputs = StepOutputs {
            result: Some(json_list(
                all.iter().map(|o| o.result.as_deref().unwrap_or_default()),
            )),
            ..Default::default()
        };
        let names: HashSet<&String> = all.iter().flat_map(|o| o.parameters.keys()).collect();
        for p in names {
            let values = all
                .iter()
                .map(|o| o.parameters.get(p).map(String::as_str).unwrap_or_default());
            outputs.parameters.insert(p.clone(), json_list(values));
        }
        outputs
    }
}

/// The last bytes of a log, cut at a character boundary.
fn tail(mut log: String) -> String {
    if log.len() > LOG_TAIL_BYTES {
        let mut cut = log.len() - LOG_TAIL_BYTES;
        while !log.is_char_boundary(cut) {
            cut += 1;
        }
        log.drain(..cut);
    }
    log
}

/// One task instance's state in Couler's terms.
fn seen_of(ti: Option<&Ti>, ended: bool, cancelled: bool) -> Seen {
    let Some(ti) = ti else {
        let phase = if ended || cancelled {
            StepPhase::Cancelled
        } else {
            StepPhase::Pending
        };
        return Seen {
            phase,
            attempt: 0,
            message: cancelled.then(|| "cancelled".into()),
            ti: None,
        };
    };
    let (phase, message) = match ti.state.as_str() {
        "running" => (StepPhase::Running, None),
        "up_for_retry" => (StepPhase::Running, Some("failed; retrying".to_owned())),
        "success" => (StepPhase::Succeeded, None),
        // Airflow fails running and skips unstarted tasks of a run marked failed.
        "skipped" | "failed" | "upstream_failed" if cancelled => {
            (StepPhase::Cancelled, Some("cancelled".to_owned()))
        }
        "skipped" => (StepPhase::Skipped, None),
        "failed" => (StepPhase::Failed, None),
        "upstream_failed" => (StepPhase::Cancelled, Some("upstream failed".to_owned())),
        "removed" => (
            StepPhase::Cancelled,
            Some("removed from the DAG".to_owned()),
        ),
        _ if ended => (StepPhase::Cancelled, Some("never started".to_owned())),
        _ => (StepPhase::Pending, None),
    };
    let attempt = if phase == StepPhase::Pending {
        0
    } else {
        ti.try_number
    };
    Seen {
        phase,
        attempt,
        message,
        ti: Some(ti.clone()),
    }
}

/// A map step's state from its instances.
fn aggregate(instances: &[&Ti], ended: bool, cancelled: bool) -> Seen {
    let seen: Vec<Seen> = instances
        .iter()
        .map(|t| seen_of(Some(t), ended, cancelled))
        .collect();
    let any = |p: StepPhase| seen.iter().any(|s| s.phase == p);
    let phase = if seen.iter().any(|s| !s.phase.is_terminal()) {
        if any(StepPhase::Running) {
            StepPhase::Running
        } else {
            StepPhase::Pending
        }
    } else if any(StepPhase::Failed) {
        StepPhase::Failed
    } else if any(StepPhase::Cancelled) {
        StepPhase::Cancelled
    } else if seen.iter().all(|s| s.phase == StepPhase::Skipped) {
        StepPhase::Skipped
    } else {
        StepPhase::Succeeded
    };
    let message = match phase {
        StepPhase::Failed => {
            let failed: Vec<String> = instances
                .iter()
                .zip(&seen)
                .filter(|(_, s)| s.phase == StepPhase::Failed)
                .map(|(t, _)| t.index.to_string())
                .collect();
            Some(format!("instance(s) {} failed", failed.join(", ")))
        }
        _ => None,
    };
    Seen {
        phase,
        attempt: u32::from(phase != StepPhase::Pending),
        message,
        ti: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_the_wrappers_outputs() {
        let v = json!({"result": "aGVsbG8K", "parameters": {"n": "Mw=="}});
        let o = decode_outputs(&v).unwrap();
        assert_eq!(o.result.as_deref(), Some("hello"));
        assert_eq!(o.parameters["n"], "3");
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
    fn instances_and_lists() {
        assert_eq!(instance("train[2]"), ("train", 2));
        assert_eq!(instance("train"), ("train", -1));
        assert_eq!(
            json_list(["a", "{\"x\":1}"].into_iter()),
            r#"["a",{"x":1}]"#
        );
    }
}
