//! A cache lookup pass over a 10,000-step plan (10 levels of 1,000 steps,
//! each reading an output of a step on the level above), every step a hit:
//! the key computation and chunked, pipelined lookups of
//! `couler_cache::plan::lookup_plan_with_dag`, as a ratio to 10,000 plain
//! GETs of the same entries in one pipeline, measured in the same run
//! against the real Redis on this machine (`REDIS_URL`, default
//! `redis://127.0.0.1:6379`). Also prints `lookup_plan`, which first takes
//! the plan's DAG (`Plan::dag`: the planner's, after checking the workflow
//! is unchanged), and where the time goes.
//!
//! The ratio is the median of 21 pairs' ratios, pairs taken in turn
//! pass-first and GETs-first: on a noisy 2-core machine a single pair
//! ranges over about 1.2-2.5x, and the load drifts between pairs more
//! than within one.
//!
//! Run: `cargo bench -p couler-cache --bench lookup`
//! Target: the pass ≤ 2x the pipelined GETs.

use couler_cache::plan::{Asker, Lookup, Outcome, lookup_plan, lookup_plan_with_dag};
use couler_cache::{Admission, CacheConfig, CacheIndex, CacheKey, Cached, Entry, SharedRedis};
use couler_optimizer::{ArtifactRef, Named, Plan, StepOutputs};
use futures::{FutureExt, StreamExt};
use serde_json::json;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

/// The allocator Couler's binaries use.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const LEVELS: usize = 10;
const WIDTH: usize = 1_000;
/// Pairs (pass, GETs) measured; each run's ratio is their median.
const RUNS: usize = 21;
const TENANT: &str = "tnt_bench";
/// The bench's entries keep their artifacts in S3, where Argo reads them.
const ASKER: Asker = Asker {
    tenant: TENANT,
    shares: true,
    reads: &["s3://"],
};

/// Steps `s{level}-{i}`; below the first level each reads the `out`
/// parameter and the `model` artifact of a step on the level above.
fn plan() -> Plan {
    let mut steps = Vec::with_capacity(LEVELS * WIDTH);
    for level in 0..LEVELS {
        for i in 0..WIDTH {
            let mut args = vec![format!("--shard={i}"), "--lr=0.01".to_owned()];
            let mut step = json!({
                "name": format!("s{level}-{i}"),
                "container": {"image": "python:3.12-slim", "command": ["python3", "train.py"],
                              "env": [{"name": "SHARD", "value": i.to_string()}]},
                "outputs": {"parameters": [{"name": "out", "path": "/tmp/out"}],
                            "artifacts": [{"name": "model", "path": "/tmp/model"}]},
                "cache": {"version": "1"},
            });
            if level > 0 {
                let up = format!("s{}-{}", level - 1, (i * 7) % WIDTH);
                args.push(format!("--in={{{{steps.{up}.outputs.parameters.out}}}}"));
                step["inputs"] = json!({"artifacts": [{"name": "model",
                    "from": format!("{{{{steps.{up}.outputs.artifacts.model}}}}"), "path": "/in/model"}]});
            }
            step["container"]["args"] = json!(args);
            steps.push(step);
        }
    }
    let doc = json!({"apiVersion": "couler.dev/v1alpha1", "name": "bench", "steps": steps});
    let workflow = couler_ir::load_value(doc, &Default::default())
        .unwrap_or_else(|p| panic!("the generated workflow is invalid: {}", p.0[0].message));
    couler_optimizer::Pipeline::default()
        .plan(workflow, &Default::default(), |_, f| f())
        .expect("the plan plans")
}

