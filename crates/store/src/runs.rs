//! Runs and their steps. Creating a run queues it: the row, its first event
//! and the scheduler wake-up (a trigger's NOTIFY) commit together.

use crate::events::{self, NewEvent};
use crate::page::{Cursor, Page};
use crate::status::{IllegalTransition, RunStatus, StepStatus};
use crate::workflows::Labels;
use crate::{RunId, TenantId, Tx, WorkflowId};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use std::collections::BTreeMap;

pub type Parameters = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    pub tenant_id: TenantId,
    pub id: RunId,
    pub workflow_id: Option<WorkflowId>,
    pub workflow_version: Option<i32>,
    pub workflow_name: String,
    pub ir_hash: String,
    pub status: RunStatus,
    pub parameters: Json<Parameters>,
    pub labels: Json<Labels>,
    pub priority: i32,
    pub attempt: i32,
    pub message: Option<String>,
    pub idempotency_key: Option<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub queued_at: DateTime<Utc>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    pub cancel_requested_at: Option<DateTime<Utc>>,
    pub trigger_kind: TriggerKind,
    /// The schedule (or backfill, or webhook trigger) that started it.
    pub trigger_id: Option<uuid::Uuid>,
    /// The nominal instant of the schedule's tick it runs for.
    pub scheduled_for: Option<DateTime<Utc>>,
}

/// What started a run.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Serialize,
    serde::Deserialize,
    sqlx::Type,
    utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
#[sqlx(type_name = "text", rename_all = "lowercase")]
pub enum TriggerKind {
    /// A client of the API.
    #[default]
    Api,
    /// A schedule's tick (or its manual trigger).
    Schedule,
    /// A backfill of a schedule's past instants.
    Backfill,
    /// A webhook delivery.
    Webhook,
}

/// A run's provenance: what started it and, for a schedule, for which instant.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Trigger {
    pub kind: TriggerKind,
    pub id: Option<uuid::Uuid>,
    pub scheduled_for: Option<DateTime<Utc>>,
}

/// What a run executes: a stored version, or IR given inline.
#[derive(Debug, Clone)]
pub enum Source {
    Version {
        workflow_id: WorkflowId,
        version: i32,
    },
    /// Shared: a batch that fails is retried one run at a time.
    Inline(std::sync::Arc<serde_json::Value>),
}

#[derive(Debug, Clone)]
pub struct NewRun {
    pub source: Source,
    pub workflow_name: String,
    pub ir_hash: String,
    pub parameters: Parameters,
    pub labels: Labels,
    pub priority: i32,
    pub idempotency_key: Option<String>,
    /// Digest of the create request, to tell a retried request from a different one.
    pub request_hash: Option<String>,
    pub trace_context: BTreeMap<String, String>,
    pub created_by: String,
    pub trigger: Trigger,
}

impl NewRun {
    /// A run with no parameters, labels, priority, idempotency key or trace.
    pub fn new(source: Source, workflow_name: &str, ir_hash: &str, created_by: &str) -> NewRun {
        NewRun {
            source,
            workflow_name: workflow_name.to_owned(),
            ir_hash: ir_hash.to_owned(),
            parameters: Parameters::default(),
            labels: Labels::default(),
            priority: 0,
            idempotency_key: None,
            request_hash: None,
            trace_context: BTreeMap::new(),
            created_by: created_by.to_owned(),
            trigger: Trigger::default(),
        }
    }
}

