//! A tenant's own step templates (`couler_nl::library::Template`s stored as
//! JSON), named uniquely within the tenant.

use crate::{TenantId, Tx};
use chrono::{DateTime, Utc};
use sqlx::types::Json;

/// The constraint a second template of the same name violates.
pub const NAME_TAKEN: &str = "step_library_name";

#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub name: String,
    pub template: Json<serde_json::Value>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

pub async fn create(
    tx: &mut Tx,
    tenant: TenantId,
    name: &str,
    template: &serde_json::Value,
    created_by: &str,
) -> Result<Entry, sqlx::Error> {
    sqlx::query_as!(
        Entry,
        r#"INSERT INTO step_library (tenant_id, name, template, created_by) VALUES ($1, $2, $3, $4)
           RETURNING name, template AS "template: Json<serde_json::Value>", created_by, created_at, updated_at"#,
        tenant as TenantId,
        name,
        Json(template) as _,
        created_by,
    )
    .fetch_one(&mut **tx)
    .await
}

pub async fn get(tx: &mut Tx, tenant: TenantId, name: &str) -> Result<Option<Entry>, sqlx::Error> {
    sqlx::query_as!(
        Entry,
        r#"SELECT name, template AS "template: Json<serde_json::Value>", created_by, created_at, updated_at
           FROM step_library WHERE tenant_id = $1 AND name = $2"#,
        tenant as TenantId,
        name,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Every template of the tenant, by name.
pub async fn list(tx: &mut Tx, tenant: TenantId) -> Result<Vec<Entry>, sqlx::Error> {
    sqlx::query_as!(
        Entry,
        r#"SELECT name, template AS "template: Json<serde_json::Value>", created_by, created_at, updated_at
           FROM step_library WHERE tenant_id = $1 ORDER BY name"#,
        tenant as TenantId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// Replaces a template; `None` when there is none of that name.
pub async fn update(
    tx: &mut Tx,
    tenant: TenantId,
    name: &str,
    template: &serde_json::Value,
) -> Result<Option<Entry>, sqlx::Error> {
    sqlx::query_as!(
        Entry,
        r#"UPDATE step_library SET template = $3, updated_at = now()
           WHERE tenant_id = $1 AND name = $2
           RETURNING name, template AS "template: Json<serde_json::Value>", created_by, created_at, updated_at"#,
        tenant as TenantId,
        name,
        Json(template) as _,
    )
    .fetch_optional(&mut **tx)
    .await
}

pub async fn delete(tx: &mut Tx, tenant: TenantId, name: &str) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "DELETE FROM step_library WHERE tenant_id = $1 AND name = $2",
        tenant as TenantId,
        name,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}
