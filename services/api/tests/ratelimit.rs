//! The shared token bucket with leases, against the real Redis: replicas
//! taking tokens in leases never let through more than the bucket holds.

use couler_api::ratelimit::{LEASE_FOR, RateLimiter};
use couler_cache::SharedRedis;
use couler_store::TenantId;
use std::time::{Duration, Instant};

async fn replica(prefix: &str) -> RateLimiter {
    let redis = SharedRedis::connect_now(
        "redis://127.0.0.1:6379",
        Duration::from_millis(500),
        Duration::from_secs(2),
    )
    .await
    .expect("no Redis on 127.0.0.1:6379");
    RateLimiter::new(redis, Duration::from_millis(500), prefix)
}

#[tokio::test]
async fn replicas_leasing_tokens_stay_within_the_shared_bucket() {
    let prefix = format!("couler-test-ratelimit-{}", uuid::Uuid::new_v4().simple());
    let replicas = [replica(&prefix).await, replica(&prefix).await];
    let tenant = TenantId::new();
    const RATE: i32 = 200; // leases of 10
    let start = Instant::now();
    let mut allowed = 0;
    let mut refused = None;
    for i in 0..1000 {
        match replicas[i % 2].acquire(tenant, RATE).await {
            Ok(()) => allowed += 1,
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    let refilled = f64::from(RATE) * elapsed;
    assert!(
        refused.is_some(),
        "the bucket never ran dry: {allowed} allowed"
    );
    // The burst plus what refilled meanwhile, never more; at most one
    // lease per replica short of it (what the other replica still holds).
    assert!(
        f64::from(allowed) <= f64::from(RATE) + refilled + 1.0,
        "{allowed} allowed in {elapsed:.3} s"
    );
    assert!(allowed >= RATE - 2 * 10, "{allowed} allowed");
    assert!(!replicas[0].degraded() && !replicas[1].degraded());
    // Leased tokens lapse: once the bucket refilled, both replicas get
    // fresh leases rather than spending stale ones.
    tokio::time::sleep(LEASE_FOR + Duration::from_millis(200)).await;
    for r in &replicas {
        r.acquire(tenant, RATE).await.expect("refilled");
    }
}
