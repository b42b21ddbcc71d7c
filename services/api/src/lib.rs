//! `couler-api`: the HTTP front door. `main.rs` parses flags and calls
//! [`run`]; tests call [`serve`] with their own config and listener.

pub mod admin;
pub mod api_keys;
pub mod app;
pub mod auth;
pub mod batch;
pub mod body;
pub mod cache;
pub mod config;
pub mod error;
pub mod events;
pub mod fresh;
pub mod generations;
pub mod graph;
pub mod health;
pub mod hooks;
pub mod imports;
pub mod llm_usage;
pub mod logs;
pub mod me;
pub mod openapi;
pub mod plans;
pub mod portal;
pub mod quota;
pub mod ratelimit;
pub mod run_secrets;
pub mod runs;
pub mod schedules;
pub mod secrets;
pub mod state;
pub mod step_library;
pub mod tenants;
pub mod wire;
pub mod workflows;

use axum::serve::ListenerExt;
use config::Config;
use state::AppState;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// Serves the API on `listener` until `shutdown` fires, then drains.
pub async fn serve(
    config: Config,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let state = AppState::build(config, shutdown.clone()).await?;
    let app = app::app(state);
    tracing::info!(addr = %listener.local_addr()?, "couler-api listening");
    // Event streams write small frames: with Nagle on, one written while
    // the last is unacknowledged waits for the ACK, which a client may
    // delay by up to 40 ms.
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!(error = %e, "could not set TCP_NODELAY");
        }
    });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await?;
    Ok(())
}

/// Runs the API with `config` until SIGTERM or Ctrl-C.
pub async fn run(config: Config) -> anyhow::Result<()> {
    let listener = TcpListener::bind(config.http.addr).await?;
    let shutdown = CancellationToken::new();
    tokio::spawn(couler_telemetry::shutdown_on_signal(shutdown.clone()));
    serve(config, listener, shutdown).await
}
