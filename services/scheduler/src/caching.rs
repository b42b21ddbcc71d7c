//! The scheduler's side of the cache index: after a step succeeded and its
//! outputs were stored and digested, offer its result (only schedulers
//! write entries); before a run starts, look its steps up (see `driver`),
//! and again when each later stage of a split or cut run starts (`stages`).
//! While a run computes steps whose keys are known, it holds [`Claims`] on
//! them, so that a run about to compute the same waits for the results.

use couler_cache::{CacheIndex, CacheKey, Cached, Entry};
use couler_engines::{StepMetrics, StepPhase, StepState};
use couler_optimizer::{Action, Plan, StepOutputs};
use couler_store::step_cache;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio_util::sync::{CancellationToken, DropGuard};

/// What the lookups behind `reuse` said of each step, as the run's page
/// shows it (`run_step_cache`).
pub(crate) fn verdict_rows(reuse: &couler_planner::Reuse) -> Vec<step_cache::NewVerdict> {
    (reuse.verdicts().iter())
        .map(|(step, v)| step_cache::NewVerdict {
            step: step.clone(),
            status: v.status.as_str(),
            reason: v.reason.clone(),
            key: v.key.map(|k| k.0),
            saved_ms: v.saved_ms.map(|ms| ms.min(i64::MAX as u64) as i64),
        })
        .collect()
}

/// The keys of the plan's steps that will run and can be keyed before they
/// do (every step they read is reused), by step name.
pub fn computing(plan: &Plan, tenant: &str, shares: bool) -> Vec<(String, CacheKey)> {
    let reused: HashMap<&str, &StepOutputs> = (plan.steps.iter())
        .filter_map(|s| match &s.action {
            Action::Reuse { outputs, .. } => Some((s.name.as_str(), outputs)),
            Action::Run => None,
        })
        .collect();
    (plan.workflow.steps.iter().zip(&plan.steps))
        .filter(|(_, p)| matches!(p.action, Action::Run))
        .filter_map(|(step, _)| {
            let scope = couler_cache::key::scope_of(step, tenant, shares);
            let key = couler_cache::key::key(step, &scope, |name| reused.get(name).copied());
            Some((step.name.clone(), key.ok()?))
        })
        .collect()
}

/// A run's claims on the keys of steps it is computing: renewed while the
/// run is driven here, each let go once its step ended (a result offered
/// to the cache first), the rest when the run's driver is done.
pub struct Claims {
    index: CacheIndex,
    holder: String,
    by_step: Mutex<HashMap<String, CacheKey>>,
    _renewal: DropGuard,
}

impl Claims {
    /// Claims held by `holder` (the run), renewed from now on.
    pub fn held(index: CacheIndex, holder: String, keys: Vec<(String, CacheKey)>) -> Arc<Claims> {
        let stop = CancellationToken::new();
        let every = index.config().claim_ttl / 3;
        let claims = Arc::new(Claims {
            index: index.clone(),
            holder: holder.clone(),
            by_step: Mutex::new(keys.into_iter().collect()),
            _renewal: stop.clone().drop_guard(),
        });
        let weak = Arc::downgrade(&claims);
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    _ = stop.cancelled() => return,
                    _ = tokio::time::sleep(every) => {}
                }
                // Only what is still held: a released claim stays released.
                let Some(keys) = weak.upgrade().map(|claims| claims.keys()) else {
                    return;
                };
                index.renew_claims(&keys, &holder).await;
            }
        });
        claims
    }

    fn keys(&self) -> Vec<CacheKey> {
        let by_step = self.by_step.lock().expect("claims lock");
        let mut keys: Vec<CacheKey> = by_step.values().cloned().collect();
        keys.sort();
        keys.dedup();
        keys
    }

    /// Adds claims the run has just taken.
    pub fn add(&self, keys: Vec<(String, CacheKey)>) {
        self.by_step.lock().expect("claims lock").extend(keys);
    }

    /// Claims the keys of more steps, those no other run claimed.
    async fn extend(&self, keys: Vec<(String, CacheKey)>) {
        if keys.is_empty() {
            return;
        }
        let wanted: Vec<CacheKey> = keys.iter().map(|(_, k)| *k).collect();
        let Some(held) = self.index.claim_free(&wanted, &self.holder).await else {
            return;
        };
        let mut by_step = self.by_step.lock().expect("claims lock");
        by_step.extend(
            keys.into_iter()
                .zip(held)
                .filter_map(|(k, h)| h.then_some(k)),
        );
    }

    /// Lets go of `step`'s claim, if the run holds one (unless another
    /// step still computing has the same key).
    pub async fn release(&self, step: &str) {
        let key = {
            let mut by_step = self.by_step.lock().expect("claims lock");
            match by_step.remove(step) {
                Some(key) if !by_step.values().any(|k| *k == key) => key,
                _ => return,
            }
        };
        self.index.release_claims(&[key], &self.holder).await;
    }
}

