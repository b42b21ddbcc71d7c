//! Scheduler benchmark, against the real Postgres on this machine:
//! (a) dispatch throughput of 1-step no-op runs, queued → succeeded;
//! (b) scheduling overhead per step on a 1,000-step chain and a 1,000-step
//!     fan-out of `true`: the run's wall time minus the sum of its steps'
//!     own process times, divided by the steps;
//! (c) the floor: fork/exec of `true` on this machine, measured in the same run.
//! Also ten sequential no-op steps end to end. Everything runs three
//! times: with steps as plain processes, with each step in a sandbox it
//! starts itself, and with sandboxes started ahead (the default); the
//! sandbox's start-up cost per step is the difference on the chain.
//!
//! Run: `cargo bench -p couler-scheduler --bench dispatch`
//! (`COULER_BENCH_DATA_DIR` picks the local engine's directory; tmpfs is
//! used when present, since step directories are created per step.)

use couler_engines::EngineAdapter;
use couler_engines::local::{Isolation, LocalConfig, LocalEngine, SandboxConfig};
use couler_scheduler::config::SchedulerConfig;
use couler_scheduler::engines::Engines;
use couler_store::runs::{NewRun, Source};
use couler_store::tenants::{NewTenant, Quotas};
use couler_store::{Store, StoreConfig, TenantId};
use serde_json::json;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

const PG: &str = "postgres://postgres@127.0.0.1:5432";

fn workflow(name: &str, steps: usize, chain: bool) -> serde_json::Value {
    let steps: Vec<serde_json::Value> = (0..steps)
        .map(|i| {
            let mut s = json!({"name": format!("s{i}"), "container": {"image": "busybox", "command": ["true"]}});
            if chain && i > 0 {
                s["depends"] = json!([format!("s{}", i - 1)]);
            }
            s
        })
        .collect();
    json!({"apiVersion": "couler.dev/v1alpha1", "name": name, "steps": steps})
}

fn new_run(ir: &serde_json::Value) -> NewRun {
    let wf: couler_ir::Workflow = couler_ir::load_value(ir.clone(), &Default::default()).unwrap();
    NewRun::new(
        Source::Inline(serde_json::to_value(&wf).unwrap().into()),
        &wf.name,
        &couler_ir::hash::workflow_digest(&wf).to_hex(),
        "bench",
    )
}

async fn queue(store: &Store, tenant: TenantId, runs: &[NewRun]) -> Vec<couler_store::RunId> {
    let mut tx = store.tenant(tenant).await.unwrap();
    let created = couler_store::runs::create_many(&mut tx, tenant, runs)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    created
        .into_iter()
        .map(|c| match c {
            couler_store::runs::Created::New(r) => r.id,
            other => panic!("{other:?}"),
        })
        .collect()
}

/// Waits until every run of `runs` has finished. It looks every 5 ms for
/// the first quarter second (the ten-step run is timed by this wait), then
/// every 20 ms: on two cores a watcher asking 200 times a second takes a
/// tenth of a core from what it watches, more the longer a pass runs. The
/// long runs are timed from their own timestamps, not by this wait.
async fn drain(store: &Store, runs: &[couler_store::RunId]) {
    let ids: Vec<uuid::Uuid> = runs.iter().map(|r| r.0).collect();
    let start = Instant::now();
    loop {
        let open: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM runs WHERE id = ANY($1) AND status NOT IN ('succeeded', 'failed', 'cancelled')",
        )
        .bind(&ids)
        .fetch_one(store.pool())
        .await
        .unwrap();
        if open == 0 {
            return;
        }
        let pause = match start.elapsed() < Duration::from_millis(250) {
            true => 5,
            false => 20,
        };
        tokio::time::sleep(Duration::from_millis(pause)).await;
    }
}

/// (wall ms, sum of step wall ms, steps, status) of a finished run.
async fn measured(store: &Store, run: couler_store::RunId) -> (f64, f64, i64, String) {
    let (wall, status): (f64, String) = sqlx::query_as(
        "SELECT extract(epoch FROM finished_at - started_at)::float8 * 1000, status FROM runs WHERE id = $1",
    )
    .bind(run.0)
    .fetch_one(store.pool())
    .await
    .unwrap();
    let (sum, steps): (Option<f64>, i64) =
        sqlx::query_as("SELECT sum(wall_ms)::float8, count(*) FROM run_steps WHERE run_id = $1")
            .bind(run.0)
            .fetch_one(store.pool())
            .await
            .unwrap();
    (wall, sum.unwrap_or(0.0), steps, status)
}

