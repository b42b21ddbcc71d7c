//! Postgres storage for Couler.
//!
//! Every tenant-owned query runs inside a transaction opened by
//! [`Store::tenant`], which assumes the `couler_app` role and sets the
//! tenant for row-level security, and it also filters by `tenant_id`
//! itself. Cross-tenant work (platform administration, API-key lookup,
//! queue claims) goes through [`Store::platform`] and is named as such.

pub mod api_keys;
pub mod backfills;
mod connect;
pub mod events;
pub mod generations;
pub mod ids;
pub mod llm_usage;
pub mod logs;
pub mod page;
pub mod principals;
pub mod runs;
pub mod schedules;
pub mod scheduling;
pub mod secrets;
pub mod status;
pub mod step_cache;
pub mod step_library;
pub mod tenants;
pub mod ticks;
pub mod webhooks;
pub mod workflows;

pub use connect::{DatabaseConfig, MIGRATOR, StoreConfig, StoreError};
pub use ids::{
    ApiKeyId, BackfillId, GenerationId, InvalidId, PrincipalId, RunId, ScheduleId, TenantId,
    TriggerId, WorkflowId,
};
pub use page::{Cursor, Page};
pub use status::{IllegalTransition, RunStatus, StepStatus};

use sqlx::postgres::PgPool;

/// A transaction with its role and (for tenant work) tenant already set.
pub type Tx = sqlx::Transaction<'static, sqlx::Postgres>;

/// Channel the API notifies when a run is queued; the scheduler listens.
pub const RUNS_QUEUED_CHANNEL: &str = "couler_runs_queued";
/// Channel a schedule change (or a new backfill) is announced on; the
/// schedulers' tickers listen.
pub const SCHEDULES_CHANNEL: &str = "couler_schedules_changed";
/// Channel run events are announced on (payload: the run's uuid).
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

    /// A transaction that sees only `tenant`'s rows. The role and tenant
    /// are set in the same round trip as `BEGIN`.
    pub async fn tenant(&self, tenant: TenantId) -> Result<Tx, sqlx::Error> {
        // A UUID prints as hex and dashes only: nothing here can inject SQL.
        let begin = format!(
            "BEGIN; SELECT set_config('role', 'couler_app', true), set_config('couler.tenant_id', '{}', true)",
            tenant.0
        );
        self.on_live_connection(|| self.pool.begin_with(sqlx::AssertSqlSafe(begin.clone())))
            .await
    }

    /// A transaction that sees every tenant. Use only for platform work.
    pub async fn platform(&self) -> Result<Tx, sqlx::Error> {
        self.on_live_connection(|| {
            self.pool
                .begin_with("BEGIN; SELECT set_config('role', 'couler_platform', true)")
        })
        .await
    }

    /// Whether the database answers.
    pub async fn ping(&self) -> Result<(), sqlx::Error> {
        self.on_live_connection(|| sqlx::query!("SELECT 1 AS one").fetch_one(&self.pool))
            .await
            .map(|_| ())
    }

    /// Runs `first`, a call's first statement on a pooled connection, again
    /// while it fails because the connection was lost. The pool does not
    /// ping connections before handing them out, so one the server dropped
    /// since its last use (a restart, a terminated backend) fails here; it
    /// is closed on release, and each try takes another, at most as many
    /// as the pool holds before a new one is opened. Nothing ran yet, so
    /// trying again is safe.
    async fn on_live_connection<T, F: Future<Output = Result<T, sqlx::Error>>>(
        &self,
        first: impl Fn() -> F,
    ) -> Result<T, sqlx::Error> {
        let mut tries = 0;
        loop {
            match first().await {
                Err(e)
                    if connection_lost(&e)
                        && tries <= self.pool.options().get_max_connections() =>
                {
                    tracing::debug!(error = %e, "a pooled connection was lost; trying another");
                    tries += 1;
                }
                done => return done,
            }
        }
    }
}

/// Whether an error says the connection itself is gone: an I/O failure, or
/// the server ending the session (SQLSTATE classes 08, connection
/// exception, and 57P, operator intervention).
fn connection_lost(err: &sqlx::Error) -> bool {
    match err {
        sqlx::Error::Io(_) => true,
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|code| code.starts_with("08") || code.starts_with("57P")),
        _ => false,
    }
}

/// The name of the constraint a database error violated, if any.
pub fn violated_constraint(err: &sqlx::Error) -> Option<&str> {
    match err {
        sqlx::Error::Database(db) => db.constraint(),
        _ => None,
    }
}
