//! `/v1/runs`: create (from a stored workflow or inline IR, idempotent with
//! `Idempotency-Key`), list, read with steps, cancel, retry.

use crate::auth::{Auth, Role, tenant_by_id};
use crate::batch::{self, Target};
use crate::body::{Body, Chosen, choose_workflow};
use crate::cache::StepCacheStatus;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::{List, PageQuery, Query, parse_labels, path_id};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use chrono::{DateTime, Utc};
use couler_ir::Parameter;
use couler_ir::scalar::ParamValue;
use couler_store::runs::{
    self, ChangeError, Created, Filter, Run, Source, Step, Trigger, TriggerKind,
};
use couler_store::step_cache::{self, StepCache};
use couler_store::webhooks::NewDelivery;
use couler_store::{
    BackfillId, RunId, RunStatus, ScheduleId, StepStatus, TenantId, TriggerId, WorkflowId,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateRun {
    /// The workflow to run: its `wf_…` id or its name. Omit when giving `ir`.
    pub workflow: Option<String>,
    /// The version to run; the latest when absent.
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "crate::wire::version")]
    pub version: Option<i32>,
    /// A workflow document to run as is, instead of a stored workflow.
    #[schema(value_type = Option<crate::openapi::IrWorkflow>)]
    pub ir: Option<serde_json::Value>,
    /// Values for the workflow's parameters (strings, numbers or booleans).
    #[serde(default)]
    #[schema(value_type = BTreeMap<String, crate::openapi::IrParamValue>)]
    pub parameters: BTreeMap<String, ParamValue>,
    /// Higher runs start first within the tenant (-1000 to 1000, default 0).
    #[schema(minimum = -1000, maximum = 1000)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub priority: Option<i32>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunWorkflowRef {
    pub id: WorkflowId,
    pub version: i32,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StepView {
    pub name: String,
    pub status: StepStatus,
    pub attempt: i32,
    pub message: Option<String>,
    #[schema(value_type = Object)]
    pub outputs: serde_json::Value,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The engine's name for the step (a pod, a task instance, a try
    /// directory).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ref: Option<String>,
    /// Wall-clock time of its last attempt, as the engine measured it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<i64>,
    /// CPU time (user + system) of its last attempt, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_ms: Option<i64>,
    /// Peak resident memory of its last attempt, where measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rss_kb: Option<i64>,
    /// The exit code of its last attempt, where it exited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i32>,
    /// What the cache index said of the step when the run was planned (or
    /// its stage looked up); absent where nothing was looked up (no cache
    /// configured, a map instance, a step kept from an earlier attempt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<StepCacheView>,
}

/// A step's cache verdict in a run.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StepCacheView {
    pub status: StepCacheStatus,
    /// Why the step is not a hit, e.g. `not cached`, `policy off`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Compute time the step did not spend (hits and steps not needed):
    /// what the run that computed it took.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub saved_ms: Option<i64>,
    /// For a hit: the tenant's own run that computed it (absent when
    /// another tenant's run did, or that run is unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub producer_run: Option<RunId>,
}

impl StepCacheView {
    fn from_record(c: StepCache) -> Option<StepCacheView> {
        Some(StepCacheView {
            status: StepCacheStatus::parse(&c.status)?,
            reason: c.reason,
            saved_ms: c.saved_ms,
            producer_run: c.producer_run,
        })
    }
}

impl From<Step> for StepView {
    fn from(s: Step) -> Self {
        StepView {
            name: s.name,
            status: s.status,
            attempt: s.attempt,
            message: s.message,
            outputs: s.outputs.0,
            started_at: s.started_at,
            finished_at: s.finished_at,
            engine_ref: s.engine_ref,
            wall_ms: s.wall_ms,
            cpu_ms: s.cpu_ms,
            max_rss_kb: s.max_rss_kb,
            exit_code: s.exit_code,
            cache: None,
        }
    }
}

