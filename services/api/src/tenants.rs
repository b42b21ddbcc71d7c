//! `/v1/tenants` (platform admins create; tenant admins read and change
//! settings) and `/v1/quotas` (tenant admins, within the platform's caps).

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_store::TenantId;
use couler_store::tenants::{self, NewTenant, Quotas, SplitBudget, Tenant, TenantSettings};
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub const ENGINES: &[&str] = &["local", "argo", "tekton", "airflow", "kfp"];

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct TenantView {
    pub id: TenantId,
    pub name: String,
    pub display_name: String,
    /// The engine this tenant's runs go to.
    pub engine: String,
    /// Whether the tenant's steps share cache entries with other tenants.
    pub share_cache: bool,
    /// Default TTL (seconds) of the cache entries the tenant's steps produce.
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub cache_ttl_secs: Option<i32>,
    /// Limits of one sub-workflow; bigger workflows are split.
    pub split_budget: SplitBudgetView,
    /// Image patterns this tenant's generated steps may use, on top of the
    /// platform's `[generate] allowed_images`: an image must match both.
    /// `*` matches any run of characters; a pattern without `*` is a
    /// prefix. Empty: no limit beyond the platform's.
    pub allowed_images: Vec<String>,
    /// The network the tenant's steps get on the local engine, where a
    /// platform admin set one; null: the platform's `local.sandbox.network`.
    pub step_network: Option<StepNetwork>,
    /// The shortest gap, in seconds, between two ticks of one of the
    /// tenant's schedules (set by platform admins).
    pub min_schedule_interval_secs: i32,
    pub quotas: QuotasView,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A network for a tenant's steps on the local engine: `none` (a loopback
/// of their own) or `host` (out through the machine, never to it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepNetwork {
    None,
    Host,
}

/// What `PATCH` may set the tenant's step network to; `default` clears it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum StepNetworkSetting {
    None,
    Host,
    Default,
}

/// Limits of one sub-workflow. An absent field keeps the engine's default
/// (200 steps and 512 KiB of manifest for Kubernetes-based engines; none
/// for the local engine).
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct SplitBudgetView {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "couler_ir::scalar::whole::opt")]
    pub max_steps: Option<u32>,
    /// Estimated manifest bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "couler_ir::scalar::whole::opt")]
    pub max_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "couler_ir::scalar::whole::opt")]
    pub max_pods: Option<u64>,
}

impl From<SplitBudget> for SplitBudgetView {
    fn from(b: SplitBudget) -> Self {
        SplitBudgetView {
            max_steps: b.max_steps,
            max_bytes: b.max_bytes,
            max_pods: b.max_pods,
        }
    }
}

#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct QuotasView {
    /// Runs planning or running at once.
    #[schema(minimum = 1)]
    #[serde(deserialize_with = "couler_ir::scalar::whole::deserialize")]
    pub max_concurrent_runs: i32,
    /// Runs waiting in the queue.
    #[schema(minimum = 1)]
    #[serde(deserialize_with = "couler_ir::scalar::whole::deserialize")]
    pub max_queued_runs: i32,
    /// API requests per second (shared by all replicas).
    #[schema(minimum = 1)]
    #[serde(deserialize_with = "couler_ir::scalar::whole::deserialize")]
    pub requests_per_second: i32,
}

impl From<Quotas> for QuotasView {
    fn from(q: Quotas) -> Self {
        QuotasView {
            max_concurrent_runs: q.max_concurrent_runs,
            max_queued_runs: q.max_queued_runs,
            requests_per_second: q.requests_per_second,
        }
    }
}

impl From<QuotasView> for Quotas {
    fn from(q: QuotasView) -> Self {
        Quotas {
            max_concurrent_runs: q.max_concurrent_runs,
            max_queued_runs: q.max_queued_runs,
            requests_per_second: q.requests_per_second,
        }
    }
}