fn exec_floor() -> Duration {
    let n = 200;
    let start = Instant::now();
    for _ in 0..n {
        std::process::Command::new("true").status().unwrap();
    }
    start.elapsed() / n
}

#[tokio::main]
async fn main() {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let database = "couler_bench_scheduler";
    {
        use sqlx::Connection;
        let mut conn = sqlx::PgConnection::connect(&format!("{PG}/postgres"))
            .await
            .unwrap();
        sqlx::query(sqlx::AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {database} WITH (FORCE)"
        )))
        .execute(&mut conn)
        .await
        .unwrap();
    }
    let store = Store::connect(&StoreConfig::new(format!("{PG}/{database}")))
        .await
        .unwrap();
    let mut tx = store.platform().await.unwrap();
    let tenant = couler_store::tenants::create(
        &mut tx,
        &NewTenant {
            name: "bench".into(),
            display_name: "bench".into(),
            engine: "local".into(),
            share_cache: true,
            quotas: Quotas {
                max_concurrent_runs: 64,
                max_queued_runs: 100_000,
                requests_per_second: 10_000,
            },
        },
    )
    .await
    .unwrap()
    .id;
    tx.commit().await.unwrap();

    let root = std::env::var_os("COULER_BENCH_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            if std::path::Path::new("/dev/shm").is_dir() {
                "/dev/shm".into()
            } else {
                std::env::temp_dir()
            }
        })
        .join(format!("couler-bench-{}", std::process::id()));
    let floor = exec_floor();
    // The same scheduler and runs twice: steps as plain processes, then
    // each in its sandbox; the difference is what the sandbox costs.
    let off = SandboxConfig {
        isolation: Isolation::Off,
        ..SandboxConfig::default()
    };
    let bare = measure(&store, tenant, &root.join("bare"), off).await;
    let own = SandboxConfig {
        started_ahead: 0,
        ..SandboxConfig::default()
    };
    let cold = measure(&store, tenant, &root.join("cold"), own).await;
    let boxed = measure(
        &store,
        tenant,
        &root.join("sandboxed"),
        SandboxConfig::default(),
    )
    .await;
    let _ = std::fs::remove_dir_all(&root);
    println!("local engine working directory: {}", root.display());
    println!(
        "(c) fork/exec of `true` (floor)        : {:>8.3} ms",
        floor.as_secs_f64() * 1000.0
    );
    for (name, f) in [
        ("steps as plain processes", &bare),
        ("steps sandboxed, each starting its own", &cold),
        ("steps sandboxed, sandboxes started ahead (default)", &boxed),
    ] {
        println!("-- {name}");
        f.print(floor);
    }
    let verdict = |ok: bool| if ok { "target met" } else { "TARGET MISSED" };
    let added = (boxed.chain_wall - bare.chain_wall) / boxed.chain_steps as f64;
    let added_cold = (cold.chain_wall - bare.chain_wall) / cold.chain_steps as f64;
    println!(
        "sandbox start-up, added per step (1,000-step chain, sandboxed - plain): {added:.3} ms = {:.1}x the fork/exec floor  (target <= 3 ms: {}); each starting its own: {added_cold:.3} ms = {:.1}x",
        added / (floor.as_secs_f64() * 1000.0),
        verdict(added <= 3.0),
        added_cold / (floor.as_secs_f64() * 1000.0),
    );
    println!(
        "ten sequential sandboxed steps end to end: {:.1} ms queued→done (plain: {:.1} ms)  (target < 100 ms: {})",
        boxed.ten_wall.as_secs_f64() * 1000.0,
        bare.ten_wall.as_secs_f64() * 1000.0,
        verdict(boxed.ten_wall < Duration::from_millis(100))
    );
}

/// What one pass over the scenarios measured.
struct Figures {
    dispatch: f64,
    ten_wall: Duration,
    ten_run_wall: f64,
    ten_status: String,
    chain_wall: f64,
    chain_sum: f64,
    chain_steps: i64,
    chain_status: String,
    fan_wall: f64,
    fan_sum: f64,
    fan_steps: i64,
    fan_status: String,
}

