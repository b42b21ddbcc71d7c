//! Webhook triggers end to end, against the real Postgres and Redis: a
//! signed delivery becomes a queued run with webhook provenance, a
//! redelivery returns the same run, and every refusal (401, 404, 413, 422,
//! 429) stores what it should and nothing more. Credential rotation with
//! its grace, and tenant isolation down to row-level security.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

#[path = "hooks/senders.rs"]
mod senders;
use senders::*;

/// A workflow with a required parameter and one limited to some values.
const BUILD: &str = r#"apiVersion: couler.dev/v1alpha1
name: build
parameters:
  - name: sha
  - name: env
    default: dev
    enum: [dev, prod]
steps:
  - name: a
    container:
      image: alpine:3.20
      command: [sh, -c]
      args: ["echo {{workflow.parameters.sha}} {{workflow.parameters.env}}"]
"#;

async fn setup(api: &TestApi, name: &str) -> (String, String) {
    let tenant = api.tenant(name).await;
    let editor = user(&tenant, "editor");
    create_workflow(api, &editor, BUILD).await;
    (tenant, editor)
}

async fn create(api: &TestApi, token: &str, body: Value) -> Value {
    let (status, t) = api.call(Method::POST, BASE, token, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{t}");
    t
}

/// A GitHub push trigger: `sha` from the head commit, `env` fixed, pushes only.
fn github_push() -> Value {
    json!({
        "name": "push", "auth": "hmac_github",
        "parameter_map": {"sha": "/head_commit/id"},
        "parameters": {"env": "prod"},
        "filter": {"headers": {"X-GitHub-Event": "push"}},
    })
}

#[tokio::test]
async fn a_signed_delivery_queues_one_run_and_a_redelivery_returns_it() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let t = create(&api, &editor, github_push()).await;
    let (public_id, secret) = (
        t["public_id"].as_str().unwrap(),
        t["secret"].as_str().unwrap(),
    );
    assert!(
        public_id.starts_with("whk_") && public_id.len() == 26,
        "{t}"
    );
    assert_eq!(t["url"], format!("/v1/hooks/{public_id}"));
    assert_eq!(t["filter"]["headers"], json!({"x-github-event": "push"}));
    // The secret is shown once: never in a read, a list or a log.
    let (_, read_back) = api
        .call(Method::GET, &format!("{BASE}/push"), &editor, None)
        .await;
    assert!(read_back.get("secret").is_none() && !read_back.to_string().contains(secret));

    let body = push("abc123");
    let (status, first) = github(&api, public_id, secret, "d-1", "push", &body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    assert_eq!(
        (first["duplicate"].clone(), first["ignored"].clone()),
        (json!(false), json!(false))
    );
    let run_id = first["run_id"].as_str().unwrap();
    let (_, run) = api
        .call(Method::GET, &format!("/v1/runs/{run_id}"), &editor, None)
        .await;
    assert_eq!(run["status"], "queued", "{run}");
    assert_eq!(run["workflow_name"], "build");
    assert_eq!(run["parameters"], json!({"sha": "abc123", "env": "prod"}));
    assert_eq!(run["trigger"]["kind"], "webhook");
    assert_eq!(run["trigger"]["id"], t["id"]);
    assert_eq!(
        run["created_by"],
        format!("webhook:{}", t["id"].as_str().unwrap())
    );

    // GitHub's redelivery: the same id and body give back the same run.
    let (status, again) = github(&api, public_id, secret, "d-1", "push", &body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{again}");
    assert_eq!(again["run_id"], first["run_id"]);
    assert_eq!(again["duplicate"], true);
    assert_eq!(count_runs(&api, &editor).await, 1);
    // The same id with another body is not a redelivery.
    let (status, body2) = github(&api, public_id, secret, "d-1", "push", &push("def")).await;
    assert_problem(status, &body2, StatusCode::CONFLICT, "delivery_id_reused");
    // Not a push: accepted, ignored, no run.
    let (status, ping) = github(&api, public_id, secret, "d-2", "ping", &body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{ping}");
    assert_eq!(
        (ping["ignored"].clone(), ping["run_id"].clone()),
        (json!(true), Value::Null)
    );
    assert_eq!(count_runs(&api, &editor).await, 1);

    // A delivery refused for its payload, then sent again whole, starts
    // its run and keeps its one row.
    let partial = json!({"ref": "refs/heads/main"}).to_string();
    let (status, _) = github(&api, public_id, secret, "d-3", "push", &partial).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, third) = github(&api, public_id, secret, "d-3", "push", &push("f00")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{third}");
    assert_eq!(count_runs(&api, &editor).await, 2);

    let log = deliveries(&api, &editor, "push").await;
    let by_id = |id: &str| {
        log.as_array()
            .unwrap()
            .iter()
            .find(|d| d["delivery_id"] == id)
            .unwrap()
            .clone()
    };
    let d1 = by_id("d-1");
    assert_eq!(
        (d1["outcome"].clone(), d1["run"].clone()),
        (json!("queued"), json!(run_id))
    );
    assert_eq!(d1["attempts"], 2, "{d1}");
    let d3 = by_id("d-3");
    assert_eq!(
        (d3["outcome"].clone(), d3["run"].clone()),
        (json!("queued"), third["run_id"].clone())
    );
    assert_eq!(
        (d3["attempts"].clone(), d3["detail"].clone()),
        (json!(2), Value::Null)
    );
    let d2 = by_id("d-2");
    assert_eq!(d2["outcome"], "ignored");
    assert_eq!(d2["detail"], "filter: header x-github-event");
    api.stop().await;
}

#[tokio::test]
async fn a_delivery_that_does_not_authenticate_is_401_stores_nothing_and_is_counted() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let t = create(&api, &editor, github_push()).await;
    let (public_id, secret) = (
        t["public_id"].as_str().unwrap(),
        t["secret"].as_str().unwrap(),
    );
    let mismatch = r#"reason="mismatch""#;
    let before = counter(&api, "couler_webhook_unauthenticated_total", mismatch).await;
    let body = push("abc");
    for (key, delivered) in [("not the secret", body.clone()), (secret, push("tampered"))] {
        let signature = format!(
            "sha256={}",
            hex::encode(hmac(key.as_bytes(), &[body.as_bytes()]))
        );
        let r = api
            .client
            .post(api.url(&format!("/v1/hooks/{public_id}")))
            .header("x-hub-signature-256", signature)
            .header("x-github-delivery", "d-1")
            .header("x-github-event", "push")
            .body(delivered)
            .send()
            .await
            .unwrap();
        let (status, problem) = read(r).await;
        assert_problem(
            status,
            &problem,
            StatusCode::UNAUTHORIZED,
            "invalid_signature",
        );
        assert!(!problem.to_string().contains(secret));
    }
    let r = api
        .client
        .post(api.url(&format!("/v1/hooks/{public_id}")))
        .body(body.clone())
        .send()
        .await
        .unwrap();
    let (status, problem) = read(r).await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNAUTHORIZED,
        "invalid_signature",
    );
    let after = counter(&api, "couler_webhook_unauthenticated_total", mismatch).await;
    assert!(after >= before + 2.0, "{before} -> {after}");
    assert!(
        counter(
            &api,
            "couler_webhook_unauthenticated_total",
            r#"reason="missing""#
        )
        .await
            >= 1.0
    );
    // Nothing stored: no run, no delivery row.
    assert_eq!(count_runs(&api, &editor).await, 0);
    assert_eq!(deliveries(&api, &editor, "push").await, json!([]));
    let pool = api.pool().await;
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM webhook_deliveries")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 0);
    pool.close().await;
    api.stop().await;
}

#[tokio::test]
async fn standard_webhooks_verify_within_the_replay_window_and_dedupe_by_message_id() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let t = create(
        &api,
        &editor,
        json!({"name": "events", "auth": "standard_webhooks", "parameter_map": {"sha": "/sha"},
               "replay_window_secs": 300}),
    )
    .await;
    let (public_id, secret) = (
        t["public_id"].as_str().unwrap(),
        t["secret"].as_str().unwrap(),
    );
    assert!(secret.starts_with("whsec_"), "{t}");
    let now = chrono::Utc::now().timestamp();
    let body = r#"{"sha": "f00"}"#;
    let (status, first) = standard(&api, public_id, secret, "msg_1", now, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{first}");
    // A retry of the message (new timestamp, same id) is the same run.
    let (status, retry) = standard(&api, public_id, secret, "msg_1", now + 5, body).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{retry}");
    assert_eq!(
        (retry["run_id"].clone(), retry["duplicate"].clone()),
        (first["run_id"].clone(), json!(true))
    );
    // Outside the window: a replay of a captured message is refused.
    for stale in [now - 400, now + 400] {
        let (status, problem) = standard(&api, public_id, secret, "msg_2", stale, body).await;
        assert_problem(
            status,
            &problem,
            StatusCode::UNAUTHORIZED,
            "invalid_signature",
        );
    }
    assert!(
        counter(
            &api,
            "couler_webhook_unauthenticated_total",
            r#"reason="stale""#
        )
        .await
            >= 2.0
    );
    assert_eq!(count_runs(&api, &editor).await, 1);
    api.stop().await;
}

#[tokio::test]
async fn body_limit_mapped_parameters_and_rate_are_enforced() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let t = create(
        &api,
        &editor,
        json!({"name": "ci", "auth": "bearer", "max_body_bytes": 64, "rate_per_second": 1000,
               "parameter_map": {"sha": "/commit/sha", "env": "/env"}}),
    )
    .await;
    let (public_id, token) = (
        t["public_id"].as_str().unwrap(),
        t["secret"].as_str().unwrap(),
    );
    let (status, bad) = bearer(
        &api,
        public_id,
        "cht_not-the-token",
        r#"{"commit": {"sha": "a"}, "env": "dev"}"#,
    )
    .await;
    assert_problem(status, &bad, StatusCode::UNAUTHORIZED, "invalid_signature");
    let (status, ok) = bearer(
        &api,
        public_id,
        token,
        r#"{"commit": {"sha": "a"}, "env": "dev"}"#,
    )
    .await;
    assert_eq!(status, StatusCode::ACCEPTED, "{ok}");
    assert!(
        ok["delivery_id"].as_str().unwrap().starts_with("auto-"),
        "{ok}"
    );

    // Over the limit, by Content-Length and by a body streamed without one.
    let big = format!(r#"{{"commit": {{"sha": "{}"}}}}"#, "a".repeat(80));
    let (status, problem) = bearer(&api, public_id, token, big.clone()).await;
    assert_problem(
        status,
        &problem,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
    );
    let chunks: Vec<Result<String, std::io::Error>> =
        vec![Ok(big[..40].to_owned()), Ok(big[40..].to_owned())];
    let streamed = reqwest::Body::wrap_stream(futures::stream::iter(chunks));
    let (status, problem) = bearer(&api, public_id, token, streamed).await;
    assert_problem(
        status,
        &problem,
        StatusCode::PAYLOAD_TOO_LARGE,
        "payload_too_large",
    );

    // A mapped value missing, or not one the workflow allows: 422 at the
    // payload's pointer, without echoing the value.
    let (status, problem) = bearer(&api, public_id, token, r#"{"env": "dev"}"#).await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(problem["path"], "/commit/sha", "{problem}");
    assert_eq!(problem["problems"][0]["code"], "missing_field");
    let (status, problem) = bearer(
        &api,
        public_id,
        token,
        r#"{"commit": {"sha": "a"}, "env": "qa-x"}"#,
    )
    .await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(problem["path"], "/env", "{problem}");
    assert!(!problem.to_string().contains("qa-x"), "{problem}");
    let (status, problem) = bearer(
        &api,
        public_id,
        token,
        r#"{"commit": {"sha": {"x": 1}}, "env": "dev"}"#,
    )
    .await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(problem["problems"][0]["code"], "invalid_type", "{problem}");
    let (status, problem) = bearer(&api, public_id, token, "not json").await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "invalid_payload",
    );
    assert_eq!(count_runs(&api, &editor).await, 1);
    let log = deliveries(&api, &editor, "ci").await;
    let outcomes: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["outcome"].as_str().unwrap())
        .collect();
    assert_eq!(
        outcomes.iter().filter(|o| **o == "rejected").count(),
        4,
        "{log}"
    );
    let details: Vec<&str> = log
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|d| d["detail"].as_str())
        .collect();
    assert!(
        details.contains(&"missing_field at /commit/sha"),
        "{details:?}"
    );
    assert!(!log.to_string().contains("qa-x"), "{log}");

    // Its own rate (here one a second): the second delivery at once is 429.
    let slow = create(
        &api,
        &editor,
        json!({"name": "slow", "auth": "bearer", "rate_per_second": 1, "parameters": {"sha": "s"}}),
    )
    .await;
    let (public_id, token) = (
        slow["public_id"].as_str().unwrap(),
        slow["secret"].as_str().unwrap(),
    );
    let mut statuses = Vec::new();
    for _ in 0..3 {
        let r = api
            .client
            .post(api.url(&format!("/v1/hooks/{public_id}")))
            .bearer_auth(token)
            .body("{}")
            .send()
            .await
            .unwrap();
        let retry_after = r.headers().get("retry-after").cloned();
        let (status, body) = read(r).await;
        if status == StatusCode::TOO_MANY_REQUESTS {
            assert_eq!(body["code"], "rate_limited", "{body}");
            assert!(retry_after.is_some(), "429 without Retry-After");
        }
        statuses.push(status);
    }
    assert_eq!(statuses[0], StatusCode::ACCEPTED);
    assert!(
        statuses.contains(&StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    api.stop().await;
}

#[tokio::test]
async fn unknown_disabled_and_deleted_triggers_are_404() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let t = create(&api, &editor, github_push()).await;
    let (public_id, secret) = (
        t["public_id"].as_str().unwrap(),
        t["secret"].as_str().unwrap(),
    );
    let body = push("abc");
    for unknown in ["whk_AAAAAAAAAAAAAAAAAAAAAA", "whk_short", "trg_nothing"] {
        let (status, problem) = github(&api, unknown, secret, "d", "push", &body).await;
        assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    }
    let enable = async |enabled: bool| {
        let path = format!("{BASE}/push");
        let body = json!({ "enabled": enabled });
        let (status, t) = api.call(Method::PATCH, &path, &editor, Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{t}");
    };
    enable(false).await;
    let (status, problem) = github(&api, public_id, secret, "d-1", "push", &body).await;
    assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    enable(true).await;
    let (status, _) = github(&api, public_id, secret, "d-1", "push", &body).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = api
        .call(Method::DELETE, &format!("{BASE}/push"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, problem) = github(&api, public_id, secret, "d-2", "push", &body).await;
    assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    // The run it started stays.
    assert_eq!(count_runs(&api, &editor).await, 1);
    // Deleting the workflow deletes its triggers.
    let t = create(&api, &editor, github_push()).await;
    let (public_id, secret) = (
        t["public_id"].as_str().unwrap(),
        t["secret"].as_str().unwrap(),
    );
    let (status, _) = github(&api, public_id, secret, "d-3", "push", &body).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let (status, _) = api
        .call(Method::DELETE, "/v1/workflows/build", &editor, None)
        .await;
    assert!(status.is_success(), "{status}");
    // Even on a replica still keeping the trigger (this one, for a second).
    let (status, problem) = github(&api, public_id, secret, "d-4", "push", &body).await;
    assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    api.stop().await;
}

#[tokio::test]
async fn a_rotation_keeps_the_old_credential_for_its_grace_only() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let t = create(&api, &editor, github_push()).await;
    let (old_id, first) = (
        t["public_id"].as_str().unwrap().to_owned(),
        t["secret"].as_str().unwrap().to_owned(),
    );
    let rotate = async |body: Value| {
        let (status, r) = api
            .call(
                Method::POST,
                &format!("{BASE}/push/rotate"),
                &editor,
                Some(body),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{r}");
        r
    };
    let r = rotate(json!({"grace_secs": 3600, "new_public_id": true})).await;
    let (new_id, second) = (
        r["public_id"].as_str().unwrap().to_owned(),
        r["secret"].as_str().unwrap().to_owned(),
    );
    assert_ne!((&new_id, &second), (&old_id, &first));
    assert_eq!(r["credential_version"], 2);
    assert_eq!(r["previous_public_id"], json!(old_id));
    assert!(r["previous_valid_until"].is_string(), "{r}");
    // Within the grace: old and new ids, old and new secrets.
    for (n, (id, secret)) in [
        (&old_id, &first),
        (&new_id, &second),
        (&old_id, &second),
        (&new_id, &first),
    ]
    .into_iter()
    .enumerate()
    {
        let (status, body) = github(
            &api,
            id,
            secret,
            &format!("g-{n}"),
            "push",
            &push(&n.to_string()),
        )
        .await;
        assert_eq!(status, StatusCode::ACCEPTED, "{n}: {body}");
    }
    // Without a grace the replaced secret (and id) stop at once.
    let r = rotate(json!({"grace_secs": 0})).await;
    let third = r["secret"].as_str().unwrap().to_owned();
    assert_eq!(r["previous_valid_until"], Value::Null, "{r}");
    assert_eq!(r["public_id"], json!(new_id));
    let (status, problem) = github(&api, &new_id, &second, "h-1", "push", &push("x")).await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNAUTHORIZED,
        "invalid_signature",
    );
    let (status, problem) = github(&api, &old_id, &third, "h-2", "push", &push("y")).await;
    assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = github(&api, &new_id, &third, "h-3", "push", &push("z")).await;
    assert_eq!(status, StatusCode::ACCEPTED, "{body}");
    api.stop().await;
}

#[tokio::test]
async fn invalid_triggers_are_422_with_every_problem_at_its_pointer() {
    let api = TestApi::start().await;
    let (_, editor) = setup(&api, "acme").await;
    let (status, body) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({
                "parameter_map": {"nope": "/x", "env": "/env"},
                "parameters": {"env": "prod"},
                "max_body_bytes": 2 << 20,
                "version": 9,
            })),
        )
        .await;
    // The version is checked first: nothing else can be judged without it.
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let (status, body) = api
        .call(
            Method::POST,
            BASE,
            &editor,
            Some(json!({
                "parameter_map": {"nope": "/x", "env": "/env"},
                "parameters": {"env": "prod"},
                "max_body_bytes": 2 << 20,
            })),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let mut paths: Vec<&str> = body["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "/auth",
            "/max_body_bytes",
            "/name",
            "/parameter_map/nope",
            "/parameters/env",
            "/parameters/sha"
        ],
        "{body}"
    );
    // Names are unique per workflow.
    create(&api, &editor, github_push()).await;
    let (status, problem) = api
        .call(Method::POST, BASE, &editor, Some(github_push()))
        .await;
    assert_problem(status, &problem, StatusCode::CONFLICT, "trigger_exists");
    // HMAC secrets need platform keys: without them, 503; bearer works.
    let bare = TestApi::start_with(|c| c.secrets = Default::default()).await;
    let (_, editor) = setup(&bare, "acme").await;
    let mut body = github_push();
    let (status, problem) = bare
        .call(Method::POST, BASE, &editor, Some(body.clone()))
        .await;
    assert_problem(
        status,
        &problem,
        StatusCode::SERVICE_UNAVAILABLE,
        "hooks_not_configured",
    );
    body["auth"] = json!("bearer");
    create(&bare, &editor, body).await;
    bare.stop().await;
    api.stop().await;
}

