//! Following a run to its end through `GET /v1/runs/{id}/events` as
//! server-sent events, resuming with `Last-Event-ID` when the stream drops.

use crate::client::{self, Client};
pub use crate::progress::Sink;
use crate::progress::View;
use crate::sse;
use crate::wire::{Event, Run};
use anyhow::{Context, Result, anyhow, bail};
use futures::StreamExt;
use reqwest::Method;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use std::process::ExitCode;
use std::time::Duration;
use tokio::sync::mpsc;

/// The server sends a keep-alive every 15 s; this much silence is a drop.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);
const RECONNECT_PAUSE: Duration = Duration::from_millis(500);
/// How often the live view redraws while nothing happens.
const TICK: Duration = Duration::from_millis(250);
/// Exit status after Ctrl-C, as shells report a SIGINT.
const INTERRUPTED: u8 = 130;

/// Shows a run's progress until it ends; exits 0 only if it succeeded.
pub async fn watch(client: &Client, id: &str, sink: Sink) -> Result<ExitCode> {
    let run: Run = client.get(&["v1", "runs", id], &[]).await?;
    let mut view = View::new(&run, sink);
    let (events, mut received) = mpsc::channel(256);
    let follower = tokio::spawn(follow(client.clone(), run.id.clone(), events));
    let mut ticker = tokio::time::interval(TICK);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    let live = view.is_live();
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let last = loop {
        tokio::select! {
            event = received.recv() => match event {
                Some(event) => view.event(&event)?,
                None => break follower.await.context("the event follower stopped")??,
            },
            _ = ticker.tick(), if live => view.tick()?,
            _ = &mut ctrl_c, if live => {
                follower.abort();
                view.interrupt()?;
                return Ok(ExitCode::from(INTERRUPTED));
            }
        }
    };
    view.finish(&last)?;
    Ok(if last.status == "succeeded" {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// How one connection to the stream ended.
enum Ended {
    /// With the event that ended the run.
    RunEnded,
    /// Before the run ended: the connection failed, closed or went quiet.
    Dropped(anyhow::Error),
}

/// Sends the run's events, oldest first, and returns the run once it has
/// ended. A dropped stream is resumed after the last event seen; it gives
/// up when a resumed connection drops again without bringing any event.
async fn follow(client: Client, id: String, events: mpsc::Sender<Event>) -> Result<Run> {
    let mut last: Option<i64> = None;
    let mut resumed_without_news = false;
    loop {
        let before = last;
        match connect(&client, &id, &mut last, &events).await? {
            Ended::RunEnded => {
                let run: Run = client.get(&["v1", "runs", &id], &[]).await?;
                if run.is_finished() {
                    return Ok(run);
                }
                // Retried since that end: follow the next attempt.
                resumed_without_news = false;
            }
            Ended::Dropped(why) => {
                if last != before {
                    resumed_without_news = false;
                } else if let Ok(run) = client.get::<Run>(&["v1", "runs", &id], &[]).await
                    && run.is_finished()
                {
                    // Nothing new, and the run is over: its end was the
                    // last event seen, before the connection dropped.
                    return Ok(run);
                }
                if resumed_without_news {
                    return Err(why.context(format!(
                        "lost the event stream of {id} twice; `couler runs watch {id}` picks it up again"
                    )));
                }
                resumed_without_news = true;
                tokio::time::sleep(RECONNECT_PAUSE).await;
            }
        }
    }
}

/// One connection: events after `last` until the run ends or the stream
/// drops. Errors the server answers with (auth, not found) are final.
async fn connect(
    client: &Client,
    id: &str,
    last: &mut Option<i64>,
    events: &mpsc::Sender<Event>,
) -> Result<Ended> {
    let mut req = client
        .request(Method::GET, &["v1", "runs", id, "events"])
        .header(ACCEPT, "text/event-stream");
    if let Some(last) = last {
        req = req.header("Last-Event-ID", last.to_string());
    }
    let response = match client.send(req).await {
        Ok(r) => r,
        Err(client::Error::Transport(e)) => return Ok(Ended::Dropped(e.into())),
        Err(e) => return Err(e.into()),
    };
    let is_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !is_stream {
        bail!("the server did not answer with an event stream");
    }
    let mut body = response.bytes_stream();
    let mut parser = sse::Parser::default();
    // Whether the last event seen ends the run.
    let mut ended = false;
    loop {
        let chunk = match tokio::time::timeout(IDLE_TIMEOUT, body.next()).await {
            Err(_) => return Ok(Ended::Dropped(anyhow!("no news for {IDLE_TIMEOUT:?}"))),
            // The server closes the stream once the run has ended for good
            // (an attempt's end that a retry follows does not count).
            Ok(None) if ended => return Ok(Ended::RunEnded),
            Ok(None) => {
                return Ok(Ended::Dropped(anyhow!(
                    "the stream closed before the run ended"
                )));
            }
            Ok(Some(Err(e))) => return Ok(Ended::Dropped(e.into())),
            Ok(Some(Ok(chunk))) => chunk,
        };
        for message in parser.push(&chunk) {
            // Run events carry an id; anything else is not ours to show.
            if message.id.is_none() {
                continue;
            }
            let event: Event = serde_json::from_str(&message.data)
                .with_context(|| format!("event {:?} is not a run event", message.id))?;
            if last.is_some_and(|l| event.id <= l) {
                continue; // already shown
            }
            *last = Some(event.id);
            ended = event.ends_run();
            if events.send(event).await.is_err() {
                bail!("nobody is watching");
            }
        }
    }
}
