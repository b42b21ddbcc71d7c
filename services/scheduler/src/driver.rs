//! Driving one run: plan it (or recover its plan after a takeover), start it
//! on the tenant's engine, and persist what the engine reports until the run
//! ends, is cancelled, or the lease is lost or handed back.

use crate::Context;
use crate::caching::Claims;
use crate::deadline::{self, Deadline};
use crate::lease::{Control, Ticket};
use couler_cache::CacheKey;
use couler_engines::{RunOutcome, RunSpec, StepPhase, StepState, Update};
use couler_optimizer::{Plan, PlanError, ReuseStatus, StepOutputs};
use couler_store::scheduling::{self, Claim, Driving, StepWrite};
use couler_store::{RunId, RunStatus, StepStatus, TenantId};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tracing::Instrument;

pub async fn drive(
    ctx: Arc<Context>,
    claim: Claim,
    ticket: Ticket,
    mut control: mpsc::UnboundedReceiver<Control>,
) {
    let run = claim.run_id;
    if let Err(e) = drive_run(&ctx, &claim, &mut control).await {
        // The lease lapses and the run is taken over (possibly by us) and reconciled.
        tracing::error!(error = %format!("{e:#}"), run = %run, "driving the run failed; its lease will lapse");
    }
    ctx.held.remove(run, ticket);
}

