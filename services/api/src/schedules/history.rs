//! A schedule's past and future: the preview of its next instants, its
//! tick history, and backfills of a past range.

use super::found;
use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult, pointer};
use crate::state::AppState;
use crate::wire::{Query, path_id};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_ir::{Code, Problem, Problems};
use couler_schedule::due;
use couler_store::backfills::{self, Backfill, Counts, Reprocess, State as BackfillState};
use couler_store::schedules::Schedule;
use couler_store::ticks::{self, Outcome, Tick, TickKind};
use couler_store::{BackfillId, RunId};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;
use utoipa::{IntoParams, ToSchema};

/// Most instants one backfill covers.
const MAX_BACKFILL_ITEMS: usize = 10_000;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct PreviewQuery {
    /// How many instants, 1 to 100 (default 10).
    #[param(minimum = 1, maximum = 100)]
    pub count: Option<u32>,
    /// Preview from this instant (RFC 3339) instead of now.
    pub from: Option<DateTime<Utc>>,
}

/// One upcoming tick.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PreviewTick {
    /// The nominal instant, UTC.
    pub at: DateTime<Utc>,
    /// The same instant on the schedule's wall clock, with its offset.
    pub local: String,
    /// The schedule's zone's offset from UTC then (`+02:00`).
    pub utc_offset: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PreviewView {
    pub timezone: String,
    /// The next instants, in order (fewer when the schedule ends).
    pub ticks: Vec<PreviewTick>,
}

