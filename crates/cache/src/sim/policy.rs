//! Caching policies behind one trait: No cache, Cache-all (unbounded, the
//! upper bound), FIFO, LRU and Couler's importance-based admission and
//! eviction (paper Algorithm 2).

use super::{Dag, Key, StepRun};
use crate::importance::{self, Node, ReuseStats, Weights};
use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

/// The step being looked up or offered, within its execution.
#[derive(Debug, Clone, Copy)]
pub struct StepContext<'a> {
    pub dag: &'a Dag,
    /// The execution's steps, indexed like `dag`.
    pub runs: &'a [StepRun],
    pub step: usize,
}

impl StepContext<'_> {
    pub fn run(&self) -> &StepRun {
        &self.runs[self.step]
    }
}

/// What a cache holds, with its byte accounting.
#[derive(Debug, Clone, Default)]
pub struct Store {
    sizes: HashMap<Key, u64>,
    used: u64,
    peak: u64,
    evictions: u64,
    rejections: u64,
}

impl Store {
    pub fn contains(&self, key: &Key) -> bool {
        self.sizes.contains_key(key)
    }

    /// Cached keys and their sizes.
    pub fn entries(&self) -> impl Iterator<Item = (&Key, u64)> {
        self.sizes.iter().map(|(k, &size)| (k, size))
    }

    pub fn len(&self) -> usize {
        self.sizes.len()
    }

    pub fn is_empty(&self) -> bool {
        self.sizes.is_empty()
    }

    pub fn used(&self) -> u64 {
        self.used
    }

    pub fn peak(&self) -> u64 {
        self.peak
    }

    pub fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Outputs offered and not admitted.
    pub fn rejections(&self) -> u64 {
        self.rejections
    }

    fn insert(&mut self, key: Key, size: u64) {
        if let Some(old) = self.sizes.insert(key, size) {
            self.used -= old;
        }
        self.used += size;
        self.peak = self.peak.max(self.used);
    }

    fn evict(&mut self, key: &Key) {
        if let Some(size) = self.sizes.remove(key) {
            self.used -= size;
            self.evictions += 1;
        }
    }

    fn reject(&mut self) {
        self.rejections += 1;
    }
}

pub trait Policy {
    fn name(&self) -> &'static str;
    /// The byte budget; `None` for unbounded.
    fn budget(&self) -> Option<u64>;
    fn store(&self) -> &Store;
    /// Whether the step's output is cached; also records the request.
    fn lookup(&mut self, ctx: &StepContext<'_>) -> bool;
    /// Offers the output of a step that just ran.
    fn offer(&mut self, ctx: &StepContext<'_>);
}

/// The policies the simulator compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PolicyKind {
    NoCache,
    CacheAll,
    Fifo,
    Lru,
    Couler,
}

impl PolicyKind {
    pub const ALL: [PolicyKind; 5] = [
        PolicyKind::NoCache,
        PolicyKind::CacheAll,
        PolicyKind::Fifo,
        PolicyKind::Lru,
        PolicyKind::Couler,
    ];

    /// The policies that hold to the byte budget.
    pub const BUDGETED: [PolicyKind; 3] = [PolicyKind::Fifo, PolicyKind::Lru, PolicyKind::Couler];

    /// The policy, with `budget` bytes if it is budgeted.
    pub fn build(self, budget: u64) -> Box<dyn Policy> {
        match self {
            PolicyKind::NoCache => Box::new(NoCache::default()),
            PolicyKind::CacheAll => Box::new(CacheAll::default()),
            PolicyKind::Fifo => Box::new(Fifo::new(budget)),
            PolicyKind::Lru => Box::new(Lru::new(budget)),
            PolicyKind::Couler => Box::new(Couler::new(budget, Weights::default())),
        }
    }
}

#[derive(Debug, Default)]
pub struct NoCache {
    store: Store,
}

impl Policy for NoCache {
    fn name(&self) -> &'static str {
        "No cache"
    }
    fn budget(&self) -> Option<u64> {
        Some(0)
    }
    fn store(&self) -> &Store {
        &self.store
    }
    fn lookup(&mut self, _: &StepContext<'_>) -> bool {
        false
    }
    fn offer(&mut self, _: &StepContext<'_>) {
        self.store.reject();
    }
}

