//! Replaying a trace against a policy.

use super::policy::{Policy, StepContext};
use super::{Key, StepKind, Trace};
use std::collections::{BTreeMap, HashMap};

/// An entry not requested for this many executions counts as idle.
pub const IDLE_AFTER: usize = 50;

/// What one policy did over one trace.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub policy: &'static str,
    /// `None`: unbounded.
    pub budget: Option<u64>,
    /// Steps executed or hit.
    pub steps: u64,
    pub hits: u64,
    /// Seconds spent running steps, serially.
    pub total_time: f64,
    pub peak_bytes: u64,
    pub final_bytes: u64,
    pub evictions: u64,
    pub rejections: u64,
    /// Share of the cached bytes held by entries not requested in the last
    /// [`IDLE_AFTER`] executions, averaged over the executions after the
    /// first [`IDLE_AFTER`].
    pub idle_share: f64,
    /// Seconds of running that hits saved, by step kind.
    pub saved_by_kind: BTreeMap<StepKind, f64>,
    /// Bytes cached at the end, by step kind.
    pub held_by_kind: BTreeMap<StepKind, u64>,
}

impl Outcome {
    pub fn hit_ratio(&self) -> f64 {
        if self.steps == 0 {
            0.0
        } else {
            self.hits as f64 / self.steps as f64
        }
    }
}

/// When a step is looked up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookups {
    /// Once the steps it reads have hit or run, as the scheduler does for a
    /// step the tenant ran before (the plan is cut before it; see
    /// `couler_optimizer::CutForCache`).
    AfterUpstream,
    /// Only before the run: a step is keyed only when every step it reads
    /// is a hit, so a miss makes everything downstream run. What the
    /// scheduler did before plans were cut for the cache.
    BeforeRun,
}

/// Runs every execution of `trace`, in order, against `policy`, each step
/// looked up once the steps it reads have hit or run.
pub fn replay(trace: &Trace, policy: &mut dyn Policy) -> Outcome {
    replay_with(trace, policy, Lookups::AfterUpstream)
}

/// Runs every execution of `trace`, in order, against `policy`.
pub fn replay_with(trace: &Trace, policy: &mut dyn Policy, lookups: Lookups) -> Outcome {
    let (mut steps, mut hits, mut total_time) = (0, 0, 0.0);
    let mut saved_by_kind = BTreeMap::new();
    // Per key: the last execution that requested it, and its step's kind.
    let mut last_request: HashMap<Key, (usize, StepKind)> = HashMap::new();
    let (mut idle_sum, mut idle_samples) = (0.0, 0);
    for (index, execution) in trace.executions.iter().enumerate() {
        let dag = &trace.dags[execution.dag];
        let mut hit = vec![false; dag.len()];
        for step in 0..dag.len() {
            let ctx = StepContext {
                dag,
                runs: &execution.steps,
                step,
            };
            steps += 1;
            let kind = dag.steps()[step].kind;
            last_request.insert(ctx.run().key, (index, kind));
            let keyed = match lookups {
                Lookups::AfterUpstream => true,
                Lookups::BeforeRun => dag.steps()[step].upstream.iter().all(|&u| hit[u]),
            };
            if keyed && policy.lookup(&ctx) {
                hit[step] = true;
                hits += 1;
                *saved_by_kind.entry(kind).or_default() += ctx.run().cost;
            } else {
                total_time += ctx.run().cost;
                policy.offer(&ctx);
            }
        }
        let store = policy.store();
        if index >= IDLE_AFTER && store.used() > 0 {
            let idle: u64 = store
                .entries()
                .filter(|(key, _)| {
                    last_request
                        .get(key)
                        .is_none_or(|&(last, _)| last + IDLE_AFTER <= index)
                })
                .map(|(_, size)| size)
                .sum();
            idle_sum += idle as f64 / store.used() as f64;
            idle_samples += 1;
        }
    }
    let store = policy.store();
    let mut held_by_kind = BTreeMap::new();
    // Entries from before this replay (a policy replayed twice) have no kind.
    for (key, size) in store.entries() {
        if let Some(&(_, kind)) = last_request.get(key) {
            *held_by_kind.entry(kind).or_default() += size;
        }
    }
    Outcome {
        policy: policy.name(),
        budget: policy.budget(),
        steps,
        hits,
        total_time,
        peak_bytes: store.peak(),
        final_bytes: store.used(),
        evictions: store.evictions(),
        rejections: store.rejections(),
        idle_share: if idle_samples == 0 {
            0.0
        } else {
            idle_sum / f64::from(idle_samples)
        },
        saved_by_kind,
        held_by_kind,
    }
}
