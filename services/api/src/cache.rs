//! `/v1/cache`: what a workflow's steps would reuse from the cache
//! (explain), the tenant's cache statistics, invalidation of the tenant's
//! own entries, and a platform-wide flush.
//!
//! Entries may be shared across tenants, so nothing here names another
//! tenant, its workflows or steps, or a cache key. Redis being away
//! degrades explain and stats (200 with `degraded`) and fails the writes
//! with 503 `cache_unavailable`.

use crate::auth::{Auth, Role, tenant_by_id};
use crate::body::{Body, Chosen, choose_workflow};
use crate::error::{ApiError, ApiResult, problem, problem_response};
use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use couler_cache::plan::{Asker, Lookup, Outcome, lookup_plan_with_dag};
use couler_cache::{CacheKey, Invalidate, Scope, Stats, Usage, VerdictStatus};
use couler_ir::scalar::ParamValue;
use couler_optimizer::{Facts, Pipeline, Plan};
use couler_store::{TenantId, WorkflowId};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainRequest {
    /// A stored workflow: its `wf_…` id or its name. Omit when giving `ir`.
    pub workflow: Option<String>,
    /// The version to explain; the latest when absent.
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "crate::wire::version")]
    pub version: Option<i32>,
    /// A workflow document to explain as is, instead of a stored workflow.
    #[schema(value_type = Option<crate::openapi::IrWorkflow>)]
    pub ir: Option<serde_json::Value>,
    /// Values for the workflow's parameters, as for a run.
    #[serde(default)]
    #[schema(value_type = BTreeMap<String, crate::openapi::IrParamValue>)]
    pub parameters: BTreeMap<String, ParamValue>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepCacheStatus {
    /// A result with exactly these inputs is cached: the step would not run.
    Hit,
    /// The step has a key but nothing is cached under it (or the cache is
    /// unavailable).
    Miss,
    /// Known only during the run: its key needs outputs of steps that run
    /// first (a later stage looks it up once they have, when the tenant
    /// ran them before), or it is a search, looked up trial by trial.
    Pending,
    /// The step is never looked up (see `reason`).
    NotCacheable,
    /// Computed before (its cached bytes are gone), and every step that
    /// reads it is a hit: the step would not run.
    NotNeeded,
}

impl StepCacheStatus {
    /// The status as `run_step_cache` stores it ([`VerdictStatus::as_str`]).
    pub(crate) fn parse(s: &str) -> Option<StepCacheStatus> {
        use VerdictStatus::*;
        [Hit, Miss, Pending, NotCacheable, NotNeeded]
            .into_iter()
            .find(|v| v.as_str() == s)
            .map(StepCacheStatus::from)
    }
}

impl From<VerdictStatus> for StepCacheStatus {
    fn from(s: VerdictStatus) -> Self {
        match s {
            VerdictStatus::Hit => StepCacheStatus::Hit,
            VerdictStatus::Miss => StepCacheStatus::Miss,
            VerdictStatus::Pending => StepCacheStatus::Pending,
            VerdictStatus::NotCacheable => StepCacheStatus::NotCacheable,
            VerdictStatus::NotNeeded => StepCacheStatus::NotNeeded,
        }
    }
}

/// Who may reuse the step's result.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum CacheScopeView {
    /// Any tenant that shares its cache.
    Shared,
    /// This tenant only.
    Tenant,
}

