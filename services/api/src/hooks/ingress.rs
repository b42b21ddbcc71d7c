//! `POST /v1/hooks/{public_id}`: a delivery from another service. No API
//! key: the trigger's own credential proves the sender, and it can start
//! only the trigger's workflow. In order: the trigger (404 if unknown or
//! disabled), the body within its limit (413, before it is read), the
//! signature over the raw bytes (401; nothing stored, a metric counts
//! it), the trigger's rate (429), its filter (202, ignored), the mapped
//! parameters (422 at the payload's pointer), and then the run, created
//! in one transaction with the delivery's record. A delivery id seen
//! before gives back the run it started.

use super::verify::{self, GITHUB_DELIVERY, Key, WEBHOOK_ID};
use super::wire::WebhookAccepted;
use crate::batch::Target;
use crate::error::{ApiError, ApiResult};
use crate::fresh::Fresh;
use crate::runs::{RunOptions, Start};
use crate::state::AppState;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use chrono::Utc;
use couler_ir::scalar::ParamValue;
use couler_ir::{Code, Problem, Problems};
use couler_store::runs::{Trigger, TriggerKind};
use couler_store::webhooks::{self, AuthScheme, DeliveryOutcome, NewDelivery, Webhook};
use futures::StreamExt;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// How long a trigger read by its public id is kept: a busy trigger costs
/// one lookup a second, and a change made on another replica (disabled,
/// rotated, deleted) reaches this one within it.
const KEEP_FOR: Duration = Duration::from_secs(1);
/// The header a bearer-token sender (or any sender) names its delivery in.
const IDEMPOTENCY_KEY: &str = "idempotency-key";

/// Triggers by public id, kept for [`KEEP_FOR`].
pub struct Triggers(Fresh<String, Arc<Webhook>>);

impl Default for Triggers {
    fn default() -> Self {
        Triggers(Fresh::new(KEEP_FOR))
    }
}

impl Triggers {
    async fn find(&self, state: &AppState, public_id: &str) -> ApiResult<Option<Arc<Webhook>>> {
        let found = self.0.get(public_id, async || {
            let mut tx = state.store.platform().await?;
            let found = webhooks::find_by_public_id(&mut tx, public_id).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(found.map(Arc::new))
        });
        Ok(found.await?)
    }

    /// Drops what this replica keeps of a trigger that changed.
    pub fn forget(&self, trigger: &Webhook) {
        self.0.forget(&trigger.public_id);
        if let Some(previous) = &trigger.previous_public_id {
            self.0.forget(previous);
        }
    }
}

fn unknown() -> ApiError {
    ApiError::not_found("webhook trigger")
}

/// Deliver a webhook: start a run of the trigger's workflow.
///
/// Needs no API key: the delivery authenticates with the trigger's scheme
/// over the raw body: `hmac_github` (`X-Hub-Signature-256: sha256=<hex>`;
/// delivery id `X-GitHub-Delivery`), `standard_webhooks` (`webhook-id`,
/// `webhook-timestamp` within the trigger's replay window,
/// `webhook-signature: v1,<base64>`), or `bearer` (`Authorization: Bearer
/// <token>`; delivery id `Idempotency-Key`). A delivery id seen before
/// answers with the run it started (`duplicate`). 202 also when the
/// trigger's filter does not match (`ignored`, no run). 401
/// `invalid_signature` when it does not authenticate (nothing is stored);
/// 404 for an unknown or disabled trigger; 413 over its body limit; 422
/// when a mapped parameter is missing from the payload or not valid for
/// the workflow (at the payload's pointer); 429 over its rate.
#[utoipa::path(post, path = "/v1/hooks/{public_id}", tag = "hooks", security(()),
    params(("public_id" = String, Path, pattern = "^whk_[A-Za-z0-9_-]{22}$", description = "The trigger's public id")),
    request_body(content = Option<Value>, content_type = "application/json", description = "The sender's payload, as it signed it (JSON when the trigger maps or filters on it)"),
    responses((status = 202, body = WebhookAccepted), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all, fields(trigger = tracing::field::Empty))]
