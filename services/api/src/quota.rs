//! The max-queued-runs quota, checked without a lock per tenant: each
//! replica re-counts a tenant's queued runs at most once a second (one
//! request refreshes while the others use the last count) and adds its own
//! creates in between, so a burst overshoots by at most what other replicas
//! admit within that second.

use crate::error::{ApiError, ApiResult};
use couler_store::{Store, TenantId};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const REFRESH: Duration = Duration::from_secs(1);

#[derive(Default)]
pub struct QueueGauge {
    counts: Mutex<HashMap<TenantId, Count>>,
}

#[derive(Clone, Copy)]
struct Count {
    queued: i64,
    at: Instant,
    refreshing: bool,
}

impl QueueGauge {
    /// Refuses with 429 when the tenant's queue is full. Call before taking
    /// a connection for the request: a refresh takes one of its own.
    pub async fn check(&self, store: &Store, tenant: TenantId, max_queued: i32) -> ApiResult<()> {
        let (known, refresh) = {
            let mut counts = self.counts.lock().expect("gauge lock");
            match counts.get_mut(&tenant) {
                Some(c) if c.at.elapsed() < REFRESH || c.refreshing => (Some(c.queued), false),
                Some(c) => {
                    c.refreshing = true;
                    (Some(c.queued), true)
                }
                None => (None, true),
            }
        };
        let queued = if refresh {
            let counted = async {
                let mut tx = store.tenant(tenant).await?;
                let n = couler_store::runs::count_queued(&mut tx, tenant, max_queued as i64 + 1)
                    .await?;
                tx.commit().await?;
                Ok::<_, sqlx::Error>(n)
            }
            .await;
            let mut counts = self.counts.lock().expect("gauge lock");
            match counted {
                Ok(n) => {
                    counts.insert(
                        tenant,
                        Count {
                            queued: n,
                            at: Instant::now(),
                            refreshing: false,
                        },
                    );
                    n
                }
                Err(e) => {
                    if let Some(c) = counts.get_mut(&tenant) {
                        c.refreshing = false;
                    }
                    return Err(e.into());
                }
            }
        } else {
            known.unwrap_or_default()
        };
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
        if let Some(c) = self.counts.lock().expect("gauge lock").get_mut(&tenant) {
            c.queued += 1;
        }
    }

    /// Forgets a tenant's count (after runs leave the queue through this API).
    pub fn invalidate(&self, tenant: TenantId) {
        self.counts.lock().expect("gauge lock").remove(&tenant);
    }
}
