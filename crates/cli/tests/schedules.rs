//! `couler schedules …` against a real API.

mod common;
use common::*;
use serde_json::{Value, json};

#[tokio::test]
async fn list_preview_pause_trigger_backfill_and_ticks() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    api.queued_run(&editor).await;
    let body = json!({"slug": "nightly", "crons": ["30 2 * * *"], "timezone": "America/New_York"});
    let (status, made) = api
        .call(
            reqwest::Method::POST,
            "/v1/workflows/diamond/schedules",
            &editor,
            Some(body),
        )
        .await;
    assert_eq!(status, 201, "{made}");

    let out = api.couler(&editor, &["schedules", "list", "diamond"]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("SLUG") && text.contains("nightly") && text.contains("America/New_York"),
        "{text}"
    );

    let args = [
        "schedules",
        "preview",
        "diamond",
        "nightly",
        "--count",
        "2",
        "--from",
        "2026-03-08T00:00:00Z",
    ];
    let out = api.couler(&editor, &args).await;
    let text = stdout(&out);
    assert!(
        text.contains("2026-03-08T03:00:00-04:00") && text.contains("-04:00"),
        "{text}"
    );

    let args = [
        "schedules",
        "pause",
        "diamond",
        "nightly",
        "--reason",
        "upstream down",
    ];
    let out = api.couler(&editor, &args).await;
    assert!(
        stdout(&out).contains("paused (upstream down)"),
        "{}",
        stdout(&out)
    );
    let out = api
        .couler(
            &editor,
            &[
                "schedules",
                "resume",
                "diamond",
                "nightly",
                "--output",
                "json",
            ],
        )
        .await;
    let resumed: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(resumed["paused"], false);

    let out = api
        .couler(&editor, &["schedules", "trigger", "diamond", "nightly"])
        .await;
    let run = stdout(&out).trim().to_owned();
    assert!(run.starts_with("run_"), "{run}");
    let got = api.get(&format!("/v1/runs/{run}"), &editor).await;
    assert_eq!(got["trigger"]["kind"], "schedule");

    let args = [
        "schedules",
        "backfill",
        "diamond",
        "nightly",
        "--from",
        "2026-01-01T00:00:00Z",
        "--to",
        "2026-01-03T00:00:00Z",
        "--dry-run",
    ];
    let out = api.couler(&editor, &args).await;
    let text = stdout(&out);
    assert!(
        text.starts_with("2 instant(s) would run") && text.contains("2026-01-01T07:30:00Z"),
        "{text}"
    );

    let out = api
        .couler(&editor, &["schedules", "ticks", "diamond", "nightly"])
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("INSTANT"), "{}", stdout(&out));

    // A problem from the API, as for every command.
    let out = api
        .couler(&editor, &["schedules", "get", "diamond", "nope"])
        .await;
    assert!(!out.status.success());
    assert!(stderr(&out).contains("not found"), "{}", stderr(&out));
    api.stop().await;
}
