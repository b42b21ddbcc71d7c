//! `/v1/workflows/{workflow}/schedules`: schedules of a workflow, fired by
//! the schedulers' tickers as ordinary runs on every engine. Create, read,
//! change in place, delete, pause and resume, trigger a run now, preview
//! the next instants, the tick history, and backfills (`history.rs`).

mod history;
mod wire;

pub use history::{BackfillView, CreateBackfill, PreviewTick, PreviewView, TickView};
pub use wire::{ScheduleSettings, ScheduleView};

use crate::auth::{Auth, Role};
use crate::batch::Target;
use crate::body::Body;
use crate::error::{ApiError, ApiResult, pointer};
use crate::runs::{RunOptions, RunView};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, SubsecRound, Utc};
use couler_ir::scalar::ParamValue;
use couler_ir::{Code, Parameter, Problem, Problems};
use couler_schedule::params;
use couler_store::runs::{Trigger, TriggerKind};
use couler_store::schedules::{self, DEFAULT_SLUG, Schedule, Settings};
use couler_store::workflows::Workflow;
use couler_store::{TenantId, Tx};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};
use wire::Check;

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_schedule, list_schedules))
        .routes(routes!(get_schedule, update_schedule, delete_schedule))
        .routes(routes!(pause_schedule))
        .routes(routes!(resume_schedule))
        .routes(routes!(trigger_schedule))
        .routes(routes!(history::preview))
        .routes(routes!(history::ticks))
        .routes(routes!(history::create_backfill))
        .routes(routes!(history::get_backfill))
        .routes(routes!(history::cancel_backfill))
}

/// A workflow's schedule by slug, or 404.
async fn found(
    tx: &mut Tx,
    tenant: TenantId,
    reference: &str,
    slug: &str,
    lock: bool,
) -> ApiResult<(Workflow, Schedule)> {
    let workflow = crate::workflows::resolve(tx, tenant, reference).await?;
    let schedule = if lock {
        schedules::get_for_update(tx, tenant, workflow.id, slug).await?
    } else {
        schedules::get(tx, tenant, workflow.id, slug).await?
    };
    let schedule = schedule.ok_or_else(|| {
        ApiError::not_found(format!("schedule {slug:?} of workflow {reference:?}"))
    })?;
    Ok((workflow, schedule))
}

/// What a schedule of `workflow` running `version` is checked against.
async fn check_for(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: &Workflow,
    version: Option<i32>,
) -> ApiResult<(DateTime<Utc>, i32, Vec<Parameter>)> {
    let target = couler_store::workflows::for_run(tx, tenant, &workflow.id.to_string(), version)
        .await?
        .ok_or_else(|| {
            ApiError::Invalid(Problems(vec![Problem {
                path: pointer(["version"]),
                code: Code::OutOfRange,
                message: format!("workflow {:?} has no version {version:?}", workflow.name),
            }]))
        })?;
    let declared: Vec<Parameter> =
        serde_json::from_value(target.parameters.0).map_err(anyhow::Error::from)?;
    let min = schedules::min_interval_secs(tx, tenant).await?;
    Ok((Utc::now(), min, declared))
}

/// Checks `body` over `base`: the version it names (or the current one)
/// must exist, and every problem is reported with `extra` at once.
async fn settle(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: &Workflow,
    base: Settings,
    body: ScheduleSettings,
    extra: Vec<Problem>,
) -> ApiResult<Settings> {
    let version = body.version.unwrap_or(base.workflow_version);
    let (now, min_interval_secs, declared) = check_for(tx, tenant, workflow, version).await?;
    let check = Check {
        now,
        min_interval_secs,
        declared: Some(&declared),
    };
    match (body.apply(base, &check), extra.is_empty()) {
        (Ok(settings), true) => Ok(settings),
        (Ok(_), false) => Err(ApiError::Invalid(Problems(extra))),
        (Err(ApiError::Invalid(Problems(found))), _) => Err(ApiError::Invalid(Problems(
            extra.into_iter().chain(found).collect(),
        ))),
        (Err(e), _) => Err(e),
    }
}

