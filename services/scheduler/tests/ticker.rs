//! The schedule ticker against a real Postgres: tickers racing over the
//! same due schedules fire every tick exactly once; catch-up, overlap,
//! pause, parameters and backfills do what they say.

use chrono::{DateTime, Utc};
use couler_scheduler::ticker::{backfill_pass, tick_pass};
use couler_store::backfills::{self, Reprocess};
use couler_store::runs::{self, TriggerKind};
use couler_store::schedules::{self, CatchupPolicy, Overlap, Settings};
use couler_store::tenants::{self, NewTenant, Quotas};
use couler_store::workflows::{self, NewVersion};
use couler_store::{ScheduleId, Store, StoreConfig, TenantId, WorkflowId};
use sqlx::Connection;
use std::collections::BTreeSet;

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const DIAMOND: &str = include_str!("../../../examples/diamond.yaml");

struct Db {
    store: Store,
    name: String,
    tenant: TenantId,
    workflow: WorkflowId,
}

impl Db {
    async fn new() -> Db {
        let name = format!("couler_test_{}", uuid::Uuid::new_v4().simple());
        let mut config = StoreConfig::new(format!("{PG}/{name}"));
        config.max_connections = 12;
        let store = Store::connect(&config).await.unwrap();
        let mut tx = store.platform().await.unwrap();
        let new = NewTenant {
            name: "acme".into(),
            display_name: "acme".into(),
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
        let (workflow, _) = workflows::create(&mut tx, tenant, &NewVersion::from_ir(&ir, "test"))
            .await
            .unwrap();
        tx.commit().await.unwrap();
        Db {
            store,
            name,
            tenant,
            workflow: workflow.id,
        }
    }

    async fn schedule(&self, slug: &str, settings: &Settings) -> ScheduleId {
        let mut tx = self.store.tenant(self.tenant).await.unwrap();
        let s = schedules::create(
            &mut tx,
            self.tenant,
            self.workflow,
            slug,
            "api",
            settings,
            "test",
        )
        .await
        .unwrap();
        tx.commit().await.unwrap();
        s.id
    }

    /// Moves a schedule's next tick `minutes` whole minutes into the past,
    /// as if the control plane had been down since; returns that instant.
    async fn backdate(&self, id: ScheduleId, minutes: i32) -> DateTime<Utc> {
        sqlx::query_scalar(
            "UPDATE schedules SET next_tick = date_trunc('minute', now()) - make_interval(mins => $2),
                                  due_at = date_trunc('minute', now()) - make_interval(mins => $2)
             WHERE id = $1 RETURNING next_tick",
        )
        .bind(id.0)
        .bind(minutes)
        .fetch_one(self.store.pool())
        .await
        .unwrap()
    }

    /// Runs passes until one finds nothing due.
    async fn drain(&self) {
        while tick_pass(&self.store).await.unwrap() > 0 {}
    }

    /// (nominal instant, outcome) of a schedule's ticks, oldest first.
    async fn ticks(&self, slug: &str) -> Vec<(DateTime<Utc>, String, Option<String>)> {
        sqlx::query_as(
            "SELECT nominal_at, outcome, detail FROM schedule_ticks WHERE slug = $1 ORDER BY nominal_at",
        )
        .bind(slug)
        .fetch_all(self.store.pool())
        .await
        .unwrap()
    }

    /// The instants a trigger's runs are for, with their status.
    async fn runs(&self, trigger: uuid::Uuid) -> Vec<(DateTime<Utc>, String)> {
        sqlx::query_as("SELECT scheduled_for, status FROM runs WHERE trigger_id = $1 ORDER BY scheduled_for, created_at")
            .bind(trigger)
            .fetch_all(self.store.pool())
            .await
            .unwrap()
    }

    async fn drop(self) {
        self.store.pool().close().await;
        let mut conn = sqlx::PgConnection::connect(&format!("{PG}/postgres"))
            .await
            .unwrap();
        let ddl = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.name);
        sqlx::query(sqlx::AssertSqlSafe(ddl))
            .execute(&mut conn)
            .await
            .unwrap();
    }
}