/// Keeps everything: the best any policy could do.
#[derive(Debug, Default)]
pub struct CacheAll {
    store: Store,
}

impl Policy for CacheAll {
    fn name(&self) -> &'static str {
        "Cache-all"
    }
    fn budget(&self) -> Option<u64> {
        None
    }
    fn store(&self) -> &Store {
        &self.store
    }
    fn lookup(&mut self, ctx: &StepContext<'_>) -> bool {
        self.store.contains(&ctx.run().key)
    }
    fn offer(&mut self, ctx: &StepContext<'_>) {
        let run = ctx.run();
        self.store.insert(run.key, run.size);
    }
}

/// Admits everything that fits the budget; evicts the oldest insertions.
#[derive(Debug)]
pub struct Fifo {
    budget: u64,
    store: Store,
    queue: VecDeque<Key>,
}

impl Fifo {
    pub fn new(budget: u64) -> Fifo {
        Fifo {
            budget,
            store: Store::default(),
            queue: VecDeque::new(),
        }
    }
}

impl Policy for Fifo {
    fn name(&self) -> &'static str {
        "FIFO"
    }
    fn budget(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn store(&self) -> &Store {
        &self.store
    }
    fn lookup(&mut self, ctx: &StepContext<'_>) -> bool {
        self.store.contains(&ctx.run().key)
    }
    fn offer(&mut self, ctx: &StepContext<'_>) {
        let run = ctx.run();
        if run.size > self.budget {
            return self.store.reject();
        }
        while self.store.used() + run.size > self.budget {
            let oldest = self.queue.pop_front().expect("a full cache has entries");
            self.store.evict(&oldest);
        }
        self.store.insert(run.key, run.size);
        self.queue.push_back(run.key);
    }
}

/// Admits everything that fits the budget; evicts the least recently used.
#[derive(Debug)]
pub struct Lru {
    budget: u64,
    store: Store,
    clock: u64,
    last_use: HashMap<Key, u64>,
    by_use: BTreeMap<u64, Key>,
}

impl Lru {
    pub fn new(budget: u64) -> Lru {
        Lru {
            budget,
            store: Store::default(),
            clock: 0,
            last_use: HashMap::new(),
            by_use: BTreeMap::new(),
        }
    }

    fn touch(&mut self, key: Key) {
        self.clock += 1;
        if let Some(old) = self.last_use.insert(key, self.clock) {
            self.by_use.remove(&old);
        }
        self.by_use.insert(self.clock, key);
    }
}

impl Policy for Lru {
    fn name(&self) -> &'static str {
        "LRU"
    }
    fn budget(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn store(&self) -> &Store {
        &self.store
    }
    fn lookup(&mut self, ctx: &StepContext<'_>) -> bool {
        let key = ctx.run().key;
        let hit = self.store.contains(&key);
        if hit {
            self.touch(key);
        }
        hit
    }
    fn offer(&mut self, ctx: &StepContext<'_>) {
        let run = ctx.run();
        if run.size > self.budget {
            return self.store.reject();
        }
        while self.store.used() + run.size > self.budget {
            let (_, lru) = self.by_use.pop_first().expect("a full cache has entries");
            self.last_use.remove(&lru);
            self.store.evict(&lru);
        }
        self.store.insert(run.key, run.size);
        self.touch(run.key);
    }
}

/// An importance score with a total order.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Score(f64);

impl Eq for Score {}