/// The outcome of a create with an idempotency key.
#[derive(Debug, Clone, PartialEq)]
pub enum Created {
    New(Run),
    /// The same request was made before; this is its run.
    Existing(Run),
    /// The key was used before for a different request.
    KeyReused,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub name: String,
    pub status: StepStatus,
    pub attempt: i32,
    pub message: Option<String>,
    pub outputs: Json<serde_json::Value>,
    pub started_at: Option<DateTime<Utc>>,
    pub finished_at: Option<DateTime<Utc>>,
    /// The engine's name for it (a pod, a task instance, a try directory).
    pub engine_ref: Option<String>,
    /// Measured by the engine for its last attempt, where it measures.
    pub wall_ms: Option<i64>,
    pub cpu_ms: Option<i64>,
    pub max_rss_kb: Option<i64>,
    pub exit_code: Option<i32>,
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    pub status: Option<RunStatus>,
    pub workflow_id: Option<WorkflowId>,
    pub labels: Labels,
    pub created_after: Option<DateTime<Utc>>,
    pub created_before: Option<DateTime<Utc>>,
}

/// Why a cancel or retry did not happen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChangeError {
    #[error(transparent)]
    Illegal(#[from] IllegalTransition),
    /// See [`RunStatus::is_retryable`].
    #[error("only a failed or cancelled run can be retried; this one is {0}")]
    NotRetryable(RunStatus),
}

/// Creates and queues one run (see [`create_many`]).
pub async fn create(tx: &mut Tx, tenant: TenantId, new: &NewRun) -> Result<Created, sqlx::Error> {
    let mut created = create_many(tx, tenant, std::slice::from_ref(new)).await?;
    Ok(created.pop().expect("one outcome per request"))
}