fn from_workflow(what: &str) -> ApiError {
    ApiError::Conflict {
        code: "schedule_from_workflow",
        message: format!(
            "this is the workflow's own schedule (its `schedule:`); {what} by adding a version of the workflow"
        ),
    }
}

/// Create a schedule of a workflow.
///
/// Its first tick is the first instant after now. Invalid crons (six or
/// seven fields), unknown time zones, parameters the workflow does not
/// take, and crons that tick more often than the tenant allows are 422 with
/// every problem at its pointer; a slug in use is 409.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/schedules", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    request_body = ScheduleSettings,
    responses((status = 201, body = ScheduleView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
    body: Body<ScheduleSettings>,
) -> ApiResult<(StatusCode, Json<ScheduleView>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut body = body.parse()?;
    let mut extra = Vec::new();
    let slug = body.slug.take().unwrap_or_default();
    if slug == DEFAULT_SLUG {
        extra.push(Problem {
            path: pointer(["slug"]),
            code: Code::InvalidName,
            message: "`default` is the workflow's own schedule: declare it with `schedule:` in the workflow".into(),
        });
    } else if !couler_ir::names::is_dns_label(&slug) {
        extra.push(Problem {
            path: pointer(["slug"]),
            code: if slug.is_empty() { Code::MissingField } else { Code::InvalidName },
            message: format!("slug {slug:?} must be 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"),
        });
    }
    if body.crons.is_none() {
        extra.push(Problem {
            path: pointer(["crons"]),
            code: Code::MissingField,
            message: "a schedule needs at least one cron".into(),
        });
        body.crons = Some(vec!["@daily".into()]);
    }
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = crate::workflows::resolve(&mut tx, tenant, &reference).await?;
    let settings = settle(
        &mut tx,
        tenant,
        &workflow,
        Settings::new(Vec::new()),
        body,
        extra,
    )
    .await?;
    let created = schedules::create(
        &mut tx,
        tenant,
        workflow.id,
        &slug,
        "api",
        &settings,
        &principal.subject,
    )
    .await?;
    tx.commit().await?;
    tracing::info!(schedule = %created.id, workflow = %workflow.id, slug, "schedule created");
    Ok((StatusCode::CREATED, Json(created.into())))
}

/// List a workflow's schedules, by slug.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/schedules", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    responses((status = 200, body = Vec<ScheduleView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_schedules(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
) -> ApiResult<Json<Vec<ScheduleView>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = crate::workflows::resolve(&mut tx, tenant, &reference).await?;
    let found = schedules::list(&mut tx, tenant, workflow.id).await?;
    tx.commit().await?;
    Ok(Json(found.into_iter().map(Into::into).collect()))
}

/// Read a schedule.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/schedules/{slug}", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    responses((status = 200, body = ScheduleView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
) -> ApiResult<Json<ScheduleView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let (_, schedule) = found(&mut tx, tenant, &reference, &slug, false).await?;
    tx.commit().await?;
    Ok(Json(schedule.into()))
}

