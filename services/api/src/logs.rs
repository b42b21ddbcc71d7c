//! `GET /v1/runs/{id}/logs`: a step's log, read from a byte offset or
//! followed as it grows. Reading a running step's log asks the scheduler
//! driving the run to tail it (see `couler_store::logs`); while nobody
//! reads, a running step has no stored log.

use crate::auth::{Auth, Role};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::{Query, path_id};
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderName, HeaderValue, header};
use axum::response::{IntoResponse, Response};
use couler_store::logs::{self, LogRead, Watch};
use couler_store::runs::{self, Step};
use couler_store::{RunId, StepStatus};
use serde::Deserialize;
use std::time::Duration;
use tokio::time::Instant;
use utoipa::IntoParams;

/// The byte offset just after a response's text: the next read's `offset`.
pub const LOG_OFFSET: HeaderName = HeaderName::from_static("couler-log-offset");
/// `false` while the step can still write its log (pending or running).
pub const LOG_COMPLETE: HeaderName = HeaderName::from_static("couler-log-complete");

/// How often a followed log is read again.
const FOLLOW_POLL: Duration = Duration::from_millis(500);
/// How often a follower renews its request to tail the step (the
/// scheduler tails for about 30 s after the last).
const WATCH_AGAIN: Duration = Duration::from_secs(10);
/// Put in a followed log when the step's stored log replaces the live one
/// instead of extending it: the live text interleaves standard output and
/// error as they grew, the stored one has standard error after standard
/// output.
const STORED_LOG: &str =
    "--- the step ended; its stored log follows (standard output, then standard error) ---\n";

/// Marks a response that streams: it is sent as written, never compressed
/// (a compressor holds small writes back).
#[derive(Debug, Clone, Copy)]
pub struct Streamed;

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct LogsQuery {
    /// The step (or map instance, e.g. `train[2]`).
    pub step: String,
    /// The run attempt (the run's `attempt`: 1, and one more per retry)
    /// whose logs to read; by default the latest that ran the step.
    #[serde(default, deserialize_with = "crate::wire::run_attempt")]
    #[param(minimum = 1, value_type = Option<i32>)]
    pub attempt: Option<i32>,
    /// The byte offset to read from (default 0): the `Couler-Log-Offset`
    /// of an earlier read. One beyond the end of the log, or inside a
    /// UTF-8 character, is a 400 `invalid_offset` at `/offset`.
    #[param(minimum = 0)]
    pub offset: Option<u64>,
    /// Stream the log as it grows (chunked `text/plain`) until the step
    /// ends and its stored log is sent.
    #[serde(default)]
    pub follow: bool,
}

