//! A Kubernetes API server for namespaced resources, in memory.
//!
//! It speaks the REST shapes of the real one, so `kube::Client` works
//! against it unchanged: `POST`/`GET`/`PATCH` (JSON merge patch)/`DELETE`
//! on `/apis/{group}/{version}/namespaces/{ns}/{plural}[/{name}]` (and
//! `/api/v1/…` for the core group), lists with `labelSelector` and
//! `fieldSelector=metadata.name=…`, `?watch=true` streams resumable from a
//! `resourceVersion`, `Status` errors, and pod logs at
//! `/api/v1/namespaces/{ns}/pods/{name}/log`. Controllers (the fake Argo
//! and Tekton) use [`Store`] directly.

use crate::kubelet::Kubelet;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashMap};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;

/// A kind of resource, as it appears in URLs.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Resource {
    /// Empty for the core group (`/api/v1`).
    pub group: String,
    pub version: String,
    pub plural: String,
}

impl Resource {
    pub fn new(group: &str, version: &str, plural: &str) -> Resource {
        Resource {
            group: group.into(),
            version: version.into(),
            plural: plural.into(),
        }
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// A change to one object.
#[derive(Debug, Clone)]
pub struct Event {
    pub kind: EventType,
    pub resource: Resource,
    pub namespace: String,
    /// The object after the change (before it, for a deletion).
    pub object: Value,
}

impl Event {
    pub fn name(&self) -> &str {
        self.object["metadata"]["name"].as_str().unwrap_or_default()
    }
}

/// A Kubernetes `Status` error.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub code: StatusCode,
    pub reason: &'static str,
    pub message: String,
}

impl ApiError {
    fn new(code: StatusCode, reason: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            code,
            reason,
            message: message.into(),
        }
    }

    fn not_found(res: &Resource, name: &str) -> ApiError {
        ApiError::new(
            StatusCode::NOT_FOUND,
            "NotFound",
            format!("{}.{} \"{name}\" not found", res.plural, res.group),
        )
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code.as_u16(),
        });
        (self.code, axum::Json(body)).into_response()
    }
}

type Key = (Resource, String, String);

struct Watcher {
    resource: Resource,
    namespace: Option<String>,
    sender: mpsc::UnboundedSender<(u64, Event)>,
}

#[derive(Default)]
struct Objects {
    objects: BTreeMap<Key, Value>,
    /// Every event so far, so a watch can resume from any version.
    history: Vec<(u64, Event)>,
    watchers: Vec<Watcher>,
}

/// The objects of one fake cluster. Every change bumps the cluster-wide
/// `resourceVersion` and reaches every watcher, in order.
#[derive(Default)]
pub struct Store {
    inner: Mutex<Objects>,
    version: AtomicU64,
    uids: AtomicU64,
}

impl Store {
    fn record(&self, inner: &mut Objects, kind: EventType, key: &Key, object: Value) -> u64 {
        let version = object["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| self.version.load(Ordering::SeqCst));
        let event = Event {
            kind,
            resource: key.0.clone(),
            namespace: key.1.clone(),
            object,
        };
        inner.watchers.retain(|w| {
            if w.resource != event.resource
                || w.namespace
                    .as_ref()
                    .is_some_and(|ns| *ns != event.namespace)
            {
                return !w.sender.is_closed();
            }
            w.sender.send((version, event.clone())).is_ok()
        });
        inner.history.push((version, event));
        version
    }

    fn next_version(&self) -> String {
        (self.version.fetch_add(1, Ordering::SeqCst) + 1).to_string()
    }

    /// The current `resourceVersion` of the cluster.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::SeqCst)
    }

