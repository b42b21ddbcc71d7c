//! Looking a whole plan up in the index, one DAG level at a time.
//!
//! A step's key needs the concrete outputs of the steps it reads, and those
//! are known before the run only when the upstream step is itself a hit (or
//! was kept from an earlier attempt). So steps are keyed in depth order,
//! each from the hits above it, and looked up in pipelined chunks: Redis
//! answers one chunk, and a worker decodes it, while the next chunk is
//! keyed; only a step whose upstream chunk is still out waits. Used by the
//! scheduler before a run starts and when each later stage of a staged run
//! starts (the planner cuts plans so that steps downstream of steps that
//! run are looked up once their outputs are recorded), and by the API's
//! `explain`.
//!
//! A step that missed but was computed before under its key (the index
//! keeps a [`Record`] of its outputs after its bytes are evicted) keys its
//! consumers from the record. If nothing that runs reads it, it need not
//! run either ([`Outcome::NotNeeded`]), as Bazel skips actions whose
//! outputs nobody downloads. If something does, it runs, and what was
//! keyed from its record is looked up again once it has (the record is
//! only ever trusted to skip a step, never to mix an old output with a new
//! run of the same step).
//!
//! A hit produced on another engine may keep its artifacts where this
//! plan's engine cannot read them (a local engine's files, for Argo pods).
//! The index hands out the entry's copy in a store the engine reads, if it
//! holds one. Otherwise the hit is used as long as nothing that runs reads
//! it; if something does, the step runs ([`Outcome::Elsewhere`]), with what
//! was keyed from it looked up again after it, as for a record, and its
//! result becomes such a copy when it is offered to the index.

use crate::index::{CacheIndex, Cached, Found, Record};
use crate::key::{self, CacheKey, NoKey, Scope};
use couler_optimizer::{Action, Plan, StepOutputs};
use std::collections::VecDeque;
use std::fmt;
use std::pin::Pin;
use std::sync::Arc;

/// What the index says about one planned step.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Computed before: the step need not run.
    Hit { key: CacheKey, entry: Box<Cached> },
    /// The step has a key but nothing is cached under it.
    Miss { key: CacheKey },
    /// Computed before, its bytes gone, and nothing that runs reads it:
    /// the step need not run. Its consumers were keyed from its record.
    NotNeeded { key: CacheKey, record: Box<Record> },
    /// The step has no key before the run.
    NotCacheable(NotCacheable),
    /// The plan already reuses a result from an earlier attempt of the run;
    /// its outputs feed downstream keys, and nothing was looked up.
    Kept,
    /// Cached where the plan's engine cannot read its artifacts, and a step
    /// that runs reads it: the step runs.
    Elsewhere { key: CacheKey },
}

/// Who looks a plan up.
#[derive(Debug, Clone, Copy)]
pub struct Asker<'a> {
    pub tenant: &'a str,
    /// Whether the tenant shares its cache entries.
    pub shares: bool,
    /// Where the engine that runs the plan reads artifacts from, by
    /// location prefix (`couler_engines::reads_artifacts_from`): a hit
    /// stored elsewhere is read from its copy in one of these stores, if
    /// the index holds one.
    pub reads: &'static [&'static str],
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
                f.write_str("a search is looked up trial by trial when it runs")
            }
            NotCacheable::Unsupported(what) => write!(f, "{what} steps are not cached"),
            NotCacheable::Pending {
                step: Some(step), ..
            } => write!(f, "reads outputs of {step}, known once it has run"),
            NotCacheable::Pending {
                step: None,
                reference,
            } => write!(f, "reads {reference}, known only at run time"),
            NotCacheable::ExitHandler => f.write_str("exit handlers are not cached"),
        }
    }
}

