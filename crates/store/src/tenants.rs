//! Tenants and their quotas.

use crate::{TenantId, Tx};
use chrono::{DateTime, Utc};
use sqlx::types::Json;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tenant {
    pub id: TenantId,
    pub name: String,
    pub display_name: String,
    pub engine: String,
    pub share_cache: bool,
    /// Default TTL of the cache entries the tenant's steps produce.
    pub cache_ttl_secs: Option<i32>,
    /// Limits of one sub-workflow, over the engine's defaults.
    pub split_budget: SplitBudget,
    /// Image patterns the tenant's generated steps may use, on top of the
    /// platform's; empty: no limit beyond the platform's.
    pub allowed_images: Vec<String>,
    /// The network its steps get on the local engine, where a platform
    /// admin set one (`none` or `host`); none: the platform's default.
    pub step_network: Option<String>,
    /// The shortest gap between two ticks of one of its schedules, set by
    /// a platform admin (migration 0014's default: 60 s).
    pub min_schedule_interval_secs: i32,
    pub quotas: Quotas,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// A tenant's limits of one sub-workflow; `None` keeps the engine's default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SplitBudget {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_steps: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_pods: Option<u64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quotas {
    pub max_concurrent_runs: i32,
    pub max_queued_runs: i32,
    pub requests_per_second: i32,
}

impl Default for Quotas {
    fn default() -> Self {
        Quotas {
            max_concurrent_runs: 10,
            max_queued_runs: 1000,
            requests_per_second: 50,
        }
    }
}

#[derive(Debug, Clone)]
pub struct NewTenant {
    pub name: String,
    pub display_name: String,
    pub engine: String,
    pub share_cache: bool,
    pub quotas: Quotas,
}

/// Fields a tenant admin may change; `None` leaves a field as it is.
#[derive(Debug, Clone, Default)]
pub struct TenantSettings {
    pub display_name: Option<String>,
    pub engine: Option<String>,
    pub share_cache: Option<bool>,
    pub cache_ttl_secs: Option<i32>,
    pub split_budget: Option<SplitBudget>,
    /// Replaces the allowed image patterns; `Some(vec![])` clears them.
    pub allowed_images: Option<Vec<String>>,
}

struct Row {
    id: TenantId,
    name: String,
    display_name: String,
    engine: String,
    share_cache: bool,
    cache_ttl_secs: Option<i32>,
    split_budget: Json<SplitBudget>,
    allowed_images: Vec<String>,
    step_network: Option<String>,
    min_schedule_interval_secs: i32,
    max_concurrent_runs: i32,
    max_queued_runs: i32,
    requests_per_second: i32,
    created_at: DateTime<Utc>,
    updated_at: DateTime<Utc>,
}

impl From<Row> for Tenant {
    fn from(r: Row) -> Self {
        Tenant {
            id: r.id,
            name: r.name,
            display_name: r.display_name,
            engine: r.engine,
            share_cache: r.share_cache,
            cache_ttl_secs: r.cache_ttl_secs,
            split_budget: r.split_budget.0,
            allowed_images: r.allowed_images,
            step_network: r.step_network,
            min_schedule_interval_secs: r.min_schedule_interval_secs,
            quotas: Quotas {
                max_concurrent_runs: r.max_concurrent_runs,
                max_queued_runs: r.max_queued_runs,
                requests_per_second: r.requests_per_second,
            },
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

/// Creates a tenant (platform transaction).
pub async fn create(tx: &mut Tx, new: &NewTenant) -> Result<Tenant, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"INSERT INTO tenants (id, name, display_name, engine, share_cache,
                               max_concurrent_runs, max_queued_runs, requests_per_second)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           RETURNING id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                     allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at"#,
        TenantId::new() as TenantId,
        new.name,
        new.display_name,
        new.engine,
        new.share_cache,
        new.quotas.max_concurrent_runs,
        new.quotas.max_queued_runs,
        new.quotas.requests_per_second,
    )
    .fetch_one(&mut **tx)
    .await
    .map(Tenant::from)
}

pub async fn get(tx: &mut Tx, id: TenantId) -> Result<Option<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"SELECT id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                  allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at
           FROM tenants WHERE id = $1"#,
        id as TenantId,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|r| r.map(Tenant::from))
}

pub async fn get_by_name(tx: &mut Tx, name: &str) -> Result<Option<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"SELECT id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                  allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at
           FROM tenants WHERE name = $1"#,
        name,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|r| r.map(Tenant::from))
}

/// Every tenant in name order (platform transaction).
pub async fn list(tx: &mut Tx) -> Result<Vec<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"SELECT id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                  allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at
           FROM tenants ORDER BY name"#,
    )
    .fetch_all(&mut **tx)
    .await
    .map(|rows| rows.into_iter().map(Tenant::from).collect())
}

pub async fn update_settings(
    tx: &mut Tx,
    id: TenantId,
    settings: &TenantSettings,
) -> Result<Option<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"UPDATE tenants SET
               display_name = coalesce($2, display_name),
               engine = coalesce($3, engine),
               share_cache = coalesce($4, share_cache),
               cache_ttl_secs = coalesce($5, cache_ttl_secs),
               split_budget = coalesce($6, split_budget),
               allowed_images = coalesce($7, allowed_images),
               updated_at = now()
           WHERE id = $1
           RETURNING id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                     allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at"#,
        id as TenantId,
        settings.display_name,
        settings.engine,
        settings.share_cache,
        settings.cache_ttl_secs,
        settings.split_budget.map(Json) as Option<Json<SplitBudget>>,
        settings.allowed_images.as_deref(),
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|r| r.map(Tenant::from))
}

/// Sets (or, with `None`, clears) the network a tenant's steps get on the
/// local engine. Platform transactions only: tenant-scoped ones may not
/// update the column (migration 0012).
pub async fn set_step_network(
    tx: &mut Tx,
    id: TenantId,
    network: Option<&str>,
) -> Result<Option<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"UPDATE tenants SET step_network = $2, updated_at = now()
           WHERE id = $1
           RETURNING id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                     allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at"#,
        id as TenantId,
        network,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|r| r.map(Tenant::from))
}

/// Sets the shortest gap between two ticks of the tenant's schedules.
/// Platform transactions only: a tenant may not lower its own limit.
pub async fn set_min_schedule_interval(
    tx: &mut Tx,
    id: TenantId,
    secs: i32,
) -> Result<Option<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"UPDATE tenants SET min_schedule_interval_secs = $2, updated_at = now()
           WHERE id = $1
           RETURNING id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                     allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at"#,
        id as TenantId,
        secs,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|r| r.map(Tenant::from))
}

pub async fn set_quotas(
    tx: &mut Tx,
    id: TenantId,
    q: &Quotas,
) -> Result<Option<Tenant>, sqlx::Error> {
    sqlx::query_as!(
        Row,
        r#"UPDATE tenants SET
               max_concurrent_runs = $2, max_queued_runs = $3, requests_per_second = $4, updated_at = now()
           WHERE id = $1
           RETURNING id AS "id: TenantId", name, display_name, engine, share_cache, cache_ttl_secs, split_budget AS "split_budget: Json<SplitBudget>",
                     allowed_images, step_network, min_schedule_interval_secs, max_concurrent_runs, max_queued_runs, requests_per_second, created_at, updated_at"#,
        id as TenantId,
        q.max_concurrent_runs,
        q.max_queued_runs,
        q.requests_per_second,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|r| r.map(Tenant::from))
}
