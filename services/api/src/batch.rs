//! Run creation, batched. Concurrent create requests are queued here and a
//! few writer tasks handle them in groups (per tenant, one transaction and
//! one NOTIFY per group): the stored workflows the group names are looked
//! up once, every run's parameters are checked, and the runs are inserted in
//! one statement. NOTIFY serializes commits database-wide, so per-request
//! transactions cap creates at about one per fsync. Each run is still
//! created and queued atomically (with the webhook delivery it is for, if
//! any); a group failing in the database is retried one run at a time so
//! one bad request cannot fail its neighbours.

use crate::error::{ApiError, ApiResult};
use crate::run_secrets::{SecretUse, check_secrets};
use crate::runs::resolve_parameters;
use couler_ir::Parameter;
use couler_ir::scalar::ParamValue;
use couler_store::runs::{self, Created, NewRun, Source};
use couler_store::webhooks::{self, DeliveryOutcome, NewDelivery};
use couler_store::{Store, TenantId, Tx};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{Mutex, mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A create request, before its workflow is looked up.
#[derive(Debug, Clone)]
pub struct CreateRun {
    pub target: Target,
    /// Parameter values as given; checked against the workflow's declarations.
    pub parameters: BTreeMap<String, ParamValue>,
    pub labels: BTreeMap<String, String>,
    pub priority: i32,
    pub idempotency_key: Option<String>,
    pub request_hash: Option<String>,
    pub trace_context: BTreeMap<String, String>,
    pub created_by: String,
    pub trigger: runs::Trigger,
    /// The webhook delivery the run is for: recorded, with the run's id,
    /// in the run's transaction.
    pub delivery: Option<NewDelivery>,
}

/// The workflow a run executes.
#[derive(Debug, Clone)]
pub enum Target {
    /// A stored workflow by `wf_…` id or name; the latest version when none is given.
    Stored {
        reference: String,
        version: Option<i32>,
    },
    /// A validated inline document.
    Inline(Workflow),
}

/// A workflow ready to run.
#[derive(Debug, Clone)]
pub struct Workflow {
    pub source: Source,
    pub name: String,
    pub ir_hash: String,
    pub declared: Vec<Parameter>,
    /// The secrets its steps read; the tenant must have each, with the key.
    pub secrets: Vec<SecretUse>,
}

impl CreateRun {
    fn new_run(&self, workflow: &Workflow) -> ApiResult<NewRun> {
        Ok(NewRun {
            source: workflow.source.clone(),
            workflow_name: workflow.name.clone(),
            ir_hash: workflow.ir_hash.clone(),
            parameters: resolve_parameters(&workflow.declared, &self.parameters)?,
            labels: self.labels.clone(),
            priority: self.priority,
            idempotency_key: self.idempotency_key.clone(),
            request_hash: self.request_hash.clone(),
            trace_context: self.trace_context.clone(),
            created_by: self.created_by.clone(),
            trigger: self.trigger,
        })
    }
}

type Outcome = ApiResult<Created>;

/// A stored workflow's reference and the version asked for.
type StoredRef<'a> = (&'a str, Option<i32>);