impl From<&Scope> for CacheScopeView {
    fn from(s: &Scope) -> Self {
        match s {
            Scope::Shared => CacheScopeView::Shared,
            Scope::Tenant(_) => CacheScopeView::Tenant,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ExplainedStep {
    pub step: String,
    pub status: StepCacheStatus,
    /// Why the step is not a hit, e.g. `policy off`, `reads outputs of b,
    /// known once it has run`, `cache unavailable`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub scope: CacheScopeView,
    /// Compute time the hit saves (hits only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_ms: Option<u64>,
    /// Bytes of the cached outputs (hits only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// The entry hit, when the tenant's own runs produced it (another
    /// tenant's entries show nothing of their history).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entry: Option<OwnEntry>,
}

/// An entry the tenant produced, as the index holds it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct OwnEntry {
    /// When the step that produced it finished.
    pub created_at: DateTime<Utc>,
    /// Runs that reused it since.
    pub hits: u64,
    /// The latest run that reused it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hit_at: Option<DateTime<Utc>>,
    /// When it expires: the step's `cache.ttl`, else the tenant's default,
    /// at most the platform's maximum, from when it was computed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
pub struct ExplainTotals {
    pub steps: u64,
    pub hits: u64,
    pub misses: u64,
    pub pending: u64,
    pub not_cacheable: u64,
    pub not_needed: u64,
    /// Compute time the hits and the steps not needed save.
    pub saved_ms: u64,
    /// Bytes of the hits' cached outputs.
    pub bytes: u64,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Explanation {
    /// The workflow's name.
    pub workflow: String,
    /// Every step (then every exit handler), in document order.
    pub steps: Vec<ExplainedStep>,
    pub totals: ExplainTotals,
    /// The cache index was unavailable: steps that could have hit show as
    /// misses with reason `cache unavailable`.
    pub degraded: bool,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CacheStats {
    /// Steps of the tenant's runs served from the cache.
    pub hits: u64,
    /// Cacheable steps of the tenant's runs that had to run (counted as
    /// each offers its result to the cache).
    pub misses: u64,
    /// Output bytes the hits did not have to produce.
    pub bytes_saved: u64,
    /// Compute time the hits saved.
    pub compute_ms_saved: u64,
    /// Entries the tenant's runs produced that are still cached.
    pub entries_produced: u64,
    /// The cache index was unavailable; the numbers are zero.
    pub degraded: bool,
}

impl CacheStats {
    fn from_stats(s: Stats, degraded: bool) -> Self {
        CacheStats {
            hits: s.hits,
            misses: s.misses,
            bytes_saved: s.bytes_saved,
            compute_ms_saved: s.compute_ms_saved,
            entries_produced: s.entries_produced,
            degraded,
        }
    }
}

/// Exactly one selector: `workflow` with `step`, `image`, `version` or
/// `all: true`. Only entries the tenant's own runs produced are removed.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct InvalidateRequest {
    /// A workflow (name or `wf_…` id) whose `step` wrote the entries or
    /// reused them; needs `step`.
    pub workflow: Option<String>,
    /// The step of `workflow`.
    pub step: Option<String>,
    /// Every entry produced by this image, e.g. `python:3.12`.
    pub image: Option<String>,
    /// Every entry of steps with this `cache.version`.
    pub version: Option<String>,
    /// Every entry the tenant produced (must be `true`).
    pub all: Option<bool>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Removed {
    /// Entries removed (for a flush: Redis keys of the index, bookkeeping included).
    pub removed: u64,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(explain))
        .routes(routes!(stats))
        .routes(routes!(invalidate))
        .routes(routes!(flush))
}

/// The errors of this module: the API's, and 503 `cache_unavailable`
/// (the cache is away; everything else, runs included, still works).
pub enum CacheError {
    Api(ApiError),
    Unavailable,
}

impl From<ApiError> for CacheError {
    fn from(e: ApiError) -> Self {
        CacheError::Api(e)
    }
}

impl IntoResponse for CacheError {
    fn into_response(self) -> Response {
        match self {
            CacheError::Api(e) => e.into_response(),
            CacheError::Unavailable => problem_response(&problem(
                StatusCode::SERVICE_UNAVAILABLE,
                "cache_unavailable",
                "the cache index is unavailable; try again later".into(),
            )),
        }
    }
}

/// Explain which steps of a workflow would come from the cache.
///
/// Plans the workflow with the given parameters, then computes each step's
/// cache key in depth order: a step that reads another step's outputs has a
/// key only when that step is a hit or was computed before (the index keeps
/// a record of what it produced after its bytes go; such a step is
/// `not_needed` when every step reading it is a hit). A hit on an entry the
/// tenant's own runs produced shows when it was computed and how often runs
/// reused it. Nothing is recorded (no hit is counted); only an entry whose
/// artifacts are gone from their store is removed, as by every lookup.
#[utoipa::path(post, path = "/v1/cache/explain", tag = "cache", request_body = ExplainRequest,
    responses((status = 200, body = Explanation), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn explain(
    State(state): State<AppState>,
    Auth(principal): Auth,
    req: Body<ExplainRequest>,
) -> ApiResult<Json<Explanation>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let req = req.parse()?;
    let settings = tenant_by_id(&state, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    let ir = requested_ir(&state, tenant, req.workflow, req.version, req.ir).await?;
    let parameters = req.parameters;
    let (plan, dag) = tokio::task::spawn_blocking(move || plan_of(ir, &parameters))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("planning task failed: {e}")))??;
    let tenant = tenant.to_string();
    let asker = Asker {
        tenant: &tenant,
        shares: settings.share_cache,
        reads: couler_engines::reads_artifacts_from(&settings.engine),
    };
    let lookups = lookup_plan_with_dag(&plan, &dag, asker, &state.cache).await;
    let degraded = couler_cache::verdict::degraded(&lookups, &state.cache).await;
    let hits: Vec<CacheKey> = lookups
        .iter()
        .filter_map(|l| match &l.outcome {
            Outcome::Hit { key, .. } => Some(*key),
            _ => None,
        })
        .collect();
    let usage = state.cache.usage(&tenant, &hits).await.unwrap_or_default();
    let own: HashMap<CacheKey, Usage> = hits
        .into_iter()
        .zip(usage)
        .filter_map(|(k, u)| Some((k, u?)))
        .collect();
    Ok(Json(explanation(&plan, &lookups, &own, degraded)))
}

/// The workflow to explain.
pub(crate) enum Ir {
    /// A stored version's canonical document (valid when stored).
    Stored(serde_json::Value),
    /// An inline document, validated.
    Inline(Box<couler_ir::Workflow>),
}

impl Ir {
    pub(crate) fn into_workflow(self) -> ApiResult<couler_ir::Workflow> {
        match self {
            Ir::Stored(value) => Ok(serde_json::from_value(value).map_err(anyhow::Error::from)?),
            Ir::Inline(workflow) => Ok(*workflow),
        }
    }
}

/// The document of the workflow a request body names (`workflow` and
/// `version`) or holds (`ir`).
pub(crate) async fn requested_ir(
    state: &AppState,
    tenant: TenantId,
    workflow: Option<String>,
    version: Option<i32>,
    ir: Option<serde_json::Value>,
) -> ApiResult<Ir> {
    let chosen = choose_workflow(workflow, version, ir).await?;
    workflow_ir(state, tenant, chosen)
        .await
        .map_err(|e| e.at("/workflow"))
}

/// The document of the chosen workflow.
pub(crate) async fn workflow_ir(
    state: &AppState,
    tenant: TenantId,
    chosen: Chosen,
) -> ApiResult<Ir> {
    match chosen {
        Chosen::Stored { reference, version } => {
            let mut tx = state.store.tenant(tenant).await?;
            let workflow = crate::workflows::resolve(&mut tx, tenant, &reference).await?;
            let number = version.unwrap_or(workflow.latest_version);
            let version =
                couler_store::workflows::get_version(&mut tx, tenant, workflow.id, number)
                    .await?
                    .ok_or_else(|| {
                        ApiError::not_found(format!("version {number} of workflow {reference:?}"))
                            .at("/version")
                    })?;
            tx.commit().await?;
            Ok(Ir::Stored(version.ir.0))
        }
        Chosen::Inline(workflow) => Ok(Ir::Inline(workflow)),
    }
}

/// Plans the workflow as a run with these parameters would (CPU-bound: run
/// it off the async runtime), with the plan's DAG.
fn plan_of(ir: Ir, given: &BTreeMap<String, ParamValue>) -> ApiResult<(Plan, couler_ir::Dag)> {
    let workflow = ir.into_workflow()?;
    let facts = Facts {
        parameters: crate::runs::resolve_parameters(&workflow.parameters, given)?,
        ..Default::default()
    };
    let plan = Pipeline::default()
        .plan(workflow, &facts, |_, apply| apply())
        .map_err(crate::plans::plan_error)?;
    let dag = plan.dag().map_err(ApiError::Invalid)?.into_owned();
    Ok((plan, dag))
}

fn explanation(
    plan: &Plan,
    lookups: &[Lookup],
    own: &HashMap<CacheKey, Usage>,
    degraded: bool,
) -> Explanation {
    let mut totals = ExplainTotals::default();
    let steps = plan
        .steps
        .iter()
        .zip(lookups)
        .map(|(planned, lookup)| {
            let entry = match &lookup.outcome {
                Outcome::Hit { key, entry } => own.get(key).map(|usage| OwnEntry {
                    created_at: from_unix(entry.created_at),
                    hits: usage.hits,
                    last_hit_at: usage.last_hit_at.map(from_unix),
                    expires_at: usage.expires_at.map(from_unix),
                }),
                _ => None,
            };
            let verdict = lookup.verdict(degraded);
            let status = StepCacheStatus::from(verdict.status);
            let (reason, saved_ms, size) = (verdict.reason, verdict.saved_ms, verdict.size);
            totals.steps += 1;
            match status {
                StepCacheStatus::Hit => totals.hits += 1,
                StepCacheStatus::Miss => totals.misses += 1,
                StepCacheStatus::Pending => totals.pending += 1,
                StepCacheStatus::NotCacheable => totals.not_cacheable += 1,
                StepCacheStatus::NotNeeded => totals.not_needed += 1,
            }
            totals.saved_ms += saved_ms.unwrap_or(0);
            totals.bytes += size.unwrap_or(0);
            ExplainedStep {
                step: planned.name.clone(),
                status,
                reason,
                scope: (&lookup.scope).into(),
                saved_ms,
                size,
                entry,
            }
        })
        .collect();
    Explanation {
        workflow: plan.workflow.name.clone(),
        steps,
        totals,
        degraded,
    }
}

/// The tenant's cache statistics: aggregates over its own runs only.
#[utoipa::path(get, path = "/v1/cache/stats", tag = "cache",
    responses((status = 200, body = CacheStats), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn stats(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<CacheStats>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let stats = match state.cache.stats(&tenant.to_string()).await {
        Some(s) => CacheStats::from_stats(s, false),
        None => CacheStats::from_stats(Stats::default(), true),
    };
    Ok(Json(stats))
}

/// Remove cache entries the tenant's runs produced: those one step of a
/// workflow wrote or reused, those of an image, of a `cache.version`, or
/// all of them.
///
/// The body holds exactly one selector. 503 `cache_unavailable` when the
/// cache index cannot be reached.
#[utoipa::path(post, path = "/v1/cache/invalidate", tag = "cache", request_body = InvalidateRequest,
    responses((status = 200, body = Removed),
              (status = 503, body = crate::error::Problem, content_type = "application/problem+json", description = "`cache_unavailable`"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn invalidate(
    State(state): State<AppState>,
    Auth(principal): Auth,
    req: Body<InvalidateRequest>,
) -> Result<Json<Removed>, CacheError> {
    let tenant = principal.tenant(Role::Editor)?;
    let req = req.parse()?;
    let mut what = selector(req)?;
    if let Invalidate::Step { workflow, .. } = &mut what
        && workflow.parse::<WorkflowId>().is_ok()
    {
        *workflow = workflow_name(&state, tenant, workflow).await?;
    }
    let removed = state
        .cache
        .invalidate(&tenant.to_string(), &what)
        .await
        .ok_or(CacheError::Unavailable)?;
    tracing::info!(selector = ?what, removed, "cache entries invalidated");
    Ok(Json(Removed { removed }))
}

/// Entries record the producing workflow's name, not its id.
async fn workflow_name(state: &AppState, tenant: TenantId, id: &str) -> ApiResult<String> {
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = crate::workflows::resolve(&mut tx, tenant, id)
        .await
        .map_err(|e| e.at("/workflow"))?;
    tx.commit().await?;
    Ok(workflow.name)
}

/// The one selector of an invalidation, or 400 pointing at what is wrong.
fn selector(req: InvalidateRequest) -> ApiResult<Invalidate> {
    let bad = |message: &str, path: &str| {
        ApiError::bad_request("invalid_selector", message.to_owned(), path.to_owned())
    };
    let given: Vec<&str> = [
        (req.workflow.is_some() || req.step.is_some(), "/workflow"),
        (req.image.is_some(), "/image"),
        (req.version.is_some(), "/version"),
        (req.all.is_some(), "/all"),
    ]
    .into_iter()
    .filter_map(|(set, path)| set.then_some(path))
    .collect();
    match given[..] {
        [] => {
            return Err(bad(
                "give one of `workflow` with `step`, `image`, `version` or `all: true`",
                "",
            ));
        }
        [_] => {}
        [_, second, ..] => {
            return Err(bad(
                "give only one of `workflow` with `step`, `image`, `version` or `all`",
                second,
            ));
        }
    }
    let nonempty = |value: String, path: &str| {
        if value.trim().is_empty() {
            Err(bad("must not be empty", path))
        } else {
            Ok(value)
        }
    };
    match req {
        InvalidateRequest {
            workflow: Some(workflow),
            step: Some(step),
            ..
        } => Ok(Invalidate::Step {
            workflow: nonempty(workflow, "/workflow")?,
            step: nonempty(step, "/step")?,
        }),
        InvalidateRequest {
            workflow: Some(_), ..
        } => Err(bad("`workflow` needs `step`", "/step")),
        InvalidateRequest { step: Some(_), .. } => Err(bad("`step` needs `workflow`", "/workflow")),
        InvalidateRequest {
            image: Some(image), ..
        } => Ok(Invalidate::Image(nonempty(image, "/image")?)),
        InvalidateRequest {
            version: Some(version),
            ..
        } => Ok(Invalidate::Version(nonempty(version, "/version")?)),
        InvalidateRequest {
            all: Some(true), ..
        } => Ok(Invalidate::All),
        _ => Err(bad("`all` must be true", "/all")),
    }
}

/// Empty the whole cache index, every tenant's entries (platform admins).
#[utoipa::path(delete, path = "/v1/cache", tag = "cache",
    responses((status = 200, body = Removed),
              (status = 503, body = crate::error::Problem, content_type = "application/problem+json", description = "`cache_unavailable`"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn flush(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> Result<Json<Removed>, CacheError> {
    principal.require_platform_admin()?;
    let removed = state.cache.flush().await.ok_or(CacheError::Unavailable)?;
    tracing::warn!(by = %principal.subject, removed, "cache index flushed");
    Ok(Json(Removed { removed }))
}

fn from_unix(secs: i64) -> DateTime<Utc> {
    DateTime::from_timestamp(secs, 0).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(body: serde_json::Value) -> InvalidateRequest {
        serde_json::from_value(body).unwrap()
    }

    fn path_of(e: ApiError) -> Option<String> {
        match e {
            ApiError::BadRequest { path, .. } => path,
            other => panic!("expected a bad request, got {other:?}"),
        }
    }

    #[test]
    fn selectors_take_exactly_one_choice() {
        use serde_json::json;
        assert_eq!(
            selector(req(json!({"workflow": "w", "step": "s"}))).unwrap(),
            Invalidate::Step {
                workflow: "w".into(),
                step: "s".into()
            }
        );
        assert_eq!(
            selector(req(json!({"image": "py:3"}))).unwrap(),
            Invalidate::Image("py:3".into())
        );
        assert_eq!(
            selector(req(json!({"version": "2"}))).unwrap(),
            Invalidate::Version("2".into())
        );
        assert_eq!(
            selector(req(json!({"all": true}))).unwrap(),
            Invalidate::All
        );
        let wrong = [
            (json!({}), ""),
            (json!({"image": "a", "version": "1"}), "/version"),
            (json!({"workflow": "w"}), "/step"),
            (json!({"step": "s"}), "/workflow"),
            (json!({"all": false}), "/all"),
            (json!({"image": " "}), "/image"),
        ];
        for (body, path) in wrong {
            let e = selector(req(body.clone())).unwrap_err();
            assert_eq!(path_of(e).as_deref(), Some(path), "{body}");
        }
    }
}
