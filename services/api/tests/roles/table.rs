//! The roles table: every authenticated route, the request the test sends
//! to it, and the lowest role that may call it.

use super::common::DIAMOND;
use reqwest::Method;
use serde_json::{Value, json};

/// The role ladder, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    /// A token for the tenant that holds no role in it.
    NoRole,
    Viewer,
    Editor,
    Admin,
    PlatformAdmin,
}

impl Level {
    pub fn below(self) -> Level {
        match self {
            Level::NoRole => panic!("nothing is below no role"),
            Level::Viewer => Level::NoRole,
            Level::Editor => Level::Viewer,
            Level::Admin => Level::Editor,
            Level::PlatformAdmin => Level::Admin,
        }
    }
}

pub enum Payload {
    Empty,
    Json(Value),
    Yaml(String),
}

pub struct Case {
    pub method: Method,
    /// The route as the OpenAPI document names it.
    pub route: &'static str,
    pub path: String,
    pub payload: Payload,
    pub needs: Level,
}

pub fn case(
    method: Method,
    route: &'static str,
    path: String,
    payload: Payload,
    needs: Level,
) -> Case {
    Case {
        method,
        route,
        path,
        payload,
        needs,
    }
}

/// What the table's requests act on, made before any of them runs.
pub struct Fixtures {
    pub tenant: String,
    pub run: String,
    pub queued_run: String,
    pub cancelled_run: String,
    pub api_key: String,
    pub generation: String,
    pub backfill: String,
}

