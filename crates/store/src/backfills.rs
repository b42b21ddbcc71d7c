//! Backfills: runs of a schedule for the instants of a past range, made
//! by the tickers at most `max_active_runs` at a time. Its items are fixed
//! when it is created (one per instant, the primary key), so releasing one
//! twice is impossible.

use crate::status::RunStatus;
use crate::{BackfillId, RunId, ScheduleId, TenantId, Tx, WorkflowId};
use chrono::{DateTime, Utc};
use couler_schedule::Instant;

/// Which of the range's instants a backfill runs.
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
#[serde(rename_all = "snake_case")]
#[sqlx(type_name = "text", rename_all = "snake_case")]
pub enum Reprocess {
    /// Instants the schedule never made a run for.
    #[default]
    Missing,
    /// Those, and instants whose latest run failed or was cancelled.
    Failed,
    /// Every instant.
    All,
}

impl Reprocess {
    /// Whether an instant whose latest run (if any) is `existing` is run.
    pub fn takes(self, existing: Option<RunStatus>) -> bool {
        match (self, existing) {
            (_, None) | (Reprocess::All, _) => true,
            (Reprocess::Failed, Some(s)) => matches!(s, RunStatus::Failed | RunStatus::Cancelled),
            (Reprocess::Missing, Some(_)) => false,
        }
    }
}

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
#[schema(as = BackfillState)]
pub enum State {
    Running,
    /// Every item was released.
    Done,
    Cancelled,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Backfill {
    pub tenant_id: TenantId,
    pub id: BackfillId,
    pub schedule_id: ScheduleId,
    pub from_at: DateTime<Utc>,
    pub to_at: DateTime<Utc>,
    pub reprocess: Reprocess,
    pub max_active_runs: i32,
    pub state: State,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub finished_at: Option<DateTime<Utc>>,
}

/// How far a backfill got.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Counts {
    pub items: i64,
    /// Not released yet.
    pub pending: i64,
    /// Released, and the run is queued, planning or running.
    pub active: i64,
    pub succeeded: i64,
    /// Failed or cancelled.
    pub failed: i64,
}

/// The latest run a schedule (its ticks or its backfills) made for each
/// instant in `[from, to)`.
pub async fn existing_runs(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    schedule: ScheduleId,
    from: Instant,
    to: Instant,
) -> Result<Vec<(Instant, RunStatus)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT DISTINCT ON (scheduled_for) scheduled_for AS "at!", status AS "status: RunStatus"
           FROM runs
           WHERE tenant_id = $1 AND workflow_id = $2 AND scheduled_for >= $4 AND scheduled_for < $5
             AND (trigger_id = $3 OR trigger_id IN (SELECT id FROM backfills WHERE tenant_id = $1 AND schedule_id = $3))
           ORDER BY scheduled_for, created_at DESC"#,
        tenant as TenantId,
        workflow as WorkflowId,
        schedule as ScheduleId,
        from,
        to,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|r| (r.at, r.status)).collect())
}

/// A running backfill of the schedule whose range overlaps `[from, to)`.
pub async fn overlapping(
    tx: &mut Tx,
    tenant: TenantId,
    schedule: ScheduleId,
    from: Instant,
    to: Instant,
) -> Result<Option<BackfillId>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT id AS "id: BackfillId" FROM backfills
           WHERE tenant_id = $1 AND schedule_id = $2 AND state = 'running' AND from_at < $4 AND to_at > $3
           LIMIT 1"#,
        tenant as TenantId,
        schedule as ScheduleId,
        from,
        to,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Creates a backfill with its items (instants to run, in order).
#[allow(clippy::too_many_arguments)]
pub async fn create(
    tx: &mut Tx,
    tenant: TenantId,
    schedule: ScheduleId,
    range: (Instant, Instant),
    reprocess: Reprocess,
    max_active_runs: i32,
    items: &[Instant],
    created_by: &str,
) -> Result<Backfill, sqlx::Error> {
    let id = BackfillId::new();
    let done = items.is_empty();
    let backfill = sqlx::query_as!(
        Backfill,
        r#"INSERT INTO backfills (tenant_id, id, schedule_id, from_at, to_at, reprocess, max_active_runs, state,
                                  created_by, finished_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, CASE WHEN $8 THEN 'done' ELSE 'running' END, $9,
                   CASE WHEN $8 THEN now() END)
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: BackfillId", schedule_id AS "schedule_id: ScheduleId",
                     from_at, to_at, reprocess AS "reprocess: Reprocess", max_active_runs, state AS "state: State",
                     created_by, created_at, updated_at, finished_at"#,
        tenant as TenantId,
        id as BackfillId,
        schedule as ScheduleId,
        range.0,
        range.1,
        reprocess as Reprocess,
        max_active_runs,
        done,
        created_by,
    )
    .fetch_one(&mut **tx)
    .await?;
    sqlx::query!(
        r#"INSERT INTO backfill_items (tenant_id, backfill_id, nominal_at)
           SELECT $1, $2, unnest($3::timestamptz[])"#,
        tenant as TenantId,
        id as BackfillId,
        items,
    )
    .execute(&mut **tx)
    .await?;
    Ok(backfill)
}

