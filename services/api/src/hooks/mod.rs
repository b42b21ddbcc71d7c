//! Webhook triggers: `/v1/workflows/{workflow}/triggers` (create, read,
//! change, delete, rotate the credential, the delivery log) and the
//! ingress other services post to, `/v1/hooks/{public_id}`
//! ([`ingress`]). A delivery becomes an ordinary run of the trigger's
//! workflow, recorded with the run in one transaction. How deliveries
//! authenticate, and how credentials are made and kept: [`verify`].

mod ingress;
mod verify;
mod wire;

pub use ingress::Triggers;
pub use wire::{
    HEADER_NAME_PATTERN, MAX_FILTERS, POINTER_PATTERN, RotateWebhook, WebhookAccepted,
    WebhookCreated, WebhookDelivery, WebhookFilter, WebhookSettings, WebhookView,
};

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult, pointer};
use crate::state::AppState;
use crate::wire::Query;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_ir::{Code, Parameter, Problem, Problems};
use couler_store::webhooks::{self, Settings, Webhook};
use couler_store::workflows::Workflow;
use couler_store::{TenantId, TriggerId, Tx};
use serde::Deserialize;
use utoipa::IntoParams;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_trigger, list_triggers))
        .routes(routes!(get_trigger, update_trigger, delete_trigger))
        .routes(routes!(rotate_trigger))
        .routes(routes!(list_deliveries))
        .routes(routes!(ingress::deliver))
}

/// A workflow's trigger by id (`trg_…`) or name, or 404.
async fn found(
    tx: &mut Tx,
    tenant: TenantId,
    reference: &str,
    trigger: &str,
) -> ApiResult<(Workflow, Webhook)> {
    let workflow = crate::workflows::resolve(tx, tenant, reference).await?;
    let found = match trigger.parse::<TriggerId>() {
        Ok(id) => webhooks::get(tx, tenant, workflow.id, id).await?,
        Err(_) => webhooks::get_by_name(tx, tenant, workflow.id, trigger).await?,
    };
    let found = found.ok_or_else(|| {
        ApiError::not_found(format!("trigger {trigger:?} of workflow {reference:?}"))
    })?;
    Ok((workflow, found))
}

