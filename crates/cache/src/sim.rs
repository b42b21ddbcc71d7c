//! A trace-driven simulator that compares caching policies on iterative
//! ML-development traces (the bench binary `sim` prints the comparison).
//!
//! - here: the shared vocabulary — cache [`Key`]s, workflow [`Dag`]s, a
//!   [`Trace`] of workflow [`Execution`]s and its [`TraceShape`].
//! - [`trace`]: the paper's three scenarios and a seeded generator of
//!   traces in which data scientists iterate on them.
//! - [`policy`]: the [`Policy`] trait and No cache, Cache-all, FIFO, LRU and
//!   Couler (importance-based admission and eviction, Algorithm 2).
//! - [`replay`](mod@replay): running a trace against a policy.
//!
//! The execution model is serial: executing a workflow visits its steps in
//! topological order; a step whose key is cached is a hit and costs
//! nothing, any other step runs (its cost is added to the total time) and
//! its output is offered to the policy. A step is looked up once the steps
//! it reads have hit or run, as the scheduler does by cutting the plan
//! before steps the tenant ran before ([`Lookups`] also replays lookups
//! made only before the run).

pub mod policy;
pub mod replay;
pub mod trace;

pub use policy::{
    CacheAll, Couler, Fifo, Lru, NoCache, Oracle, Policy, PolicyKind, StepContext, Store,
};
pub use replay::{Lookups, Outcome, replay, replay_with};
pub use trace::{ChangeMix, Scenario, TraceConfig, generate};

use std::collections::HashSet;
use std::fmt;

/// The cache key of a step's output: a content hash of the step's spec and
/// its upstream keys, so a change propagates to everything downstream.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key([u8; 32]);

impl Key {
    pub fn digest<'a>(spec: &str, upstream: impl IntoIterator<Item = &'a Key>) -> Key {
        let mut hasher = blake3::Hasher::new();
        hasher.update(&(spec.len() as u64).to_le_bytes());
        hasher.update(spec.as_bytes());
        for key in upstream {
            hasher.update(&key.0);
        }
        Key(*hasher.finalize().as_bytes())
    }

    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for b in &self.0[..6] {
            write!(f, "{b:02x}")?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SimError {
    #[error("step {step} reads step {upstream}, which does not come before it")]
    NotTopological { step: usize, upstream: usize },
}

/// What a step does; it sets the plausible ranges of its cost and size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum StepKind {
    Load,
    Preprocess,
    Features,
    Train,
    Evaluate,
    Report,
}

impl StepKind {
    pub const ALL: [StepKind; 6] = [
        StepKind::Load,
        StepKind::Preprocess,
        StepKind::Features,
        StepKind::Train,
        StepKind::Evaluate,
        StepKind::Report,
    ];

    pub fn name(self) -> &'static str {
        match self {
            StepKind::Load => "load",
            StepKind::Preprocess => "preprocess",
            StepKind::Features => "features",
            StepKind::Train => "train",
            StepKind::Evaluate => "evaluate",
            StepKind::Report => "report",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct StepSpec {
    pub name: String,
    pub kind: StepKind,
    /// Indexes of the steps this one reads; all come earlier.
    pub upstream: Vec<usize>,
}

impl StepSpec {
    pub fn new(name: impl Into<String>, kind: StepKind, upstream: Vec<usize>) -> StepSpec {
        StepSpec {
            name: name.into(),
            kind,
            upstream,
        }
    }
}

/// A workflow template: steps in topological order.
#[derive(Debug, Clone, PartialEq)]
pub struct Dag {
    name: String,
    steps: Vec<StepSpec>,
    downstream: Vec<Vec<usize>>,
}

impl Dag {
    pub fn new(name: impl Into<String>, steps: Vec<StepSpec>) -> Result<Dag, SimError> {
        let mut downstream = vec![Vec::new(); steps.len()];
        for (step, spec) in steps.iter().enumerate() {
            for &upstream in &spec.upstream {
                if upstream >= step {
                    return Err(SimError::NotTopological { step, upstream });
                }
                downstream[upstream].push(step);
            }
        }
        Ok(Dag {
            name: name.into(),
            steps,
            downstream,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn steps(&self) -> &[StepSpec] {
        &self.steps
    }

    pub fn len(&self) -> usize {
        self.steps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.steps.is_empty()
    }

    pub fn downstream(&self, step: usize) -> &[usize] {
        &self.downstream[step]
    }

    /// The steps with `kind`, in order.
    pub fn of_kind(&self, kind: StepKind) -> Vec<usize> {
        (0..self.len())
            .filter(|&i| self.steps[i].kind == kind)
            .collect()
    }
}

/// One step of one execution: what it would cost to run and produce.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepRun {
    pub key: Key,
    /// Seconds.
    pub cost: f64,
    /// Bytes of output.
    pub size: u64,
}

/// What a data scientist changed before this execution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Change {
    /// The user's first run of the workflow.
    First,
    /// Nothing: an exact rerun.
    Rerun,
    /// Back to the configuration before the last change.
    Revert,
    /// New hyperparameters for this many models.
    Hyperparameters(usize),
    /// A new evaluation protocol (every evaluation step).
    Evaluation,
    /// A data loading, preprocessing or feature step changed.
    Preprocessing,
}

/// One workflow execution: the template it instantiates and, per step of
/// the template, its key, cost and size.
#[derive(Debug, Clone, PartialEq)]
pub struct Execution {
    /// Index into [`Trace::dags`].
    pub dag: usize,
    pub user: usize,
    pub change: Change,
    pub steps: Vec<StepRun>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    pub dags: Vec<Dag>,
    pub executions: Vec<Execution>,
}

/// Summary numbers of a trace.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TraceShape {
    pub executions: usize,
    pub steps: usize,
    pub distinct_keys: usize,
    /// Bytes of all distinct outputs: what Cache-all ends up holding.
    pub distinct_bytes: u64,
    /// Executions in the working-set window.
    pub window: usize,
    /// Distinct bytes touched by the last `window` executions, averaged
    /// over the trace (after the first window) and at its largest.
    pub working_set_mean: u64,
    pub working_set_max: u64,
}

impl Trace {
    /// The trace's shape, with the working set measured over windows of
    /// `window` executions.
    pub fn shape(&self, window: usize) -> TraceShape {
        let window = window.max(1);
        let mut distinct = HashSet::new();
        let mut distinct_bytes = 0;
        for run in self.executions.iter().flat_map(|e| &e.steps) {
            if distinct.insert(run.key) {
                distinct_bytes += run.size;
            }
        }
        let (mut sum, mut count, mut max) = (0u128, 0u128, 0u64);
        for end in window..=self.executions.len() {
            let mut seen = HashSet::new();
            let bytes: u64 = self.executions[end - window..end]
                .iter()
                .flat_map(|e| &e.steps)
                .filter(|run| seen.insert(run.key))
                .map(|run| run.size)
                .sum();
            sum += u128::from(bytes);
            count += 1;
            max = max.max(bytes);
        }
        TraceShape {
            executions: self.executions.len(),
            steps: self.executions.iter().map(|e| e.steps.len()).sum(),
            distinct_keys: distinct.len(),
            distinct_bytes,
            window,
            working_set_mean: sum.checked_div(count).unwrap_or(0) as u64,
            working_set_max: max,
        }
    }
}