/// The log of one step's latest attempt (standard output and error), from
/// `offset` on, or followed.
///
/// Headers: `Couler-Log-Offset` (the offset after this text) and
/// `Couler-Log-Complete` (`false` while the step is pending or running).
/// While the step runs its log is live: standard output and standard
/// error interleaved as they grow, and only ever appended to. When the
/// step ends its stored log (standard output, then standard error, as
/// before) replaces the live one, so its order can differ; a follower then
/// receives the rest of it, or, when it does not extend what was sent, a
/// marker line and the whole stored log. A retry from failure keeps the
/// logs of the run attempts before it (`attempt` reads them).
#[utoipa::path(get, path = "/v1/runs/{id}/logs", tag = "runs",
    params(("id" = String, Path, description = "Run id"), LogsQuery),
    responses((status = 200, content_type = "text/plain", body = String, headers(
                  ("Couler-Log-Offset" = u64, description = "The byte offset after this text: the next read's `offset`"),
                  ("Couler-Log-Complete" = bool, description = "`false` while the step can still write its log"))),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
pub async fn step_logs(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
    Query(q): Query<LogsQuery>,
) -> ApiResult<Response> {
    let tenant = principal.tenant(Role::Viewer)?;
    let run: RunId = path_id(&id, "run")?;
    let offset = q.offset.unwrap_or(0);
    let at = i64::try_from(offset).map_err(|_| bad_offset(offset, 0))?;
    let mut tx = state.store.tenant(tenant).await?;
    let read = logs::read(&mut tx, tenant, run, &q.step, q.attempt, at)
        .await?
        .ok_or_else(|| ApiError::not_found("run"))?;
    if read.len.is_none() && !read.live {
        let steps = runs::steps(&mut tx, tenant, run).await?;
        return Err(no_logs(run, &q, read.status, &steps));
    }
    let text = text_from(&read, offset)?;
    let watch = Watch {
        tenant,
        run,
        step: q.step.clone(),
    };
    if read.live {
        logs::watch(&mut tx, &watch).await?;
    }
    tx.commit().await?;
    let next = offset + text.len() as u64;
    let mut response = if q.follow && read.live {
        let follower = Follower {
            state,
            watch,
            run_attempt: q.attempt,
            attempt: read.attempt,
            start: offset,
            offset: next,
            sent: blake3::Hasher::new(),
            ends_line: text.is_empty() || text.ends_with('\n'),
        };
        let mut response = Body::from_stream(follower.stream(text)).into_response();
        response.extensions_mut().insert(Streamed);
        response
    } else {
        text.into_response()
    };
    let headers = response.headers_mut();
    let plain = HeaderValue::from_static("text/plain; charset=utf-8");
    headers.insert(header::CONTENT_TYPE, plain);
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(LOG_OFFSET, HeaderValue::from(next));
    let complete = HeaderValue::from_static(if read.live { "false" } else { "true" });
    headers.insert(LOG_COMPLETE, complete);
    Ok(response)
}

/// The text of a read from `offset`, or why the offset does not fit.
fn text_from(read: &LogRead, offset: u64) -> ApiResult<String> {
    let len = read.len.unwrap_or(0).max(0) as u64;
    match &read.rest {
        _ if offset > len => Err(bad_offset(offset, len)),
        None => Ok(String::new()),
        Some(rest) => String::from_utf8(rest.clone()).map_err(|_| {
            ApiError::bad_request(
                "invalid_offset",
                format!("offset {offset} is inside a UTF-8 character of the log"),
                "/offset",
            )
        }),
    }
}

fn bad_offset(offset: u64, len: u64) -> ApiError {
    ApiError::bad_request(
        "invalid_offset",
        format!("offset {offset} is beyond the end of the log ({len} bytes)"),
        "/offset",
    )
}

/// Why a step that cannot write a log has none: a cached step never ran
/// here, a skipped one not at all, a map step's instances have them.
fn no_logs(run: RunId, q: &LogsQuery, status: Option<StepStatus>, steps: &[Step]) -> ApiError {
    let step = &q.step;
    let (message, path) = match (status, q.attempt) {
        (None, _) => (format!("run {run} has no step {step:?}"), "/step"),
        (Some(StepStatus::Cached), _) => (
            format!(
                "step {step:?} came from the cache: it did not run in this run, so it has no logs"
            ),
            "/step",
        ),
        (Some(_), Some(n)) => (
            format!("step {step:?} has no logs from run attempt {n}"),
            "/attempt",
        ),
        (Some(StepStatus::Skipped), None) => (
            format!("step {step:?} was skipped: it did not run"),
            "/step",
        ),
        (Some(status), None) => match instance_of(steps, step) {
            Some(instance) => (
                format!(
                    "step {step:?} ({status}) has no logs of its own: its instances have them, e.g. {instance:?}"
                ),
                "/step",
            ),
            None => (
                format!("step {step:?} ({status}) has no logs: the engine reported none"),
                "/step",
            ),
        },
    };
    ApiError::NotFound {
        message,
        path: Some(path.to_owned()),
    }
}

/// A map instance (`train[0]`) or search trial (`train-t0`) of `step`.
fn instance_of<'a>(steps: &'a [Step], step: &str) -> Option<&'a str> {
    steps.iter().map(|s| s.name.as_str()).find(|name| {
        name.strip_prefix(step).is_some_and(|rest| {
            rest.starts_with('[')
                || rest
                    .strip_prefix("-t")
                    .is_some_and(|id| id.starts_with(|c: char| c.is_ascii_digit()))
        })
    })
}

/// One reader following a live log. Holds no database connection between
/// reads.
struct Follower {
    state: AppState,
    watch: Watch,
    run_attempt: Option<i32>,
    /// The step attempt whose log is followed.
    attempt: Option<i32>,
    /// Where in that log this follower began, and where it is.
    start: u64,
    offset: u64,
    /// A digest of the text sent of that log (`start..offset`).
    sent: blake3::Hasher,
    ends_line: bool,
}

