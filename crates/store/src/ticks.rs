//! Ticks: each schedule's history (fired, skipped and why), and what a
//! ticker writes in the one transaction that handles a due schedule. The
//! history is kept by workflow and slug, so that a schedule deleted and
//! made again keeps it, and its primary key refuses a second record of
//! the same instant.

use crate::schedules::{CatchupPolicy, Overlap, Schedule};
use crate::workflows::Labels;
use crate::{RunId, ScheduleId, TenantId, Tx, WorkflowId, runs::Parameters};
use chrono::{DateTime, Utc};
use couler_schedule::Instant;
use sqlx::types::Json;

/// What became of a tick.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    sqlx::Type,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
#[schema(as = TickOutcome)]
pub enum Outcome {
    /// A run was created.
    Fired,
    /// The previous run was still active (overlap `skip`).
    SkippedOverlap,
    /// Missed while the control plane was down, outside the catch-up
    /// policy; one record stands for a range (see `detail`).
    SkippedMissed,
    /// The tenant's queue was full.
    RejectedQuota,
    /// The run could not be made (the workflow's parameters changed, …).
    Failed,
}

/// Whether a tick was handled on time.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    serde::Serialize,
    serde::Deserialize,
    sqlx::Type,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum TickKind {
    Scheduled,
    /// Handled late, after downtime.
    Catchup,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub nominal_at: DateTime<Utc>,
    pub kind: TickKind,
    pub outcome: Outcome,
    pub run_id: Option<RunId>,
    pub detail: Option<String>,
    pub created_at: DateTime<Utc>,
}

/// A schedule's ticks, newest first, before `before` when given.
pub async fn history(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    slug: &str,
    before: Option<Instant>,
    limit: i64,
) -> Result<Vec<Tick>, sqlx::Error> {
    sqlx::query_as!(
        Tick,
        r#"SELECT nominal_at, kind AS "kind: TickKind", outcome AS "outcome: Outcome", run_id AS "run_id: RunId",
                  detail, created_at
           FROM schedule_ticks
           WHERE tenant_id = $1 AND workflow_id = $2 AND slug = $3 AND ($4::timestamptz IS NULL OR nominal_at < $4)
           ORDER BY nominal_at DESC
           LIMIT $5"#,
        tenant as TenantId,
        workflow as WorkflowId,
        slug,
        before,
        limit,
    )
    .fetch_all(&mut **tx)
    .await
}

/// A due schedule a ticker holds, with the database's clock.
#[derive(Debug, Clone)]
pub struct Due {
    pub schedule: Schedule,
    pub now: Instant,
    pub max_queued_runs: i32,
}

/// Claims up to `limit` due schedules of live workflows, oldest due first,
/// skipping those another ticker holds. Platform transaction.
pub async fn claim_due(tx: &mut Tx, limit: i64) -> Result<Vec<Due>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT s.tenant_id AS "tenant_id: TenantId", s.id AS "id: ScheduleId", s.workflow_id AS "workflow_id: WorkflowId",
                  s.slug, s.source, s.crons, s.timezone, s.workflow_version, s.parameters AS "parameters: Json<Parameters>",
                  s.labels AS "labels: Json<Labels>", s.priority, s.catchup AS "catchup: CatchupPolicy",
                  s.catchup_window_secs, s.max_catchup, s.overlap AS "overlap: Overlap", s.jitter_secs, s.start_at,
                  s.end_at, s.paused_at, s.paused_by, s.paused_reason, s.last_tick, s.next_tick, s.due_at, s.generation,
                  s.created_by, s.created_at, s.updated_at, now() AS "now!", t.max_queued_runs
           FROM schedules s
           JOIN workflows w ON w.tenant_id = s.tenant_id AND w.id = s.workflow_id AND w.deleted_at IS NULL
           JOIN tenants t ON t.id = s.tenant_id
           WHERE s.paused_at IS NULL AND s.due_at <= now()
           ORDER BY s.due_at
           LIMIT $1
           FOR UPDATE OF s SKIP LOCKED"#,
        limit,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Due {
            now: r.now,
            max_queued_runs: r.max_queued_runs,
            schedule: Schedule {
                tenant_id: r.tenant_id,
                id: r.id,
                workflow_id: r.workflow_id,
                slug: r.slug,
                source: r.source,
                crons: r.crons,
                timezone: r.timezone,
                workflow_version: r.workflow_version,
                parameters: r.parameters,
                labels: r.labels,
                priority: r.priority,
                catchup: r.catchup,
                catchup_window_secs: r.catchup_window_secs,
                max_catchup: r.max_catchup,
                overlap: r.overlap,
                jitter_secs: r.jitter_secs,
                start_at: r.start_at,
                end_at: r.end_at,
                paused_at: r.paused_at,
                paused_by: r.paused_by,
                paused_reason: r.paused_reason,
                last_tick: r.last_tick,
                next_tick: r.next_tick,
                due_at: r.due_at,
                generation: r.generation,
                created_by: r.created_by,
                created_at: r.created_at,
                updated_at: r.updated_at,
            },
        })
        .collect())
}

