//! Run event streaming. One Postgres `LISTEN` per API process feeds a
//! broadcast channel; each stream replays what it missed from the table
//! (resumable with `Last-Event-ID`) and then follows the notifications.

use crate::auth::{Auth, Role};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::{Query, path_id};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use couler_store::events::{self, Event};
use couler_store::{RUN_EVENTS_CHANNEL, RunId, TenantId};
use serde::{Deserialize, Serialize};
use sqlx::postgres::{PgListener, PgPool};
use tokio::sync::broadcast;
use tokio_util::sync::CancellationToken;
use utoipa::{IntoParams, ToSchema};
use uuid::Uuid;

/// Events of a run were written (the rows are read from the table).
#[derive(Debug, Clone, Copy)]
pub struct Note {
    pub run: Uuid,
}

pub struct EventHub {
    notes: broadcast::Sender<Note>,
}

impl EventHub {
    pub async fn start(pool: PgPool, stop: CancellationToken) -> anyhow::Result<EventHub> {
        let (notes, _) = broadcast::channel(4096);
        let mut listener = listening(&pool).await?;
        let sender = notes.clone();
        tokio::spawn(async move {
            loop {
                let received = tokio::select! {
                    _ = stop.cancelled() => return,
                    r = listener.recv() => r,
                };
                match received {
                    Ok(n) => {
                        if let Some(note) = parse(n.payload()) {
                            let _ = sender.send(note);
                        }
                    }
                    // PgListener reconnects on the next recv; streams re-read the table.
                    Err(e) => {
                        tracing::warn!(error = %e, "event listener lost its connection");
                        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
                    }
                }
            }
        });
        Ok(EventHub { notes })
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Note> {
        self.notes.subscribe()
    }
}

/// A listener on the run events channel. Postgres slow to give a
/// connection at start (a busy machine) is waited for, up to 30 s, rather
/// than ending the API.
async fn listening(pool: &PgPool) -> Result<PgListener, sqlx::Error> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    let mut pause = std::time::Duration::from_millis(200);
    loop {
        let attempt = async {
            let mut listener = PgListener::connect_with(pool).await?;
            listener.listen(RUN_EVENTS_CHANNEL).await?;
            Ok(listener)
        };
        match attempt.await {
            Ok(listener) => return Ok(listener),
            Err(e) if std::time::Instant::now() < deadline => {
                tracing::warn!(error = %e, "the event listener cannot connect yet; retrying");
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(std::time::Duration::from_secs(5));
            }
            Err(e) => return Err(e),
        }
    }
}

