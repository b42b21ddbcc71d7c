//! Runs over HTTP: create from a workflow or inline IR, parameters,
//! idempotency, listing, cancel and retry, the queue quota.

mod common;
use common::*;
use couler_store::{RunStatus, TenantId};
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// An editor of a new tenant that stores the market-trend example (and
/// has the secret it reads).
async fn market_trend_editor(api: &TestApi) -> String {
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let (status, body) = api
        .call(
            Method::PUT,
            "/v1/secrets/market-data",
            &user(&tenant, "admin"),
            Some(json!({"data": {"api-key": "k"}})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    create_workflow(
        api,
        &editor,
        include_str!("../../../examples/market-trend.yaml"),
    )
    .await;
    editor
}

#[tokio::test]
async fn parameters_are_checked_and_defaulted() {
    let api = TestApi::start().await;
    let editor = market_trend_editor(&api).await;
    let (status, run) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"workflow": "market-trend", "parameters": {"days": 30}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    assert_eq!(run["parameters"], json!({"market": "NASDAQ", "days": "30"}));
    let (status, body) = api
        .call(Method::POST, "/v1/runs", &editor, Some(json!({"workflow": "market-trend", "parameters": {"market": "LSE", "colour": "red"}})))
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let paths: Vec<&str> = body["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(
        paths.contains(&"/parameters/market") && paths.contains(&"/parameters/colour"),
        "{body}"
    );
    api.stop().await;
}

/// Creates arriving together are looked up and inserted in one batch; a bad
/// one (unknown workflow or version, bad parameters) fails alone.
#[tokio::test]
async fn concurrent_creates_each_get_their_own_answer() {
    let api = TestApi::start().await;
    let editor = market_trend_editor(&api).await;
    let requests = [
        (
            json!({"workflow": "market-trend", "parameters": {"days": 7}}),
            StatusCode::CREATED,
        ),
        (json!({"workflow": "nope"}), StatusCode::NOT_FOUND),
        (
            json!({"workflow": "market-trend", "version": 9}),
            StatusCode::NOT_FOUND,
        ),
        (
            json!({"workflow": "market-trend", "parameters": {"colour": "red"}}),
            StatusCode::UNPROCESSABLE_ENTITY,
        ),
        (
            json!({"workflow": "market-trend", "version": 1}),
            StatusCode::CREATED,
        ),
    ];
    let answers = futures::future::join_all((0..8).flat_map(|_| {
        requests
            .iter()
            .map(|(body, _)| api.call(Method::POST, "/v1/runs", &editor, Some(body.clone())))
    }))
    .await;
    for (i, (status, body)) in answers.iter().enumerate() {
        let (request, expected) = &requests[i % requests.len()];
        assert_eq!(*status, *expected, "{request} -> {body}");
    }
    let (_, body) = &answers[2];
    assert!(
        body["detail"].as_str().unwrap().contains("version 9"),
        "{body}"
    );
    let (_, body) = &answers[1];
    assert!(
        body["detail"].as_str().unwrap().contains("\"nope\""),
        "{body}"
    );
    let (_, body) = &answers[3];
    assert_eq!(body["problems"][0]["path"], "/parameters/colour", "{body}");
    let (_, list) = api
        .call(Method::GET, "/v1/runs?limit=100", &editor, None)
        .await;
    assert_eq!(list["items"].as_array().unwrap().len(), 16, "{list}");
    api.stop().await;
}

#[tokio::test]
async fn inline_ir_runs_and_bad_requests() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let ir = json!({"apiVersion": "couler.dev/v1alpha1", "name": "inline", "parameters": [{"name": "n"}],
                    "steps": [{"name": "s", "container": {"image": "alpine", "args": ["{{workflow.parameters.n}}"]}}]});
    let (status, run) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"ir": ir, "parameters": {"n": 1}, "priority": 5, "labels": {"team": "a"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    assert!(run["workflow"].is_null());
    assert_eq!(run["workflow_name"], "inline");
    assert_eq!(run["priority"], 5);

    // Missing required parameter.
    let (status, body) = api
        .call(Method::POST, "/v1/runs", &editor, Some(json!({"ir": ir})))
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["problems"][0]["path"], "/parameters/n");
    // Invalid inline IR: paths point into `ir`.
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"ir": {"apiVersion": "couler.dev/v1alpha1", "name": "x", "steps": []}})),
        )
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["problems"][0]["path"], "/ir/steps");
    // Neither or both sources.
    let (status, body) = api
        .call(Method::POST, "/v1/runs", &editor, Some(json!({})))
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "missing_workflow");
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"workflow": "nope"})),
        )
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"ir": ir, "priority": 5000})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_priority");
    // Unknown fields in the request are named with their path.
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"ir": ir, "prio": 1})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_body");
    assert!(body["detail"].as_str().unwrap().contains("prio"), "{body}");
    api.stop().await;
}

