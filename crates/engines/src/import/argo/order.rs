//! The order of a dag's tasks.

/// Kahn's order over `upstream[i]` (indexes), ties in document order;
/// tasks on a cycle are left out.
pub(super) fn topological(upstream: &[Vec<usize>]) -> Vec<usize> {
    let n = upstream.len();
    let mut waiting: Vec<usize> = upstream.iter().map(Vec::len).collect();
    let mut downstream = vec![Vec::new(); n];
    for (i, ups) in upstream.iter().enumerate() {
        for &u in ups {
            downstream[u].push(i);
        }
    }
    let mut ready: std::collections::BTreeSet<usize> =
        (0..n).filter(|&i| waiting[i] == 0).collect();
    let mut order = Vec::with_capacity(n);
    while let Some(i) = ready.pop_first() {
        order.push(i);
        for &d in &downstream[i] {
            waiting[d] -= 1;
            if waiting[d] == 0 {
                ready.insert(d);
            }
        }
    }
    order
}
