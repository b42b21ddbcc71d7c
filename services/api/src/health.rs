//! `/healthz` (the process is up), `/readyz` (Postgres answers; Redis state
//! reported, degraded rather than failing) and `/metrics` (Prometheus).

use crate::state::AppState;
use axum::Json;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::IntoResponse;
use serde::{Deserialize, Serialize};
use std::time::Duration;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct Health {
    /// `ok`, `ready`, `degraded` or `unavailable`.
    pub status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub postgres: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redis: Option<String>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(healthz))
        .routes(routes!(readyz))
        .routes(routes!(metrics))
}

/// The process is up.
#[utoipa::path(get, path = "/healthz", tag = "health", security(()), responses((status = 200, body = Health)))]
async fn healthz() -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        postgres: None,
        redis: None,
    })
}

/// Ready to serve: Postgres reachable. Redis being away degrades (no shared
/// rate limits or cache hits) but does not fail readiness.
#[utoipa::path(get, path = "/readyz", tag = "health", security(()),
    responses((status = 200, body = Health), (status = 503, body = Health)))]
async fn readyz(State(state): State<AppState>) -> (StatusCode, Json<Health>) {
    let probe = Duration::from_secs(2);
    let postgres = matches!(
        tokio::time::timeout(probe, state.store.ping()).await,
        Ok(Ok(()))
    );
    let redis = match state.redis.get() {
        Some(mut conn) => {
            let ping_cmd = redis::cmd("PING");
            let ping = ping_cmd.query_async::<String>(&mut conn);
            matches!(
                tokio::time::timeout(Duration::from_millis(state.config.redis.timeout_ms), ping)
                    .await,
                Ok(Ok(_))
            )
        }
        None => false,
    };
    metrics::gauge!("couler_redis_up").set(if redis { 1.0 } else { 0.0 });
    let (code, status) = match (postgres, redis) {
        (false, _) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
        (true, false) => (StatusCode::OK, "degraded"),
        (true, true) => (StatusCode::OK, "ready"),
    };
    let health = Health {
        status: status.into(),
        postgres: Some(if postgres { "ok" } else { "unreachable" }.into()),
        redis: Some(if redis { "ok" } else { "unavailable" }.into()),
    };
    (code, Json(health))
}

/// Prometheus metrics (text exposition format).
#[utoipa::path(get, path = "/metrics", tag = "health", security(()),
    responses((status = 200, content_type = "text/plain", body = String)))]
async fn metrics(State(state): State<AppState>) -> impl IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        state.metrics.render(),
    )
}