pub(super) async fn deliver(
    State(state): State<AppState>,
    Path(public_id): Path<String>,
    headers: HeaderMap,
    body: axum::body::Body,
) -> ApiResult<(StatusCode, Json<WebhookAccepted>)> {
    let now = Utc::now();
    if !verify::is_public_id(&public_id) {
        return Err(unknown());
    }
    let trigger = match state.triggers.find(&state, &public_id).await? {
        Some(t) if t.enabled && (t.public_id == public_id || t.in_grace(now)) => t,
        _ => return Err(unknown()),
    };
    tracing::Span::current().record("trigger", tracing::field::display(trigger.id));
    let limit = (trigger.max_body_bytes.max(1) as usize).min(state.config.hooks.max_body_bytes);
    let body = read_body(&headers, body, limit).await?;
    authenticate(&state, &trigger, &headers, &body, now)?;
    state
        .limiter
        .acquire_hook(trigger.id, trigger.rate_per_second)
        .await?;
    let delivery_id = delivery_id(trigger.auth, &headers)?;
    // Authenticated deliveries that start no run are recorded on their own.
    let record = async |outcome, detail: String| -> ApiResult<()> {
        let record = NewDelivery {
            trigger: trigger.id,
            delivery_id: delivery_id.clone(),
            outcome,
            run_id: None,
            detail: Some(detail),
        };
        let mut tx = state.store.tenant(trigger.tenant_id).await?;
        webhooks::record(&mut tx, trigger.tenant_id, &[record]).await?;
        tx.commit().await?;
        metrics::counter!("couler_webhook_deliveries_total", "outcome" => outcome_label(outcome))
            .increment(1);
        Ok(())
    };
    let needs_payload = !trigger.parameter_map.is_empty() || !trigger.filter_payload.is_empty();
    let payload = match serde_json::from_slice::<Value>(&body) {
        Ok(payload) => payload,
        Err(_) if !needs_payload => Value::Null,
        Err(_) => {
            record(DeliveryOutcome::Rejected, "invalid_payload".into()).await?;
            return Err(ApiError::Refused {
                code: "invalid_payload",
                message: "the payload is not JSON, and this trigger reads values from it".into(),
                problems: Vec::new(),
            });
        }
    };
    if let Some(unmatched) = unmatched(&trigger, &headers, &payload) {
        record(DeliveryOutcome::Ignored, unmatched).await?;
        let accepted = WebhookAccepted {
            run_id: None,
            duplicate: false,
            ignored: true,
            delivery_id,
        };
        return Ok((StatusCode::ACCEPTED, Json(accepted)));
    }
    let parameters = match parameters(&trigger, &payload) {
        Ok(p) => p,
        Err(problems) => {
            record(DeliveryOutcome::Rejected, summary(&problems)).await?;
            return Err(invalid(problems));
        }
    };
    let start = Start {
        created_by: format!("webhook:{}", trigger.id),
        target: Target::Stored {
            reference: trigger.workflow_id.to_string(),
            version: trigger.workflow_version,
        },
        options: RunOptions {
            parameters,
            ..RunOptions::default()
        },
        // A redelivery (same id, same body) is the same run; the same id
        // with another body is refused.
        idempotency: Some((
            format!("hook:{}:{delivery_id}", trigger.id),
            blake3::hash(&body).to_hex().to_string(),
        )),
        trigger: Trigger {
            kind: TriggerKind::Webhook,
            id: Some(trigger.id.0),
            scheduled_for: None,
        },
        delivery: Some(NewDelivery {
            trigger: trigger.id,
            delivery_id: delivery_id.clone(),
            outcome: DeliveryOutcome::Queued,
            run_id: None,
            detail: None,
        }),
    };
    match start.queue(&state, trigger.tenant_id).await {
        Ok((status, run)) => {
            let duplicate = status == StatusCode::OK;
            let outcome = if duplicate { "duplicate" } else { "queued" };
            metrics::counter!("couler_webhook_deliveries_total", "outcome" => outcome).increment(1);
            Ok((
                StatusCode::ACCEPTED,
                Json(WebhookAccepted {
                    run_id: Some(run.id),
                    duplicate,
                    ignored: false,
                    delivery_id,
                }),
            ))
        }
        Err(ApiError::Invalid(Problems(found))) => {
            let problems = at_payload(&trigger, found);
            record(DeliveryOutcome::Rejected, summary(&problems)).await?;
            Err(invalid(problems))
        }
        // The workflow deleted since the trigger was read (which deletes
        // the trigger too).
        Err(ApiError::NotFound { .. }) => Err(unknown()),
        Err(ApiError::Conflict {
            code: "idempotency_key_reused",
            ..
        }) => Err(ApiError::Conflict {
            code: "delivery_id_reused",
            message: "this delivery id came before with a different body".into(),
        }),
        Err(e) => Err(e),
    }
}

fn outcome_label(outcome: DeliveryOutcome) -> &'static str {
    match outcome {
        DeliveryOutcome::Queued => "queued",
        DeliveryOutcome::Ignored => "ignored",
        DeliveryOutcome::Rejected => "rejected",
    }
}

/// The body, at most `limit` bytes: a larger `Content-Length` is refused
/// before anything is read, and a body streaming past it as soon as it
/// does.
async fn read_body(
    headers: &HeaderMap,
    body: axum::body::Body,
    limit: usize,
) -> ApiResult<Vec<u8>> {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(ApiError::PayloadTooLarge);
    }
    let mut read = Vec::with_capacity(declared.map_or(0, |n| n as usize));
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            ApiError::bad_request("unreadable_body", format!("reading the body: {e}"), "")
        })?;
        if read.len() + chunk.len() > limit {
            return Err(ApiError::PayloadTooLarge);
        }
        read.extend_from_slice(&chunk);
    }
    Ok(read)
}

