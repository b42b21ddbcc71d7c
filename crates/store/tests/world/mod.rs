//! A database of its own for a store test: two tenants, each with a
//! stored workflow and a queued run of it.

// Each test file uses the parts it needs.
#![allow(dead_code)]

use couler_ir::Format;
use couler_store::runs::{self, NewRun, Source};
use couler_store::tenants::{self, NewTenant, Quotas};
use couler_store::workflows::{self, NewVersion};
use couler_store::{Store, StoreConfig, TenantId, WorkflowId};
use sqlx::{Connection, PgConnection};

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const DIAMOND: &str = include_str!("../../../../examples/diamond.yaml");

/// A database of its own with two tenants, each with a workflow and a run.
pub struct World {
    pub store: Store,
    database: String,
    pub a: TenantId,
    pub b: TenantId,
    pub wf_a: WorkflowId,
    pub wf_b: WorkflowId,
}

impl World {
    pub async fn new() -> World {
        let database = format!("couler_test_{}", uuid::Uuid::new_v4().simple());
        let mut config = StoreConfig::new(format!("{PG}/{database}"));
        config.max_connections = 4;
        let store = Store::connect(&config).await.unwrap();
        let mut tx = store.platform().await.unwrap();
        let a = tenants::create(&mut tx, &tenant("alpha")).await.unwrap().id;
        let b = tenants::create(&mut tx, &tenant("beta")).await.unwrap().id;
        tx.commit().await.unwrap();
        let wf_a = seed(&store, a).await;
        let wf_b = seed(&store, b).await;
        World {
            store,
            database,
            a,
            b,
            wf_a,
            wf_b,
        }
    }

    /// Closes the pool and drops the database.
    pub async fn drop(self) {
        self.store.pool().close().await;
        let mut conn = PgConnection::connect(&format!("{PG}/postgres"))
            .await
            .unwrap();
        let ddl = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.database);
        sqlx::query(sqlx::AssertSqlSafe(ddl))
            .execute(&mut conn)
            .await
            .unwrap();
    }
}

fn tenant(name: &str) -> NewTenant {
    NewTenant {
        name: name.into(),
        display_name: name.into(),
        engine: "local".into(),
        share_cache: true,
        quotas: Quotas::default(),
    }
}

/// Stores the diamond workflow in `tenant` and queues a run of it.
async fn seed(store: &Store, tenant: TenantId) -> WorkflowId {
    let ir = couler_ir::load(DIAMOND, Format::Yaml).unwrap();
    let new = NewVersion::from_ir(&ir, "test");
    let mut tx = store.tenant(tenant).await.unwrap();
    let (workflow, version) = workflows::create(&mut tx, tenant, &new).await.unwrap();
    let source = Source::Version {
        workflow_id: workflow.id,
        version: version.version,
    };
    let run = NewRun::new(source, &workflow.name, &version.ir_hash, "test");
    let runs::Created::New(run) = runs::create(&mut tx, tenant, &run).await.unwrap() else {
        panic!("a new run was expected");
    };
    let verdict = couler_store::step_cache::NewVerdict {
        step: "a".into(),
        status: "miss",
        reason: Some("not cached".into()),
        key: Some([7; 32]),
        saved_ms: None,
    };
    couler_store::step_cache::record(&mut tx, tenant, run.id, &[verdict])
        .await
        .unwrap();
    tx.commit().await.unwrap();
    workflow.id
}
