//! The schedule ticker, on every replica. One transaction claims due
//! schedules (`FOR UPDATE SKIP LOCKED`), and for each records its ticks,
//! creates their runs (idempotency key from the schedule's identity and the
//! tick's UTC instant) and advances it; time is the database's `now()`. A
//! replica killed anywhere before the commit rolls all of it back and
//! Postgres releases the row locks with the session, so another replica
//! redoes the same ticks with the same keys: nothing is lost or doubled.
//! The same loop releases backfill items, `max_active_runs` at a time.
//! It sleeps until the earliest due time, a `couler_schedules_changed`
//! notification, or 30 s.

use couler_ir::Parameter;
use couler_ir::scalar::ParamValue;
use couler_schedule::due::{self, SKIP_GRACE};
use couler_schedule::{Calendar, Instant, params};
use couler_store::backfills::{self, Releasing};
use couler_store::runs::{self, Created, NewRun, Source, Trigger, TriggerKind};
use couler_store::schedules::{self, Overlap, Schedule, rfc3339};
use couler_store::ticks::{self, Due, Outcome, TickKind};
use couler_store::{RunId, SCHEDULES_CHANNEL, Store, Tx, workflows};
use std::sync::OnceLock;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Schedules one transaction claims.
const CLAIM: i64 = 32;
/// Ticks one pass fires per schedule (the rest are due in the next pass).
const BATCH: usize = 16;
/// The longest sleep without a notification.
const MAX_WAIT: Duration = Duration::from_secs(30);

/// A failure injected for the chaos tests: with `COULER_FAILPOINT` set to
/// `ticker_before_commit` the process aborts right before committing a pass
/// that created runs.
fn failpoint(name: &str) {
    static SET: OnceLock<Option<String>> = OnceLock::new();
    if SET
        .get_or_init(|| std::env::var("COULER_FAILPOINT").ok())
        .as_deref()
        == Some(name)
    {
        tracing::error!(failpoint = name, "failpoint hit: aborting");
        std::process::abort();
    }
}

/// The ticker loop of one replica; `poll` is how soon it retries after a
/// failure or while backfills are releasing.
pub async fn run(store: Store, poll: Duration, shutdown: CancellationToken) {
    let mut listener = loop {
        match listen(&store).await {
            Ok(l) => break l,
            Err(e) => {
                tracing::warn!(error = %e, "ticker could not listen; retrying");
                tokio::select! {
                    _ = shutdown.cancelled() => return,
                    _ = tokio::time::sleep(Duration::from_secs(1)) => {}
                }
            }
        }
    };
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        let mut wait = MAX_WAIT;
        match drain(&store, &shutdown).await {
            Ok(releasing) if releasing => wait = poll,
            Ok(_) => {}
            Err(e) => {
                tracing::warn!(error = %e, "ticker pass failed");
                wait = poll;
            }
        }
        if let Ok(Some(secs)) = until_due(&store).await {
            wait = wait.min(Duration::from_secs_f64(secs.max(0.0)));
        }
        tokio::select! {
            _ = shutdown.cancelled() => return,
            note = listener.recv() => {
                if let Err(e) = note {
                    tracing::warn!(error = %e, "ticker listener lost its connection");
                    tokio::time::sleep(poll).await;
                }
            }
            _ = tokio::time::sleep(wait) => {}
        }
    }
}

async fn listen(store: &Store) -> Result<sqlx::postgres::PgListener, sqlx::Error> {
    let mut listener = sqlx::postgres::PgListener::connect_with(store.pool()).await?;
    listener.listen(SCHEDULES_CHANNEL).await?;
    Ok(listener)
}

/// Passes until nothing is due; whether backfills are still releasing.
async fn drain(store: &Store, shutdown: &CancellationToken) -> anyhow::Result<bool> {
    while !shutdown.is_cancelled() && tick_pass(store).await? > 0 {}
    Ok(backfill_pass(store).await? > 0)
}

async fn until_due(store: &Store) -> Result<Option<f64>, sqlx::Error> {
    let mut tx = store.platform().await?;
    let secs = ticks::seconds_until_due(&mut tx).await?;
    tx.commit().await?;
    Ok(secs)
}

/// A platform transaction a dead session cannot hold for long.
async fn begin(store: &Store) -> Result<Tx, sqlx::Error> {
    let mut tx = store.platform().await?;
    sqlx::query("SET LOCAL idle_in_transaction_session_timeout = '30s'")
        .execute(&mut *tx)
        .await?;
    Ok(tx)
}

