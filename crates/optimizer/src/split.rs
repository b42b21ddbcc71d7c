//! Auto-parallel split of big workflows (Couler Algorithm 3): cuts a step
//! DAG that is over an engine's size budget into sub-workflows ("parts") the
//! scheduler submits once all their upstream parts have succeeded.
//!
//! The grouping is greedy and level-banded. A step's level is the length of
//! the longest path from a source to it. Every part `P` keeps this
//! invariant: each upstream step of a step in `P` is in `P` or in a part
//! whose highest level is below `P`'s lowest level. With unit step costs a
//! part then starts by its lowest level and ends by its highest level + 1,
//! so splitting never lengthens the critical path.
//!
//! Levels are processed in ascending order. A part stays open while it takes
//! steps from every next level; it takes either all the steps that may join
//! it at a level or none (and then closes), because taking only some would
//! leave the rest waiting for the whole part. Steps no open part takes start
//! new parts at their level.

use couler_ir::Graph;

/// Limits of one sub-workflow; `None` = unlimited.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Budget {
    pub max_steps: Option<u32>,
    pub max_bytes: Option<u64>,
    pub max_pods: Option<u64>,
}

/// What one step costs a part.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weight {
    pub bytes: u64,
    pub pods: u64,
    /// Always a part of its own (e.g. a hyperparameter-search step).
    pub isolate: bool,
}

/// One sub-workflow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Part {
    /// Step indexes, sorted.
    pub steps: Vec<u32>,
    /// Indexes of the parts that must succeed first, sorted and deduplicated.
    pub after: Vec<u32>,
    pub bytes: u64,
    pub pods: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split {
    pub parts: Vec<Part>,
    /// Part index of each step.
    pub part_of: Vec<u32>,
}

/// Splits `graph` into parts within `budget`. O(V+E). Part indexes are a
/// topological order of the parts' DAG (every `after` entry is smaller than
/// the part's own index).
///
/// A graph that fits the budget and has no `isolate` step stays one part. A
/// step that alone exceeds the budget gets a part of its own.
///
/// # Panics
/// If `weights` does not hold one weight per step.
pub fn split(graph: &Graph, weights: &[Weight], budget: &Budget) -> Split {
    assert_eq!(weights.len(), graph.len(), "one weight per step");
    // A flat copy: the passes below then stay within a few compact arrays.
    let upstream = Csr::from_rows((0..graph.len() as u32).map(|v| graph.upstream(v)));
    let levels = levels(graph.order(), &upstream);
    let mut builder = Builder::new(upstream, weights, budget);
    for level in 0..levels.keys() {
        builder.take_level(level as u32, levels.of(level));
    }
    builder.finish()
}

/// Makespan of the DAG when step `i` takes `cost[i]` and, if `split` is
/// given, a part starts only when all its `after` parts have finished
/// entirely (a step starts at the latest of its upstream steps' finish and
/// its part's start). A split whose parts wait on each other in a cycle
/// never finishes: the makespan is infinite.
///
/// # Panics
/// If `cost` (or `split.part_of`) does not hold one entry per step, or the
/// split names a part that does not exist.
pub fn makespan(graph: &Graph, cost: &[f64], split: Option<&Split>) -> f64 {
    assert_eq!(cost.len(), graph.len(), "one cost per step");
    match split {
        None => {
            let mut finish = vec![0.0f64; graph.len()];
            for &v in graph.order() {
                let start = latest(graph.upstream(v).iter().map(|&u| finish[u as usize]));
                finish[v as usize] = start + cost[v as usize];
            }
            latest(finish.into_iter())
        }
        Some(split) => makespan_of_parts(graph, cost, split),
    }
}

fn latest(times: impl Iterator<Item = f64>) -> f64 {
    times.fold(0.0, f64::max)
}

/// Steps by level (`of(l)`: the steps of level `l`, ascending), where a
/// step's level is the length of the longest path from a source to it.
fn levels(order: &[u32], upstream: &Csr) -> Csr {
    let n = order.len();
    let mut level = vec![0u32; n];
    let mut visit = |v: usize| {
        level[v] = upstream
            .of(v)
            .iter()
            .map(|&u| level[u as usize] + 1)
            .max()
            .unwrap_or(0);
    };
    // Steps are usually listed dependencies first; index order is then
    // topological too, and walks the arrays front to back.
    if (0..n).all(|v| upstream.of(v).iter().all(|&u| (u as usize) < v)) {
        (0..n).for_each(visit);
    } else {
        order.iter().for_each(|&v| visit(v as usize));
    }
    let count = level.iter().max().map_or(0, |&top| top as usize + 1);
    Csr::new(count, level.iter().enumerate().map(|(v, &l)| (l, v as u32)))
}