pub async fn get(
    tx: &mut Tx,
    tenant: TenantId,
    schedule: ScheduleId,
    id: BackfillId,
) -> Result<Option<Backfill>, sqlx::Error> {
    sqlx::query_as!(
        Backfill,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: BackfillId", schedule_id AS "schedule_id: ScheduleId",
                  from_at, to_at, reprocess AS "reprocess: Reprocess", max_active_runs, state AS "state: State",
                  created_by, created_at, updated_at, finished_at
           FROM backfills WHERE tenant_id = $1 AND schedule_id = $2 AND id = $3"#,
        tenant as TenantId,
        schedule as ScheduleId,
        id as BackfillId,
    )
    .fetch_optional(&mut **tx)
    .await
}

pub async fn counts(tx: &mut Tx, tenant: TenantId, id: BackfillId) -> Result<Counts, sqlx::Error> {
    let r = sqlx::query!(
        r#"SELECT count(*) AS "items!",
                  count(*) FILTER (WHERE i.released_at IS NULL) AS "pending!",
                  count(*) FILTER (WHERE r.status IN ('queued', 'planning', 'running')) AS "active!",
                  count(*) FILTER (WHERE r.status = 'succeeded') AS "succeeded!",
                  count(*) FILTER (WHERE r.status IN ('failed', 'cancelled')) AS "failed!"
           FROM backfill_items i
           LEFT JOIN runs r ON r.tenant_id = i.tenant_id AND r.id = i.run_id
           WHERE i.tenant_id = $1 AND i.backfill_id = $2"#,
        tenant as TenantId,
        id as BackfillId,
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(Counts {
        items: r.items,
        pending: r.pending,
        active: r.active,
        succeeded: r.succeeded,
        failed: r.failed,
    })
}

/// Stops releasing items; runs already made go on. False when it was not
/// running.
pub async fn cancel(tx: &mut Tx, tenant: TenantId, id: BackfillId) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE backfills SET state = 'cancelled', finished_at = coalesce(finished_at, now()), updated_at = now()
           WHERE tenant_id = $1 AND id = $2 AND state = 'running'"#,
        tenant as TenantId,
        id as BackfillId,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// A running backfill a ticker holds, with its schedule's workflow and how
/// many of its runs are active.
#[derive(Debug, Clone)]
pub struct Releasing {
    pub backfill: Backfill,
    pub workflow_id: WorkflowId,
    pub active: i64,
}

/// Claims running backfills of live workflows that other tickers do not
/// hold. Platform transaction.
pub async fn claim_running(tx: &mut Tx, limit: i64) -> Result<Vec<Releasing>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT b.tenant_id AS "tenant_id: TenantId", b.id AS "id: BackfillId", b.schedule_id AS "schedule_id: ScheduleId",
                  b.from_at, b.to_at, b.reprocess AS "reprocess: Reprocess", b.max_active_runs, b.state AS "state: State",
                  b.created_by, b.created_at, b.updated_at, b.finished_at, s.workflow_id AS "workflow_id: WorkflowId",
                  (SELECT count(*) FROM runs r
                   WHERE r.tenant_id = b.tenant_id AND r.trigger_id = b.id
                     AND r.status IN ('queued', 'planning', 'running')) AS "active!"
           FROM backfills b
           JOIN schedules s ON s.tenant_id = b.tenant_id AND s.id = b.schedule_id
           JOIN workflows w ON w.tenant_id = s.tenant_id AND w.id = s.workflow_id AND w.deleted_at IS NULL
           WHERE b.state = 'running'
           ORDER BY b.created_at
           LIMIT $1
           FOR UPDATE OF b SKIP LOCKED"#,
        limit,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Releasing {
            workflow_id: r.workflow_id,
            active: r.active,
            backfill: Backfill {
                tenant_id: r.tenant_id,
                id: r.id,
                schedule_id: r.schedule_id,
                from_at: r.from_at,
                to_at: r.to_at,
                reprocess: r.reprocess,
                max_active_runs: r.max_active_runs,
                state: r.state,
                created_by: r.created_by,
                created_at: r.created_at,
                updated_at: r.updated_at,
                finished_at: r.finished_at,
            },
        })
        .collect())
}

/// The next `n` unreleased instants of a backfill, in order.
pub async fn pending(
    tx: &mut Tx,
    backfill: &Backfill,
    n: i64,
) -> Result<Vec<Instant>, sqlx::Error> {
    sqlx::query_scalar!(
        r#"SELECT nominal_at FROM backfill_items
           WHERE tenant_id = $1 AND backfill_id = $2 AND released_at IS NULL
           ORDER BY nominal_at LIMIT $3"#,
        backfill.tenant_id as TenantId,
        backfill.id as BackfillId,
        n,
    )
    .fetch_all(&mut **tx)
    .await
}

/// Marks an item released, with its run (none: it could not be made).
pub async fn release(
    tx: &mut Tx,
    backfill: &Backfill,
    nominal: Instant,
    run: Option<RunId>,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"UPDATE backfill_items SET run_id = $4, released_at = now()
           WHERE tenant_id = $1 AND backfill_id = $2 AND nominal_at = $3"#,
        backfill.tenant_id as TenantId,
        backfill.id as BackfillId,
        nominal,
        run.map(|r| r.0),
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Marks a backfill done once nothing is left to release.
pub async fn finish_if_released(tx: &mut Tx, backfill: &Backfill) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE backfills SET state = 'done', finished_at = now(), updated_at = now()
           WHERE tenant_id = $1 AND id = $2 AND state = 'running'
             AND NOT EXISTS (SELECT 1 FROM backfill_items
                             WHERE tenant_id = $1 AND backfill_id = $2 AND released_at IS NULL)"#,
        backfill.tenant_id as TenantId,
        backfill.id as BackfillId,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}
