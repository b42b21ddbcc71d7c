//! Driving a staged plan (split into sub-workflows, or holding
//! hyperparameter searches): the optimizer's [`advance`] says which stages
//! run next; each is started on the engine as a run of its own, and every
//! stage's reports land on the one run the user sees.

use crate::Context;
use crate::caching::{Claims, Writer};
use crate::deadline::{self, Deadline};
use crate::driver::{Tracker, cache_writer, fail, families, finish, hand_back, persist, retrying};
use crate::lease::Control;
use couler_cache::CacheKey;
use couler_engines::{EngineAdapter, RunSpec, StepPhase, StepState, Update};
use couler_optimizer::stages::{Outcome, Progress, Settle, Stage, advance};
use couler_optimizer::{Action, Pass, Plan, ReuseStatus, StepOutputs};
use couler_planner::Reuse;
use couler_store::scheduling::{self, Driving};
use couler_store::{RunStatus, StepStatus};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{StreamExt, StreamMap};
use tracing::Instrument;

/// A stage the engine is running.
struct Running {
    spec: RunSpec,
    engine_ref: String,
    plan: Arc<Plan>,
    runs: BTreeSet<String>,
    families: HashMap<String, String>,
    cache: Option<Writer>,
    /// Open to live-log readers while it runs.
    _tail: crate::tail::Registration,
}

/// One update of a stage; `None` when its stream ended.
type Reports = std::pin::Pin<Box<dyn tokio_stream::Stream<Item = Option<Update>> + Send + Sync>>;

pub async fn drive(
    ctx: &Context,
    d: &Driving,
    engine: Arc<dyn EngineAdapter>,
    spec: RunSpec,
    plan: Arc<Plan>,
    claims: Option<Arc<Claims>>,
    control: &mut mpsc::UnboundedReceiver<Control>,
) -> anyhow::Result<()> {
    let (tenant, run) = (d.run.tenant_id, d.run.id);
    let dag = match plan.dag() {
        Ok(dag) => dag,
        Err(e) => {
            let message = format!("the run's plan is invalid: {e}");
            return fail(ctx, tenant, run, RunStatus::Running, &message).await;
        }
    };
    let mut driver = Staged {
        ctx,
        d,
        engine,
        spec,
        progress: progress_of(d),
        tracker: Tracker::new(d),
        cancelled: d.cancel_requested,
        reports: StreamMap::new(),
        running: HashMap::new(),
        claims,
        postponed: HashMap::new(),
    };
    let mut deadline = Deadline::of(d, &plan.workflow);
    loop {
        if let Some((outcome, message)) = driver.advance(&plan, &dag).await? {
            let to = match outcome {
                Outcome::Succeeded => RunStatus::Succeeded,
                Outcome::Failed => RunStatus::Failed,
                Outcome::Cancelled => RunStatus::Cancelled,
            };
            let (to, message) = deadline::outcome(deadline.as_ref(), to, message);
            return finish(ctx, tenant, run, RunStatus::Running, to, message.as_deref()).await;
        }
        if driver.running.is_empty() && driver.postponed.is_empty() {
            let message = "no stage of the run could start";
            return fail(ctx, tenant, run, RunStatus::Running, message).await;
        }
        tokio::select! {
            biased;
            signal = control.recv() => match signal {
                Some(Control::Cancel) => {
                    tracing::info!("cancelling on request");
                    driver.cancel().await;
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
                    driver.expire(message).await;
                }
            }
            Some((stage, report)) = driver.reports.next() => {
                let mut batch = vec![(stage, report)];
                while batch.len() < 512 {
                    match futures_now(&mut driver.reports) {
                        Some(item) => batch.push(item),
                        None => break,
                    }
                }
                if !driver.apply(batch).await? {
                    return Ok(()); // another scheduler holds the run now
                }
            }
            _ = tokio::time::sleep(crate::driver::WAIT_POLL), if !driver.postponed.is_empty() => {
                driver.start_postponed().await?;
            }
        }
    }
}