async fn drive_run(
    ctx: &Context,
    claim: &Claim,
    control: &mut mpsc::UnboundedReceiver<Control>,
) -> anyhow::Result<()> {
    let (tenant, run) = (claim.tenant_id, claim.run_id);
    let driving = retrying("load run", || async {
        let mut tx = ctx.store.tenant(tenant).await?;
        let d = scheduling::load(&mut tx, tenant, run).await?;
        tx.commit().await?;
        Ok(d)
    })
    .await?;
    let Some(mut driving) = driving else {
        return Ok(());
    };
    continue_trace(&driving);
    let mut spec = RunSpec::new(
        tenant.to_string(),
        run.to_string(),
        driving.run.attempt.max(1) as u32,
    );
    spec.network = driving
        .step_network
        .as_deref()
        .and_then(couler_engines::Network::parse);
    let Some(engine) = ctx.engines.get(&driving.engine) else {
        let message = format!(
            "the {:?} engine is not available on this scheduler",
            driving.engine
        );
        return fail(ctx, tenant, run, driving.run.status, &message).await;
    };

    let (plan, resume, claims) = match driving.run.status {
        RunStatus::Planning => {
            // Planned again after waiting for other runs computing some of
            // its steps: their results are hits then.
            let (plan, claims, reuse) = loop {
                let couler_planner::Planned { plan, reuse } =
                    match plan(ctx, &driving, engine.as_ref()).await {
                        Ok(p) => p,
                        Err(e) => {
                            return fail(
                                ctx,
                                tenant,
                                run,
                                RunStatus::Planning,
                                &format!("planning failed: {e}"),
                            )
                            .await;
                        }
                    };
                match claim_keys(ctx, &driving, &plan).await {
                    Claimed::Held(claims) => break (Arc::new(plan), claims, reuse),
                    // The hits found count when the run is planned again.
                    Claimed::Computing(keys, steps) => {
                        drop(reuse);
                        if !wait_for_others(ctx, &driving, &keys, &steps, control).await? {
                            return Ok(());
                        }
                    }
                }
            };
            let json = serde_json::to_value(&*plan)?;
            let engine_name = engine.name();
            let restart = steps_run_again(&driving, &plan);
            let verdicts = crate::caching::verdict_rows(&reuse);
            let started = retrying("start run", || async {
                let mut tx = ctx.store.tenant(tenant).await?;
                let ok = scheduling::start_running(
                    &mut tx,
                    tenant,
                    run,
                    &ctx.owner,
                    &json,
                    engine_name,
                    &restart,
                )
                .await?;
                if ok {
                    couler_store::step_cache::record(&mut tx, tenant, run, &verdicts).await?;
                }
                tx.commit().await?;
                Ok(ok)
            })
            .await?;
            if !started {
                return Ok(());
            }
            // The run goes ahead with its hits: they count, once (a
            // scheduler taking the run over later plans it no more).
            if let Some(index) = &ctx.cache {
                reuse.count(index).await;
            }
            restart_steps(&mut driving, &restart);
            let kept = kept_instances(&driving, &plan, &restart);
            (plan, kept, claims)
        }
        // Taken over: the claims of the scheduler that planned it lapse.
        RunStatus::Running => match driving.plan.clone().map(serde_json::from_value::<Plan>) {
            Some(Ok(plan)) => (Arc::new(plan), resume_states(&driving), None),
            _ => {
                return fail(
                    ctx,
                    tenant,
                    run,
                    RunStatus::Running,
                    "the run's plan could not be recovered",
                )
                .await;
            }
        },
        _ => return Ok(()),
    };
    match crate::secrets::for_run(ctx, tenant, &plan.workflow).await? {
        Ok(values) => spec.secrets = values,
        Err(message) => return fail(ctx, tenant, run, RunStatus::Running, &message).await,
    }
    if plan.is_staged() {
        return crate::stages::drive(ctx, &driving, engine, spec, plan, claims, control).await;
    }

    let dispatch =
        tracing::info_span!("dispatch", engine = engine.name(), steps = plan.steps.len());
    let started = match engine
        .start(&spec, plan.clone(), resume)
        .instrument(dispatch)
        .await
    {
        Ok(s) => s,
        Err(e) => return fail(ctx, tenant, run, RunStatus::Running, &e.to_string()).await,
    };
    let engine_ref = started.engine_ref.clone();
    retrying("record engine handle", || async {
        let mut tx = ctx.store.tenant(tenant).await?;
        let ok = scheduling::set_engine_ref(&mut tx, tenant, run, &ctx.owner, &engine_ref).await?;
        tx.commit().await?;
        Ok(ok)
    })
    .await?;
    if driving.cancel_requested {
        engine.cancel(&spec, &engine_ref).await?;
    }
    let _tail = (ctx.tails).register(tenant, run, engine.clone(), &spec, &engine_ref, None);

    let mut writer = cache_writer(ctx, &driving, &plan, claims);
    let families = families(&plan);
    let mut tracker = Tracker::new(&driving);
    let mut deadline = Deadline::of(&driving, &plan.workflow);
    let mut updates = started.updates;
    loop {
        tokio::select! {
            biased;
            signal = control.recv() => match signal {
                Some(Control::Cancel) => {
                    tracing::info!("cancelling on request");
                    engine.cancel(&spec, &engine_ref).await?;
                }
                Some(Control::LeaseLost) | None => {
                    tracing::warn!("lease lost; another scheduler drives the run now");
                    return Ok(());
                }
                Some(Control::Shutdown) => {
                    hand_back(ctx, tenant, run).await;
                    return Ok(());
                }
            },
            _ = deadline::passes(&deadline) => {
                if let Some(d) = &mut deadline {
                    d.fire();
                    let message = d.message();
                    tracing::info!("the run's deadline passed; stopping it");
                    deadline::note(ctx, tenant, run, &message).await?;
                    tracker.expire(message.clone());
                    engine.expire(&spec, &engine_ref, &message).await?;
                }
            }
            update = updates.recv() => {
                let Some(first) = update else {
                    return fail(ctx, tenant, run, RunStatus::Running, "the engine stopped reporting before the run ended").await;
                };
                let mut writes = Vec::new();
                let mut finished = None;
                for update in drain(first, &mut updates) {
                    match update {
                        Update::Step(state) => {
                            if tracker.accept(&state, families.get(&state.name), &mut writes)
                                && let Some(cache) = &mut writer
                            {
                                cache.report(&plan, &state);
                            }
                        }
                        Update::Finished { outcome, message } => finished = Some((outcome, message)),
                    }
                }
                if !persist(ctx, tenant, run, &writes).await? {
                    return Ok(()); // another scheduler holds the run now
                }
                if let Some((outcome, message)) = finished {
                    let to = match outcome {
                        RunOutcome::Succeeded => RunStatus::Succeeded,
                        RunOutcome::Failed => RunStatus::Failed,
                        RunOutcome::Cancelled => RunStatus::Cancelled,
                    };
                    let (to, message) = deadline::outcome(deadline.as_ref(), to, message);
                    return finish(ctx, tenant, run, RunStatus::Running, to, message.as_deref()).await;
                }
            }
        }
    }
}

/// How often a run waiting for others' results looks whether they are done.
pub(crate) const WAIT_POLL: Duration = Duration::from_millis(500);

/// What claiming the keys of a plan's steps came to.
enum Claimed {
    /// The run computes its steps, holding claims on their keys (none
    /// without the cache index, or with Redis away).
    Held(Option<Arc<Claims>>),
    /// Other runs are computing some of them right now: these keys, of
    /// these steps; the run claimed nothing.
    Computing(Vec<CacheKey>, Vec<String>),
}

