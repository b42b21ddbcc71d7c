//! Couler's caching-importance factor (paper §IV.A, eq. 3–6):
//!
//! `I(u) = α·log(1 + L(u)) + β·F(u)² − e^(−V(u))`
//!
//! The shape is the paper's; what each term measures is defined so that a
//! higher `I` means "evicting `u` would cost more run time":
//!
//! - `L(u)`, the reconstruction cost: what computing `u` again would take —
//!   its own cost plus its predecessors' over `n` layers, stopping at
//!   ancestors that are *available*: cached, or run anyway by the workflow
//!   that asks for `u`. A hit on `u` saves only what would run for `u`'s
//!   sake; in a whole-workflow run every ancestor is keyed on its own (a
//!   hit, a run, or the index's record of it), so there `L(u)` is `u`'s own
//!   measured cost. (With records, a hit on `u` can also spare ancestors
//!   whose bytes are gone, which then need not run; counting those too —
//!   eq. 3 truncated at cached ancestors — saved less time in the
//!   simulator: 7,395 h against 7,226 h at 10 GB.)
//! - `F(u)`, the reuse value: the chance that successors read `u` again —
//!   the share of reuse events among the requests for `u`'s step family
//!   (the same step of the same workflow, whatever its configuration:
//!   [`ReuseStats`], old events decaying), updated by `u`'s own requests
//!   ([`reuse_chance`]). A newcomer so starts from what its family has
//!   shown, not from zero; and being a share, not a count, it does not
//!   grow without bound for long-lived entries (a count made stale
//!   entries unbeatable).
//! - `V(u)`, the size, as the inverse of the output's size in GiB: the
//!   term is meant to penalise size, and `−e^(−V)` rises with `V`, so `V`
//!   must fall as outputs grow. A 10 MiB output costs nothing, 1 GiB costs
//!   e^(−1) ≈ 0.37, and very large outputs tend to the full point. (With
//!   `V` as the size itself the term would *favour* large outputs.)
//!
//! α = 1.5 and β = 1 as in the paper; both configurable. Costs are
//! measured step wall times in seconds.
//!
//! Scores age: an entry loses importance at a fixed rate while nobody
//! reuses it ([`aged`]), so stale entries give way to newcomers.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub alpha: f64,
    pub beta: f64,
    /// Predecessor layers considered.
    pub layers: usize,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            alpha: 1.5,
            beta: 1.0,
            layers: 3,
        }
    }
}

/// One node of the DAG as importance sees it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Node {
    /// Measured cost of computing this step (seconds).
    pub cost: f64,
    /// Bytes of its outputs.
    pub size: u64,
    /// Whether its result is there without recomputing it for a
    /// descendant's sake: it is cached, or its workflow runs it anyway.
    pub available: bool,
    /// The chance its output is read again ([`reuse_chance`]).
    pub reuse_chance: f64,
    pub upstream: Vec<usize>,
}

