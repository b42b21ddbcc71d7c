//! Webhook triggers of workflows and their deliveries. A trigger is found
//! by its public id (`whk_…`) before its tenant is known
//! ([`find_by_public_id`], platform transaction); everything else is
//! tenant work. Nothing secret is stored (see migration 0015): HMAC
//! secrets are derived from a platform key and the row's salt, bearer
//! tokens are kept as hashes.

use crate::runs::Parameters;
use crate::{RunId, TenantId, TriggerId, Tx, WorkflowId};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use std::collections::BTreeMap;

/// The constraint a second trigger of the same name violates.
pub const NAME_TAKEN: &str = "webhook_triggers_name";
/// The constraint a delivery of a trigger deleted meanwhile violates.
pub const TRIGGER_GONE: &str = "webhook_deliveries_trigger";

/// How a delivery proves it comes from the sender.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    sqlx::Type,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
#[schema(as = WebhookAuth)]
pub enum AuthScheme {
    /// GitHub's `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body>`.
    HmacGithub,
    /// Standard Webhooks: `webhook-id`, `webhook-timestamp` and
    /// `webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`.
    StandardWebhooks,
    /// `Authorization: Bearer <token>`.
    Bearer,
}

impl AuthScheme {
    pub fn as_str(self) -> &'static str {
        match self {
            AuthScheme::HmacGithub => "hmac_github",
            AuthScheme::StandardWebhooks => "standard_webhooks",
            AuthScheme::Bearer => "bearer",
        }
    }

    /// Whether deliveries are signed with an HMAC secret (derived, never
    /// stored) rather than carrying a bearer token.
    pub fn is_hmac(self) -> bool {
        !matches!(self, AuthScheme::Bearer)
    }
}

/// What a trigger keeps of a credential: nothing a delivery could be
/// forged from without the platform key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Credential {
    /// An HMAC secret derived from platform key `key_id` and `salt`.
    Derived { key_id: String, salt: Vec<u8> },
    /// The BLAKE3 hash of a bearer token.
    TokenHash(Vec<u8>),
}

impl Credential {
    fn columns(&self) -> (Option<&str>, Option<&[u8]>, Option<&[u8]>) {
        match self {
            Credential::Derived { key_id, salt } => (Some(key_id), Some(salt), None),
            Credential::TokenHash(hash) => (None, None, Some(hash)),
        }
    }

    fn from_columns(
        key_id: Option<&String>,
        salt: Option<&Vec<u8>>,
        hash: Option<&Vec<u8>>,
    ) -> Option<Credential> {
        match (key_id, salt, hash) {
            (Some(key_id), Some(salt), _) => Some(Credential::Derived {
                key_id: key_id.clone(),
                salt: salt.clone(),
            }),
            (_, _, Some(hash)) => Some(Credential::TokenHash(hash.clone())),
            _ => None,
        }
    }
}

/// Everything about a trigger a client sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub workflow_version: Option<i32>,
    /// Parameter name → JSON pointer into the payload.
    pub parameter_map: BTreeMap<String, String>,
    /// Parameter values the same for every delivery.
    pub parameters: Parameters,
    /// Header name (lowercase) → the value it must have.
    pub filter_headers: BTreeMap<String, String>,
    /// JSON pointer → the value the payload must hold there.
    pub filter_payload: BTreeMap<String, serde_json::Value>,
    pub rate_per_second: i32,
    pub max_body_bytes: i32,
    pub replay_window_secs: i32,
    pub enabled: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Webhook {
    pub tenant_id: TenantId,
    pub id: TriggerId,
    pub workflow_id: WorkflowId,
    pub name: String,
    pub public_id: String,
    pub auth: AuthScheme,
    pub secret_key_id: Option<String>,
    pub secret_salt: Option<Vec<u8>>,
    pub token_hash: Option<Vec<u8>>,
    pub secret_version: i32,
    pub previous_public_id: Option<String>,
    pub previous_key_id: Option<String>,
    pub previous_salt: Option<Vec<u8>>,
    pub previous_token_hash: Option<Vec<u8>>,
    pub previous_until: Option<DateTime<Utc>>,
    pub workflow_version: Option<i32>,
    pub parameter_map: Json<BTreeMap<String, String>>,
    pub parameters: Json<Parameters>,
    pub filter_headers: Json<BTreeMap<String, String>>,
    pub filter_payload: Json<BTreeMap<String, serde_json::Value>>,
    pub rate_per_second: i32,
    pub max_body_bytes: i32,
    pub replay_window_secs: i32,
    pub enabled: bool,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub rotated_at: Option<DateTime<Utc>>,
}