/// Creates and queues runs of one tenant in one statement: the rows, their
/// `run.queued` events and (through a trigger) the scheduler wake-up commit
/// together. Returns one outcome per request, in order. Batching matters:
/// NOTIFY serializes commits database-wide, so one commit for many runs is
/// what lets creates scale.
pub async fn create_many(
    tx: &mut Tx,
    tenant: TenantId,
    new: &[NewRun],
) -> Result<Vec<Created>, sqlx::Error> {
    let ids: Vec<RunId> = new.iter().map(|_| RunId::new()).collect();
    let uuids: Vec<uuid::Uuid> = ids.iter().map(|i| i.0).collect();
    let mut workflow_ids = Vec::with_capacity(new.len());
    let mut versions = Vec::with_capacity(new.len());
    let mut inline = Vec::with_capacity(new.len());
    for n in new {
        match &n.source {
            Source::Version {
                workflow_id,
                version,
            } => {
                workflow_ids.push(Some(workflow_id.0));
                versions.push(Some(*version));
                inline.push(None);
            }
            Source::Inline(ir) => {
                workflow_ids.push(None);
                versions.push(None);
                inline.push(Some(Json(&**ir)));
            }
        }
    }
    let hashes: Vec<&str> = new.iter().map(|n| n.ir_hash.as_str()).collect();
    let names: Vec<&str> = new.iter().map(|n| n.workflow_name.as_str()).collect();
    let parameters: Vec<Json<&Parameters>> = new.iter().map(|n| Json(&n.parameters)).collect();
    let labels: Vec<Json<&Labels>> = new.iter().map(|n| Json(&n.labels)).collect();
    let priorities: Vec<i32> = new.iter().map(|n| n.priority).collect();
    let keys: Vec<Option<&str>> = new.iter().map(|n| n.idempotency_key.as_deref()).collect();
    let request_hashes: Vec<Option<&str>> = new.iter().map(|n| n.request_hash.as_deref()).collect();
    let traces: Vec<Json<&BTreeMap<String, String>>> =
        new.iter().map(|n| Json(&n.trace_context)).collect();
    let authors: Vec<&str> = new.iter().map(|n| n.created_by.as_str()).collect();
    let trigger_kinds: Vec<TriggerKind> = new.iter().map(|n| n.trigger.kind).collect();
    let trigger_ids: Vec<Option<uuid::Uuid>> = new.iter().map(|n| n.trigger.id).collect();
    let scheduled_for: Vec<Option<DateTime<Utc>>> =
        new.iter().map(|n| n.trigger.scheduled_for).collect();
    let inserted = sqlx::query_as!(
        Run,
        r#"WITH input AS (
               SELECT * FROM unnest($2::uuid[], $3::uuid[], $4::int[], $5::jsonb[], $6::text[], $7::text[], $8::jsonb[],
                                    $9::jsonb[], $10::int[], $11::text[], $12::text[], $13::jsonb[], $14::text[],
                                    $15::text[], $16::uuid[], $17::timestamptz[])
                   AS i(id, workflow_id, workflow_version, inline_ir, ir_hash, workflow_name, parameters, labels,
                        priority, idempotency_key, request_hash, trace_context, created_by,
                        trigger_kind, trigger_id, scheduled_for)
           ), run AS (
               INSERT INTO runs (tenant_id, id, workflow_id, workflow_version, inline_ir, ir_hash, workflow_name,
                                 parameters, labels, priority, idempotency_key, request_hash, trace_context, created_by,
                                 trigger_kind, trigger_id, scheduled_for)
               SELECT $1, id, workflow_id, workflow_version, inline_ir, ir_hash, workflow_name, parameters, labels,
                      priority, idempotency_key, request_hash, trace_context, created_by,
                      trigger_kind, trigger_id, scheduled_for
               FROM input
               ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
               RETURNING *
           ), event AS (
               INSERT INTO run_events (tenant_id, run_id, kind, status)
               SELECT tenant_id, id, 'run.queued', 'queued' FROM run
           )
           SELECT tenant_id AS "tenant_id!: TenantId", id AS "id!: RunId", workflow_id AS "workflow_id: WorkflowId",
                  workflow_version, workflow_name AS "workflow_name!", ir_hash AS "ir_hash!",
                  status AS "status!: RunStatus", parameters AS "parameters!: Json<Parameters>",
                  labels AS "labels!: Json<Labels>", priority AS "priority!", attempt AS "attempt!", message,
                  idempotency_key, created_by AS "created_by!", created_at AS "created_at!", updated_at AS "updated_at!",
                  queued_at AS "queued_at!", started_at, finished_at, cancel_requested_at,
                  trigger_kind AS "trigger_kind!: TriggerKind", trigger_id, scheduled_for
           FROM run"#,
        tenant as TenantId,
        &uuids,
        &workflow_ids as &[Option<uuid::Uuid>],
        &versions as &[Option<i32>],
        &inline as &[Option<Json<&serde_json::Value>>],
        &hashes as &[&str],
        &names as &[&str],
        &parameters as &[Json<&Parameters>],
        &labels as &[Json<&Labels>],
        &priorities,
        &keys as &[Option<&str>],
        &request_hashes as &[Option<&str>],
        &traces as &[Json<&BTreeMap<String, String>>],
        &authors as &[&str],
        &trigger_kinds as &[TriggerKind],
        &trigger_ids as &[Option<uuid::Uuid>],
        &scheduled_for as &[Option<DateTime<Utc>>],
    )
    .fetch_all(&mut **tx)
    .await?;
    let mut by_id: std::collections::HashMap<RunId, Run> =
        inserted.into_iter().map(|r| (r.id, r)).collect();
    let mut out = Vec::with_capacity(new.len());
    for (id, n) in ids.iter().zip(new) {
        if let Some(run) = by_id.remove(id) {
            out.push(Created::New(run));
            continue;
        }
        // Only an idempotency-key conflict skips an insert: an earlier request
        // (or an earlier one in this batch) holds the key.
        let key = n.idempotency_key.as_deref().unwrap_or_default();
        let existing = sqlx::query!(
            r#"SELECT id AS "id: RunId", request_hash FROM runs WHERE tenant_id = $1 AND idempotency_key = $2"#,
            tenant as TenantId,
            key,
        )
        .fetch_one(&mut **tx)
        .await?;
        if existing.request_hash != n.request_hash {
            out.push(Created::KeyReused);
            continue;
        }
        let run = get(tx, tenant, existing.id)
            .await?
            .ok_or(sqlx::Error::RowNotFound)?;
        out.push(Created::Existing(run));
    }
    Ok(out)
}