/// Steps, bytes and pods of a part (or of what it is offered).
#[derive(Debug, Clone, Copy, Default)]
struct Load {
    steps: u64,
    bytes: u64,
    pods: u64,
}

impl Load {
    fn of(weight: &Weight) -> Load {
        Load {
            steps: 1,
            bytes: weight.bytes,
            pods: weight.pods,
        }
    }

    fn plus(self, other: Load) -> Load {
        Load {
            steps: self.steps.saturating_add(other.steps),
            bytes: self.bytes.saturating_add(other.bytes),
            pods: self.pods.saturating_add(other.pods),
        }
    }
}

impl Budget {
    fn admits(&self, load: Load) -> bool {
        self.max_steps.is_none_or(|m| load.steps <= u64::from(m))
            && self.max_bytes.is_none_or(|m| load.bytes <= m)
            && self.max_pods.is_none_or(|m| load.pods <= m)
    }
}

/// A part while it is being built.
#[derive(Debug, Clone, Copy)]
struct Tally {
    /// Lowest and highest level of its steps.
    lo: u32,
    hi: u32,
    load: Load,
    open: bool,
}

const NONE: u32 = u32::MAX;

struct Builder<'a> {
    upstream: Csr,
    weights: &'a [Weight],
    budget: &'a Budget,
    part_of: Vec<u32>,
    parts: Vec<Tally>,
    /// Parts open at the level being taken.
    open: Vec<u32>,
    // Scratch for one level, indexed by part; reset for every open part
    // once the level is taken.
    blocked: Vec<bool>,
    offered: Vec<Load>,
    /// For each step of the level, the part it may join, or `NONE`.
    joins: Vec<u32>,
    /// Steps of the level no existing part took, and their grouping keys.
    left: Vec<u32>,
    keys: Vec<u32>,
    /// Per part (and one slot for "no upstream"), the group index of the
    /// left steps keyed by it, or `NONE`.
    group_of_key: Vec<u32>,
    /// Edges between parts as (upstream part, downstream part), mostly
    /// deduplicated: `cut_from[q] == p` once (q, p) is recorded.
    cuts: Vec<(u32, u32)>,
    cut_from: Vec<u32>,
}

