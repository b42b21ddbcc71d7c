//! The max-queued-runs quota, checked without a lock per tenant: each
//! replica re-counts a tenant's queued runs at most once a second and
//! counts its own creates in between, so a burst overshoots by at most what
//! other replicas admit within that second.

use crate::error::{ApiError, ApiResult};
use couler_store::{Store, TenantId};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const REFRESH: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct QueueGauge {
    counts: Mutex<HashMap<TenantId, (i64, Instant)>>,
}

impl QueueGauge {
    /// Admits one more queued run for `tenant`, or refuses with 429.
    pub async fn admit(&self, store: &Store, tenant: TenantId, max_queued: i32) -> ApiResult<()> {
        let cached = self
            .counts
            .lock()
            .expect("gauge lock")
            .get(&tenant)
            .copied();
        let count = match cached {
            Some((n, at)) if at.elapsed() < REFRESH => n,
            _ => {
                let mut tx = store.tenant(tenant).await?;
                let n = couler_store::runs::count_queued(&mut tx, tenant, max_queued as i64 + 1)
                    .await?;
                tx.commit().await?;
                self.counts
                    .lock()
                    .expect("gauge lock")
                    .insert(tenant, (n, Instant::now()));
                n
            }
        };
        if count >= max_queued as i64 {
            return Err(ApiError::TooManyRequests {
                code: "queue_quota_exceeded",
                message: format!("the tenant already has {max_queued} queued runs, its quota"),
                retry_after: REFRESH,
            });
        }
        if let Some(entry) = self.counts.lock().expect("gauge lock").get_mut(&tenant) {
            entry.0 += 1;
        }
        Ok(())
    }

    /// Forgets a tenant's count (after a run leaves the queue through this API).
    pub fn invalidate(&self, tenant: TenantId) {
        self.counts.lock().expect("gauge lock").remove(&tenant);
    }
}
