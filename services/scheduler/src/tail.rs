//! Live logs on demand: readers of a running step's log notify
//! [`LOG_WATCH_CHANNEL`]; the replica driving that run tails the step
//! (every [`TAIL_EVERY`], until [`WATCH_FOR`] after the last notification
//! or the step's end), appending what the engine reports as new to the
//! step's stored log. Steps nobody watches cost nothing.

use crate::Context;
use couler_engines::{EngineAdapter, EngineError, LogCursor, RunSpec};
use couler_store::logs::{self, LOG_WATCH_CHANNEL, Watch};
use couler_store::{RunId, StepStatus, TenantId};
use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// How often a watched step's new log is read and stored.
const TAIL_EVERY: Duration = Duration::from_secs(1);
/// How long a step is tailed after the last notification (readers repeat
/// theirs about every 10 s).
const WATCH_FOR: Duration = Duration::from_secs(30);

/// A run (or stage of a run) this replica has started on an engine.
#[derive(Clone)]
struct Source {
    id: u64,
    tenant: TenantId,
    engine: Arc<dyn EngineAdapter>,
    spec: RunSpec,
    engine_ref: String,
    /// The steps of a stage; none: the whole run.
    steps: Option<BTreeSet<String>>,
}

impl Source {
    fn has(&self, step: &str) -> bool {
        let base = step.split_once('[').map_or(step, |(name, _)| name);
        self.steps.as_ref().is_none_or(|s| s.contains(base))
    }
}

/// Where this replica's runs can be tailed, and the steps being tailed.
#[derive(Default)]
pub struct Tails {
    sources: Mutex<HashMap<RunId, Vec<Source>>>,
    next: AtomicU64,
    /// Tailed steps, until when.
    watched: Mutex<HashMap<(RunId, String), Instant>>,
}

/// A run (stage) open to tailing until dropped.
pub struct Registration {
    tails: Arc<Tails>,
    run: RunId,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        let mut sources = self.tails.sources.lock().expect("tails lock");
        if let Some(list) = sources.get_mut(&self.run) {
            list.retain(|s| s.id != self.id);
            if list.is_empty() {
                sources.remove(&self.run);
            }
        }
    }
}

impl Tails {
    /// Opens a started run (`steps`: a stage's) to tailing.
    pub fn register(
        self: &Arc<Self>,
        tenant: TenantId,
        run: RunId,
        engine: Arc<dyn EngineAdapter>,
        spec: &RunSpec,
        engine_ref: &str,
        steps: Option<BTreeSet<String>>,
    ) -> Registration {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let source = Source {
            id,
            tenant,
            engine,
            spec: spec.clone(),
            engine_ref: engine_ref.to_owned(),
            steps,
        };
        let mut sources = self.sources.lock().expect("tails lock");
        sources.entry(run).or_default().push(source);
        Registration {
            tails: self.clone(),
            run,
            id,
        }
    }

    fn source(&self, tenant: TenantId, run: RunId, step: &str) -> Option<Source> {
        let sources = self.sources.lock().expect("tails lock");
        (sources.get(&run)?.iter())
            .rev()
            .find(|s| s.tenant == tenant && s.has(step))
            .cloned()
    }

    /// (Re)arms the watch of a step; true when no tail runs for it yet.
    fn arm(&self, run: RunId, step: &str) -> bool {
        let mut watched = self.watched.lock().expect("tails lock");
        (watched.insert((run, step.to_owned()), Instant::now() + WATCH_FOR)).is_none()
    }

    /// Whether the watch still holds; ends it otherwise.
    fn holds(&self, run: RunId, step: &str) -> bool {
        let mut watched = self.watched.lock().expect("tails lock");
        let key = (run, step.to_owned());
        match watched.get(&key) {
            Some(until) if *until > Instant::now() => true,
            _ => {
                watched.remove(&key);
                false
            }
        }
    }

    fn end(&self, run: RunId, step: &str) {
        let mut watched = self.watched.lock().expect("tails lock");
        watched.remove(&(run, step.to_owned()));
    }
}

/// Listens for watch requests until `shutdown`, tailing the steps of runs
/// this replica drives.
pub async fn listen(ctx: Arc<Context>, shutdown: CancellationToken) {
    let mut listener = match sqlx::postgres::PgListener::connect_with(ctx.store.pool()).await {
        Ok(l) => l,
        Err(e) => {
            tracing::error!(error = %e, "cannot listen for log watchers; live logs are off");
            return;
        }
    };
    if let Err(e) = listener.listen(LOG_WATCH_CHANNEL).await {
        tracing::error!(error = %e, "cannot listen for log watchers; live logs are off");
        return;
    }
    loop {
        let note = tokio::select! {
            _ = shutdown.cancelled() => return,
            note = listener.recv() => note,
        };
        let watch = match note {
            Ok(n) => Watch::parse(n.payload()),
            // PgListener reconnects on the next recv; readers notify again.
            Err(e) => {
                tracing::warn!(error = %e, "log watch listener lost its connection");
                tokio::time::sleep(Duration::from_millis(200)).await;
                continue;
            }
        };
        let Some(watch) = watch else { continue };
        if ctx
            .tails
            .source(watch.tenant, watch.run, &watch.step)
            .is_some()
            && ctx.tails.arm(watch.run, &watch.step)
        {
            tokio::spawn(tail(ctx.clone(), watch, shutdown.clone()));
        }
    }
}

/// Tails one step while its watch holds and it may still write.
#[tracing::instrument(skip_all, fields(run = %w.run, step = %w.step))]
async fn tail(ctx: Arc<Context>, w: Watch, shutdown: CancellationToken) {
    let mut cursor: Option<LogCursor> = None;
    // Read from the engine but not stored yet (the database was away).
    let mut pending = String::new();
    let mut tick = tokio::time::interval(TAIL_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => break,
            _ = tick.tick() => {}
        }
        if !ctx.tails.holds(w.run, &w.step) {
            return;
        }
        let Some(source) = ctx.tails.source(w.tenant, w.run, &w.step) else {
            break;
        };
        let state = async {
            let mut tx = ctx.store.tenant(w.tenant).await?;
            let state = logs::step_state(&mut tx, w.tenant, w.run, &w.step).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(state)
        }
        .await;
        let attempt = match state {
            Ok(Some((StepStatus::Running, attempt))) => attempt,
            Ok(Some((StepStatus::Pending, _))) => continue,
            Ok(_) => break,
            Err(e) => {
                tracing::debug!(error = %e, "reading the step's state failed");
                continue;
            }
        };
        let cursor = match &mut cursor {
            Some(c) if c.attempt == attempt as u32 => c,
            stale => {
                pending.clear();
                stale.insert(LogCursor::new(attempt as u32))
            }
        };
        let read = source
            .engine
            .logs_since(&source.spec, &source.engine_ref, &w.step, cursor)
            .await;
        match read {
            Ok(text) => pending.push_str(&text),
            Err(EngineError::Unsupported { feature, .. }) => {
                tracing::debug!(%feature, "the engine serves no live logs");
                break;
            }
            Err(e) => tracing::debug!(error = %e, "reading the step's log failed"),
        }
        if pending.is_empty() {
            continue;
        }
        let stored = async {
            let mut tx = ctx.store.tenant(w.tenant).await?;
            let ok = logs::append(
                &mut tx, w.tenant, w.run, &ctx.owner, &w.step, attempt, &pending,
            )
            .await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(ok)
        }
        .await;
        match stored {
            Ok(_) => pending.clear(),
            Err(e) => tracing::debug!(error = %e, "storing the step's live log failed"),
        }
    }
    ctx.tails.end(w.run, &w.step);
}