impl Webhook {
    pub fn settings(&self) -> Settings {
        Settings {
            workflow_version: self.workflow_version,
            parameter_map: self.parameter_map.0.clone(),
            parameters: self.parameters.0.clone(),
            filter_headers: self.filter_headers.0.clone(),
            filter_payload: self.filter_payload.0.clone(),
            rate_per_second: self.rate_per_second,
            max_body_bytes: self.max_body_bytes,
            replay_window_secs: self.replay_window_secs,
            enabled: self.enabled,
        }
    }

    /// The credential deliveries prove themselves with now.
    pub fn credential(&self) -> Option<Credential> {
        Credential::from_columns(
            self.secret_key_id.as_ref(),
            self.secret_salt.as_ref(),
            self.token_hash.as_ref(),
        )
    }

    /// The credential before the last rotation, while its grace lasts.
    pub fn previous_credential(&self, now: DateTime<Utc>) -> Option<Credential> {
        if !self.in_grace(now) {
            return None;
        }
        Credential::from_columns(
            self.previous_key_id.as_ref(),
            self.previous_salt.as_ref(),
            self.previous_token_hash.as_ref(),
        )
    }

    /// Whether what the last rotation replaced still works at `now`.
    pub fn in_grace(&self, now: DateTime<Utc>) -> bool {
        self.previous_until.is_some_and(|until| now < until)
    }
}

/// Creates trigger `id` of `workflow` (the id is the caller's: a derived
/// secret is bound to it).
#[allow(clippy::too_many_arguments)]
pub async fn create(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    id: TriggerId,
    name: &str,
    auth: AuthScheme,
    public_id: &str,
    credential: &Credential,
    settings: &Settings,
    created_by: &str,
) -> Result<Webhook, sqlx::Error> {
    let (key_id, salt, hash) = credential.columns();
    let s = settings;
    sqlx::query!(
        r#"INSERT INTO webhook_triggers (tenant_id, id, workflow_id, name, public_id, auth, secret_key_id, secret_salt,
                                         token_hash, workflow_version, parameter_map, parameters, filter_headers,
                                         filter_payload, rate_per_second, max_body_bytes, replay_window_secs, enabled,
                                         created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19)"#,
        tenant as TenantId,
        id as TriggerId,
        workflow as WorkflowId,
        name,
        public_id,
        auth as AuthScheme,
        key_id,
        salt,
        hash,
        s.workflow_version,
        Json(&s.parameter_map) as _,
        Json(&s.parameters) as _,
        Json(&s.filter_headers) as _,
        Json(&s.filter_payload) as _,
        s.rate_per_second,
        s.max_body_bytes,
        s.replay_window_secs,
        s.enabled,
        created_by,
    )
    .execute(&mut **tx)
    .await?;
    get(tx, tenant, workflow, id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)
}

/// A workflow's trigger by id.
pub async fn get(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    id: TriggerId,
) -> Result<Option<Webhook>, sqlx::Error> {
    Ok(fetch(tx, tenant, workflow, Some(id), None).await?.pop())
}

/// A workflow's trigger by name.
pub async fn get_by_name(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    name: &str,
) -> Result<Option<Webhook>, sqlx::Error> {
    Ok(fetch(tx, tenant, workflow, None, Some(name)).await?.pop())
}

/// A workflow's triggers, by name.
pub async fn list(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
) -> Result<Vec<Webhook>, sqlx::Error> {
    fetch(tx, tenant, workflow, None, None).await
}

/// A workflow's triggers, by name: all, or the one with `id` or `name`.
async fn fetch(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    id: Option<TriggerId>,
    name: Option<&str>,
) -> Result<Vec<Webhook>, sqlx::Error> {
    sqlx::query_as!(
        Webhook,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: TriggerId", workflow_id AS "workflow_id: WorkflowId",
                  name, public_id, auth AS "auth: AuthScheme", secret_key_id, secret_salt, token_hash, secret_version,
                  previous_public_id, previous_key_id, previous_salt, previous_token_hash, previous_until,
                  workflow_version, parameter_map AS "parameter_map: Json<BTreeMap<String, String>>",
                  parameters AS "parameters: Json<Parameters>",
                  filter_headers AS "filter_headers: Json<BTreeMap<String, String>>",
                  filter_payload AS "filter_payload: Json<BTreeMap<String, serde_json::Value>>",
                  rate_per_second, max_body_bytes, replay_window_secs, enabled, created_by, created_at, updated_at,
                  rotated_at
           FROM webhook_triggers
           WHERE tenant_id = $1 AND workflow_id = $2 AND ($3::uuid IS NULL OR id = $3)
             AND ($4::text IS NULL OR name = $4)
           ORDER BY name"#,
        tenant as TenantId,
        workflow as WorkflowId,
        id as Option<TriggerId>,
        name,
    )
    .fetch_all(&mut **tx)
    .await
}

