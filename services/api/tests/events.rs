//! Run events: a JSON list, and a server-sent event stream that follows
//! the run live, ends with it, and resumes with `Last-Event-ID`.

mod common;
use common::*;
use couler_store::RunStatus;
use futures::StreamExt;
use reqwest::{Method, StatusCode};
use serde_json::Value;
use std::time::Duration;

/// Reads server-sent events from a response, one parsed event at a time.
struct SseReader {
    stream: futures::stream::BoxStream<'static, reqwest::Result<bytes::Bytes>>,
    buffer: String,
}

impl SseReader {
    fn new(r: reqwest::Response) -> Self {
        SseReader {
            stream: r.bytes_stream().boxed(),
            buffer: String::new(),
        }
    }

    /// The next event as (id, event, data), or None when the stream ends.
    async fn next(&mut self) -> Option<(i64, String, Value)> {
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut event, mut data) = (None, String::new(), String::new());
                for line in block.lines() {
                    if let Some(v) = line.strip_prefix("id:") {
                        id = v.trim().parse().ok();
                    } else if let Some(v) = line.strip_prefix("event:") {
                        event = v.trim().to_owned();
                    } else if let Some(v) = line.strip_prefix("data:") {
                        data.push_str(v.trim());
                    }
                }
                match id {
                    Some(id) => return Some((id, event, serde_json::from_str(&data).unwrap())),
                    None => continue, // keep-alive comment
                }
            }
            let chunk = tokio::time::timeout(Duration::from_secs(10), self.stream.next())
                .await
                .expect("an event in time")?;
            self.buffer
                .push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        }
    }
}

#[tokio::test]
async fn streams_follow_the_run_and_resume() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let viewer = user(&tenant, "viewer");
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let id = run_diamond(&api, &editor).await;
    let path = format!("/v1/runs/{id}/events");

    let r = api
        .request(Method::GET, &path, &viewer)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::OK);
    assert!(
        r.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream")
    );
    let mut live = SseReader::new(r);
    let (first_id, kind, data) = live.next().await.unwrap();
    assert_eq!(
        (kind.as_str(), data["status"].as_str()),
        ("run.queued", Some("queued"))
    );

    // Events written after the stream opened arrive live, in order.
    api.advance(&tenant, &id, &[RunStatus::Planning]).await;
    api.advance(&tenant, &id, &[RunStatus::Running]).await;
    let (planning_id, kind, _) = live.next().await.unwrap();
    assert_eq!(kind, "run.planning");
    assert!(planning_id > first_id);
    assert_eq!(live.next().await.unwrap().1, "run.running");
    api.advance(&tenant, &id, &[RunStatus::Succeeded]).await;
    let (_, kind, data) = live.next().await.unwrap();
    assert_eq!(kind, "run.succeeded");
    assert_eq!(data["message"], "moved by the test");
    assert!(live.next().await.is_none(), "the stream ends with the run");

    // Resuming after the first event replays exactly the rest.
    let r = api
        .request(Method::GET, &path, &viewer)
        .header("accept", "text/event-stream")
        .header("last-event-id", first_id.to_string())
        .send()
        .await
        .unwrap();
    let mut resumed = SseReader::new(r);
    let mut kinds = Vec::new();
    while let Some((_, kind, _)) = resumed.next().await {
        kinds.push(kind);
    }
    assert_eq!(kinds, ["run.planning", "run.running", "run.succeeded"]);

    // The plain JSON list for clients without SSE, with `after`.
    let (status, list) = api
        .call(
            Method::GET,
            &format!("{path}?after={first_id}"),
            &viewer,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    let kinds: Vec<&str> = list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["run.planning", "run.running", "run.succeeded"]);
    api.stop().await;
}

#[tokio::test]
async fn many_streams_each_see_only_their_run() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let mut runs = Vec::new();
    for _ in 0..5 {
        runs.push(run_diamond(&api, &editor).await);
    }
    let mut readers = Vec::new();
    for id in &runs {
        let r = api
            .request(Method::GET, &format!("/v1/runs/{id}/events"), &editor)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        let mut reader = SseReader::new(r);
        assert_eq!(reader.next().await.unwrap().1, "run.queued");
        readers.push(reader);
    }
    // Cancel every other run; each stream reports only its own.
    for id in runs.iter().step_by(2) {
        api.call(
            Method::POST,
            &format!("/v1/runs/{id}/cancel"),
            &editor,
            None,
        )
        .await;
    }
    for (i, reader) in readers.iter_mut().enumerate() {
        if i % 2 == 0 {
            let (_, kind, data) = reader.next().await.unwrap();
            assert_eq!(kind, "run.cancelled");
            assert_eq!(data["run_id"], runs[i].as_str());
            assert!(reader.next().await.is_none());
        }
    }
    api.stop().await;
}

#[tokio::test]
async fn a_stream_follows_a_retried_run_to_its_last_end() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let id = run_diamond(&api, &editor).await;
    let path = format!("/v1/runs/{id}/events");
    let lifecycle = [RunStatus::Planning, RunStatus::Running];
    api.advance(&tenant, &id, &lifecycle).await;
    api.advance(&tenant, &id, &[RunStatus::Failed]).await;
    let (status, body) = api
        .call(Method::POST, &format!("/v1/runs/{id}/retry"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let open = |after: Option<i64>| {
        let mut r = api
            .request(Method::GET, &path, &editor)
            .header("accept", "text/event-stream");
        if let Some(after) = after {
            r = r.header("last-event-id", after.to_string());
        }
        r.send()
    };
    // The first attempt's end does not end the stream: the retry follows.
    let mut live = SseReader::new(open(None).await.unwrap());
    let mut kinds = Vec::new();
    while kinds.last().is_none_or(|k| k != "run.failed") {
        kinds.push(live.next().await.unwrap().1);
    }
    let (_, next, _) = live.next().await.unwrap();
    assert_eq!(next, "run.retried", "{kinds:?}");
    api.advance(&tenant, &id, &lifecycle).await;
    api.advance(&tenant, &id, &[RunStatus::Succeeded]).await;
    let mut last = (0, String::new());
    while let Some((event, kind, _)) = live.next().await {
        last = (event, kind);
    }
    assert_eq!(last.1, "run.succeeded");

    // Resuming a finished run after its last event ends at once.
    let mut after_end = SseReader::new(open(Some(last.0)).await.unwrap());
    assert!(after_end.next().await.is_none());
    api.stop().await;
}
