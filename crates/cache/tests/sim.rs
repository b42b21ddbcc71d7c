//! The cache simulator: traces, policies and replay.

use couler_cache::importance::Weights;
use couler_cache::sim::{
    Change, Couler, Dag, Execution, Fifo, Key, Lookups, Lru, Oracle, Outcome, Policy, PolicyKind,
    Scenario, SimError, StepContext, StepKind, StepRun, StepSpec, Trace, TraceConfig, generate,
    replay, replay_with,
};
use std::collections::{HashMap, HashSet};

const GB: u64 = 1_000_000_000;

fn short(seed: u64, executions: usize) -> Trace {
    generate(&TraceConfig {
        seed,
        executions,
        ..TraceConfig::default()
    })
}

fn run(trace: &Trace, kind: PolicyKind, budget: u64) -> Outcome {
    replay(trace, kind.build(budget).as_mut())
}

/// A one-step workflow and executions of single outputs, named by `spec`.
fn solo_trace(outputs: &[(&str, f64, u64)]) -> Trace {
    let dag = Dag::new("solo", vec![StepSpec::new("step", StepKind::Train, vec![])]).unwrap();
    let executions = outputs
        .iter()
        .map(|&(spec, cost, size)| Execution {
            dag: 0,
            user: 0,
            change: Change::First,
            steps: vec![StepRun {
                key: key(spec),
                cost,
                size,
            }],
        })
        .collect();
    Trace {
        dags: vec![dag],
        executions,
    }
}

fn key(spec: &str) -> Key {
    Key::digest(spec, [])
}

#[test]
fn scenarios_have_the_papers_pods_and_models() {
    for scenario in Scenario::ALL {
        let dag = scenario.dag();
        assert_eq!(dag.len(), scenario.pods(), "{}", scenario.name());
        assert_eq!(
            dag.of_kind(StepKind::Train).len(),
            scenario.models(),
            "{}",
            scenario.name()
        );
    }
}

#[test]
fn dags_must_list_steps_in_topological_order() {
    let err = Dag::new(
        "bad",
        vec![
            StepSpec::new("a", StepKind::Load, vec![1]),
            StepSpec::new("b", StepKind::Load, vec![]),
        ],
    )
    .unwrap_err();
    assert_eq!(
        err,
        SimError::NotTopological {
            step: 0,
            upstream: 1
        }
    );
}

#[test]
fn the_simulator_is_deterministic_for_a_seed() {
    let a = short(7, 200);
    assert_eq!(a, short(7, 200));
    assert_ne!(a, short(8, 200), "another seed gives another trace");
    for kind in PolicyKind::ALL {
        assert_eq!(run(&a, kind, 10 * GB), run(&short(7, 200), kind, 10 * GB));
    }
}

#[test]
fn changes_propagate_downstream_through_the_keys() {
    let trace = short(3, 300);
    let mut last: HashMap<usize, &Execution> = HashMap::new();
    let mut one_model_changes = 0;
    for execution in &trace.executions {
        let dag = &trace.dags[execution.dag];
        if let Some(previous) = last.insert(execution.user, execution) {
            let changed: Vec<StepKind> = (0..dag.len())
                .filter(|&i| previous.steps[i].key != execution.steps[i].key)
                .map(|i| dag.steps()[i].kind)
                .collect();
            match execution.change {
                Change::Rerun => assert!(changed.is_empty()),
                Change::Hyperparameters(1) => {
                    one_model_changes += 1;
                    assert_eq!(
                        changed,
                        [StepKind::Train, StepKind::Evaluate, StepKind::Report]
                    );
                }
                Change::Preprocessing => {
                    assert!(changed.contains(&StepKind::Report));
                    assert!(changed.len() > 3, "a data change reaches many steps");
                }
                _ => {}
            }
        }
    }
    assert!(one_model_changes > 50);
}

#[test]
fn cache_all_bounds_every_policy() {
    let trace = short(11, 300);
    let all = run(&trace, PolicyKind::CacheAll, 0);
    assert!(all.hit_ratio() > 0.5);
    for budget in [5 * GB, 10 * GB, 30 * GB] {
        for kind in PolicyKind::ALL {
            let o = run(&trace, kind, budget);
            assert!(o.hits <= all.hits, "{} at {budget}", o.policy);
            assert!(o.total_time >= all.total_time, "{} at {budget}", o.policy);
        }
    }
}