impl NotCacheable {
    /// Whether the run may still look the step up: once the steps it reads
    /// have run (a later stage), or, for a search, trial by trial.
    pub fn known_at_run_time(&self) -> bool {
        matches!(
            self,
            NotCacheable::Pending { .. } | NotCacheable::Unsupported("tune")
        )
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

/// Looks every step of `plan` up, in depth order, in chunks of keys looked
/// up while the next chunk is keyed; returns one [`Lookup`] per planned
/// step, in `plan.steps` order.
/// Redis being away makes every keyed step a miss (see [`CacheIndex`]).
/// Nothing is counted as reused: the caller does that for hits it uses.
pub async fn lookup_plan(
    plan: &Plan,
    asker: Asker<'_>,
    index: &CacheIndex,
) -> Result<Vec<Lookup>, couler_ir::Problems> {
    let dag = plan.dag()?;
    Ok(lookup_plan_with_dag(plan, &dag, asker, index).await)
}

/// [`lookup_plan`] for a caller that already holds the plan's DAG (from
/// `couler_ir::validate(&plan.workflow, …)`): validating a big plan again
/// costs about as much as looking it up.
pub async fn lookup_plan_with_dag(
    plan: &Plan,
    dag: &couler_ir::Dag,
    asker: Asker<'_>,
    index: &CacheIndex,
) -> Vec<Lookup> {
    let main = plan.workflow.steps.len();
    assert_eq!(dag.steps.len(), main, "the DAG is not this plan's");
    // Looked up for every reference: foldhash (seeded per process, as
    // std's SipHash is) costs a fraction of SipHash on names this short.
    let position: foldhash::HashMap<&str, usize> = plan.workflow.steps[..main]
        .iter()
        .enumerate()
        .map(|(i, s)| (s.name.as_str(), i))
        .collect();
    let scopes: Vec<Scope> = (0..plan.steps.len())
        .map(|i| key::scope_of(plan.ir_step(i), asker.tenant, asker.shares))
        .collect();
    let mut outcomes: Vec<Option<Outcome>> = vec![None; plan.steps.len()];
    // The records of missed steps computed before, which key their
    // consumers until `settle` decides whether the steps run.
    let mut records: Vec<Option<Box<Record>>> = vec![None; plan.steps.len()];
    // Hits whose artifacts the plan's engine cannot read, likewise.
    let mut elsewhere = vec![false; plan.steps.len()];
    for exit_handler in &mut outcomes[main..] {
        *exit_handler = Some(Outcome::NotCacheable(NotCacheable::ExitHandler));
    }

    // Steps in depth order, so what a step reads was keyed before it. Keys
    // go out in chunks; a step whose upstream lookups have not come back
    // waits for them, while everything else goes on being keyed.
    let order = schedule(&dag.steps);
    let mut chunk: Vec<(usize, CacheKey)> = Vec::with_capacity(CHUNK);
    let mut in_flight: VecDeque<Pending> = VecDeque::new();
    for (n, i) in order.into_iter().enumerate() {
        // Keys cost about a microsecond each: let other tasks run now and
        // then on a big plan.
        if n % 1024 == 1023 {
            tokio::task::yield_now().await;
        }
        if matches!(plan.steps[i].action, Action::Reuse { .. }) {
            outcomes[i] = Some(Outcome::Kept);
            continue;
        }
        let upstream = dag.steps.upstream(i as u32);
        let unresolved =
            |outcomes: &[Option<Outcome>]| upstream.iter().any(|&u| outcomes[u as usize].is_none());
        if unresolved(&outcomes) {
            if chunk.iter().any(|(j, _)| upstream.contains(&(*j as u32))) {
                in_flight.push_back(send(index, std::mem::take(&mut chunk), asker.reads));
            }
            while unresolved(&outcomes) {
                let pending = in_flight
                    .pop_front()
                    .expect("an unresolved upstream step is being looked up");
                pending
                    .land(asker, &mut outcomes, &mut records, &mut elsewhere)
                    .await;
            }
        }
        let outputs_of = |name: &str| -> Option<&StepOutputs> {
            let &j = position.get(name)?;
            match &outcomes[j] {
                Some(Outcome::Hit { entry, .. }) => Some(&entry.outputs),
                Some(Outcome::Kept) => match &plan.steps[j].action {
                    Action::Reuse { outputs, .. } => Some(outputs),
                    Action::Run => None,
                },
                Some(Outcome::Miss { .. }) => records[j].as_ref().map(|r| &r.outputs),
                _ => None,
            }
        };
        match key::key(plan.ir_step(i), &scopes[i], outputs_of) {
            Ok(k) => chunk.push((i, k)),
            Err(no) => outcomes[i] = Some(Outcome::NotCacheable(no.into())),
        }
        if chunk.len() == CHUNK {
            in_flight.push_back(send(index, std::mem::take(&mut chunk), asker.reads));
        }
    }
    if !chunk.is_empty() {
        in_flight.push_back(send(index, chunk, asker.reads));
    }
    for pending in in_flight {
        pending
            .land(asker, &mut outcomes, &mut records, &mut elsewhere)
            .await;
    }
    let mut outcomes: Vec<Outcome> = outcomes
        .into_iter()
        .map(|o| o.expect("every step is on a level or an exit handler"))
        .collect();
    settle(plan, dag, &mut outcomes, records, &elsewhere);

    outcomes
        .into_iter()
        .zip(scopes)
        .map(|(outcome, scope)| Lookup { scope, outcome })
        .collect()
}

/// Decides which missed steps with a record run: one runs when a step that
/// runs reads it, an exit handler reads it, or nothing reads it (its
/// outputs are what the run is for); the rest are [`Outcome::NotNeeded`].
/// Hits stored `elsewhere` (where the engine cannot read them) run on the
/// first two grounds and are [`Outcome::Elsewhere`]; the rest stay hits.
/// Whatever was keyed from the record of a step that runs, or from an
/// entry keyed so, becomes pending: it is looked up again once that step
/// has run, as if there had been no record.
fn settle(
    plan: &Plan,
    dag: &couler_ir::Dag,
    outcomes: &mut [Outcome],
    mut records: Vec<Option<Box<Record>>>,
    elsewhere: &[bool],
) {
    if records.iter().all(Option::is_none) && !elsewhere.contains(&true) {
        return;
    }
    let graph = &dag.steps;
    let main = graph.len();
    let read_by_exit = exit_handler_reads(plan);
    let known = |i: usize| records[i].is_some() || elsewhere[i];
    let keyed = |o: &Outcome| matches!(o, Outcome::Hit { .. } | Outcome::Miss { .. });
    let mut runs: Vec<bool> = (0..main)
        .map(|i| match &outcomes[i] {
            Outcome::Hit { .. } | Outcome::Kept => false,
            Outcome::Miss { .. } => !known(i),
            Outcome::NotCacheable(_) | Outcome::NotNeeded { .. } | Outcome::Elsewhere { .. } => {
                true
            }
        })
        .collect();
    // The upstream step that makes a step's key untrustworthy.
    let mut invalid: Vec<Option<usize>> = vec![None; main];
    loop {
        let mut changed = false;
        for &node in graph.order() {
            let i = node as usize;
            if invalid[i].is_some() || !keyed(&outcomes[i]) {
                continue;
            }
            let bad = graph.upstream(node).iter().map(|&u| u as usize).find(|&u| {
                // Only keyed steps are ever invalid.
                (known(u) && runs[u]) || invalid[u].is_some()
            });
            if let Some(u) = bad {
                invalid[i] = Some(u);
                runs[i] = true;
                changed = true;
            }
        }
        for &node in graph.order().iter().rev() {
            let i = node as usize;
            if runs[i] || !known(i) {
                continue;
            }
            let downstream = graph.downstream(node);
            if (downstream.is_empty() && !elsewhere[i])
                || read_by_exit.contains(plan.steps[i].name.as_str())
                || downstream.iter().any(|&d| runs[d as usize])
            {
                runs[i] = true;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for i in 0..main {
        let (Outcome::Miss { key } | Outcome::Hit { key, .. }) = &outcomes[i] else {
            continue;
        };
        if let Some(u) = invalid[i] {
            // What the record of `u` (or an entry keyed from it) stood for
            // is known only once `u` has run again.
            let step = plan.steps[u].name.clone();
            let reference = format!("{{{{steps.{step}.outputs}}}}");
            outcomes[i] = Outcome::NotCacheable(NotCacheable::Pending {
                step: Some(step),
                reference,
            });
        } else if runs[i] && elsewhere[i] {
            outcomes[i] = Outcome::Elsewhere { key: *key };
        } else if !runs[i]
            && let Some(record) = records[i].take()
        {
            outcomes[i] = Outcome::NotNeeded { key: *key, record };
        }
    }
}

/// The main steps whose outputs exit handlers read.
fn exit_handler_reads(plan: &Plan) -> std::collections::HashSet<String> {
    let read = std::cell::RefCell::new(std::collections::HashSet::new());
    for step in &plan.workflow.on_exit {
        let mut step = step.clone();
        couler_optimizer::visit_text(&mut step, &|text: &mut String| {
            for r in couler_ir::refs::references(text).flatten() {
                if let Some(name) = r.step() {
                    read.borrow_mut().insert(name.to_owned());
                }
            }
        });
    }
    read.into_inner()
}

/// Keys looked up together: small enough that Redis answers one chunk,
/// and a worker decodes it, while the next is keyed; large enough to keep
/// round trips few.
const CHUNK: usize = 128;

/// A chunk of keyed steps being looked up.
struct Pending {
    steps: Vec<usize>,
    keys: Arc<[CacheKey]>,
    found: Pin<Box<dyn Future<Output = Vec<Found>> + Send>>,
}

impl Pending {
    /// Waits for the chunk and records what was found.
    async fn land(
        self,
        asker: Asker<'_>,
        outcomes: &mut [Option<Outcome>],
        records: &mut [Option<Box<Record>>],
        elsewhere: &mut [bool],
    ) {
        let found = self.found.await;
        for ((i, &key), found) in self.steps.into_iter().zip(self.keys.iter()).zip(found) {
            outcomes[i] = Some(match found {
                Found::Entry(entry) => {
                    elsewhere[i] = !crate::index::readable(&entry.outputs, asker.reads);
                    Outcome::Hit { key, entry }
                }
                Found::Record(record) => {
                    records[i] = Some(record);
                    Outcome::Miss { key }
                }
                Found::Nothing => Outcome::Miss { key },
            });
        }
    }
}

/// Starts looking a chunk of keyed steps up.
fn send(
    index: &CacheIndex,
    chunk: Vec<(usize, CacheKey)>,
    reads: &'static [&'static str],
) -> Pending {
    let (steps, keys): (Vec<usize>, Vec<CacheKey>) = chunk.into_iter().unzip();
    let keys: Arc<[CacheKey]> = keys.into();
    let found = Box::pin(index.lookup_in_background(keys.clone(), reads));
    Pending { steps, keys, found }
}

/// The order steps are keyed in: by depth, and within a depth by when what
/// they read was sent (the latest position of an upstream step), so that a
/// step's upstream chunk has most likely come back by its turn.
fn schedule(graph: &couler_ir::graph::Graph) -> Vec<usize> {
    let mut position = vec![0usize; graph.len()];
    let mut order = Vec::with_capacity(graph.len());
    for mut level in levels(graph) {
        // Stable: steps reading the same chunk keep their order.
        level.sort_by_key(|&i| {
            graph
                .upstream(i as u32)
                .iter()
                .map(|&u| position[u as usize])
                .max()
        });
        for i in level {
            position[i] = order.len();
            order.push(i);
        }
    }
    order
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

    #[test]
    fn steps_reading_earlier_steps_are_keyed_first() {
        let p = plan(
            "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: a, container: {image: x}}\n  - {name: b, container: {image: x}}\n  - {name: c, depends: [b], container: {image: x}}\n  - {name: d, depends: [a], container: {image: x}}\n  - {name: e, depends: [c], container: {image: x}}\n",
        );
        let dag = couler_ir::validate(&p.workflow, &Default::default()).unwrap();
        // d reads a, sent before b (which c reads): d goes first.
        assert_eq!(schedule(&dag.steps), vec![0, 1, 3, 2, 4]);
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
        let asker = Asker {
            tenant: "tnt_x",
            shares: true,
            reads: &["file://"],
        };
        let found = lookup_plan(&p, asker, &index).await.unwrap();
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

    /// prepare → train-a, train-b (each reading prepare) → report (reading
    /// both).
    const FAN: &str = "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: prepare, container: {image: x}}\n  - {name: train-a, container: {image: x, args: ['{{steps.prepare.outputs.result}}']}}\n  - {name: train-b, container: {image: x, args: ['{{steps.prepare.outputs.result}}']}}\n  - {name: report, container: {image: x, args: ['{{steps.train-a.outputs.result}}', '{{steps.train-b.outputs.result}}']}}\n";

    fn hit() -> Outcome {
        Outcome::Hit {
            key: CacheKey([1; 32]),
            entry: Box::new(Cached {
                outputs: StepOutputs::default(),
                wall_ms: 1,
                cpu_ms: 1,
                max_rss_kb: 0,
                size: 1,
                reconstruction: 1.0,
                downstream: 0.0,
                created_at: 0,
            }),
        }
    }

    fn miss() -> Outcome {
        Outcome::Miss {
            key: CacheKey([2; 32]),
        }
    }

    fn record() -> Option<Box<Record>> {
        Some(Box::new(Record {
            outputs: StepOutputs::default(),
            wall_ms: 7,
        }))
    }

    /// Settles `outcomes` of the plan's steps, those `recorded` names
    /// missed with a record; per step: hit, miss, not needed, or pending
    /// on the step named.
    fn settled(yaml: &str, outcomes: Vec<Outcome>, recorded: &[usize]) -> Vec<String> {
        settled_with(yaml, outcomes, recorded, &[])
    }

    /// [`settled`], with the hits `stored_elsewhere` names kept where the
    /// engine cannot read them.
    fn settled_with(
        yaml: &str,
        outcomes: Vec<Outcome>,
        recorded: &[usize],
        stored_elsewhere: &[usize],
    ) -> Vec<String> {
        let p = plan(yaml);
        let dag = couler_ir::validate(&p.workflow, &Default::default()).unwrap();
        let mut records = vec![None; outcomes.len()];
        for &i in recorded {
            records[i] = record();
        }
        let mut elsewhere = vec![false; outcomes.len()];
        for &i in stored_elsewhere {
            elsewhere[i] = true;
        }
        let mut outcomes = outcomes;
        settle(&p, &dag, &mut outcomes, records, &elsewhere);
        outcomes
            .iter()
            .map(|o| match o {
                Outcome::Hit { .. } => "hit".to_owned(),
                Outcome::Miss { .. } => "miss".to_owned(),
                Outcome::NotNeeded { .. } => "not needed".to_owned(),
                Outcome::Elsewhere { .. } => "runs: stored elsewhere".to_owned(),
                Outcome::NotCacheable(NotCacheable::Pending { step: Some(s), .. }) => {
                    format!("pending on {s}")
                }
                other => format!("{other:?}"),
            })
            .collect()
    }

    #[test]
    fn a_recorded_step_that_only_hits_read_need_not_run() {
        assert_eq!(
            settled(FAN, vec![miss(), hit(), hit(), hit()], &[0]),
            ["not needed", "hit", "hit", "hit"]
        );
        // report runs, but reads only the trainings, which are cached.
        assert_eq!(
            settled(FAN, vec![miss(), hit(), hit(), miss()], &[0]),
            ["not needed", "hit", "hit", "miss"]
        );
        // A chain of recorded steps: the trainings read prepare only via
        // records.
        assert_eq!(
            settled(FAN, vec![miss(), miss(), miss(), hit()], &[0, 1, 2]),
            ["not needed", "not needed", "not needed", "hit"]
        );
    }

    #[test]
    fn a_recorded_step_that_a_running_step_reads_runs_and_what_its_record_keyed_waits() {
        // train-b runs, so prepare does; train-a's hit was keyed from
        // prepare's record, so it is looked up again after prepare, and so
        // is report (keyed from train-a's entry).
        assert_eq!(
            settled(
                FAN,
                vec![
                    miss(),
                    hit(),
                    miss(),
                    Outcome::NotCacheable(NotCacheable::Pending {
                        step: Some("train-b".into()),
                        reference: "{{steps.train-b.outputs.result}}".into()
                    })
                ],
                &[0]
            ),
            [
                "miss",
                "pending on prepare",
                "pending on prepare",
                "pending on train-b"
            ]
        );
        // What nothing reads is the run's result: it runs.
        assert_eq!(
            settled(FAN, vec![hit(), hit(), hit(), miss()], &[3]),
            ["hit", "hit", "hit", "miss"]
        );
    }

    #[test]
    fn a_hit_stored_where_the_engine_cannot_read_runs_only_when_a_running_step_reads_it() {
        // Read only by hits, or by nothing: used as it is.
        assert_eq!(
            settled_with(FAN, vec![hit(), hit(), hit(), miss()], &[], &[0]),
            ["hit", "hit", "hit", "miss"]
        );
        assert_eq!(
            settled_with(FAN, vec![hit(), hit(), hit(), hit()], &[], &[3]),
            ["hit", "hit", "hit", "hit"]
        );
        // train-b runs and reads prepare: prepare runs on this engine, and
        // what was keyed from its entry waits for it.
        assert_eq!(
            settled_with(
                FAN,
                vec![
                    hit(),
                    hit(),
                    miss(),
                    Outcome::NotCacheable(NotCacheable::Pending {
                        step: Some("train-b".into()),
                        reference: "{{steps.train-b.outputs.result}}".into()
                    })
                ],
                &[],
                &[0]
            ),
            [
                "runs: stored elsewhere",
                "pending on prepare",
                "pending on prepare",
                "pending on train-b"
            ]
        );
    }

    #[test]
    fn a_recorded_step_an_exit_handler_reads_runs() {
        let yaml = format!(
            "{FAN}onExit:\n  - {{name: notify, container: {{image: x, args: ['{{{{steps.prepare.outputs.result}}}}']}}}}\n"
        );
        let mut outcomes = vec![miss(), hit(), hit(), hit()];
        outcomes.push(Outcome::NotCacheable(NotCacheable::ExitHandler));
        let got = settled(&yaml, outcomes, &[0]);
        assert_eq!(
            got[..4],
            [
                "miss",
                "pending on prepare",
                "pending on prepare",
                "pending on train-a"
            ]
        );
    }

    #[test]
    fn reasons_name_the_upstream_step() {
        let pending = NotCacheable::from(NoKey::Pending("{{steps.a.outputs.result}}".into()));
        assert_eq!(
            pending.to_string(),
            "reads outputs of a, known once it has run"
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