impl Follower {
    /// `first`, then the log as it grows, until the step ends, the run is
    /// gone or the server stops; a database failure cuts the stream short
    /// (the client sees an unfinished body).
    fn stream(
        mut self,
        first: String,
    ) -> impl futures::Stream<Item = Result<Bytes, std::io::Error>> + Send {
        async_stream::stream! {
            if !first.is_empty() {
                yield Ok(self.sent_now(first));
            }
            let mut watched = Instant::now();
            loop {
                tokio::select! {
                    _ = self.state.shutdown.cancelled() => return,
                    _ = tokio::time::sleep(FOLLOW_POLL) => {}
                }
                let renew = watched.elapsed() >= WATCH_AGAIN;
                let read = match self.read(self.offset, renew).await {
                    Ok(Some(read)) => read,
                    Ok(None) => return,
                    Err(e) => {
                        tracing::warn!(error = %e, "following a log failed");
                        yield Err(std::io::Error::other("the log could not be read"));
                        return;
                    }
                };
                if renew {
                    watched = Instant::now();
                }
                if !read.live {
                    match self.last_words(read).await {
                        Ok(Some(text)) => yield Ok(Bytes::from(text)),
                        Ok(None) => {}
                        Err(e) => {
                            tracing::warn!(error = %e, "following a log failed");
                            yield Err(std::io::Error::other("the log could not be read"));
                        }
                    }
                    return;
                }
                if self.attempt.is_none() && self.offset == 0 {
                    // The step started after the follower came: its first
                    // attempt's log needs no header.
                    self.attempt = read.attempt;
                }
                if read.attempt != self.attempt {
                    // The step runs again: its next attempt's log follows.
                    let attempt = read.attempt.unwrap_or_default();
                    let newline = if self.ends_line { "" } else { "\n" };
                    let header = format!("{newline}=== attempt {attempt} ===\n");
                    self.attempt = read.attempt;
                    (self.start, self.offset, self.sent) = (0, 0, blake3::Hasher::new());
                    self.ends_line = true;
                    yield Ok(Bytes::from(header));
                    continue;
                }
                match read.rest.map(String::from_utf8) {
                    Some(Ok(text)) if !text.is_empty() => yield Ok(self.sent_now(text)),
                    _ => {}
                }
            }
        }
    }

    fn sent_now(&mut self, text: String) -> Bytes {
        self.sent.update(text.as_bytes());
        self.offset += text.len() as u64;
        self.ends_line = text.ends_with('\n');
        Bytes::from(text)
    }

    /// The log from `offset`, in a transaction of its own (asking the
    /// scheduler to keep tailing when `renew`).
    async fn read(&self, offset: u64, renew: bool) -> Result<Option<LogRead>, sqlx::Error> {
        let w = &self.watch;
        let at = i64::try_from(offset).unwrap_or(i64::MAX);
        let mut tx = self.state.store.tenant(w.tenant).await?;
        let read = logs::read(&mut tx, w.tenant, w.run, &w.step, self.run_attempt, at).await?;
        if renew && read.as_ref().is_some_and(|r| r.live) {
            logs::watch(&mut tx, w).await?;
        }
        tx.commit().await?;
        Ok(read)
    }

    /// What remains to send once the step ended: the rest of its stored
    /// log when that extends what was sent, else a marker and all of it.
    async fn last_words(&self, ended: LogRead) -> Result<Option<String>, sqlx::Error> {
        if ended.len.is_none() {
            return Ok(None);
        }
        // The whole stored log (a bounded tail), to check what was sent.
        let Some(LogRead {
            rest: Some(bytes),
            attempt,
            ..
        }) = self.read(0, false).await?
        else {
            return Ok(None);
        };
        let stored = String::from_utf8_lossy(&bytes);
        let (start, offset) = (self.start as usize, self.offset as usize);
        // Nothing sent yet (the step ended before a read saw it run): the
        // stored log is all there is to send.
        let nothing_sent = offset == 0;
        let extends = nothing_sent
            || attempt == self.attempt
                && stored.is_char_boundary(offset)
                && (stored.as_bytes().get(start..offset))
                    .is_some_and(|sent| blake3::hash(sent) == self.sent.finalize());
        if extends {
            let rest = &stored[offset..];
            return Ok((!rest.is_empty()).then(|| rest.to_owned()));
        }
        let newline = if self.ends_line { "" } else { "\n" };
        Ok(Some(format!("{newline}{STORED_LOG}{stored}")))
    }
}