#[test]
fn no_cache_never_hits() {
    let trace = short(5, 100);
    let o = run(&trace, PolicyKind::NoCache, 30 * GB);
    assert_eq!(o.hits, 0);
    assert_eq!(o.peak_bytes, 0);
    let all_costs: f64 = trace
        .executions
        .iter()
        .flat_map(|e| &e.steps)
        .map(|s| s.cost)
        .sum();
    assert!((o.total_time - all_costs).abs() < 1e-6 * all_costs);
}

#[test]
fn a_zero_budget_degrades_to_no_cache() {
    let trace = short(5, 150);
    let none = run(&trace, PolicyKind::NoCache, 0);
    for kind in PolicyKind::BUDGETED {
        let o = run(&trace, kind, 0);
        assert_eq!(o.hits, 0, "{}", o.policy);
        assert_eq!(o.total_time, none.total_time, "{}", o.policy);
        assert_eq!(o.peak_bytes, 0, "{}", o.policy);
    }
    // And a budget helps: the zero case is not vacuous.
    assert!(run(&trace, PolicyKind::Lru, 30 * GB).hits > 0);
}

#[test]
fn budgeted_policies_stay_within_budget() {
    let trace = short(9, 200);
    for kind in PolicyKind::BUDGETED {
        let o = run(&trace, kind, 7 * GB);
        assert!(o.peak_bytes <= 7 * GB, "{}", o.policy);
        assert!(o.peak_bytes > 6 * GB, "{} fills its budget", o.policy);
    }
}

#[test]
fn couler_does_not_evict_for_a_lower_scoring_newcomer() {
    // An expensive output fills the cache; a cheap one of the same size
    // scores lower and must not displace it.
    let trace = solo_trace(&[("expensive", 5000.0, 60), ("cheap", 1.0, 60)]);
    let mut couler = Couler::new(100, Weights::default());
    replay(&trace, &mut couler);
    assert!(couler.store().contains(&key("expensive")));
    assert!(!couler.store().contains(&key("cheap")));
    assert_eq!(couler.store().evictions(), 0);
    assert_eq!(couler.store().rejections(), 1);

    // The other way round the newcomer scores higher and does evict.
    let trace = solo_trace(&[("cheap", 1.0, 60), ("expensive", 5000.0, 60)]);
    let mut couler = Couler::new(100, Weights::default());
    replay(&trace, &mut couler);
    assert!(couler.store().contains(&key("expensive")));
    assert!(!couler.store().contains(&key("cheap")));
    assert_eq!(couler.store().evictions(), 1);
}

#[test]
fn couler_evicts_only_lower_scores_on_generated_traces() {
    let trace = short(13, 150);
    let mut couler = Couler::new(5 * GB, Weights::default());
    let (mut admissions_with_eviction, mut rejections) = (0, 0);
    for execution in &trace.executions {
        let dag = &trace.dags[execution.dag];
        for step in 0..dag.len() {
            let ctx = StepContext {
                dag,
                runs: &execution.steps,
                step,
            };
            if couler.lookup(&ctx) {
                continue;
            }
            let before: HashMap<Key, f64> = couler
                .store()
                .entries()
                .map(|(k, _)| (*k, couler.score_of(k).unwrap()))
                .collect();
            couler.offer(&ctx);
            let evicted: Vec<f64> = before
                .iter()
                .filter(|(k, _)| !couler.store().contains(k))
                .map(|(_, &s)| s)
                .collect();
            match couler.score_of(&ctx.run().key) {
                Some(newcomer) => {
                    admissions_with_eviction += usize::from(!evicted.is_empty());
                    assert!(evicted.iter().all(|&s| s < newcomer));
                }
                None => {
                    rejections += 1;
                    assert!(evicted.is_empty(), "a rejected newcomer evicts nothing");
                }
            }
        }
    }
    assert!(admissions_with_eviction > 0 && rejections > 0);
}

#[test]
fn couler_rescores_an_entry_when_it_is_reused() {
    // a → b: reusing `a` raises its reuse value F.
    let dag = Dag::new(
        "pair",
        vec![
            StepSpec::new("a", StepKind::Preprocess, vec![]),
            StepSpec::new("b", StepKind::Train, vec![0]),
        ],
    )
    .unwrap();
    let a = StepRun {
        key: key("a"),
        cost: 100.0,
        size: 10,
    };
    let execution = |b: &str| Execution {
        dag: 0,
        user: 0,
        change: Change::First,
        steps: vec![
            a,
            StepRun {
                key: Key::digest(b, [&a.key]),
                cost: 1000.0,
                size: 10,
            },
        ],
    };
    let mut couler = Couler::new(1000, Weights::default());
    replay(
        &Trace {
            dags: vec![dag.clone()],
            executions: vec![execution("b1")],
        },
        &mut couler,
    );
    let first = couler.score_of(&a.key).unwrap();
    replay(
        &Trace {
            dags: vec![dag],
            executions: vec![execution("b2")],
        },
        &mut couler,
    );
    assert!(couler.score_of(&a.key).unwrap() > first);
}