/// Records a tick; false when the instant was recorded before (handled).
pub async fn record(
    tx: &mut Tx,
    schedule: &Schedule,
    nominal: Instant,
    kind: TickKind,
    outcome: Outcome,
    detail: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"INSERT INTO schedule_ticks (tenant_id, workflow_id, slug, nominal_at, schedule_id, kind, outcome, detail)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT DO NOTHING"#,
        schedule.tenant_id as TenantId,
        schedule.workflow_id as WorkflowId,
        schedule.slug,
        nominal,
        schedule.id as ScheduleId,
        kind as TickKind,
        outcome as Outcome,
        detail,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets what became of a recorded tick.
pub async fn resolve(
    tx: &mut Tx,
    schedule: &Schedule,
    nominal: Instant,
    outcome: Outcome,
    run: Option<RunId>,
    detail: Option<&str>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE schedule_ticks SET outcome = $5, run_id = $6, detail = $7
           WHERE tenant_id = $1 AND workflow_id = $2 AND slug = $3 AND nominal_at = $4"#,
        schedule.tenant_id as TenantId,
        schedule.workflow_id as WorkflowId,
        schedule.slug,
        nominal,
        outcome as Outcome,
        run.map(|r| r.0),
        detail,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// The runs a trigger (a schedule or a backfill) started that are still
/// queued, planning or running.
pub async fn active_runs(
    tx: &mut Tx,
    tenant: TenantId,
    trigger: uuid::Uuid,
) -> Result<Vec<RunId>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT id AS "id: RunId" FROM runs
           WHERE tenant_id = $1 AND trigger_id = $2 AND status IN ('queued', 'planning', 'running')
           ORDER BY created_at"#,
        tenant as TenantId,
        trigger,
    )
    .fetch_all(&mut **tx)
    .await
}

/// Moves a schedule past the ticks a pass handled.
pub async fn advance(
    tx: &mut Tx,
    schedule: &Schedule,
    last: Option<Instant>,
    next: Option<Instant>,
    due: Option<Instant>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE schedules SET last_tick = coalesce($3, last_tick), next_tick = $4, due_at = $5, updated_at = now()
           WHERE tenant_id = $1 AND id = $2"#,
        schedule.tenant_id as TenantId,
        schedule.id as ScheduleId,
        last,
        next,
        due,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Seconds until the earliest unpaused schedule is due (negative: overdue);
/// `None` when none is. Platform transaction.
pub async fn seconds_until_due(tx: &mut Tx) -> Result<Option<f64>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT extract(epoch FROM min(due_at) - now())::float8 AS secs
           FROM schedules WHERE paused_at IS NULL AND due_at IS NOT NULL"#
    )
    .fetch_one(&mut **tx)
    .await
}