impl Drop for Claims {
    fn drop(&mut self) {
        let keys = self.keys();
        if keys.is_empty() {
            return;
        }
        let (index, holder) = (self.index.clone(), std::mem::take(&mut self.holder));
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move { index.release_claims(&keys, &holder).await });
        }
    }
}

/// What a driver knows to key and score a finished step.
pub struct Writer {
    pub index: CacheIndex,
    pub tenant: String,
    pub shares: bool,
    pub workflow: String,
    pub default_ttl: Duration,
    dag: couler_ir::Dag,
    position: HashMap<String, usize>,
    /// Outputs and costs of finished steps, by name.
    finished: HashMap<String, (StepOutputs, Option<StepMetrics>)>,
    claims: Option<Arc<Claims>>,
    keys: Option<KeyRecorder>,
}

/// Where the keys of the steps a run computed are noted
/// (`run_step_cache`), so that a later hit on one names the run.
#[derive(Clone)]
pub struct KeyRecorder {
    pub store: couler_store::Store,
    pub tenant: couler_store::TenantId,
    pub run: couler_store::RunId,
}

impl KeyRecorder {
    async fn note(&self, step: &str, key: &CacheKey) {
        let noted = async {
            let mut tx = self.store.tenant(self.tenant).await?;
            step_cache::note_key(&mut tx, self.tenant, self.run, step, &key.0).await?;
            tx.commit().await
        };
        if let Err(e) = noted.await {
            tracing::warn!(error = %e, step, "could not note the key of a computed step");
        }
    }
}

impl Writer {
    pub fn new(
        index: CacheIndex,
        plan: &Plan,
        tenant: String,
        shares: bool,
        default_ttl: Duration,
        claims: Option<Arc<Claims>>,
        keys: Option<KeyRecorder>,
    ) -> Option<Writer> {
        let dag = plan.dag().ok()?.into_owned();
        let position = plan
            .workflow
            .steps
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        let mut finished = HashMap::new();
        for step in &plan.steps {
            if let Action::Reuse { outputs, .. } = &step.action {
                finished.insert(step.name.clone(), (outputs.clone(), None));
            }
        }
        Some(Writer {
            index,
            tenant,
            shares,
            workflow: plan.workflow.name.clone(),
            default_ttl,
            dag,
            position,
            finished,
            claims,
            keys,
        })
    }