    /// Creates an object (filling in `metadata`), as `POST` does.
    pub fn create(
        &self,
        res: &Resource,
        namespace: &str,
        mut object: Value,
    ) -> Result<Value, ApiError> {
        let mut inner = self.inner.lock().unwrap();
        let meta = object
            .get_mut("metadata")
            .and_then(Value::as_object_mut)
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    "metadata is required",
                )
            })?;
        let uid = self.uids.fetch_add(1, Ordering::SeqCst) + 1;
        if meta
            .get("name")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            let Some(prefix) = meta.get("generateName").and_then(Value::as_str) else {
                return Err(ApiError::new(
                    StatusCode::UNPROCESSABLE_ENTITY,
                    "Invalid",
                    "metadata.name or metadata.generateName is required",
                ));
            };
            let name = format!("{prefix}{uid:05x}");
            meta.insert("name".into(), name.into());
        }
        let name = meta["name"].as_str().unwrap_or_default().to_owned();
        let key = (res.clone(), namespace.to_owned(), name.clone());
        if inner.objects.contains_key(&key) {
            return Err(ApiError::new(
                StatusCode::CONFLICT,
                "AlreadyExists",
                format!("{}.{} \"{name}\" already exists", res.plural, res.group),
            ));
        }
        meta.insert("namespace".into(), namespace.into());
        meta.insert(
            "uid".into(),
            format!("00000000-0000-4000-8000-{uid:012x}").into(),
        );
        meta.insert("generation".into(), 1.into());
        meta.insert("creationTimestamp".into(), now().into());
        meta.insert("resourceVersion".into(), self.next_version().into());
        inner.objects.insert(key.clone(), object.clone());
        self.record(&mut inner, EventType::Added, &key, object.clone());
        Ok(object)
    }

    pub fn get(&self, res: &Resource, namespace: &str, name: &str) -> Option<Value> {
        let key = (res.clone(), namespace.to_owned(), name.to_owned());
        self.inner.lock().unwrap().objects.get(&key).cloned()
    }

    /// Changes an object in place (a controller writing `status`, or a
    /// patch); `None` when it does not exist.
    pub fn update(
        &self,
        res: &Resource,
        namespace: &str,
        name: &str,
        change: impl FnOnce(&mut Value),
    ) -> Option<Value> {
        let key = (res.clone(), namespace.to_owned(), name.to_owned());
        let mut inner = self.inner.lock().unwrap();
        let object = inner.objects.get_mut(&key)?;
        let spec_before = object.get("spec").cloned();
        change(object);
        if object.get("spec").cloned() != spec_before {
            let generation = object["metadata"]["generation"].as_i64().unwrap_or(1) + 1;
            object["metadata"]["generation"] = generation.into();
        }
        object["metadata"]["resourceVersion"] = self.next_version().into();
        let object = object.clone();
        self.record(&mut inner, EventType::Modified, &key, object.clone());
        Some(object)
    }

    pub fn delete(&self, res: &Resource, namespace: &str, name: &str) -> Option<Value> {
        let key = (res.clone(), namespace.to_owned(), name.to_owned());
        let mut inner = self.inner.lock().unwrap();
        let mut object = inner.objects.remove(&key)?;
        object["metadata"]["resourceVersion"] = self.next_version().into();
        self.record(&mut inner, EventType::Deleted, &key, object.clone());
        Some(object)
    }

    /// Objects of a kind (in one namespace or all), by name.
    pub fn list(&self, res: &Resource, namespace: Option<&str>) -> Vec<Value> {
        let inner = self.inner.lock().unwrap();
        inner
            .objects
            .iter()
            .filter(|((r, ns, _), _)| r == res && namespace.is_none_or(|n| n == ns))
            .map(|(_, o)| o.clone())
            .collect()
    }

    /// Every change to objects of a kind from now on; with `since`, also
    /// the changes after that `resourceVersion` (and with `Some(0)`, the
    /// existing objects as `ADDED` first).
    pub fn watch(
        &self,
        res: &Resource,
        namespace: Option<&str>,
        since: Option<u64>,
    ) -> mpsc::UnboundedReceiver<(u64, Event)> {
        let (sender, receiver) = mpsc::unbounded_channel();
        let mut inner = self.inner.lock().unwrap();
        let matches =
            |e: &Event| e.resource == *res && namespace.is_none_or(|ns| ns == e.namespace);
        match since {
            Some(0) => {
                for ((r, ns, _), object) in &inner.objects {
                    if r == res && namespace.is_none_or(|n| n == ns) {
                        let version = object["metadata"]["resourceVersion"]
                            .as_str()
                            .and_then(|v| v.parse().ok())
                            .unwrap_or(0);
                        let event = Event {
                            kind: EventType::Added,
                            resource: r.clone(),
                            namespace: ns.clone(),
                            object: object.clone(),
                        };
                        let _ = sender.send((version, event));
                    }
                }
            }
            Some(since) => {
                for (version, event) in &inner.history {
                    if *version > since && matches(event) {
                        let _ = sender.send((*version, event.clone()));
                    }
                }
            }
            None => {}
        }
        inner.watchers.push(Watcher {
            resource: res.clone(),
            namespace: namespace.map(str::to_owned),
            sender,
        });
        receiver
    }
}

