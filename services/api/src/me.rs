//! `GET /v1/me`: who the caller is, so a client (the portal) can show it
//! and hide what the caller's role may not do. The server still checks
//! every request.

use crate::auth::{Auth, Role, Via};
use crate::state::AppState;
use axum::Json;
use couler_store::TenantId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(me))
}

/// How the caller authenticated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Credential {
    Jwt,
    ApiKey,
}

/// The caller.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct MeView {
    /// The token's subject, or the API key's name.
    pub subject: String,
    /// The tenant the caller acts in; none for a platform admin's token
    /// without one.
    pub tenant: Option<TenantId>,
    /// The highest role held in `tenant`.
    #[schema(value_type = Option<Role>)]
    pub role: Option<String>,
    /// Whether the caller administers the platform (tenants, quotas).
    pub platform_admin: bool,
    pub credential: Credential,
}

/// Who the caller is.
#[utoipa::path(get, path = "/v1/me", tag = "auth",
    responses((status = 200, body = MeView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn me(Auth(principal): Auth) -> Json<MeView> {
    Json(MeView {
        subject: principal.subject,
        tenant: principal.tenant,
        role: principal.role.map(|r| r.as_str().to_owned()),
        platform_admin: principal.platform_admin,
        credential: match principal.via {
            Via::Jwt => Credential::Jwt,
            Via::ApiKey(_) => Credential::ApiKey,
        },
    })
}