    /// Takes in a step's report, off the run's path: a newly succeeded main
    /// step's result is offered to the cache, and a step that ended lets go
    /// of its claim — after the steps it feeds that can be keyed now were
    /// claimed and its result offered, so that a run waiting for it finds
    /// the result and waits for those steps in turn.
    pub fn report(&mut self, plan: &Plan, state: &StepState) {
        let ended = !matches!(state.phase, StepPhase::Pending | StepPhase::Running);
        let offer = self.observe(plan, state);
        let claims = self.claims.clone().filter(|_| ended);
        let next = match (&claims, state.phase) {
            (Some(_), StepPhase::Succeeded | StepPhase::Cached) => {
                self.keyable_downstream(plan, &state.name)
            }
            _ => Vec::new(),
        };
        if offer.is_none() && claims.is_none() {
            return;
        }
        let index = self.index.clone();
        let tenant = self.tenant.clone();
        let step = state.name.clone();
        let keys = self.keys.clone().filter(|_| offer.is_some());
        tokio::spawn(async move {
            if let Some(claims) = &claims {
                claims.extend(next).await;
            }
            if let Some((key, entry)) = &offer {
                let outcome = index.admit(key, entry, &tenant).await;
                tracing::debug!(step = %entry.step, ?outcome, "offered a result to the cache");
                if let Some(keys) = &keys {
                    keys.note(&step, key).await;
                }
            }
            if let Some(claims) = &claims {
                claims.release(&step).await;
            }
            if offer.is_some() {
                // The step had to run: a miss in the tenant's statistics.
                metrics::counter!("couler_cache_misses_total").increment(1);
                index.record_misses(&tenant, 1).await;
            }
        });
    }

    /// The steps `step` feeds that will run and can be keyed now that it
    /// finished (every step they read has), with their keys.
    fn keyable_downstream(&self, plan: &Plan, step: &str) -> Vec<(String, CacheKey)> {
        let Some(&index) = self.position.get(step) else {
            return Vec::new();
        };
        (self.dag.steps.downstream(index as u32).iter())
            .map(|&d| d as usize)
            .filter(|&d| matches!(plan.steps[d].action, Action::Run))
            .filter_map(|d| {
                let next = &plan.workflow.steps[d];
                let scope = couler_cache::key::scope_of(next, &self.tenant, self.shares);
                let outputs = |name: &str| self.finished.get(name).map(|(o, _)| o);
                let key = couler_cache::key::key(next, &scope, outputs).ok()?;
                Some((next.name.clone(), key))
            })
            .collect()
    }

    /// Notes a step's report; for a newly succeeded main step, returns the
    /// entry to offer to the cache.
    fn observe(&mut self, plan: &Plan, state: &StepState) -> Option<(CacheKey, Entry)> {
        if !matches!(state.phase, StepPhase::Succeeded | StepPhase::Cached) {
            return None;
        }
        self.finished
            .insert(state.name.clone(), (state.outputs.clone(), state.metrics));
        if state.phase != StepPhase::Succeeded {
            return None;
        }
        let &index = self.position.get(&state.name)?;
        let step = &plan.workflow.steps[index];
        if !reports_all_outputs(step, &state.outputs) {
            // An engine that does not store and digest what the step
            // declares (Tekton's artifacts stay in the run's volume; Argo's
            // without a mounted bucket) leaves nothing a reuser could read.
            tracing::debug!(step = %step.name, "a result without all its outputs is not cached");
            return None;
        }
        let scope = couler_cache::key::scope_of(step, &self.tenant, self.shares);
        let key =
            couler_cache::key::key(step, &scope, |name| self.finished.get(name).map(|(o, _)| o))
                .ok()?;
        let metrics = state.metrics.unwrap_or_default();
        let cost = |name: &str| -> f64 {
            self.finished
                .get(name)
                .and_then(|(_, m)| m.as_ref())
                .map_or(metrics.wall_ms as f64 / 1000.0, |m| {
                    m.wall_ms as f64 / 1000.0
                })
        };
        // L(u) is the step's own cost: its key needs its ancestors' outputs,
        // so they hit, ran or are on record, and none is recomputed for its
        // sake (see `couler_cache::importance`).
        let reconstruction = metrics.wall_ms as f64 / 1000.0;
        let downstream: f64 = self
            .dag
            .steps
            .downstream(index as u32)
            .iter()
            .map(|&d| cost(&plan.workflow.steps[d as usize].name))
            .sum();
        let ttl = step
            .cache
            .as_ref()
            .and_then(|c| c.ttl)
            .map_or(self.default_ttl, |t| t.as_std());
        let entry = Entry {
            cached: Cached {
                size: state.outputs.artifacts.values().map(|a| a.size).sum(),
                outputs: state.outputs.clone(),
                wall_ms: metrics.wall_ms,
                cpu_ms: metrics.cpu_ms,
                max_rss_kb: metrics.max_rss_kb,
                reconstruction,
                downstream,
                created_at: std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_secs() as i64),
            },
            producer: self.tenant.clone(),
            ttl_secs: ttl.as_secs().max(1),
            image: step.image().unwrap_or_default().to_owned(),
            version: step.cache.as_ref().and_then(|c| c.version.clone()),
            workflow: self.workflow.clone(),
            step: step.name.clone(),
        };
        Some((key, entry))
    }
}

