//! Connecting: create the database when allowed, migrate under an advisory
//! lock (sqlx's migrator takes one), build the pool.

use crate::Store;
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{ConnectOptions, Connection};
use std::str::FromStr;
use std::time::Duration;

#[derive(Debug, Clone)]
pub struct StoreConfig {
    pub url: String,
    pub max_connections: u32,
    /// Create the database when the server lacks it.
    pub create_database: bool,
    pub acquire_timeout: Duration,
    /// How long a starting service waits for a database that cannot be
    /// reached yet (starting up, restarting, out of connections).
    pub startup_wait: Duration,
}

impl StoreConfig {
    pub fn new(url: impl Into<String>) -> Self {
        StoreConfig {
            url: url.into(),
            max_connections: 32,
            create_database: true,
            acquire_timeout: Duration::from_secs(5),
            startup_wait: Duration::from_secs(60),
        }
    }
}

/// Database settings as services read them from configuration; the URL
/// may hold a password, so it never prints.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DatabaseConfig {
    pub url: SecretString,
    pub max_connections: u32,
    /// Create the database when the server lacks it.
    pub create: bool,
}

impl Default for DatabaseConfig {
    fn default() -> Self {
        DatabaseConfig {
            url: SecretString::from("postgres://postgres@127.0.0.1:5432/couler"),
            max_connections: 32,
            create: true,
        }
    }
}

impl DatabaseConfig {
    pub fn store_config(&self) -> StoreConfig {
        let mut c = StoreConfig::new(self.url.expose_secret());
        c.max_connections = self.max_connections;
        c.create_database = self.create;
        c
    }
}

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("invalid database URL: {0}")]
    Url(#[source] sqlx::Error),
    #[error("could not create database {name:?}: {source}")]
    CreateDatabase { name: String, source: sqlx::Error },
    #[error("could not connect to the database: {0}")]
    Connect(#[source] sqlx::Error),
    #[error("could not migrate the database: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
}

pub static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("../../migrations");

/// Whether connecting may work if tried again: the server is not reachable,
/// starting up, or has no connection to spare.
fn transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_) | sqlx::Error::PoolTimedOut => true,
        sqlx::Error::Database(db) => {
            matches!(
                db.code().as_deref(),
                Some("53300" | "57P03" | "08006" | "08001")
            )
        }
        _ => false,
    }
}

impl Store {
    /// Connects, creating the database if needed, and applies migrations.
    /// A database that cannot be reached yet is waited for (up to
    /// `startup_wait`, saying so at each try), as a service starting beside
    /// it expects.
    pub async fn connect(config: &StoreConfig) -> Result<Store, StoreError> {
        let started = std::time::Instant::now();
        let mut pause = Duration::from_millis(200);
        loop {
            match Store::connect_once(config).await {
                Err(StoreError::Connect(e) | StoreError::CreateDatabase { source: e, .. })
                    if transient(&e) && started.elapsed() + pause < config.startup_wait =>
                {
                    tracing::warn!(error = %e, retry_in_ms = pause.as_millis() as u64, "the database cannot be reached yet");
                    tokio::time::sleep(pause).await;
                    pause = (pause * 2).min(Duration::from_secs(5));
                }
                other => return other,
            }
        }
    }

    async fn connect_once(config: &StoreConfig) -> Result<Store, StoreError> {
        let options = PgConnectOptions::from_str(&config.url)
            .map_err(StoreError::Url)?
            .log_statements(tracing::log::LevelFilter::Trace);
        if config.create_database {
            create_database(&options).await?;
        }
        let pool = PgPoolOptions::new()
            .max_connections(config.max_connections)
            .acquire_timeout(config.acquire_timeout)
            // sqlx would ping every connection it hands out (and pings it
            // again, in the background, on release): a round trip per use.
            // A connection the server dropped meanwhile fails its first
            // statement instead, and `Store` tries another one.
            .test_before_acquire(false)
            .connect_with(options)
            .await
            .map_err(StoreError::Connect)?;
        MIGRATOR.run(&pool).await?;
        Ok(Store::from_pool(pool))
    }
}

async fn create_database(options: &PgConnectOptions) -> Result<(), StoreError> {
    let Some(name) = options.get_database().map(str::to_owned) else {
        return Ok(());
    };
    let mut conn = options
        .clone()
        .database("postgres")
        .connect()
        .await
        .map_err(StoreError::Connect)?;
    let exists = sqlx::query_scalar!(
        "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)",
        name
    )
    .fetch_one(&mut conn)
    .await
    .map_err(StoreError::Connect)?
    .unwrap_or(false);
    if !exists {
        let quoted = format!("\"{}\"", name.replace('"', "\"\""));
        // The name is quoted as an identifier above; DDL takes no bind parameters.
        let ddl = sqlx::AssertSqlSafe(format!("CREATE DATABASE {quoted}"));
        match sqlx::query(ddl).execute(&mut conn).await {
            Ok(_) => tracing::info!(database = %name, "created database"),
            // Another replica won the race: `duplicate_database`, or the
            // catalog's unique index when both got past the check at once.
            Err(sqlx::Error::Database(e))
                if matches!(e.code().as_deref(), Some("42P04" | "23505")) => {}
            Err(source) => return Err(StoreError::CreateDatabase { name, source }),
        }
    }
    let _ = conn.close().await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_unreachable_database_is_retried_until_the_wait_is_over() {
        let mut config = StoreConfig::new("postgres://postgres@127.0.0.1:1/couler");
        config.startup_wait = Duration::from_millis(900);
        let started = std::time::Instant::now();
        let err = Store::connect(&config)
            .await
            .err()
            .expect("nothing listens on port 1");
        assert!(
            matches!(
                err,
                StoreError::CreateDatabase { .. } | StoreError::Connect(_)
            ),
            "{err}"
        );
        // Tried at 0, 0.2 and 0.6 s, then the next pause would pass the wait.
        let took = started.elapsed();
        assert!(
            took >= Duration::from_millis(600) && took < Duration::from_secs(5),
            "{took:?}"
        );
    }

    #[test]
    fn only_connection_failures_are_worth_another_try() {
        assert!(transient(&sqlx::Error::PoolTimedOut));
        assert!(!transient(&sqlx::Error::RowNotFound));
    }
}
