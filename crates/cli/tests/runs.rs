//! `couler runs list|get|cancel|retry` against a real API, and how errors
//! (problem documents) are printed.

mod common;
use common::*;
use serde_json::{Value, json};

fn json_out(o: &std::process::Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_str(&stdout(o)).expect("JSON on stdout")
}

fn ids(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn list_get_cancel_and_retry() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let older = api.queued_run(&editor).await;
    let newer = api.queued_run(&editor).await;

    let out = api.couler(&editor, &["runs", "list"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("RUN"), "{text}");
    assert!(
        lines[1].starts_with(&newer) && lines[1].contains("queued"),
        "{text}"
    );
    assert!(
        lines[2].starts_with(&older) && lines[2].contains("diamond"),
        "{text}"
    );

    let list = json_out(
        &api.couler(&editor, &["runs", "list", "--output", "json"])
            .await,
    );
    assert_eq!(ids(&list), [newer.as_str(), older.as_str()]);

    // A queued run is cancelled at once.
    let out = api.couler(&editor, &["runs", "cancel", &older]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), format!("{older} cancelled"));
    let list = json_out(
        &api.couler(
            &editor,
            &["runs", "list", "--status", "cancelled", "--output", "json"],
        )
        .await,
    );
    assert_eq!(ids(&list), [older.as_str()]);

    // Filters by workflow name, one per page.
    let out = api
        .couler(
            &editor,
            &[
                "runs",
                "list",
                "--workflow",
                "diamond",
                "--limit",
                "1",
                "--output",
                "json",
            ],
        )
        .await;
    let page = json_out(&out);
    assert_eq!(ids(&page), [newer.as_str()]);
    let cursor = page["next_cursor"].as_str().expect("a next page");
    let out = api
        .couler(
            &editor,
            &[
                "runs",
                "list",
                "--workflow",
                "diamond",
                "--limit",
                "1",
                "--cursor",
                cursor,
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).lines().nth(1).unwrap().starts_with(&older),
        "{}",
        stdout(&out)
    );
    let out = api.couler(&editor, &["runs", "list", "--limit", "1"]).await;
    assert!(
        stderr(&out).contains("more runs: add --cursor "),
        "{}",
        stderr(&out)
    );

    // Retrying the cancelled run queues attempt 2.
    let out = api.couler(&editor, &["runs", "retry", &older]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), format!("{older} queued (attempt 2)"));
    let run = api.get(&format!("/v1/runs/{older}"), &editor).await;
    assert_eq!(
        (run["status"].as_str(), run["attempt"].as_i64()),
        (Some("queued"), Some(2))
    );

    // `get` shows the run and a table of its steps.
    api.step(&tenant, &older, "a", "succeeded", None).await;
    api.step(&tenant, &older, "b", "failed", Some("out of memory"))
        .await;
    let out = api.couler(&editor, &["runs", "get", &older]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(&format!("run        {older}\n")), "{text}");
    assert!(text.contains("status     queued (attempt 2)\n"), "{text}");
    assert!(text.contains("parameters message=hello\n"), "{text}");
    let table: Vec<&str> = text
        .lines()
        .skip_while(|l| !l.starts_with("STEP"))
        .collect();
    assert_eq!(table.len(), 3, "{text}");
    assert!(
        table[1].starts_with("a ") && table[1].contains("succeeded"),
        "{text}"
    );
    assert!(
        table[2].starts_with("b ") && table[2].ends_with("out of memory"),
        "{text}"
    );

    let run = json_out(
        &api.couler(&editor, &["runs", "get", &older, "--output", "json"])
            .await,
    );
    assert_eq!(run["id"], older.as_str());
    assert_eq!(run["steps"].as_array().unwrap().len(), 2);
    api.stop().await;
}

#[tokio::test]
async fn errors_are_printed_with_their_codes() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let run = api.queued_run(&editor).await;

    let out = api.couler("not-a-token", &["runs", "list"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("error: invalid_token: "),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("HTTP 401"), "{}", stderr(&out));

    let out = api.couler("", &["runs", "list"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("unauthenticated"), "{}", stderr(&out));

    let out = api
        .couler(&editor, &["runs", "get", "run_0000000000000000000000000"])
        .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));

    let out = api.couler(&editor, &["runs", "retry", &run]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("run_not_retryable"),
        "{}",
        stderr(&out)
    );

    let viewer = user(&tenant, "viewer");
    let out = api.couler(&viewer, &["runs", "cancel", &run]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("forbidden"), "{}", stderr(&out));
    let out = api.couler(&editor, &["runs", "cancel", &run]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = api.couler(&editor, &["runs", "cancel", &run]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("run_finished"), "{}", stderr(&out));

    // Nobody listening.
    let out = api
        .couler(&editor, &["--server", "http://127.0.0.1:9", "runs", "list"])
        .await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("cannot reach the server"),
        "{}",
        stderr(&out)
    );
    api.stop().await;
}