impl PartialOrd for Score {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Score {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Couler's policy: each entry carries its caching importance `I(u)`,
/// computed on the DAG of the execution that produced or last reused it,
/// with that moment's reuse estimates, and aged by the time since
/// ([`importance::aged`]; the clock counts requests). Admission and
/// eviction per Algorithm 2: admit while under budget; otherwise evict the
/// lowest-importance entries, but only if every one of them scores below
/// the newcomer — else the newcomer is not admitted.
#[derive(Debug)]
pub struct Couler {
    budget: u64,
    weights: Weights,
    store: Store,
    /// Entry → (aged score, insertion sequence); ties evict the older entry.
    scores: HashMap<Key, (Score, u64)>,
    by_score: BTreeSet<(Score, u64, Key)>,
    sequence: u64,
    /// Requests so far; the policy's clock.
    clock: u64,
    /// Requests per key (hits and misses alike) since it first ran; the
    /// reuse count is one less. Kept for evicted keys too: a recomputation
    /// is a reuse the cache missed.
    requests: HashMap<Key, u64>,
    /// Reuse events per step family (workflow and step name).
    families: HashMap<Key, ReuseStats>,
}

/// Importance an idle entry loses per request the cache serves: a user's
/// workflow comes back about every 150 requests in the generated traces,
/// so an entry untouched for one round loses a point (measured: 1/50 and
/// 1/400 do worse, by up to a fifth of the total time).
pub const AGING_PER_REQUEST: f64 = 1.0 / 150.0;

/// Half-life of a family's reuse events, in requests (some 80 executions).
pub const FAMILY_HALF_LIFE: f64 = 2000.0;

impl Couler {
    pub fn new(budget: u64, weights: Weights) -> Couler {
        Couler {
            budget,
            weights,
            store: Store::default(),
            scores: HashMap::new(),
            by_score: BTreeSet::new(),
            sequence: 0,
            clock: 0,
            requests: HashMap::new(),
            families: HashMap::new(),
        }
    }

    /// The (aged) score the policy holds for a cached key.
    pub fn score_of(&self, key: &Key) -> Option<f64> {
        self.scores.get(key).map(|(s, _)| s.0)
    }

    /// `I(u)` of the context's step, on its execution's DAG as of now.
    pub fn importance(&self, ctx: &StepContext<'_>) -> f64 {
        let family = self
            .families
            .get(&family(ctx))
            .map(|f| f.decayed(self.clock as f64, FAMILY_HALF_LIFE))
            .unwrap_or_default();
        let nodes: Vec<Node> = ctx
            .runs
            .iter()
            .enumerate()
            .map(|(i, run)| Node {
                cost: run.cost,
                size: run.size,
                // Replay looks every step of an execution up, and runs it on
                // a miss, whether or not its descendants are cached.
                available: true,
                reuse_chance: if i == ctx.step {
                    importance::reuse_chance(&family, self.requests(&run.key))
                } else {
                    0.0
                },
                upstream: ctx.dag.steps()[i].upstream.clone(),
            })
            .collect();
        importance::importance(&nodes, ctx.step, &self.weights)
    }

    fn requests(&self, key: &Key) -> u64 {
        self.requests.get(key).copied().unwrap_or(0)
    }