impl From<Tenant> for TenantView {
    fn from(t: Tenant) -> Self {
        TenantView {
            id: t.id,
            name: t.name,
            display_name: t.display_name,
            engine: t.engine,
            share_cache: t.share_cache,
            cache_ttl_secs: t.cache_ttl_secs,
            split_budget: t.split_budget.into(),
            allowed_images: t.allowed_images,
            step_network: match t.step_network.as_deref() {
                Some("host") => Some(StepNetwork::Host),
                Some(_) => Some(StepNetwork::None),
                None => None,
            },
            min_schedule_interval_secs: t.min_schedule_interval_secs,
            quotas: t.quotas.into(),
            created_at: t.created_at,
            updated_at: t.updated_at,
        }
    }
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateTenant {
    /// Lowercase letters, digits and `-` (DNS-1123 label).
    pub name: String,
    pub display_name: Option<String>,
    /// One of local, argo, tekton, airflow, kfp (default local).
    pub engine: Option<String>,
    pub share_cache: Option<bool>,
    pub quotas: Option<QuotasView>,
}

#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct UpdateTenant {
    pub display_name: Option<String>,
    pub engine: Option<String>,
    pub share_cache: Option<bool>,
    /// Default TTL (seconds) of the tenant's cache entries.
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub cache_ttl_secs: Option<i32>,
    /// Replaces the tenant's sub-workflow limits (`{}` restores the
    /// engine's defaults).
    pub split_budget: Option<SplitBudgetView>,
    /// Replaces the image patterns the tenant's generated steps may use,
    /// on top of the platform's (`[]` lifts the tenant's limit). At most
    /// 100 patterns of 1-255 characters, without whitespace.
    pub allowed_images: Option<Vec<String>>,
    /// The network the tenant's steps get on the local engine (`default`:
    /// the platform's). Platform admins only.
    pub step_network: Option<StepNetworkSetting>,
    /// The shortest gap, in seconds, between two ticks of one of the
    /// tenant's schedules, 1 to 86400. Platform admins only. Schedules
    /// created before a change keep ticking; they are held to it when
    /// next edited.
    #[schema(minimum = 1, maximum = 86400)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub min_schedule_interval_secs: Option<i32>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_tenant, list_tenants))
        .routes(routes!(get_tenant, update_tenant))
        .routes(routes!(get_quotas, set_quotas))
}

fn check_engine(engine: Option<&str>) -> ApiResult<()> {
    match engine {
        Some(e) if !ENGINES.contains(&e) => Err(ApiError::bad_request(
            "unknown_engine",
            format!("engine {e:?} is not one of {}", ENGINES.join(", ")),
            "/engine",
        )),
        _ => Ok(()),
    }
}

/// The most image patterns a tenant may set.
const MAX_IMAGE_PATTERNS: usize = 100;
/// The longest image pattern, in characters.
const MAX_IMAGE_PATTERN_LEN: usize = 255;

/// Image patterns as a tenant sets them: at most [`MAX_IMAGE_PATTERNS`],
/// each non-empty, at most [`MAX_IMAGE_PATTERN_LEN`] characters, without
/// whitespace or control characters (no image reference holds them).
fn check_image_patterns(patterns: &[String]) -> ApiResult<()> {
    if patterns.len() > MAX_IMAGE_PATTERNS {
        return Err(ApiError::bad_request(
            "invalid_image_pattern",
            format!("allowed_images holds at most {MAX_IMAGE_PATTERNS} patterns"),
            "/allowed_images",
        ));
    }
    for (i, pattern) in patterns.iter().enumerate() {
        let why = if pattern.is_empty() {
            "is empty".to_owned()
        } else if pattern.chars().count() > MAX_IMAGE_PATTERN_LEN {
            format!("is longer than {MAX_IMAGE_PATTERN_LEN} characters")
        } else if pattern.chars().any(|c| c.is_whitespace() || c.is_control()) {
            "holds whitespace or control characters".to_owned()
        } else {
            continue;
        };
        return Err(ApiError::bad_request(
            "invalid_image_pattern",
            format!("allowed_images[{i}] {why}"),
            format!("/allowed_images/{i}"),
        ));
    }
    Ok(())
}

