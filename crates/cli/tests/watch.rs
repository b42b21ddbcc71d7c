//! `couler runs watch`: live progress from the event stream, the exit
//! status of the run, following retries, resuming a dropped stream.

mod common;
use common::*;
use couler_store::RunStatus;
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

#[tokio::test]
async fn watch_prints_the_transitions_in_order_and_exits_zero() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let id = api.queued_run(&editor).await;
    let viewer = user(&tenant, "viewer");
    let mut watching = api.spawn(&viewer, &["runs", "watch", &id]);
    // Connected and caught up: what follows arrives live.
    let mut lines = watching.until("run queued").await;

    api.advance(&tenant, &id, RunStatus::Planning, None).await;
    api.advance(&tenant, &id, RunStatus::Running, None).await;
    for step in ["a", "b", "c", "d"] {
        api.step(&tenant, &id, step, "running", None).await;
        api.step(&tenant, &id, step, "succeeded", None).await;
    }
    api.advance(&tenant, &id, RunStatus::Succeeded, Some("all done"))
        .await;
    let (rest, out) = watching.finish().await;
    assert!(out.status.success(), "{}", stderr(&out));
    lines.extend(rest);
    assert_eq!(
        transitions(&lines),
        [
            "run queued",
            "run planning",
            "run running",
            "step a running",
            "step a succeeded",
            "step b running",
            "step b succeeded",
            "step c running",
            "step c succeeded",
            "step d running",
            "step d succeeded",
            "run succeeded: all done",
        ]
    );
    assert_eq!(stderr(&out), "", "nothing to complain about");
    api.stop().await;
}

#[tokio::test]
async fn watch_exits_non_zero_when_the_run_fails() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let id = api.queued_run(&editor).await;
    let mut watching = api.spawn(&editor, &["runs", "watch", &id]);
    watching.until("run queued").await;
    api.advance(&tenant, &id, RunStatus::Planning, None).await;
    api.advance(&tenant, &id, RunStatus::Running, None).await;
    api.step(&tenant, &id, "a", "running", None).await;
    api.step(&tenant, &id, "a", "failed", Some("boom")).await;
    api.advance(&tenant, &id, RunStatus::Failed, Some("step a failed"))
        .await;
    let (rest, out) = watching.finish().await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        transitions(&rest),
        [
            "run planning",
            "run running",
            "step a running",
            "step a failed: boom",
            "run failed: step a failed",
        ]
    );
    assert_eq!(
        stderr(&out),
        format!("run {id} failed: step a failed\nfailed steps:\n  a: boom\n")
    );

    // Watching a finished run replays it and exits the same way.
    let out = api.couler(&editor, &["runs", "watch", &id]).await;
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out).lines().count(), 6, "{}", stdout(&out));
    api.stop().await;
}