/// Claims the keys of the plan's steps that will run (all or none).
async fn claim_keys(ctx: &Context, d: &Driving, plan: &Plan) -> Claimed {
    let Some(index) = ctx.cache.as_ref().filter(|_| !d.cancel_requested) else {
        return Claimed::Held(None);
    };
    let keys = crate::caching::computing(plan, &d.run.tenant_id.to_string(), d.share_cache);
    if keys.is_empty() {
        return Claimed::Held(None);
    }
    let holder = d.run.id.to_string();
    let wanted: Vec<CacheKey> = keys.iter().map(|(_, k)| *k).collect();
    match index.claim(&wanted, &holder).await {
        Some(couler_cache::Claim::Held) => {
            Claimed::Held(Some(Claims::held(index.clone(), holder, keys)))
        }
        Some(couler_cache::Claim::Computing(taken)) => {
            let steps = (keys.iter())
                .filter(|(_, k)| taken.contains(k))
                .map(|(step, _)| step.clone())
                .collect();
            Claimed::Computing(taken, steps)
        }
        None => Claimed::Held(None),
    }
}

/// Waits while other runs compute `keys` (the keys of `steps`) — their
/// claims go when their steps end, or lapse when their schedulers die.
/// False when the run is no longer this scheduler's to drive: cancelled,
/// handed back, or its lease lost.
async fn wait_for_others(
    ctx: &Context,
    d: &Driving,
    keys: &[CacheKey],
    steps: &[String],
    control: &mut mpsc::UnboundedReceiver<Control>,
) -> anyhow::Result<bool> {
    let (tenant, run) = (d.run.tenant_id, d.run.id);
    let Some(index) = &ctx.cache else {
        return Ok(true);
    };
    note_waiting(ctx, d, RunStatus::Planning, steps).await?;
    loop {
        tokio::select! {
            biased;
            signal = control.recv() => match signal {
                Some(Control::Cancel) => {
                    let message = "cancelled while waiting for another run's results";
                    finish(ctx, tenant, run, RunStatus::Planning, RunStatus::Cancelled, Some(message)).await?;
                    return Ok(false);
                }
                Some(Control::LeaseLost) | None => return Ok(false),
                Some(Control::Shutdown) => {
                    hand_back(ctx, tenant, run).await;
                    return Ok(false);
                }
            },
            _ = tokio::time::sleep(WAIT_POLL) => {}
        }
        // Done, or Redis away (nothing to wait for then): plan again.
        if index.any_claimed(keys).await != Some(true) {
            return Ok(true);
        }
    }
}

/// Says that the run (in `status`) waits for another computing `steps`.
pub(crate) async fn note_waiting(
    ctx: &Context,
    d: &Driving,
    status: RunStatus,
    steps: &[String],
) -> anyhow::Result<()> {
    let (tenant, run) = (d.run.tenant_id, d.run.id);
    metrics::counter!("couler_cache_waits_total").increment(1);
    tracing::info!(?steps, "waiting for another run computing the same steps");
    let mut event = couler_store::events::NewEvent::run("run.waiting", status);
    event.message = Some(format!(
        "waiting for another run computing {} with the same inputs, to reuse the results",
        steps.join(", ")
    ));
    retrying("note the wait", || async {
        let mut tx = ctx.store.tenant(tenant).await?;
        couler_store::events::append(&mut tx, tenant, run, &event).await?;
        tx.commit().await
    })
    .await
}

/// The first update and whatever else is already waiting (up to a batch).
pub(crate) fn drain(first: Update, updates: &mut mpsc::Receiver<Update>) -> Vec<Update> {
    let mut batch = vec![first];
    while batch.len() < 512 {
        match updates.try_recv() {
            Ok(u) => batch.push(u),
            Err(_) => break,
        }
    }
    batch
}

/// Offers the plan's succeeded steps to the cache index.
pub(crate) fn cache_writer(
    ctx: &Context,
    d: &Driving,
    plan: &Plan,
    claims: Option<Arc<Claims>>,
) -> Option<crate::caching::Writer> {
    ctx.cache.as_ref().and_then(|index| {
        // A step's own TTL wins; then the tenant's default; then the platform's.
        let ttl = d.cache_ttl_secs.map_or(index.config().default_ttl, |t| {
            Duration::from_secs(t as u64)
        });
        crate::caching::Writer::new(
            index.clone(),
            plan,
            d.run.tenant_id.to_string(),
            d.share_cache,
            ttl,
            claims,
            Some(crate::caching::KeyRecorder {
                store: ctx.store.clone(),
                tenant: d.run.tenant_id,
                run: d.run.id,
            }),
        )
    })
}

