//! Schedule firing benchmark, against the real Postgres on this machine:
//! 1,000 schedules all due in the same second, fired by one ticker and then
//! by three (each a replica of its own: its own pool and sessions, the same
//! loop `couler-scheduler` runs). Prints, per replica count, the time from
//! the due second until the last run is queued, and checks that every tick
//! fired exactly once (one tick row and one run per schedule). The target:
//! three replicas fire all of them within 2 s.
//!
//! Run: `cargo bench -p couler-scheduler --bench ticker`

use chrono::{DateTime, Utc};
use couler_scheduler::ticker;
use couler_store::schedules::{self, Settings};
use couler_store::tenants::{self, NewTenant, Quotas};
use couler_store::workflows::{self, NewVersion};
use couler_store::{Store, StoreConfig};
use sqlx::Connection;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const DIAMOND: &str = include_str!("../../../examples/diamond.yaml");
const SCHEDULES: usize = 1000;
const TARGET: Duration = Duration::from_secs(2);

struct Round {
    /// From the due second until the last run was seen queued.
    span: Duration,
    ticks: i64,
    runs: i64,
    distinct_runs: i64,
}

async fn store(db: &str) -> Store {
    let mut config = StoreConfig::new(format!("{PG}/{db}"));
    config.max_connections = 4;
    Store::connect(&config).await.expect("connect")
}

async fn setup(store: &Store) {
    let mut tx = store.platform().await.unwrap();
    let new = NewTenant {
        name: "bench".into(),
        display_name: "bench".into(),
        engine: "local".into(),
        share_cache: true,
        quotas: Quotas {
            max_queued_runs: 100_000,
            ..Quotas::default()
        },
    };
    let tenant = tenants::create(&mut tx, &new).await.unwrap().id;
    tx.commit().await.unwrap();
    let ir = couler_ir::load(DIAMOND, couler_ir::Format::Yaml).unwrap();
    let mut tx = store.tenant(tenant).await.unwrap();
    let (wf, _) = workflows::create(&mut tx, tenant, &NewVersion::from_ir(&ir, "bench"))
        .await
        .unwrap();
    let settings = Settings::new(vec!["* * * * *".into()]);
    for i in 0..SCHEDULES {
        let slug = format!("s{i}");
        schedules::create(&mut tx, tenant, wf.id, &slug, "api", &settings, "bench")
            .await
            .unwrap();
    }
    tx.commit().await.unwrap();
}

/// One round on a fresh database with `replicas` tickers.
async fn round(replicas: usize) -> Round {
    let db = format!("couler_bench_{}", uuid::Uuid::new_v4().simple());
    let admin = store(&db).await;
    setup(&admin).await;
    // Every schedule due at the same whole second, two seconds from now.
    let due: DateTime<Utc> = sqlx::query_scalar(
        "UPDATE schedules SET next_tick = date_trunc('second', now()) + interval '2 s',
                              due_at = date_trunc('second', now()) + interval '2 s'
         RETURNING next_tick",
    )
    .fetch_all(admin.pool())
    .await
    .unwrap()[0];
    let shutdown = CancellationToken::new();
    let mut tasks = Vec::new();
    for _ in 0..replicas {
        let s = store(&db).await;
        let poll = Duration::from_millis(1000);
        tasks.push(tokio::spawn(ticker::run(s, poll, shutdown.clone())));
    }
    let span = loop {
        let queued: i64 = sqlx::query_scalar("SELECT count(*) FROM runs")
            .fetch_one(admin.pool())
            .await
            .unwrap();
        let now = Utc::now();
        if queued >= SCHEDULES as i64 {
            break (now - due).to_std().unwrap_or_default();
        }
        if now - due > chrono::Duration::seconds(60) {
            panic!("only {queued} of {SCHEDULES} runs after a minute");
        }
        tokio::time::sleep(Duration::from_millis(2)).await;
    };
    // Let the tickers finish their passes, then count what they did.
    tokio::time::sleep(Duration::from_millis(500)).await;
    shutdown.cancel();
    for t in tasks {
        t.await.unwrap();
    }
    let (ticks, runs, distinct_runs): (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM schedule_ticks WHERE outcome = 'fired'),
                (SELECT count(*) FROM runs),
                (SELECT count(DISTINCT trigger_id) FROM runs WHERE scheduled_for = $1)",
    )
    .bind(due)
    .fetch_one(admin.pool())
    .await
    .unwrap();
    admin.pool().close().await;
    let mut conn = sqlx::PgConnection::connect(&format!("{PG}/postgres"))
        .await
        .unwrap();
    let ddl = format!("DROP DATABASE IF EXISTS \"{db}\" WITH (FORCE)");
    sqlx::query(sqlx::AssertSqlSafe(ddl))
        .execute(&mut conn)
        .await
        .unwrap();
    Round {
        span,
        ticks,
        runs,
        distinct_runs,
    }
}

fn report(replicas: usize, r: &Round) -> bool {
    let once = r.ticks == SCHEDULES as i64
        && r.runs == SCHEDULES as i64
        && r.distinct_runs == SCHEDULES as i64;
    println!(
        "{replicas} replica(s): {SCHEDULES} schedules due in one second, last run queued after {:>6.0} ms; \
         ticks fired {}, runs {}, schedules with a run {} -> {}",
        r.span.as_secs_f64() * 1000.0,
        r.ticks,
        r.runs,
        r.distinct_runs,
        if once {
            "exactly once"
        } else {
            "NOT exactly once"
        }
    );
    once
}

#[tokio::main(flavor = "multi_thread")]
async fn main() {
    let one = round(1).await;
    let three = round(3).await;
    let ok1 = report(1, &one);
    let ok3 = report(3, &three);
    println!(
        "three replicas / one: {:.2}x the time; target: three replicas within {} ms -> {}",
        three.span.as_secs_f64() / one.span.as_secs_f64().max(1e-9),
        TARGET.as_millis(),
        if three.span <= TARGET {
            "met"
        } else {
            "MISSED"
        }
    );
    assert!(ok1 && ok3, "a tick fired other than exactly once");
}