fn every_minute(catchup: CatchupPolicy, overlap: Overlap) -> Settings {
    let mut s = Settings::new(vec!["* * * * *".into()]);
    s.catchup = catchup;
    s.catchup_window_secs = 3 * 3600;
    s.max_catchup = 1000;
    s.overlap = overlap;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn racing_tickers_fire_every_tick_exactly_once() {
    let db = Db::new().await;
    let settings = every_minute(CatchupPolicy::All, Overlap::Allow);
    let mut starts = Vec::new();
    for i in 0..20 {
        let id = db.schedule(&format!("s{i}"), &settings).await;
        starts.push((id, format!("s{i}"), db.backdate(id, 60).await));
    }
    // Eight tickers over the same 20 × ~61 due ticks, each pass at most 16 a schedule.
    let tickers: Vec<_> = (0..8)
        .map(|_| {
            let store = db.store.clone();
            tokio::spawn(async move {
                let mut passes = 0;
                while tick_pass(&store).await.unwrap() > 0 {
                    passes += 1;
                }
                passes
            })
        })
        .collect();
    let mut passes = 0;
    for t in tickers {
        passes += t.await.unwrap();
    }
    assert!(passes >= 4, "the work was not spread over passes: {passes}");
    let dupes: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT 1 FROM runs WHERE trigger_id IS NOT NULL
                                GROUP BY trigger_id, scheduled_for HAVING count(*) > 1) d",
    )
    .fetch_one(db.store.pool())
    .await
    .unwrap();
    assert_eq!(dupes, 0, "an instant ran twice");
    for (id, slug, start) in starts {
        let next: DateTime<Utc> =
            sqlx::query_scalar("SELECT next_tick FROM schedules WHERE id = $1")
                .bind(id.0)
                .fetch_one(db.store.pool())
                .await
                .unwrap();
        let expected: Vec<DateTime<Utc>> =
            std::iter::successors(Some(start), |t| Some(*t + chrono::Duration::minutes(1)))
                .take_while(|t| *t < next)
                .collect();
        assert!(expected.len() >= 61, "{slug}: {} ticks", expected.len());
        let ticks = db.ticks(&slug).await;
        assert!(
            ticks.iter().all(|(_, o, _)| o == "fired"),
            "{slug}: {ticks:?}"
        );
        let fired: Vec<DateTime<Utc>> = ticks.into_iter().map(|(t, _, _)| t).collect();
        assert_eq!(fired, expected, "{slug}: lost or extra ticks");
        let ran: Vec<DateTime<Utc>> = db.runs(id.0).await.into_iter().map(|(t, _)| t).collect();
        assert_eq!(ran, expected, "{slug}: runs and ticks differ");
    }
    db.drop().await;
}

#[tokio::test]
async fn latest_fires_the_newest_missed_tick_and_records_the_rest() {
    let db = Db::new().await;
    let mut settings = every_minute(CatchupPolicy::Latest, Overlap::Allow);
    settings.catchup_window_secs = 3600;
    let id = db.schedule("nightly", &settings).await;
    let start = db.backdate(id, 300).await;
    db.drain().await;
    let ticks = db.ticks("nightly").await;
    assert_eq!(ticks.len(), 2, "{ticks:?}");
    assert_eq!((ticks[0].0, ticks[0].1.as_str()), (start, "skipped_missed"));
    assert!(
        ticks[0].2.as_deref().unwrap().contains("missed"),
        "{ticks:?}"
    );
    assert_eq!(ticks[1].1, "fired");
    let runs = db.runs(id.0).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].0, ticks[1].0, "the newest instant ran");
    db.drop().await;
}