impl<'a> Builder<'a> {
    fn new(upstream: Csr, weights: &'a [Weight], budget: &'a Budget) -> Builder<'a> {
        let n = weights.len();
        Builder {
            upstream,
            weights,
            budget,
            part_of: vec![NONE; n],
            parts: Vec::new(),
            open: Vec::new(),
            blocked: Vec::new(),
            offered: Vec::new(),
            joins: Vec::new(),
            left: Vec::new(),
            keys: Vec::new(),
            // Parts never outnumber steps; the last slot keys sources.
            group_of_key: vec![NONE; n + 1],
            cuts: Vec::new(),
            cut_from: vec![NONE; n],
        }
    }

    /// Offers each step of `level` to the open part it may join; each open
    /// part then takes all its offers or closes; the other steps start new
    /// parts.
    fn take_level(&mut self, level: u32, steps: &[u32]) {
        self.joins.clear();
        for &v in steps {
            let joins = self.offer(v);
            self.joins.push(joins);
        }

        let Builder {
            budget,
            parts,
            open,
            blocked,
            offered,
            ..
        } = self;
        open.retain(|&p| {
            let p = p as usize;
            let offer = std::mem::take(&mut offered[p]);
            let takes = !std::mem::take(&mut blocked[p])
                && offer.steps > 0
                && budget.admits(parts[p].load.plus(offer));
            if takes {
                parts[p].hi = level;
            } else {
                parts[p].open = false;
            }
            takes
        });

        self.left.clear();
        let joins = std::mem::take(&mut self.joins);
        for (&v, &p) in steps.iter().zip(&joins) {
            if p != NONE && self.parts[p as usize].open {
                self.assign(v, p);
            } else {
                self.left.push(v);
            }
        }
        self.joins = joins;
        self.start_parts(level);
        self.record_cuts(steps);
    }

    fn record_cuts(&mut self, steps: &[u32]) {
        for &v in steps {
            let p = self.part_of[v as usize];
            for &u in self.upstream.of(v as usize) {
                let q = self.part_of[u as usize];
                if q != p && self.cut_from[q as usize] != p {
                    self.cut_from[q as usize] = p;
                    self.cuts.push((q, p));
                }
            }
        }
    }

    /// Offers step `v` to the one open part it may join, if any, and
    /// returns that part (or `NONE`). Blocks the open parts whose taking of
    /// their other steps would delay `v`.
    fn offer(&mut self, v: u32) -> u32 {
        let mut joins = NONE;
        let mut several = false;
        let mut closed_hi = None;
        for &u in self.upstream.of(v as usize) {
            let q = self.part_of[u as usize];
            let tally = &self.parts[q as usize];
            if tally.open {
                several |= joins != NONE && joins != q;
                joins = q;
            } else {
                closed_hi = closed_hi.max(Some(tally.hi));
            }
        }
        if joins == NONE {
            return NONE;
        }
        if several || self.weights[v as usize].isolate {
            for &u in self.upstream.of(v as usize) {
                let q = self.part_of[u as usize];
                if self.parts[q as usize].open {
                    self.blocked[q as usize] = true;
                }
            }
            return NONE;
        }
        if closed_hi.is_some_and(|hi| hi >= self.parts[joins as usize].lo) {
            self.blocked[joins as usize] = true;
            return NONE;
        }
        let offered = &mut self.offered[joins as usize];
        *offered = offered.plus(Load::of(&self.weights[v as usize]));
        joins
    }

    /// Puts the steps left at `level` into new parts: isolated steps alone,
    /// the rest packed greedily, siblings (steps whose first upstream step
    /// shares a part) kept together.
    fn start_parts(&mut self, level: u32) {
        if self.left.is_empty() {
            return;
        }
        let sources_key = self.part_of.len() as u32;
        self.keys.clear();
        for &v in &self.left {
            let key = match self.upstream.of(v as usize).first() {
                Some(&u) => self.part_of[u as usize],
                None => sources_key,
            };
            self.keys.push(key);
        }

        // Counting sort by key, groups in order of first appearance.
        let mut group_sizes: Vec<usize> = Vec::new();
        for &key in &self.keys {
            let slot = &mut self.group_of_key[key as usize];
            if *slot == NONE {
                *slot = group_sizes.len() as u32;
                group_sizes.push(0);
            }
            group_sizes[*slot as usize] += 1;
        }
        let mut next = Vec::with_capacity(group_sizes.len());
        let mut at = 0;
        for size in group_sizes {
            next.push(at);
            at += size;
        }
        let mut ordered = vec![0u32; self.left.len()];
        for (&v, &key) in self.left.iter().zip(&self.keys) {
            let group = self.group_of_key[key as usize] as usize;
            ordered[next[group]] = v;
            next[group] += 1;
        }
        for &key in &self.keys {
            self.group_of_key[key as usize] = NONE;
        }

        let mut filling = NONE;
        for v in ordered {
            let weight = self.weights[v as usize];
            if weight.isolate {
                let p = self.new_part(level);
                self.assign(v, p);
                self.parts[p as usize].open = false;
                continue;
            }
            let fits = filling != NONE
                && self
                    .budget
                    .admits(self.parts[filling as usize].load.plus(Load::of(&weight)));
            if !fits {
                filling = self.new_part(level);
                self.open.push(filling);
            }
            self.assign(v, filling);
        }
    }

    fn new_part(&mut self, level: u32) -> u32 {
        let p = self.parts.len() as u32;
        self.parts.push(Tally {
            lo: level,
            hi: level,
            load: Load::default(),
            open: true,
        });
        self.blocked.push(false);
        self.offered.push(Load::default());
        p
    }

    fn assign(&mut self, v: u32, p: u32) {
        self.part_of[v as usize] = p;
        let tally = &mut self.parts[p as usize];
        tally.load = tally.load.plus(Load::of(&self.weights[v as usize]));
    }

    fn finish(self) -> Split {
        let Builder {
            part_of,
            parts: tallies,
            cuts,
            ..
        } = self;
        let mut parts: Vec<Part> = tallies
            .iter()
            .map(|t| Part {
                steps: Vec::with_capacity(t.load.steps as usize),
                after: Vec::new(),
                bytes: t.load.bytes,
                pods: t.load.pods,
            })
            .collect();
        for (v, &p) in part_of.iter().enumerate() {
            parts[p as usize].steps.push(v as u32);
        }
        // Visiting upstream parts in ascending index leaves every `after`
        // sorted, and any duplicate edge next to its twin.
        let feeds = Csr::new(parts.len(), cuts.iter().copied());
        for q in 0..parts.len() as u32 {
            for &p in feeds.of(q as usize) {
                // Parts are created level by level and edges run from a
                // part's highest level to a later part's lowest.
                debug_assert!(q < p, "part {q} feeds the earlier part {p}");
                let after = &mut parts[p as usize].after;
                if after.last() != Some(&q) {
                    after.push(q);
                }
            }
        }
        Split { parts, part_of }
    }
}