#[tokio::test]
async fn watch_follows_a_retried_run_past_its_earlier_end() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let id = api.queued_run(&editor).await;
    let out = api.couler(&editor, &["runs", "cancel", &id]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let out = api.couler(&editor, &["runs", "retry", &id]).await;
    assert!(out.status.success(), "{}", stderr(&out));

    let mut watching = api.spawn(&editor, &["runs", "watch", &id]);
    let mut lines = watching.until("run retried").await;
    api.advance(&tenant, &id, RunStatus::Planning, None).await;
    api.advance(&tenant, &id, RunStatus::Running, None).await;
    api.advance(&tenant, &id, RunStatus::Succeeded, None).await;
    let (rest, out) = watching.finish().await;
    assert!(out.status.success(), "{}", stderr(&out));
    lines.extend(rest);
    assert_eq!(
        transitions(&lines),
        [
            "run queued",
            "run cancelled: cancelled before it started",
            "run retried (attempt 2)",
            "run planning",
            "run running",
            "run succeeded",
        ]
    );
    // Watched once it is all over, the run shows both attempts too.
    let out = api.couler(&editor, &["runs", "watch", &id]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<String> = stdout(&out).lines().map(str::to_owned).collect();
    assert_eq!(
        transitions(&lines).last().map(String::as_str),
        Some("run succeeded"),
        "{lines:?}"
    );
    assert_eq!(transitions(&lines).len(), 6, "{lines:?}");
    api.stop().await;
}

/// A stand-in API whose event stream drops: each `/events` request gets the
/// next body and the connection closes. Records each request's
/// `Last-Event-ID`.
struct DroppingServer {
    base: String,
    resumed_from: Arc<Mutex<Vec<Option<String>>>>,
}

const RUN: &str = "run_fake";

fn sse(id: i64, kind: &str, step: Option<&str>, status: &str) -> String {
    let data = serde_json::json!({
        "id": id, "run_id": RUN, "kind": kind, "step": step, "status": status,
        "message": null, "data": {}, "created_at": "2025-01-01T00:00:00Z",
    });
    format!("id: {id}\nevent: {kind}\ndata: {data}\n\n")
}

impl DroppingServer {
    async fn start(bodies: Vec<String>, final_status: &'static str) -> DroppingServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let resumed_from = Arc::new(Mutex::new(Vec::new()));
        let seen = resumed_from.clone();
        tokio::spawn(async move {
            let mut bodies = bodies.into_iter();
            let mut streams_left = bodies.len();
            loop {
                let (mut socket, _) = listener.accept().await.unwrap();
                let mut head = Vec::new();
                while !head.ends_with(b"\r\n\r\n") {
                    let mut byte = [0u8];
                    if socket.read(&mut byte).await.unwrap() == 0 {
                        break;
                    }
                    head.push(byte[0]);
                }
                let head = String::from_utf8(head).unwrap().to_lowercase();
                let path = head.split(' ').nth(1).unwrap_or_default().to_owned();
                let response = if path.ends_with("/events") {
                    let last = head
                        .lines()
                        .find_map(|l| l.strip_prefix("last-event-id:"))
                        .map(|v| v.trim().to_owned());
                    seen.lock().unwrap().push(last);
                    streams_left = streams_left.saturating_sub(1);
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n{}",
                        bodies.next().unwrap_or_default()
                    )
                } else {
                    let status = if streams_left == 0 {
                        final_status
                    } else {
                        "running"
                    };
                    let run = serde_json::json!({
                        "id": RUN, "workflow_name": "diamond", "status": status, "attempt": 1,
                        "created_at": "2025-01-01T00:00:00Z",
                    })
                    .to_string();
                    format!(
                        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{run}",
                        run.len()
                    )
                };
                socket.write_all(response.as_bytes()).await.unwrap();
                socket.shutdown().await.unwrap();
            }
        });
        DroppingServer { base, resumed_from }
    }

    async fn watch(&self) -> std::process::Output {
        let command = tokio::process::Command::new(env!("CARGO_BIN_EXE_couler"))
            .args(["--server", &self.base, "--token", "t", "runs", "watch", RUN])
            .output();
        tokio::time::timeout(std::time::Duration::from_secs(60), command)
            .await
            .unwrap()
            .unwrap()
    }
}

#[tokio::test]
async fn a_dropped_stream_is_resumed_after_the_last_event() {
    let server = DroppingServer::start(
        vec![
            sse(1, "run.running", None, "running") + &sse(2, "step.running", Some("a"), "running"),
            sse(3, "step.succeeded", Some("a"), "succeeded")
                + &sse(4, "run.succeeded", None, "succeeded"),
        ],
        "succeeded",
    )
    .await;
    let out = server.watch().await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        transitions(&stdout(&out).lines().map(str::to_owned).collect::<Vec<_>>()),
        [
            "run running",
            "step a running",
            "step a succeeded",
            "run succeeded"
        ]
    );
    assert_eq!(
        *server.resumed_from.lock().unwrap(),
        [None, Some("2".to_owned())]
    );
}

#[tokio::test]
async fn a_stream_that_drops_again_without_news_is_given_up() {
    let server = DroppingServer::start(
        vec![sse(1, "run.running", None, "running"), String::new()],
        "running",
    )
    .await;
    let out = server.watch().await;
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("lost the event stream of run_fake twice"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        *server.resumed_from.lock().unwrap(),
        [None, Some("1".to_owned())]
    );
}