#[test]
fn lru_evicts_the_least_recently_used() {
    // a, b, a again, then c needs room for one entry: b goes under LRU,
    // a (the oldest insertion) under FIFO.
    let trace = solo_trace(&[
        ("a", 10.0, 40),
        ("b", 10.0, 40),
        ("a", 10.0, 40),
        ("c", 10.0, 40),
    ]);
    let mut lru = Lru::new(100);
    let o = replay(&trace, &mut lru);
    assert_eq!(o.hits, 1);
    let held: HashSet<Key> = lru.store().entries().map(|(k, _)| *k).collect();
    assert_eq!(held, HashSet::from([key("a"), key("c")]));

    let mut fifo = Fifo::new(100);
    replay(&trace, &mut fifo);
    let held: HashSet<Key> = fifo.store().entries().map(|(k, _)| *k).collect();
    assert_eq!(held, HashSet::from([key("b"), key("c")]));
}

#[test]
fn couler_time_never_grows_with_the_budget() {
    for seed in [1, 2, 3] {
        let trace = short(seed, 300);
        let mut previous: Option<(u64, f64)> = None;
        for budget_gb in [0, 5, 10, 15, 20, 30, 40, 60, 100] {
            let time = run(&trace, PolicyKind::Couler, budget_gb * GB).total_time;
            if let Some((smaller, before)) = previous {
                assert!(
                    time <= before,
                    "seed {seed}: {budget_gb} GB took {time:.0} s, {smaller} GB {before:.0} s"
                );
            }
            previous = Some((budget_gb, time));
        }
    }
}

#[test]
fn couler_takes_less_time_than_fifo_and_lru_on_generated_traces() {
    for seed in [21, 22] {
        let trace = short(seed, 300);
        for budget in [10 * GB, 20 * GB] {
            let couler = run(&trace, PolicyKind::Couler, budget).total_time;
            for kind in [PolicyKind::Fifo, PolicyKind::Lru] {
                let other = run(&trace, kind, budget).total_time;
                assert!(
                    couler < other,
                    "seed {seed}, {budget} B: Couler {couler:.0} s, {kind:?} {other:.0} s"
                );
            }
        }
    }
}

#[test]
fn couler_lets_an_idle_entry_go_for_a_fresh_one() {
    // A reused expensive output, then a long run of other requests: a
    // cheaper newcomer eventually displaces it, as the idle entry ages.
    let mut outputs = vec![("old", 5000.0, 60), ("old", 5000.0, 60)];
    let fillers: Vec<String> = (0..2000).map(|i| format!("tiny-{i}")).collect();
    outputs.extend(fillers.iter().map(|f| (f.as_str(), 1.0, 0)));
    outputs.push(("new", 500.0, 60));
    let trace = solo_trace(&outputs);
    let mut couler = Couler::new(100, Weights::default());
    replay(&trace, &mut couler);
    assert!(couler.store().contains(&key("new")));
    assert!(!couler.store().contains(&key("old")));
}

#[test]
fn the_oracle_hits_at_least_as_often_as_every_budgeted_policy() {
    for seed in [21, 22] {
        let trace = short(seed, 300);
        for budget in [10 * GB, 20 * GB] {
            let oracle = replay(&trace, &mut Oracle::new(budget, &trace));
            assert!(oracle.peak_bytes <= budget);
            for kind in PolicyKind::BUDGETED {
                let other = run(&trace, kind, budget);
                assert!(
                    oracle.hits >= other.hits,
                    "seed {seed}, {budget} B: oracle {} hits, {kind:?} {}",
                    oracle.hits,
                    other.hits
                );
            }
        }
    }
}

#[test]
fn the_oracle_keeps_what_comes_back_soonest() {
    // Room for one output: "a" comes back next, "b" later, "c" never.
    let trace = solo_trace(&[
        ("b", 1.0, 60),
        ("a", 1.0, 60),
        ("c", 1.0, 60),
        ("a", 1.0, 60),
        ("b", 1.0, 60),
    ]);
    let mut oracle = Oracle::new(100, &trace);
    let outcome = replay(&trace, &mut oracle);
    // b is cached, then displaced by a (needed sooner); c is refused; a
    // hits; b, needed last, is recomputed.
    assert_eq!(outcome.hits, 1);
    assert_eq!(
        outcome.rejections, 2,
        "c never comes back, b comes back later"
    );
}