/// Each runnable step's family (resource history), by name.
pub(crate) fn families(plan: &Plan) -> HashMap<String, String> {
    plan.workflow
        .steps
        .iter()
        .chain(&plan.workflow.on_exit)
        .filter_map(|s| Some((s.name.clone(), couler_planner::family(s)?)))
        .collect()
}

/// Writes step states; false when the lease was lost.
pub(crate) async fn persist(
    ctx: &Context,
    tenant: TenantId,
    run: RunId,
    writes: &[StepWrite],
) -> anyhow::Result<bool> {
    if writes.is_empty() {
        return Ok(true);
    }
    retrying("record steps", || async {
        let mut tx = ctx.store.tenant(tenant).await?;
        let ok = scheduling::write_steps(&mut tx, tenant, run, &ctx.owner, writes).await?;
        tx.commit().await?;
        Ok(ok)
    })
    .await
}

/// Builds the plan: the optimizer's passes with the cache index's hits,
/// the steps' history and the LLM's suggestions handed in.
async fn plan(
    ctx: &Context,
    d: &Driving,
    engine: &dyn couler_engines::EngineAdapter,
) -> Result<couler_planner::Planned, PlanError> {
    let workflow: couler_ir::Workflow = serde_json::from_value(d.ir.clone()).map_err(|e| {
        PlanError::Invalid(couler_ir::Problems(vec![couler_ir::Problem {
            path: String::new(),
            code: couler_ir::Code::InvalidType,
            message: e.to_string(),
        }]))
    })?;
    let sources = couler_planner::Sources {
        store: &ctx.store,
        cache: ctx.cache.as_ref(),
        llm: ctx.llm.as_ref(),
    };
    let request = couler_planner::Request {
        tenant: d.run.tenant_id,
        workflow,
        parameters: d.run.parameters.0.clone(),
        earlier: earlier_results(d),
        share_cache: d.share_cache,
        reads_artifacts: couler_engines::reads_artifacts_from(engine.name()),
        records_artifacts: engine.records_artifacts(),
        split_budget: couler_planner::split_budget(engine.name(), &d.split_budget),
    };
    couler_planner::plan(&sources, request)
        .instrument(tracing::info_span!("plan"))
        .await
}

/// Whether an earlier attempt finished the step (a retry keeps it).
fn finished(status: StepStatus) -> bool {
    matches!(
        status,
        StepStatus::Succeeded | StepStatus::Skipped | StepStatus::Cached
    )
}

/// The steps an earlier attempt finished that the plan runs again (retry
/// from failure): they start over, so that their new reports are taken.
fn steps_run_again(d: &Driving, plan: &Plan) -> Vec<String> {
    let runs: std::collections::HashSet<&str> = (plan.steps.iter())
        .filter(|s| matches!(s.action, couler_optimizer::Action::Run))
        .map(|s| s.name.as_str())
        .collect();
    (d.steps.iter())
        .filter(|step| finished(step.status) && runs.contains(step.name.as_str()))
        .map(|step| step.name.clone())
        .collect()
}

/// The finished map instances of steps a retry from failure runs again,
/// for the engine to keep instead of running them again (the local engine
/// does; see `EngineAdapter::start`). Only where nothing the step reads
/// runs again, so that its items and inputs are the earlier attempt's, and
/// not of steps in `restart` (finished steps run again as a whole).
fn kept_instances(d: &Driving, plan: &Plan, restart: &[String]) -> Vec<StepState> {
    let Ok(dag) = plan.dag() else {
        return Vec::new();
    };
    let runs = |i: usize| matches!(plan.steps[i].action, couler_optimizer::Action::Run);
    let keep: std::collections::HashSet<&str> = (0..dag.steps.len())
        .filter(|&i| runs(i) && !restart.contains(&plan.steps[i].name))
        .filter(|&i| (dag.steps.upstream(i as u32).iter()).all(|&up| !runs(up as usize)))
        .map(|i| plan.steps[i].name.as_str())
        .collect();
    (d.steps.iter())
        .filter(|r| finished(r.status))
        .filter(|r| {
            (r.name.split_once('['))
                .is_some_and(|(step, rest)| rest.ends_with(']') && keep.contains(step))
        })
        .map(resume_state)
        .collect()
}