/// Whether `outputs` hold every output `step` declares, its artifacts
/// stored and digested: a cache hit missing one would fail whatever reads
/// it.
fn reports_all_outputs(step: &couler_ir::Step, outputs: &StepOutputs) -> bool {
    step.outputs.iter().all(|declared| {
        declared
            .parameters
            .iter()
            .all(|p| outputs.parameters.get(&p.name).is_some())
            && declared.artifacts.iter().all(|a| {
                outputs
                    .artifacts
                    .get(&a.name)
                    .is_some_and(|r| !r.digest.is_empty() && !r.location.is_empty())
            })
    })
}

/// How often a scheduler reclaims what expired in the index.
const SWEEP_EVERY: Duration = Duration::from_secs(60);
/// How soon a sweep that found Redis away (or not yet connected, as when
/// the scheduler starts) tries again.
const SWEEP_RETRY: Duration = Duration::from_secs(1);
/// Keys one sweep call reclaims at most (Redis runs each call atomically).
const SWEEP_BATCH: u32 = 1000;

/// Reclaims, every [`SWEEP_EVERY`], what expired entries and records left
/// in the index (their bytes, scores and set memberships), and reports the
/// bytes held against the budget, until `shutdown`. Admissions reclaim as
/// they go; this keeps an idle index's byte total and statistics true, and
/// its sets from growing. A sweep that could not reach Redis is retried
/// after [`SWEEP_RETRY`].
pub async fn sweep(index: CacheIndex, shutdown: tokio_util::sync::CancellationToken) {
    metrics::gauge!("couler_cache_budget_bytes").set(index.config().budget_bytes as f64);
    let mut wait = Duration::ZERO;
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tokio::time::sleep(wait) => {}
        }
        wait = if sweep_once(&index, &shutdown).await {
            SWEEP_EVERY
        } else {
            SWEEP_RETRY
        };
    }
}

