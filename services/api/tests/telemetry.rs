//! Tracing: a caller's W3C trace continues through the API, and a run
//! stores the context so the scheduler's work joins the same trace.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn runs_carry_the_callers_trace() {
    // A quiet log must not break trace propagation.
    let config = couler_telemetry::TelemetryConfig {
        log_filter: "warn".into(),
        ..Default::default()
    };
    let _guard = couler_telemetry::init(&config, "couler-api-test").unwrap();
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;

    let trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
    let r = api
        .request(Method::POST, "/v1/runs", &editor)
        .header("traceparent", format!("00-{trace_id}-00f067aa0ba902b7-01"))
        .json(&json!({"workflow": "diamond"}))
        .send()
        .await
        .unwrap();
    let (status, run) = read(r).await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    let run_id: couler_store::RunId = run["id"].as_str().unwrap().parse().unwrap();

    let pool = api.pool().await;
    let stored: serde_json::Value =
        sqlx::query_scalar("SELECT trace_context FROM runs WHERE id = $1")
            .bind(run_id.0)
            .fetch_one(&pool)
            .await
            .unwrap();
    let traceparent = stored["traceparent"]
        .as_str()
        .unwrap_or_else(|| panic!("no traceparent in {stored}"));
    assert!(
        traceparent.starts_with(&format!("00-{trace_id}-")),
        "{traceparent}"
    );
    pool.close().await;
    api.stop().await;
}