/// One transaction over the due schedules; how many it handled.
#[tracing::instrument(name = "tick", skip_all)]
pub async fn tick_pass(store: &Store) -> anyhow::Result<usize> {
    let mut tx = begin(store).await?;
    let due = ticks::claim_due(&mut tx, CLAIM).await?;
    let mut fired = 0;
    for d in &due {
        fired += handle(&mut tx, d).await?;
    }
    if fired > 0 {
        failpoint("ticker_before_commit");
    }
    tx.commit().await?;
    if fired > 0 {
        metrics::counter!("couler_schedule_runs_created_total").increment(fired as u64);
    }
    Ok(due.len())
}

/// Handles one claimed schedule's due ticks; how many runs it created.
async fn handle(tx: &mut Tx, d: &Due) -> anyhow::Result<usize> {
    let s = &d.schedule;
    let settings = s.settings();
    let key = s.id.0.as_bytes();
    let Ok(calendar) = settings.calendar() else {
        tracing::warn!(schedule = %s.id, "a stored schedule no longer parses; it stops");
        ticks::advance(tx, s, None, None, None).await?;
        return Ok(0);
    };
    let mut policy = settings.policy();
    policy.batch = BATCH;
    let pass = due::due(&calendar, &policy, key, s.next_tick, d.now);
    let mut last = None;
    if let Some(m) = &pass.missed {
        let detail = match m.count {
            Some(n) => format!(
                "{n} tick(s) from {} through {} missed (catch-up {})",
                rfc3339(m.first),
                rfc3339(m.last),
                couler_schedule::Catchup::from(settings.catchup).as_str()
            ),
            None => format!(
                "ticks from {} through {} missed: older than the catch-up window ({} s)",
                rfc3339(m.first),
                rfc3339(m.last),
                settings.catchup_window_secs
            ),
        };
        ticks::record(
            tx,
            s,
            m.first,
            TickKind::Catchup,
            Outcome::SkippedMissed,
            Some(&detail),
        )
        .await?;
        metrics::counter!("couler_schedule_ticks_total", "outcome" => "skipped_missed")
            .increment(1);
        last = Some(m.last);
    }
    let mut created = 0;
    for &t in &pass.fire {
        last = Some(t);
        let kind = if d.now - t > SKIP_GRACE {
            TickKind::Catchup
        } else {
            TickKind::Scheduled
        };
        // A recorded instant was handled: the claim makes this rare, the
        // primary key makes it harmless.
        if !ticks::record(tx, s, t, kind, Outcome::Fired, None).await? {
            continue;
        }
        let (outcome, run, detail) = fire(tx, d, &calendar, t).await?;
        ticks::resolve(tx, s, t, outcome, run, detail.as_deref()).await?;
        let lag = (d.now - t).num_milliseconds() as f64 / 1000.0;
        metrics::histogram!("couler_schedule_tick_lag_seconds").record(lag);
        metrics::counter!("couler_schedule_ticks_total", "outcome" => outcome_name(outcome))
            .increment(1);
        if outcome == Outcome::Fired {
            created += 1;
            tracing::info!(schedule = %s.id, slug = %s.slug, nominal = %rfc3339(t), run = ?run, "schedule fired");
        }
    }
    let due_at = pass.next.map(|n| due::due_at(key, n, &policy));
    ticks::advance(tx, s, last, pass.next, due_at).await?;
    Ok(created)
}

fn outcome_name(o: Outcome) -> &'static str {
    match o {
        Outcome::Fired => "fired",
        Outcome::SkippedOverlap => "skipped_overlap",
        Outcome::SkippedMissed => "skipped_missed",
        Outcome::RejectedQuota => "rejected_quota",
        Outcome::Failed => "failed",
    }
}

/// One tick: the overlap policy, the tenant's queue quota, then the run.
async fn fire(
    tx: &mut Tx,
    d: &Due,
    calendar: &Calendar,
    t: Instant,
) -> anyhow::Result<(Outcome, Option<RunId>, Option<String>)> {
    let s = &d.schedule;
    let tenant = s.tenant_id;
    let active = ticks::active_runs(tx, tenant, s.id.0).await?;
    let mut detail = None;
    if !active.is_empty() {
        match s.overlap {
            Overlap::Allow => {}
            Overlap::Skip => {
                let text = format!(
                    "run {} of this schedule is still active (overlap: skip)",
                    active[0]
                );
                return Ok((Outcome::SkippedOverlap, None, Some(text)));
            }
            Overlap::CancelOther => {
                for run in &active {
                    runs::cancel(tx, tenant, *run).await?;
                }
                let ids: Vec<String> = active.iter().map(ToString::to_string).collect();
                detail = Some(format!(
                    "cancelled {} (overlap: cancel_other)",
                    ids.join(", ")
                ));
            }
        }
    }
    let max = i64::from(d.max_queued_runs);
    if runs::count_queued(tx, tenant, max).await? >= max {
        let text = format!("the tenant's queue is full ({max} queued runs)");
        return Ok((Outcome::RejectedQuota, None, Some(text)));
    }
    let trigger = Trigger {
        kind: TriggerKind::Schedule,
        id: Some(s.id.0),
        scheduled_for: Some(t),
    };
    let key = schedules::run_key(s.workflow_id, &s.slug, t);
    Ok(match make_run(tx, s, calendar, t, key, trigger).await? {
        Ok(run) => (Outcome::Fired, Some(run), detail),
        Err(why) => (Outcome::Failed, None, Some(why)),
    })
}

