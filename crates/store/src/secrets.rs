//! Tenant secrets, envelope-encrypted with `couler-secrets`, and the audit
//! trail of their writes and deletes. A secret keeps only its current
//! version: a replace overwrites the old value. Values leave this module
//! only through [`reveal`], for the scheduler to deliver to steps.

use crate::{Store, TenantId, Tx};
use chrono::{DateTime, Utc};
use couler_secrets::{Context, Keyring, Sealed, SecretData, SecretsError, WrappedKey};
use std::collections::{BTreeMap, BTreeSet};

/// A secret without its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretMeta {
    pub name: String,
    pub version: i32,
    pub keys: Vec<String>,
    pub updated_at: DateTime<Utc>,
    pub updated_by: String,
}

/// One write or delete of a secret.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEntry {
    pub id: i64,
    pub name: String,
    pub version: i32,
    /// `put` or `delete`.
    pub action: String,
    /// The secret's key names at that version.
    pub keys: Vec<String>,
    pub actor: String,
    pub at: DateTime<Utc>,
}

/// Values the scheduler asked for, opened.
#[derive(Debug, Default)]
pub struct Revealed {
    /// Name → key → value.
    pub secrets: BTreeMap<String, SecretData>,
    /// Names asked for that the tenant has no secret of.
    pub missing: BTreeSet<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum SecretStoreError {
    #[error(transparent)]
    Database(#[from] sqlx::Error),
    #[error("secret {name:?}: {source}")]
    Crypto {
        name: String,
        #[source]
        source: SecretsError,
    },
}

fn context<'a>(tenant: &'a str, name: &'a str, version: i32) -> Context<'a> {
    Context {
        tenant,
        name,
        version,
    }
}

/// Writes `data` as the next version of `name` (creating it), sealed under
/// the keyring's active key, and records the write.
pub async fn put(
    tx: &mut Tx,
    keyring: &Keyring,
    tenant: TenantId,
    name: &str,
    data: &SecretData,
    actor: &str,
) -> Result<SecretMeta, SecretStoreError> {
    // Writers of one name take turns, so each gets a version of its own.
    sqlx::query!(
        "SELECT pg_advisory_xact_lock(hashtextextended($1::text || '/' || $2, 0))",
        tenant.0.to_string(),
        name,
    )
    .execute(&mut **tx)
    .await?;
    let version = sqlx::query_scalar!(
        r#"SELECT coalesce(max(version), 0) + 1 AS "version!" FROM secret_audit
           WHERE tenant_id = $1 AND name = $2"#,
        tenant as TenantId,
        name,
    )
    .fetch_one(&mut **tx)
    .await?;
    let tenant_text = tenant.to_string();
    let sealed = keyring
        .seal(&context(&tenant_text, name, version), data)
        .map_err(|source| SecretStoreError::Crypto {
            name: name.to_owned(),
            source,
        })?;
    let keys: Vec<String> = data.keys().cloned().collect();
    let meta = sqlx::query_as!(
        SecretMeta,
        r#"INSERT INTO secrets (tenant_id, name, version, keys, key_id, dek_nonce, wrapped_dek, nonce, ciphertext, updated_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
           ON CONFLICT ON CONSTRAINT secrets_name DO UPDATE SET
               version = EXCLUDED.version, keys = EXCLUDED.keys, key_id = EXCLUDED.key_id,
               dek_nonce = EXCLUDED.dek_nonce, wrapped_dek = EXCLUDED.wrapped_dek,
               nonce = EXCLUDED.nonce, ciphertext = EXCLUDED.ciphertext,
               updated_at = now(), updated_by = EXCLUDED.updated_by
           RETURNING name, version, keys, updated_at, updated_by"#,
        tenant as TenantId,
        name,
        version,
        &keys,
        sealed.data_key.key_id,
        sealed.data_key.nonce,
        sealed.data_key.ciphertext,
        sealed.nonce,
        sealed.ciphertext,
        actor,
    )
    .fetch_one(&mut **tx)
    .await?;
    audit(tx, tenant, name, version, "put", &keys, actor).await?;
    Ok(meta)
}

async fn audit(
    tx: &mut Tx,
    tenant: TenantId,
    name: &str,
    version: i32,
    action: &str,
    keys: &[String],
    actor: &str,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "INSERT INTO secret_audit (tenant_id, name, version, action, keys, actor) VALUES ($1, $2, $3, $4, $5, $6)",
        tenant as TenantId,
        name,
        version,
        action,
        keys,
        actor,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// The tenant's secrets by name, without values.
pub async fn list(tx: &mut Tx, tenant: TenantId) -> Result<Vec<SecretMeta>, sqlx::Error> {
    sqlx::query_as!(
        SecretMeta,
        "SELECT name, version, keys, updated_at, updated_by FROM secrets WHERE tenant_id = $1 ORDER BY name",
        tenant as TenantId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// One secret without its value; `None` when the tenant has none by `name`.
pub async fn get(
    tx: &mut Tx,
    tenant: TenantId,
    name: &str,
) -> Result<Option<SecretMeta>, sqlx::Error> {
    sqlx::query_as!(
        SecretMeta,
        "SELECT name, version, keys, updated_at, updated_by FROM secrets WHERE tenant_id = $1 AND name = $2",
        tenant as TenantId,
        name,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// The key names of each of `names` the tenant has (one round trip; names
/// it does not have are absent).
pub async fn keys_of(
    tx: &mut Tx,
    tenant: TenantId,
    names: &[String],
) -> Result<BTreeMap<String, Vec<String>>, sqlx::Error> {
    let rows = sqlx::query!(
        "SELECT name, keys FROM secrets WHERE tenant_id = $1 AND name = ANY($2)",
        tenant as TenantId,
        names,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|r| (r.name, r.keys)).collect())
}

/// What the tenant lacks for a step's read of `key` of secret `name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing<'a> {
    /// No secret by that name.
    Secret,
    /// The secret, without that key; its keys.
    Key(&'a [String]),
}

impl<'a> Missing<'a> {
    /// What is missing of `name`'s `key` in `have` (as [`keys_of`] gives
    /// it); `None` when the tenant has it.
    pub fn of(have: &'a BTreeMap<String, Vec<String>>, name: &str, key: &str) -> Option<Self> {
        match have.get(name) {
            None => Some(Missing::Secret),
            Some(keys) if !keys.iter().any(|k| k == key) => Some(Missing::Key(keys)),
            Some(_) => None,
        }
    }

    /// The sentence naming the step and what it reads.
    pub fn describe(&self, step: &str, name: &str, key: &str) -> String {
        match self {
            Missing::Secret => {
                format!("step {step:?} reads secret {name:?}, which the tenant does not have")
            }
            Missing::Key(keys) => format!(
                "step {step:?} reads key {key:?} of secret {name:?}, which has no such key (its keys: {})",
                keys.join(", ")
            ),
        }
    }
}

/// Deletes a secret (its value is gone) and records it; `None` when the
/// tenant has none by `name`.
pub async fn delete(
    tx: &mut Tx,
    tenant: TenantId,
    name: &str,
    actor: &str,
) -> Result<Option<SecretMeta>, sqlx::Error> {
    let Some(gone) = sqlx::query_as!(
        SecretMeta,
        "DELETE FROM secrets WHERE tenant_id = $1 AND name = $2 RETURNING name, version, keys, updated_at, updated_by",
        tenant as TenantId,
        name,
    )
    .fetch_optional(&mut **tx)
    .await?
    else {
        return Ok(None);
    };
    audit(tx, tenant, name, gone.version, "delete", &gone.keys, actor).await?;
    Ok(Some(gone))
}

/// Audit entries, newest first: of one secret or all, before the entry id
/// `before` (a page's last id), at most `limit`.
pub async fn audit_log(
    tx: &mut Tx,
    tenant: TenantId,
    name: Option<&str>,
    before: Option<i64>,
    limit: i64,
) -> Result<Vec<AuditEntry>, sqlx::Error> {
    sqlx::query_as!(
        AuditEntry,
        r#"SELECT id, name, version, action, keys, actor, at FROM secret_audit
           WHERE tenant_id = $1 AND ($2::text IS NULL OR name = $2) AND ($3::bigint IS NULL OR id < $3)
           ORDER BY id DESC LIMIT $4"#,
        tenant as TenantId,
        name,
        before,
        limit,
    )
    .fetch_all(&mut **tx)
    .await
}

/// The values of `names`, opened, for delivery to the steps that reference
/// them; the names the tenant has no secret of are listed as missing.
pub async fn reveal(
    tx: &mut Tx,
    keyring: &Keyring,
    tenant: TenantId,
    names: &[String],
) -> Result<Revealed, SecretStoreError> {
    let rows = sqlx::query!(
        r#"SELECT name, version, key_id, dek_nonce, wrapped_dek, nonce, ciphertext
           FROM secrets WHERE tenant_id = $1 AND name = ANY($2)"#,
        tenant as TenantId,
        names,
    )
    .fetch_all(&mut **tx)
    .await?;
    let tenant_text = tenant.to_string();
    let mut revealed = Revealed::default();
    for r in rows {
        let sealed = Sealed {
            data_key: WrappedKey {
                key_id: r.key_id,
                nonce: r.dek_nonce,
                ciphertext: r.wrapped_dek,
            },
            nonce: r.nonce,
            ciphertext: r.ciphertext,
        };
        let data = keyring
            .open(&context(&tenant_text, &r.name, r.version), &sealed)
            .map_err(|source| SecretStoreError::Crypto {
                name: r.name.clone(),
                source,
            })?;
        revealed.secrets.insert(r.name, data);
    }
    revealed.missing = names
        .iter()
        .filter(|n| !revealed.secrets.contains_key(*n))
        .cloned()
        .collect();
    Ok(revealed)
}

/// What a re-wrap did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rewrapped {
    /// Data keys now wrapped by the active key.
    pub rewrapped: u64,
    /// Batches (transactions) it took.
    pub batches: u64,
}

/// Re-wraps every data key not under the keyring's active key, `batch` rows
/// per short platform transaction, while the service runs: readers open
/// either wrap as long as the old key stays configured, and writers only
/// ever wrap with the active key. Remove an old key from configuration once
/// this returns.
pub async fn rewrap_all(
    store: &Store,
    keyring: &Keyring,
    batch: i64,
) -> Result<Rewrapped, SecretStoreError> {
    let mut done = Rewrapped::default();
    loop {
        let mut tx = store.platform().await?;
        let rows = sqlx::query!(
            r#"SELECT tenant_id AS "tenant_id: TenantId", name, version, key_id, dek_nonce, wrapped_dek
               FROM secrets WHERE key_id <> $1 ORDER BY tenant_id, name LIMIT $2 FOR UPDATE"#,
            keyring.active_id(),
            batch.max(1),
        )
        .fetch_all(&mut *tx)
        .await?;
        if rows.is_empty() {
            tx.commit().await?;
            return Ok(done);
        }
        for r in &rows {
            let tenant_text = r.tenant_id.to_string();
            let old = WrappedKey {
                key_id: r.key_id.clone(),
                nonce: r.dek_nonce.clone(),
                ciphertext: r.wrapped_dek.clone(),
            };
            let Some(new) = keyring
                .rewrap(&context(&tenant_text, &r.name, r.version), &old)
                .map_err(|source| SecretStoreError::Crypto {
                    name: format!("{}/{}", tenant_text, r.name),
                    source,
                })?
            else {
                continue;
            };
            sqlx::query!(
                "UPDATE secrets SET key_id = $3, dek_nonce = $4, wrapped_dek = $5 WHERE tenant_id = $1 AND name = $2",
                r.tenant_id as TenantId,
                r.name,
                new.key_id,
                new.nonce,
                new.ciphertext,
            )
            .execute(&mut *tx)
            .await?;
            done.rewrapped += 1;
        }
        tx.commit().await?;
        done.batches += 1;
    }
}
