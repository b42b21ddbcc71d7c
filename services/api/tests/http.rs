//! HTTP behaviour shared by every endpoint: problem+json for every error,
//! request ids, limits, rate limiting (shared and degraded), health.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn framework_errors_are_problem_json_with_request_ids() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");

    let r = api
        .request(Method::GET, "/v1/nowhere", &editor)
        .send()
        .await
        .unwrap();
    let request_id = r.headers()["x-request-id"].to_str().unwrap().to_owned();
    let (status, body) = read(r).await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(body["request_id"], request_id.as_str());

    let (status, body) = api.call(Method::DELETE, "/v1/runs", &editor, None).await;
    assert_problem(
        status,
        &body,
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
    );

    let r = api
        .request(Method::POST, "/v1/workflows", &editor)
        .header("content-type", "text/plain")
        .body(DIAMOND)
        .send()
        .await
        .unwrap();
    let (status, body) = read(r).await;
    assert_problem(
        status,
        &body,
        StatusCode::UNSUPPORTED_MEDIA_TYPE,
        "unsupported_media_type",
    );

    // A query parameter that does not parse names the parameter.
    for (query, path) in [("limit=abc", "/limit"), ("status=sleeping", "/status")] {
        let (status, body) = api
            .call(Method::GET, &format!("/v1/runs?{query}"), &editor, None)
            .await;
        assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_query");
        assert_eq!(body["path"], path, "{body}");
    }

    // A caller's request id is echoed.
    let r = api
        .request(Method::GET, "/v1/workflows", &editor)
        .header("x-request-id", "req-from-client-42")
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["x-request-id"], "req-from-client-42");
    api.stop().await;
}

#[tokio::test]
async fn bodies_over_the_limit_get_413() {
    let api = TestApi::start_with(|c| c.http.body_limit_bytes = 2048).await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let big = format!("{DIAMOND}\n# {}\n", "x".repeat(4096));
    let r = api
        .request(Method::POST, "/v1/workflows", &editor)
        .header("content-type", "application/yaml")
        .body(big)
        .send()
        .await
        .unwrap();
    let (status, body) = read(r).await;
    assert_problem(
        status,
        &body,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
    );
    // The service is still fine afterwards.
    create_workflow(&api, &editor, DIAMOND).await;
    api.stop().await;
}

async fn burst(api: &TestApi, token: &str, n: usize) -> Vec<reqwest::Response> {
    let calls = (0..n).map(|_| api.request(Method::GET, "/v1/workflows", token).send());
    futures::future::join_all(calls)
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect()
}

