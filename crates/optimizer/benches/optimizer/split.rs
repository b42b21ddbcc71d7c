//! Auto-parallel split of generated layered DAGs under an engine-like budget
//! (200 steps, 512 KiB a sub-workflow; 1–4 KiB a step).
//!
//! Run: `cargo bench -p couler-optimizer --bench optimizer`
//! Targets: time(100k)/time(10k) <= 12 (linear); 100k steps split in <= 1 s;
//! the unit-cost critical path is unchanged by the split. Reported
//! alongside: parts, and the parallelism (total cost / makespan) the split
//! keeps, with unit costs and with random costs. As a baseline for the
//! growth, `Graph::critical_path_len` (one linear pass over the same graph)
//! is timed the same way: at 10k steps a graph fits in L2, at 100k it does
//! not, so even a plain linear pass grows by more than 10x.

use couler_ir::Graph;
use couler_optimizer::split::{Budget, Split, Weight, makespan, split};
use rand::rngs::Xoshiro256PlusPlus;
use rand::{RngExt, SeedableRng};
use std::hint::black_box;
use std::time::{Duration, Instant};

const KIB: u64 = 1024;
const BUDGET: Budget = Budget {
    max_steps: Some(200),
    max_bytes: Some(512 * KIB),
    max_pods: None,
};

/// Layers of 1–100 steps; each step reads 1–3 steps of the layer before
/// and, one time in ten, a step of any earlier layer. One step in a
/// thousand is isolated (a hyperparameter search).
fn generate(rng: &mut Xoshiro256PlusPlus, steps: usize) -> (Graph, Vec<Weight>) {
    let mut upstream: Vec<Vec<u32>> = Vec::with_capacity(steps);
    let mut previous = 0..0;
    while upstream.len() < steps {
        let width = rng.random_range(1..=100).min(steps - upstream.len());
        let start = upstream.len();
        for _ in 0..width {
            let mut reads = Vec::new();
            if !previous.is_empty() {
                for _ in 0..rng.random_range(1..=3) {
                    reads.push(rng.random_range(previous.clone()) as u32);
                }
                if rng.random_bool(0.1) {
                    reads.push(rng.random_range(0..previous.start.max(1)) as u32);
                }
            }
            upstream.push(reads);
        }
        previous = start..upstream.len();
    }
    let weights = (0..steps)
        .map(|_| Weight {
            bytes: rng.random_range(KIB..=4 * KIB),
            pods: 1,
            isolate: rng.random_range(0..1000) == 0,
        })
        .collect();
    (Graph::new(upstream).expect("edges run forward"), weights)
}

/// Median of `runs` timings of `f`.
fn median(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut times: Vec<Duration> = (0..runs)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed()
        })
        .collect();
    times.sort();
    times[runs / 2]
}

struct Row {
    steps: usize,
    edges: usize,
    time: Duration,
    baseline: Duration,
    parts: usize,
    largest: usize,
    path_before: f64,
    path_after: f64,
    /// Parallelism (total cost / makespan), unsplit and split.
    unit: (f64, f64),
    random: (f64, f64),
}

fn measure(steps: usize, runs: usize, seed: u64) -> Row {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let (graph, weights) = generate(&mut rng, steps);
    let time = median(runs, || {
        black_box(split(black_box(&graph), &weights, &BUDGET));
    });
    let baseline = median(runs, || {
        black_box(black_box(&graph).critical_path_len());
    });
    let result = split(&graph, &weights, &BUDGET);

    let unit = vec![1.0; steps];
    let random: Vec<f64> = (0..steps).map(|_| rng.random_range(1.0..=100.0)).collect();
    let parallelism = |cost: &[f64], split: Option<&Split>| {
        cost.iter().sum::<f64>() / makespan(&graph, cost, split)
    };
    Row {
        steps,
        edges: (0..steps as u32).map(|v| graph.upstream(v).len()).sum(),
        time,
        baseline,
        parts: result.parts.len(),
        largest: result
            .parts
            .iter()
            .map(|p| p.steps.len())
            .max()
            .unwrap_or(0),
        path_before: makespan(&graph, &unit, None),
        path_after: makespan(&graph, &unit, Some(&result)),
        unit: (parallelism(&unit, None), parallelism(&unit, Some(&result))),
        random: (
            parallelism(&random, None),
            parallelism(&random, Some(&result)),
        ),
    }
}

fn verdict(ok: bool) -> &'static str {
    if ok { "PASS" } else { "FAIL" }
}

pub fn main() {
    let rows = [measure(10_000, 31, 10), measure(100_000, 11, 100)];

    println!(
        "auto-parallel split of layered random DAGs; budget 200 steps, 512 KiB (1-4 KiB a step)"
    );
    println!(
        "{:>7} {:>7} {:>10} {:>8} {:>6} {:>8} {:>15} {:>26} {:>26}",
        "steps",
        "edges",
        "split",
        "per step",
        "parts",
        "largest",
        "critical path",
        "parallelism, unit cost",
        "parallelism, cost 1-100"
    );
    println!(
        "{:>7} {:>7} {:>10} {:>8} {:>6} {:>8} {:>15} {:>26} {:>26}",
        "",
        "",
        "(median)",
        "",
        "",
        "part",
        "before -> after",
        "unsplit -> split (kept)",
        "unsplit -> split (kept)"
    );
    for r in &rows {
        let kept = |(before, after): (f64, f64)| {
            format!("{before:.1} -> {after:.1} ({:.1}%)", 100.0 * after / before)
        };
        println!(
            "{:>7} {:>7} {:>10.2?} {:>8} {:>6} {:>8} {:>15} {:>26} {:>26}",
            r.steps,
            r.edges,
            r.time,
            format!("{:.0} ns", r.time.as_nanos() as f64 / r.steps as f64),
            r.parts,
            r.largest,
            format!("{} -> {}", r.path_before, r.path_after),
            kept(r.unit),
            kept(r.random),
        );
    }

    let [small, large] = &rows;
    let growth = large.time.as_secs_f64() / small.time.as_secs_f64();
    let baseline_growth = large.baseline.as_secs_f64() / small.baseline.as_secs_f64();
    println!();
    println!(
        "baseline critical_path_len: 10k {:.2?}, 100k {:.2?}, 100k / 10k = {baseline_growth:.2}x",
        small.baseline, large.baseline
    );
    println!(
        "time 100k / 10k            = {growth:.2}x    (target <= 12x): {}",
        verdict(growth <= 12.0)
    );
    println!(
        "time 100k                  = {:.2?} (target <= 1 s): {}",
        large.time,
        verdict(large.time <= Duration::from_secs(1))
    );
    let kept_path = rows.iter().all(|r| r.path_after == r.path_before);
    println!(
        "unit critical path kept    (target: equal at both sizes): {}",
        verdict(kept_path)
    );
}
