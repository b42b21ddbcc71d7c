//! Dependency edges of new steps, and the one place Argo and Couler
//! differ on them: what follows a skipped step.

use super::expand::Edge;
use super::{Importer, Ptr, StepFacts};
use couler_ir::{Condition, Step};
use std::collections::HashSet;

impl Importer<'_> {
    /// The `depends` of a new step. A non-strict edge to a step that may
    /// be skipped for a reason of its own would skip this step in Couler,
    /// where Argo runs it: such an edge leads to that step's upstream
    /// steps instead (reported).
    pub(super) fn depends(
        &mut self,
        upstream: &[Edge],
        when: &[Condition],
        at: &Ptr,
        step: &str,
    ) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let mut queue: Vec<Edge> = upstream.to_vec();
        let mut seen = HashSet::new();
        while let Some(edge) = queue.pop() {
            if !seen.insert(edge.step.clone()) {
                continue;
            }
            if edge.strict || !self.skippable(&edge.step, when, &mut HashSet::new()) {
                if !out.contains(&edge.step) {
                    out.push(edge.step);
                }
                continue;
            }
            self.report.push(
                at,
                "skipped dependency",
                format!("Argo runs {step:?} after {:?} even when that is skipped, and Couler would skip it: {step:?} waits for {:?}'s upstream steps instead", edge.step, edge.step),
            );
            let before = self
                .facts
                .get(&edge.step)
                .map(|f| f.depends.clone())
                .unwrap_or_default();
            queue.extend(before.into_iter().map(|s| Edge {
                step: s,
                strict: false,
            }));
        }
        out.sort_by_key(|s| {
            upstream
                .iter()
                .position(|e| e.step == *s)
                .unwrap_or(usize::MAX)
        });
        out
    }

    /// Whether `step` can be skipped while a step with conditions `when`
    /// runs.
    fn skippable(&self, step: &str, when: &[Condition], seen: &mut HashSet<String>) -> bool {
        if !seen.insert(step.to_owned()) {
            return false;
        }
        let Some(facts) = self.facts.get(step) else {
            return false;
        };
        facts.when.iter().any(|c| !when.contains(c))
            || facts.depends.iter().any(|d| self.skippable(d, when, seen))
    }

    pub(super) fn record(&mut self, step: &Step) {
        self.facts.insert(
            step.name.clone(),
            StepFacts {
                when: step.when.clone(),
                depends: step.depends.clone(),
            },
        );
    }
}

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