/// The next report if one is ready, without waiting.
fn futures_now(reports: &mut StreamMap<String, Reports>) -> Option<(String, Option<Update>)> {
    use std::task::{Context as TaskContext, Poll};
    let waker = std::task::Waker::noop();
    let mut cx = TaskContext::from_waker(waker);
    match tokio_stream::Stream::poll_next(std::pin::Pin::new(reports), &mut cx) {
        Poll::Ready(item) => item,
        Poll::Pending => None,
    }
}

struct Staged<'a> {
    ctx: &'a Context,
    d: &'a Driving,
    engine: Arc<dyn EngineAdapter>,
    spec: RunSpec,
    progress: BTreeMap<String, Progress>,
    tracker: Tracker,
    cancelled: bool,
    reports: StreamMap<String, Reports>,
    running: HashMap<String, Running>,
    /// The run's claims on what it computes (see `caching::Claims`).
    claims: Option<Arc<Claims>>,
    /// Stages waiting for other runs computing some of their steps, by id:
    /// the stage, the keys it waits for, and the hits it found (counted
    /// when it starts).
    postponed: HashMap<String, (Stage, Vec<CacheKey>, Option<Reuse>)>,
}

impl Staged<'_> {
    /// Settles, starts stages and records searches until nothing changes;
    /// returns the outcome once the run is over.
    async fn advance(
        &mut self,
        plan: &Plan,
        dag: &couler_ir::Dag,
    ) -> anyhow::Result<Option<(Outcome, Option<String>)>> {
        loop {
            // A postponed stage is not proposed again: it starts once the
            // runs it waits for are done.
            let active: BTreeSet<String> = (self.running.keys())
                .chain(self.postponed.keys())
                .cloned()
                .collect();
            let next = advance(plan, dag, &self.progress, self.cancelled, &active);
            if let Some(finish) = next.finish {
                return Ok(Some(finish));
            }
            let changed = !next.settle.is_empty() || !next.start.is_empty();
            let mut writes = Vec::new();
            for (name, settle) in next.settle {
                self.settle(name, settle, &mut writes);
            }
            if !persist(self.ctx, self.d.run.tenant_id, self.d.run.id, &writes).await? {
                anyhow::bail!("the lease was lost while settling steps");
            }
            if !next.tuned.is_empty() {
                let tuning: serde_json::Map<String, serde_json::Value> = next
                    .tuned
                    .iter()
                    .map(|(step, summary)| Ok((step.clone(), serde_json::to_value(summary)?)))
                    .collect::<Result<_, serde_json::Error>>()?;
                self.record_outputs(serde_json::json!({ "tuning": tuning }))
                    .await?;
            }
            for stage in next.start {
                self.start(stage).await?;
            }
            if !changed {
                return Ok(None);
            }
        }
    }

    /// A step the scheduler settles itself, through the same lifecycle
    /// checks as engine reports.
    fn settle(
        &mut self,
        name: String,
        settle: Settle,
        writes: &mut Vec<couler_store::scheduling::StepWrite>,
    ) {
        let state = |phase, message: String, outputs: StepOutputs| StepState {
            name: name.clone(),
            phase,
            attempt: 1,
            message: Some(message),
            outputs,
            metrics: None,
            engine_ref: None,
            logs: None,
        };
        let (phase, message, outputs) = match settle {
            Settle::Running(m) => (StepPhase::Running, m, StepOutputs::default()),
            Settle::Succeeded(outputs, m) => (StepPhase::Succeeded, m, outputs),
            Settle::Failed(m) => (StepPhase::Failed, m, StepOutputs::default()),
            Settle::Cancelled(m) => (StepPhase::Cancelled, m, StepOutputs::default()),
        };
        let pending = !matches!(self.progress.get(&name), Some(Progress::Running));
        if pending && matches!(phase, StepPhase::Succeeded | StepPhase::Failed) {
            let starting = state(StepPhase::Running, message.clone(), StepOutputs::default());
            self.tracker.accept(&starting, None, writes);
        }
        let report = state(phase, message, outputs);
        self.tracker.accept(&report, None, writes);
        self.note(&report);
    }

    /// Starts (or re-attaches to) one stage. A stage whose steps are looked
    /// up when it starts claims those that will run; if other runs are
    /// computing some of them, it waits (see [`Self::start_postponed`]).
    async fn start(&mut self, stage: Stage) -> anyhow::Result<()> {
        self.start_with(stage, None).await
    }

    /// [`Self::start`], for a stage that found the hits `earlier` before it
    /// was postponed (its plan reuses them already).
    async fn start_with(&mut self, stage: Stage, earlier: Option<Reuse>) -> anyhow::Result<()> {
        let Stage {
            id,
            plan,
            runs,
            look_up,
        } = stage;
        let plan = if look_up {
            let (plan, found) = self.with_cache_hits(plan).await;
            let reuse = earlier.into_iter().chain(found).reduce(Reuse::and);
            if let Some(keys) = self.computed_elsewhere(&plan).await? {
                let stage = Stage {
                    id: id.clone(),
                    plan,
                    runs,
                    look_up,
                };
                self.postponed.insert(id, (stage, keys, reuse));
                return Ok(());
            }
            if let (Some(index), Some(reuse)) = (&self.ctx.cache, reuse) {
                self.record_verdicts(&reuse).await?;
                reuse.count(index).await;
            }
            plan
        } else {
            plan
        };
        let plan = Arc::new(plan);
        // A stage whose every step the plan reuses has nothing for an
        // engine to run (Tekton refuses such a pipeline): its steps are
        // reported here, as an engine would report them.
        let reused: Option<Vec<StepState>> = (plan.steps.iter())
            .filter(|s| runs.contains(&s.name))
            .map(|s| match &s.action {
                Action::Reuse { status, outputs } => {
                    Some(couler_engines::reused_state(&s.name, *status, outputs))
                }
                Action::Run => None,
            })
            .collect();
        if let Some(states) = reused {
            let mut writes = Vec::new();
            for state in &states {
                if self.tracker.accept(state, None, &mut writes) {
                    self.note(state);
                }
            }
            persist(self.ctx, self.d.run.tenant_id, self.d.run.id, &writes).await?;
            return Ok(());
        }
        let spec = self.spec.stage(&id);
        let resume: Vec<StepState> = self
            .d
            .steps
            .iter()
            .filter(|s| runs.contains(&s.name))
            .map(crate::driver::resume_state)
            .collect();
        let span = tracing::info_span!("dispatch", engine = self.engine.name(), stage = %id, steps = runs.len());
        let started = match self
            .engine
            .start(&spec, plan.clone(), resume)
            .instrument(span)
            .await
        {
            Ok(started) => started,
            Err(e) => {
                // The stage's steps fail with the engine's refusal.
                let mut writes = Vec::new();
                for name in &runs {
                    if !matches!(self.progress.get(name), Some(Progress::Done(..))) {
                        self.settle(name.clone(), Settle::Failed(e.to_string()), &mut writes);
                    }
                }
                persist(self.ctx, self.d.run.tenant_id, self.d.run.id, &writes).await?;
                return Ok(());
            }
        };
        // Exit handlers run whatever ended the run, a cancel included.
        if self.cancelled && id != couler_optimizer::stages::EXIT_STAGE {
            self.engine.cancel(&spec, &started.engine_ref).await?;
        }
        let reports: Reports = Box::pin(
            ReceiverStream::new(started.updates)
                .map(Some)
                .chain(tokio_stream::once(None)),
        );
        self.reports.insert(id.clone(), reports);
        let cache = cache_writer(self.ctx, self.d, &plan, self.claims.clone());
        let (tenant, run) = (self.d.run.tenant_id, self.d.run.id);
        let tail = (self.ctx.tails).register(
            tenant,
            run,
            self.engine.clone(),
            &spec,
            &started.engine_ref,
            Some(runs.clone()),
        );
        self.running.insert(
            id,
            Running {
                spec,
                engine_ref: started.engine_ref,
                families: families(&plan),
                plan,
                runs,
                cache,
                _tail: tail,
            },
        );
        Ok(())
    }

    /// Claims the keys of the stage's steps that will run, all or none:
    /// the keys other runs are computing (the stage waits for them), or
    /// `None` when it may start.
    async fn computed_elsewhere(&mut self, plan: &Plan) -> anyhow::Result<Option<Vec<CacheKey>>> {
        let Some(index) = self.ctx.cache.as_ref().filter(|_| !self.cancelled) else {
            return Ok(None);
        };
        let tenant = self.d.run.tenant_id.to_string();
        let keys = crate::caching::computing(plan, &tenant, self.d.share_cache);
        if keys.is_empty() {
            return Ok(None);
        }
        let holder = self.d.run.id.to_string();
        let wanted: Vec<CacheKey> = keys.iter().map(|(_, k)| *k).collect();
        match index.claim(&wanted, &holder).await {
            Some(couler_cache::Claim::Computing(taken)) => {
                // Holding none of the stage's keys while it waits: two runs
                // never wait for each other.
                if let Some(claims) = &self.claims {
                    for (step, _) in &keys {
                        claims.release(step).await;
                    }
                }
                let steps: Vec<String> = (keys.iter())
                    .filter(|(_, k)| taken.contains(k))
                    .map(|(step, _)| step.clone())
                    .collect();
                crate::driver::note_waiting(self.ctx, self.d, RunStatus::Running, &steps).await?;
                Ok(Some(taken))
            }
            Some(couler_cache::Claim::Held) => {
                match &self.claims {
                    Some(claims) => claims.add(keys),
                    None => self.claims = Some(Claims::held(index.clone(), holder, keys)),
                }
                Ok(None)
            }
            None => Ok(None),
        }
    }

    /// Starts the postponed stages whose keys no other run holds any more
    /// (looked up again: they are hits now, unless the other run failed).
    async fn start_postponed(&mut self) -> anyhow::Result<()> {
        let Some(index) = self.ctx.cache.clone() else {
            return Ok(());
        };
        let ids: Vec<String> = self.postponed.keys().cloned().collect();
        for id in ids {
            let done = match self.postponed.get(&id) {
                Some((_, keys, _)) => index.any_claimed(keys).await != Some(true),
                None => false,
            };
            if done && let Some((stage, _, reuse)) = self.postponed.remove(&id) {
                self.start_with(stage, reuse).await?;
            }
        }
        Ok(())
    }

    /// Looks the stage's steps up in the cache index now that their
    /// upstream outputs are known (later parts of a split or cut run,
    /// trials), with the hits found (not counted yet).
    async fn with_cache_hits(&self, mut plan: Plan) -> (Plan, Option<Reuse>) {
        let Some(index) = &self.ctx.cache else {
            return (plan, None);
        };
        let asker = couler_cache::plan::Asker {
            tenant: &self.d.run.tenant_id.to_string(),
            shares: self.d.share_cache,
            reads: couler_engines::reads_artifacts_from(self.engine.name()),
        };
        let found = couler_planner::cache_hits(&plan, asker, index).await;
        let Ok(found) = found else {
            return (plan, None);
        };
        // The planner's own pass turns what was found into reused steps.
        let facts = couler_optimizer::Facts {
            cache_hits: found.hits,
            cache_not_needed: found.not_needed,
            ..Default::default()
        };
        if let Err(e) = couler_optimizer::UseCacheHits.apply(&mut plan, &facts) {
            tracing::warn!(error = %e, "the stage runs without its cache hits");
            return (plan, None);
        }
        (plan, Some(found.reuse))
    }

    /// Applies a batch of stage reports; false when the lease was lost.
    async fn apply(&mut self, batch: Vec<(String, Option<Update>)>) -> anyhow::Result<bool> {
        let mut writes = Vec::new();
        for (id, report) in batch {
            match report {
                Some(Update::Step(state)) => {
                    let Some(stage) = self.running.get_mut(&id) else {
                        continue;
                    };
                    // Stand-ins for other stages' steps report too: not ours.
                    if !stage.runs.contains(&state.name) {
                        continue;
                    }
                    let family = stage.families.get(&state.name);
                    if self.tracker.accept(&state, family, &mut writes) {
                        if let Some(cache) = &mut stage.cache {
                            cache.report(&stage.plan, &state);
                        }
                        self.note(&state);
                    }
                }
                Some(Update::Finished { .. }) | None => {
                    let Some(stage) = self.running.remove(&id) else {
                        continue;
                    };
                    self.reports.remove(&id);
                    // Whatever the engine left unreported did not run.
                    for name in &stage.runs {
                        let open =
                            matches!(self.progress.get(name), None | Some(Progress::Running));
                        if open {
                            let message = format!("stage {id} ended without finishing the step");
                            self.settle(name.clone(), Settle::Failed(message), &mut writes);
                        }
                    }
                }
            }
        }
        persist(self.ctx, self.d.run.tenant_id, self.d.run.id, &writes).await
    }

    /// Keeps what a step reported, for deciding the next stages.
    fn note(&mut self, state: &StepState) {
        let progress = match state.phase {
            StepPhase::Pending => {
                self.progress.remove(&state.name);
                return;
            }
            StepPhase::Running => Progress::Running,
            StepPhase::Succeeded => Progress::Done(ReuseStatus::Succeeded, state.outputs.clone()),
            StepPhase::Skipped => Progress::Done(ReuseStatus::Skipped, state.outputs.clone()),
            StepPhase::Cached => Progress::Done(ReuseStatus::Cached, state.outputs.clone()),
            StepPhase::Failed => Progress::Failed(state.message.clone().unwrap_or_default()),
            StepPhase::Cancelled => Progress::Cancelled,
        };
        self.progress.insert(state.name.clone(), progress);
    }

    /// Stops the run for its deadline: as a cancel, but the stages that
    /// run are told why, and the exit stage runs on.
    async fn expire(&mut self, reason: String) {
        self.cancelled = true;
        self.postponed.clear();
        self.tracker.expire(reason.clone());
        for (id, stage) in &self.running {
            if id == couler_optimizer::stages::EXIT_STAGE {
                continue;
            }
            if let Err(e) = (self.engine)
                .expire(&stage.spec, &stage.engine_ref, &reason)
                .await
            {
                tracing::warn!(error = %e, stage = ?stage.spec.stage, "stopping a stage failed");
            }
        }
    }

    async fn cancel(&mut self) {
        self.cancelled = true;
        // What waits for other runs never starts now.
        self.postponed.clear();
        for stage in self.running.values() {
            if let Err(e) = self.engine.cancel(&stage.spec, &stage.engine_ref).await {
                tracing::warn!(error = %e, stage = ?stage.spec.stage, "cancelling a stage failed");
            }
        }
    }

    /// Records what a stage's lookup said of its steps (the run's page).
    async fn record_verdicts(&self, reuse: &Reuse) -> anyhow::Result<()> {
        let (tenant, run) = (self.d.run.tenant_id, self.d.run.id);
        let verdicts = crate::caching::verdict_rows(reuse);
        if verdicts.is_empty() {
            return Ok(());
        }
        retrying("record cache verdicts", || async {
            let mut tx = self.ctx.store.tenant(tenant).await?;
            couler_store::step_cache::record(&mut tx, tenant, run, &verdicts).await?;
            tx.commit().await?;
            Ok(())
        })
        .await
    }

    async fn record_outputs(&self, outputs: serde_json::Value) -> anyhow::Result<()> {
        let (tenant, run) = (self.d.run.tenant_id, self.d.run.id);
        let held = retrying("record run outputs", || async {
            let mut tx = self.ctx.store.tenant(tenant).await?;
            let ok =
                scheduling::add_outputs(&mut tx, tenant, run, &self.ctx.owner, &outputs).await?;
            tx.commit().await?;
            Ok(ok)
        })
        .await?;
        anyhow::ensure!(held, "the lease was lost while recording the run's outputs");
        Ok(())
    }
}

/// What the run's steps recorded before this scheduler took over.
fn progress_of(d: &Driving) -> BTreeMap<String, Progress> {
    d.steps
        .iter()
        .filter_map(|s| {
            let outputs = || -> StepOutputs {
                serde_json::from_value(s.outputs.0.clone()).unwrap_or_default()
            };
            let progress = match s.status {
                StepStatus::Pending => return None,
                StepStatus::Running => Progress::Running,
                StepStatus::Succeeded => Progress::Done(ReuseStatus::Succeeded, outputs()),
                StepStatus::Skipped => Progress::Done(ReuseStatus::Skipped, outputs()),
                StepStatus::Cached => Progress::Done(ReuseStatus::Cached, outputs()),
                StepStatus::Failed => Progress::Failed(s.message.clone().unwrap_or_default()),
                StepStatus::Cancelled => Progress::Cancelled,
            };
            Some((s.name.clone(), progress))
        })
        .collect()
}