fn entry(step: &str, n: usize) -> Entry {
    let outputs = StepOutputs {
        result: None,
        parameters: Named::from_iter([("out".into(), format!("value-{n}"))]),
        artifacts: Named::from_iter([(
            "model".into(),
            ArtifactRef {
                digest: blake3::hash(step.as_bytes()).to_hex().to_string(),
                size: 1 << 20,
                // Not a local file: the index does not stat it.
                location: format!("s3://bench/{step}"),
            },
        )]),
    };
    Entry {
        cached: Cached {
            outputs,
            wall_ms: 60_000,
            cpu_ms: 55_000,
            max_rss_kb: 1 << 20,
            size: 1 << 20,
            reconstruction: 60.0,
            downstream: 60.0,
            created_at: 0,
        },
        producer: TENANT.into(),
        ttl_secs: 3600,
        image: "python:3.12-slim".into(),
        version: Some("1".into()),
        workflow: "bench".into(),
        step: step.into(),
    }
}

/// Admits an entry for every step, keyed as the pass will key them;
/// returns the keys and every step's outputs, in plan order.
async fn admit_all(
    plan: &Plan,
    index: &CacheIndex,
) -> (Vec<CacheKey>, HashMap<String, StepOutputs>) {
    let mut outputs: HashMap<String, StepOutputs> = HashMap::new();
    let mut keyed = Vec::with_capacity(plan.steps.len());
    for (n, planned) in plan.steps.iter().enumerate() {
        // Steps are listed level by level, so upstream outputs are known.
        let step = plan.ir_step(n);
        let scope = couler_cache::key::scope_of(step, TENANT, true);
        let key = couler_cache::key::key(step, &scope, |name| outputs.get(name))
            .expect("every step has a key once its upstream outputs are known");
        let e = entry(&planned.name, n);
        outputs.insert(planned.name.clone(), e.cached.outputs.clone());
        keyed.push((key, e));
    }
    let admitted: Vec<Admission> = futures::stream::iter(&keyed)
        .map(|(key, e)| index.admit(key, e, TENANT))
        .buffer_unordered(64)
        .collect()
        .await;
    let refused = admitted
        .iter()
        .filter(|a| !matches!(a, Admission::Admitted | Admission::Exists))
        .count();
    assert_eq!(refused, 0, "{refused} entries were refused");
    (keyed.into_iter().map(|(k, _)| k).collect(), outputs)
}

