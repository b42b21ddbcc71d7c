//! Webhook trigger bodies and views, and the checks that turn a body into
//! store settings (every problem at once, each at its JSON pointer).

use crate::error::{ApiError, ApiResult, pointer};
use chrono::{DateTime, Utc};
use couler_ir::scalar::ParamValue;
use couler_ir::{Code, Parameter, Problem, Problems};
use couler_store::webhooks::{AuthScheme, Delivery, DeliveryOutcome, Settings, Webhook};
use couler_store::{RunId, TriggerId, WorkflowId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// The largest body limit a trigger may have: GitHub's own cap on a
/// delivery (the platform's `hooks.max_body_bytes` may be lower).
pub const MAX_BODY_CAP: i32 = 25 << 20;
/// Most deliveries per second a trigger may take.
pub const MAX_RATE: i32 = 1000;
/// Longest Standard Webhooks replay window: an hour.
pub const MAX_REPLAY_WINDOW_SECS: i32 = 3600;
/// Most conditions of each kind a filter may hold.
pub const MAX_FILTERS: usize = 16;
/// Longest rotation grace: seven days.
pub const MAX_GRACE_SECS: i32 = 604_800;

/// A JSON pointer (RFC 6901), as the document states it.
pub const POINTER_PATTERN: &str = "^(/([^~/]|~[01])*)*$";
/// An HTTP header name (RFC 9110 token).
pub const HEADER_NAME_PATTERN: &str = "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$";

/// A webhook trigger: a new one (`name` and `auth` required), or the
/// changes to one (absent fields keep their value; maps are replaced
/// whole).
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookSettings {
    /// Its name within the workflow (only when creating): 1 to 63
    /// lowercase letters, digits or '-'.
    #[schema(pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub name: Option<String>,
    /// How deliveries prove who sent them (only when creating).
    #[schema(value_type = Option<AuthScheme>)]
    pub auth: Option<AuthScheme>,
    /// The workflow version its runs execute; null or absent: the latest
    /// at each delivery.
    #[serde(default, deserialize_with = "crate::wire::whole_or_null")]
    #[schema(value_type = Option<i32>, minimum = 1, nullable)]
    pub version: Option<Option<i32>>,
    /// Workflow parameter → JSON pointer (RFC 6901) of the payload value it
    /// takes (a string, number or boolean; a delivery without it is 422).
    pub parameter_map: Option<BTreeMap<String, String>>,
    /// Parameter values the same for every delivery (not also mapped).
    #[schema(value_type = Option<BTreeMap<String, crate::openapi::IrParamValue>>)]
    pub parameters: Option<BTreeMap<String, ParamValue>>,
    /// Deliveries that do not match are accepted and ignored (no run).
    pub filter: Option<WebhookFilter>,
    /// Deliveries per second it takes, 1 to 1000 (default 10); over it 429.
    #[schema(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub rate_per_second: Option<i32>,
    /// Largest delivery body it takes (default and most: the platform's
    /// limit, 1 MiB unless configured); over it 413.
    #[schema(minimum = 1, maximum = 26214400)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub max_body_bytes: Option<i32>,
    /// Standard Webhooks: how far a delivery's `webhook-timestamp` may be
    /// from now, 1 to 3600 seconds (default 300).
    #[schema(minimum = 1, maximum = 3600)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub replay_window_secs: Option<i32>,
    /// A disabled trigger answers 404, as if it did not exist.
    pub enabled: Option<bool>,
}

/// What a delivery must match to start a run: every condition.
#[derive(Debug, Default, Clone, PartialEq, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WebhookFilter {
    /// Header name (any case) → the value it must have, exactly (e.g.
    /// `X-GitHub-Event: push`).
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// JSON pointer → the JSON value the payload must hold there (e.g.
    /// `/ref: "refs/heads/main"`).
    #[serde(default)]
    pub payload: BTreeMap<String, serde_json::Value>,
}

/// A webhook trigger of a workflow, without its secret.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookView {
    pub id: TriggerId,
    pub workflow: WorkflowId,
    pub name: String,
    /// The id senders post to, `whk_…`; a rotation may change it.
    pub public_id: String,
    /// Where senders post, relative to the API's base URL.
    pub url: String,
    pub auth: AuthScheme,
    /// 1, plus one per rotation.
    pub credential_version: i32,
    pub version: Option<i32>,
    pub parameter_map: BTreeMap<String, String>,
    pub parameters: BTreeMap<String, String>,
    pub filter: WebhookFilter,
    pub rate_per_second: i32,
    pub max_body_bytes: i32,
    pub replay_window_secs: i32,
    pub enabled: bool,
    /// While the credential (and public id) the last rotation replaced
    /// still work: until when.
    pub previous_valid_until: Option<DateTime<Utc>>,
    /// The public id the last rotation replaced, while it still works.
    pub previous_public_id: Option<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub rotated_at: Option<DateTime<Utc>>,
}

