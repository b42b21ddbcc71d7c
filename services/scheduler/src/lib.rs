//! `couler-scheduler`: claims queued runs from Postgres (woken by NOTIFY,
//! polling as the fallback), plans them with the optimizer pipeline and
//! drives them on the tenant's engine under a renewable lease. Several
//! replicas run side by side; a dead replica's runs are taken over and
//! reconciled with the engine, not restarted. Every replica also fires the
//! schedules that are due (`ticker`), each tick exactly once.

mod caching;
pub mod config;
mod deadline;
mod driver;
pub mod engines;
mod lease;
mod queue;
mod secrets;
mod stages;
mod tail;
pub mod ticker;

use config::Config;
use couler_store::Store;
use engines::Engines;
use secrecy::ExposeSecret;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What every part of the scheduler shares.
pub struct Context {
    pub store: Store,
    pub engines: Engines,
    /// The LLM for `llm` hyperparameter searches.
    pub llm: Option<couler_nl::llm::LlmClient>,
    pub owner: String,
    pub config: config::SchedulerConfig,
    pub held: lease::Held,
    /// The shared cache index; `None` runs without caching.
    pub cache: Option<couler_cache::CacheIndex>,
    /// Opens tenant secrets for the steps that read them; `None`: runs that
    /// read secrets fail, saying so.
    pub keyring: Option<couler_secrets::Keyring>,
    /// The started runs whose steps' logs can be tailed (live logs).
    pub tails: Arc<tail::Tails>,
}

/// Runs the scheduler until `shutdown` fires, then stops claiming, hands
/// back its leases and returns.
pub async fn run(
    store: Store,
    engines: Engines,
    cache: Option<couler_cache::CacheIndex>,
    llm: Option<couler_nl::llm::LlmClient>,
    keyring: Option<couler_secrets::Keyring>,
    config: config::SchedulerConfig,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let ctx = Arc::new(Context {
        owner: config.owner(),
        store,
        engines,
        llm,
        config,
        held: lease::Held::default(),
        cache,
        keyring,
        tails: Arc::default(),
    });
    tracing::info!(owner = %ctx.owner, engines = ?ctx.engines.names(), "scheduler started");
    let heartbeat = tokio::spawn(lease::heartbeat(ctx.clone(), shutdown.clone()));
    if let Some(index) = &ctx.cache {
        tokio::spawn(caching::sweep(index.clone(), shutdown.clone()));
    }
    tokio::spawn(tail::listen(ctx.clone(), shutdown.clone()));
    let poll = std::time::Duration::from_millis(ctx.config.poll_ms);
    let ticker = tokio::spawn(ticker::run(ctx.store.clone(), poll, shutdown.clone()));
    queue::claim_loop(ctx.clone(), shutdown.clone()).await?;
    // Stop claiming first (done), then let drivers hand their runs back.
    let _ = ticker.await;
    ctx.held.shutdown_all();
    ctx.held.wait_idle().await;
    heartbeat.abort();
    tracing::info!(owner = %ctx.owner, "scheduler stopped");
    Ok(())
}

/// Opens the store and the configured engines, then [`run`]s.
pub async fn serve(config: Config, shutdown: CancellationToken) -> anyhow::Result<()> {
    let store = Store::connect(&config.database.store_config()).await?;
    let engines = Engines::from_config(&config)?;
    if let Some(addr) = config.scheduler.metrics_addr {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        // Install the recorder before anything records a metric.
        tokio::spawn(metrics_server(
            couler_telemetry::metrics(),
            listener,
            shutdown.clone(),
        ));
    }
    let redis = couler_cache::SharedRedis::connect(
        config.redis.url.expose_secret(),
        config.redis.timeout(),
        shutdown.child_token(),
    );
    let cache = couler_cache::CacheIndex::new(redis, config.cache_config());
    let keyring = couler_secrets::Keyring::from_config(&config.secrets)?;
    let llm = config.llm.map(couler_nl::llm::LlmClient::new).transpose()?;
    run(
        store,
        engines,
        Some(cache),
        llm,
        keyring,
        config.scheduler,
        shutdown,
    )
    .await
}

async fn metrics_server(
    handle: metrics_exporter_prometheus::PrometheusHandle,
    listener: tokio::net::TcpListener,
    shutdown: CancellationToken,
) {
    // `/healthz`: the process is up (container health checks and probes).
    let app = axum::Router::new()
        .route(
            "/metrics",
            axum::routing::get(move || {
                let handle = handle.clone();
                async move { handle.render() }
            }),
        )
        .route("/healthz", axum::routing::get(|| async { "ok\n" }));
    let _ = axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await;
}