    fn set_score(&mut self, key: Key, score: f64) {
        let score = Score(importance::aged(
            score,
            self.clock as f64,
            AGING_PER_REQUEST,
        ));
        let sequence = match self.scores.get(&key) {
            Some(&(old, sequence)) => {
                self.by_score.remove(&(old, sequence, key));
                sequence
            }
            None => {
                self.sequence += 1;
                self.sequence
            }
        };
        self.scores.insert(key, (score, sequence));
        self.by_score.insert((score, sequence, key));
    }
}

/// The step's family: the same step of the same workflow, whatever its
/// configuration.
fn family(ctx: &StepContext<'_>) -> Key {
    Key::digest(
        ctx.dag.name(),
        [&Key::digest(&ctx.dag.steps()[ctx.step].name, [])],
    )
}

impl Policy for Couler {
    fn name(&self) -> &'static str {
        "Couler"
    }
    fn budget(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn store(&self) -> &Store {
        &self.store
    }
    fn lookup(&mut self, ctx: &StepContext<'_>) -> bool {
        self.clock += 1;
        let key = ctx.run().key;
        let hit = self.store.contains(&key);
        if let Some(requests) = self.requests.get_mut(&key) {
            *requests += 1;
            self.families
                .entry(family(ctx))
                .or_default()
                .record_reuse(self.clock as f64, FAMILY_HALF_LIFE);
        }
        if hit {
            let score = self.importance(ctx);
            self.set_score(key, score);
        }
        hit
    }
    fn offer(&mut self, ctx: &StepContext<'_>) {
        let run = *ctx.run();
        if let std::collections::hash_map::Entry::Vacant(first) = self.requests.entry(run.key) {
            // The first run of a key: requested once, reused never.
            first.insert(1);
            self.families
                .entry(family(ctx))
                .or_default()
                .record_produced(self.clock as f64, FAMILY_HALF_LIFE);
        }
        if run.size > self.budget {
            return self.store.reject();
        }
        let score = self.importance(ctx);
        let aged = Score(importance::aged(
            score,
            self.clock as f64,
            AGING_PER_REQUEST,
        ));
        let mut freed = 0;
        let mut victims = Vec::new();
        for &(victim_score, _, victim) in &self.by_score {
            if self.store.used() - freed + run.size <= self.budget {
                break;
            }
            if victim_score >= aged {
                return self.store.reject();
            }
            freed += self.store.sizes[&victim];
            victims.push(victim);
        }
        for victim in victims {
            let (s, sequence) = self.scores.remove(&victim).expect("victims are scored");
            self.by_score.remove(&(s, sequence, victim));
            self.store.evict(&victim);
        }
        self.store.insert(run.key, run.size);
        self.set_score(run.key, score);
    }
}

/// An offline reference, not a policy a cache could run: it knows the
/// trace's future and, over budget, evicts the outputs needed furthest
/// ahead (Belady's rule; sizes do not change the order), refusing an output
/// that is needed later than everything it would evict, or never again. It
/// shows roughly what hit ratio a budget allows on a trace.
#[derive(Debug)]
pub struct Oracle {
    budget: u64,
    store: Store,
    /// For each request of the replay, in order: when its key is requested
    /// next (`usize::MAX`: never).
    next_use: Vec<usize>,
    /// Requests seen so far.
    clock: usize,
    /// Each key's latest request, which an offer of it answers (a replay
    /// may look a whole execution up before it runs any step).
    asked: HashMap<Key, usize>,
    /// Cached keys by their next request.
    next_of: HashMap<Key, usize>,
    by_next: BTreeSet<(usize, Key)>,
}

impl Oracle {
    /// An oracle for replaying `trace` (and only that trace) under `budget`.
    pub fn new(budget: u64, trace: &super::Trace) -> Oracle {
        let keys: Vec<Key> = trace
            .executions
            .iter()
            .flat_map(|e| e.steps.iter().map(|s| s.key))
            .collect();
        let mut next_use = vec![usize::MAX; keys.len()];
        let mut later: HashMap<Key, usize> = HashMap::new();
        for (i, key) in keys.iter().enumerate().rev() {
            if let Some(next) = later.insert(*key, i) {
                next_use[i] = next;
            }
        }
        Oracle {
            budget,
            store: Store::default(),
            next_use,
            clock: 0,
            asked: HashMap::new(),
            next_of: HashMap::new(),
            by_next: BTreeSet::new(),
        }
    }

    fn set_next(&mut self, key: Key, next: usize) {
        if let Some(old) = self.next_of.insert(key, next) {
            self.by_next.remove(&(old, key));
        }
        self.by_next.insert((next, key));
    }
}

impl Policy for Oracle {
    fn name(&self) -> &'static str {
        "Oracle"
    }
    fn budget(&self) -> Option<u64> {
        Some(self.budget)
    }
    fn store(&self) -> &Store {
        &self.store
    }
    fn lookup(&mut self, ctx: &StepContext<'_>) -> bool {
        let now = self.clock;
        self.clock += 1;
        let key = ctx.run().key;
        self.asked.insert(key, now);
        let hit = self.store.contains(&key);
        if hit {
            self.set_next(key, self.next_use[now]);
        }
        hit
    }
    fn offer(&mut self, ctx: &StepContext<'_>) {
        let run = *ctx.run();
        let next = self
            .asked
            .get(&run.key)
            .map_or(usize::MAX, |&asked| self.next_use[asked]);
        if next == usize::MAX || run.size > self.budget {
            return self.store.reject();
        }
        let mut freed = 0;
        let mut victims = Vec::new();
        for &(victim_next, victim) in self.by_next.iter().rev() {
            if self.store.used() - freed + run.size <= self.budget {
                break;
            }
            if victim_next <= next {
                return self.store.reject();
            }
            freed += self.store.sizes[&victim];
            victims.push((victim_next, victim));
        }
        for (victim_next, victim) in victims {
            self.by_next.remove(&(victim_next, victim));
            self.next_of.remove(&victim);
            self.store.evict(&victim);
        }
        self.store.insert(run.key, run.size);
        self.set_next(run.key, next);
    }
}