/// `L(u)`: the node's cost plus its unavailable ancestors' over `layers`.
pub fn reconstruction_cost(nodes: &[Node], u: usize, layers: usize) -> f64 {
    let mut total = nodes[u].cost;
    let mut frontier = vec![u];
    let mut seen = std::collections::HashSet::from([u]);
    for _ in 0..layers {
        let mut next = Vec::new();
        for &n in &frontier {
            for &p in &nodes[n].upstream {
                // An available ancestor is not recomputed for `u`: stop there.
                if nodes[p].available || !seen.insert(p) {
                    continue;
                }
                total += nodes[p].cost;
                next.push(p);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    total
}

/// `F(u)` from the chance that `u` is read again.
pub fn reuse_value(reuse_chance: f64) -> f64 {
    reuse_chance.clamp(0.0, 1.0)
}

/// `−e^(−V(u))`, with `V` the inverse size in GiB.
pub fn size_term(size_bytes: u64) -> f64 {
    let gib = size_bytes as f64 / (1u64 << 30) as f64;
    if gib <= 0.0 { 0.0 } else { -(-1.0 / gib).exp() }
}

/// `I(u)` from its three terms.
pub fn score(weights: &Weights, reconstruction: f64, reuse: f64, size_bytes: u64) -> f64 {
    weights.alpha * reconstruction.max(0.0).ln_1p()
        + weights.beta * reuse * reuse
        + size_term(size_bytes)
}

/// `I(u)` of node `u` in a DAG.
pub fn importance(nodes: &[Node], u: usize, weights: &Weights) -> f64 {
    score(
        weights,
        reconstruction_cost(nodes, u, weights.layers),
        reuse_value(nodes[u].reuse_chance),
        nodes[u].size,
    )
}

/// `R(u)`: the chance `u` is read again — its family's reuse share, updated
/// by `u`'s own record: `requests` so far, all but the first of them
/// reuses. The family counts as [`FAMILY_WEIGHT`] requests.
pub fn reuse_chance(family: &ReuseStats, requests: u64) -> f64 {
    let own = requests.max(1) as f64;
    (own - 1.0 + FAMILY_WEIGHT * family.share()) / (own + FAMILY_WEIGHT)
}

pub const FAMILY_WEIGHT: f64 = 2.0;

/// What a score is stored as: `I(u)` scored at clock time `at`, plus
/// `aging · at`. An entry so loses `aging` points per unit of time it goes
/// unused, relative to anything scored later; stored scores stay
/// comparable without re-scoring every entry (GreedyDual's inflation).
pub fn aged(score: f64, at: f64, aging: f64) -> f64 {
    score + aging * at
}

/// Reuse events of a step family, decaying with a half-life in the
/// caller's clock: outputs produced (first runs of a key) and reuses (a
/// key asked for again, hit or not — a miss on a key computed before is a
/// reuse the cache missed, and counting it keeps the estimate independent
/// of what the cache chose to hold).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ReuseStats {
    pub produced: f64,
    pub reused: f64,
    /// Clock time of the last update.
    pub at: f64,
}

impl ReuseStats {
    /// The counts as of `now`.
    pub fn decayed(self, now: f64, half_life: f64) -> ReuseStats {
        let elapsed = (now - self.at).max(0.0);
        let keep = if half_life > 0.0 {
            (-elapsed / half_life).exp2()
        } else {
            1.0
        };
        ReuseStats {
            produced: self.produced * keep,
            reused: self.reused * keep,
            at: now.max(self.at),
        }
    }

    pub fn record_produced(&mut self, now: f64, half_life: f64) {
        *self = self.decayed(now, half_life);
        self.produced += 1.0;
    }

    pub fn record_reuse(&mut self, now: f64, half_life: f64) {
        *self = self.decayed(now, half_life);
        self.reused += 1.0;
    }

    /// The share of requests that reused an earlier output, with one of
    /// each as the prior: an unknown family gets even odds.
    pub fn share(&self) -> f64 {
        (self.reused + 1.0) / (self.reused + self.produced + 2.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a → b → c, with `b` in the middle.
    fn chain(costs: [f64; 3]) -> Vec<Node> {
        vec![
            Node {
                cost: costs[0],
                ..Default::default()
            },
            Node {
                cost: costs[1],
                upstream: vec![0],
                ..Default::default()
            },
            Node {
                cost: costs[2],
                upstream: vec![1],
                ..Default::default()
            },
        ]
    }

    #[test]
    fn reconstruction_stops_at_available_ancestors() {
        let mut nodes = chain([10.0, 5.0, 1.0]);
        assert_eq!(reconstruction_cost(&nodes, 2, 3), 16.0);
        assert_eq!(reconstruction_cost(&nodes, 2, 1), 6.0);
        nodes[1].available = true;
        assert_eq!(reconstruction_cost(&nodes, 2, 3), 1.0);
        assert_eq!(reconstruction_cost(&nodes, 2, 0), 1.0);
    }

    #[test]
    fn costly_reused_small_outputs_matter_most() {
        let w = Weights::default();
        let base = score(&w, 60.0, reuse_value(0.2), 10 << 20);
        assert!(score(&w, 600.0, reuse_value(0.2), 10 << 20) > base);
        assert!(score(&w, 60.0, reuse_value(0.9), 10 << 20) > base);
        assert!(
            score(&w, 60.0, reuse_value(0.2), 4 << 30) < base,
            "larger outputs score lower"
        );
        let mut nodes = chain([10.0, 5.0, 1.0]);
        let before = importance(&nodes, 1, &w);
        nodes[1].reuse_chance = 0.9;
        assert!(importance(&nodes, 1, &w) > before);
    }

    #[test]
    fn the_size_term_penalises_and_stays_within_one_point() {
        assert_eq!(size_term(0), 0.0);
        assert!(size_term(10 << 20) > -1e-9);
        assert!((size_term(1 << 30) + (-1.0f64).exp()).abs() < 1e-12);
        assert!(size_term(2 << 30) < size_term(1 << 30));
        assert!(size_term(u64::MAX) >= -1.0);
    }

    #[test]
    fn newcomers_inherit_their_familys_reuse_and_old_events_decay() {
        let mut family = ReuseStats::default();
        assert_eq!(family.share(), 0.5, "an unknown family gets even odds");
        family.record_produced(0.0, 10.0);
        for t in 1..=8 {
            family.record_reuse(f64::from(t), 10.0);
        }
        assert!(family.share() > 0.8);
        let newcomer = reuse_chance(&family, 1);
        assert!(
            newcomer > 0.5,
            "a newcomer starts from its family: {newcomer}"
        );
        assert!(reuse_chance(&family, 10) > newcomer, "its own reuses count");
        assert!(reuse_chance(&ReuseStats::default(), 1) < newcomer);
        let later = family.decayed(18.0, 10.0);
        assert!((later.reused - family.reused / 2.0).abs() < 1e-9);
        // A family that stops being reused drifts down as it keeps producing.
        let mut stale = family;
        for t in 20..60 {
            stale.record_produced(f64::from(t), 10.0);
        }
        assert!(stale.share() < 0.2, "{}", stale.share());
    }

    #[test]
    fn idle_entries_fall_below_fresh_ones() {
        let old = aged(10.0, 0.0, 0.5);
        let fresh = aged(8.0, 10.0, 0.5);
        assert!(fresh > old, "ten idle units cost five points");
        assert!(aged(8.0, 2.0, 0.5) < old);
    }
}