#[tokio::test]
async fn another_tenant_can_never_see_or_touch_a_trigger() {
    let api = TestApi::start().await;
    let (tenant_a, editor_a) = setup(&api, "alpha").await;
    let (tenant_b, editor_b) = setup(&api, "beta").await;
    let a = create(&api, &editor_a, github_push()).await;
    let (public_id, secret) = (
        a["public_id"].as_str().unwrap(),
        a["secret"].as_str().unwrap(),
    );
    let (status, _) = github(&api, public_id, secret, "d-1", "push", &push("abc")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let wf_a = a["workflow"].as_str().unwrap();
    let id_a = a["id"].as_str().unwrap();
    // By B's own workflow of the same name, and by A's workflow id; by the
    // trigger's name and id.
    for base in [BASE.to_owned(), format!("/v1/workflows/{wf_a}/triggers")] {
        for trigger in ["push", id_a] {
            let path = format!("{base}/{trigger}");
            for (method, suffix, body) in [
                (Method::GET, "", None),
                (Method::PATCH, "", Some(json!({"enabled": false}))),
                (Method::POST, "/rotate", Some(json!({}))),
                (Method::GET, "/deliveries", None),
                (Method::DELETE, "", None),
            ] {
                let (status, body) = api
                    .call(method.clone(), &format!("{path}{suffix}"), &editor_b, body)
                    .await;
                assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
            }
        }
    }
    let (_, mine) = api.call(Method::GET, BASE, &editor_b, None).await;
    assert_eq!(mine, json!([]));
    // Row-level security too: a tenant transaction of B reads none of A's rows.
    let store = api.store().await;
    let b: couler_store::TenantId = tenant_b.parse().unwrap();
    let mut tx = store.tenant(b).await.unwrap();
    for table in ["webhook_triggers", "webhook_deliveries"] {
        let sql = format!("SELECT count(*) FROM {table}");
        let seen: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(&mut *tx)
            .await
            .unwrap();
        assert_eq!(seen, 0, "{table}");
    }
    let changed = sqlx::query("UPDATE webhook_triggers SET enabled = false")
        .execute(&mut *tx)
        .await
        .unwrap();
    assert_eq!(changed.rows_affected(), 0);
    tx.rollback().await.unwrap();
    // A's trigger is untouched and still starts A's workflow only.
    let (_, still) = api
        .call(Method::GET, &format!("{BASE}/push"), &editor_a, None)
        .await;
    assert_eq!(
        (
            still["enabled"].clone(),
            still["credential_version"].clone()
        ),
        (json!(true), json!(1))
    );
    let (status, run) = github(&api, public_id, secret, "d-2", "push", &push("def")).await;
    assert_eq!(status, StatusCode::ACCEPTED);
    let run_id = run["run_id"].as_str().unwrap();
    let (status, _) = api
        .call(Method::GET, &format!("/v1/runs/{run_id}"), &editor_b, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, seen) = api
        .call(Method::GET, &format!("/v1/runs/{run_id}"), &editor_a, None)
        .await;
    assert_eq!(seen["workflow"]["id"], json!(wf_a), "{seen}");
    let _ = tenant_a;
    api.stop().await;
}
