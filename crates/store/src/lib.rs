//! Postgres storage for Couler.
//!
//! Every tenant-owned query runs inside a transaction opened by
//! [`Store::tenant`], which assumes the `couler_app` role and sets the
//! tenant for row-level security, and it also filters by `tenant_id`
//! itself. Cross-tenant work (platform administration, API-key lookup,
//! queue claims) goes through [`Store::platform`] and is named as such.

pub mod api_keys;
mod connect;
pub mod events;
pub mod ids;
pub mod page;
pub mod principals;
pub mod runs;
pub mod scheduling;
pub mod status;
pub mod tenants;
pub mod workflows;

pub use connect::{DatabaseConfig, MIGRATOR, StoreConfig, StoreError};
pub use ids::{ApiKeyId, InvalidId, PrincipalId, RunId, TenantId, WorkflowId};
pub use page::{Cursor, Page};
pub use status::{IllegalTransition, RunStatus, StepStatus};

use sqlx::postgres::PgPool;

/// A transaction with its role and (for tenant work) tenant already set.
pub type Tx = sqlx::Transaction<'static, sqlx::Postgres>;

/// Channel the API notifies when a run is queued; the scheduler listens.
pub const RUNS_QUEUED_CHANNEL: &str = "couler_runs_queued";
/// Channel every run event is announced on (`<run uuid>:<event id>`).
pub const RUN_EVENTS_CHANNEL: &str = "couler_run_events";

#[derive(Clone)]
pub struct Store {
    pool: PgPool,
}

impl Store {
    pub fn from_pool(pool: PgPool) -> Self {
        Store { pool }
    }

    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// A transaction that sees only `tenant`'s rows.
    pub async fn tenant(&self, tenant: TenantId) -> Result<Tx, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!(
            "SELECT set_config('role', 'couler_app', true) AS role, set_config('couler.tenant_id', $1, true) AS tenant",
            tenant.0.to_string()
        )
        .fetch_one(&mut *tx)
        .await?;
        Ok(tx)
    }

    /// A transaction that sees every tenant. Use only for platform work.
    pub async fn platform(&self) -> Result<Tx, sqlx::Error> {
        let mut tx = self.pool.begin().await?;
        sqlx::query!("SELECT set_config('role', 'couler_platform', true) AS role")
            .fetch_one(&mut *tx)
            .await?;
        Ok(tx)
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        sqlx::query!("SELECT 1 AS one")
            .fetch_one(&self.pool)
            .await
            .map(|_| ())
    }
}

/// The name of the constraint a database error violated, if any.
pub fn violated_constraint(err: &sqlx::Error) -> Option<&str> {
    match err {
        sqlx::Error::Database(db) => db.constraint(),
        _ => None,
    }
}
