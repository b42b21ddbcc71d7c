//! A Kubeflow Pipelines API server (`/apis/v2beta1`) that really runs
//! what is submitted: pipelines are uploaded (multipart, as the SDK's
//! client does) or given inline, runs execute their `PipelineSpec` with
//! pods on a [`Kubelet`] (see [`driver`]), and run details report tasks
//! with their state history, pods, retries and outputs.
//!
//! Shapes follow KFP's `v2beta1` protos: runs as `run.proto`, task details
//! with the `type`, `type_attributes` and `inputs`/`outputs` parameter and
//! artifact lists of the newer API, artifacts as `artifacts.proto` (with a
//! `download_url` served here), errors as grpc-gateway renders a
//! `google.rpc.Status` (`{"error", "code", "message", "details"}`).
//!
//! Uploaded files are YAML documents (pipeline spec, then an optional
//! Kubernetes platform spec); this fake reads them only when written in
//! JSON flow style (which is YAML), as Couler's adapter uploads them.

mod driver;
mod launcher;
mod store;

use crate::kubelet::Kubelet;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use store::{Artifact, Db, Pipeline, Run, Version, now};

/// The namespace the pods of every run go to (KFP's single-user mode).
pub const NAMESPACE: &str = "kubeflow";

/// What the handlers and the driver share.
pub(crate) struct Shared {
    db: Mutex<Db>,
    kubelet: Arc<Kubelet>,
    /// Object storage: `minio://BUCKET/KEY` is `store/BUCKET/KEY`.
    store: PathBuf,
}

impl Shared {
    /// Where an artifact URI's bytes are on this machine.
    fn host_of(&self, uri: &str) -> Option<PathBuf> {
        if let Some(path) = uri.strip_prefix("file://") {
            return Some(PathBuf::from(path));
        }
        let key = uri.strip_prefix("minio://")?;
        if key.split('/').any(|p| p == "..") {
            return None;
        }
        Some(self.store.join(key))
    }

    fn register(&self, uri: String, host: PathBuf) -> Artifact {
        let mut db = self.db.lock().unwrap();
        let artifact = Artifact {
            id: db.next_artifact_id(),
            uri,
            host,
            created_at: now(),
        };
        db.artifacts.push(artifact.clone());
        artifact
    }
}