/// Runs every scenario with a scheduler whose local engine isolates steps
/// as `sandbox` says.
async fn measure(
    store: &Store,
    tenant: TenantId,
    data_dir: &std::path::Path,
    sandbox: SandboxConfig,
) -> Figures {
    std::fs::create_dir_all(data_dir).unwrap();
    let mut local = LocalConfig::new(data_dir);
    local.sandbox = sandbox;
    let engine: Arc<dyn EngineAdapter> = Arc::new(LocalEngine::new(local));
    let engines = Engines::default().with(engine);
    let config = SchedulerConfig {
        id: Some("bench".into()),
        poll_ms: 50,
        ..Default::default()
    };
    let shutdown = CancellationToken::new();
    // No cache: every run here is the same no-op and would hit.
    let scheduler = tokio::spawn(couler_scheduler::run(
        store.clone(),
        engines,
        None,
        None,
        None,
        config,
        shutdown.clone(),
    ));

    // (a) dispatch throughput.
    let one = new_run(&workflow("noop", 1, false));
    let n = 300;
    let runs: Vec<NewRun> = (0..n).map(|_| one.clone()).collect();
    let start = Instant::now();
    let queued = queue(store, tenant, &runs).await;
    drain(store, &queued).await;
    let dispatch = n as f64 / start.elapsed().as_secs_f64();

    // Ten sequential steps, end to end.
    let ten = queue(store, tenant, &[new_run(&workflow("ten", 10, true))]).await[0];
    let start = Instant::now();
    drain(store, &[ten]).await;
    let ten_wall = start.elapsed();
    let (ten_run_wall, _, _, ten_status) = measured(store, ten).await;

    // (b) overhead on a chain and a fan-out of 1,000 steps.
    let chain = queue(store, tenant, &[new_run(&workflow("chain", 1000, true))]).await[0];
    drain(store, &[chain]).await;
    let (chain_wall, chain_sum, chain_steps, chain_status) = measured(store, chain).await;
    let fan = queue(store, tenant, &[new_run(&workflow("fan", 1000, false))]).await[0];
    drain(store, &[fan]).await;
    let (fan_wall, fan_sum, fan_steps, fan_status) = measured(store, fan).await;

    shutdown.cancel();
    let _ = scheduler.await;
    Figures {
        dispatch,
        ten_wall,
        ten_run_wall,
        ten_status,
        chain_wall,
        chain_sum,
        chain_steps,
        chain_status,
        fan_wall,
        fan_sum,
        fan_steps,
        fan_status,
    }
}

impl Figures {
    fn print(&self, floor: Duration) {
        let Figures {
            dispatch,
            ten_wall,
            ten_run_wall,
            ten_status,
            chain_wall,
            chain_sum,
            chain_steps,
            chain_status,
            fan_wall,
            fan_sum,
            fan_steps,
            fan_status,
        } = self;
        let (dispatch, ten_run_wall) = (*dispatch, *ten_run_wall);
        let (chain_wall, chain_sum, fan_wall, fan_sum) =
            (*chain_wall, *chain_sum, *fan_wall, *fan_sum);
        let verdict = |ok: bool| if ok { "target met" } else { "TARGET MISSED" };
        let chain_overhead = (chain_wall - chain_sum) / *chain_steps as f64;
        // Steps overlap in a fan-out, so their own times can exceed the wall
        // time; wall time per step bounds the overhead from above.
        let fan_overhead = fan_wall / *fan_steps as f64;
        println!(
            "(a) dispatch, 1-step no-op runs        : {dispatch:>8.1} runs/s   (target >= 100: {})",
            verdict(dispatch >= 100.0)
        );
        println!(
            "(b) 1,000-step chain  [{chain_status}]   : wall {chain_wall:>8.1} ms, steps' own {chain_sum:>6.1} ms, overhead {chain_overhead:.3} ms/step ({:.1}x the floor)  (target <= 1 ms: {})",
            chain_overhead / (floor.as_secs_f64() * 1000.0),
            verdict(chain_overhead <= 1.0)
        );
        println!(
            "(b) 1,000-step fan-out [{fan_status}]  : wall {fan_wall:>8.1} ms, steps' own {fan_sum:>6.1} ms, wall per step {fan_overhead:.3} ms (an upper bound on overhead)  (target <= 1 ms: {})",
            verdict(fan_overhead <= 1.0)
        );
        println!(
            "ten sequential steps [{ten_status}]      : {:.1} ms queued→done, {ten_run_wall:.1} ms running  (target < 500 ms: {})",
            ten_wall.as_secs_f64() * 1000.0,
            verdict(*ten_wall < Duration::from_millis(500))
        );
    }
}