#[tokio::test]
async fn idempotency_keys_return_the_same_run() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let create = |body: Value, key: &'static str| {
        let req = api
            .request(Method::POST, "/v1/runs", &editor)
            .header("idempotency-key", key)
            .json(&body);
        async move { read(req.send().await.unwrap()).await }
    };
    let (s1, first) = create(
        json!({"workflow": "diamond", "parameters": {"message": "a"}}),
        "key-1",
    )
    .await;
    let (s2, second) = create(
        json!({"workflow": "diamond", "parameters": {"message": "a"}}),
        "key-1",
    )
    .await;
    assert_eq!((s1, s2), (StatusCode::CREATED, StatusCode::OK));
    assert_eq!(first["id"], second["id"]);
    let (s3, body) = create(
        json!({"workflow": "diamond", "parameters": {"message": "b"}}),
        "key-1",
    )
    .await;
    assert_problem(s3, &body, StatusCode::CONFLICT, "idempotency_key_reused");
    // Visible ASCII only, as documented.
    let (s4, body) = create(json!({"workflow": "diamond"}), "has space").await;
    assert_problem(
        s4,
        &body,
        StatusCode::BAD_REQUEST,
        "invalid_idempotency_key",
    );

    // Concurrent retries of one request create exactly one run.
    let attempts = (0..8).map(|_| create(json!({"workflow": "diamond"}), "key-2"));
    let results = futures::future::join_all(attempts).await;
    let ids: std::collections::HashSet<String> = results
        .iter()
        .filter(|(s, _)| s.is_success())
        .map(|(_, b)| b["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids.len(), 1, "{results:?}");
    assert_eq!(
        results
            .iter()
            .filter(|(s, _)| *s == StatusCode::CREATED)
            .count(),
        1,
        "{results:?}"
    );
    let (_, list) = api.call(Method::GET, "/v1/runs", &editor, None).await;
    assert_eq!(list["items"].as_array().unwrap().len(), 2);
    api.stop().await;
}

#[tokio::test]
async fn listing_filters_runs() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let wf = create_workflow(&api, &editor, DIAMOND).await;
    let mut ids = Vec::new();
    for i in 0..5 {
        let (_, run) = api
            .call(Method::POST, "/v1/runs", &editor, Some(json!({"workflow": "diamond", "labels": {"batch": if i < 2 { "x" } else { "y" }}})))
            .await;
        ids.push(run["id"].as_str().unwrap().to_owned());
    }
    api.call(
        Method::POST,
        &format!("/v1/runs/{}/cancel", ids[0]),
        &editor,
        None,
    )
    .await;
    let count = |q: &'static str| {
        let editor = editor.clone();
        let api = &api;
        async move {
            let (status, body) = api
                .call(Method::GET, &format!("/v1/runs?{q}"), &editor, None)
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
            body["items"].as_array().unwrap().len()
        }
    };
    assert_eq!(count("status=cancelled").await, 1);
    assert_eq!(count("status=queued").await, 4);
    assert_eq!(count("label=batch=x").await, 2);
    let by_wf = format!("workflow={}", wf["id"].as_str().unwrap());
    let (_, body) = api
        .call(Method::GET, &format!("/v1/runs?{by_wf}"), &editor, None)
        .await;
    assert_eq!(body["items"].as_array().unwrap().len(), 5);
    assert_eq!(count("workflow=diamond").await, 5);
    assert_eq!(count("workflow=no-such-workflow").await, 0);
    assert_eq!(count("created_before=2000-01-01T00:00:00Z").await, 0);
    assert_eq!(count("created_after=2000-01-01T00:00:00Z&limit=2").await, 2);
    let (status, body) = api
        .call(Method::GET, "/v1/runs?status=bogus", &editor, None)
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{body}");
    assert_eq!(body["code"], "invalid_query");
    assert_eq!(body["path"], "/status");

    // A deleted workflow's runs stay listed by its id.
    let (status, body) = api
        .call(Method::DELETE, "/v1/workflows/diamond", &editor, None)
        .await;
    assert!(status.is_success(), "{body}");
    let (_, body) = api
        .call(Method::GET, &format!("/v1/runs?{by_wf}"), &editor, None)
        .await;
    assert_eq!(body["items"].as_array().unwrap().len(), 5);
    api.stop().await;
}