impl From<Webhook> for WebhookView {
    fn from(w: Webhook) -> Self {
        let in_grace = w.in_grace(Utc::now());
        WebhookView {
            url: format!("/v1/hooks/{}", w.public_id),
            id: w.id,
            workflow: w.workflow_id,
            name: w.name,
            public_id: w.public_id,
            auth: w.auth,
            credential_version: w.secret_version,
            version: w.workflow_version,
            parameter_map: w.parameter_map.0,
            parameters: w.parameters.0,
            filter: WebhookFilter {
                headers: w.filter_headers.0,
                payload: w.filter_payload.0,
            },
            rate_per_second: w.rate_per_second,
            max_body_bytes: w.max_body_bytes,
            replay_window_secs: w.replay_window_secs,
            enabled: w.enabled,
            previous_valid_until: w.previous_until.filter(|_| in_grace),
            previous_public_id: w.previous_public_id.filter(|_| in_grace),
            created_by: w.created_by,
            created_at: w.created_at,
            updated_at: w.updated_at,
            rotated_at: w.rotated_at,
        }
    }
}

/// A trigger with its new credential, shown only in this answer.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookCreated {
    #[serde(flatten)]
    pub trigger: WebhookView,
    /// The HMAC secret (`hmac_github`: any text GitHub takes;
    /// `standard_webhooks`: `whsec_…`) or the bearer token. Shown only
    /// now: nothing it could be read back from is stored.
    pub secret: String,
}

/// A rotation of a trigger's credential.
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RotateWebhook {
    /// How long the replaced credential (and public id) keep working, 0 to
    /// 604800 seconds (default 86400: a day to update the sender).
    #[schema(minimum = 0, maximum = 604800)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub grace_secs: Option<i32>,
    /// Also give the trigger a new public id (its URL changes).
    #[serde(default)]
    pub new_public_id: bool,
}

/// One authenticated delivery of a trigger and what became of it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookDelivery {
    /// The sender's id of it (`X-GitHub-Delivery`, `webhook-id` or
    /// `Idempotency-Key`), or one the server made up when it gave none.
    pub delivery_id: String,
    pub outcome: DeliveryOutcome,
    /// The run it started (`queued`).
    pub run: Option<RunId>,
    /// Why it was ignored or rejected: problem codes and pointers.
    pub detail: Option<String>,
    /// How many times it was delivered.
    pub attempts: i32,
    pub received_at: DateTime<Utc>,
    pub last_received_at: DateTime<Utc>,
}

impl From<Delivery> for WebhookDelivery {
    fn from(d: Delivery) -> Self {
        WebhookDelivery {
            delivery_id: d.delivery_id,
            outcome: d.outcome,
            run: d.run_id,
            detail: d.detail,
            attempts: d.attempts,
            received_at: d.received_at,
            last_received_at: d.last_received_at,
        }
    }
}

/// What became of a delivery the ingress accepted.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WebhookAccepted {
    /// The run it started (or, for a redelivery, had started); null when
    /// ignored.
    pub run_id: Option<RunId>,
    /// A delivery id seen before: `run_id` is the run it started then.
    pub duplicate: bool,
    /// The trigger's filter did not match: no run.
    pub ignored: bool,
    pub delivery_id: String,
}

/// What a trigger's settings are checked against.
pub struct Check<'a> {
    /// The parameters the workflow version it runs declares.
    pub declared: &'a [Parameter],
    /// The platform's body limit.
    pub max_body_bytes: i32,
}

