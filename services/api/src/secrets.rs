//! `/v1/secrets`: the tenant's secrets for steps to read (`env[].secret`).
//! Admins write and delete them, editors may list names and keys; values go
//! in once and never come back out through the API (only the scheduler
//! opens them, to deliver them to the steps that reference them). Every
//! write and delete is in the audit trail (`/v1/secrets:audit`).

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::{List, Query};
use axum::Json;
use axum::extract::{Path, State};
use chrono::{DateTime, Utc};
use couler_secrets::SecretData;
use couler_store::secrets::{self as store, AuditEntry, SecretMeta, SecretStoreError};
use secrecy::ExposeSecret;
use serde::{Deserialize, Serialize};
use utoipa::openapi::schema::{ObjectBuilder, Type};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

/// Most keys one secret holds.
pub const MAX_KEYS: usize = 64;
/// Most bytes of one secret: its keys and values together.
pub const MAX_BYTES: usize = 64 * 1024;
/// A Kubernetes Secret's key, at most 253 characters.
pub const KEY_PATTERN: &str = "^[-._a-zA-Z0-9]{1,253}$";

/// A secret without its value.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SecretView {
    pub name: String,
    /// 1 for the first write, one more for every replace (counting on
    /// after a delete and re-create).
    pub version: i32,
    /// The secret's key names, sorted.
    pub keys: Vec<String>,
    pub updated_at: DateTime<Utc>,
    /// Who wrote this version.
    pub updated_by: String,
}

impl From<SecretMeta> for SecretView {
    fn from(m: SecretMeta) -> Self {
        SecretView {
            name: m.name,
            version: m.version,
            keys: m.keys,
            updated_at: m.updated_at,
            updated_by: m.updated_by,
        }
    }
}

/// One write or delete of a secret (never its value).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SecretAuditView {
    pub id: i64,
    pub name: String,
    pub version: i32,
    pub action: SecretAction,
    /// The secret's key names at that version.
    pub keys: Vec<String>,
    /// Who did it.
    pub actor: String,
    pub at: DateTime<Utc>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum SecretAction {
    Put,
    Delete,
}

impl From<AuditEntry> for SecretAuditView {
    fn from(e: AuditEntry) -> Self {
        SecretAuditView {
            id: e.id,
            name: e.name,
            version: e.version,
            action: if e.action == "delete" {
                SecretAction::Delete
            } else {
                SecretAction::Put
            },
            keys: e.keys,
            actor: e.actor,
            at: e.at,
        }
    }
}

/// A secret's value: its keys and their values.
#[derive(Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PutSecret {
    #[schema(schema_with = data_schema)]
    pub data: SecretData,
}

fn data_schema() -> impl Into<RefOr<Schema>> {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!(
            "Key → value. 1 to {MAX_KEYS} keys; keys and values together at most {MAX_BYTES} bytes (UTF-8). Values are write-only."
        )))
        .min_properties(Some(1))
        .max_properties(Some(MAX_KEYS))
        .property_names(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(KEY_PATTERN)),
        ))
        .additional_properties(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .max_length(Some(MAX_BYTES))
                .write_only(true),
        ))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct AuditQuery {
    /// Only this secret's entries.
    #[param(
        pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$",
        max_length = 253
    )]
    pub name: Option<String>,
    /// From a previous page's `next_cursor`.
    #[param(pattern = "^[1-9][0-9]{0,17}$")]
    pub cursor: Option<String>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_secrets))
        .routes(routes!(secret_audit))
        .routes(routes!(put_secret, get_secret, delete_secret))
}

fn check_name(name: &str) -> ApiResult<()> {
    if couler_ir::names::is_dns_subdomain(name) {
        Ok(())
    } else {
        Err(ApiError::bad_request(
            "invalid_secret_name",
            "a secret's name is a DNS-1123 subdomain: lowercase letters, digits, '-' and '.', at most 253 characters",
            "/name",
        ))
    }
}

/// Checks keys, count and size; never quotes a value.
fn check_data(data: &SecretData) -> ApiResult<()> {
    if data.is_empty() {
        return Err(ApiError::bad_request(
            "empty_secret",
            "a secret needs at least one key",
            "/data",
        ));
    }
    if data.len() > MAX_KEYS {
        return Err(ApiError::bad_request(
            "secret_too_large",
            format!(
                "a secret holds at most {MAX_KEYS} keys; this one has {}",
                data.len()
            ),
            "/data",
        ));
    }
    if let Some(key) = data.keys().find(|k| !couler_ir::names::is_secret_key(k)) {
        return Err(ApiError::bad_request(
            "invalid_secret_key",
            "a secret's keys are 1 to 253 of the characters a-z, A-Z, 0-9, '-', '_' and '.'",
            crate::error::pointer(["data", key]),
        ));
    }
    let bytes: usize = data
        .iter()
        .map(|(k, v)| k.len() + v.expose_secret().len())
        .sum();
    if bytes > MAX_BYTES {
        return Err(ApiError::bad_request(
            "secret_too_large",
            format!(
                "a secret's keys and values hold at most {MAX_BYTES} bytes together; this one holds {bytes}"
            ),
            "/data",
        ));
    }
    Ok(())
}

fn crypto_failed(e: SecretStoreError) -> ApiError {
    match e {
        SecretStoreError::Database(e) => e.into(),
        crypto @ SecretStoreError::Crypto { .. } => ApiError::Internal(crypto.into()),
    }
}