/// A running fake cluster: the API server, its store and its kubelet.
pub struct Cluster {
    pub store: Arc<Store>,
    pub kubelet: Arc<Kubelet>,
    addr: SocketAddr,
    server: tokio::task::JoinHandle<()>,
}

impl Cluster {
    /// Serves on a free port of 127.0.0.1; pods' files go under `root`.
    pub async fn start(root: impl Into<PathBuf>) -> std::io::Result<Cluster> {
        let store = Arc::new(Store::default());
        let kubelet = Kubelet::in_cluster(root, store.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let app = router(ServerState {
            store: store.clone(),
            kubelet: kubelet.clone(),
        });
        let server = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Ok(Cluster {
            store,
            kubelet,
            addr,
            server,
        })
    }

    /// The API server's base URL (`http://127.0.0.1:PORT`).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        self.server.abort();
    }
}

#[derive(Clone)]
struct ServerState {
    store: Arc<Store>,
    kubelet: Arc<Kubelet>,
}

fn router(state: ServerState) -> Router {
    Router::new()
        .route("/api/v1/namespaces/{ns}/pods/{name}/log", get(pod_logs))
        .route(
            "/api/{version}/namespaces/{ns}/{plural}",
            get(core_collection).post(core_create),
        )
        .route(
            "/api/{version}/namespaces/{ns}/{plural}/{name}",
            get(core_object).patch(core_patch).delete(core_delete),
        )
        .route(
            "/apis/{group}/{version}/namespaces/{ns}/{plural}",
            get(collection).post(create),
        )
        .route(
            "/apis/{group}/{version}/namespaces/{ns}/{plural}/{name}",
            get(object).patch(patch).delete(delete),
        )
        .route("/apis/{group}/{version}/{plural}", get(cluster_collection))
        .fallback(|| async {
            ApiError::new(
                StatusCode::NOT_FOUND,
                "NotFound",
                "the server could not find the requested resource",
            )
        })
        .with_state(state)
}

type NsPath = Path<(String, String, String, String)>;
type ObjPath = Path<(String, String, String, String, String)>;
type CorePath = Path<(String, String, String)>;
type CoreObjPath = Path<(String, String, String, String)>;

async fn collection(
    State(s): State<ServerState>,
    Path((group, version, ns, plural)): NsPath,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    list_or_watch(&s, Resource::new(&group, &version, &plural), Some(ns), q)
}

