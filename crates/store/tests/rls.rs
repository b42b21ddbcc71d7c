//! Row-level security proven in SQL, beneath the store's own `tenant_id`
//! filters: queries with no tenant filter at all still see only the
//! transaction's tenant, and a transaction with no tenant sees nothing.

mod world;

use couler_store::WorkflowId;
use sqlx::{Connection, PgConnection};
use world::World;

/// Tenant-owned tables the fixture puts rows in, and `tenants` itself.
const TABLES: &[&str] = &[
    "tenants",
    "workflows",
    "workflow_versions",
    "runs",
    "run_events",
    "run_step_cache",
];
/// SQLSTATE for "new row violates row-level security policy".
const INSUFFICIENT_PRIVILEGE: &str = "42501";

/// `SELECT count(*)` of a whole table, with no tenant filter.
async fn count(conn: &mut PgConnection, table: &str) -> i64 {
    let sql = format!("SELECT count(*) FROM {table}");
    sqlx::query_scalar::<_, i64>(sqlx::AssertSqlSafe(sql))
        .fetch_one(conn)
        .await
        .unwrap()
}

async fn counts(conn: &mut PgConnection) -> Vec<(&'static str, i64)> {
    let mut out = Vec::new();
    for table in TABLES {
        out.push((*table, count(conn, table).await));
    }
    out
}

fn sqlstate(err: &sqlx::Error) -> Option<String> {
    err.as_database_error()
        .and_then(|e| e.code())
        .map(|c| c.into_owned())
}

#[tokio::test]
async fn the_app_role_without_a_tenant_sees_no_rows() {
    let world = World::new().await;
    let mut conn = world.store.pool().acquire().await.unwrap();

    // A tenant set in an earlier transaction on this connection…
    let mut tx = conn.begin().await.unwrap();
    sqlx::query(
        "SELECT set_config('role', 'couler_app', true), set_config('couler.tenant_id', $1, true)",
    )
    .bind(world.a.0.to_string())
    .execute(&mut *tx)
    .await
    .unwrap();
    assert_eq!(count(&mut tx, "workflows").await, 1);
    tx.commit().await.unwrap();

    // …does not carry over into the next one.
    let mut tx = conn.begin().await.unwrap();
    sqlx::query("SELECT set_config('role', 'couler_app', true)")
        .execute(&mut *tx)
        .await
        .unwrap();
    let role: String = sqlx::query_scalar("SELECT current_user::text")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(role, "couler_app");
    let seen = counts(&mut tx).await;
    assert!(seen.iter().all(|(_, n)| *n == 0), "{seen:?}");
    tx.rollback().await.unwrap();
    drop(conn);

    let mut tx = world.store.platform().await.unwrap();
    let there = counts(&mut tx).await;
    assert!(
        there.iter().all(|(_, n)| *n > 0),
        "no rows to hide: {there:?}"
    );
    tx.rollback().await.unwrap();
    world.drop().await;
}

#[tokio::test]
async fn a_tenant_transaction_sees_only_its_tenant_without_any_filter() {
    let world = World::new().await;
    let mut tx = world.store.tenant(world.a).await.unwrap();
    let seen = counts(&mut tx).await;
    assert!(seen.iter().all(|(_, n)| *n == 1), "{seen:?}");
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar("SELECT id FROM workflows")
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    assert_eq!(ids, [world.wf_a.0]);
    let tenant_ids: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT DISTINCT tenant_id FROM workflow_versions UNION SELECT DISTINCT tenant_id FROM runs")
            .fetch_all(&mut *tx)
            .await
            .unwrap();
    assert_eq!(tenant_ids, [world.a.0]);
    // Asking for B's rows by name finds nothing either.
    let b_rows: i64 = sqlx::query_scalar("SELECT count(*) FROM workflows WHERE tenant_id = $1")
        .bind(world.b)
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(b_rows, 0);
    tx.rollback().await.unwrap();
    world.drop().await;
}