/// The trigger a public id names, current or replaced by a rotation
/// (platform transaction: the tenant is not known until the trigger is).
/// Whether a replaced id is still in its grace is the caller's to check.
pub async fn find_by_public_id(
    tx: &mut Tx,
    public_id: &str,
) -> Result<Option<Webhook>, sqlx::Error> {
    sqlx::query_as!(
        Webhook,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: TriggerId", workflow_id AS "workflow_id: WorkflowId",
                  name, public_id, auth AS "auth: AuthScheme", secret_key_id, secret_salt, token_hash, secret_version,
                  previous_public_id, previous_key_id, previous_salt, previous_token_hash, previous_until,
                  workflow_version, parameter_map AS "parameter_map: Json<BTreeMap<String, String>>",
                  parameters AS "parameters: Json<Parameters>",
                  filter_headers AS "filter_headers: Json<BTreeMap<String, String>>",
                  filter_payload AS "filter_payload: Json<BTreeMap<String, serde_json::Value>>",
                  rate_per_second, max_body_bytes, replay_window_secs, enabled, created_by, created_at, updated_at,
                  rotated_at
           FROM webhook_triggers WHERE public_id = $1 OR previous_public_id = $1"#,
        public_id,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Replaces a trigger's settings.
pub async fn update(
    tx: &mut Tx,
    current: &Webhook,
    settings: &Settings,
) -> Result<Webhook, sqlx::Error> {
    let s = settings;
    sqlx::query!(
        r#"UPDATE webhook_triggers
           SET workflow_version = $3, parameter_map = $4, parameters = $5, filter_headers = $6, filter_payload = $7,
               rate_per_second = $8, max_body_bytes = $9, replay_window_secs = $10, enabled = $11, updated_at = now()
           WHERE tenant_id = $1 AND id = $2"#,
        current.tenant_id as TenantId,
        current.id as TriggerId,
        s.workflow_version,
        Json(&s.parameter_map) as _,
        Json(&s.parameters) as _,
        Json(&s.filter_headers) as _,
        Json(&s.filter_payload) as _,
        s.rate_per_second,
        s.max_body_bytes,
        s.replay_window_secs,
        s.enabled,
    )
    .execute(&mut **tx)
    .await?;
    get(tx, current.tenant_id, current.workflow_id, current.id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)
}

/// Gives a trigger a new credential (and, with `public_id`, a new public
/// id); the ones it replaces keep working for `grace` from now.
pub async fn rotate(
    tx: &mut Tx,
    current: &Webhook,
    credential: &Credential,
    public_id: Option<&str>,
    grace: chrono::Duration,
) -> Result<Webhook, sqlx::Error> {
    let (key_id, salt, hash) = credential.columns();
    let grace_secs = grace.num_seconds() as f64;
    sqlx::query!(
        r#"UPDATE webhook_triggers
           SET previous_public_id = CASE WHEN $6::text IS NULL THEN NULL ELSE public_id END,
               public_id = coalesce($6, public_id),
               previous_key_id = secret_key_id, previous_salt = secret_salt, previous_token_hash = token_hash,
               previous_until = now() + make_interval(secs => $7),
               secret_key_id = $3, secret_salt = $4, token_hash = $5,
               secret_version = secret_version + 1, rotated_at = now(), updated_at = now()
           WHERE tenant_id = $1 AND id = $2"#,
        current.tenant_id as TenantId,
        current.id as TriggerId,
        key_id,
        salt,
        hash,
        public_id,
        grace_secs,
    )
    .execute(&mut **tx)
    .await?;
    get(tx, current.tenant_id, current.workflow_id, current.id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)
}

/// Deletes a trigger and its deliveries.
pub async fn delete(tx: &mut Tx, tenant: TenantId, id: TriggerId) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "DELETE FROM webhook_triggers WHERE tenant_id = $1 AND id = $2",
        tenant as TenantId,
        id as TriggerId,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes a workflow's triggers (the workflow is being deleted).
pub async fn delete_all(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM webhook_triggers WHERE tenant_id = $1 AND workflow_id = $2",
        tenant as TenantId,
        workflow as WorkflowId,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// What became of an authenticated delivery.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    sqlx::Type,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum DeliveryOutcome {
    /// It started a run (a redelivery returns that run).
    Queued,
    /// The trigger's filter did not match.
    Ignored,
    /// The payload did not give the workflow valid parameters.
    Rejected,
}

/// One authenticated delivery of a trigger.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    pub delivery_id: String,
    pub outcome: DeliveryOutcome,
    pub run_id: Option<RunId>,
    pub detail: Option<String>,
    pub attempts: i32,
    pub received_at: DateTime<Utc>,
    pub last_received_at: DateTime<Utc>,
}

/// A delivery to record.
#[derive(Debug, Clone, PartialEq)]
pub struct NewDelivery {
    pub trigger: TriggerId,
    pub delivery_id: String,
    pub outcome: DeliveryOutcome,
    pub run_id: Option<RunId>,
    pub detail: Option<String>,
}

/// Records deliveries of one tenant in one statement. A delivery id seen
/// before counts another attempt; one that started a run keeps it,
/// others take the new outcome.
pub async fn record(
    tx: &mut Tx,
    tenant: TenantId,
    deliveries: &[NewDelivery],
) -> Result<(), sqlx::Error> {
    // One row per delivery id: a statement may not upsert a row twice.
    let mut unique: Vec<(&NewDelivery, i32)> = Vec::with_capacity(deliveries.len());
    for d in deliveries {
        match unique
            .iter_mut()
            .find(|(u, _)| (u.trigger, &u.delivery_id) == (d.trigger, &d.delivery_id))
        {
            Some((_, n)) => *n += 1,
            None => unique.push((d, 1)),
        }
    }
    if unique.is_empty() {
        return Ok(());
    }
    let triggers: Vec<uuid::Uuid> = unique.iter().map(|(d, _)| d.trigger.0).collect();
    let ids: Vec<&str> = unique.iter().map(|(d, _)| d.delivery_id.as_str()).collect();
    let outcomes: Vec<DeliveryOutcome> = unique.iter().map(|(d, _)| d.outcome).collect();
    let runs: Vec<Option<uuid::Uuid>> = unique.iter().map(|(d, _)| d.run_id.map(|r| r.0)).collect();
    let details: Vec<Option<&str>> = unique.iter().map(|(d, _)| d.detail.as_deref()).collect();
    let attempts: Vec<i32> = unique.iter().map(|(_, n)| *n).collect();
    sqlx::query!(
        r#"INSERT INTO webhook_deliveries AS d (tenant_id, trigger_id, delivery_id, outcome, run_id, detail, attempts)
           SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::text[], $5::uuid[], $6::text[], $7::int[])
           ON CONFLICT (tenant_id, trigger_id, delivery_id) DO UPDATE
           SET attempts = d.attempts + excluded.attempts, last_received_at = now(),
               outcome = CASE WHEN d.outcome = 'queued' THEN d.outcome ELSE excluded.outcome END,
               run_id = CASE WHEN d.outcome = 'queued' THEN d.run_id ELSE excluded.run_id END,
               detail = CASE WHEN d.outcome = 'queued' THEN d.detail ELSE excluded.detail END"#,
        tenant as TenantId,
        &triggers,
        &ids as &[&str],
        &outcomes as &[DeliveryOutcome],
        &runs as &[Option<uuid::Uuid>],
        &details as &[Option<&str>],
        &attempts,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// A trigger's deliveries, most recently received first, received before
/// `before` when given.
pub async fn deliveries(
    tx: &mut Tx,
    tenant: TenantId,
    trigger: TriggerId,
    before: Option<DateTime<Utc>>,
    limit: i64,
) -> Result<Vec<Delivery>, sqlx::Error> {
    sqlx::query_as!(
        Delivery,
        r#"SELECT delivery_id, outcome AS "outcome: DeliveryOutcome", run_id AS "run_id: RunId", detail, attempts,
                  received_at, last_received_at
           FROM webhook_deliveries
           WHERE tenant_id = $1 AND trigger_id = $2 AND ($3::timestamptz IS NULL OR last_received_at < $3)
           ORDER BY last_received_at DESC, delivery_id DESC LIMIT $4"#,
        tenant as TenantId,
        trigger as TriggerId,
        before,
        limit,
    )
    .fetch_all(&mut **tx)
    .await
}
