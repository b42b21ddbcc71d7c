//! What each step of a graph requires of its upstream steps before it
//! runs, and the rule that decides whether a run failed.
//!
//! The rule is Argo's for a DAG (argoproj/argo-workflows,
//! `workflow/controller/dag.go` at 32cbee030e5b: `assessDAGPhase`, whose
//! walk queues a node once per branch phase so that failure wins): the DAG
//! fails when one of its *target* tasks (those no other task depends on)
//! has a failed "branch phase". A task that completed (succeeded, failed,
//! errored) passes its own phase down its branch; a task that did not run
//! (skipped by `when`, omitted by `depends`) inherits the worst branch
//! phase of the tasks it depends on, failure preferred. So a failure fails
//! the run only when it reaches a last step through steps that did not
//! run: a dependent that ran (say on `x.failed`) handles it.
//! `failFast` only decides how early a DAG whose failure is certain
//! stops; it does not change the outcome.

use super::{Ended, Expr};
use crate::graph::Graph;

/// One requirement of a step: a `depends` entry (groups expanded to
/// their members), or the bare requirement that an upstream step no entry
/// names succeeded (a step whose outputs it reads, a group's dependency).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// Over node indexes of the step's graph.
    pub expr: Expr<u32>,
    /// Index into the step's `depends`; `None` when implied.
    pub entry: Option<usize>,
}

/// The requirements of every node of one graph.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Requirements {
    nodes: Vec<Vec<Requirement>>,
}

impl Requirements {
    pub(crate) fn new(nodes: Vec<Vec<Requirement>>) -> Requirements {
        Requirements { nodes }
    }

    /// A node's requirements; all of them must hold for it to run.
    pub fn of(&self, node: u32) -> &[Requirement] {
        self.nodes.get(node as usize).map_or(&[], Vec::as_slice)
    }

    /// Whether the node only requires that its upstream steps succeeded,
    /// as every dependency did before outcomes and `||` existed.
    pub fn is_plain(&self, node: u32) -> bool {
        self.of(node)
            .iter()
            .all(|r| r.expr.is_conjunction_of_successes())
    }

    /// Whether every node is plain.
    pub fn all_plain(&self) -> bool {
        (0..self.nodes.len() as u32).all(|n| self.is_plain(n))
    }

    /// The first requirement that the known outcomes make false, with
    /// `None` while undecided or when all hold.
    pub fn first_false(
        &self,
        node: u32,
        ended: &impl Fn(&u32) -> Option<Ended>,
    ) -> Option<&Requirement> {
        self.of(node)
            .iter()
            .find(|r| r.expr.judge(ended) == Some(false))
    }
}

/// What is known of a node while a graph runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    /// Not ended yet (waiting, or running).
    Pending,
    Ended(Ended),
    /// Will not run: cancelled, or left behind when the run stopped.
    Cancelled,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Branch {
    Ok,
    Unknown,
    /// The failed node this branch carries.
    Failed(u32),
}