/// Checks `body` over `base` against the workflow version it names (or
/// the current one); every problem, with `extra`, at once.
async fn settle(
    state: &AppState,
    tx: &mut Tx,
    tenant: TenantId,
    workflow: &Workflow,
    base: Settings,
    body: WebhookSettings,
    extra: Vec<Problem>,
) -> ApiResult<Settings> {
    let version = body.version.unwrap_or(base.workflow_version);
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
    let check = wire::Check {
        declared: &declared,
        max_body_bytes: platform_max_body(state),
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

/// The largest delivery this server takes, within the hard cap.
fn platform_max_body(state: &AppState) -> i32 {
    i32::try_from(state.config.hooks.max_body_bytes)
        .unwrap_or(i32::MAX)
        .min(wire::MAX_BODY_CAP)
}

/// Create a webhook trigger of a workflow.
///
/// The answer holds its secret (HMAC schemes) or bearer token, shown only
/// now. Parameters the workflow does not declare, required ones neither
/// mapped nor given, and a body limit over the server's are 422 with every
/// problem at its pointer; a name in use is 409; HMAC schemes on a server
/// without platform keys are 503.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/triggers", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    request_body = WebhookSettings,
    responses((status = 201, body = WebhookCreated), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_trigger(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
    body: Body<WebhookSettings>,
) -> ApiResult<(StatusCode, Json<WebhookCreated>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut body = body.parse()?;
    let mut extra = Vec::new();
    let name = body.name.take().unwrap_or_default();
    if !couler_ir::names::is_dns_label(&name) {
        extra.push(Problem {
            path: pointer(["name"]),
            code: if name.is_empty() { Code::MissingField } else { Code::InvalidName },
            message: format!("name {name:?} must be 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"),
        });
    }
    let auth = body.auth.take();
    if auth.is_none() {
        extra.push(Problem {
            path: pointer(["auth"]),
            code: Code::MissingField,
            message: "say how deliveries authenticate: hmac_github, standard_webhooks or bearer"
                .into(),
        });
    }
    let base = Settings {
        workflow_version: None,
        parameter_map: Default::default(),
        parameters: Default::default(),
        filter_headers: Default::default(),
        filter_payload: Default::default(),
        rate_per_second: 10,
        max_body_bytes: platform_max_body(&state),
        replay_window_secs: 300,
        enabled: true,
    };
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = crate::workflows::resolve(&mut tx, tenant, &reference).await?;
    let settings = settle(&state, &mut tx, tenant, &workflow, base, body, extra).await?;
    let auth = auth.expect("checked with the other problems");
    let id = TriggerId::new();
    let (credential, secret) = verify::mint(state.keyring.as_deref(), tenant, id, auth)?;
    let created = webhooks::create(
        &mut tx,
        tenant,
        workflow.id,
        id,
        &name,
        auth,
        &verify::new_public_id(),
        &credential,
        &settings,
        &principal.subject,
    )
    .await?;
    tx.commit().await?;
    tracing::info!(trigger = %created.id, workflow = %workflow.id, name, "webhook trigger created");
    Ok((
        StatusCode::CREATED,
        Json(WebhookCreated {
            trigger: created.into(),
            secret,
        }),
    ))
}

/// List a workflow's webhook triggers, by name (secrets are never shown
/// again).
#[utoipa::path(get, path = "/v1/workflows/{workflow}/triggers", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    responses((status = 200, body = Vec<WebhookView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_triggers(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
) -> ApiResult<Json<Vec<WebhookView>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = crate::workflows::resolve(&mut tx, tenant, &reference).await?;
    let found = webhooks::list(&mut tx, tenant, workflow.id).await?;
    tx.commit().await?;
    Ok(Json(found.into_iter().map(Into::into).collect()))
}

/// Read a webhook trigger.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/triggers/{trigger}", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("trigger" = String, Path, description = "Trigger id (`trg_…`) or name")),
    responses((status = 200, body = WebhookView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_trigger(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, trigger)): Path<(String, String)>,
) -> ApiResult<Json<WebhookView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let (_, found) = found(&mut tx, tenant, &reference, &trigger).await?;
    tx.commit().await?;
    Ok(Json(found.into()))
}

/// Change a webhook trigger in place: its id, name, scheme, credential and
/// public id stay (rotate to change the credential). A disabled trigger
/// answers deliveries with 404.
#[utoipa::path(patch, path = "/v1/workflows/{workflow}/triggers/{trigger}", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("trigger" = String, Path, description = "Trigger id (`trg_…`) or name")),
    request_body = WebhookSettings,
    responses((status = 200, body = WebhookView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn update_trigger(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, trigger)): Path<(String, String)>,
    body: Body<WebhookSettings>,
) -> ApiResult<Json<WebhookView>> {
    let tenant = principal.tenant(Role::Editor)?;
    let body = body.parse()?;
    let mut tx = state.store.tenant(tenant).await?;
    let (workflow, current) = found(&mut tx, tenant, &reference, &trigger).await?;
    let mut extra = Vec::new();
    if body.name.as_ref().is_some_and(|n| *n != current.name) {
        extra.push(Problem {
            path: pointer(["name"]),
            code: Code::ConflictingFields,
            message: "a trigger's name does not change; create another".into(),
        });
    }
    if body.auth.is_some_and(|a| a != current.auth) {
        extra.push(Problem {
            path: pointer(["auth"]),
            code: Code::ConflictingFields,
            message: "a trigger's scheme does not change; create another".into(),
        });
    }
    let settings = settle(
        &state,
        &mut tx,
        tenant,
        &workflow,
        current.settings(),
        body,
        extra,
    )
    .await?;
    let updated = webhooks::update(&mut tx, &current, &settings).await?;
    tx.commit().await?;
    state.triggers.forget(&current);
    Ok(Json(updated.into()))
}