/// What `start_running` wrote of the steps in `restart`, in the run's state.
fn restart_steps(d: &mut Driving, restart: &[String]) {
    for step in d.steps.iter_mut().filter(|r| restart.contains(&r.name)) {
        step.status = StepStatus::Pending;
        step.message = None;
        step.outputs = sqlx::types::Json(serde_json::json!({}));
        step.started_at = None;
        step.finished_at = None;
    }
}

/// Results an earlier attempt of the run keeps (retry from failure).
fn earlier_results(d: &Driving) -> std::collections::BTreeMap<String, (ReuseStatus, StepOutputs)> {
    d.steps
        .iter()
        .filter_map(|s| {
            let status = match s.status {
                StepStatus::Succeeded => ReuseStatus::Succeeded,
                StepStatus::Skipped => ReuseStatus::Skipped,
                StepStatus::Cached => ReuseStatus::Cached,
                _ => return None,
            };
            let outputs: StepOutputs =
                serde_json::from_value(s.outputs.0.clone()).unwrap_or_default();
            Some((s.name.clone(), (status, outputs)))
        })
        .collect()
}

/// The steps' last recorded states, for an engine to re-attach to.
fn resume_states(d: &Driving) -> Vec<StepState> {
    d.steps.iter().map(resume_state).collect()
}

pub(crate) fn resume_state(s: &couler_store::runs::Step) -> StepState {
    StepState {
        name: s.name.clone(),
        phase: phase_of(s.status),
        attempt: s.attempt.max(0) as u32,
        message: s.message.clone(),
        outputs: serde_json::from_value(s.outputs.0.clone()).unwrap_or_default(),
        metrics: None,
        engine_ref: s.engine_ref.clone(),
        logs: None,
    }
}

fn phase_of(s: StepStatus) -> StepPhase {
    match s {
        StepStatus::Pending => StepPhase::Pending,
        StepStatus::Running => StepPhase::Running,
        StepStatus::Succeeded => StepPhase::Succeeded,
        StepStatus::Failed => StepPhase::Failed,
        StepStatus::Skipped => StepPhase::Skipped,
        StepStatus::Cached => StepPhase::Cached,
        StepStatus::Cancelled => StepPhase::Cancelled,
    }
}

pub(crate) fn status_of(p: StepPhase) -> StepStatus {
    match p {
        StepPhase::Pending => StepStatus::Pending,
        StepPhase::Running => StepStatus::Running,
        StepPhase::Succeeded => StepStatus::Succeeded,
        StepPhase::Failed => StepStatus::Failed,
        StepPhase::Skipped => StepStatus::Skipped,
        StepPhase::Cached => StepStatus::Cached,
        StepPhase::Cancelled => StepStatus::Cancelled,
    }
}

/// Checks engine reports against the step lifecycle.
pub(crate) struct Tracker {
    known: HashMap<String, (StepStatus, u32)>,
    /// Why the run's deadline stopped it, once it did.
    expired: Option<String>,
}

impl Tracker {
    pub(crate) fn new(d: &Driving) -> Tracker {
        Tracker {
            known: d
                .steps
                .iter()
                .map(|s| (s.name.clone(), (s.status, s.attempt.max(0) as u32)))
                .collect(),
            expired: None,
        }
    }

    /// From now on, steps reported cancelled were stopped by the run's
    /// deadline (see `deadline::stopped`).
    pub(crate) fn expire(&mut self, reason: String) {
        self.expired = Some(reason);
    }

    /// Queues the writes of a legal report; false for a repeated or
    /// illegal one.
    pub(crate) fn accept(
        &mut self,
        state: &StepState,
        family: Option<&String>,
        writes: &mut Vec<StepWrite>,
    ) -> bool {
        let (from, attempt) = self
            .known
            .get(&state.name)
            .copied()
            .unwrap_or((StepStatus::Pending, 0));
        let stopped = (self.expired.as_deref()).and_then(|r| deadline::stopped(state, from, r));
        let state = stopped.as_ref().unwrap_or(state);
        let to = status_of(state.phase);
        let _span = tracing::info_span!("step", step = %state.name, from = %from, to = %to, attempt = state.attempt).entered();
        if from == to && state.attempt == attempt {
            return false; // a repeated report (e.g. after re-attaching)
        }
        // A new attempt of a running step is a retry: running → pending → running.
        if from == StepStatus::Running && to == StepStatus::Running {
            metrics::counter!("couler_step_retries_total").increment(1);
            writes.push(write(
                state,
                StepStatus::Pending,
                Some("retrying after a failed attempt".into()),
            ));
        } else if let Err(e) = from.transition(to) {
            metrics::counter!("couler_illegal_transitions_total").increment(1);
            tracing::warn!(error = %e, "ignoring an illegal step transition from the engine");
            return false;
        }
        if to.is_terminal() {
            metrics::counter!("couler_steps_finished_total", "status" => to.as_str()).increment(1);
        }
        let mut w = write(state, to, state.message.clone());
        w.family = family.cloned();
        writes.push(w);
        self.known.insert(state.name.clone(), (to, state.attempt));
        true
    }
}

