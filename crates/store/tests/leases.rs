//! Lease renewal: a scheduler renews the runs its drivers still follow,
//! and only those, so a run whose driver gave up lapses and is taken over.

mod world;

use couler_store::scheduling;
use std::time::Duration;
use world::World;

#[tokio::test]
async fn a_renewal_extends_only_the_runs_it_names_and_holds() {
    let world = World::new().await;
    let lease = Duration::from_secs(30);
    let mut tx = world.store.platform().await.unwrap();
    let first = scheduling::claim_next(&mut tx, "s1", lease)
        .await
        .unwrap()
        .unwrap();
    let second = scheduling::claim_next(&mut tx, "s1", lease)
        .await
        .unwrap()
        .unwrap();
    tx.commit().await.unwrap();
    let (first, second) = (
        (first.tenant_id, first.run_id),
        (second.tenant_id, second.run_id),
    );

    // The driver of `second` gave up: s1's renewal names only `first`.
    let mut tx = world.store.platform().await.unwrap();
    let longer = Duration::from_secs(600);
    let held = scheduling::renew(&mut tx, "s1", &[first], longer)
        .await
        .unwrap();
    assert_eq!(
        held.iter()
            .map(|h| (h.tenant_id, h.run_id))
            .collect::<Vec<_>>(),
        [first]
    );
    // Another scheduler cannot renew what it does not hold.
    let held = scheduling::renew(&mut tx, "s2", &[second], longer)
        .await
        .unwrap();
    assert!(held.is_empty());
    let left: Vec<(uuid::Uuid, f64)> = sqlx::query_as(
        "SELECT id, extract(epoch FROM lease_expires_at - now())::float8 FROM runs ORDER BY id",
    )
    .fetch_all(&mut *tx)
    .await
    .unwrap();
    tx.commit().await.unwrap();
    for (run, seconds) in left {
        let expected = if run == first.1.0 { 600.0 } else { 30.0 };
        assert!((seconds - expected).abs() < 5.0, "{run}: {seconds} s left");
    }
    world.drop().await;
}