pub async fn get(tx: &mut Tx, tenant: TenantId, id: RunId) -> Result<Option<Run>, sqlx::Error> {
    sqlx::query_as!(
        Run,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: RunId", workflow_id AS "workflow_id: WorkflowId",
                  workflow_version, workflow_name, ir_hash, status AS "status: RunStatus",
                  parameters AS "parameters: Json<Parameters>", labels AS "labels: Json<Labels>", priority, attempt,
                  message, idempotency_key, created_by, created_at, updated_at, queued_at, started_at, finished_at,
                  cancel_requested_at, trigger_kind AS "trigger_kind: TriggerKind", trigger_id, scheduled_for
           FROM runs WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// A run locked for a status change.
async fn get_for_update(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<Run>, sqlx::Error> {
    sqlx::query_as!(
        Run,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: RunId", workflow_id AS "workflow_id: WorkflowId",
                  workflow_version, workflow_name, ir_hash, status AS "status: RunStatus",
                  parameters AS "parameters: Json<Parameters>", labels AS "labels: Json<Labels>", priority, attempt,
                  message, idempotency_key, created_by, created_at, updated_at, queued_at, started_at, finished_at,
                  cancel_requested_at, trigger_kind AS "trigger_kind: TriggerKind", trigger_id, scheduled_for
           FROM runs WHERE tenant_id = $1 AND id = $2 FOR UPDATE"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// The IR a run executes (inline, or its workflow version's).
pub async fn ir(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<serde_json::Value>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT coalesce(r.inline_ir, v.ir) AS "ir!: Json<serde_json::Value>"
           FROM runs r
           LEFT JOIN workflow_versions v
             ON v.tenant_id = r.tenant_id AND v.workflow_id = r.workflow_id AND v.version = r.workflow_version
           WHERE r.tenant_id = $1 AND r.id = $2"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|ir| ir.map(|Json(v)| v))
}

pub async fn list(
    tx: &mut Tx,
    tenant: TenantId,
    filter: &Filter,
    after: Option<Cursor>,
    limit: usize,
) -> Result<Page<Run>, sqlx::Error> {
    let rows = sqlx::query_as!(
        Run,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: RunId", workflow_id AS "workflow_id: WorkflowId",
                  workflow_version, workflow_name, ir_hash, status AS "status: RunStatus",
                  parameters AS "parameters: Json<Parameters>", labels AS "labels: Json<Labels>", priority, attempt,
                  message, idempotency_key, created_by, created_at, updated_at, queued_at, started_at, finished_at,
                  cancel_requested_at, trigger_kind AS "trigger_kind: TriggerKind", trigger_id, scheduled_for
           FROM runs
           WHERE tenant_id = $1
             AND ($2::text IS NULL OR status = $2)
             AND ($3::uuid IS NULL OR workflow_id = $3)
             AND labels @> $4
             AND ($5::timestamptz IS NULL OR created_at >= $5)
             AND ($6::timestamptz IS NULL OR created_at < $6)
             AND ($7::timestamptz IS NULL OR (created_at, id) < ($7, $8))
           ORDER BY created_at DESC, id DESC
           LIMIT $9"#,
        tenant as TenantId,
        filter.status.map(RunStatus::as_str),
        filter.workflow_id.map(|w| w.0),
        Json(&filter.labels) as _,
        filter.created_after,
        filter.created_before,
        after.map(|c| c.created_at),
        after.map(|c| c.id).unwrap_or_default(),
        limit as i64 + 1,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(Page::from_rows(rows, limit, |r| Cursor {
        created_at: r.created_at,
        id: r.id.0,
    }))
}

/// The run's steps: those the scheduler recorded and, while the run is
/// running, the rest of its plan as `pending` (attempt 0), so that a
/// client sees the whole workflow, not only what was dispatched. Started
/// steps come first, then the others (in plan order while it runs; the
/// plan of a run that is not running is not read).
pub async fn steps(tx: &mut Tx, tenant: TenantId, id: RunId) -> Result<Vec<Step>, sqlx::Error> {
    sqlx::query_as!(
        Step,
        r#"WITH planned AS (
               SELECT p.step->>'name' AS name, p.n
               FROM runs r, jsonb_array_elements(r.plan->'steps') WITH ORDINALITY AS p(step, n)
               WHERE r.tenant_id = $1 AND r.id = $2 AND r.status = 'running'
           ), recorded AS (
               SELECT s.name, s.status, s.attempt, s.message, s.outputs, s.started_at, s.finished_at,
                      s.engine_ref, s.wall_ms, s.cpu_ms, s.max_rss_kb, s.exit_code, p.n
               FROM run_steps s LEFT JOIN planned p ON p.name = s.name
               WHERE s.tenant_id = $1 AND s.run_id = $2
           ), waiting AS (
               SELECT p.name, 'pending' AS status, 0 AS attempt, NULL::text AS message, '{}'::jsonb AS outputs,
                      NULL::timestamptz AS started_at, NULL::timestamptz AS finished_at,
                      NULL::text AS engine_ref, NULL::bigint AS wall_ms, NULL::bigint AS cpu_ms,
                      NULL::bigint AS max_rss_kb, NULL::integer AS exit_code, p.n
               FROM planned p
               WHERE NOT EXISTS (SELECT 1 FROM recorded s WHERE s.name = p.name)
           )
           SELECT name AS "name!", status AS "status!: StepStatus", attempt AS "attempt!", message,
                  outputs AS "outputs!: Json<serde_json::Value>", started_at, finished_at,
                  engine_ref, wall_ms, cpu_ms, max_rss_kb, exit_code
           FROM (SELECT * FROM recorded UNION ALL SELECT * FROM waiting) steps
           ORDER BY started_at NULLS LAST, n NULLS LAST, name"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// The id of the run's latest event: a client that reads this before the
/// run's steps and then follows the events after it misses none (it may
/// see a change twice: once in the steps, once as an event).
pub async fn last_event_id(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<i64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT max(id) FROM run_events WHERE tenant_id = $1 AND run_id = $2"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_one(&mut **tx)
    .await
}

/// How many steps of each run are in each status (as recorded; a run's
/// planned steps that have not started are not counted), for lists.
pub async fn step_counts(
    tx: &mut Tx,
    tenant: TenantId,
    ids: &[RunId],
) -> Result<Vec<(RunId, StepStatus, i64)>, sqlx::Error> {
    let ids: Vec<uuid::Uuid> = ids.iter().map(|r| r.0).collect();
    sqlx::query!(
        r#"SELECT run_id AS "run_id!: RunId", status AS "status!: StepStatus", count(*) AS "n!"
           FROM run_steps WHERE tenant_id = $1 AND run_id = ANY($2)
           GROUP BY run_id, status"#,
        tenant as TenantId,
        &ids,
    )
    .fetch_all(&mut **tx)
    .await
    .map(|rows| {
        rows.into_iter()
            .map(|r| (r.run_id, r.status, r.n))
            .collect()
    })
}

/// Queued runs of a tenant, counted up to `cap` (enough to enforce a quota).
pub async fn count_queued(tx: &mut Tx, tenant: TenantId, cap: i64) -> Result<i64, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT count(*) AS "n!" FROM (
               SELECT 1 FROM runs WHERE tenant_id = $1 AND status = 'queued' LIMIT $2
           ) q"#,
        tenant as TenantId,
        cap,
    )
    .fetch_one(&mut **tx)
    .await
}

/// Cancels a run: a queued run ends at once; a planning or running one is
/// asked to stop (the scheduler finishes the job). `None` when there is no
/// such run.
pub async fn cancel(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<Result<Run, ChangeError>>, sqlx::Error> {
    let Some(run) = get_for_update(tx, tenant, id).await? else {
        return Ok(None);
    };
    if let Err(e) = run.status.transition(RunStatus::Cancelled) {
        return Ok(Some(Err(e.into())));
    }
    if run.status == RunStatus::Queued {
        set_status(
            tx,
            tenant,
            &run,
            RunStatus::Cancelled,
            Some("cancelled before it started"),
        )
        .await?;
    } else if run.cancel_requested_at.is_none() {
        sqlx::query!(
            "UPDATE runs SET cancel_requested_at = now(), updated_at = now() WHERE tenant_id = $1 AND id = $2",
            tenant as TenantId,
            id as RunId,
        )
        .execute(&mut **tx)
        .await?;
        events::append(
            tx,
            tenant,
            id,
            &NewEvent::run("run.cancel_requested", run.status),
        )
        .await?;
    }
    Ok(Some(Ok(get(tx, tenant, id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?)))
}

/// Queues a failed or cancelled run again. Succeeded, skipped and cached
/// steps keep their results; failed and cancelled ones go back to pending.
pub async fn retry(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<Result<Run, ChangeError>>, sqlx::Error> {
    let Some(run) = get_for_update(tx, tenant, id).await? else {
        return Ok(None);
    };
    if !run.status.is_retryable() {
        return Ok(Some(Err(ChangeError::NotRetryable(run.status))));
    }
    if let Err(e) = run.status.transition(RunStatus::Queued) {
        return Ok(Some(Err(e.into())));
    }
    sqlx::query!(
        r#"UPDATE run_steps SET status = 'pending', message = NULL, started_at = NULL, finished_at = NULL, updated_at = now()
           WHERE tenant_id = $1 AND run_id = $2 AND status IN ('failed', 'cancelled')"#,
        tenant as TenantId,
        id as RunId,
    )
    .execute(&mut **tx)
    .await?;
    sqlx::query!(
        r#"UPDATE runs SET status = 'queued', attempt = attempt + 1, message = NULL, queued_at = now(),
                          finished_at = NULL, cancel_requested_at = NULL, updated_at = now()
           WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        id as RunId,
    )
    .execute(&mut **tx)
    .await?;
    let mut event = NewEvent::run("run.retried", RunStatus::Queued);
    event.data = serde_json::json!({ "attempt": run.attempt + 1 });
    events::append(tx, tenant, id, &event).await?;
    Ok(Some(Ok(get(tx, tenant, id)
        .await?
        .ok_or(sqlx::Error::RowNotFound)?)))
}

/// Moves a run to `to` (checked against the lifecycle by the caller) and
/// records the event.
pub async fn set_status(
    tx: &mut Tx,
    tenant: TenantId,
    run: &Run,
    to: RunStatus,
    message: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE runs SET status = $3, message = coalesce($4, message), updated_at = now(),
                          started_at = CASE WHEN $3 = 'running' THEN coalesce(started_at, now()) ELSE started_at END,
                          finished_at = CASE WHEN $3 IN ('succeeded', 'failed', 'cancelled') THEN now() ELSE finished_at END
           WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        run.id as RunId,
        to.as_str(),
        message,
    )
    .execute(&mut **tx)
    .await?;
    let mut event = NewEvent::run(&format!("run.{to}"), to);
    event.message = message.map(str::to_owned);
    events::append(tx, tenant, run.id, &event).await
}

/// What a run produced beyond its steps (hyperparameter searches' results),
/// as an object; `None` when there is no such run.
pub async fn outputs(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<serde_json::Value>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT outputs AS "outputs: Json<serde_json::Value>" FROM runs WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|o| o.map(|j| j.0))
}

/// The plan a run executes, once the scheduler made it.
pub async fn plan(
    tx: &mut Tx,
    tenant: TenantId,
    id: RunId,
) -> Result<Option<Option<serde_json::Value>>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT plan AS "plan: Json<serde_json::Value>" FROM runs WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        id as RunId,
    )
    .fetch_optional(&mut **tx)
    .await
    .map(|o| o.map(|p| p.map(|j| j.0)))
}