/// Create or replace a secret (admins): its value becomes a new version and
/// the old value is gone. The value is never returned.
#[utoipa::path(put, path = "/v1/secrets/{name}", tag = "secrets", request_body = PutSecret,
    params(("name" = String, Path, pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$", max_length = 253, description = "The secret's name: a DNS-1123 subdomain, as Kubernetes Secret names are")),
    responses((status = 200, body = SecretView),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json"),
              (status = 503, body = crate::error::Problem, content_type = "application/problem+json",
               description = "`secrets_not_configured`: the platform has no secrets keys")))]
#[tracing::instrument(skip_all, fields(secret = %name))]
async fn put_secret(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(name): Path<String>,
    req: Body<PutSecret>,
) -> ApiResult<Json<SecretView>> {
    let tenant = principal.tenant(Role::Admin)?;
    check_name(&name)?;
    let Some(keyring) = state.keyring.clone() else {
        return Err(ApiError::NotConfigured {
            code: "secrets_not_configured",
            message: "this server has no secrets keys configured ([secrets] keys); ask the platform operator".into(),
        });
    };
    let req = req.parse_quiet()?;
    check_data(&req.data)?;
    let mut tx = state.store.tenant(tenant).await?;
    let meta = store::put(
        &mut tx,
        &keyring,
        tenant,
        &name,
        &req.data,
        &principal.subject,
    )
    .await
    .map_err(crypto_failed)?;
    tx.commit().await?;
    tracing::info!(version = meta.version, keys = ?meta.keys, "secret written");
    Ok(Json(meta.into()))
}

/// List the tenant's secrets: names, keys, versions, never values (editors
/// and admins).
#[utoipa::path(get, path = "/v1/secrets", tag = "secrets",
    responses((status = 200, body = List<SecretView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all)]
async fn list_secrets(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<List<SecretView>>> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut tx = state.store.tenant(tenant).await?;
    let found = store::list(&mut tx, tenant).await?;
    tx.commit().await?;
    Ok(Json(List {
        items: found.into_iter().map(Into::into).collect(),
        next_cursor: None,
    }))
}

/// Read a secret's name, keys and version, never its value (editors and
/// admins).
#[utoipa::path(get, path = "/v1/secrets/{name}", tag = "secrets",
    params(("name" = String, Path, pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$", max_length = 253, description = "The secret's name: a DNS-1123 subdomain, as Kubernetes Secret names are")),
    responses((status = 200, body = SecretView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all, fields(secret = %name))]
async fn get_secret(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(name): Path<String>,
) -> ApiResult<Json<SecretView>> {
    let tenant = principal.tenant(Role::Editor)?;
    check_name(&name)?;
    let mut tx = state.store.tenant(tenant).await?;
    let found = store::get(&mut tx, tenant, &name)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("secret {name:?}")).at("/name"))?;
    tx.commit().await?;
    Ok(Json(found.into()))
}

/// Delete a secret (admins); its value is gone. Runs that reference it are
/// refused from now on.
#[utoipa::path(delete, path = "/v1/secrets/{name}", tag = "secrets",
    params(("name" = String, Path, pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$", max_length = 253, description = "The secret's name: a DNS-1123 subdomain, as Kubernetes Secret names are")),
    responses((status = 200, body = SecretView, description = "The secret as it was"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all, fields(secret = %name))]
async fn delete_secret(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(name): Path<String>,
) -> ApiResult<Json<SecretView>> {
    let tenant = principal.tenant(Role::Admin)?;
    check_name(&name)?;
    let mut tx = state.store.tenant(tenant).await?;
    let gone = store::delete(&mut tx, tenant, &name, &principal.subject)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("secret {name:?}")).at("/name"))?;
    tx.commit().await?;
    tracing::info!(version = gone.version, "secret deleted");
    Ok(Json(gone.into()))
}

/// The audit trail of the tenant's secrets, newest first: every write and
/// delete, who and when (admins).
#[utoipa::path(get, path = "/v1/secrets:audit", tag = "secrets", params(AuditQuery),
    responses((status = 200, body = List<SecretAuditView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all)]
async fn secret_audit(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Query(q): Query<AuditQuery>,
) -> ApiResult<Json<List<SecretAuditView>>> {
    let tenant = principal.tenant(Role::Admin)?;
    if let Some(name) = &q.name
        && !couler_ir::names::is_dns_subdomain(name)
    {
        return Err(ApiError::bad_request(
            "invalid_secret_name",
            "a secret's name is a DNS-1123 subdomain of at most 253 characters",
            "/name",
        ));
    }
    let before = match q.cursor.as_deref() {
        None => None,
        Some(c) => Some(c.parse::<i64>().ok().filter(|id| *id > 0).ok_or_else(|| {
            ApiError::bad_request("invalid_cursor", "not a cursor this list gave", "/cursor")
        })?),
    };
    let limit = q.limit.unwrap_or(50);
    if !(1..=200).contains(&limit) {
        return Err(ApiError::bad_request(
            "invalid_limit",
            "limit must be 1 to 200",
            "/limit",
        ));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let entries =
        store::audit_log(&mut tx, tenant, q.name.as_deref(), before, i64::from(limit)).await?;
    tx.commit().await?;
    let next_cursor = (entries.len() == limit as usize)
        .then(|| entries.last().map(|e| e.id.to_string()))
        .flatten();
    Ok(Json(List {
        items: entries.into_iter().map(Into::into).collect(),
        next_cursor,
    }))
}