impl WebhookSettings {
    /// `base` with these settings applied, checked.
    pub fn apply(self, mut base: Settings, check: &Check<'_>) -> ApiResult<Settings> {
        let mut problems = Vec::new();
        let mut problem = |path: String, code, message: String| {
            problems.push(Problem {
                path,
                code,
                message,
            })
        };
        if let Some(v) = self.version {
            base.workflow_version = v;
        }
        if let Some(m) = self.parameter_map {
            base.parameter_map = m;
        }
        if let Some(p) = self.parameters {
            base.parameters = p.into_iter().map(|(k, v)| (k, v.0)).collect();
        }
        if let Some(f) = self.filter {
            base.filter_headers = (f.headers.into_iter())
                .map(|(k, v)| (k.to_ascii_lowercase(), v))
                .collect();
            base.filter_payload = f.payload;
        }
        if let Some(r) = self.rate_per_second {
            base.rate_per_second = r;
        }
        if let Some(b) = self.max_body_bytes {
            base.max_body_bytes = b;
        }
        if let Some(w) = self.replay_window_secs {
            base.replay_window_secs = w;
        }
        if let Some(e) = self.enabled {
            base.enabled = e;
        }
        let range = |v: i32, min: i32, max: i32| (min..=max).contains(&v);
        if base.workflow_version.is_some_and(|v| v < 1) {
            let text = "versions count from 1".into();
            problem(pointer(["version"]), Code::OutOfRange, text);
        }
        if !range(base.rate_per_second, 1, MAX_RATE) {
            let text = format!("a trigger takes 1 to {MAX_RATE} deliveries per second");
            problem(pointer(["rate_per_second"]), Code::OutOfRange, text);
        }
        if !range(base.max_body_bytes, 1, check.max_body_bytes) {
            let text = format!(
                "this server takes deliveries of 1 to {} bytes",
                check.max_body_bytes
            );
            problem(pointer(["max_body_bytes"]), Code::OutOfRange, text);
        }
        if !range(base.replay_window_secs, 1, MAX_REPLAY_WINDOW_SECS) {
            let text = format!("the replay window is 1 to {MAX_REPLAY_WINDOW_SECS} seconds");
            problem(pointer(["replay_window_secs"]), Code::OutOfRange, text);
        }
        for (name, at) in &base.parameter_map {
            if !is_pointer(at) {
                let text = format!("{at:?} is not a JSON pointer (RFC 6901)");
                problem(pointer(["parameter_map", name]), Code::InvalidValue, text);
            }
            if base.parameters.contains_key(name) {
                let text = format!("parameter {name:?} is both mapped and given a value");
                problem(pointer(["parameters", name]), Code::ConflictingFields, text);
            }
        }
        if base.filter_headers.len() > MAX_FILTERS || base.filter_payload.len() > MAX_FILTERS {
            let text =
                format!("a filter holds at most {MAX_FILTERS} headers and {MAX_FILTERS} pointers");
            problem(pointer(["filter"]), Code::OutOfRange, text);
        }
        for (name, value) in &base.filter_headers {
            let bad_name = !name.bytes().all(is_token_byte) || name.is_empty();
            let bad_value = !value
                .bytes()
                .all(|b| b == b'\t' || (b' '..=b'~').contains(&b));
            if bad_name || bad_value {
                let text = format!("{name:?} is not a header name with a visible ASCII value");
                problem(
                    pointer(["filter", "headers", name]),
                    Code::InvalidValue,
                    text,
                );
            }
        }
        for at in base.filter_payload.keys() {
            if !is_pointer(at) {
                let text = format!("{at:?} is not a JSON pointer (RFC 6901)");
                problem(pointer(["filter", "payload", at]), Code::InvalidValue, text);
            }
        }
        problems.extend(parameter_problems(&base, check.declared));
        if problems.is_empty() {
            Ok(base)
        } else {
            Err(ApiError::Invalid(Problems(problems)))
        }
    }
}

/// The parameters a delivery would give, against the workflow's
/// declarations: unknown ones, required ones neither mapped nor given,
/// given values not allowed. A mapped value is not known yet; it stands
/// in as one the parameter allows.
fn parameter_problems(settings: &Settings, declared: &[Parameter]) -> Vec<Problem> {
    let mut sample: BTreeMap<String, ParamValue> = (settings.parameters.iter())
        .map(|(k, v)| (k.clone(), ParamValue(v.clone())))
        .collect();
    for name in settings.parameter_map.keys() {
        let stand_in = (declared.iter().find(|p| &p.name == name))
            .and_then(|p| p.allowed.first().cloned())
            .unwrap_or_else(|| ParamValue("x".into()));
        sample.entry(name.clone()).or_insert(stand_in);
    }
    match couler_ir::params::resolve(declared, &sample) {
        Ok(_) => Vec::new(),
        Err(found) => (found.0.into_iter())
            .map(|mut p| {
                let name = p.path.strip_prefix("/parameters/").unwrap_or_default();
                let name = name.replace("~1", "/").replace("~0", "~");
                if settings.parameter_map.contains_key(&name)
                    && !settings.parameters.contains_key(&name)
                {
                    p.path = pointer(["parameter_map", &name]);
                }
                p
            })
            .collect(),
    }
}

/// Whether `s` is a JSON pointer (RFC 6901): empty, or `/`-led tokens
/// where `~` only escapes (`~0`, `~1`).
pub fn is_pointer(s: &str) -> bool {
    if s.is_empty() {
        return true;
    }
    s.starts_with('/')
        && s.split('~')
            .skip(1)
            .all(|rest| rest.starts_with('0') || rest.starts_with('1'))
}

/// A character of an HTTP token (a header name).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_rfc_6901() {
        for good in ["", "/", "/a/b", "/a~1b", "/m~0n", "/0", "/ "] {
            assert!(is_pointer(good), "{good:?}");
            let pattern = regex_lite(POINTER_PATTERN, good);
            assert!(pattern, "{good:?} against the documented pattern");
        }
        for bad in ["a", "/a~2", "/~", "a/b"] {
            assert!(!is_pointer(bad), "{bad:?}");
            assert!(!regex_lite(POINTER_PATTERN, bad), "{bad:?}");
        }
    }

    /// The documented pattern, as a JSON Schema validator reads it.
    fn regex_lite(pattern: &str, s: &str) -> bool {
        jsonschema::validator_for(&serde_json::json!({"type": "string", "pattern": pattern}))
            .unwrap()
            .is_valid(&serde_json::json!(s))
    }
}