async fn cluster_collection(
    State(s): State<ServerState>,
    Path((group, version, plural)): Path<(String, String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    list_or_watch(&s, Resource::new(&group, &version, &plural), None, q)
}

async fn core_collection(
    State(s): State<ServerState>,
    Path((version, ns, plural)): CorePath,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    list_or_watch(&s, Resource::new("", &version, &plural), Some(ns), q)
}

async fn create(
    State(s): State<ServerState>,
    Path((group, version, ns, plural)): NsPath,
    body: Bytes,
) -> Response {
    create_in(&s, Resource::new(&group, &version, &plural), &ns, &body)
}

async fn core_create(
    State(s): State<ServerState>,
    Path((version, ns, plural)): CorePath,
    body: Bytes,
) -> Response {
    create_in(&s, Resource::new("", &version, &plural), &ns, &body)
}

async fn object(
    State(s): State<ServerState>,
    Path((group, version, ns, plural, name)): ObjPath,
) -> Response {
    get_in(&s, Resource::new(&group, &version, &plural), &ns, &name)
}

async fn core_object(
    State(s): State<ServerState>,
    Path((version, ns, plural, name)): CoreObjPath,
) -> Response {
    get_in(&s, Resource::new("", &version, &plural), &ns, &name)
}

async fn patch(
    State(s): State<ServerState>,
    Path((group, version, ns, plural, name)): ObjPath,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    patch_in(
        &s,
        Resource::new(&group, &version, &plural),
        &ns,
        &name,
        &headers,
        &body,
    )
}

async fn core_patch(
    State(s): State<ServerState>,
    Path((version, ns, plural, name)): CoreObjPath,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    patch_in(
        &s,
        Resource::new("", &version, &plural),
        &ns,
        &name,
        &headers,
        &body,
    )
}

async fn delete(
    State(s): State<ServerState>,
    Path((group, version, ns, plural, name)): ObjPath,
) -> Response {
    delete_in(&s, Resource::new(&group, &version, &plural), &ns, &name)
}

async fn core_delete(
    State(s): State<ServerState>,
    Path((version, ns, plural, name)): CoreObjPath,
) -> Response {
    delete_in(&s, Resource::new("", &version, &plural), &ns, &name)
}

fn create_in(s: &ServerState, res: Resource, ns: &str, body: &[u8]) -> Response {
    let object: Value = match serde_json::from_slice(body) {
        Ok(Value::Object(o)) => Value::Object(o),
        Ok(_) | Err(_) => {
            return ApiError::new(
                StatusCode::BAD_REQUEST,
                "BadRequest",
                "the body is not a JSON object",
            )
            .into_response();
        }
    };
    if object["metadata"]["namespace"]
        .as_str()
        .is_some_and(|n| n != ns)
    {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "the namespace of the provided object does not match the namespace sent on the request",
        )
        .into_response();
    }
    match s.store.create(&res, ns, object) {
        Ok(created) => (StatusCode::CREATED, axum::Json(created)).into_response(),
        Err(e) => e.into_response(),
    }
}

fn get_in(s: &ServerState, res: Resource, ns: &str, name: &str) -> Response {
    match s.store.get(&res, ns, name) {
        Some(o) => axum::Json(o).into_response(),
        None => ApiError::not_found(&res, name).into_response(),
    }
}

fn patch_in(
    s: &ServerState,
    res: Resource,
    ns: &str,
    name: &str,
    headers: &HeaderMap,
    body: &[u8],
) -> Response {
    let content_type = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    if !content_type.starts_with("application/merge-patch+json") {
        return ApiError::new(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "UnsupportedMediaType",
            format!("the fake API server supports JSON merge patches only, not {content_type:?}"),
        )
        .into_response();
    }
    let Ok(patch) = serde_json::from_slice::<Value>(body) else {
        return ApiError::new(
            StatusCode::BAD_REQUEST,
            "BadRequest",
            "the patch is not JSON",
        )
        .into_response();
    };
    match s.store.update(&res, ns, name, |o| merge_patch(o, &patch)) {
        Some(o) => axum::Json(o).into_response(),
        None => ApiError::not_found(&res, name).into_response(),
    }
}

fn delete_in(s: &ServerState, res: Resource, ns: &str, name: &str) -> Response {
    match s.store.delete(&res, ns, name) {
        Some(o) => axum::Json(o).into_response(),
        None => ApiError::not_found(&res, name).into_response(),
    }
}

/// RFC 7386.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let map = target.as_object_mut().expect("an object");
    for (k, v) in patch {
        if v.is_null() {
            map.remove(k);
        } else {
            merge_patch(map.entry(k.clone()).or_insert(Value::Null), v);
        }
    }
}

/// `labelSelector` (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-separated)
/// and `fieldSelector` (`metadata.name`, `metadata.namespace`).
struct Selector {
    labels: Vec<(String, Option<String>, bool)>,
    fields: Vec<(String, String)>,
}

