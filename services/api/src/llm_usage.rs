//! `/v1/llm-usage` (a tenant's LLM tokens this month against its budget)
//! and `/v1/tenants/{id}/llm-budget` (platform admins set the budget).

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::path_id;
use axum::Json;
use axum::extract::{Path, State};
use chrono::NaiveDate;
use couler_store::TenantId;
use couler_store::llm_usage::{self, Account};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// A tenant's LLM tokens in the current calendar month (UTC).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct LlmUsageView {
    /// The month's first day.
    pub month: NaiveDate,
    /// Tokens per month; absent: unlimited.
    pub monthly_budget: Option<i64>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub used_tokens: i64,
    /// What is left this month; absent: unlimited. At 0 generations still
    /// work, drafted by the offline planner.
    pub tokens_left: Option<u64>,
    /// Generation requests that spent tokens this month.
    pub requests: i64,
}

impl From<Account> for LlmUsageView {
    fn from(a: Account) -> Self {
        LlmUsageView {
            month: a.month,
            monthly_budget: a.budget,
            prompt_tokens: a.prompt_tokens,
            completion_tokens: a.completion_tokens,
            used_tokens: a.used(),
            tokens_left: a.left(),
            requests: a.requests,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SetBudget {
    /// Tokens per calendar month; `null`: unlimited.
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub monthly_budget: Option<u64>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(get_usage))
        .routes(routes!(set_budget))
}

/// The caller's tenant: LLM tokens spent this month and its budget.
#[utoipa::path(get, path = "/v1/llm-usage", tag = "generations",
    responses((status = 200, body = LlmUsageView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_usage(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<LlmUsageView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let account = llm_usage::account(&mut tx, tenant).await?;
    tx.commit().await?;
    account
        .map(|a| Json(a.into()))
        .ok_or_else(|| ApiError::not_found("tenant"))
}

/// Set a tenant's monthly LLM token budget (platform admins).
#[utoipa::path(put, path = "/v1/tenants/{id}/llm-budget", tag = "tenants",
    params(("id" = String, Path, description = "Tenant id (`tnt_…`)")), request_body = SetBudget,
    responses((status = 200, body = LlmUsageView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn set_budget(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(raw): Path<String>,
    body: Body<SetBudget>,
) -> ApiResult<Json<LlmUsageView>> {
    principal.require_platform_admin()?;
    let body = body.parse()?;
    let tenant: TenantId = path_id(&raw, "tenant")?;
    let budget = body
        .monthly_budget
        .map(|b| i64::try_from(b).unwrap_or(i64::MAX));
    let mut tx = state.store.platform().await?;
    if !llm_usage::set_budget(&mut tx, tenant, budget).await? {
        return Err(ApiError::not_found(format!("tenant {raw:?}")));
    }
    let account = llm_usage::account(&mut tx, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("tenant {raw:?}")))?;
    tx.commit().await?;
    tracing::info!(%tenant, ?budget, "llm token budget set");
    Ok(Json(account.into()))
}
