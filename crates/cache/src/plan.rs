//! Looking a whole plan up in the index, one DAG level at a time.
//!
//! A step's key needs the concrete outputs of the steps it reads, and those
//! are known before the run only when the upstream step is itself a hit (or
//! was kept from an earlier attempt). So levels are walked in order: the
//! keys of a level are computed from the hits of the levels above it and
//! looked up together in one round trip. Used by the scheduler before a run
//! starts and by the API's `explain`.

use crate::index::{CacheIndex, Entry};
use crate::key::{self, CacheKey, NoKey, Scope};
use couler_optimizer::{Action, Plan, StepOutputs};
use std::collections::HashMap;
use std::fmt;

/// What the index says about one planned step.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Computed before: the step need not run.
    Hit { key: CacheKey, entry: Box<Entry> },
    /// The step has a key but nothing is cached under it.
    Miss { key: CacheKey },
    /// The step has no key before the run.
    NotCacheable(NotCacheable),
    /// The plan already reuses a result from an earlier attempt of the run;
    /// its outputs feed downstream keys, and nothing was looked up.
    Kept,
}

/// Why a step has no key before the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotCacheable {
    /// `cache: {policy: off}`.
    PolicyOff,
    /// `map`, `while` or `tune` (the payload names which).
    Unsupported(&'static str),
    /// It reads an output that is not known before the run: of `step` when
    /// the reference names one (that step is not a hit), else `reference`
    /// itself (an item, a trial parameter).
    Pending {
        step: Option<String>,
        reference: String,
    },
    /// Exit handlers run whatever happened and are never cached.
    ExitHandler,
}

impl fmt::Display for NotCacheable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NotCacheable::PolicyOff => f.write_str("policy off"),
            NotCacheable::Unsupported("map") => f.write_str("fan-out steps are not cached"),
            NotCacheable::Unsupported("while") => f.write_str("loops are not cached"),
            NotCacheable::Unsupported("tune") => {
                f.write_str("hyperparameter searches are not cached")
            }
            NotCacheable::Unsupported(what) => write!(f, "{what} steps are not cached"),
            NotCacheable::Pending {
                step: Some(step), ..
            } => write!(f, "reads outputs of {step} that are not cached"),
            NotCacheable::Pending {
                step: None,
                reference,
            } => write!(f, "reads {reference}, known only at run time"),
            NotCacheable::ExitHandler => f.write_str("exit handlers are not cached"),
        }
    }
}

impl From<NoKey> for NotCacheable {
    fn from(no: NoKey) -> Self {
        match no {
            NoKey::Off => NotCacheable::PolicyOff,
            NoKey::Unsupported(what) => NotCacheable::Unsupported(what),
            NoKey::Pending(reference) => {
                let step = couler_ir::refs::references(&reference)
                    .find_map(|r| r.ok().and_then(|r| r.step().map(str::to_owned)));
                NotCacheable::Pending { step, reference }
            }
        }
    }
}

/// One planned step's scope and outcome.
#[derive(Debug, Clone, PartialEq)]
pub struct Lookup {
    pub scope: Scope,
    pub outcome: Outcome,
}

/// Looks every step of `plan` up, one `lookup` call per DAG level that has
/// keys; returns one [`Lookup`] per planned step, in `plan.steps` order.
/// Redis being away makes every keyed step a miss (see [`CacheIndex`]).
/// Nothing is counted as reused: the caller does that for hits it uses.
pub async fn lookup_plan(
    plan: &Plan,
    tenant: &str,
    tenant_shares: bool,
    index: &CacheIndex,
) -> Result<Vec<Lookup>, couler_ir::Problems> {
    let dag = plan.dag()?;
    Ok(lookup_plan_with_dag(plan, &dag, tenant, tenant_shares, index).await)
}