struct Job {
    tenant: TenantId,
    create: CreateRun,
    reply: oneshot::Sender<Outcome>,
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
    pub async fn create(&self, tenant: TenantId, create: CreateRun) -> Outcome {
        let (reply, answer) = oneshot::channel();
        let stopping = || ApiError::Unavailable("the service is shutting down".into());
        self.jobs
            .send(Job {
                tenant,
                create,
                reply,
            })
            .await
            .map_err(|_| stopping())?;
        answer.await.map_err(|_| stopping())?
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
    let creates: Vec<&CreateRun> = group.iter().map(|j| &j.create).collect();
    match create_group(store, tenant, &creates).await {
        Ok(outcomes) => {
            for (job, outcome) in group.into_iter().zip(outcomes) {
                let _ = job.reply.send(outcome);
            }
        }
        Err(e) if group.len() == 1 => {
            let job = group.into_iter().next().expect("one job");
            let _ = job.reply.send(Err(e.into()));
        }
        Err(e) => {
            tracing::warn!(error = %e, runs = group.len(), "a batch of run creates failed; retrying them one by one");
            for job in group {
                let alone = match create_group(store, tenant, &[&job.create]).await {
                    Ok(mut outcomes) => outcomes.pop().expect("one outcome per create"),
                    Err(e) => Err(e.into()),
                };
                let _ = job.reply.send(alone);
            }
        }
    }
}

/// Creates what it can of one tenant's group in one transaction: one outcome
/// per create, in order. Fails as a whole only on a database error.
async fn create_group(
    store: &Store,
    tenant: TenantId,
    creates: &[&CreateRun],
) -> Result<Vec<Outcome>, sqlx::Error> {
    let mut tx = store.tenant(tenant).await?;
    // The stored workflows this group names (usually one), looked up once each.
    let mut stored: Vec<(StoredRef, Option<Workflow>)> = Vec::new();
    let mut chosen: Vec<ApiResult<Chosen>> = Vec::with_capacity(creates.len());
    for create in creates {
        chosen.push(match &create.target {
            Target::Inline(_) => Ok(Chosen::Inline),
            Target::Stored { reference, version } => {
                let key = (reference.as_str(), *version);
                let at = match stored.iter().position(|(k, _)| *k == key) {
                    Some(at) => at,
                    None => {
                        let found = lookup(&mut tx, tenant, reference, *version).await?;
                        stored.push((key, found));
                        stored.len() - 1
                    }
                };
                match &stored[at].1 {
                    Some(_) => Ok(Chosen::Stored(at)),
                    None => Err(missing(&mut tx, tenant, reference, *version).await),
                }
            }
        });
    }
    // The secrets the group's workflows read, looked up in one query, and
    // only when any reads one.
    let mut names: Vec<String> = creates
        .iter()
        .zip(&chosen)
        .filter_map(|(c, w)| w.as_ref().ok().map(|w| workflow_of(&stored, c, w)))
        .flat_map(|w| w.secrets.iter().map(|u| u.name.clone()))
        .collect();
    names.sort_unstable();
    names.dedup();
    let have = if names.is_empty() {
        BTreeMap::new()
    } else {
        couler_store::secrets::keys_of(&mut tx, tenant, &names).await?
    };
    let mut outcomes: Vec<Option<Outcome>> = Vec::with_capacity(creates.len());
    let mut runs = Vec::with_capacity(creates.len());
    for (create, chosen) in creates.iter().zip(chosen) {
        let workflow = chosen.map(|w| workflow_of(&stored, create, &w));
        match workflow.and_then(|w| {
            check_secrets(w, &have)?;
            create.new_run(w)
        }) {
            Ok(run) => {
                runs.push(run);
                outcomes.push(None);
            }
            Err(e) => outcomes.push(Some(Err(e))),
        }
    }
    // A group of bad requests inserts nothing: no statement for it.
    let created = if runs.is_empty() {
        Vec::new()
    } else {
        runs::create_many(&mut tx, tenant, &runs).await?
    };
    let mut created = created.into_iter();
    let outcomes: Vec<Outcome> = outcomes
        .into_iter()
        .map(|o| o.unwrap_or_else(|| Ok(created.next().expect("one outcome per run"))))
        .collect();
    let deliveries: Vec<NewDelivery> = creates
        .iter()
        .zip(&outcomes)
        .filter_map(|(create, outcome)| {
            let run = match outcome {
                Ok(Created::New(run) | Created::Existing(run)) => run,
                _ => return None,
            };
            let mut delivery = create.delivery.clone()?;
            delivery.outcome = DeliveryOutcome::Queued;
            delivery.run_id = Some(run.id);
            Some(delivery)
        })
        .collect();
    webhooks::record(&mut tx, tenant, &deliveries).await?;
    tx.commit().await?;
    Ok(outcomes)
}

/// Where a create's workflow is: its own inline one, or `stored[i]`.
enum Chosen {
    Inline,
    Stored(usize),
}

fn workflow_of<'a>(
    stored: &'a [(StoredRef, Option<Workflow>)],
    create: &'a CreateRun,
    chosen: &Chosen,
) -> &'a Workflow {
    match (chosen, &create.target) {
        (Chosen::Stored(at), _) => stored[*at].1.as_ref().expect("chosen when found"),
        (Chosen::Inline, Target::Inline(workflow)) => workflow,
        (Chosen::Inline, Target::Stored { .. }) => unreachable!("chosen from the target"),
    }
}

async fn lookup(
    tx: &mut Tx,
    tenant: TenantId,
    reference: &str,
    version: Option<i32>,
) -> Result<Option<Workflow>, sqlx::Error> {
    let Some(target) = couler_store::workflows::for_run(tx, tenant, reference, version).await?
    else {
        return Ok(None);
    };
    // Stored versions passed validation, so their parameters read back.
    let declared = serde_json::from_value(target.parameters.0)
        .map_err(|e| sqlx::Error::Decode(Box::new(e)))?;
    Ok(Some(Workflow {
        source: Source::Version {
            workflow_id: target.workflow_id,
            version: target.version,
        },
        name: target.name,
        ir_hash: target.ir_hash,
        declared,
        secrets: target
            .secrets
            .0
            .into_iter()
            .map(SecretUse::of_stored)
            .collect(),
    }))
}

/// Says which of the request's fields named nothing: the workflow or the
/// version.
async fn missing(tx: &mut Tx, tenant: TenantId, reference: &str, version: Option<i32>) -> ApiError {
    match crate::workflows::resolve(tx, tenant, reference).await {
        Err(e) => e.at("/workflow"),
        Ok(_) => ApiError::not_found(format!(
            "version {} of workflow {reference:?}",
            version.unwrap_or_default()
        ))
        .at("/version"),
    }
}