/// Delete a webhook trigger and its delivery log; its public id answers
/// 404 from now on. Runs it started stay.
#[utoipa::path(delete, path = "/v1/workflows/{workflow}/triggers/{trigger}", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("trigger" = String, Path, description = "Trigger id (`trg_…`) or name")),
    responses((status = 204), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn delete_trigger(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, trigger)): Path<(String, String)>,
) -> ApiResult<StatusCode> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut tx = state.store.tenant(tenant).await?;
    let (_, current) = found(&mut tx, tenant, &reference, &trigger).await?;
    webhooks::delete(&mut tx, tenant, current.id).await?;
    tx.commit().await?;
    state.triggers.forget(&current);
    tracing::info!(trigger = %current.id, "webhook trigger deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// Rotate a webhook trigger's credential (and, if asked, its public id).
///
/// The answer holds the new secret or token, shown only now. The replaced
/// credential and public id keep working for `grace_secs` (default a
/// day), so the sender can be updated without losing deliveries; with 0
/// they stop at once.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/triggers/{trigger}/rotate", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("trigger" = String, Path, description = "Trigger id (`trg_…`) or name")),
    request_body = RotateWebhook,
    responses((status = 200, body = WebhookCreated), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, body = crate::error::Problem, content_type = "application/problem+json")))]
async fn rotate_trigger(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, trigger)): Path<(String, String)>,
    body: Body<RotateWebhook>,
) -> ApiResult<Json<WebhookCreated>> {
    let tenant = principal.tenant(Role::Editor)?;
    let body = body.parse()?;
    let grace = body.grace_secs.unwrap_or(86_400);
    if !(0..=wire::MAX_GRACE_SECS).contains(&grace) {
        return Err(ApiError::bad_request(
            "invalid_body",
            format!("the grace is 0 to {} seconds", wire::MAX_GRACE_SECS),
            "/grace_secs",
        ));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let (_, current) = found(&mut tx, tenant, &reference, &trigger).await?;
    let (credential, secret) =
        verify::mint(state.keyring.as_deref(), tenant, current.id, current.auth)?;
    let public_id = body.new_public_id.then(verify::new_public_id);
    let rotated = webhooks::rotate(
        &mut tx,
        &current,
        &credential,
        public_id.as_deref(),
        chrono::Duration::seconds(grace.into()),
    )
    .await?;
    tx.commit().await?;
    state.triggers.forget(&current);
    tracing::info!(trigger = %current.id, grace, new_public_id = body.new_public_id, "webhook trigger rotated");
    Ok(Json(WebhookCreated {
        trigger: rotated.into(),
        secret,
    }))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct DeliveriesQuery {
    /// Deliveries last received before this instant (RFC 3339): the next
    /// page.
    pub before: Option<DateTime<Utc>>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

/// A trigger's authenticated deliveries, most recently received first:
/// the run each started, or why it was ignored or rejected. Deliveries
/// that did not authenticate are not recorded (a metric counts them).
#[utoipa::path(get, path = "/v1/workflows/{workflow}/triggers/{trigger}/deliveries", tag = "triggers",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), ("trigger" = String, Path, description = "Trigger id (`trg_…`) or name"), DeliveriesQuery),
    responses((status = 200, body = Vec<WebhookDelivery>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_deliveries(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((reference, trigger)): Path<(String, String)>,
    Query(q): Query<DeliveriesQuery>,
) -> ApiResult<Json<Vec<WebhookDelivery>>> {
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
    let (_, found) = found(&mut tx, tenant, &reference, &trigger).await?;
    let list = webhooks::deliveries(&mut tx, tenant, found.id, q.before, limit.into()).await?;
    tx.commit().await?;
    Ok(Json(list.into_iter().map(Into::into).collect()))
}