/// [`lookup_plan`] for a caller that already holds the plan's DAG (from
/// `couler_ir::validate(&plan.workflow, …)`): validating a big plan again
/// costs about as much as looking it up.
pub async fn lookup_plan_with_dag(
    plan: &Plan,
    dag: &couler_ir::Dag,
    tenant: &str,
    tenant_shares: bool,
    index: &CacheIndex,
) -> Vec<Lookup> {
    let main = plan.workflow.steps.len();
    assert_eq!(dag.steps.len(), main, "the DAG is not this plan's");
    let position: HashMap<&str, usize> = plan.workflow.steps[..main]
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let scopes: Vec<Scope> = (0..plan.steps.len())
        .map(|i| key::scope_of(plan.ir_step(i), tenant, tenant_shares))
        .collect();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; plan.steps.len()];
    for exit_handler in &mut outcomes[main..] {
        *exit_handler = Some(Outcome::NotCacheable(NotCacheable::ExitHandler));
    }

    for level in levels(&dag.steps) {
        // Keys first, while the outcomes of the levels above are only read.
        let mut keyed: Vec<(usize, CacheKey)> = Vec::with_capacity(level.len());
        let mut decided: Vec<(usize, Outcome)> = Vec::new();
        {
            let outputs_of = |name: &str| -> Option<&StepOutputs> {
                let &j = position.get(name)?;
                match &outcomes[j] {
                    Some(Outcome::Hit { entry, .. }) => Some(&entry.outputs),
                    Some(Outcome::Kept) => match &plan.steps[j].action {
                        Action::Reuse { outputs, .. } => Some(outputs),
                        Action::Run => None,
                    },
                    _ => None,
                }
            };
            for (n, &i) in level.iter().enumerate() {
                // Keys cost microseconds each: let other tasks run now and
                // then on a wide level.
                if n % 1024 == 1023 {
                    tokio::task::yield_now().await;
                }
                if matches!(plan.steps[i].action, Action::Reuse { .. }) {
                    decided.push((i, Outcome::Kept));
                    continue;
                }
                match key::key(plan.ir_step(i), &scopes[i], outputs_of) {
                    Ok(k) => keyed.push((i, k)),
                    Err(no) => decided.push((i, Outcome::NotCacheable(no.into()))),
                }
            }
        }
        for (i, outcome) in decided {
            outcomes[i] = Some(outcome);
        }
        if keyed.is_empty() {
            continue;
        }
        let keys: Vec<CacheKey> = keyed.iter().map(|(_, k)| k.clone()).collect();
        let found = index.lookup(&keys).await;
        for ((i, key), entry) in keyed.into_iter().zip(found) {
            outcomes[i] = Some(match entry {
                Some(entry) => Outcome::Hit {
                    key,
                    entry: Box::new(entry),
                },
                None => Outcome::Miss { key },
            });
        }
    }

    outcomes
        .into_iter()
        .zip(scopes)
        .map(|(outcome, scope)| Lookup {
            scope,
            outcome: outcome.expect("every step is on a level or an exit handler"),
        })
        .collect()
}

/// Steps grouped by depth: a step's level is one more than the deepest of
/// its upstream steps, so everything it reads sits on an earlier level.
fn levels(graph: &couler_ir::graph::Graph) -> Vec<Vec<usize>> {
    let mut depth = vec![0usize; graph.len()];
    let mut levels: Vec<Vec<usize>> = Vec::new();
    for &node in graph.order() {
        let d = graph
            .upstream(node)
            .iter()
            .map(|&u| depth[u as usize] + 1)
            .max()
            .unwrap_or(0);
        depth[node as usize] = d;
        if levels.len() <= d {
            levels.resize_with(d + 1, Vec::new);
        }
        levels[d].push(node as usize);
    }
    levels
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(yaml: &str) -> Plan {
        let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap();
        couler_optimizer::Pipeline::default()
            .plan(workflow, &Default::default(), |_, f| f())
            .unwrap()
    }

    #[test]
    fn levels_put_every_step_below_what_it_reads() {
        let p = plan(
            "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: a, container: {image: x}}\n  - {name: b, container: {image: x, args: ['{{steps.a.outputs.result}}']}}\n  - {name: c, container: {image: x}}\n  - {name: d, depends: [b, c], container: {image: x}}\n",
        );
        let dag = couler_ir::validate(&p.workflow, &Default::default()).unwrap();
        assert_eq!(levels(&dag.steps), vec![vec![0, 2], vec![1], vec![3]]);
    }

    #[tokio::test]
    async fn kept_results_feed_downstream_keys() {
        let workflow = couler_ir::load(
            "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: a, container: {image: x}}\n  - {name: b, container: {image: x, args: ['{{steps.a.outputs.result}}']}}\n  - {name: c, container: {image: x, args: ['{{steps.b.outputs.result}}']}}\n",
            couler_ir::Format::Yaml,
        )
        .unwrap();
        let kept = StepOutputs {
            result: Some("hi".into()),
            ..Default::default()
        };
        let facts = couler_optimizer::Facts {
            earlier: [("a".into(), (couler_optimizer::ReuseStatus::Succeeded, kept))].into(),
            ..Default::default()
        };
        let p = couler_optimizer::Pipeline::default()
            .plan(workflow, &facts, |_, f| f())
            .unwrap();
        // No Redis at all: every lookup misses.
        let index = CacheIndex::new(crate::SharedRedis::default(), Default::default());
        let found = lookup_plan(&p, "tnt_x", true, &index).await.unwrap();
        let outcomes: Vec<&Outcome> = found.iter().map(|l| &l.outcome).collect();
        assert_eq!(outcomes[0], &Outcome::Kept);
        assert!(matches!(outcomes[1], Outcome::Miss { .. }));
        assert_eq!(
            outcomes[2],
            &Outcome::NotCacheable(NotCacheable::Pending {
                step: Some("b".into()),
                reference: "{{steps.b.outputs.result}}".into()
            })
        );
    }

    #[test]
    fn reasons_name_the_upstream_step() {
        let pending = NotCacheable::from(NoKey::Pending("{{steps.a.outputs.result}}".into()));
        assert_eq!(
            pending.to_string(),
            "reads outputs of a that are not cached"
        );
        let item = NotCacheable::from(NoKey::Pending("{{item}}".into()));
        assert_eq!(item.to_string(), "reads {{item}}, known only at run time");
        assert_eq!(
            NotCacheable::from(NoKey::Unsupported("map")).to_string(),
            "fan-out steps are not cached"
        );
        assert_eq!(NotCacheable::from(NoKey::Off).to_string(), "policy off");
    }
}
