//! Start-up: replicas that start together create the database and migrate
//! it once, without racing; queueing a run notifies the schedulers in the
//! same transaction; pooled connections the server dropped are replaced,
//! not handed out.

use couler_store::{RUNS_QUEUED_CHANNEL, Store, StoreConfig};
use sqlx::Connection;
use std::time::Duration;

const PG: &str = "postgres://postgres@127.0.0.1:5432";

/// A database name no other test uses, and the config for it.
fn scratch() -> (String, StoreConfig) {
    let name = format!("couler_test_{}", uuid::Uuid::new_v4().simple());
    let config = StoreConfig::new(format!("{PG}/{name}"));
    (name, config)
}

async fn drop_database(name: &str) {
    let mut conn = sqlx::PgConnection::connect(&format!("{PG}/postgres"))
        .await
        .unwrap();
    let ddl = sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
    sqlx::query(ddl).execute(&mut conn).await.unwrap();
}

#[tokio::test]
async fn replicas_starting_together_do_not_race() {
    let (name, config) = scratch();
    let starts = (0..4).map(|_| Store::connect(&config));
    let stores = futures::future::join_all(starts).await;
    for s in &stores {
        assert!(
            s.is_ok(),
            "a replica failed to start: {:?}",
            s.as_ref().err()
        );
    }
    let store = stores.into_iter().next().unwrap().unwrap();
    let applied: i64 = sqlx::query_scalar("SELECT count(*) FROM _sqlx_migrations WHERE success")
        .fetch_one(store.pool())
        .await
        .unwrap();
    assert_eq!(applied as usize, couler_store::MIGRATOR.iter().count());
    store.pool().close().await;
    drop_database(&name).await;
}

#[tokio::test]
async fn queueing_a_run_notifies_in_the_same_transaction() {
    let (name, config) = scratch();
    let store = Store::connect(&config).await.unwrap();
    let mut listener = sqlx::postgres::PgListener::connect_with(store.pool())
        .await
        .unwrap();
    listener.listen(RUNS_QUEUED_CHANNEL).await.unwrap();

    let mut tx = store.platform().await.unwrap();
    let tenant = couler_store::tenants::create(
        &mut tx,
        &couler_store::tenants::NewTenant {
            name: "acme".into(),
            display_name: "Acme".into(),
            engine: "local".into(),
            share_cache: true,
            quotas: Default::default(),
        },
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();

    let ir = serde_json::json!({"apiVersion": "couler.dev/v1alpha1", "name": "w", "steps": [{"name": "s", "container": {"image": "a"}}]});
    let new = couler_store::runs::NewRun::new(
        couler_store::runs::Source::Inline(ir.into()),
        "w",
        "h",
        "test",
    );
    // Rolled back: no notification escapes.
    let mut tx = store.tenant(tenant.id).await.unwrap();
    couler_store::runs::create(&mut tx, tenant.id, &new)
        .await
        .unwrap();
    tx.rollback().await.unwrap();
    assert!(
        tokio::time::timeout(Duration::from_millis(300), listener.recv())
            .await
            .is_err()
    );

    // Committed: the schedulers hear about it.
    let mut tx = store.tenant(tenant.id).await.unwrap();
    couler_store::runs::create(&mut tx, tenant.id, &new)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let note = tokio::time::timeout(Duration::from_secs(5), listener.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(note.payload(), tenant.id.0.to_string());

    drop(listener);
    store.pool().close().await;
    drop_database(&name).await;
}

/// Ends every session on `database`; one flag per session.
async fn terminate(admin: &mut sqlx::PgConnection, database: &str) -> Vec<bool> {
    sqlx::query_scalar("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1")
        .bind(database)
        .fetch_all(admin)
        .await
        .unwrap()
}

#[tokio::test]
async fn connections_the_server_dropped_are_replaced_not_handed_out() {
    let (name, mut config) = scratch();
    config.max_connections = 1;
    let store = Store::connect(&config).await.unwrap();
    store.ping().await.unwrap();

    // The server ends the pool's one connection (as a restart would).
    let mut admin = sqlx::PgConnection::connect(&format!("{PG}/postgres"))
        .await
        .unwrap();
    assert_eq!(terminate(&mut admin, &name).await, [true]);

    // Used at once (so not pinged first), it fails its BEGIN, is dropped
    // and replaced by a new connection.
    let tx = store.platform().await.unwrap();
    tx.commit().await.unwrap();
    // The same for a connection that sat idle before the server ended it.
    tokio::time::sleep(Duration::from_millis(1200)).await;
    terminate(&mut admin, &name).await;
    store.ping().await.unwrap();
    store.pool().close().await;
    drop_database(&name).await;
}

/// Nagle's algorithm holds a small write back until the previous one is
/// acknowledged, and the server may delay that acknowledgement by 40 ms: a
/// message sqlx sends in two writes (as TLS does) waits that long. The pool's
/// sockets have it off, as libpq's do.
#[tokio::test]
async fn pooled_connections_send_without_nagle_delays() {
    let (name, config) = scratch();
    let store = Store::connect(&config).await.unwrap();
    let mut conn = store.pool().acquire().await.unwrap();
    let port: i32 = sqlx::query_scalar("SELECT inet_client_port()")
        .fetch_one(&mut *conn)
        .await
        .unwrap();

    // The connection's socket, found among this process's descriptors by
    // the local port the server sees.
    let nodelay = std::fs::read_dir("/proc/self/fd")
        .unwrap()
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse().ok())
        .find_map(|raw| {
            // SAFETY: the descriptor is only borrowed for these two calls,
            // while `conn` keeps the socket open; on any other descriptor
            // (or one closed meanwhile) the calls fail and it is skipped.
            let fd = unsafe { std::os::fd::BorrowedFd::borrow_raw(raw) };
            let socket = socket2::SockRef::from(&fd);
            let local = socket.local_addr().ok()?.as_socket()?;
            (local.port() == port as u16).then(|| socket.tcp_nodelay().unwrap())
        });
    assert_eq!(nodelay, Some(true), "the pooled connection's socket");
    drop(conn);
    store.pool().close().await;
    drop_database(&name).await;
}
