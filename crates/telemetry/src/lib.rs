//! Process-wide set-up shared by the services: logs, traces, metrics, and
//! shutdown on signals.
//!
//! Logs are JSON lines (or text) carrying each request's span fields
//! (request id, route, tenant, trace id). Traces always get OpenTelemetry
//! ids so runs can carry them to the scheduler; they are exported over
//! OTLP/gRPC only when an endpoint is configured.

pub mod config_env;

use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde::Deserialize;
use std::sync::OnceLock;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// OTLP/gRPC endpoint for traces; none exports nothing.
    pub otlp_endpoint: Option<String>,
    /// `json` (default) or `text`.
    pub log_format: String,
    /// `RUST_LOG`-style filter.
    pub log_filter: String,
}

impl Default for TelemetryConfig {
    fn default() -> Self {
        TelemetryConfig {
            otlp_endpoint: None,
            log_format: "json".into(),
            log_filter: "info,sqlx=warn".into(),
        }
    }
}

/// Flushes spans on drop.
pub struct TelemetryGuard(SdkTracerProvider);

impl Drop for TelemetryGuard {
    fn drop(&mut self) {
        let _ = self.0.shutdown();
    }
}

/// Installs the global subscriber and propagator. Call once, from `main`.
pub fn init(config: &TelemetryConfig, service: &'static str) -> anyhow::Result<TelemetryGuard> {
    let mut builder = SdkTracerProvider::builder();
    if let Some(endpoint) = &config.otlp_endpoint {
        let exporter = opentelemetry_otlp::SpanExporter::builder()
            .with_tonic()
            .with_endpoint(endpoint)
            .build()?;
        builder = builder.with_batch_exporter(exporter);
    }
    let provider = builder.build();
    opentelemetry::global::set_text_map_propagator(TraceContextPropagator::new());
    opentelemetry::global::set_tracer_provider(provider.clone());
    // Spans feed traces at info level whatever the log filter says, so a
    // quiet log never breaks trace propagation to the scheduler.
    let otel = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer(service))
        .with_filter(tracing_subscriber::filter::LevelFilter::INFO);

    // The log filter applies to log output only (a per-layer filter).
    let filter = EnvFilter::try_new(&config.log_filter)?;
    let fmt = if config.log_format == "text" {
        tracing_subscriber::fmt::layer().boxed()
    } else {
        tracing_subscriber::fmt::layer()
            .json()
            .with_current_span(true)
            .with_span_list(false)
            .flatten_event(true)
            .boxed()
    };
    tracing_subscriber::registry()
        .with(otel)
        .with(fmt.with_filter(filter))
        .try_init()?;
    Ok(TelemetryGuard(provider))
}

/// The process-wide Prometheus recorder (installed on first use).
pub fn metrics() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let recorder = PrometheusBuilder::new()
                .set_buckets(&[
                    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
                ])
                .expect("static buckets are valid")
                .build_recorder();
            let handle = recorder.handle();
            // Another recorder may already be installed (tests share a process).
            let _ = metrics::set_global_recorder(recorder);
            handle
        })
        .clone()
}

/// W3C trace context of the current span, to store with a run.
pub fn current_trace_context() -> std::collections::BTreeMap<String, String> {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let context = tracing::Span::current().context();
    let mut carrier = std::collections::HashMap::new();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&context, &mut carrier));
    carrier.into_iter().collect()
}

/// Reads W3C trace headers from an HTTP request.
pub struct Headers<'a>(pub &'a http::HeaderMap);

impl opentelemetry::propagation::Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key)?.to_str().ok()
    }
    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(|k| k.as_str()).collect()
    }
}

/// Cancels `token` on SIGTERM or Ctrl-C.
pub async fn shutdown_on_signal(token: tokio_util::sync::CancellationToken) {
    let ctrl_c = tokio::signal::ctrl_c();
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        _ = ctrl_c => {},
        _ = term => {},
    }
    tracing::info!("shutting down");
    token.cancel();
}

/// Loads a service's typed configuration: defaults, then an optional TOML
/// file, then `COULER__SECTION__KEY` environment variables for this
/// service's `sections` only (services started together by `couler up`
/// share one environment), then `DATABASE_URL` and `REDIS_URL`.
pub fn load_config<T: serde::de::DeserializeOwned>(
    file: Option<&std::path::Path>,
    sections: &'static [&'static str],
) -> Result<T, Box<figment::Error>> {
    use figment::providers::{Env, Format, Toml};
    let mut figment = figment::Figment::new();
    if let Some(file) = file {
        figment = figment.merge(Toml::file_exact(file));
    }
    let mut figment = figment.merge(
        Env::prefixed("COULER__")
            .filter(move |k| {
                sections
                    .iter()
                    .any(|s| k.as_str().to_ascii_lowercase().starts_with(s))
            })
            .split("__"),
    );
    for (name, key) in config_env::SHORTHANDS {
        figment = figment.merge(Env::raw().only(&[*name]).map(move |_| (*key).into()));
    }
    figment.extract().map_err(Box::new)
}