/// Checks the delivery against the trigger's credential, and the one its
/// last rotation replaced while that is in its grace; 401 (counted) when
/// neither proves it.
fn authenticate(
    state: &AppState,
    trigger: &Webhook,
    headers: &HeaderMap,
    body: &[u8],
    now: chrono::DateTime<Utc>,
) -> ApiResult<()> {
    let keyring = state.keyring.as_deref();
    let key = |credential| {
        verify::key(
            keyring,
            trigger.tenant_id,
            trigger.id,
            trigger.auth,
            credential,
        )
    };
    let current = trigger
        .credential()
        .ok_or_else(|| anyhow::anyhow!("trigger {} has no credential", trigger.id))?;
    let mut keys: Vec<Key> = vec![key(&current)?];
    if let Some(previous) = trigger.previous_credential(now) {
        keys.push(key(&previous)?);
    }
    let window = trigger.replay_window_secs.into();
    verify::verify(trigger.auth, &keys, headers, body, now.timestamp(), window).map_err(|why| {
        metrics::counter!("couler_webhook_unauthenticated_total", "reason" => why.as_str())
            .increment(1);
        tracing::debug!(
            reason = why.as_str(),
            "a webhook delivery did not authenticate"
        );
        ApiError::Unauthenticated {
            code: "invalid_signature",
            message: "the delivery does not prove that it comes from this trigger's sender".into(),
        }
    })
}

/// The sender's id of the delivery; one made up when it gives none (such
/// a delivery is never taken for a redelivery).
fn delivery_id(auth: AuthScheme, headers: &HeaderMap) -> ApiResult<String> {
    let names: &[&str] = match auth {
        AuthScheme::HmacGithub => &[GITHUB_DELIVERY, IDEMPOTENCY_KEY],
        AuthScheme::StandardWebhooks => &[WEBHOOK_ID],
        AuthScheme::Bearer => &[IDEMPOTENCY_KEY],
    };
    let Some((name, value)) = names
        .iter()
        .find_map(|name| headers.get(*name).map(|v| (name, v)))
    else {
        return Ok(format!("auto-{}", uuid::Uuid::now_v7().simple()));
    };
    match value.to_str() {
        Ok(id) if (1..=255).contains(&id.len()) && id.bytes().all(|b| b.is_ascii_graphic()) => {
            Ok(id.to_owned())
        }
        _ => Err(ApiError::bad_request(
            "invalid_delivery_id",
            format!("{name} must be 1 to 255 visible ASCII characters"),
            "",
        )),
    }
}

/// The first condition of the trigger's filter the delivery fails, by
/// name (never by value).
fn unmatched(trigger: &Webhook, headers: &HeaderMap, payload: &Value) -> Option<String> {
    for (name, want) in trigger.filter_headers.iter() {
        if headers.get(name.as_str()).and_then(|v| v.to_str().ok()) != Some(want.as_str()) {
            return Some(format!("filter: header {name}"));
        }
    }
    for (at, want) in trigger.filter_payload.iter() {
        if payload.pointer(at) != Some(want) {
            return Some(format!("filter: payload {at}"));
        }
    }
    None
}

/// The run's parameters: the trigger's own values and the mapped ones, or
/// a problem at each pointer the payload does not give a value at.
fn parameters(
    trigger: &Webhook,
    payload: &Value,
) -> Result<BTreeMap<String, ParamValue>, Vec<Problem>> {
    let mut values: BTreeMap<String, ParamValue> = (trigger.parameters.iter())
        .map(|(k, v)| (k.clone(), ParamValue(v.clone())))
        .collect();
    let mut problems = Vec::new();
    for (name, at) in trigger.parameter_map.iter() {
        let mut problem = |code, why: &str| {
            problems.push(Problem {
                path: at.clone(),
                code,
                message: format!("parameter {name:?} is read from {at:?}, which {why}"),
            })
        };
        let text = match payload.pointer(at) {
            None | Some(Value::Null) => {
                problem(Code::MissingField, "the payload does not hold");
                continue;
            }
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(_) => {
                problem(
                    Code::InvalidType,
                    "holds an object or array, not a string, number or boolean",
                );
                continue;
            }
        };
        if text.contains('\0') {
            problem(Code::InvalidValue, "holds a NUL character");
            continue;
        }
        values.insert(name.clone(), ParamValue(text));
    }
    if problems.is_empty() {
        Ok(values)
    } else {
        Err(problems)
    }
}

/// The workflow's verdict on the parameters, pointed at the payload for
/// mapped ones, and without quoting the values the payload gave.
fn at_payload(trigger: &Webhook, found: Vec<Problem>) -> Vec<Problem> {
    found
        .into_iter()
        .map(|mut p| {
            let name = p.path.strip_prefix("/parameters/").unwrap_or_default();
            let name = name.replace("~1", "/").replace("~0", "~");
            if let Some(at) = trigger.parameter_map.get(&name) {
                p.message = format!(
                    "parameter {name:?}, read from {at:?}, is not valid for the workflow ({})",
                    p.code.as_str()
                );
                p.path = at.clone();
            }
            p
        })
        .collect()
}

fn invalid(problems: Vec<Problem>) -> ApiError {
    ApiError::Invalid(Problems(problems))
}

/// Problems as the delivery log keeps them: codes and pointers only.
fn summary(problems: &[Problem]) -> String {
    let parts: Vec<String> = problems
        .iter()
        .map(|p| format!("{} at {}", p.code.as_str(), p.path))
        .collect();
    parts.join("; ")
}