#[tokio::test]
async fn a_tenant_transaction_cannot_write_another_tenants_rows() {
    let world = World::new().await;

    let mut tx = world.store.tenant(world.a).await.unwrap();
    let err = sqlx::query(
        "INSERT INTO workflows (tenant_id, id, name, latest_version, created_by)
         VALUES ($1, $2, 'planted', 1, 'test')",
    )
    .bind(world.b)
    .bind(WorkflowId::new())
    .execute(&mut *tx)
    .await
    .expect_err("inserted a row for another tenant");
    assert_eq!(
        sqlstate(&err).as_deref(),
        Some(INSUFFICIENT_PRIVILEGE),
        "{err}"
    );
    tx.rollback().await.unwrap();

    let mut tx = world.store.tenant(world.a).await.unwrap();
    let updated = sqlx::query("UPDATE workflows SET name = 'hijacked' WHERE id = $1")
        .bind(world.wf_b)
        .execute(&mut *tx)
        .await
        .unwrap();
    assert_eq!(updated.rows_affected(), 0);
    let deleted = sqlx::query("DELETE FROM runs WHERE tenant_id = $1")
        .bind(world.b)
        .execute(&mut *tx)
        .await
        .unwrap();
    assert_eq!(deleted.rows_affected(), 0);
    tx.commit().await.unwrap();

    // Nor can it hand its own row over to B.
    let mut tx = world.store.tenant(world.a).await.unwrap();
    let err = sqlx::query("UPDATE workflow_versions SET tenant_id = $1 WHERE workflow_id = $2")
        .bind(world.b)
        .bind(world.wf_a)
        .execute(&mut *tx)
        .await
        .expect_err("moved a row to another tenant");
    assert_eq!(
        sqlstate(&err).as_deref(),
        Some(INSUFFICIENT_PRIVILEGE),
        "{err}"
    );
    tx.rollback().await.unwrap();

    let mut tx = world.store.platform().await.unwrap();
    let (name, tenant): (String, uuid::Uuid) =
        sqlx::query_as("SELECT name, tenant_id FROM workflows WHERE id = $1")
            .bind(world.wf_b)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
    assert_eq!((name.as_str(), tenant), ("diamond", world.b.0));
    let planted: i64 = sqlx::query_scalar("SELECT count(*) FROM workflows WHERE name = 'planted'")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    assert_eq!(planted, 0);
    assert_eq!(count(&mut tx, "runs").await, 2);
    tx.rollback().await.unwrap();
    world.drop().await;
}

/// Every table with a `tenant_id` column has row-level security and the
/// tenant policy, so a new table cannot be left open by mistake.
#[tokio::test]
async fn every_tenant_owned_table_has_row_level_security() {
    let world = World::new().await;
    let mut tx = world.store.platform().await.unwrap();
    let open: Vec<String> = sqlx::query_scalar(
        r#"SELECT c.relname::text FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id' AND NOT a.attisdropped
           WHERE c.relkind = 'r'
             AND (NOT c.relrowsecurity
                  OR NOT EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = c.oid AND p.polname = 'tenant_isolation'))
           ORDER BY 1"#,
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    assert!(open.is_empty(), "tables without tenant isolation: {open:?}");
    let covered: i64 = sqlx::query_scalar(
        r#"SELECT count(*) FROM pg_class c
           JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = current_schema()
           JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'tenant_id'
           WHERE c.relkind = 'r'"#,
    )
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    assert!(
        covered >= 10,
        "only {covered} tenant tables found: is the query looking in the right schema?"
    );
    tx.rollback().await.unwrap();
    world.drop().await;
}

#[tokio::test]
async fn the_platform_role_sees_every_tenant() {
    let world = World::new().await;
    let mut tx = world.store.platform().await.unwrap();
    let seen = counts(&mut tx).await;
    assert!(seen.iter().all(|(_, n)| *n == 2), "{seen:?}");
    let mut owners: Vec<uuid::Uuid> =
        sqlx::query_scalar("SELECT tenant_id FROM workflows ORDER BY tenant_id")
            .fetch_all(&mut *tx)
            .await
            .unwrap();
    let mut expected = vec![world.a.0, world.b.0];
    expected.sort();
    owners.sort();
    assert_eq!(owners, expected);
    tx.rollback().await.unwrap();
    world.drop().await;
}