#[tokio::test]
async fn rate_limits_are_shared_through_redis() {
    let api = TestApi::start().await;
    let tenant = api.tenant_with("slow", json!({"quotas": {"max_concurrent_runs": 1, "max_queued_runs": 10, "requests_per_second": 3}})).await;
    let viewer = user(&tenant, "viewer");
    // A second replica sharing the same Redis prefix and database.
    let responses = burst(&api, &viewer, 12).await;
    let limited: Vec<_> = responses
        .into_iter()
        .filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS)
        .collect();
    assert!(
        limited.len() >= 6,
        "only {} of 12 requests were limited at 3 rps",
        limited.len()
    );
    let r = limited.into_iter().next().unwrap();
    let retry_after: u64 = r.headers()["retry-after"]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((1..=2).contains(&retry_after));
    let (status, body) = read(r).await;
    assert_problem(status, &body, StatusCode::TOO_MANY_REQUESTS, "rate_limited");
    // Other tenants are not affected.
    let other = api.tenant("busy").await;
    let (status, _) = api
        .call(Method::GET, "/v1/workflows", &user(&other, "viewer"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    api.stop().await;
}

#[tokio::test]
async fn without_redis_the_service_degrades_but_serves_and_still_limits() {
    let api = TestApi::start_with(|c| {
        c.redis.url = secrecy::SecretString::from("redis://127.0.0.1:1");
        c.redis.timeout_ms = 50;
    })
    .await;
    let (status, health) = read(api.client.get(api.url("/readyz")).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{health}");
    assert_eq!(health["status"], "degraded");
    assert_eq!(health["redis"], "unavailable");
    assert_eq!(health["postgres"], "ok");

    let tenant = api.tenant_with("slow", json!({"quotas": {"max_concurrent_runs": 1, "max_queued_runs": 10, "requests_per_second": 3}})).await;
    let viewer = user(&tenant, "viewer");
    let responses = burst(&api, &viewer, 12).await;
    let ok = responses
        .iter()
        .filter(|r| r.status() == StatusCode::OK)
        .count();
    let limited = responses
        .iter()
        .filter(|r| r.status() == StatusCode::TOO_MANY_REQUESTS)
        .count();
    assert_eq!(ok + limited, 12);
    assert!(ok >= 1 && limited >= 6, "ok={ok} limited={limited}");
    api.stop().await;
}

#[tokio::test]
async fn health_and_metrics() {
    let api = TestApi::start().await;
    let (status, health) = read(api.client.get(api.url("/healthz")).send().await.unwrap()).await;
    assert_eq!(
        (status, health["status"].as_str()),
        (StatusCode::OK, Some("ok"))
    );
    let (status, ready) = read(api.client.get(api.url("/readyz")).send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK);
    // Redis connects in the background; readiness reports it once up.
    let mut redis_ok = ready["redis"] == "ok";
    for _ in 0..50 {
        if redis_ok {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        let (_, ready) = read(api.client.get(api.url("/readyz")).send().await.unwrap()).await;
        redis_ok = ready["redis"] == "ok" && ready["status"] == "ready";
    }
    assert!(redis_ok);

    let tenant = api.tenant("acme").await;
    api.call(Method::GET, "/v1/workflows", &user(&tenant, "viewer"), None)
        .await;
    let text = api
        .client
        .get(api.url("/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(text.contains("http_requests_total"), "{text}");
    assert!(text.contains("route=\"/v1/workflows\""), "{text}");
    assert!(
        text.contains("http_request_duration_seconds_bucket"),
        "{text}"
    );
    api.stop().await;
}

#[tokio::test]
async fn cors_allows_configured_portals_only() {
    let api =
        TestApi::start_with(|c| c.http.cors_origins = vec!["https://portal.example".into()]).await;
    let preflight = |origin: &'static str| {
        api.client
            .request(Method::OPTIONS, api.url("/v1/workflows"))
            .header("origin", origin)
            .header("access-control-request-method", "POST")
            .send()
    };
    let allowed = preflight("https://portal.example").await.unwrap();
    assert_eq!(
        allowed.headers()["access-control-allow-origin"],
        "https://portal.example"
    );
    let denied = preflight("https://evil.example").await.unwrap();
    assert!(
        denied
            .headers()
            .get("access-control-allow-origin")
            .is_none()
    );
    api.stop().await;
}

/// Captures everything the service logs (at trace level) in this process.
fn captured_logs() -> &'static std::sync::Mutex<Vec<u8>> {
    static LOGS: std::sync::OnceLock<&'static std::sync::Mutex<Vec<u8>>> =
        std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer: &'static std::sync::Mutex<Vec<u8>> =
            Box::leak(Box::new(std::sync::Mutex::new(Vec::new())));
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || Writer(buffer))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        buffer
    })
}

struct Writer(&'static std::sync::Mutex<Vec<u8>>);

impl std::io::Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn credentials_never_reach_logs_or_responses() {
    let logs = captured_logs();
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let (_, key) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin,
            Some(json!({"name": "ci", "roles": ["editor"]})),
        )
        .await;
    let secret = key["secret"].as_str().unwrap().to_owned();
    let (status, listed) = api.call(Method::GET, "/v1/api-keys", &admin, None).await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        !listed.to_string().contains(&secret),
        "a listed key shows its secret"
    );
    let r = api
        .client
        .get(api.url("/v1/workflows"))
        .header("x-api-key", &secret)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    let bad = api
        .client
        .get(api.url("/v1/workflows"))
        .bearer_auth(format!("{secret}x"))
        .send()
        .await
        .unwrap();
    let (status, body) = read(bad).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert!(!body.to_string().contains(&secret));
    api.stop().await;

    let text = String::from_utf8(logs.lock().unwrap().clone()).unwrap();
    assert!(text.contains("request"), "nothing was logged");
    assert!(!text.contains(&secret), "an API key reached the logs");
    assert!(!text.contains(&admin), "a bearer token reached the logs");
    assert!(!text.contains(SECRET), "the JWT secret reached the logs");
}

