//! Couler's caching-importance factor (paper §IV.A, eq. 3–6):
//!
//! `I(u) = α·log(1 + L(u)) + β·F(u)² − e^(−V(u))`
//!
//! - `L(u)`, the reconstruction cost: what it would take to compute `u`
//!   again — its own cost plus its predecessors' over `n` layers, stopping
//!   at ancestors that are cached (they need not be recomputed).
//! - `F(u)`, the reuse value: how much later work reads `u` — its
//!   successors' costs over `n` layers, weighted by how often `u` was
//!   reused.
//! - `V(u)`, the size, in GiB. As the paper writes it, `−e^(−V)` is −1 for a
//!   tiny output and tends to 0 for a large one: the term is small and
//!   favours larger outputs; the byte budget is what limits them (see the
//!   simulator's findings in the issue notes).
//!
//! α = 1.5 and β = 1 as in the paper; both configurable. Costs are
//! measured step wall times in seconds.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Weights {
    pub alpha: f64,
    pub beta: f64,
    /// Predecessor and successor layers considered.
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
    /// Whether its result is in the cache.
    pub cached: bool,
    /// Times its cached result was reused.
    pub reuses: u64,
    pub upstream: Vec<usize>,
    pub downstream: Vec<usize>,
}

/// `L(u)`: the node's cost plus its uncached ancestors' over `layers`.
pub fn reconstruction_cost(nodes: &[Node], u: usize, layers: usize) -> f64 {
    let mut total = nodes[u].cost;
    let mut frontier = vec![u];
    let mut seen = std::collections::HashSet::from([u]);
    for _ in 0..layers {
        let mut next = Vec::new();
        for &n in &frontier {
            for &p in &nodes[n].upstream {
                // A cached ancestor is reused, not recomputed: stop there.
                if nodes[p].cached || !seen.insert(p) {
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

/// `F(u)`: reuse value — the work downstream of `u` over `layers` that its
/// result feeds, scaled by how often it has been reused (eq. 4–5).
pub fn reuse_value(nodes: &[Node], u: usize, layers: usize) -> f64 {
    let mut downstream_cost = 0.0;
    let mut frontier = vec![u];
    let mut seen = std::collections::HashSet::from([u]);
    for layer in 1..=layers {
        let mut next = Vec::new();
        for &n in &frontier {
            for &s in &nodes[n].downstream {
                if !seen.insert(s) {
                    continue;
                }
                // Nearer successors count more.
                downstream_cost += nodes[s].cost / layer as f64;
                next.push(s);
            }
        }
        if next.is_empty() {
            break;
        }
        frontier = next;
    }
    let reuse = 1.0 + nodes[u].reuses as f64;
    (1.0 + downstream_cost).ln() * reuse.ln_1p()
}

/// `I(u)` from its three terms.
pub fn score(weights: &Weights, reconstruction: f64, reuse: f64, size_bytes: u64) -> f64 {
    let gib = size_bytes as f64 / (1u64 << 30) as f64;
    weights.alpha * reconstruction.max(0.0).ln_1p() + weights.beta * reuse * reuse - (-gib).exp()
}

/// `I(u)` of node `u` in a DAG.
pub fn importance(nodes: &[Node], u: usize, weights: &Weights) -> f64 {
    score(
        weights,
        reconstruction_cost(nodes, u, weights.layers),
        reuse_value(nodes, u, weights.layers),
        nodes[u].size,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// a → b → c, with `b` in the middle.
    fn chain(costs: [f64; 3]) -> Vec<Node> {
        vec![
            Node {
                cost: costs[0],
                downstream: vec![1],
                ..Default::default()
            },
            Node {
                cost: costs[1],
                upstream: vec![0],
                downstream: vec![2],
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
    fn reconstruction_stops_at_cached_ancestors() {
        let mut nodes = chain([10.0, 5.0, 1.0]);
        assert_eq!(reconstruction_cost(&nodes, 2, 3), 16.0);
        nodes[1].cached = true;
        assert_eq!(reconstruction_cost(&nodes, 2, 3), 1.0);
        assert_eq!(reconstruction_cost(&nodes, 2, 0), 1.0);
    }

    #[test]
    fn costly_reused_small_outputs_matter_most() {
        let w = Weights::default();
        let cheap = score(&w, 1.0, 0.1, 1 << 20);
        let costly = score(&w, 600.0, 0.1, 1 << 20);
        assert!(costly > cheap);
        let reused = score(&w, 1.0, 2.0, 1 << 20);
        assert!(reused > cheap);
        let huge = score(&w, 1.0, 0.1, 50 << 30);
        assert!(
            huge > cheap,
            "e^(-V) shrinks as V grows: large outputs lose the small-size penalty"
        );
        let nodes = chain([10.0, 5.0, 1.0]);
        let mut reused_nodes = nodes.clone();
        reused_nodes[1].reuses = 5;
        assert!(importance(&reused_nodes, 1, &w) > importance(&nodes, 1, &w));
    }
}