/// Event-driven makespan over steps plus, per part, a start (after all its
/// `after` parts finish) and a finish (after all its steps finish).
fn makespan_of_parts(graph: &Graph, cost: &[f64], split: &Split) -> f64 {
    let n = graph.len();
    let m = split.parts.len();
    assert_eq!(split.part_of.len(), n, "one part per step");

    let members = Csr::new(
        m,
        split
            .part_of
            .iter()
            .enumerate()
            .map(|(v, &p)| (p, v as u32)),
    );
    let feeds = Csr::new(
        m,
        split
            .parts
            .iter()
            .enumerate()
            .flat_map(|(p, part)| part.after.iter().map(move |&q| (q, p as u32))),
    );

    // Each step waits for its upstream steps and its part's start.
    let mut step_waits: Vec<usize> = (0..n as u32).map(|v| graph.upstream(v).len() + 1).collect();
    let mut start_waits: Vec<usize> = split.parts.iter().map(|p| p.after.len()).collect();
    let mut finish_waits: Vec<usize> = (0..m).map(|p| members.of(p).len()).collect();
    let mut step_finish = vec![0.0f64; n];
    let mut part_start = vec![0.0f64; m];
    let mut part_finish = vec![0.0f64; m];

    enum Event {
        Start(u32),
        Step(u32),
        Finish(u32),
    }
    let mut ready: Vec<Event> = (0..m as u32)
        .filter(|&p| start_waits[p as usize] == 0)
        .map(Event::Start)
        .collect();
    let mut steps_done = 0;
    while let Some(event) = ready.pop() {
        match event {
            Event::Start(p) => {
                let p = p as usize;
                part_start[p] = latest(
                    split.parts[p]
                        .after
                        .iter()
                        .map(|&q| part_finish[q as usize]),
                );
                part_finish[p] = part_start[p];
                for &v in members.of(p) {
                    step_waits[v as usize] -= 1;
                    if step_waits[v as usize] == 0 {
                        ready.push(Event::Step(v));
                    }
                }
                if finish_waits[p] == 0 {
                    ready.push(Event::Finish(p as u32));
                }
            }
            Event::Step(v) => {
                steps_done += 1;
                let p = split.part_of[v as usize] as usize;
                let start = graph
                    .upstream(v)
                    .iter()
                    .map(|&u| step_finish[u as usize])
                    .fold(part_start[p], f64::max);
                step_finish[v as usize] = start + cost[v as usize];
                part_finish[p] = part_finish[p].max(step_finish[v as usize]);
                for &w in graph.downstream(v) {
                    step_waits[w as usize] -= 1;
                    if step_waits[w as usize] == 0 {
                        ready.push(Event::Step(w));
                    }
                }
                finish_waits[p] -= 1;
                if finish_waits[p] == 0 {
                    ready.push(Event::Finish(p as u32));
                }
            }
            Event::Finish(q) => {
                for &p in feeds.of(q as usize) {
                    start_waits[p as usize] -= 1;
                    if start_waits[p as usize] == 0 {
                        ready.push(Event::Start(p));
                    }
                }
            }
        }
    }
    if steps_done < n {
        return f64::INFINITY;
    }
    latest(step_finish.into_iter())
}

/// Compressed adjacency lists: `of(k)` lists the values paired with key `k`,
/// in the order given.
struct Csr {
    starts: Vec<u32>,
    values: Vec<u32>,
}

impl Csr {
    fn new(keys: usize, pairs: impl Iterator<Item = (u32, u32)> + Clone) -> Csr {
        let mut starts = vec![0u32; keys + 1];
        for (k, _) in pairs.clone() {
            starts[k as usize + 1] += 1;
        }
        for k in 0..keys {
            starts[k + 1] += starts[k];
        }
        let mut next = starts.clone();
        let mut values = vec![0u32; starts[keys] as usize];
        for (k, v) in pairs {
            values[next[k as usize] as usize] = v;
            next[k as usize] += 1;
        }
        Csr { starts, values }
    }

    fn from_rows<'r>(rows: impl ExactSizeIterator<Item = &'r [u32]>) -> Csr {
        let mut starts = Vec::with_capacity(rows.len() + 1);
        let mut values = Vec::new();
        starts.push(0);
        for row in rows {
            values.extend_from_slice(row);
            starts.push(u32::try_from(values.len()).expect("fewer than 2^32 edges"));
        }
        Csr { starts, values }
    }

    fn keys(&self) -> usize {
        self.starts.len() - 1
    }

    fn of(&self, key: usize) -> &[u32] {
        &self.values[self.starts[key] as usize..self.starts[key + 1] as usize]
    }
}