fn check_quotas(q: &QuotasView, caps: &crate::config::QuotaCaps, base: &str) -> ApiResult<()> {
    let checks = [
        (
            "max_concurrent_runs",
            q.max_concurrent_runs,
            caps.max_concurrent_runs,
        ),
        ("max_queued_runs", q.max_queued_runs, caps.max_queued_runs),
        (
            "requests_per_second",
            q.requests_per_second,
            caps.requests_per_second,
        ),
    ];
    for (field, value, cap) in checks {
        if value < 1 || value > cap {
            return Err(ApiError::bad_request(
                "quota_out_of_range",
                format!("{field} must be between 1 and {cap}"),
                format!("{base}/{field}"),
            ));
        }
    }
    Ok(())
}

/// Create a tenant (platform admins).
#[utoipa::path(post, path = "/v1/tenants", tag = "tenants", request_body = CreateTenant,
    responses((status = 201, body = TenantView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_tenant(
    State(state): State<AppState>,
    Auth(principal): Auth,
    req: Body<CreateTenant>,
) -> ApiResult<(StatusCode, Json<TenantView>)> {
    principal.require_platform_admin()?;
    let req = req.parse()?;
    if !couler_ir::names::is_dns_label(&req.name) {
        return Err(ApiError::bad_request(
            "invalid_name",
            "tenant names are 1-63 lowercase letters, digits or '-'",
            "/name",
        ));
    }
    check_engine(req.engine.as_deref())?;
    let quotas = req.quotas.unwrap_or_else(|| Quotas::default().into());
    check_quotas(&quotas, &state.config.quotas, "/quotas")?;
    let new = NewTenant {
        display_name: req.display_name.unwrap_or_else(|| req.name.clone()),
        name: req.name,
        engine: req.engine.unwrap_or_else(|| "local".into()),
        share_cache: req.share_cache.unwrap_or(true),
        quotas: quotas.into(),
    };
    let mut tx = state.store.platform().await?;
    let tenant = tenants::create(&mut tx, &new).await?;
    tx.commit().await?;
    tracing::info!(tenant = %tenant.id, name = %tenant.name, "tenant created");
    Ok((StatusCode::CREATED, Json(tenant.into())))
}

/// List every tenant (platform admins).
#[utoipa::path(get, path = "/v1/tenants", tag = "tenants",
    responses((status = 200, body = Vec<TenantView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_tenants(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<Vec<TenantView>>> {
    principal.require_platform_admin()?;
    let mut tx = state.store.platform().await?;
    let all = tenants::list(&mut tx).await?;
    tx.commit().await?;
    Ok(Json(all.into_iter().map(Into::into).collect()))
}

/// Read a tenant (its admins, or platform admins).
#[utoipa::path(get, path = "/v1/tenants/{id}", tag = "tenants", params(("id" = String, Path, description = "Tenant id")),
    responses((status = 200, body = TenantView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_tenant(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<TenantView>> {
    let id: TenantId = path_id(&id, "tenant")?;
    principal.for_tenant(id, Role::Admin)?;
    let mut tx = if principal.platform_admin {
        state.store.platform().await?
    } else {
        state.store.tenant(id).await?
    };
    let tenant = tenants::get(&mut tx, id)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    tx.commit().await?;
    Ok(Json(tenant.into()))
}

/// Change a tenant's settings (its admins, or platform admins).
#[utoipa::path(patch, path = "/v1/tenants/{id}", tag = "tenants", params(("id" = String, Path, description = "Tenant id")),
    request_body = UpdateTenant,
    responses((status = 200, body = TenantView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn update_tenant(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
    req: Body<UpdateTenant>,
) -> ApiResult<Json<TenantView>> {
    let id: TenantId = path_id(&id, "tenant")?;
    principal.for_tenant(id, Role::Admin)?;
    let req = req.parse()?;
    check_engine(req.engine.as_deref())?;
    if req.step_network.is_some() && !principal.platform_admin {
        return Err(ApiError::Forbidden(
            "step_network: only platform admins choose what network a tenant's steps get".into(),
        ));
    }
    if let Some(secs) = req.min_schedule_interval_secs {
        if !principal.platform_admin {
            return Err(ApiError::Forbidden(
                "min_schedule_interval_secs: only platform admins set a tenant's schedule limit"
                    .into(),
            ));
        }
        if !(1..=86_400).contains(&secs) {
            return Err(ApiError::bad_request(
                "invalid_interval",
                "min_schedule_interval_secs must be between 1 and 86400",
                "/min_schedule_interval_secs",
            ));
        }
    }
    if let Some(ttl) = req.cache_ttl_secs {
        let max = state.config.cache.max_ttl_secs;
        if ttl < 1 || ttl as u64 > max {
            return Err(ApiError::bad_request(
                "invalid_ttl",
                format!("cache_ttl_secs must be between 1 and {max}"),
                "/cache_ttl_secs",
            ));
        }
    }
    if let Some(b) = &req.split_budget {
        let zero = [
            ("max_steps", b.max_steps.map(u64::from)),
            ("max_bytes", b.max_bytes),
            ("max_pods", b.max_pods),
        ]
        .into_iter()
        .find(|(_, v)| *v == Some(0));
        if let Some((field, _)) = zero {
            return Err(ApiError::bad_request(
                "invalid_split_budget",
                format!("split_budget.{field} must be at least 1"),
                format!("/split_budget/{field}"),
            ));
        }
    }
    if let Some(patterns) = &req.allowed_images {
        check_image_patterns(patterns)?;
    }
    let settings = TenantSettings {
        display_name: req.display_name,
        engine: req.engine,
        share_cache: req.share_cache,
        cache_ttl_secs: req.cache_ttl_secs,
        split_budget: req.split_budget.map(|b| SplitBudget {
            max_steps: b.max_steps,
            max_bytes: b.max_bytes,
            max_pods: b.max_pods,
        }),
        allowed_images: req.allowed_images,
    };
    let mut tx = if principal.platform_admin {
        state.store.platform().await?
    } else {
        state.store.tenant(id).await?
    };
    let mut tenant = tenants::update_settings(&mut tx, id, &settings)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    if let Some(network) = req.step_network {
        let value = match network {
            StepNetworkSetting::None => Some("none"),
            StepNetworkSetting::Host => Some("host"),
            StepNetworkSetting::Default => None,
        };
        tenant = tenants::set_step_network(&mut tx, id, value)
            .await?
            .ok_or_else(|| ApiError::not_found("tenant"))?;
    }
    if let Some(secs) = req.min_schedule_interval_secs {
        tenant = tenants::set_min_schedule_interval(&mut tx, id, secs)
            .await?
            .ok_or_else(|| ApiError::not_found("tenant"))?;
    }
    tx.commit().await?;
    state.auth.forget_tenant(id);
    Ok(Json(tenant.into()))
}

/// Read the caller's tenant quotas (admins).
#[utoipa::path(get, path = "/v1/quotas", tag = "tenants",
    responses((status = 200, body = QuotasView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_quotas(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<QuotasView>> {
    let tenant = principal.tenant(Role::Admin)?;
    let mut tx = state.store.tenant(tenant).await?;
    let t = tenants::get(&mut tx, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    tx.commit().await?;
    Ok(Json(t.quotas.into()))
}

/// Set the caller's tenant quotas (admins), within the platform's caps.
#[utoipa::path(put, path = "/v1/quotas", tag = "tenants", request_body = QuotasView,
    responses((status = 200, body = QuotasView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn set_quotas(
    State(state): State<AppState>,
    Auth(principal): Auth,
    req: Body<QuotasView>,
) -> ApiResult<Json<QuotasView>> {
    let tenant = principal.tenant(Role::Admin)?;
    let req = req.parse()?;
    check_quotas(&req, &state.config.quotas, "")?;
    let mut tx = state.store.tenant(tenant).await?;
    let t = tenants::set_quotas(&mut tx, tenant, &req.into())
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    tx.commit().await?;
    state.auth.forget_tenant(tenant);
    state.queue.invalidate(tenant);
    Ok(Json(t.quotas.into()))
}