/// One sweep: false when Redis could not be reached.
async fn sweep_once(index: &CacheIndex, shutdown: &tokio_util::sync::CancellationToken) -> bool {
    loop {
        let Some(due) = index.sweep(SWEEP_BATCH).await else {
            return false;
        };
        if due > 0 {
            metrics::counter!("couler_cache_reclaimed_total").increment(due);
            tracing::debug!(keys = due, "reclaimed expired cache keys");
        }
        if due < u64::from(SWEEP_BATCH) || shutdown.is_cancelled() {
            break;
        }
    }
    let Some(bytes) = index.bytes().await else {
        return false;
    };
    metrics::gauge!("couler_cache_bytes").set(bytes as f64);
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_optimizer::{ArtifactRef, Named};

    const WORKFLOW: &str = "apiVersion: couler.dev/v1alpha1
name: produce-consume
steps:
  - name: produce
    container: {image: alpine, command: [sh, -c, 'echo 1 > /tmp/p; echo x > /tmp/m']}
    outputs:
      parameters: [{name: p, path: /tmp/p}]
      artifacts: [{name: model, path: /tmp/m}]
  - name: consume
    inputs: {artifacts: [{name: model, from: '{{steps.produce.outputs.artifacts.model}}', path: /tmp/in}]}
    container: {image: alpine, command: [cat, /tmp/in]}
";

    fn succeeded(outputs: StepOutputs) -> StepState {
        StepState {
            name: "produce".into(),
            phase: StepPhase::Succeeded,
            attempt: 1,
            message: None,
            outputs,
            metrics: None,
            engine_ref: None,
            logs: None,
        }
    }

    #[test]
    fn a_result_without_every_declared_output_stored_is_not_offered() {
        let workflow = couler_ir::load(WORKFLOW, couler_ir::Format::Yaml).unwrap();
        let plan = couler_optimizer::Pipeline::default()
            .plan(workflow, &Default::default(), |_, f| f())
            .unwrap();
        let index = CacheIndex::new(couler_cache::SharedRedis::default(), Default::default());
        let writer = || {
            Writer::new(
                index.clone(),
                &plan,
                "tnt_a".into(),
                true,
                Duration::from_secs(60),
                None,
                None,
            )
            .unwrap()
        };
        let model = ArtifactRef {
            digest: "d".into(),
            size: 2,
            location: "s3://couler-artifacts/r/produce/model".into(),
        };
        let outputs = |parameter: bool, artifact: Option<ArtifactRef>| StepOutputs {
            result: None,
            parameters: Named::from_iter(parameter.then(|| ("p".to_owned(), "1".to_owned()))),
            artifacts: Named::from_iter(artifact.map(|a| ("model".to_owned(), a))),
        };
        let offered = |o: StepOutputs| writer().observe(&plan, &succeeded(o)).is_some();
        assert!(offered(outputs(true, Some(model.clone()))));
        // Tekton's artifacts, and Argo's without a mounted bucket, are not
        // reported.
        assert!(!offered(outputs(true, None)));
        let undigested = ArtifactRef {
            digest: String::new(),
            ..model.clone()
        };
        assert!(!offered(outputs(true, Some(undigested))));
        assert!(!offered(outputs(false, Some(model))));
    }

    #[test]
    fn steps_are_claimed_with_the_keys_they_will_be_offered_under() {
        let workflow = couler_ir::load(WORKFLOW, couler_ir::Format::Yaml).unwrap();
        let plan = |facts: &couler_optimizer::Facts| {
            couler_optimizer::Pipeline::default()
                .plan(workflow.clone(), facts, |_, f| f())
                .unwrap()
        };
        let produced = StepOutputs {
            result: None,
            parameters: Named::from_iter([("p".to_owned(), "1".to_owned())]),
            artifacts: Named::from_iter([(
                "model".to_owned(),
                ArtifactRef {
                    digest: "d".into(),
                    size: 2,
                    location: "s3://couler-artifacts/r/produce/model".into(),
                },
            )]),
        };
        let names = |keys: &[(String, CacheKey)]| -> Vec<String> {
            keys.iter().map(|(name, _)| name.clone()).collect()
        };
        // Before the run only `produce` has a key: `consume` reads it.
        let cold = plan(&Default::default());
        assert_eq!(names(&computing(&cold, "tnt_a", true)), ["produce"]);
        // With `produce` a hit, `consume` is keyed at planning…
        let facts = couler_optimizer::Facts {
            cache_hits: [("produce".to_owned(), (produced.clone(), "hit".to_owned()))].into(),
            ..Default::default()
        };
        let warm = computing(&plan(&facts), "tnt_a", true);
        assert_eq!(names(&warm), ["consume"]);
        // …and, in a run that computes `produce`, once it succeeded: under
        // the same key, so a run waiting for it finds the claim.
        let index = CacheIndex::new(couler_cache::SharedRedis::default(), Default::default());
        let mut writer = Writer::new(
            index,
            &cold,
            "tnt_a".into(),
            true,
            Duration::from_secs(60),
            None,
            None,
        )
        .unwrap();
        assert!(writer.keyable_downstream(&cold, "produce").is_empty());
        writer.observe(&cold, &succeeded(produced));
        assert_eq!(writer.keyable_downstream(&cold, "produce"), warm);
        // A tenant's private key differs from the shared one.
        assert_ne!(computing(&plan(&facts), "tnt_a", false), warm);
    }
}