/// The next instants a schedule fires at, with their UTC offsets (check
/// DST changes here before relying on a schedule).
#[utoipa::path(get, path = "/v1/workflows/{workflow}/schedules/{slug}/preview", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug"), PreviewQuery),
    responses((status = 200, body = PreviewView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub(super) async fn preview(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
    Query(q): Query<PreviewQuery>,
) -> ApiResult<Json<PreviewView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let count = q.count.unwrap_or(10);
    if !(1..=100).contains(&count) {
        return Err(ApiError::bad_request(
            "invalid_query",
            "count is 1 to 100",
            "/count",
        ));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let (_, s) = found(&mut tx, tenant, &reference, &slug, false).await?;
    tx.commit().await?;
    let settings = s.settings();
    let calendar = settings
        .calendar()
        .map_err(|p| anyhow::anyhow!("stored schedule does not parse: {p:?}"))?;
    let policy = settings.policy();
    let mut next = due::first(&calendar, &policy, q.from.unwrap_or_else(Utc::now));
    let mut ticks = Vec::with_capacity(count as usize);
    while let Some(at) = next.filter(|t| policy.end_at.is_none_or(|end| *t < end)) {
        if ticks.len() == count as usize {
            break;
        }
        let local = calendar.local(at);
        ticks.push(PreviewTick {
            at,
            local: local.strftime("%Y-%m-%dT%H:%M:%S%:z").to_string(),
            utc_offset: local.strftime("%:z").to_string(),
        });
        next = calendar.next_after(at);
    }
    Ok(Json(PreviewView {
        timezone: s.timezone,
        ticks,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct TicksQuery {
    /// Ticks of instants before this one (RFC 3339): the next page.
    pub before: Option<DateTime<Utc>>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

/// One tick of a schedule and what became of it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TickView {
    /// The nominal instant, UTC (the run's `trigger.scheduled_for`).
    pub nominal_at: DateTime<Utc>,
    /// `catchup`: handled late, after downtime.
    pub kind: TickKind,
    pub outcome: Outcome,
    /// The run it started (`fired`).
    pub run: Option<RunId>,
    /// Why it was skipped, what it cancelled, or why it failed.
    pub detail: Option<String>,
    pub recorded_at: DateTime<Utc>,
}

impl From<Tick> for TickView {
    fn from(t: Tick) -> Self {
        TickView {
            nominal_at: t.nominal_at,
            kind: t.kind,
            outcome: t.outcome,
            run: t.run_id,
            detail: t.detail,
            recorded_at: t.created_at,
        }
    }
}

/// A schedule's ticks, newest first: fired, or skipped and why.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/schedules/{slug}/ticks", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug"), TicksQuery),
    responses((status = 200, body = Vec<TickView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub(super) async fn ticks(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
    Query(q): Query<TicksQuery>,
) -> ApiResult<Json<Vec<TickView>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let limit = q.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_query",
            "limit is 1 to 200",
            "/limit",
        ));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = crate::workflows::resolve(&mut tx, tenant, &reference).await?;
    // The history outlives a deleted schedule: it is read by slug.
    let found = ticks::history(&mut tx, tenant, workflow.id, &slug, q.before, limit.into()).await?;
    tx.commit().await?;
    Ok(Json(found.into_iter().map(Into::into).collect()))
}

/// A backfill to create.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateBackfill {
    /// The first instant of the range (inclusive).
    pub from: DateTime<Utc>,
    /// The end of the range (exclusive); not after now.
    pub to: DateTime<Utc>,
    /// `missing` (default): instants the schedule made no run for;
    /// `failed`: those and instants whose latest run failed or was
    /// cancelled; `all`: every instant.
    #[serde(default)]
    pub reprocess: Reprocess,
    /// Runs of the backfill active at once, 1 to 100 (default 1).
    #[schema(minimum = 1, maximum = 100)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub max_active_runs: Option<i32>,
    /// Only list the instants it would run; nothing is stored.
    #[serde(default)]
    pub dry_run: bool,
}

/// How far a backfill got.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BackfillCounts {
    pub items: i64,
    pub pending: i64,
    pub active: i64,
    pub succeeded: i64,
    pub failed: i64,
}

impl From<Counts> for BackfillCounts {
    fn from(c: Counts) -> Self {
        BackfillCounts {
            items: c.items,
            pending: c.pending,
            active: c.active,
            succeeded: c.succeeded,
            failed: c.failed,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct BackfillView {
    /// Absent for a dry run.
    pub id: Option<BackfillId>,
    pub schedule: String,
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
    pub reprocess: Reprocess,
    pub max_active_runs: i32,
    /// Absent for a dry run.
    pub state: Option<BackfillState>,
    pub dry_run: bool,
    /// The instants it runs (a dry run's answer; empty otherwise).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub instants: Vec<DateTime<Utc>>,
    pub counts: Option<BackfillCounts>,
    pub created_by: Option<String>,
    pub created_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
}

fn view(b: Backfill, slug: &str, counts: Counts) -> BackfillView {
    BackfillView {
        id: Some(b.id),
        schedule: slug.to_owned(),
        from: b.from_at,
        to: b.to_at,
        reprocess: b.reprocess,
        max_active_runs: b.max_active_runs,
        state: Some(b.state),
        dry_run: false,
        instants: Vec::new(),
        counts: Some(counts.into()),
        created_by: Some(b.created_by),
        created_at: Some(b.created_at),
        finished_at: b.finished_at,
    }
}

fn invalid(at: &str, code: Code, message: String) -> ApiError {
    ApiError::Invalid(Problems(vec![Problem {
        path: pointer([at]),
        code,
        message,
    }]))
}

/// The instants of `[from, to)` a backfill of `s` runs.
fn instants(
    s: &Schedule,
    req: &CreateBackfill,
    existing: &HashMap<DateTime<Utc>, couler_store::RunStatus>,
) -> ApiResult<Vec<DateTime<Utc>>> {
    let calendar = s
        .settings()
        .calendar()
        .map_err(|p| anyhow::anyhow!("stored schedule does not parse: {p:?}"))?;
    let all: Vec<DateTime<Utc>> = calendar
        .between(req.from, req.to - chrono::Duration::microseconds(1))
        .take(MAX_BACKFILL_ITEMS + 1)
        .collect();
    if all.len() > MAX_BACKFILL_ITEMS {
        return Err(invalid(
            "to",
            Code::OutOfRange,
            format!("the range holds more than {MAX_BACKFILL_ITEMS} instants; split it"),
        ));
    }
    Ok(all
        .into_iter()
        .filter(|t| req.reprocess.takes(existing.get(t).copied()))
        .collect())
}

/// Backfill a past range: runs of the schedule for its instants (per
/// `reprocess`), `max_active_runs` at a time, made by the schedulers. Its
/// runs say `trigger.kind: backfill`. A range overlapping a running
/// backfill of the schedule is 409; `dry_run` lists the instants only.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/schedules/{slug}/backfills", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    request_body = CreateBackfill,
    responses((status = 201, body = BackfillView), (status = 200, body = BackfillView, description = "A dry run"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub(super) async fn create_backfill(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
    body: Body<CreateBackfill>,
) -> ApiResult<(StatusCode, Json<BackfillView>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let req = body.parse()?;
    if req.to <= req.from {
        return Err(invalid(
            "to",
            Code::OutOfRange,
            "`to` must be after `from`".into(),
        ));
    }
    if req.to > Utc::now() {
        return Err(invalid(
            "to",
            Code::OutOfRange,
            "a backfill covers past instants: `to` is at most now".into(),
        ));
    }
    let max_active_runs = req.max_active_runs.unwrap_or(1);
    if !(1..=100).contains(&max_active_runs) {
        return Err(invalid(
            "max_active_runs",
            Code::OutOfRange,
            "max_active_runs is 1 to 100".into(),
        ));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let (workflow, s) = found(&mut tx, tenant, &reference, &slug, true).await?;
    let existing: HashMap<_, _> =
        backfills::existing_runs(&mut tx, tenant, workflow.id, s.id, req.from, req.to)
            .await?
            .into_iter()
            .collect();
    let items = instants(&s, &req, &existing)?;
    if req.dry_run {
        tx.commit().await?;
        return Ok((
            StatusCode::OK,
            Json(BackfillView {
                id: None,
                schedule: slug,
                from: req.from,
                to: req.to,
                reprocess: req.reprocess,
                max_active_runs,
                state: None,
                dry_run: true,
                instants: items,
                counts: None,
                created_by: None,
                created_at: None,
                finished_at: None,
            }),
        ));
    }
    if let Some(running) = backfills::overlapping(&mut tx, tenant, s.id, req.from, req.to).await? {
        return Err(ApiError::Conflict {
            code: "backfill_running",
            message: format!(
                "backfill {running} of this schedule covers part of the range and is still running"
            ),
        });
    }
    let range = (req.from, req.to);
    let b = backfills::create(
        &mut tx,
        tenant,
        s.id,
        range,
        req.reprocess,
        max_active_runs,
        &items,
        &principal.subject,
    )
    .await?;
    let counts = backfills::counts(&mut tx, tenant, b.id).await?;
    tx.commit().await?;
    tracing::info!(backfill = %b.id, schedule = %s.id, items = items.len(), "backfill created");
    Ok((StatusCode::CREATED, Json(view(b, &slug, counts))))
}

async fn backfill_change(
    state: &AppState,
    tenant: couler_store::TenantId,
    (reference, slug, id): (String, String, String),
    cancel: bool,
) -> ApiResult<Json<BackfillView>> {
    let id: BackfillId = path_id(&id, "backfill")?;
    let mut tx = state.store.tenant(tenant).await?;
    let (_, s) = found(&mut tx, tenant, &reference, &slug, false).await?;
    let missing = || ApiError::not_found(format!("backfill {id}"));
    if cancel && !backfills::cancel(&mut tx, tenant, id).await? {
        let b = backfills::get(&mut tx, tenant, s.id, id)
            .await?
            .ok_or_else(missing)?;
        return Err(ApiError::Conflict {
            code: "backfill_finished",
            message: format!("the backfill is {:?}, not running", b.state),
        });
    }
    let b = backfills::get(&mut tx, tenant, s.id, id)
        .await?
        .ok_or_else(missing)?;
    let counts = backfills::counts(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok(Json(view(b, &slug, counts)))
}

/// Read a backfill and how far it got.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/schedules/{slug}/backfills/{id}", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug"), ("id" = String, Path, description = "Backfill id")),
    responses((status = 200, body = BackfillView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub(super) async fn get_backfill(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(path): Path<(String, String, String)>,
) -> ApiResult<Json<BackfillView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    backfill_change(&state, tenant, path, false).await
}

/// Cancel a backfill: no further item is released; its runs already made
/// go on (cancel them as runs).
#[utoipa::path(post, path = "/v1/workflows/{workflow}/schedules/{slug}/backfills/{id}/cancel", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug"), ("id" = String, Path, description = "Backfill id")),
    responses((status = 200, body = BackfillView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub(super) async fn cancel_backfill(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(path): Path<(String, String, String)>,
) -> ApiResult<Json<BackfillView>> {
    let tenant = principal.tenant(Role::Editor)?;
    backfill_change(&state, tenant, path, true).await
}