pub(crate) fn write(state: &StepState, status: StepStatus, message: Option<String>) -> StepWrite {
    let m = state.metrics.unwrap_or_default();
    let measured = state.metrics.is_some();
    StepWrite {
        name: state.name.clone(),
        status,
        attempt: state.attempt as i32,
        message,
        outputs: serde_json::to_value(&state.outputs).unwrap_or_default(),
        engine_ref: state.engine_ref.clone(),
        wall_ms: measured.then_some(m.wall_ms as i64),
        cpu_ms: measured.then_some(m.cpu_ms as i64),
        max_rss_kb: measured.then_some(m.max_rss_kb as i64),
        exit_code: m.exit_code,
        logs: if status.is_terminal() {
            state.logs.clone()
        } else {
            None
        },
        family: None,
    }
}

pub(crate) async fn finish(
    ctx: &Context,
    tenant: TenantId,
    run: RunId,
    from: RunStatus,
    to: RunStatus,
    message: Option<&str>,
) -> anyhow::Result<()> {
    from.transition(to)?;
    let done = retrying("finish run", || async {
        let mut tx = ctx.store.tenant(tenant).await?;
        let ok = scheduling::finish(&mut tx, tenant, run, &ctx.owner, to, message).await?;
        tx.commit().await?;
        Ok(ok)
    })
    .await?;
    if done {
        metrics::counter!("couler_runs_finished_total", "status" => to.as_str()).increment(1);
        tracing::info!(status = %to, "run finished");
    }
    Ok(())
}

pub(crate) async fn fail(
    ctx: &Context,
    tenant: TenantId,
    run: RunId,
    from: RunStatus,
    message: &str,
) -> anyhow::Result<()> {
    tracing::warn!(message, "run failed");
    finish(ctx, tenant, run, from, RunStatus::Failed, Some(message)).await
}

pub(crate) async fn hand_back(ctx: &Context, tenant: TenantId, run: RunId) {
    let released = async {
        let mut tx = ctx.store.platform().await?;
        scheduling::release(&mut tx, &ctx.owner, tenant, run).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = released {
        tracing::warn!(error = %e, "handing the run back failed; its lease will lapse instead");
    }
}

/// Retries a database step through short outages (a dropped connection, a
/// restart), with backoff, for up to about half a minute.
pub(crate) async fn retrying<T, F, Fut>(what: &str, mut f: F) -> anyhow::Result<T>
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, sqlx::Error>>,
{
    let mut delay = Duration::from_millis(50);
    let mut waited = Duration::ZERO;
    loop {
        match f().await {
            Ok(v) => return Ok(v),
            Err(e) if waited < Duration::from_secs(30) && is_transient(&e) => {
                tracing::warn!(error = %e, retry_in = ?delay, "{what} failed; retrying");
                tokio::time::sleep(delay).await;
                waited += delay;
                delay = (delay * 2).min(Duration::from_secs(2));
            }
            Err(e) => return Err(anyhow::Error::new(e).context(what.to_owned())),
        }
    }
}

fn is_transient(e: &sqlx::Error) -> bool {
    match e {
        sqlx::Error::Io(_)
        | sqlx::Error::PoolTimedOut
        | sqlx::Error::PoolClosed
        | sqlx::Error::Protocol(_) => true,
        // Connection-class and shutdown SQLSTATEs.
        sqlx::Error::Database(db) => db
            .code()
            .is_some_and(|c| c.starts_with("08") || c.starts_with("57P")),
        _ => false,
    }
}

/// Joins the trace the API started for this run.
fn continue_trace(d: &Driving) {
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let carrier: HashMap<String, String> = d.trace_context.clone().into_iter().collect();
    let parent = opentelemetry::global::get_text_map_propagator(|p| p.extract(&carrier));
    let _ = tracing::Span::current().set_parent(parent);
}
