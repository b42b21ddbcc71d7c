//! API keys for services that trigger pipelines. Only a BLAKE3 hash of a
//! key is stored; its short prefix identifies it in lists and lookups.

use crate::{ApiKeyId, TenantId, Tx};
use chrono::{DateTime, Utc};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiKey {
    pub tenant_id: TenantId,
    pub id: ApiKeyId,
    pub name: String,
    pub prefix: String,
    pub roles: Vec<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct NewApiKey {
    pub name: String,
    pub prefix: String,
    pub key_hash: [u8; 32],
    pub roles: Vec<String>,
    pub created_by: String,
    pub expires_at: Option<DateTime<Utc>>,
}

pub async fn create(tx: &mut Tx, tenant: TenantId, new: &NewApiKey) -> Result<ApiKey, sqlx::Error> {
    sqlx::query_as!(
        ApiKey,
        r#"INSERT INTO api_keys (tenant_id, id, name, prefix, key_hash, roles, created_by, expires_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: ApiKeyId", name, prefix, roles,
                     created_by, created_at, expires_at, last_used_at, revoked_at"#,
        tenant as TenantId,
        ApiKeyId::new() as ApiKeyId,
        new.name,
        new.prefix,
        &new.key_hash[..],
        &new.roles,
        new.created_by,
        new.expires_at,
    )
    .fetch_one(&mut **tx)
    .await
}

pub async fn list(tx: &mut Tx, tenant: TenantId) -> Result<Vec<ApiKey>, sqlx::Error> {
    sqlx::query_as!(
        ApiKey,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: ApiKeyId", name, prefix, roles,
                  created_by, created_at, expires_at, last_used_at, revoked_at
           FROM api_keys WHERE tenant_id = $1 ORDER BY created_at DESC, id DESC"#,
        tenant as TenantId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// Revokes a key; `None` when the tenant has no such key.
pub async fn revoke(
    tx: &mut Tx,
    tenant: TenantId,
    id: ApiKeyId,
) -> Result<Option<ApiKey>, sqlx::Error> {
    sqlx::query_as!(
        ApiKey,
        r#"UPDATE api_keys SET revoked_at = coalesce(revoked_at, now())
           WHERE tenant_id = $1 AND id = $2
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: ApiKeyId", name, prefix, roles,
                     created_by, created_at, expires_at, last_used_at, revoked_at"#,
        tenant as TenantId,
        id as ApiKeyId,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// A key and its stored hash, found by prefix (platform transaction: the
/// tenant is not known until the key is).
pub async fn find_by_prefix(
    tx: &mut Tx,
    prefix: &str,
) -> Result<Option<(ApiKey, Vec<u8>)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: ApiKeyId", name, prefix, roles,
                  created_by, created_at, expires_at, last_used_at, revoked_at, key_hash
           FROM api_keys WHERE prefix = $1"#,
        prefix,
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| {
        let key = ApiKey {
            tenant_id: r.tenant_id,
            id: r.id,
            name: r.name,
            prefix: r.prefix,
            roles: r.roles,
            created_by: r.created_by,
            created_at: r.created_at,
            expires_at: r.expires_at,
            last_used_at: r.last_used_at,
            revoked_at: r.revoked_at,
        };
        (key, r.key_hash)
    }))
}

/// Stamps a key as used now (platform transaction).
pub async fn mark_used(tx: &mut Tx, tenant: TenantId, id: ApiKeyId) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE api_keys SET last_used_at = now() WHERE tenant_id = $1 AND id = $2",
        tenant as TenantId,
        id as ApiKeyId,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}