/// Payloads name the run whose events changed.
fn parse(payload: &str) -> Option<Note> {
    Some(Note {
        run: Uuid::parse_str(payload.trim()).ok()?,
    })
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventView {
    /// Increasing; resume a stream with `Last-Event-ID` set to the last one seen.
    pub id: i64,
    pub run_id: RunId,
    /// E.g. `run.queued`, `run.running`, `step.succeeded`.
    pub kind: String,
    pub step: Option<String>,
    pub status: Option<String>,
    pub message: Option<String>,
    #[schema(value_type = Object)]
    pub data: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

impl From<Event> for EventView {
    fn from(e: Event) -> Self {
        EventView {
            id: e.id,
            run_id: e.run_id,
            kind: e.kind,
            step: e.step,
            status: e.status,
            message: e.message,
            data: e.data.0,
            created_at: e.created_at,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct EventList {
    pub items: Vec<EventView>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct EventsQuery {
    /// Only events after this id.
    pub after: Option<i64>,
    /// At most this many (1 to 1000, default 500); JSON lists only.
    #[param(minimum = 1, maximum = 1000)]
    pub limit: Option<i64>,
}

/// Whether an event ends the run's stream.
fn is_final(e: &EventView) -> bool {
    e.step.is_none()
        && e.kind.starts_with("run.")
        && matches!(
            e.status.as_deref(),
            Some("succeeded" | "failed" | "cancelled")
        )
}

/// Events of a run: a JSON list, or with `Accept: text/event-stream` a live
/// server-sent event stream that ends when the run does.
#[utoipa::path(get, path = "/v1/runs/{id}/events", tag = "runs",
    params(("id" = String, Path, description = "Run id"),
           ("Last-Event-ID" = Option<i64>, Header, description = "Resume a stream after this event"),
           EventsQuery),
    responses((status = 200, description = "The events", content(
                  (EventList = "application/json"),
                  (String = "text/event-stream", example = "id: 42\nevent: run.running\ndata: {…}\n\n"))),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn run_events(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let tenant = principal.tenant(Role::Viewer)?;
    let run: RunId = path_id(&id, "run")?;
    let resume = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok());
    let after = resume.or(q.after).unwrap_or(0);
    let mut tx = state.store.tenant(tenant).await?;
    let ended = couler_store::runs::get(&mut tx, tenant, run)
        .await?
        .ok_or_else(|| ApiError::not_found("run"))?
        .status
        .is_terminal();
    let wants_stream = headers
        .get(axum::http::header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("text/event-stream"));
    if !wants_stream {
        let limit = q.limit.unwrap_or(500);
        if !(1..=1000).contains(&limit) {
            return Err(ApiError::bad_request(
                "invalid_limit",
                "limit must be between 1 and 1000",
                "/limit",
            ));
        }
        let items = events::list(&mut tx, tenant, run, after, limit).await?;
        tx.commit().await?;
        let list = EventList {
            items: items.into_iter().map(Into::into).collect(),
        };
        return Ok(Json(list).into_response());
    }
    tx.commit().await?;
    Ok(Sse::new(stream(state, tenant, run, after, ended))
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// The events after `last`, then each as it is written, until the run
/// ends: its latest event is a final one (`ended` says whether it was when
/// the stream was asked for). A final event that a retry follows ends only
/// that attempt.
fn stream(
    state: AppState,
    tenant: TenantId,
    run: RunId,
    mut last: i64,
    mut ended: bool,
) -> impl futures::Stream<Item = Result<SseEvent, std::convert::Infallible>> {
    // Subscribe before the first read so nothing written in between is lost.
    let mut notes = state.events.subscribe();
    async_stream::stream! {
        const BATCH: i64 = 500;
        loop {
            let batch = match read(&state, tenant, run, last, BATCH).await {
                Ok(b) => b,
                Err(e) => {
                    tracing::warn!(error = %e, run = %run, "event stream read failed");
                    return;
                }
            };
            let full = batch.len() as i64 == BATCH;
            ended = batch.last().map_or(ended, is_final);
            for event in batch {
                last = event.id;
                let sse = SseEvent::default()
                    .id(event.id.to_string())
                    .event(event.kind.clone())
                    .json_data(&event)
                    .expect("events serialize");
                yield Ok(sse);
            }
            if full {
                continue;
            }
            if ended {
                return;
            }
            // Wait for news of this run (a lagged receiver just re-reads).
            loop {
                tokio::select! {
                    _ = state.shutdown.cancelled() => return,
                    note = notes.recv() => match note {
                        Ok(n) if n.run == run.0 => break,
                        Ok(_) => continue,
                        Err(broadcast::error::RecvError::Lagged(_)) => break,
                        Err(broadcast::error::RecvError::Closed) => return,
                    },
                }
            }
        }
    }
}

async fn read(
    state: &AppState,
    tenant: TenantId,
    run: RunId,
    after: i64,
    limit: i64,
) -> Result<Vec<EventView>, sqlx::Error> {
    let mut tx = state.store.tenant(tenant).await?;
    let events = events::list(&mut tx, tenant, run, after, limit).await?;
    tx.commit().await?;
    Ok(events.into_iter().map(Into::into).collect())
}