/// Creates the run of `s` for the instant `t` in `tx`: the workflow's
/// version (pinned, or the latest), the schedule's parameters with the
/// instant substituted and checked against the version's declarations.
/// `Err` says why no run could be made.
async fn make_run(
    tx: &mut Tx,
    s: &Schedule,
    calendar: &Calendar,
    t: Instant,
    key: String,
    trigger: Trigger,
) -> Result<Result<RunId, String>, sqlx::Error> {
    let reference = s.workflow_id.to_string();
    let Some(target) = workflows::for_run(tx, s.tenant_id, &reference, s.workflow_version).await?
    else {
        return Ok(Err(format!(
            "workflow {reference} has no version {:?}",
            s.workflow_version
        )));
    };
    if let Some(why) = missing_secret(tx, s.tenant_id, &target.secrets.0).await? {
        return Ok(Err(why));
    }
    let declared: Vec<Parameter> = match serde_json::from_value(target.parameters.0) {
        Ok(p) => p,
        Err(e) => return Ok(Err(format!("the workflow's parameters do not read: {e}"))),
    };
    let given = s
        .parameters
        .iter()
        .map(|(k, v)| (k.clone(), ParamValue(params::substitute(v, calendar, t))))
        .collect();
    let parameters = match couler_ir::params::resolve(&declared, &given) {
        Ok(p) => p,
        Err(problems) => return Ok(Err(problems.to_string())),
    };
    let mut new = NewRun::new(
        Source::Version {
            workflow_id: target.workflow_id,
            version: target.version,
        },
        &target.name,
        &target.ir_hash,
        &s.created_by,
    );
    new.parameters = parameters;
    new.labels = s.labels.0.clone();
    new.priority = s.priority;
    new.idempotency_key = Some(key);
    new.trigger = trigger;
    Ok(match runs::create(tx, s.tenant_id, &new).await? {
        Created::New(run) | Created::Existing(run) => Ok(run.id),
        Created::KeyReused => Err("the run's idempotency key is taken".into()),
    })
}

/// Why a run of a version reading `uses` cannot start: the first secret or
/// key the tenant does not have (as `POST /v1/runs` refuses such a run
/// before it is queued, a tick records it as failed instead of queueing a
/// run that fails at its step).
async fn missing_secret(
    tx: &mut Tx,
    tenant: couler_store::TenantId,
    uses: &[workflows::SecretUse],
) -> Result<Option<String>, sqlx::Error> {
    if uses.is_empty() {
        return Ok(None);
    }
    let names: Vec<String> = uses.iter().map(|u| u.name.clone()).collect();
    let have = couler_store::secrets::keys_of(tx, tenant, &names).await?;
    Ok(uses.iter().find_map(|u| {
        couler_store::secrets::Missing::of(&have, &u.name, &u.key)
            .map(|m| m.describe(&u.step_name, &u.name, &u.key))
    }))
}

/// One transaction over the running backfills; how many are running.
#[tracing::instrument(name = "backfill", skip_all)]
pub async fn backfill_pass(store: &Store) -> anyhow::Result<usize> {
    let mut tx = begin(store).await?;
    let running = backfills::claim_running(&mut tx, 8).await?;
    for r in &running {
        release(&mut tx, r).await?;
    }
    tx.commit().await?;
    Ok(running.len())
}

async fn release(tx: &mut Tx, r: &Releasing) -> anyhow::Result<()> {
    let b = &r.backfill;
    let room = i64::from(b.max_active_runs) - r.active;
    if room > 0 {
        let items = backfills::pending(tx, b, room).await?;
        if !items.is_empty() {
            let Some(s) = schedules::get_by_id(tx, b.tenant_id, b.schedule_id).await? else {
                return Ok(());
            };
            let Ok(calendar) = s.settings().calendar() else {
                return Ok(());
            };
            for t in items {
                let trigger = Trigger {
                    kind: TriggerKind::Backfill,
                    id: Some(b.id.0),
                    scheduled_for: Some(t),
                };
                let key = format!("backfill:{}:{}", b.id, rfc3339(t));
                let run = make_run(tx, &s, &calendar, t, key, trigger).await?;
                if let Err(why) = &run {
                    tracing::warn!(backfill = %b.id, nominal = %rfc3339(t), why, "backfill item not run");
                }
                backfills::release(tx, b, t, run.ok()).await?;
            }
        }
    }
    backfills::finish_if_released(tx, b).await?;
    Ok(())
}