impl Selector {
    fn parse(q: &HashMap<String, String>) -> Selector {
        let labels = q
            .get("labelSelector")
            .into_iter()
            .flat_map(|s| s.split(','))
            .filter(|t| !t.trim().is_empty())
            .map(|term| {
                let term = term.trim();
                if let Some((k, v)) = term.split_once("!=") {
                    (k.trim().to_owned(), Some(v.trim().to_owned()), false)
                } else if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('='))
                {
                    (k.trim().to_owned(), Some(v.trim().to_owned()), true)
                } else if let Some(k) = term.strip_prefix('!') {
                    (k.to_owned(), None, false)
                } else {
                    (term.to_owned(), None, true)
                }
            })
            .collect();
        let fields = q
            .get("fieldSelector")
            .into_iter()
            .flat_map(|s| s.split(','))
            .filter_map(|t| t.split_once('='))
            .map(|(k, v)| {
                (
                    k.trim_end_matches('!').to_owned(),
                    v.trim_start_matches('=').to_owned(),
                )
            })
            .collect();
        Selector { labels, fields }
    }

    fn matches(&self, object: &Value) -> bool {
        let labels = &object["metadata"]["labels"];
        self.labels.iter().all(|(k, v, equal)| {
            let actual = labels.get(k).and_then(Value::as_str);
            match v {
                Some(v) => (actual == Some(v.as_str())) == *equal,
                None => actual.is_some() == *equal,
            }
        }) && self.fields.iter().all(|(k, v)| {
            let actual = match k.as_str() {
                "metadata.name" => object["metadata"]["name"].as_str(),
                "metadata.namespace" => object["metadata"]["namespace"].as_str(),
                _ => None,
            };
            actual == Some(v.as_str())
        })
    }
}

fn list_or_watch(
    s: &ServerState,
    res: Resource,
    ns: Option<String>,
    q: HashMap<String, String>,
) -> Response {
    let selector = Selector::parse(&q);
    if q.get("watch").is_some_and(|w| w == "true" || w == "1") {
        let since = q
            .get("resourceVersion")
            .map(|v| v.parse::<u64>().unwrap_or(0))
            .unwrap_or(0);
        let timeout = q
            .get("timeoutSeconds")
            .and_then(|t| t.parse::<u64>().ok())
            .unwrap_or(1800);
        let events = s.store.watch(&res, ns.as_deref(), Some(since));
        return watch_response(events, selector, Duration::from_secs(timeout));
    }
    let version = s.store.version();
    let items: Vec<Value> = s
        .store
        .list(&res, ns.as_deref())
        .into_iter()
        .filter(|o| selector.matches(o))
        .collect();
    let kind = items
        .first()
        .and_then(|o| o["kind"].as_str())
        .map(|k| format!("{k}List"))
        .unwrap_or_else(|| "List".into());
    axum::Json(json!({
        "apiVersion": res.api_version(),
        "kind": kind,
        "metadata": {"resourceVersion": version.to_string()},
        "items": items,
    }))
    .into_response()
}

fn watch_response(
    events: mpsc::UnboundedReceiver<(u64, Event)>,
    selector: Selector,
    timeout: Duration,
) -> Response {
    use futures::StreamExt;
    let deadline = tokio::time::Instant::now() + timeout;
    let lines = tokio_stream::wrappers::UnboundedReceiverStream::new(events)
        .filter(move |(_, e)| std::future::ready(selector.matches(&e.object)))
        .map(|(_, e)| {
            let mut line =
                serde_json::to_vec(&json!({"type": e.kind.as_str(), "object": e.object}))
                    .expect("JSON");
            line.push(b'\n');
            Ok::<_, std::convert::Infallible>(Bytes::from(line))
        });
    let lines = tokio_stream::StreamExt::timeout_repeating(
        lines,
        tokio::time::interval_at(deadline, timeout),
    )
    .take_while(|item| std::future::ready(item.is_ok()))
    .filter_map(|item| std::future::ready(item.ok()));
    Response::builder()
        .header(header::CONTENT_TYPE, "application/json")
        .body(Body::from_stream(lines))
        .expect("a response")
}

async fn pod_logs(
    State(s): State<ServerState>,
    Path((ns, name)): Path<(String, String)>,
    Query(q): Query<HashMap<String, String>>,
) -> Response {
    let Some(text) = s.kubelet.logs(&ns, &name) else {
        return ApiError::not_found(&Resource::new("", "v1", "pods"), &name).into_response();
    };
    let text = match q.get("tailLines").and_then(|n| n.parse::<usize>().ok()) {
        Some(n) => {
            let lines: Vec<&str> = text.lines().collect();
            let mut tail = lines[lines.len().saturating_sub(n)..].join("\n");
            tail.push('\n');
            tail
        }
        None => text,
    };
    ([(header::CONTENT_TYPE, "text/plain")], text).into_response()
}

/// RFC 3339 in UTC, as Kubernetes writes timestamps.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

#[cfg(test)]
mod tests;
