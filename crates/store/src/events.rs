//! Run events: every status change, in order, for streaming and audit.

use crate::status::RunStatus;
use crate::{RunId, TenantId, Tx};
use chrono::{DateTime, Utc};
use sqlx::types::Json;

#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// Increases with every event of every run: resumable with `Last-Event-ID`.
    pub id: i64,
    pub run_id: RunId,
    pub kind: String,
    pub step: Option<String>,
    pub status: Option<String>,
    pub message: Option<String>,
    pub data: Json<serde_json::Value>,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Clone)]
pub struct NewEvent {
    pub kind: String,
    pub step: Option<String>,
    pub status: Option<String>,
    pub message: Option<String>,
    pub data: serde_json::Value,
}

impl NewEvent {
    /// A run-level event.
    pub fn run(kind: &str, status: RunStatus) -> NewEvent {
        NewEvent {
            kind: kind.to_owned(),
            step: None,
            status: Some(status.to_string()),
            message: None,
            data: serde_json::json!({}),
        }
    }
}

pub async fn append(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    event: &NewEvent,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO run_events (tenant_id, run_id, kind, step, status, message, data) VALUES ($1, $2, $3, $4, $5, $6, $7)",
        tenant as TenantId,
        run as RunId,
        event.kind,
        event.step,
        event.status,
        event.message,
        Json(&event.data) as _,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Events of a run after `after` (exclusive), oldest first.
pub async fn list(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    after: i64,
    limit: i64,
) -> Result<Vec<Event>, sqlx::Error> {
    sqlx::query_as!(
        Event,
        r#"SELECT id, run_id AS "run_id: RunId", kind, step, status, message, data AS "data: Json<serde_json::Value>", created_at
           FROM run_events WHERE tenant_id = $1 AND run_id = $2 AND id > $3 ORDER BY id LIMIT $4"#,
        tenant as TenantId,
        run as RunId,
        after,
        limit,
    )
    .fetch_all(&mut **tx)
    .await
}