/// What a failed command printed on standard error with `--output json`.
fn json_err(o: &std::process::Output) -> Value {
    assert_eq!(o.status.code(), Some(2), "{}", stderr(o));
    assert!(stdout(o).is_empty(), "{}", stdout(o));
    serde_json::from_str(&stderr(o)).expect("one JSON document on stderr")
}

#[tokio::test]
async fn with_json_output_errors_are_json_too() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let run = api.queued_run(&editor).await;

    // The server's problem document, as it was sent.
    let missing = "run_0000000000000000000000000";
    let err = json_err(
        &api.couler(&editor, &["runs", "get", missing, "--output", "json"])
            .await,
    );
    assert_eq!(err["code"], "not_found", "{err}");
    assert_eq!(err["status"], 404, "{err}");
    assert!(err["request_id"].is_string(), "{err}");
    let viewer = user(&tenant, "viewer");
    let err = json_err(
        &api.couler(&viewer, &["runs", "cancel", &run, "--output", "json"])
            .await,
    );
    assert_eq!(err["code"], "forbidden", "{err}");
    let err = json_err(
        &api.couler(&editor, &["cache", "flush", "--yes", "--output", "json"])
            .await,
    );
    assert_eq!(err["status"], 403, "{err}");

    // Failures outside the API say what failed here.
    let err = json_err(
        &api.couler(
            &editor,
            &[
                "--server",
                "http://127.0.0.1:9",
                "runs",
                "list",
                "--output",
                "json",
            ],
        )
        .await,
    );
    assert_eq!(err["code"], "unreachable", "{err}");
    assert!(
        err["detail"]
            .as_str()
            .unwrap()
            .contains("cannot reach the server"),
        "{err}"
    );
    let err = json_err(
        &api.couler(
            &editor,
            &["plan", "/nonexistent/wf.yaml", "--output", "json"],
        )
        .await,
    );
    assert_eq!(err["code"], "failed", "{err}");

    // Text output is unchanged.
    let out = api.couler(&editor, &["runs", "get", missing]).await;
    assert!(
        stderr(&out).starts_with("error: not_found: "),
        "{}",
        stderr(&out)
    );
    api.stop().await;
}

#[tokio::test]
async fn api_keys_work_as_tokens() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let run = api.queued_run(&editor).await;
    let (status, key) = api
        .call(
            reqwest::Method::POST,
            "/v1/api-keys",
            &user(&tenant, "admin"),
            Some(json!({"name": "ci", "roles": ["viewer"]})),
        )
        .await;
    assert_eq!(status, 201, "{key}");
    let secret = key["secret"].as_str().unwrap();
    assert!(secret.starts_with("ck_"));
    let out = api.couler("", &["--token", secret, "runs", "list"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains(&run), "{}", stdout(&out));
    api.stop().await;
}

#[tokio::test]
async fn logs_print_a_steps_latest_attempt_or_one_of_a_run_attempt() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let run = api.queued_run(&editor).await;
    let tenant_id: couler_store::TenantId = tenant.parse().unwrap();
    let run_id: couler_store::RunId = run.parse().unwrap();
    let mut tx = api.store.tenant(tenant_id).await.unwrap();
    for (run_attempt, attempt, content) in [
        (1, 1, "first try\n"),
        (1, 2, "A says hello\nbye ✓\n"),
        (2, 1, "after the retry\n"),
    ] {
        sqlx::query(
            "INSERT INTO step_logs (tenant_id, run_id, step, run_attempt, attempt, content) VALUES ($1, $2, 'a', $3, $4, $5)",
        )
        .bind(tenant_id.0)
        .bind(run_id.0)
        .bind(run_attempt)
        .bind(attempt)
        .bind(content)
        .execute(&mut *tx)
        .await
        .unwrap();
    }
    tx.commit().await.unwrap();

    let out = api.couler(&editor, &["runs", "logs", &run, "a"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "after the retry\n");
    let out = (api.couler(&editor, &["runs", "logs", &run, "a", "--attempt", "1"])).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "A says hello\nbye ✓\n");
    let out = (api.couler(&editor, &["runs", "logs", &run, "a", "--attempt", "3"])).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));

    // `b` has not run yet (the run is queued): nothing so far; a step the
    // run does not have is not found.
    let out = api.couler(&editor, &["runs", "logs", &run, "b"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    let out = api.couler(&editor, &["runs", "logs", &run, "nope"]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("not_found"), "{}", stderr(&out));
    api.stop().await;
}