/// The failed node whose failure fails the run by the rule above, as far
/// as it is decided already: pending nodes whose requirements are already
/// false count as not running, the others may still run and handle a
/// failure. `None` when no failure is certain to fail the run; once every
/// node has ended this is the run's outcome.
pub fn run_failure(
    graph: &Graph,
    requirements: &Requirements,
    state: &impl Fn(u32) -> State,
) -> Option<u32> {
    let n = graph.len();
    // What each node came to, or is sure to come to: `Some(Skipped)` for a
    // pending node that cannot run.
    let mut known: Vec<Option<Ended>> = vec![None; n];
    let mut ran: Vec<Option<bool>> = vec![None; n];
    for &node in graph.order() {
        let i = node as usize;
        match state(node) {
            State::Ended(e) => {
                known[i] = Some(e);
                ran[i] = Some(e != Ended::Skipped);
            }
            State::Cancelled => ran[i] = Some(false),
            State::Pending => {
                let judged = |u: &u32| known[*u as usize];
                if requirements.first_false(node, &judged).is_some() {
                    known[i] = Some(Ended::Skipped);
                    ran[i] = Some(false);
                }
            }
        }
    }
    let mut branch = vec![Branch::Unknown; n];
    for &node in graph.order() {
        let i = node as usize;
        branch[i] = match (ran[i], known[i]) {
            (Some(true), Some(Ended::Failed)) => Branch::Failed(node),
            (Some(true), _) => Branch::Ok,
            (None, _) => Branch::Unknown,
            (Some(false), _) => {
                let mut worst = Branch::Ok;
                for &u in graph.upstream(node) {
                    match branch[u as usize] {
                        Branch::Failed(f) => {
                            worst = Branch::Failed(f);
                            break;
                        }
                        Branch::Unknown => worst = Branch::Unknown,
                        Branch::Ok => {}
                    }
                }
                worst
            }
        };
    }
    graph
        .order()
        .iter()
        .filter(|&&node| graph.downstream(node).is_empty())
        .find_map(|&leaf| match branch[leaf as usize] {
            Branch::Failed(f) => Some(f),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::depends::Outcome;

    fn req(expr: Expr<u32>) -> Requirement {
        Requirement {
            expr,
            entry: Some(0),
        }
    }

    fn bare(u: u32) -> Requirement {
        req(Expr::Ref(u, None))
    }

    /// a(0) → b(1) → c(2), plain.
    fn chain() -> (Graph, Requirements) {
        let g = Graph::new(vec![vec![], vec![0], vec![1]]).unwrap();
        let r = Requirements::new(vec![vec![], vec![bare(0)], vec![bare(1)]]);
        (g, r)
    }

    #[test]
    fn a_plain_failure_is_certain_at_once() {
        let (g, r) = chain();
        let states = [State::Ended(Ended::Failed), State::Pending, State::Pending];
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), Some(0));
        assert!(r.all_plain());
    }

    #[test]
    fn skips_without_failures_do_not_fail() {
        let (g, r) = chain();
        let states = [
            State::Ended(Ended::Skipped),
            State::Ended(Ended::Skipped),
            State::Ended(Ended::Skipped),
        ];
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), None);
    }

    #[test]
    fn a_dependent_that_may_run_on_the_failure_keeps_it_open() {
        // a(0) fails; b(1) depends on `a.failed`, c(2) on b.
        let g = Graph::new(vec![vec![], vec![0], vec![1]]).unwrap();
        let r = Requirements::new(vec![
            vec![],
            vec![req(Expr::Ref(0, Some(Outcome::Failed)))],
            vec![bare(1)],
        ]);
        let mut states = [State::Ended(Ended::Failed), State::Pending, State::Pending];
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), None);
        states[1] = State::Ended(Ended::Succeeded);
        states[2] = State::Ended(Ended::Succeeded);
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), None);
        // b ran and failed itself: that failure reaches the end.
        states[1] = State::Ended(Ended::Failed);
        states[2] = State::Ended(Ended::Skipped);
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), Some(1));
    }

    #[test]
    fn failure_is_preferred_over_success_on_the_way_to_a_skipped_leaf() {
        // a(0) fails, b(1) succeeds; d(2) needs `a.failed && b.failed` and
        // is skipped: it hangs off both, so a's failure reaches it.
        let g = Graph::new(vec![vec![], vec![], vec![0, 1]]).unwrap();
        let both_failed = Expr::And(vec![
            Expr::Ref(0, Some(Outcome::Failed)),
            Expr::Ref(1, Some(Outcome::Failed)),
        ]);
        let r = Requirements::new(vec![vec![], vec![], vec![req(both_failed)]]);
        assert!(!r.is_plain(2));
        let states = [
            State::Ended(Ended::Failed),
            State::Ended(Ended::Succeeded),
            State::Pending,
        ];
        // d cannot run any more: the failure is certain before d is judged.
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), Some(0));
    }

    #[test]
    fn a_failure_behind_a_step_that_may_still_run_is_not_certain() {
        // a(0) fails; b(1) = `a || x` with x(2) still running.
        let g = Graph::new(vec![vec![], vec![0, 2], vec![]]).unwrap();
        let r = Requirements::new(vec![
            vec![],
            vec![req(Expr::Or(vec![Expr::Ref(0, None), Expr::Ref(2, None)]))],
            vec![],
        ]);
        let mut states = [State::Ended(Ended::Failed), State::Pending, State::Pending];
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), None);
        states[2] = State::Ended(Ended::Skipped);
        assert_eq!(run_failure(&g, &r, &|n| states[n as usize]), Some(0));
    }
}