#[tokio::test]
async fn overlap_skip_keeps_one_run_and_cancel_other_replaces_it() {
    let db = Db::new().await;
    let skip = db
        .schedule("skip", &every_minute(CatchupPolicy::All, Overlap::Skip))
        .await;
    let cancel = db
        .schedule(
            "cancel",
            &every_minute(CatchupPolicy::All, Overlap::CancelOther),
        )
        .await;
    db.backdate(skip, 3).await;
    db.backdate(cancel, 3).await;
    db.drain().await;
    let outcomes: Vec<String> = db.ticks("skip").await.into_iter().map(|t| t.1).collect();
    assert_eq!(outcomes[0], "fired");
    assert!(
        outcomes[1..].iter().all(|o| o == "skipped_overlap"),
        "{outcomes:?}"
    );
    assert_eq!(db.runs(skip.0).await.len(), 1);
    let runs = db.runs(cancel.0).await;
    let statuses: Vec<&str> = runs.iter().map(|(_, s)| s.as_str()).collect();
    assert!(statuses.len() >= 4, "{statuses:?}");
    assert_eq!(statuses.last(), Some(&"queued"));
    assert!(
        statuses[..statuses.len() - 1]
            .iter()
            .all(|s| *s == "cancelled"),
        "{statuses:?}"
    );
    db.drop().await;
}

#[tokio::test]
async fn paused_schedules_wait_and_runs_carry_the_instant() {
    let db = Db::new().await;
    let mut settings = every_minute(CatchupPolicy::All, Overlap::Allow);
    settings.parameters.insert(
        "message".into(),
        "day {{schedule.localDate}} at {{schedule.time}}".into(),
    );
    settings.timezone = "Europe/Berlin".into();
    let id = db.schedule("p", &settings).await;
    let start = db.backdate(id, 1).await;
    let mut tx = db.store.tenant(db.tenant).await.unwrap();
    let s = schedules::get_for_update(&mut tx, db.tenant, db.workflow, "p")
        .await
        .unwrap()
        .unwrap();
    schedules::set_paused(&mut tx, &s, Some(("test", Some("maintenance"))))
        .await
        .unwrap();
    tx.commit().await.unwrap();
    db.drain().await;
    assert!(db.ticks("p").await.is_empty(), "a paused schedule fired");
    let mut tx = db.store.tenant(db.tenant).await.unwrap();
    let s = schedules::get_for_update(&mut tx, db.tenant, db.workflow, "p")
        .await
        .unwrap()
        .unwrap();
    let resumed = schedules::set_paused(&mut tx, &s, None).await.unwrap();
    tx.commit().await.unwrap();
    assert!(
        resumed.next_tick.unwrap() > start,
        "resume fills in the paused time"
    );
    // Make the next tick due now, and fire it.
    let next = db.backdate(id, 0).await;
    db.drain().await;
    let runs = db.runs(id.0).await;
    assert_eq!(runs.len(), 1);
    assert_eq!(runs[0].0, next);
    let run_id: uuid::Uuid = sqlx::query_scalar("SELECT id FROM runs WHERE trigger_id = $1")
        .bind(id.0)
        .fetch_one(db.store.pool())
        .await
        .unwrap();
    let mut tx = db.store.tenant(db.tenant).await.unwrap();
    let run = runs::get(&mut tx, db.tenant, couler_store::RunId(run_id))
        .await
        .unwrap()
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(run.trigger_kind, TriggerKind::Schedule);
    assert_eq!(run.scheduled_for, Some(next));
    let local = next.with_timezone(&chrono::FixedOffset::east_opt(0).unwrap());
    let expected_time = local.format("%Y-%m-%dT%H:%M:%SZ").to_string();
    assert!(
        run.parameters.0["message"].ends_with(&expected_time),
        "{:?}",
        run.parameters
    );
    assert_eq!(
        run.idempotency_key.as_deref(),
        Some(format!("sched:{}:p:{expected_time}", db.workflow).as_str())
    );
    db.drop().await;
}