#[tokio::test]
async fn cancel_and_retry_follow_the_lifecycle() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let new_run = || run_diamond(&api, &editor);
    // Queued: cancel ends it at once; a second cancel conflicts; retry requeues.
    let a = new_run().await;
    let (status, run) = api
        .call(Method::POST, &format!("/v1/runs/{a}/cancel"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(run["status"], "cancelled");
    assert!(run["finished_at"].is_string());
    let (status, body) = api
        .call(Method::POST, &format!("/v1/runs/{a}/cancel"), &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::CONFLICT, "run_finished");
    let (status, run) = api
        .call(Method::POST, &format!("/v1/runs/{a}/retry"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{run}");
    assert_eq!(
        (run["status"].as_str(), run["attempt"].as_i64()),
        (Some("queued"), Some(2))
    );

    // Running: cancel is a request the scheduler carries out.
    let b = new_run().await;
    api.advance(&tenant, &b, &[RunStatus::Planning, RunStatus::Running])
        .await;
    let (_, run) = api
        .call(Method::POST, &format!("/v1/runs/{b}/cancel"), &editor, None)
        .await;
    assert_eq!(
        (run["status"].as_str(), run["cancel_requested"].as_bool()),
        (Some("running"), Some(true))
    );

    // Queued, planning or running: nothing to retry yet.
    let e = new_run().await;
    for step in [None, Some(RunStatus::Planning)] {
        if let Some(status) = step {
            api.advance(&tenant, &e, &[status]).await;
        }
        for id in [&e, &b] {
            let (status, body) = api
                .call(Method::POST, &format!("/v1/runs/{id}/retry"), &editor, None)
                .await;
            assert_problem(status, &body, StatusCode::CONFLICT, "run_not_retryable");
            assert!(
                body["detail"]
                    .as_str()
                    .unwrap()
                    .contains("only a failed or cancelled run"),
                "{body}"
            );
        }
    }

    // Succeeded: nothing to retry or cancel.
    let c = new_run().await;
    api.advance(
        &tenant,
        &c,
        &[
            RunStatus::Planning,
            RunStatus::Running,
            RunStatus::Succeeded,
        ],
    )
    .await;
    let (status, body) = api
        .call(Method::POST, &format!("/v1/runs/{c}/retry"), &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::CONFLICT, "run_not_retryable");

    // Failed: retry keeps succeeded steps and resets failed ones.
    let d = new_run().await;
    api.advance(
        &tenant,
        &d,
        &[RunStatus::Planning, RunStatus::Running, RunStatus::Failed],
    )
    .await;
    let store = api.store().await;
    let t: TenantId = tenant.parse().unwrap();
    let run_uuid = d.parse::<couler_store::RunId>().unwrap().0;
    let mut tx = store.platform().await.unwrap();
    for (name, status) in [
        ("a", "succeeded"),
        ("b", "failed"),
        ("c", "cached"),
        ("d", "cancelled"),
    ] {
        sqlx::query(
            "INSERT INTO run_steps (tenant_id, run_id, name, status) VALUES ($1, $2, $3, $4)",
        )
        .bind(t.0)
        .bind(run_uuid)
        .bind(name)
        .bind(status)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();
    let (status, _) = api
        .call(Method::POST, &format!("/v1/runs/{d}/retry"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, run) = api
        .call(Method::GET, &format!("/v1/runs/{d}"), &editor, None)
        .await;
    let steps: std::collections::BTreeMap<&str, &str> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["name"].as_str().unwrap(), s["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        steps,
        [
            ("a", "succeeded"),
            ("b", "pending"),
            ("c", "cached"),
            ("d", "pending")
        ]
        .into_iter()
        .collect()
    );
    // A pending step's log is live: empty so far, and not complete.
    let pending = api
        .request(Method::GET, &format!("/v1/runs/{d}/logs?step=b"), &editor)
        .send()
        .await
        .unwrap();
    assert_eq!(pending.status(), StatusCode::OK);
    assert_eq!(pending.headers()["couler-log-complete"], "false");
    assert_eq!(pending.headers()["couler-log-offset"], "0");
    assert_eq!(pending.text().await.unwrap(), "");
    // The others have no logs; the answer says why, at the parameter.
    for (query, why, at) in [
        ("step=c", "came from the cache", "/step"),
        (
            "step=b&offset=1",
            "beyond the end of the log (0 bytes)",
            "/offset",
        ),
        ("step=a&attempt=1", "no logs from run attempt 1", "/attempt"),
        (
            "step=a",
            "(succeeded) has no logs: the engine reported none",
            "/step",
        ),
        ("step=zz", "has no step \"zz\"", "/step"),
    ] {
        let (status, body) = api
            .call(
                Method::GET,
                &format!("/v1/runs/{d}/logs?{query}"),
                &editor,
                None,
            )
            .await;
        if at == "/offset" {
            assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_offset");
        } else {
            assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
        }
        assert!(body["detail"].as_str().unwrap().contains(why), "{body}");
        assert_eq!(body["path"], at, "{body}");
    }

    let (status, body) = api
        .call(
            Method::POST,
            "/v1/runs/run_00000000000000000000000000000000/cancel",
            &editor,
            None,
        )
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, _) = api
        .call(Method::GET, "/v1/runs/not-an-id", &editor, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    api.stop().await;
}

#[tokio::test]
async fn the_queue_quota_answers_429_with_retry_after() {
    let api = TestApi::start().await;
    let tenant = api.tenant_with("small", json!({"quotas": {"max_concurrent_runs": 1, "max_queued_runs": 3, "requests_per_second": 100}})).await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    for _ in 0..3 {
        let (status, body) = api
            .call(
                Method::POST,
                "/v1/runs",
                &editor,
                Some(json!({"workflow": "diamond"})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    let r = api
        .request(Method::POST, "/v1/runs", &editor)
        .json(&json!({"workflow": "diamond"}))
        .send()
        .await
        .unwrap();
    assert!(r.headers().get("retry-after").is_some());
    let (status, body) = read(r).await;
    assert_problem(
        status,
        &body,
        StatusCode::TOO_MANY_REQUESTS,
        "queue_quota_exceeded",
    );
    api.stop().await;
}

#[tokio::test]
async fn a_running_run_lists_its_planned_steps_not_yet_dispatched_as_pending() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let id = run_diamond(&api, &editor).await;
    api.advance(&tenant, &id, &[RunStatus::Planning, RunStatus::Running])
        .await;
    // The scheduler's plan (its steps, in order) and one dispatched step.
    let planned = ["a", "b", "c", "d"]
        .map(|name| json!({"name": name, "exit_handler": false, "action": {"kind": "run"}}));
    let plan = json!({ "steps": planned });
    let store = api.store().await;
    let t: TenantId = tenant.parse().unwrap();
    let run_uuid = id.parse::<couler_store::RunId>().unwrap().0;
    let mut tx = store.platform().await.unwrap();
    sqlx::query("UPDATE runs SET plan = $3 WHERE tenant_id = $1 AND id = $2")
        .bind(t.0)
        .bind(run_uuid)
        .bind(&plan)
        .execute(&mut *tx)
        .await
        .unwrap();
    sqlx::query(
        "INSERT INTO run_steps (tenant_id, run_id, name, status, attempt, started_at) VALUES ($1, $2, 'a', 'running', 1, now())",
    )
    .bind(t.0)
    .bind(run_uuid)
    .execute(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let steps = || async {
        let (status, run) = api
            .call(Method::GET, &format!("/v1/runs/{id}"), &editor, None)
            .await;
        assert_eq!(status, StatusCode::OK, "{run}");
        run["steps"]
            .as_array()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|s| {
                let (name, status) = (s["name"].as_str().unwrap(), s["status"].as_str().unwrap());
                (
                    name.to_owned(),
                    status.to_owned(),
                    s["attempt"].as_i64().unwrap(),
                )
            })
            .collect::<Vec<_>>()
    };
    let own = |v: &[(&str, &str, i64)]| -> Vec<(String, String, i64)> {
        v.iter().map(|&(n, s, a)| (n.into(), s.into(), a)).collect()
    };
    assert_eq!(
        steps().await,
        own(&[
            ("a", "running", 1),
            ("b", "pending", 0),
            ("c", "pending", 0),
            ("d", "pending", 0)
        ])
    );
    // Once the run has ended, only what happened is listed.
    api.advance(&tenant, &id, &[RunStatus::Failed]).await;
    assert_eq!(steps().await, own(&[("a", "running", 1)]));
    api.stop().await;
}
