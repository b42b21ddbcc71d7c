//! Shared application state, built once at start-up.

use crate::auth::Authenticator;
use crate::batch::RunBatcher;
use crate::config::Config;
use crate::events::EventHub;
use crate::quota::QueueGauge;
use crate::ratelimit::RateLimiter;
use anyhow::Context;
use couler_cache::{CacheIndex, SharedRedis};
use couler_store::Store;
use metrics_exporter_prometheus::PrometheusHandle;
use secrecy::ExposeSecret;
use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct AppState(Arc<Inner>);

pub struct Inner {
    pub config: Config,
    pub store: Store,
    pub auth: Authenticator,
    pub redis: SharedRedis,
    pub limiter: RateLimiter,
    /// The cache index the schedulers fill, on the same Redis and prefix.
    pub cache: CacheIndex,
    pub events: EventHub,
    pub queue: QueueGauge,
    pub batcher: RunBatcher,
    pub metrics: PrometheusHandle,
    /// Natural-language generation (offline planner when no LLM is set).
    pub generator: Arc<couler_nl::generate::Generator>,
    /// Platform keys for tenant secrets (and webhook secrets derived from
    /// them); `None` when none are configured.
    pub keyring: Option<Arc<couler_secrets::Keyring>>,
    /// Webhook triggers by public id, kept briefly for the ingress.
    pub triggers: crate::hooks::Triggers,
    pub shutdown: CancellationToken,
}

impl Deref for AppState {
    type Target = Inner;
    fn deref(&self) -> &Inner {
        &self.0
    }
}

impl AppState {
    /// Connects to Postgres (creating and migrating the database) and Redis
    /// (in the background), and loads the auth keys.
    pub async fn build(config: Config, shutdown: CancellationToken) -> anyhow::Result<AppState> {
        let keyring = couler_secrets::Keyring::from_config(&config.secrets)
            .context("reading the [secrets] keys")?
            .map(Arc::new);
        if keyring.is_none() {
            tracing::warn!("no secrets.keys configured: tenant secrets cannot be written");
        }
        let store = Store::connect(&config.database.store_config())
            .await
            .context("opening the database")?;
        let auth = Authenticator::new(&config.auth.jwt).context("loading JWT keys")?;
        let timeout = Duration::from_millis(config.redis.timeout_ms);
        let redis = SharedRedis::connect(
            config.redis.url.expose_secret(),
            timeout,
            shutdown.child_token(),
        );
        let limiter = RateLimiter::new(redis.clone(), timeout, &config.redis.key_prefix);
        let cache = CacheIndex::new(redis.clone(), config.redis.cache_config(&config.cache));
        // Fewer writers make larger batches (less Postgres work per run),
        // more overlap commits: at 64 connections on 2 cores, 3 writers put
        // 11 runs in a transaction against 4 writers' 9, for 10-20% less CPU
        // per run and the same p99 (scripts/bench-api).
        let batcher = RunBatcher::start(store.clone(), 3, shutdown.child_token());
        let events = EventHub::start(store.pool().clone(), shutdown.child_token()).await?;
        let llm = match &config.llm {
            Some(llm) => {
                Some(couler_nl::LlmClient::new(llm.clone()).context("configuring the LLM client")?)
            }
            None => None,
        };
        let generator = Arc::new(couler_nl::generate::Generator::new(
            llm,
            config.generate.limits.clone(),
        ));
        Ok(AppState(Arc::new(Inner {
            config,
            store,
            auth,
            redis,
            limiter,
            cache,
            events,
            queue: QueueGauge::default(),
            batcher,
            metrics: couler_telemetry::metrics(),
            generator,
            keyring,
            triggers: Default::default(),
            shutdown,
        })))
    }
}
