//! `/v1/api-keys`: keys for services that trigger pipelines. The secret is
//! shown once, at creation; only its hash is stored.

use crate::auth::{Auth, Role, mint_api_key};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_store::ApiKeyId;
use couler_store::api_keys::{self, ApiKey, NewApiKey};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ApiKeyView {
    pub id: ApiKeyId,
    pub name: String,
    /// The visible start of the key (`ck_<prefix>_…`), to tell keys apart.
    pub prefix: String,
    pub roles: Vec<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub expires_at: Option<DateTime<Utc>>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

impl From<ApiKey> for ApiKeyView {
    fn from(k: ApiKey) -> Self {
        ApiKeyView {
            id: k.id,
            name: k.name,
            prefix: k.prefix,
            roles: k.roles,
            created_by: k.created_by,
            created_at: k.created_at,
            expires_at: k.expires_at,
            last_used_at: k.last_used_at,
            revoked_at: k.revoked_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateApiKey {
    #[schema(min_length = 1, max_length = 100)]
    pub name: String,
    /// Any of viewer, editor, admin.
    #[schema(value_type = Vec<crate::auth::Role>, min_items = 1)]
    pub roles: Vec<String>,
    /// When the key stops working (in the future); never when absent.
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct CreatedApiKey {
    #[serde(flatten)]
    pub key: ApiKeyView,
    /// The key itself. Shown only now: store it safely.
    pub secret: String,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_key, list_keys))
        .routes(routes!(revoke_key))
}

/// Create an API key (admins).
#[utoipa::path(post, path = "/v1/api-keys", tag = "api-keys", request_body = CreateApiKey,
    responses((status = 201, body = CreatedApiKey), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_key(
    State(state): State<AppState>,
    Auth(principal): Auth,
    req: Body<CreateApiKey>,
) -> ApiResult<(StatusCode, Json<CreatedApiKey>)> {
    let tenant = principal.tenant(Role::Admin)?;
    let req = req.parse()?;
    if req.name.trim().is_empty() || req.name.chars().count() > 100 {
        return Err(ApiError::bad_request(
            "invalid_name",
            "name must be 1 to 100 characters",
            "/name",
        ));
    }
    if req.roles.is_empty() {
        return Err(ApiError::bad_request(
            "invalid_roles",
            "give the key at least one role",
            "/roles",
        ));
    }
    for (i, role) in req.roles.iter().enumerate() {
        if Role::parse(role).is_none() {
            return Err(ApiError::bad_request(
                "invalid_roles",
                format!("{role:?} is not one of viewer, editor, admin"),
                format!("/roles/{i}"),
            ));
        }
    }
    if req.expires_at.is_some_and(|e| e <= Utc::now()) {
        return Err(ApiError::bad_request(
            "invalid_expiry",
            "expires_at is in the past",
            "/expires_at",
        ));
    }
    let minted = mint_api_key();
    let new = NewApiKey {
        name: req.name,
        prefix: minted.prefix,
        key_hash: minted.hash,
        roles: req.roles,
        created_by: principal.subject.clone(),
        expires_at: req.expires_at,
    };
    let mut tx = state.store.tenant(tenant).await?;
    let key = api_keys::create(&mut tx, tenant, &new).await?;
    tx.commit().await?;
    tracing::info!(key = %key.id, prefix = %key.prefix, "api key created");
    Ok((
        StatusCode::CREATED,
        Json(CreatedApiKey {
            key: key.into(),
            secret: minted.secret,
        }),
    ))
}

/// List the tenant's API keys (admins); secrets are never shown again.
#[utoipa::path(get, path = "/v1/api-keys", tag = "api-keys",
    responses((status = 200, body = Vec<ApiKeyView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_keys(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<Vec<ApiKeyView>>> {
    let tenant = principal.tenant(Role::Admin)?;
    let mut tx = state.store.tenant(tenant).await?;
    let keys = api_keys::list(&mut tx, tenant).await?;
    tx.commit().await?;
    Ok(Json(keys.into_iter().map(Into::into).collect()))
}

/// Revoke an API key (admins); it stops working at once.
#[utoipa::path(delete, path = "/v1/api-keys/{id}", tag = "api-keys", params(("id" = String, Path, description = "API key id")),
    responses((status = 200, body = ApiKeyView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn revoke_key(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<ApiKeyView>> {
    let tenant = principal.tenant(Role::Admin)?;
    let id: ApiKeyId = path_id(&id, "API key")?;
    let mut tx = state.store.tenant(tenant).await?;
    let key = api_keys::revoke(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found("API key"))?;
    tx.commit().await?;
    state.auth.forget_api_key(&key.prefix);
    Ok(Json(key.into()))
}
