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
    /// Missed steps that did not run: nothing that ran read their output
    /// ([`Lookups::Records`]).
    pub skipped: u64,
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

/// When a step is looked up, and whether a missed step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookups {
    /// As the scheduler does: every step is keyed before the run, through
    /// the index's records of steps computed before (kept after their
    /// bytes are evicted), and a missed step runs only if its output is
    /// needed — nothing reads it, or a step that runs does. A missed step
    /// that is not needed is skipped.
    Records,
    /// Once the steps it reads have hit or run, and every missed step
    /// runs: the scheduler without records (it cuts the plan before steps
    /// the tenant ran before; see `couler_optimizer::CutForCache`).
    AfterUpstream,
    /// Only before the run: a step is keyed only when every step it reads
    /// is a hit, so a miss makes everything downstream run. What the
    /// scheduler did before plans were cut for the cache.
    BeforeRun,
}

/// Runs every execution of `trace`, in order, against `policy`, as the
/// scheduler does ([`Lookups::Records`]).
pub fn replay(trace: &Trace, policy: &mut dyn Policy) -> Outcome {
    replay_with(trace, policy, Lookups::Records)
}

/// Running counts of a replay.
#[derive(Default)]
struct Tally {
    steps: u64,
    hits: u64,
    skipped: u64,
    total_time: f64,
    saved_by_kind: BTreeMap<StepKind, f64>,
    /// Per key: the last execution that requested it, and its step's kind.
    last_request: HashMap<Key, (usize, StepKind)>,
}

impl Tally {
    /// Looks the step up (execution `index`); whether it hit.
    fn look(&mut self, policy: &mut dyn Policy, ctx: &StepContext<'_>, index: usize) -> bool {
        let kind = self.request(ctx, index);
        let hit = policy.lookup(ctx);
        if hit {
            self.hits += 1;
            *self.saved_by_kind.entry(kind).or_default() += ctx.run().cost;
        }
        hit
    }

    /// Counts the step as requested (execution `index`); its kind.
    fn request(&mut self, ctx: &StepContext<'_>, index: usize) -> StepKind {
        self.steps += 1;
        let kind = ctx.dag.steps()[ctx.step].kind;
        self.last_request.insert(ctx.run().key, (index, kind));
        kind
    }

    /// Runs the step and offers its output.
    fn run(&mut self, policy: &mut dyn Policy, ctx: &StepContext<'_>) {
        self.total_time += ctx.run().cost;
        policy.offer(ctx);
    }
}

/// Runs every execution of `trace`, in order, against `policy`.
pub fn replay_with(trace: &Trace, policy: &mut dyn Policy, lookups: Lookups) -> Outcome {
    let mut tally = Tally::default();
    let (mut idle_sum, mut idle_samples) = (0.0, 0);
    for (index, execution) in trace.executions.iter().enumerate() {
        let dag = &trace.dags[execution.dag];
        let ctx = |step| StepContext {
            dag,
            runs: &execution.steps,
            step,
        };
        let mut hit = vec![false; dag.len()];
        let mut ran = vec![false; dag.len()];
        match lookups {
            Lookups::Records => {
                hit = (0..dag.len())
                    .map(|step| tally.look(policy, &ctx(step), index))
                    .collect();
                for step in (0..dag.len()).rev() {
                    let downstream = dag.downstream(step);
                    ran[step] =
                        !hit[step] && (downstream.is_empty() || downstream.iter().any(|&d| ran[d]));
                }
                for step in (0..dag.len()).filter(|&s| ran[s]) {
                    tally.run(policy, &ctx(step));
                }
            }
            Lookups::AfterUpstream | Lookups::BeforeRun => {
                for step in 0..dag.len() {
                    let keyed = lookups == Lookups::AfterUpstream
                        || dag.steps()[step].upstream.iter().all(|&u| hit[u]);
                    if keyed {
                        hit[step] = tally.look(policy, &ctx(step), index);
                    } else {
                        tally.request(&ctx(step), index);
                    }
                    if !hit[step] {
                        ran[step] = true;
                        tally.run(policy, &ctx(step));
                    }
                }
            }
        }
        tally.skipped += (0..dag.len()).filter(|&s| !hit[s] && !ran[s]).count() as u64;
        let store = policy.store();
        if index >= IDLE_AFTER && store.used() > 0 {
            let idle: u64 = store
                .entries()
                .filter(|(key, _)| {
                    tally
                        .last_request
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
        if let Some(&(_, kind)) = tally.last_request.get(key) {
            *held_by_kind.entry(kind).or_default() += size;
        }
    }
    Outcome {
        policy: policy.name(),
        budget: policy.budget(),
        steps: tally.steps,
        hits: tally.hits,
        skipped: tally.skipped,
        total_time: tally.total_time,
        peak_bytes: store.peak(),
        final_bytes: store.used(),
        evictions: store.evictions(),
        rejections: store.rejections(),
        idle_share: if idle_samples == 0 {
            0.0
        } else {
            idle_sum / f64::from(idle_samples)
        },
        saved_by_kind: tally.saved_by_kind,
        held_by_kind,
    }
}
