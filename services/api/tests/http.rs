//! HTTP behaviour shared by every endpoint: problem+json for every error,
//! request ids, limits, rate limiting (shared and degraded), health.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

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

    let (status, body) = send_text(
        &api,
        Method::POST,
        "/v1/workflows",
        &editor,
        "text/plain",
        DIAMOND,
    )
    .await;
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
    let (status, body) = post_workflow(&api, &editor, big.clone()).await;
    assert_problem(
        status,
        &body,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
    );
    // A caller without the role is refused first.
    let (status, body) = post_workflow(&api, &user(&tenant, "viewer"), big).await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    // The service is still fine afterwards.
    create_workflow(&api, &editor, DIAMOND).await;
    api.stop().await;
}

#[tokio::test]
async fn a_caller_without_the_role_gets_403_whatever_the_body() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let viewer = user(&tenant, "viewer");
    // Of a media type the API does not read, not a workflow, not JSON (or
    // too large, above): the role is checked first, and none of it is told.
    for (path, content_type, body) in [
        ("/v1/workflows", "text/plain", DIAMOND.to_owned()),
        ("/v1/workflows", "application/yaml", "steps: [".to_owned()),
        ("/v1/runs", "application/json", "{not json".to_owned()),
    ] {
        let (status, body) = send_text(&api, Method::POST, path, &viewer, content_type, body).await;
        assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    }
    // A caller with the role is told what is wrong with the body.
    let editor = user(&tenant, "editor");
    let (status, body) = send_text(
        &api,
        Method::POST,
        "/v1/runs",
        &editor,
        "application/json",
        "{not json",
    )
    .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
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
async fn wrong_input_is_refused_at_its_pointer() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let mut nul_arg: Value = serde_saphyr::from_str(DIAMOND).unwrap();
    nul_arg["steps"][1]["container"]["args"] = json!(["ok", "b\u{0}"]);
    let key = |name: &str| json!({"name": name, "roles": ["viewer"]});
    let (get, post) = (Method::GET, Method::POST);
    let cases = [
        // A NUL character: in the URL's path, a query parameter, a JSON
        // body, a workflow document (a validation problem there).
        (
            get.clone(),
            "/v1/workflows/a%00b",
            None,
            400,
            "invalid_text",
            "",
        ),
        (
            get.clone(),
            "/v1/runs?label=team%3Da%00",
            None,
            400,
            "invalid_text",
            "/label",
        ),
        (
            post.clone(),
            "/v1/api-keys",
            Some(key("ci\u{0}")),
            400,
            "invalid_text",
            "/name",
        ),
        (
            post.clone(),
            "/v1/workflows",
            Some(nul_arg),
            422,
            "validation_failed",
            "/steps/1/container/args/1",
        ),
        // A required field that is missing is pointed at, not its parent.
        (
            post.clone(),
            "/v1/api-keys",
            Some(json!({"roles": ["viewer"]})),
            400,
            "invalid_body",
            "/name",
        ),
        (
            get.clone(),
            "/v1/workflows/diamond/compile",
            None,
            400,
            "invalid_query",
            "/engine",
        ),
        // Versions count from 1: 0 is wrong input, not a missing version.
        (
            get.clone(),
            "/v1/workflows/diamond?version=0",
            None,
            400,
            "invalid_query",
            "/version",
        ),
        (
            post.clone(),
            "/v1/runs",
            Some(json!({"workflow": "diamond", "version": 0})),
            400,
            "invalid_body",
            "/version",
        ),
        (
            get.clone(),
            "/v1/runs/00000000-0000-4000-8000-000000000000/logs?step=a&attempt=0",
            None,
            400,
            "invalid_query",
            "/attempt",
        ),
        (
            get.clone(),
            "/v1/runs/00000000-0000-4000-8000-000000000000/logs?step=a&attempt=1&attempt=2",
            None,
            400,
            "invalid_query",
            "/attempt",
        ),
        // A stored workflow or an inline one, not both.
        (
            post.clone(),
            "/v1/runs",
            Some(
                json!({"workflow": "diamond", "ir": serde_saphyr::from_str::<Value>(DIAMOND).unwrap()}),
            ),
            400,
            "conflicting_fields",
            "/ir",
        ),
        (
            post.clone(),
            "/v1/cache/explain",
            Some(json!({"workflow": "diamond", "ir": {}})),
            400,
            "conflicting_fields",
            "/ir",
        ),
        (
            post.clone(),
            "/v1/plans",
            Some(json!({"ir": {}, "version": 1})),
            400,
            "conflicting_fields",
            "/version",
        ),
        // A body is an object, not its fields by position.
        (
            Method::PUT,
            "/v1/quotas",
            Some(json!([10, 1000, 4000])),
            400,
            "invalid_body",
            "",
        ),
        // A reference in a body or query that names nothing is a 404 at it.
        (
            post.clone(),
            "/v1/runs",
            Some(json!({"workflow": "nope"})),
            404,
            "not_found",
            "/workflow",
        ),
        (
            post.clone(),
            "/v1/runs",
            Some(json!({"workflow": "diamond", "version": 9})),
            404,
            "not_found",
            "/version",
        ),
        (
            post.clone(),
            "/v1/cache/explain",
            Some(json!({"workflow": "nope"})),
            404,
            "not_found",
            "/workflow",
        ),
        (
            post.clone(),
            "/v1/plans",
            Some(json!({"workflow": "diamond", "version": 9})),
            404,
            "not_found",
            "/version",
        ),
        (
            post.clone(),
            "/v1/cache/invalidate",
            Some(json!({"workflow": "wf_0190f0e0aaaa7bbb8ccc000000000000", "step": "a"})),
            404,
            "not_found",
            "/workflow",
        ),
        (
            get.clone(),
            "/v1/workflows/diamond?version=9",
            None,
            404,
            "not_found",
            "/version",
        ),
        (
            get.clone(),
            "/v1/workflows/diamond/compile?engine=argo&version=9",
            None,
            404,
            "not_found",
            "/version",
        ),
        // A field or a query parameter the API does not have (a typo
        // would otherwise go unnoticed: an unfiltered list).
        (
            get.clone(),
            "/v1/runs?stauts=failed",
            None,
            400,
            "invalid_query",
            "/stauts",
        ),
        (
            post.clone(),
            "/v1/runs",
            Some(json!({"workflow": "diamond", "paramters": {}})),
            400,
            "invalid_body",
            "/paramters",
        ),
        (
            get.clone(),
            "/v1/runs/00000000-0000-4000-8000-000000000000/logs?step=a&attempt=two",
            None,
            400,
            "invalid_query",
            "/attempt",
        ),
        // Pointers escape what they name (RFC 6901).
        (
            post.clone(),
            "/v1/runs",
            Some(json!({"workflow": "diamond", "labels": {"example.com/team": "a b"}})),
            400,
            "invalid_label",
            "/labels/example.com~1team",
        ),
    ];
    for (method, path, body, status, code, pointer) in cases {
        let (got, answer) = api.call(method, path, &admin, body).await;
        let status = StatusCode::from_u16(status).unwrap();
        assert_problem(got, &answer, status, code);
        assert_eq!(answer["path"], pointer, "{path}: {answer}");
    }
    // Counted values say what they count, from a query or a body alike.
    for (method, path, body) in [
        (
            get.clone(),
            "/v1/runs/00000000-0000-4000-8000-000000000000/logs?step=a&attempt=two",
            None,
        ),
        (
            post.clone(),
            "/v1/runs",
            Some(json!({"workflow": "diamond", "version": "two"})),
        ),
    ] {
        let (_, answer) = api.call(method, path, &admin, body).await;
        let detail = answer["detail"].as_str().unwrap();
        assert!(
            detail.starts_with("\"two\" is not a ") && detail.ends_with("count from 1"),
            "{path}: {answer}"
        );
    }
    let (_, answer) = api
        .call(get.clone(), "/v1/runs?stauts=failed", &admin, None)
        .await;
    assert!(
        answer["detail"]
            .as_str()
            .unwrap()
            .contains("expected one of"),
        "{answer}"
    );
    let (status, body) = api
        .call(
            Method::GET,
            "/v1/workflows/diamond?version=1",
            &editor,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // As text: YAML with an escaped NUL; text after a JSON document (a
    // syntax error, which says where); no body at all (read as `{}`).
    let yaml = DIAMOND.replacen("name: diamond", "name: \"dia\\0mond\"", 1);
    assert_ne!(yaml, DIAMOND);
    let junk = r#"{"name": "ci", "roles": ["viewer"]} junk"#;
    for (path, media, text, status, code, pointer) in [
        (
            "/v1/workflows",
            "application/yaml",
            yaml.as_str(),
            422,
            "validation_failed",
            Some("/name"),
        ),
        (
            "/v1/api-keys",
            "application/json",
            junk,
            400,
            "invalid_body",
            None,
        ),
        (
            "/v1/api-keys",
            "application/json",
            "",
            400,
            "invalid_body",
            Some("/name"),
        ),
        (
            "/v1/api-keys",
            "application/yaml",
            "- ci\n- [viewer]\n",
            400,
            "invalid_body",
            Some(""),
        ),
    ] {
        let (got, answer) = send_text(&api, Method::POST, path, &admin, media, text).await;
        assert_problem(got, &answer, StatusCode::from_u16(status).unwrap(), code);
        match pointer {
            Some(pointer) => assert_eq!(answer["path"], pointer, "{answer}"),
            None => assert!(
                answer["detail"].as_str().unwrap().contains("line 1 column"),
                "{answer}"
            ),
        }
    }
    api.stop().await;
}
