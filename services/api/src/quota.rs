//! The max-queued-runs quota, checked without a lock per tenant: each
//! replica re-counts a tenant's queued runs at most once a second (one
//! request refreshes while the others use the last count) and adds its own
//! creates in between, so a burst overshoots by at most what other replicas
//! admit within that second.

use crate::error::{ApiError, ApiResult};
use crate::fresh::Fresh;
use couler_store::{Store, TenantId};
use std::time::Duration;

const REFRESH: Duration = Duration::from_secs(1);

pub struct QueueGauge {
    counts: Fresh<TenantId, i64>,
}

impl Default for QueueGauge {
    fn default() -> QueueGauge {
        QueueGauge {
            counts: Fresh::new(REFRESH),
        }
    }
}

impl QueueGauge {
    /// Refuses with 429 when the tenant's queue is full. Call before taking
    /// a connection for the request: a refresh takes one of its own.
    pub async fn check(&self, store: &Store, tenant: TenantId, max_queued: i32) -> ApiResult<()> {
        let queued = self
            .counts
            .get(&tenant, async || {
                let mut tx = store.tenant(tenant).await?;
                let n = couler_store::runs::count_queued(&mut tx, tenant, max_queued as i64 + 1)
                    .await?;
                tx.commit().await?;
                Ok::<_, sqlx::Error>(Some(n))
            })
            .await?
            .unwrap_or_default();
        if queued >= max_queued as i64 {
            return Err(ApiError::TooManyRequests {
                code: "queue_quota_exceeded",
                message: format!("the tenant already has {max_queued} queued runs, its quota"),
                retry_after: REFRESH,
            });
        }
        Ok(())
    }

    /// Counts a run this replica just queued.
    pub fn created(&self, tenant: TenantId) {
        self.counts.update(&tenant, |queued| *queued += 1);
    }

    /// Forgets a tenant's count (after runs leave the queue through this API).
    pub fn invalidate(&self, tenant: TenantId) {
        self.counts.forget(&tenant);
    }
}
