//! Step dependency graphs: topological order, cycle detection and ancestry,
//! all iterative so that deep chains cannot overflow the stack.

/// A DAG over step indexes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Graph {
    upstream: Vec<Vec<u32>>,
    downstream: Vec<Vec<u32>>,
    order: Vec<u32>,
    position: Vec<u32>,
}

impl Graph {
    /// Builds the graph from each node's upstream list; on cycles returns
    /// one cycle per strongly connected tangle, each as a node path
    /// `a → b → … → a` (the first node repeated at the end).
    pub fn new(mut upstream: Vec<Vec<u32>>) -> Result<Graph, Vec<Vec<u32>>> {
        let n = upstream.len();
        for deps in &mut upstream {
            deps.sort_unstable();
            deps.dedup();
        }
        let mut downstream = vec![Vec::new(); n];
        let mut indegree = vec![0u32; n];
        for (node, deps) in upstream.iter().enumerate() {
            indegree[node] = deps.len() as u32;
            for &d in deps {
                downstream[d as usize].push(node as u32);
            }
        }
        // Kahn's algorithm, taking ready nodes in index order for a stable result.
        let mut order = Vec::with_capacity(n);
        let mut ready: Vec<u32> = (0..n as u32)
            .filter(|&i| indegree[i as usize] == 0)
            .rev()
            .collect();
        while let Some(node) = ready.pop() {
            order.push(node);
            for &next in downstream[node as usize].iter().rev() {
                indegree[next as usize] -= 1;
                if indegree[next as usize] == 0 {
                    ready.push(next);
                }
            }
        }
        if order.len() < n {
            return Err(cycles(&upstream, &indegree));
        }
        let mut position = vec![0u32; n];
        for (pos, &node) in order.iter().enumerate() {
            position[node as usize] = pos as u32;
        }
        Ok(Graph {
            upstream,
            downstream,
            order,
            position,
        })
    }

    pub fn len(&self) -> usize {
        self.upstream.len()
    }

    pub fn is_empty(&self) -> bool {
        self.upstream.is_empty()
    }

    /// Direct predecessors, sorted.
    pub fn upstream(&self, node: u32) -> &[u32] {
        &self.upstream[node as usize]
    }

    /// Direct successors.
    pub fn downstream(&self, node: u32) -> &[u32] {
        &self.downstream[node as usize]
    }

    /// Nodes in a topological order (dependencies first).
    pub fn order(&self) -> &[u32] {
        &self.order
    }

    /// Whether `ancestor` must finish before `node` can start.
    pub fn is_ancestor(&self, ancestor: u32, node: u32) -> bool {
        if ancestor == node {
            return false;
        }
        let floor = self.position[ancestor as usize];
        if self.position[node as usize] < floor {
            return false;
        }
        // Walk upstream from `node`, pruning nodes ordered before `ancestor`:
        // nothing there can have `ancestor` upstream of it.
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![node];
        while let Some(current) = stack.pop() {
            for &up in self.upstream(current) {
                if up == ancestor {
                    return true;
                }
                if self.position[up as usize] > floor && seen.insert(up) {
                    stack.push(up);
                }
            }
        }
        false
    }

    /// Number of nodes on the longest path.
    pub fn critical_path_len(&self) -> usize {
        let mut depth = vec![0usize; self.len()];
        let mut longest = 0;
        for &node in &self.order {
            let d = 1 + self
                .upstream(node)
                .iter()
                .map(|&u| depth[u as usize])
                .max()
                .unwrap_or(0);
            depth[node as usize] = d;
            longest = longest.max(d);
        }
        longest
    }
}

/// Finds cycles among the nodes Kahn's algorithm could not order (those
/// with `indegree > 0`). Every such node has an unordered predecessor, so
/// walking predecessors from any of them must come back to a node already
/// on the walk.
fn cycles(upstream: &[Vec<u32>], indegree: &[u32]) -> Vec<Vec<u32>> {
    const UNSEEN: u32 = u32::MAX;
    let stuck = |n: u32| indegree[n as usize] > 0;
    // walk_id[n]: which walk first visited n.
    let mut walk_id = vec![UNSEEN; upstream.len()];
    let mut found = Vec::new();
    for start in 0..upstream.len() as u32 {
        if !stuck(start) || walk_id[start as usize] != UNSEEN {
            continue;
        }
        let mut path = Vec::new();
        let mut node = start;
        loop {
            if walk_id[node as usize] == start {
                // Closed a new cycle: the path from the first visit of `node`.
                let from = path
                    .iter()
                    .position(|&n| n == node)
                    .expect("node is on the walk");
                let mut cycle: Vec<u32> = path[from..].to_vec();
                cycle.reverse(); // predecessor walk → dependency order
                let lowest = (0..cycle.len()).min_by_key(|&i| cycle[i]).unwrap_or(0);
                cycle.rotate_left(lowest);
                cycle.push(cycle[0]);
                found.push(cycle);
                break;
            }
            if walk_id[node as usize] != UNSEEN {
                break; // reached a tangle found by an earlier walk
            }
            walk_id[node as usize] = start;
            path.push(node);
            node = *upstream[node as usize]
                .iter()
                .find(|&&u| stuck(u))
                .expect("an unordered node has an unordered predecessor");
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_a_diamond() {
        let g = Graph::new(vec![vec![], vec![0], vec![0], vec![1, 2]]).unwrap();
        assert_eq!(g.order(), &[0, 1, 2, 3]);
        assert!(g.is_ancestor(0, 3));
        assert!(!g.is_ancestor(1, 2));
        assert!(!g.is_ancestor(3, 0));
        assert_eq!(g.critical_path_len(), 3);
    }

    #[test]
    fn names_each_cycle() {
        // 0 → 1 → 2 → 0, and 3 ⇄ 4, and 5 depends on the first cycle.
        let err =
            Graph::new(vec![vec![2], vec![0], vec![1], vec![4], vec![3], vec![0]]).unwrap_err();
        assert_eq!(err.len(), 2);
        assert_eq!(err[0], vec![0, 1, 2, 0]);
        assert_eq!(err[1], vec![3, 4, 3]);
    }

    #[test]
    fn self_loop_is_a_cycle() {
        let err = Graph::new(vec![vec![0]]).unwrap_err();
        assert_eq!(err, vec![vec![0, 0]]);
    }

    #[test]
    fn long_chains_do_not_recurse() {
        let n = 200_000u32;
        let upstream = (0..n)
            .map(|i| if i == 0 { vec![] } else { vec![i - 1] })
            .collect();
        let g = Graph::new(upstream).unwrap();
        assert!(g.is_ancestor(0, n - 1));
        assert_eq!(g.critical_path_len(), n as usize);
    }
}