pub fn cases(f: &Fixtures) -> Vec<Case> {
    use Level::*;
    use Payload::*;
    let t = &f.tenant;
    let created = DIAMOND.replacen("name: diamond", "name: created", 1);
    let revised = DIAMOND.replacen(
        "description: A → (B, C) → D",
        "description: revised, A → (B, C) → D",
        1,
    );
    assert_ne!(revised, DIAMOND, "the revision changes nothing");
    vec![
        case(
            Method::POST,
            "/v1/workflows",
            "/v1/workflows".into(),
            Yaml(created),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows",
            "/v1/workflows".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}",
            "/v1/workflows/diamond".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::DELETE,
            "/v1/workflows/{workflow}",
            "/v1/workflows/doomed".into(),
            Empty,
            Editor,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/versions",
            "/v1/workflows/diamond/versions".into(),
            Yaml(revised),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/versions",
            "/v1/workflows/diamond/versions".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/runs",
            "/v1/runs".into(),
            Json(json!({"workflow": "diamond"})),
            Editor,
        ),
        case(Method::GET, "/v1/runs", "/v1/runs".into(), Empty, Viewer),
        case(
            Method::GET,
            "/v1/runs/{id}",
            format!("/v1/runs/{}", f.run),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/runs/{id}/cancel",
            format!("/v1/runs/{}/cancel", f.queued_run),
            Empty,
            Editor,
        ),
        case(
            Method::POST,
            "/v1/runs/{id}/retry",
            format!("/v1/runs/{}/retry", f.cancelled_run),
            Empty,
            Editor,
        ),
        case(
            Method::GET,
            "/v1/runs/{id}/events",
            format!("/v1/runs/{}/events", f.run),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/runs/{id}/logs",
            format!("/v1/runs/{}/logs?step=a", f.run),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/cache/explain",
            "/v1/cache/explain".into(),
            Json(json!({"workflow": "diamond"})),
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/plans",
            "/v1/plans".into(),
            Json(json!({"workflow": "diamond"})),
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/plan",
            "/v1/workflows/diamond/plan".into(),
            Json(json!({})),
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/compile",
            "/v1/workflows/diamond/compile?engine=argo".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/runs/{id}/graph",
            format!("/v1/runs/{}/graph", f.run),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/graph",
            "/v1/graph".into(),
            Json(json!({"workflow": "diamond"})),
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/runs/{id}/plan",
            format!("/v1/runs/{}/plan", f.run),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/schedules",
            S.into(),
            Json(json!({"slug": "made", "crons": ["@daily"]})),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/schedules",
            S.into(),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/schedules/{slug}",
            format!("{S}/kept"),
            Empty,
            Viewer,
        ),
        case(
            Method::PATCH,
            "/v1/workflows/{workflow}/schedules/{slug}",
            format!("{S}/kept"),
            Json(json!({"overlap": "allow"})),
            Editor,
        ),
        case(
            Method::DELETE,
            "/v1/workflows/{workflow}/schedules/{slug}",
            format!("{S}/doomed"),
            Empty,
            Editor,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/schedules/{slug}/pause",
            format!("{S}/kept/pause"),
            Json(json!({"reason": "maintenance"})),
            Editor,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/schedules/{slug}/resume",
            format!("{S}/kept/resume"),
            Empty,
            Editor,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/schedules/{slug}/trigger",
            format!("{S}/kept/trigger"),
            Empty,
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/schedules/{slug}/preview",
            format!("{S}/kept/preview"),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/schedules/{slug}/ticks",
            format!("{S}/kept/ticks"),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/schedules/{slug}/backfills",
            format!("{S}/kept/backfills"),
            Json(json!({"from": "2026-02-01T00:00:00Z", "to": "2026-02-03T00:00:00Z"})),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/schedules/{slug}/backfills/{id}",
            format!("{S}/kept/backfills/{}", f.backfill),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/schedules/{slug}/backfills/{id}/cancel",
            format!("{S}/kept/backfills/{}/cancel", f.backfill),
            Empty,
            Editor,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/triggers",
            T.into(),
            Json(json!({"name": "made", "auth": "bearer"})),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/triggers",
            T.into(),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/triggers/{trigger}",
            format!("{T}/kept"),
            Empty,
            Viewer,
        ),
        case(
            Method::PATCH,
            "/v1/workflows/{workflow}/triggers/{trigger}",
            format!("{T}/kept"),
            Json(json!({"rate_per_second": 20})),
            Editor,
        ),
        case(
            Method::DELETE,
            "/v1/workflows/{workflow}/triggers/{trigger}",
            format!("{T}/doomed"),
            Empty,
            Editor,
        ),
        case(
            Method::POST,
            "/v1/workflows/{workflow}/triggers/{trigger}/rotate",
            format!("{T}/kept/rotate"),
            Json(json!({"grace_secs": 60})),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/workflows/{workflow}/triggers/{trigger}/deliveries",
            format!("{T}/kept/deliveries"),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/cache/stats",
            "/v1/cache/stats".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/cache/invalidate",
            "/v1/cache/invalidate".into(),
            Json(json!({"all": true})),
            Editor,
        ),
        case(
            Method::DELETE,
            "/v1/cache",
            "/v1/cache".into(),
            Empty,
            PlatformAdmin,
        ),
        case(
            Method::POST,
            "/v1/api-keys",
            "/v1/api-keys".into(),
            Json(json!({"name": "ci", "roles": ["viewer"]})),
            Admin,
        ),
        case(
            Method::GET,
            "/v1/api-keys",
            "/v1/api-keys".into(),
            Empty,
            Admin,
        ),
        case(
            Method::DELETE,
            "/v1/api-keys/{id}",
            format!("/v1/api-keys/{}", f.api_key),
            Empty,
            Admin,
        ),
        case(Method::GET, "/v1/quotas", "/v1/quotas".into(), Empty, Admin),
        case(
            Method::PUT,
            "/v1/quotas",
            "/v1/quotas".into(),
            Json(json!({
                "max_concurrent_runs": 20,
                "max_queued_runs": 2000,
                "requests_per_second": 10000,
            })),
            Admin,
        ),
        case(
            Method::GET,
            "/v1/tenants/{id}",
            format!("/v1/tenants/{t}"),
            Empty,
            Admin,
        ),
        case(
            Method::PATCH,
            "/v1/tenants/{id}",
            format!("/v1/tenants/{t}"),
            Json(json!({"display_name": "Acme Corp"})),
            Admin,
        ),
        // Still allows what the generation cases below draft.
        case(
            Method::PATCH,
            "/v1/tenants/{id}",
            format!("/v1/tenants/{t}"),
            Json(json!({"allowed_images": ["python:3.12"]})),
            Admin,
        ),
        case(
            Method::PUT,
            "/v1/secrets/{name}",
            "/v1/secrets/hub".into(),
            Json(json!({"data": {"token": "s3cr3t"}})),
            Admin,
        ),
        case(
            Method::GET,
            "/v1/secrets",
            "/v1/secrets".into(),
            Empty,
            Editor,
        ),
        case(
            Method::GET,
            "/v1/secrets/{name}",
            "/v1/secrets/hub".into(),
            Empty,
            Editor,
        ),
        case(
            Method::GET,
            "/v1/secrets:audit",
            "/v1/secrets:audit".into(),
            Empty,
            Admin,
        ),
        case(
            Method::DELETE,
            "/v1/secrets/{name}",
            "/v1/secrets/hub".into(),
            Empty,
            Admin,
        ),
        case(
            Method::POST,
            "/v1/tenants",
            "/v1/tenants".into(),
            Json(json!({"name": "newcomer"})),
            PlatformAdmin,
        ),
        case(
            Method::GET,
            "/v1/tenants",
            "/v1/tenants".into(),
            Empty,
            PlatformAdmin,
        ),
        case(
            Method::PUT,
            "/v1/tenants/{id}/llm-budget",
            format!("/v1/tenants/{t}/llm-budget"),
            Json(json!({"monthly_budget": 100000})),
            PlatformAdmin,
        ),
        case(
            Method::GET,
            "/v1/llm-usage",
            "/v1/llm-usage".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/generations",
            "/v1/generations".into(),
            Json(json!({"description": GENERATE})),
            Editor,
        ),
        // Importing to look is for viewers; storing or running an import
        // takes an editor (tests/imports.rs).
        case(
            Method::POST,
            "/v1/workflows:import",
            "/v1/workflows:import".into(),
            Json(json!({"source": IMPORTED})),
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/workflows:generate",
            "/v1/workflows:generate".into(),
            Json(json!({"description": GENERATE})),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/generations",
            "/v1/generations".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/generations/{id}",
            format!("/v1/generations/{}", f.generation),
            Empty,
            Viewer,
        ),
        case(
            Method::GET,
            "/v1/generations/{id}/drafts/{n}",
            format!("/v1/generations/{}/drafts/1", f.generation),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/generations/{id}/feedback",
            format!("/v1/generations/{}/feedback", f.generation),
            Json(json!({"text": "use 4 GPUs for training"})),
            Editor,
        ),
        case(
            Method::GET,
            "/v1/step-library",
            "/v1/step-library".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::POST,
            "/v1/step-library",
            "/v1/step-library".into(),
            Json(template("new-step")),
            Admin,
        ),
        case(
            Method::GET,
            "/v1/step-library/{name}",
            "/v1/step-library/kept-step".into(),
            Empty,
            Viewer,
        ),
        case(
            Method::PUT,
            "/v1/step-library/{name}",
            "/v1/step-library/kept-step".into(),
            Json(template("kept-step")),
            Admin,
        ),
        case(
            Method::DELETE,
            "/v1/step-library/{name}",
            "/v1/step-library/doomed-step".into(),
            Empty,
            Admin,
        ),
    ]
}

/// The schedules of the table's workflow.
pub const S: &str = "/v1/workflows/diamond/schedules";
/// The webhook triggers of the table's workflow.
pub const T: &str = "/v1/workflows/diamond/triggers";

pub const GENERATE: &str =
    "load the data from https://example.com/d.csv, then train an xgboost model";

/// A tenant step template.
pub fn template(id: &str) -> Value {
    json!({
        "id": id,
        "kind": "notify",
        "description": "Print a message.",
        "step": {"container": {"image": "alpine:3.20", "command": ["echo", "hi"]}},
    })
}

/// An Argo workflow that imports with nothing left behind.
pub const IMPORTED: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {name: imported}\nspec:\n  entrypoint: main\n  templates:\n  - name: main\n    container: {image: alpine, command: [echo, hi]}\n";