#[tokio::test]
async fn a_backfill_releases_at_most_its_active_runs() {
    let db = Db::new().await;
    let id = db
        .schedule("bf", &every_minute(CatchupPolicy::Skip, Overlap::Allow))
        .await;
    let now: DateTime<Utc> = sqlx::query_scalar("SELECT date_trunc('minute', now())")
        .fetch_one(db.store.pool())
        .await
        .unwrap();
    let items: Vec<DateTime<Utc>> = (1..=5)
        .rev()
        .map(|m| now - chrono::Duration::minutes(60 + m))
        .collect();
    let mut tx = db.store.tenant(db.tenant).await.unwrap();
    let b = backfills::create(
        &mut tx,
        db.tenant,
        id,
        (items[0], now),
        Reprocess::Missing,
        2,
        &items,
        "test",
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    backfill_pass(&db.store).await.unwrap();
    backfill_pass(&db.store).await.unwrap();
    let first = db.runs(b.id.0).await;
    assert_eq!(first.len(), 2, "max_active_runs is 2: {first:?}");
    assert_eq!(first.iter().map(|r| r.0).collect::<Vec<_>>(), items[..2]);
    // The first two finish; the next two go.
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar("SELECT id FROM runs WHERE trigger_id = $1")
        .bind(b.id.0)
        .fetch_all(db.store.pool())
        .await
        .unwrap();
    for run in ids {
        let mut tx = db.store.tenant(db.tenant).await.unwrap();
        let r = runs::get(&mut tx, db.tenant, couler_store::RunId(run))
            .await
            .unwrap()
            .unwrap();
        runs::cancel(&mut tx, db.tenant, r.id)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        tx.commit().await.unwrap();
    }
    for _ in 0..4 {
        backfill_pass(&db.store).await.unwrap();
        let runs = db.runs(b.id.0).await;
        let active = runs.iter().filter(|r| r.1 == "queued").count();
        assert!(active <= 2, "{runs:?}");
        let ids: Vec<uuid::Uuid> =
            sqlx::query_scalar("SELECT id FROM runs WHERE trigger_id = $1 AND status = 'queued'")
                .bind(b.id.0)
                .fetch_all(db.store.pool())
                .await
                .unwrap();
        for run in ids {
            let mut tx = db.store.tenant(db.tenant).await.unwrap();
            runs::cancel(&mut tx, db.tenant, couler_store::RunId(run))
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            tx.commit().await.unwrap();
        }
    }
    let ran: BTreeSet<DateTime<Utc>> = db.runs(b.id.0).await.into_iter().map(|r| r.0).collect();
    assert_eq!(ran, items.iter().copied().collect(), "every item ran once");
    let mut tx = db.store.tenant(db.tenant).await.unwrap();
    let b = backfills::get(&mut tx, db.tenant, id, b.id)
        .await
        .unwrap()
        .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(b.state, backfills::State::Done);
    db.drop().await;
}

#[tokio::test]
async fn a_tick_of_a_version_reading_a_missing_secret_fails_naming_it() {
    let db = Db::new().await;
    let ir = couler_ir::load(
        r#"
apiVersion: couler.dev/v1alpha1
name: diamond
steps:
  - name: notify
    container:
      image: busybox
      command: [sh, -c, 'test -n "$TOKEN"']
      env:
        - name: TOKEN
          secret: {name: slack, key: token}
"#,
        couler_ir::Format::Yaml,
    )
    .unwrap();
    let mut tx = db.store.tenant(db.tenant).await.unwrap();
    workflows::add_version(
        &mut tx,
        db.tenant,
        db.workflow,
        &NewVersion::from_ir(&ir, "test"),
    )
    .await
    .unwrap()
    .unwrap();
    tx.commit().await.unwrap();
    let id = db
        .schedule(
            "nightly",
            &every_minute(CatchupPolicy::Latest, Overlap::Allow),
        )
        .await;
    db.backdate(id, 1).await;
    db.drain().await;
    let ticks = db.ticks("nightly").await;
    let fired: Vec<_> = ticks.iter().filter(|t| t.1 != "skipped_missed").collect();
    assert_eq!(fired.len(), 1, "{ticks:?}");
    assert_eq!(fired[0].1, "failed");
    let detail = fired[0].2.as_deref().unwrap();
    assert!(
        detail.contains("\"notify\"") && detail.contains("\"slack\""),
        "{detail}"
    );
    assert!(db.runs(id.0).await.is_empty(), "no run was queued");
    db.drop().await;
}