/// A running fake KFP API server.
pub struct KfpServer {
    shared: Arc<Shared>,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

/// Starts a server whose pods and object storage live under `root`.
pub async fn start(root: impl Into<PathBuf>) -> KfpServer {
    let root = root.into();
    KfpServer::start_with(&root, Kubelet::new(root.join("pods")))
        .await
        .expect("the fake KFP server starts")
}

impl KfpServer {
    /// Serves on a free port of 127.0.0.1, running pods on `kubelet` (share
    /// one with a [`crate::kube::Cluster`] to read pod logs through it).
    pub async fn start_with(
        root: &std::path::Path,
        kubelet: Arc<Kubelet>,
    ) -> std::io::Result<KfpServer> {
        let shared = Arc::new(Shared {
            db: Mutex::new(Db::default()),
            kubelet,
            store: root.join("object-store"),
        });
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = router(AppState {
            shared: shared.clone(),
            base: format!("http://{addr}"),
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(KfpServer {
            shared,
            addr,
            server,
        })
    }

    /// The API server's base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    pub fn kubelet(&self) -> Arc<Kubelet> {
        self.shared.kubelet.clone()
    }

    /// How many runs were created (to check that nothing ran twice).
    pub fn run_count(&self) -> usize {
        self.shared.db.lock().unwrap().runs.len()
    }
}

impl Drop for KfpServer {
    fn drop(&mut self) {
        self.server.abort();
        // Runs end with their server, as a cluster teardown ends them.
        for run in &self.shared.db.lock().unwrap().runs {
            let _ = run.terminate.send(true);
        }
    }
}

#[derive(Clone)]
struct AppState {
    shared: Arc<Shared>,
    base: String,
}

fn router(state: AppState) -> Router {
    Router::new()
        .route(
            "/apis/v2beta1/healthz",
            get(|| async { axum::Json(json!({"multi_user": false})) }),
        )
        .route("/apis/v2beta1/pipelines", get(list_pipelines))
        .route("/apis/v2beta1/pipelines/upload", post(upload_pipeline))
        .route(
            "/apis/v2beta1/pipelines/upload_version",
            post(upload_version),
        )
        .route("/apis/v2beta1/pipelines/{id}", get(get_pipeline))
        .route("/apis/v2beta1/pipelines/{id}/versions", get(list_versions))
        .route("/apis/v2beta1/runs", get(list_runs).post(create_run))
        .route("/apis/v2beta1/runs/{id}", get(get_run).post(run_action))
        .route("/apis/v2beta1/artifacts/{id}", get(get_artifact))
        .route("/artifacts/{id}/download", get(download))
        .fallback(|| async { error(StatusCode::NOT_FOUND, 5, "Not Found".into()) })
        .with_state(state)
}

/// A `google.rpc.Status` as grpc-gateway renders it.
struct ApiError {
    status: StatusCode,
    /// The gRPC code (3 invalid argument, 5 not found, 6 already exists,
    /// 9 failed precondition).
    code: i32,
    message: String,
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({"error": self.message, "code": self.code, "message": self.message, "details": []});
        (self.status, axum::Json(body)).into_response()
    }
}

type ApiResult = Result<axum::Json<Value>, ApiError>;

fn error(status: StatusCode, code: i32, message: String) -> ApiError {
    ApiError {
        status,
        code,
        message,
    }
}

fn invalid(message: impl Into<String>) -> ApiError {
    error(StatusCode::BAD_REQUEST, 3, message.into())
}

fn not_found(what: &str, id: &str) -> ApiError {
    error(
        StatusCode::NOT_FOUND,
        5,
        format!("Failed to get {what}: ResourceNotFoundError: {what} {id} not found"),
    )
}

type Params = Query<HashMap<String, String>>;

/// The `display_name`/`name` EQUALS predicates of a `filter` parameter.
fn filter(q: &HashMap<String, String>) -> Result<Vec<(String, String)>, ApiError> {
    let Some(text) = q.get("filter").filter(|f| !f.is_empty()) else {
        return Ok(Vec::new());
    };
    let parsed: Value =
        serde_json::from_str(text).map_err(|e| invalid(format!("Invalid filter: {e}")))?;
    let mut out = Vec::new();
    for p in parsed["predicates"].as_array().into_iter().flatten() {
        let op = &p["operation"];
        if !(op == "EQUALS" || op == 1) {
            return Err(invalid(format!(
                "Invalid filter: unsupported operation {op}"
            )));
        }
        let key = p["key"].as_str().unwrap_or_default().to_owned();
        let value = p["string_value"]
            .as_str()
            .or_else(|| p["stringValue"].as_str())
            .unwrap_or_default()
            .to_owned();
        out.push((key, value));
    }
    Ok(out)
}

fn matches(fields: &[(&str, &str)], predicates: &[(String, String)]) -> bool {
    predicates
        .iter()
        .all(|(k, v)| fields.iter().any(|(f, value)| f == k && value == v))
}

fn listing(key: &str, items: Vec<Value>) -> ApiResult {
    let total = items.len();
    Ok(axum::Json(
        json!({key: items, "total_size": total, "next_page_token": ""}),
    ))
}

async fn list_pipelines(State(s): State<AppState>, Query(q): Params) -> ApiResult {
    let predicates = filter(&q)?;
    let db = s.shared.db.lock().unwrap();
    let items = db
        .pipelines
        .iter()
        .filter(|p| {
            matches(
                &[("name", &p.name), ("display_name", &p.display_name)],
                &predicates,
            )
        })
        .map(Pipeline::json)
        .collect();
    listing("pipelines", items)
}

async fn get_pipeline(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let db = s.shared.db.lock().unwrap();
    match db.pipelines.iter().find(|p| p.id == id) {
        Some(p) => Ok(axum::Json(p.json())),
        None => Err(not_found("pipeline", &id)),
    }
}

async fn list_versions(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Params,
) -> ApiResult {
    let predicates = filter(&q)?;
    let db = s.shared.db.lock().unwrap();
    if !db.pipelines.iter().any(|p| p.id == id) {
        return Err(not_found("pipeline", &id));
    }
    let items = db
        .versions
        .iter()
        .filter(|v| v.pipeline_id == id)
        .filter(|v| {
            matches(
                &[("name", &v.name), ("display_name", &v.display_name)],
                &predicates,
            )
        })
        .map(Version::json)
        .collect();
    listing("pipeline_versions", items)
}

/// The `uploadfile` part of a `multipart/form-data` body.
fn upload_file(headers: &HeaderMap, body: &[u8]) -> Result<String, ApiError> {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let boundary = content_type
        .split(';')
        .find_map(|p| p.trim().strip_prefix("boundary="))
        .map(|b| b.trim_matches('"').to_owned())
        .ok_or_else(|| invalid("Failed to read pipeline from file: request is not multipart"))?;
    let body = String::from_utf8_lossy(body);
    for part in body.split(&format!("--{boundary}")) {
        let Some((head, content)) = part.split_once("\r\n\r\n") else {
            continue;
        };
        if head.contains("name=\"uploadfile\"") {
            return Ok(content.strip_suffix("\r\n").unwrap_or(content).to_owned());
        }
    }
    Err(invalid(
        "Failed to read pipeline from file: no uploadfile part",
    ))
}

/// A pipeline file: the pipeline spec and an optional platform spec.
fn parse_package(text: &str) -> Result<(Value, Option<Value>), ApiError> {
    let mut docs = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        if line.trim_end() == "---" {
            docs.push(std::mem::take(&mut current));
        } else {
            current.push_str(line);
            current.push('\n');
        }
    }
    docs.push(current);
    let mut values = Vec::new();
    for doc in docs
        .iter()
        .filter(|d| !d.trim().is_empty() && !d.trim_start().starts_with('#'))
    {
        let v: Value = serde_json::from_str(doc).map_err(|e| {
            invalid(format!(
                "Failed to parse the pipeline spec (this server reads JSON-style YAML): {e}"
            ))
        })?;
        values.push(v);
    }
    let mut pipeline = None;
    let mut platform = None;
    for v in values {
        if v.get("platforms").is_some() {
            platform = Some(v);
        } else if v.get("pipeline_spec").is_some() {
            pipeline = Some(v["pipeline_spec"].clone());
            platform = v.get("platform_spec").cloned().or(platform);
        } else {
            pipeline = Some(v);
        }
    }
    let pipeline =
        pipeline.ok_or_else(|| invalid("Failed to parse the pipeline spec: no pipeline spec"))?;
    if pipeline["root"].get("dag").is_none() || pipeline["pipelineInfo"]["name"].as_str().is_none()
    {
        return Err(invalid(
            "Invalid pipeline spec: root.dag and pipelineInfo.name are required",
        ));
    }
    Ok((pipeline, platform))
}