/// What started a run.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TriggerView {
    pub kind: TriggerKind,
    /// The schedule (`sch_…`), backfill (`bf_…`) or webhook trigger
    /// (`trg_…`) that started it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The nominal instant of the schedule's tick the run is for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduled_for: Option<DateTime<Utc>>,
}

impl TriggerView {
    fn of(r: &Run) -> TriggerView {
        let id = r.trigger_id.map(|id| match r.trigger_kind {
            TriggerKind::Schedule => ScheduleId(id).to_string(),
            TriggerKind::Backfill => BackfillId(id).to_string(),
            TriggerKind::Webhook => TriggerId(id).to_string(),
            TriggerKind::Api => id.simple().to_string(),
        });
        TriggerView {
            kind: r.trigger_kind,
            id,
            scheduled_for: r.scheduled_for,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct RunView {
    pub id: RunId,
    /// The stored workflow version, absent for inline IR.
    pub workflow: Option<RunWorkflowRef>,
    pub workflow_name: String,
    /// Digest of the IR the run executes.
    pub ir_hash: String,
    pub status: RunStatus,
    pub parameters: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub priority: i32,
    /// 1, plus one per retry.
    pub attempt: i32,
    pub message: Option<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub queued_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// A cancel was asked for and the scheduler is stopping the run.
    pub cancel_requested: bool,
    /// What started the run: the API, a schedule (with the tick's nominal
    /// instant), a backfill or a webhook.
    pub trigger: TriggerView,
    /// Per-step status (in `GET /v1/runs/{id}`): every step the run has
    /// dispatched, cached or skipped and, while it is running, the rest of
    /// its plan as `pending`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub steps: Vec<StepView>,
    /// The id of the run's latest event when `steps` was read (in `GET
    /// /v1/runs/{id}`): follow `/events` with `Last-Event-ID` set to it and
    /// no change is missed (one may arrive that `steps` already shows).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_event_id: Option<i64>,
    /// How many of the run's steps are in each status (in lists; steps of
    /// its plan that have not started are not counted).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step_counts: Option<BTreeMap<StepStatus, i64>>,
    /// Compute time the run's cached steps (and steps not needed) saved,
    /// in milliseconds (in lists and `GET /v1/runs/{id}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_saved_ms: Option<i64>,
    /// What the run produced beyond its steps (in `GET /v1/runs/{id}`):
    /// `tuning.STEP` holds a hyperparameter search's best trial and its
    /// full trial table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Object>)]
    pub outputs: Option<serde_json::Value>,
}

impl From<Run> for RunView {
    fn from(r: Run) -> Self {
        let trigger = TriggerView::of(&r);
        RunView {
            id: r.id,
            workflow: r
                .workflow_id
                .zip(r.workflow_version)
                .map(|(id, version)| RunWorkflowRef { id, version }),
            workflow_name: r.workflow_name,
            ir_hash: r.ir_hash,
            status: r.status,
            parameters: r.parameters.0,
            labels: r.labels.0,
            priority: r.priority,
            attempt: r.attempt,
            message: r.message,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
            queued_at: r.queued_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            cancel_requested: r.cancel_requested_at.is_some(),
            trigger,
            steps: Vec::new(),
            last_event_id: None,
            step_counts: None,
            cache_saved_ms: None,
            outputs: None,
        }
    }
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    pub status: Option<RunStatus>,
    /// Workflow id (`wf_…`) or name.
    pub workflow: Option<String>,
    /// Label selector `key=value[,key=value…]`.
    pub label: Option<String>,
    /// Created at or after (RFC 3339).
    pub created_after: Option<DateTime<Utc>>,
    /// Created before (RFC 3339).
    pub created_before: Option<DateTime<Utc>>,
    /// From a previous page's `next_cursor`.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_run, list_runs))
        .routes(routes!(get_run))
        .routes(routes!(cancel_run))
        .routes(routes!(retry_run))
        .routes(routes!(crate::events::run_events))
        .routes(routes!(crate::logs::step_logs))
}

const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Checks run parameters against the workflow's declarations and fills in
/// defaults.
pub(crate) fn resolve_parameters(
    declared: &[Parameter],
    given: &BTreeMap<String, ParamValue>,
) -> ApiResult<BTreeMap<String, String>> {
    couler_ir::params::resolve(declared, given).map_err(ApiError::Invalid)
}

fn check_labels(labels: &BTreeMap<String, String>) -> ApiResult<()> {
    for (k, v) in labels {
        if !couler_ir::names::is_label_key(k) || !couler_ir::names::is_label_value(v) {
            return Err(ApiError::bad_request(
                "invalid_label",
                format!("{k:?}={v:?} is not a valid label"),
                crate::error::pointer(["labels", k]),
            ));
        }
    }
    Ok(())
}

/// Create a run and queue it.
///
/// With an `Idempotency-Key` header, repeating the same request returns the
/// same run (200); the same key with a different body is a 409. A workflow
/// whose steps read a secret (`env[].secret`) the tenant does not have, or
/// a key the secret does not hold, is refused: 422 with an `unknown_secret`
/// or `unknown_secret_key` problem per read, naming the step (at the
/// reference in `ir`, or at `/workflow` for a stored workflow).
#[utoipa::path(post, path = "/v1/runs", tag = "runs", request_body = CreateRun,
    params(("Idempotency-Key" = Option<String>, Header, pattern = "^[!-~]{1,255}$", description = "Makes retried creates return the same run (1 to 255 visible ASCII characters)")),
    responses((status = 201, body = RunView), (status = 200, body = RunView, description = "An earlier request with the same Idempotency-Key"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_run(
    State(state): State<AppState>,
    Auth(principal): Auth,
    headers: HeaderMap,
    req: Body<CreateRun>,
) -> ApiResult<(StatusCode, Json<RunView>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let req = req.parse()?;
    let idempotency_key = match headers.get(IDEMPOTENCY_KEY) {
        None => None,
        Some(v) => match v.to_str() {
            Ok(k) if (1..=255).contains(&k.len()) && k.bytes().all(|b| b.is_ascii_graphic()) => {
                Some(k.to_owned())
            }
            _ => {
                return Err(ApiError::bad_request(
                    "invalid_idempotency_key",
                    "Idempotency-Key must be 1 to 255 visible ASCII characters",
                    "",
                ));
            }
        },
    };
    let request_hash = idempotency_key.as_ref().map(|_| {
        blake3::hash(&serde_json::to_vec(&req).expect("requests serialize"))
            .to_hex()
            .to_string()
    });
    let options = RunOptions {
        parameters: req.parameters,
        labels: req.labels,
        priority: req.priority,
    };
    options.check()?;
    let target = match choose_workflow(req.workflow, req.version, req.ir).await? {
        Chosen::Stored { reference, version } => Target::Stored { reference, version },
        Chosen::Inline(workflow) => inline_target(*workflow)?,
    };
    let start = Start {
        created_by: principal.subject.clone(),
        target,
        options,
        idempotency: idempotency_key.zip(request_hash),
        trigger: Trigger::default(),
        delivery: None,
    };
    let (status, run) = start.queue(&state, tenant).await?;
    Ok((status, Json(run)))
}

/// How to run a workflow, where the workflow is given elsewhere.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RunOptions {
    /// Values for the workflow's parameters (strings, numbers or booleans).
    #[serde(default)]
    #[schema(value_type = BTreeMap<String, crate::openapi::IrParamValue>)]
    pub parameters: BTreeMap<String, ParamValue>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Higher runs start first within the tenant (-1000 to 1000, default 0).
    #[schema(minimum = -1000, maximum = 1000)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub priority: Option<i32>,
}

impl RunOptions {
    /// The checks that need no workflow: priority range, label syntax.
    pub(crate) fn check(&self) -> ApiResult<()> {
        if !(-1000..=1000).contains(&self.priority.unwrap_or(0)) {
            return Err(ApiError::bad_request(
                "invalid_priority",
                "priority must be between -1000 and 1000",
                "/priority",
            ));
        }
        check_labels(&self.labels)
    }
}

/// A validated workflow document as what a run executes.
pub(crate) fn inline_target(workflow: couler_ir::Workflow) -> ApiResult<Target> {
    Ok(Target::Inline(batch::Workflow {
        ir_hash: couler_ir::hash::workflow_digest(&workflow).to_hex(),
        secrets: crate::run_secrets::SecretUse::of_inline(&workflow),
        source: Source::Inline(
            serde_json::to_value(&workflow)
                .map_err(anyhow::Error::from)?
                .into(),
        ),
        name: workflow.name,
        declared: workflow.parameters,
    }))
}

/// A run to queue: what every way of starting one (the API, a schedule's
/// manual trigger, an import, a webhook delivery) hands the batcher.
pub(crate) struct Start {
    pub created_by: String,
    /// What it runs, with options checked by [`RunOptions::check`].
    pub target: Target,
    pub options: RunOptions,
    /// The idempotency key and the request's hash.
    pub idempotency: Option<(String, String)>,
    /// What started it.
    pub trigger: Trigger,
    /// The webhook delivery it is for, recorded with it.
    pub delivery: Option<NewDelivery>,
}

impl Start {
    /// Queues the run within the tenant's queue quota: 201 for a new run,
    /// 200 for the one an earlier request with the same key made.
    pub(crate) async fn queue(
        self,
        state: &AppState,
        tenant: TenantId,
    ) -> ApiResult<(StatusCode, RunView)> {
        let quotas = tenant_by_id(state, tenant)
            .await?
            .ok_or_else(|| ApiError::not_found("tenant"))?
            .quotas;
        state
            .queue
            .check(&state.store, tenant, quotas.max_queued_runs)
            .await?;
        let (idempotency_key, request_hash) = self.idempotency.unzip();
        // The workflow is looked up, and the parameters checked, in the batch.
        let create = batch::CreateRun {
            target: self.target,
            parameters: self.options.parameters,
            labels: self.options.labels,
            priority: self.options.priority.unwrap_or(0),
            idempotency_key,
            request_hash,
            trace_context: couler_telemetry::current_trace_context(),
            created_by: self.created_by,
            trigger: self.trigger,
            delivery: self.delivery,
        };
        let created = state.batcher.create(tenant, create).await?;
        match created {
            Created::New(run) => {
                state.queue.created(tenant);
                metrics::counter!("couler_runs_created_total").increment(1);
                tracing::info!(run = %run.id, workflow = %run.workflow_name, "run queued");
                Ok((StatusCode::CREATED, run.into()))
            }
            Created::Existing(run) => Ok((StatusCode::OK, run.into())),
            Created::KeyReused => Err(ApiError::Conflict {
                code: "idempotency_key_reused",
                message: "this Idempotency-Key was used for a different request".into(),
            }),
        }
    }
}

/// List runs, newest first.
#[utoipa::path(get, path = "/v1/runs", tag = "runs", params(ListQuery),
    responses((status = 200, body = List<RunView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_runs(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<List<RunView>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let page = PageQuery {
        cursor: q.cursor,
        limit: q.limit,
    };
    let mut tx = state.store.tenant(tenant).await?;
    // By id (a deleted workflow's runs stay listed), or by the name of a
    // live one; a name that names nothing has no runs.
    let workflow_id = match q.workflow.as_deref() {
        None => None,
        Some(w) => match w.parse::<WorkflowId>() {
            Ok(id) => Some(id),
            Err(_) => match couler_store::workflows::get_by_name(&mut tx, tenant, w).await? {
                Some(workflow) => Some(workflow.id),
                None => {
                    return Ok(Json(List {
                        items: Vec::new(),
                        next_cursor: None,
                    }));
                }
            },
        },
    };
    let filter = Filter {
        status: q.status,
        workflow_id,
        labels: parse_labels(q.label.as_deref())?,
        created_after: q.created_after,
        created_before: q.created_before,
    };
    let found = runs::list(&mut tx, tenant, &filter, page.cursor()?, page.limit()?).await?;
    let ids: Vec<RunId> = found.items.iter().map(|r| r.id).collect();
    let mut counts: HashMap<RunId, BTreeMap<StepStatus, i64>> = HashMap::new();
    for (run, status, n) in runs::step_counts(&mut tx, tenant, &ids).await? {
        counts.entry(run).or_default().insert(status, n);
    }
    let mut saved: HashMap<RunId, i64> = step_cache::savings(&mut tx, tenant, &ids)
        .await?
        .into_iter()
        .collect();
    tx.commit().await?;
    let items = found
        .items
        .into_iter()
        .map(|r| {
            let mut view = RunView::from(r);
            view.step_counts = Some(counts.remove(&view.id).unwrap_or_default());
            view.cache_saved_ms = Some(saved.remove(&view.id).unwrap_or(0));
            view
        })
        .collect();
    Ok(Json(List {
        items,
        next_cursor: found.next.map(|c| c.encode()),
    }))
}

/// Read a run with its steps.
#[utoipa::path(get, path = "/v1/runs/{id}", tag = "runs", params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = RunView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_run(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<RunView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let id: RunId = path_id(&id, "run")?;
    let mut tx = state.store.tenant(tenant).await?;
    let run = runs::get(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found("run"))?;
    // The event id first: whatever happens after it, the stream delivers.
    let last_event_id = runs::last_event_id(&mut tx, tenant, id).await?;
    let steps = runs::steps(&mut tx, tenant, id).await?;
    let outputs = runs::outputs(&mut tx, tenant, id).await?;
    let verdicts = step_cache::of_run(&mut tx, tenant, id).await?;
    tx.commit().await?;
    let mut view = RunView::from(run);
    view.cache_saved_ms = Some(verdicts.iter().filter_map(|v| v.saved_ms).sum());
    let mut verdicts: HashMap<String, StepCache> =
        verdicts.into_iter().map(|v| (v.step.clone(), v)).collect();
    view.steps = (steps.into_iter())
        .map(|s| {
            let cache = verdicts.remove(&s.name);
            let mut step = StepView::from(s);
            step.cache = cache.and_then(StepCacheView::from_record);
            step
        })
        .collect();
    view.last_event_id = last_event_id;
    view.outputs = outputs.filter(|o| o.as_object().is_some_and(|m| !m.is_empty()));
    Ok(Json(view))
}

fn change_conflict(e: ChangeError, code: &'static str) -> ApiError {
    ApiError::Conflict {
        code,
        message: e.to_string(),
    }
}

#[derive(Clone, Copy)]
enum Change {
    Cancel,
    Retry,
}

async fn change(
    state: &AppState,
    tenant: TenantId,
    id: RunId,
    what: Change,
) -> ApiResult<Json<RunView>> {
    let mut tx = state.store.tenant(tenant).await?;
    let (outcome, code) = match what {
        Change::Cancel => (runs::cancel(&mut tx, tenant, id).await?, "run_finished"),
        Change::Retry => (runs::retry(&mut tx, tenant, id).await?, "run_not_retryable"),
    };
    let run = outcome
        .ok_or_else(|| ApiError::not_found("run"))?
        .map_err(|e| change_conflict(e, code))?;
    tx.commit().await?;
    state.queue.invalidate(tenant);
    Ok(Json(run.into()))
}

/// Cancel a run: a queued run ends at once; a running one is stopped by the scheduler.
#[utoipa::path(post, path = "/v1/runs/{id}/cancel", tag = "runs", params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = RunView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn cancel_run(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<RunView>> {
    let tenant = principal.tenant(Role::Editor)?;
    let id: RunId = path_id(&id, "run")?;
    change(&state, tenant, id, Change::Cancel).await
}

/// Retry a failed or cancelled run from its failed steps; succeeded, skipped
/// and cached steps keep their results.
#[utoipa::path(post, path = "/v1/runs/{id}/retry", tag = "runs", params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = RunView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn retry_run(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<RunView>> {
    let tenant = principal.tenant(Role::Editor)?;
    let id: RunId = path_id(&id, "run")?;
    change(&state, tenant, id, Change::Retry).await
}