fn all_hits(found: &[Lookup]) {
    let hits = found
        .iter()
        .filter(|l| matches!(l.outcome, Outcome::Hit { .. }))
        .count();
    assert_eq!(hits, found.len(), "every step should hit");
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

#[derive(Default)]
struct Timings {
    pass: Vec<Duration>,
    pass_planned: Vec<Duration>,
    gets: Vec<Duration>,
    validate: Vec<Duration>,
    keys: Vec<Duration>,
    lookups: Vec<Duration>,
}

/// Admits the plan's entries, then times the pass, the GETs and the
/// parts of the pass, `RUNS` times.
async fn measure(
    plan: &Plan,
    dag: &couler_ir::Dag,
    index: &CacheIndex,
    mut conn: redis::aio::ConnectionManager,
) -> Timings {
    let (keys, outputs) = admit_all(plan, index).await;
    let prefix = &index.config().prefix;
    let names: Vec<String> = keys
        .iter()
        .map(|k| format!("{prefix}:cache:e:{k}"))
        .collect();

    let pass = async || {
        let start = Instant::now();
        let found = lookup_plan_with_dag(plan, dag, ASKER, index).await;
        let took = start.elapsed();
        all_hits(&found);
        took
    };
    let gets = async |conn: &mut redis::aio::ConnectionManager| {
        let start = Instant::now();
        let mut pipe = redis::pipe();
        for name in &names {
            pipe.get(name);
        }
        let raw: Vec<Option<Vec<u8>>> = pipe.query_async(conn).await.unwrap();
        let took = start.elapsed();
        assert!(raw.iter().all(Option::is_some));
        took
    };

    let mut t = Timings::default();
    for run in 0..RUNS {
        // Each pair in turn pass-first and GETs-first, so that neither
        // side always runs on what the other left (caches, allocator,
        // Redis's buffers).
        let (p, g) = if run % 2 == 0 {
            let p = pass().await;
            (p, gets(&mut conn).await)
        } else {
            let g = gets(&mut conn).await;
            (pass().await, g)
        };
        t.pass.push(p);
        t.gets.push(g);

        let start = Instant::now();
        let found = lookup_plan(plan, ASKER, index).await.unwrap();
        t.pass_planned.push(start.elapsed());
        all_hits(&found);

        // The parts of the pass, one at a time.
        let start = Instant::now();
        std::hint::black_box(couler_ir::validate(&plan.workflow, &Default::default()).unwrap());
        t.validate.push(start.elapsed());
        let start = Instant::now();
        for i in 0..plan.steps.len() {
            let step = plan.ir_step(i);
            let scope = couler_cache::key::scope_of(step, TENANT, true);
            std::hint::black_box(couler_cache::key::key(step, &scope, |n| outputs.get(n)).unwrap());
        }
        t.keys.push(start.elapsed());
        let start = Instant::now();
        for level in keys.chunks(WIDTH) {
            std::hint::black_box(index.lookup(level, ASKER.reads).await);
        }
        t.lookups.push(start.elapsed());
    }
    t
}

#[tokio::main]
async fn main() {
    let url = std::env::var("REDIS_URL").unwrap_or_else(|_| "redis://127.0.0.1:6379".into());
    let redis = SharedRedis::connect_now(&url, Duration::from_secs(2), Duration::from_secs(2))
        .await
        .unwrap_or_else(|| panic!("no redis at {url}"));
    let conn = redis.get().expect("connected");
    let prefix = format!("couler-bench-{}", std::process::id());
    let index = CacheIndex::new(
        redis,
        CacheConfig {
            prefix: prefix.clone(),
            budget_bytes: 1 << 40,
            // Measure, never degrade: a slow pass must show up as slow.
            timeout: Duration::from_secs(30),
            ..Default::default()
        },
    );

    let plan = plan();
    let dag = couler_ir::validate(&plan.workflow, &Default::default()).unwrap();
    // The scratch entries go whatever happens: a failed run must not leave
    // 50,000 keys in the machine's Redis.
    let measured = AssertUnwindSafe(measure(&plan, &dag, &index, conn))
        .catch_unwind()
        .await;
    let removed = index.flush().await.unwrap_or(0);
    let t = measured.unwrap_or_else(|panic| std::panic::resume_unwind(panic));

    // The ratio of each pair, taken minutes apart at most: the machine's
    // load changes between pairs more than within one.
    let mut ratios: Vec<f64> = (t.pass.iter().zip(&t.gets))
        .map(|(p, g)| p.as_secs_f64() / g.as_secs_f64())
        .collect();
    ratios.sort_by(f64::total_cmp);
    let ratio = ratios[ratios.len() / 2];
    let (pass, gets) = (median(t.pass), median(t.gets));
    let planned = median(t.pass_planned);
    let steps = plan.steps.len();
    println!(
        "cache lookup pass over a {steps}-step plan, {LEVELS} levels, every step a hit (medians of {RUNS} pairs):"
    );
    println!("  keys + chunked lookups:        {:>7.1} ms", ms(pass));
    println!(
        "  {} pipelined GETs (baseline): {:>7.1} ms",
        steps,
        ms(gets)
    );
    println!(
        "  ratio {ratio:.2}x (pairs {:.2}-{:.2}x; target ≤ 2x): {}",
        ratios[0],
        ratios[ratios.len() - 1],
        if ratio <= 2.0 {
            "target met"
        } else {
            "TARGET MISSED"
        }
    );
    println!(
        "  lookup_plan, taking the plan's DAG first: {:.1} ms ({:.2}x)",
        ms(planned),
        planned.as_secs_f64() / gets.as_secs_f64()
    );
    println!(
        "  parts: DAG validation {:.1} ms, {steps} keys {:.1} ms, {LEVELS} lookups of {WIDTH} {:.1} ms",
        ms(median(t.validate)),
        ms(median(t.keys)),
        ms(median(t.lookups))
    );

    println!("  removed {removed} scratch keys under {prefix}:cache:");
}