async fn upload_pipeline(
    State(s): State<AppState>,
    Query(q): Params,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let text = upload_file(&headers, &body)?;
    let (pipeline_spec, platform_spec) = parse_package(&text)?;
    let name = q
        .get("name")
        .or_else(|| q.get("display_name"))
        .cloned()
        .unwrap_or_else(|| {
            pipeline_spec["pipelineInfo"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        });
    let display_name = q
        .get("display_name")
        .cloned()
        .unwrap_or_else(|| name.clone());
    let mut db = s.shared.db.lock().unwrap();
    if db.pipelines.iter().any(|p| p.name == name) {
        return Err(error(
            StatusCode::CONFLICT,
            6,
            format!(
                "Failed to create a pipeline: AlreadyExistsError: pipeline with name {name:?} already exists"
            ),
        ));
    }
    let pipeline = Pipeline {
        id: db.uuid(),
        name: name.clone(),
        display_name: display_name.clone(),
        created_at: now(),
    };
    let version = Version {
        id: db.uuid(),
        pipeline_id: pipeline.id.clone(),
        name,
        display_name,
        created_at: pipeline.created_at.clone(),
        pipeline_spec,
        platform_spec,
    };
    db.pipelines.push(pipeline.clone());
    db.versions.push(version);
    Ok(axum::Json(pipeline.json()))
}

async fn upload_version(
    State(s): State<AppState>,
    Query(q): Params,
    headers: HeaderMap,
    body: Bytes,
) -> ApiResult {
    let text = upload_file(&headers, &body)?;
    let (pipeline_spec, platform_spec) = parse_package(&text)?;
    let Some(pipeline_id) = q.get("pipelineid").cloned() else {
        return Err(invalid(
            "Failed to create a pipeline version: pipelineid is required",
        ));
    };
    let mut db = s.shared.db.lock().unwrap();
    if !db.pipelines.iter().any(|p| p.id == pipeline_id) {
        return Err(not_found("pipeline", &pipeline_id));
    }
    let Some(name) = q.get("name").or_else(|| q.get("display_name")).cloned() else {
        return Err(invalid(
            "Failed to create a pipeline version: name is required",
        ));
    };
    if db
        .versions
        .iter()
        .any(|v| v.pipeline_id == pipeline_id && v.name == name)
    {
        return Err(error(
            StatusCode::CONFLICT,
            6,
            format!(
                "Failed to create a pipeline version: AlreadyExistsError: version {name:?} already exists"
            ),
        ));
    }
    let version = Version {
        id: db.uuid(),
        pipeline_id,
        display_name: q
            .get("display_name")
            .cloned()
            .unwrap_or_else(|| name.clone()),
        name,
        created_at: now(),
        pipeline_spec,
        platform_spec,
    };
    db.versions.push(version.clone());
    Ok(axum::Json(version.json()))
}

async fn create_run(State(s): State<AppState>, body: Bytes) -> ApiResult {
    let body: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return Err(invalid(format!("Failed to parse the run: {e}"))),
    };
    let Some(display_name) = body["display_name"].as_str().filter(|n| !n.is_empty()) else {
        return Err(invalid("Failed to create a run: display_name is required"));
    };
    let parameters = body["runtime_config"]["parameters"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut db = s.shared.db.lock().unwrap();
    let (version, pipeline_spec, platform_spec) = if let Some(r) =
        body.get("pipeline_version_reference")
    {
        let version_id = r["pipeline_version_id"].as_str().unwrap_or_default();
        let Some(v) = db.versions.iter().find(|v| v.id == version_id) else {
            return Err(not_found("pipeline version", version_id));
        };
        (
            Some((v.pipeline_id.clone(), v.id.clone())),
            v.pipeline_spec.clone(),
            v.platform_spec.clone(),
        )
    } else if let Some(spec) = body.get("pipeline_spec") {
        let (p, platform) = parse_package(&spec.to_string())?;
        (None, p, platform)
    } else {
        return Err(invalid(
            "Failed to create a run: a pipeline_version_reference or a pipeline_spec is required",
        ));
    };
    let (terminate, watch) = tokio::sync::watch::channel(false);
    let created_at = now();
    let run = Run {
        id: db.uuid(),
        display_name: display_name.to_owned(),
        experiment_id: body["experiment_id"]
            .as_str()
            .unwrap_or("default")
            .to_owned(),
        version,
        pipeline_spec: pipeline_spec.clone(),
        platform_spec: platform_spec.clone().unwrap_or(Value::Null),
        parameters: parameters.clone(),
        created_at: created_at.clone(),
        finished_at: None,
        state: "PENDING",
        history: vec![store::Status {
            time: created_at,
            state: "PENDING",
        }],
        error: None,
        tasks: Vec::new(),
        terminate,
    };
    let id = run.id.clone();
    let json = run.json();
    db.runs.push(run);
    drop(db);
    let platform = platform_spec.unwrap_or(Value::Null);
    tokio::spawn(driver::execute(
        s.shared.clone(),
        id,
        pipeline_spec,
        platform,
        parameters,
        watch,
    ));
    Ok(axum::Json(json))
}

async fn list_runs(State(s): State<AppState>, Query(q): Params) -> ApiResult {
    let predicates = filter(&q)?;
    let db = s.shared.db.lock().unwrap();
    let items = db
        .runs
        .iter()
        .filter(|r| {
            matches(
                &[("name", &r.display_name), ("display_name", &r.display_name)],
                &predicates,
            )
        })
        .map(Run::json)
        .collect();
    listing("runs", items)
}

async fn get_run(State(s): State<AppState>, Path(id): Path<String>) -> ApiResult {
    let db = s.shared.db.lock().unwrap();
    match db.runs.iter().find(|r| r.id == id) {
        Some(r) => Ok(axum::Json(r.json())),
        None => Err(not_found("run", &id)),
    }
}

/// `POST /runs/{id}:terminate` and `:retry` (the segment holds the verb).
async fn run_action(State(s): State<AppState>, Path(target): Path<String>) -> ApiResult {
    let Some((id, verb)) = target.split_once(':') else {
        return Err(error(StatusCode::NOT_FOUND, 5, "Not Found".into()));
    };
    let mut db = s.shared.db.lock().unwrap();
    let Some(run) = db.run_mut(id) else {
        return Err(not_found("run", id));
    };
    let ended = matches!(run.state, "SUCCEEDED" | "FAILED" | "CANCELED" | "SKIPPED");
    match verb {
        "terminate" if ended => Err(error(
            StatusCode::BAD_REQUEST,
            9,
            format!(
                "Failed to terminate run {id}: the run is already in a final state ({})",
                run.state
            ),
        )),
        "terminate" => {
            run.set_state("CANCELING");
            let _ = run.terminate.send(true);
            Ok(axum::Json(json!({})))
        }
        // Argo's retry: succeeded tasks keep their outputs, the rest run again.
        "retry" if matches!(run.state, "FAILED" | "CANCELED") => {
            let (terminate, watch) = tokio::sync::watch::channel(false);
            run.terminate = terminate;
            run.finished_at = None;
            run.set_state("PENDING");
            let job = (
                run.id.clone(),
                run.pipeline_spec.clone(),
                run.platform_spec.clone(),
                run.parameters.clone(),
            );
            drop(db);
            tokio::spawn(driver::execute(
                s.shared.clone(),
                job.0,
                job.1,
                job.2,
                job.3,
                watch,
            ));
            Ok(axum::Json(json!({})))
        }
        "retry" => Err(error(
            StatusCode::BAD_REQUEST,
            9,
            format!(
                "Failed to retry run {id}: the run is {}, not failed or terminated",
                run.state
            ),
        )),
        _ => Err(error(StatusCode::NOT_FOUND, 5, "Not Found".into())),
    }
}

async fn get_artifact(
    State(s): State<AppState>,
    Path(id): Path<String>,
    Query(q): Params,
) -> ApiResult {
    let db = s.shared.db.lock().unwrap();
    let Some(a) = db.artifacts.iter().find(|a| a.id.to_string() == id) else {
        return Err(not_found("artifact", &id));
    };
    let size = std::fs::metadata(&a.host).map(|m| m.len()).unwrap_or(0);
    let (provider, path) = match a.uri.split_once("://") {
        Some((scheme, rest)) => (
            scheme.to_owned(),
            rest.split_once('/').map_or(rest, |(_, p)| p).to_owned(),
        ),
        None => (String::new(), a.uri.clone()),
    };
    let mut body = Map::new();
    body.insert("artifact_id".into(), json!(id));
    body.insert("storage_provider".into(), json!(provider));
    body.insert("storage_path".into(), json!(path));
    body.insert("uri".into(), json!(a.uri));
    body.insert("namespace".into(), json!(NAMESPACE));
    body.insert("artifact_type".into(), json!("system.Artifact"));
    body.insert("artifact_size".into(), json!(size.to_string()));
    body.insert("created_at".into(), json!(a.created_at));
    body.insert("last_updated_at".into(), json!(a.created_at));
    if q.get("view").map(String::as_str) == Some("DOWNLOAD") {
        body.insert(
            "download_url".into(),
            json!(format!("{}/artifacts/{id}/download", s.base)),
        );
    }
    Ok(axum::Json(Value::Object(body)))
}

/// What a signed URL would serve: the artifact's bytes (files only).
async fn download(State(s): State<AppState>, Path(id): Path<String>) -> Response {
    let host = {
        let db = s.shared.db.lock().unwrap();
        match db.artifacts.iter().find(|a| a.id.to_string() == id) {
            Some(a) => a.host.clone(),
            None => return (StatusCode::NOT_FOUND, "NoSuchKey").into_response(),
        }
    };
    match tokio::fs::read(&host).await {
        Ok(bytes) => ([(header::CONTENT_TYPE, "application/octet-stream")], bytes).into_response(),
        Err(e) => (StatusCode::NOT_FOUND, format!("NoSuchKey: {e}")).into_response(),
    }
}
