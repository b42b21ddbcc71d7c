//! Run creation, batched. Concurrent create requests are queued here and a
//! few writer tasks commit them in groups (per tenant, one transaction and
//! one NOTIFY per group): NOTIFY serializes commits database-wide, so
//! per-request transactions cap creates at about one per fsync. Each run is
//! still created and queued atomically; a failing group is retried one run
//! at a time so one bad request cannot fail its neighbours.

use couler_store::runs::{self, Created, NewRun};
use couler_store::{Store, TenantId};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

type Reply = oneshot::Sender<Result<Created, sqlx::Error>>;

struct Job {
    tenant: TenantId,
    run: NewRun,
    reply: Reply,
}

pub struct RunBatcher {
    jobs: mpsc::Sender<Job>,
}

/// Most runs one transaction creates.
const MAX_BATCH: usize = 256;

impl RunBatcher {
    /// Starts `writers` writer tasks (each holds at most one connection).
    pub fn start(store: Store, writers: usize, stop: CancellationToken) -> RunBatcher {
        let (jobs, rx) = mpsc::channel::<Job>(4096);
        let rx = Arc::new(Mutex::new(rx));
        for _ in 0..writers.max(1) {
            tokio::spawn(writer(store.clone(), rx.clone(), stop.clone()));
        }
        RunBatcher { jobs }
    }

    /// Creates and queues one run.
    pub async fn create(&self, tenant: TenantId, run: NewRun) -> Result<Created, sqlx::Error> {
        let (reply, answer) = oneshot::channel();
        self.jobs
            .send(Job { tenant, run, reply })
            .await
            .map_err(|_| sqlx::Error::PoolClosed)?;
        answer.await.map_err(|_| sqlx::Error::PoolClosed)?
    }
}

async fn writer(store: Store, jobs: Arc<Mutex<mpsc::Receiver<Job>>>, stop: CancellationToken) {
    loop {
        // One writer at a time gathers a batch; the others commit theirs meanwhile.
        let batch = {
            let mut rx = jobs.lock().await;
            let first = tokio::select! {
                _ = stop.cancelled() => return,
                job = rx.recv() => match job {
                    Some(j) => j,
                    None => return,
                },
            };
            let mut batch = vec![first];
            while batch.len() < MAX_BATCH {
                match rx.try_recv() {
                    Ok(j) => batch.push(j),
                    Err(_) => break,
                }
            }
            batch
        };
        let mut by_tenant: BTreeMap<TenantId, Vec<Job>> = BTreeMap::new();
        for job in batch {
            by_tenant.entry(job.tenant).or_default().push(job);
        }
        for (tenant, group) in by_tenant {
            commit_group(&store, tenant, group).await;
        }
    }
}

async fn commit_group(store: &Store, tenant: TenantId, group: Vec<Job>) {
    metrics::histogram!("couler_run_create_batch_size").record(group.len() as f64);
    let runs: Vec<NewRun> = group.iter().map(|j| j.run.clone()).collect();
    let together = async {
        let mut tx = store.tenant(tenant).await?;
        let created = runs::create_many(&mut tx, tenant, &runs).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(created)
    }
    .await;
    match together {
        Ok(created) => {
            for (job, outcome) in group.into_iter().zip(created) {
                let _ = job.reply.send(Ok(outcome));
            }
        }
        Err(e) if group.len() == 1 => {
            let job = group.into_iter().next().expect("one job");
            let _ = job.reply.send(Err(e));
        }
        Err(e) => {
            tracing::warn!(error = %e, runs = group.len(), "a batch of run creates failed; retrying them one by one");
            for job in group {
                let alone = async {
                    let mut tx = store.tenant(tenant).await?;
                    let created = runs::create(&mut tx, tenant, &job.run).await?;
                    tx.commit().await?;
                    Ok(created)
                }
                .await;
                let _ = job.reply.send(alone);
            }
        }
    }
}