#[tokio::test]
async fn nul_characters_and_missing_fields_are_refused_where_they_stand() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let editor = user(&tenant, "editor");

    // In the URL: the path, and a query parameter by name.
    let (status, body) = api
        .call(Method::GET, "/v1/workflows/a%00b", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_text");
    let (status, body) = api
        .call(Method::GET, "/v1/runs?label=team%3Da%00", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_text");
    assert_eq!(body["path"], "/label", "{body}");

    // In a JSON body, at its pointer.
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin,
            Some(json!({"name": "ci\u{0}", "roles": ["viewer"]})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_text");
    assert_eq!(body["path"], "/name", "{body}");

    // In a workflow document, JSON or YAML: a validation problem there.
    let mut doc: serde_json::Value = serde_saphyr::from_str(DIAMOND).unwrap();
    doc["steps"][1]["container"]["args"] = json!(["ok", "b\u{0}"]);
    let (status, body) = api
        .call(Method::POST, "/v1/workflows", &editor, Some(doc))
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["path"], "/steps/1/container/args/1", "{body}");
    let yaml = DIAMOND.replacen("name: diamond", "name: \"dia\\0mond\"", 1);
    assert_ne!(yaml, DIAMOND);
    let r = api
        .request(Method::POST, "/v1/workflows", &editor)
        .header("content-type", "application/yaml")
        .body(yaml)
        .send()
        .await
        .unwrap();
    let (status, body) = read(r).await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["path"], "/name", "{body}");

    // A required field that is missing is pointed at, not its parent.
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin,
            Some(json!({"roles": ["viewer"]})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    assert_eq!(body["path"], "/name", "{body}");
    let (status, body) = api
        .call(Method::GET, "/v1/workflows/diamond/compile", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_query");
    assert_eq!(body["path"], "/engine", "{body}");

    // Text after the JSON is a syntax error, which says where it is.
    let r = api
        .request(Method::POST, "/v1/api-keys", &admin)
        .header("content-type", "application/json")
        .body(r#"{"name": "ci", "roles": ["viewer"]} junk"#)
        .send()
        .await
        .unwrap();
    let (status, body) = read(r).await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    assert!(
        body["detail"].as_str().unwrap().contains("line 1 column"),
        "{body}"
    );

    // No body at all: as `{}`, so the missing field is named.
    let r = api
        .request(Method::POST, "/v1/api-keys", &admin)
        .send()
        .await
        .unwrap();
    let (status, body) = read(r).await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    assert_eq!(body["path"], "/name", "{body}");

    // Pointers escape what they name (RFC 6901).
    create_workflow(&api, &editor, DIAMOND).await;

    // Versions count from 1: 0 is wrong input, not a missing version.
    let (status, body) = api
        .call(
            Method::GET,
            "/v1/workflows/diamond?version=0",
            &editor,
            None,
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_query");
    assert_eq!(body["path"], "/version", "{body}");
    let run = json!({"workflow": "diamond", "version": 0});
    let (status, body) = api.call(Method::POST, "/v1/runs", &editor, Some(run)).await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    assert_eq!(body["path"], "/version", "{body}");
    let (status, body) = api
        .call(
            Method::GET,
            "/v1/workflows/diamond?version=1",
            &editor,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let run = json!({"workflow": "diamond", "labels": {"example.com/team": "a b"}});
    let (status, body) = api.call(Method::POST, "/v1/runs", &editor, Some(run)).await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_label");
    assert_eq!(body["path"], "/labels/example.com~1team", "{body}");
    api.stop().await;
}