#[test]
fn lookups_after_upstream_hit_what_lookups_before_the_run_cannot() {
    // A big, cheap load feeding an expensive training step, under a budget
    // that holds the model but not the data: the same execution twice.
    let dag = Dag::new(
        "pair",
        vec![
            StepSpec::new("load", StepKind::Load, vec![]),
            StepSpec::new("train", StepKind::Train, vec![0]),
        ],
    )
    .unwrap();
    let load = key("load");
    let steps = vec![
        StepRun {
            key: load,
            cost: 10.0,
            size: 5 * GB,
        },
        StepRun {
            key: Key::digest("train", [&load]),
            cost: 1000.0,
            size: GB,
        },
    ];
    let execution = Execution {
        dag: 0,
        user: 0,
        change: Change::First,
        steps,
    };
    let trace = Trace {
        dags: vec![dag],
        executions: vec![execution.clone(), execution],
    };
    let after = replay_with(&trace, &mut Lru::new(2 * GB), Lookups::AfterUpstream);
    let before = replay_with(&trace, &mut Lru::new(2 * GB), Lookups::BeforeRun);
    assert_eq!((after.hits, after.total_time), (1, 1020.0));
    assert_eq!((before.hits, before.total_time), (0, 2020.0));
    // With records, the load's key is known without its bytes: only the
    // training reads it, and that hits, so the load does not run.
    let records = replay(&trace, &mut Lru::new(2 * GB));
    assert_eq!(
        (records.hits, records.skipped, records.total_time),
        (1, 1, 1010.0)
    );
    assert_eq!(
        replay_with(&trace, &mut Lru::new(2 * GB), Lookups::Records),
        records
    );

    // On generated traces too, waiting for the upstream never loses a hit.
    let trace = short(13, 300);
    for kind in PolicyKind::ALL {
        let after = replay_with(&trace, kind.build(20 * GB).as_mut(), Lookups::AfterUpstream);
        let before = replay_with(&trace, kind.build(20 * GB).as_mut(), Lookups::BeforeRun);
        assert!(
            after.hits >= before.hits,
            "{kind:?}: {after:?} vs {before:?}"
        );
        // Skipping what nothing that runs reads never costs time.
        let records = replay(&trace, kind.build(20 * GB).as_mut());
        assert!(
            records.total_time <= after.total_time,
            "{kind:?}: {records:?} vs {after:?}"
        );
    }
}

#[test]
fn scaling_output_sizes_leaves_the_executions_and_their_keys_as_they_were() {
    let base = short(7, 60);
    let quarter = generate(&TraceConfig {
        seed: 7,
        executions: 60,
        size_scale: 0.25,
        ..TraceConfig::default()
    });
    assert_eq!(base.executions.len(), quarter.executions.len());
    for (a, b) in base.executions.iter().zip(&quarter.executions) {
        assert_eq!((a.dag, a.user, a.change), (b.dag, b.user, b.change));
        for (x, y) in a.steps.iter().zip(&b.steps) {
            assert_eq!((x.key, x.cost), (y.key, y.cost));
            let expected = x.size as f64 * 0.25;
            assert!(
                (y.size as f64 - expected).abs() <= 1.0,
                "{} bytes, expected {expected}",
                y.size
            );
        }
    }
}

#[test]
fn on_the_production_shaped_trace_couler_reaches_the_papers_hit_ratio_when_the_budget_is_generous()
{
    let config = TraceConfig::production();
    let trace = generate(&config);
    // What the shape claims: 10 GB holds about the mean working set (tight),
    // 30 GB three times it (generous), and the ceiling lies above the
    // production figure, as production's must.
    let users = Scenario::ALL.len() * config.users_per_scenario;
    let working_set = trace.shape(users).working_set_mean as f64 / GB as f64;
    assert!((8.0..12.0).contains(&working_set), "{working_set} GB");
    let ceiling = run(&trace, PolicyKind::CacheAll, 0).hit_ratio();
    assert!(ceiling > 0.85, "{ceiling}");
    let couler = run(&trace, PolicyKind::Couler, 30 * GB);
    assert!(couler.hit_ratio() >= 0.84, "{couler:?}");
    // Reaching it costs no time: Couler is still the fastest budgeted policy.
    for kind in [PolicyKind::Fifo, PolicyKind::Lru] {
        let other = run(&trace, kind, 30 * GB);
        assert!(
            couler.total_time <= other.total_time,
            "{couler:?} vs {other:?}"
        );
    }
}