/// Change a schedule in place.
///
/// Its id, slug and tick history stay. A change of its crons, time zone,
/// jitter, start or end recomputes the next tick from now (the past is
/// never filled in; use a backfill). The workflow's own schedule
/// (`default`) takes its crons and time zone from the workflow: 409.
#[utoipa::path(patch, path = "/v1/workflows/{workflow}/schedules/{slug}", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    request_body = ScheduleSettings,
    responses((status = 200, body = ScheduleView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn update_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
    body: Body<ScheduleSettings>,
) -> ApiResult<Json<ScheduleView>> {
    let tenant = principal.tenant(Role::Editor)?;
    let body = body.parse()?;
    let mut extra = Vec::new();
    if body.slug.as_ref().is_some_and(|s| *s != slug) {
        extra.push(Problem {
            path: pointer(["slug"]),
            code: Code::ConflictingFields,
            message: "a schedule's slug is its identity and does not change; create another".into(),
        });
    }
    let mut tx = state.store.tenant(tenant).await?;
    let (workflow, current) = found(&mut tx, tenant, &reference, &slug, true).await?;
    if current.source == "workflow" && body.touches_calendar() {
        return Err(from_workflow("change its crons or time zone"));
    }
    let settings = settle(&mut tx, tenant, &workflow, current.settings(), body, extra).await?;
    let updated = schedules::update(&mut tx, &current, &settings).await?;
    tx.commit().await?;
    Ok(Json(updated.into()))
}

/// Delete a schedule. Its tick history stays under its slug.
#[utoipa::path(delete, path = "/v1/workflows/{workflow}/schedules/{slug}", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    responses((status = 204), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn delete_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut tx = state.store.tenant(tenant).await?;
    let (_, current) = found(&mut tx, tenant, &reference, &slug, true).await?;
    if current.source == "workflow" {
        return Err(from_workflow("remove it (pause it to stop it now)"));
    }
    schedules::delete(&mut tx, tenant, current.id).await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Why a schedule is paused.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PauseRequest {
    #[schema(max_length = 1000)]
    pub reason: Option<String>,
}

/// Pause a schedule: no tick fires until it is resumed.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/schedules/{slug}/pause", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    request_body = PauseRequest,
    responses((status = 200, body = ScheduleView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn pause_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
    body: Body<PauseRequest>,
) -> ApiResult<Json<ScheduleView>> {
    let tenant = principal.tenant(Role::Editor)?;
    let body = body.parse()?;
    if body
        .reason
        .as_ref()
        .is_some_and(|r| r.chars().count() > 1000)
    {
        return Err(ApiError::bad_request(
            "invalid_body",
            "the reason is at most 1000 characters",
            "/reason",
        ));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let (_, current) = found(&mut tx, tenant, &reference, &slug, true).await?;
    let paused = schedules::set_paused(
        &mut tx,
        &current,
        Some((&principal.subject, body.reason.as_deref())),
    )
    .await?;
    tx.commit().await?;
    Ok(Json(paused.into()))
}

/// Resume a paused schedule from now: ticks of the paused time are not
/// caught up (backfill them if they are wanted).
#[utoipa::path(post, path = "/v1/workflows/{workflow}/schedules/{slug}/resume", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    responses((status = 200, body = ScheduleView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn resume_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
) -> ApiResult<Json<ScheduleView>> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut tx = state.store.tenant(tenant).await?;
    let (_, current) = found(&mut tx, tenant, &reference, &slug, true).await?;
    let resumed = if current.paused_at.is_some() {
        schedules::set_paused(&mut tx, &current, None).await?
    } else {
        current
    };
    tx.commit().await?;
    Ok(Json(resumed.into()))
}

/// Start a run of a schedule now, as its tick would (its parameters with
/// `{{schedule.time}}` as now), whether it is paused or not.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/schedules/{slug}/trigger", tag = "schedules",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("slug" = String, Path, description = "Schedule slug")),
    responses((status = 201, body = RunView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn trigger_schedule(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, slug)): Path<(String, String)>,
) -> ApiResult<(StatusCode, Json<RunView>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut tx = state.store.tenant(tenant).await?;
    let (workflow, s) = found(&mut tx, tenant, &reference, &slug, false).await?;
    tx.commit().await?;
    let calendar = s
        .settings()
        .calendar()
        .map_err(|p| anyhow::anyhow!("stored schedule {} does not parse: {p:?}", s.id))?;
    let now = Utc::now().trunc_subsecs(0);
    let options = RunOptions {
        parameters: (s.parameters.iter())
            .map(|(k, v)| (k.clone(), ParamValue(params::substitute(v, &calendar, now))))
            .collect(),
        labels: s.labels.0.clone(),
        priority: Some(s.priority),
    };
    let target = Target::Stored {
        reference: workflow.id.to_string(),
        version: s.workflow_version,
    };
    let key = format!(
        "sched:{}:{}:manual:{}",
        workflow.id,
        s.slug,
        uuid::Uuid::new_v4().simple()
    );
    let trigger = Trigger {
        kind: TriggerKind::Schedule,
        id: Some(s.id.0),
        scheduled_for: Some(now),
    };
    let start = crate::runs::Start {
        created_by: principal.subject.clone(),
        target,
        options,
        idempotency: Some((key.clone(), key)),
        trigger,
        delivery: None,
    };
    let (_, run) = start.queue(&state, tenant).await?;
    Ok((StatusCode::CREATED, Json(run)))
}
