//! Schedules of workflows. A schedule's identity is its slug within its
//! workflow; edits change it in place. The slug `default` (source
//! `workflow`) is the IR's `schedule:`, kept in step with the workflow's
//! versions by [`sync_default`]. Tickers fire them (see [`crate::ticks`]).

use crate::runs::Parameters;
use crate::workflows::Labels;
use crate::{ScheduleId, TenantId, Tx, WorkflowId};
use chrono::{DateTime, Utc};
use couler_schedule::due::{self, Catchup, Policy};
use couler_schedule::{Calendar, Instant};
use sqlx::types::Json;

/// The slug of the schedule a workflow's IR declares.
pub const DEFAULT_SLUG: &str = "default";
/// The constraint a second schedule of the same slug violates.
pub const SLUG_TAKEN: &str = "schedules_slug";

/// The idempotency key of the run of a schedule's tick: the schedule's
/// identity (workflow and slug, never its row id) and the instant in UTC.
pub fn run_key(workflow: WorkflowId, slug: &str, nominal: Instant) -> String {
    format!("sched:{workflow}:{slug}:{}", rfc3339(nominal))
}

/// An instant as RFC 3339 in UTC, to the second (`2026-03-08T07:00:00Z`).
pub fn rfc3339(t: Instant) -> String {
    t.format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// What to do with runs missed while the control plane was down.
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
pub enum CatchupPolicy {
    /// Fire nothing missed (a tick at most a minute late still fires).
    Skip,
    /// Fire the most recent missed tick if it is within the window.
    #[default]
    Latest,
    /// Fire every missed tick within the window, at most `max_catchup`.
    All,
}

impl From<CatchupPolicy> for Catchup {
    fn from(c: CatchupPolicy) -> Catchup {
        match c {
            CatchupPolicy::Skip => Catchup::Skip,
            CatchupPolicy::Latest => Catchup::Latest,
            CatchupPolicy::All => Catchup::All,
        }
    }
}

/// What a tick does while the schedule's previous run is still active.
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
pub enum Overlap {
    /// Skip the tick (recorded as `skipped_overlap`; not deferred).
    #[default]
    Skip,
    /// Start another run anyway.
    Allow,
    /// Cancel the active runs, then start the new one.
    CancelOther,
}

/// Everything about a schedule a client sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    pub crons: Vec<String>,
    pub timezone: String,
    pub workflow_version: Option<i32>,
    pub parameters: Parameters,
    pub labels: Labels,
    pub priority: i32,
    pub catchup: CatchupPolicy,
    pub catchup_window_secs: i32,
    pub max_catchup: i32,
    pub overlap: Overlap,
    pub jitter_secs: i32,
    pub start_at: Option<DateTime<Utc>>,
    pub end_at: Option<DateTime<Utc>>,
}

impl Settings {
    /// Settings with every default and these crons (in UTC).
    pub fn new(crons: Vec<String>) -> Settings {
        Settings {
            crons,
            timezone: couler_schedule::UTC.to_owned(),
            workflow_version: None,
            parameters: Parameters::new(),
            labels: Labels::new(),
            priority: 0,
            catchup: CatchupPolicy::Latest,
            catchup_window_secs: 3600,
            max_catchup: 10,
            overlap: Overlap::Skip,
            jitter_secs: 0,
            start_at: None,
            end_at: None,
        }
    }

    pub fn calendar(&self) -> Result<Calendar, Vec<couler_schedule::Problem>> {
        Calendar::new(&self.crons, &self.timezone)
    }

    pub fn policy(&self) -> Policy {
        Policy {
            catchup: self.catchup.into(),
            window: chrono::Duration::seconds(self.catchup_window_secs.into()),
            max_catchup: self.max_catchup.max(1) as usize,
            jitter: chrono::Duration::seconds(self.jitter_secs.into()),
            start_at: self.start_at,
            end_at: self.end_at,
            ..Policy::default()
        }
    }

    /// The first tick of a schedule (re)starting at `from`, and when it is
    /// due. A calendar that no longer parses never fires.
    pub fn timing(&self, id: ScheduleId, from: Instant) -> (Option<Instant>, Option<Instant>) {
        let Ok(calendar) = self.calendar() else {
            return (None, None);
        };
        let policy = self.policy();
        let next = due::first(&calendar, &policy, from);
        (next, next.map(|t| due::due_at(id.0.as_bytes(), t, &policy)))
    }

    fn calendar_differs(&self, other: &Settings) -> bool {
        (
            &self.crons,
            &self.timezone,
            self.jitter_secs,
            self.start_at,
            self.end_at,
        ) != (
            &other.crons,
            &other.timezone,
            other.jitter_secs,
            other.start_at,
            other.end_at,
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Schedule {
    pub tenant_id: TenantId,
    pub id: ScheduleId,
    pub workflow_id: WorkflowId,
    pub slug: String,
    /// `workflow` (the IR's) or `api`.
    pub source: String,
    pub crons: Vec<String>,
    pub timezone: String,
    pub workflow_version: Option<i32>,
    pub parameters: Json<Parameters>,
    pub labels: Json<Labels>,
    pub priority: i32,
    pub catchup: CatchupPolicy,
    pub catchup_window_secs: i32,
    pub max_catchup: i32,
    pub overlap: Overlap,
    pub jitter_secs: i32,
    pub start_at: Option<DateTime<Utc>>,
    pub end_at: Option<DateTime<Utc>>,
    pub paused_at: Option<DateTime<Utc>>,
    pub paused_by: Option<String>,
    pub paused_reason: Option<String>,
    pub last_tick: Option<DateTime<Utc>>,
    pub next_tick: Option<DateTime<Utc>>,
    pub due_at: Option<DateTime<Utc>>,
    pub generation: i64,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl Schedule {
    pub fn settings(&self) -> Settings {
        Settings {
            crons: self.crons.clone(),
            timezone: self.timezone.clone(),
            workflow_version: self.workflow_version,
            parameters: self.parameters.0.clone(),
            labels: self.labels.0.clone(),
            priority: self.priority,
            catchup: self.catchup,
            catchup_window_secs: self.catchup_window_secs,
            max_catchup: self.max_catchup,
            overlap: self.overlap,
            jitter_secs: self.jitter_secs,
            start_at: self.start_at,
            end_at: self.end_at,
        }
    }
}

async fn db_now(tx: &mut Tx) -> Result<Instant, sqlx::Error> {
    sqlx::query_scalar!(r#"SELECT now() AS "now!""#)
        .fetch_one(&mut **tx)
        .await
}

/// Creates a schedule; its first tick is the first instant after now.
pub async fn create(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    slug: &str,
    source: &str,
    settings: &Settings,
    created_by: &str,
) -> Result<Schedule, sqlx::Error> {
    let id = ScheduleId::new();
    let (next, due) = settings.timing(id, db_now(tx).await?);
    let s = settings;
    sqlx::query_as!(
        Schedule,
        r#"INSERT INTO schedules (tenant_id, id, workflow_id, slug, source, crons, timezone, workflow_version, parameters,
                                  labels, priority, catchup, catchup_window_secs, max_catchup, overlap, jitter_secs,
                                  start_at, end_at, next_tick, due_at, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                     slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                     labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                     max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                     paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at"#,
        tenant as TenantId,
        id as ScheduleId,
        workflow as WorkflowId,
        slug,
        source,
        &s.crons,
        s.timezone,
        s.workflow_version,
        Json(&s.parameters) as _,
        Json(&s.labels) as _,
        s.priority,
        s.catchup as CatchupPolicy,
        s.catchup_window_secs,
        s.max_catchup,
        s.overlap as Overlap,
        s.jitter_secs,
        s.start_at,
        s.end_at,
        next,
        due,
        created_by,
    )
    .fetch_one(&mut **tx)
    .await
}

/// A workflow's schedules, by slug.
pub async fn list(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
) -> Result<Vec<Schedule>, sqlx::Error> {
    sqlx::query_as!(
        Schedule,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                  slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                  labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                  max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                  paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at
           FROM schedules WHERE tenant_id = $1 AND workflow_id = $2 ORDER BY slug"#,
        tenant as TenantId,
        workflow as WorkflowId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// A schedule by slug.
pub async fn get(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    slug: &str,
) -> Result<Option<Schedule>, sqlx::Error> {
    sqlx::query_as!(
        Schedule,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                  slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                  labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                  max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                  paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at
           FROM schedules WHERE tenant_id = $1 AND workflow_id = $2 AND slug = $3"#,
        tenant as TenantId,
        workflow as WorkflowId,
        slug,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// A schedule by id.
pub async fn get_by_id(
    tx: &mut Tx,
    tenant: TenantId,
    id: ScheduleId,
) -> Result<Option<Schedule>, sqlx::Error> {
    sqlx::query_as!(
        Schedule,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                  slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                  labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                  max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                  paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at
           FROM schedules WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        id as ScheduleId,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// A schedule by slug, locked for a change.
pub async fn get_for_update(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    slug: &str,
) -> Result<Option<Schedule>, sqlx::Error> {
    sqlx::query_as!(
        Schedule,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                  slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                  labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                  max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                  paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at
           FROM schedules WHERE tenant_id = $1 AND workflow_id = $2 AND slug = $3 FOR UPDATE"#,
        tenant as TenantId,
        workflow as WorkflowId,
        slug,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Replaces a schedule's settings in place (same id, same slug). When what
/// decides its ticks changed, the next tick is recomputed from now (never
/// from the past: an edit does not backfill) and `generation` bumped.
pub async fn update(
    tx: &mut Tx,
    current: &Schedule,
    settings: &Settings,
) -> Result<Schedule, sqlx::Error> {
    let (next, due, bump) = if current.settings().calendar_differs(settings) {
        let mut from = db_now(tx).await?;
        if let Some(last) = current.last_tick {
            from = from.max(last + chrono::Duration::microseconds(1));
        }
        let (next, due) = settings.timing(current.id, from);
        (next, due, 1)
    } else {
        (current.next_tick, current.due_at, 0)
    };
    let s = settings;
    sqlx::query_as!(
        Schedule,
        r#"UPDATE schedules SET crons = $3, timezone = $4, workflow_version = $5, parameters = $6, labels = $7,
                                priority = $8, catchup = $9, catchup_window_secs = $10, max_catchup = $11, overlap = $12,
                                jitter_secs = $13, start_at = $14, end_at = $15, next_tick = $16, due_at = $17,
                                generation = generation + $18, updated_at = now()
           WHERE tenant_id = $1 AND id = $2
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                     slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                     labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                     max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                     paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at"#,
        current.tenant_id as TenantId,
        current.id as ScheduleId,
        &s.crons,
        s.timezone,
        s.workflow_version,
        Json(&s.parameters) as _,
        Json(&s.labels) as _,
        s.priority,
        s.catchup as CatchupPolicy,
        s.catchup_window_secs,
        s.max_catchup,
        s.overlap as Overlap,
        s.jitter_secs,
        s.start_at,
        s.end_at,
        next,
        due,
        bump as i64,
    )
    .fetch_one(&mut **tx)
    .await
}

/// Pauses a schedule (`Some(by, reason)`) or resumes it. A resumed schedule
/// starts from now: the paused time is never caught up (a backfill can).
pub async fn set_paused(
    tx: &mut Tx,
    current: &Schedule,
    pause: Option<(&str, Option<&str>)>,
) -> Result<Schedule, sqlx::Error> {
    let (next, due) = match pause {
        Some(_) => (current.next_tick, current.due_at),
        None => current.settings().timing(current.id, db_now(tx).await?),
    };
    let (by, reason) = pause.unzip();
    sqlx::query_as!(
        Schedule,
        r#"UPDATE schedules SET paused_at = CASE WHEN $3 THEN coalesce(paused_at, now()) END,
                                paused_by = $4, paused_reason = $5, next_tick = $6, due_at = $7, updated_at = now()
           WHERE tenant_id = $1 AND id = $2
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: ScheduleId", workflow_id AS "workflow_id: WorkflowId",
                     slug, source, crons, timezone, workflow_version, parameters AS "parameters: Json<Parameters>",
                     labels AS "labels: Json<Labels>", priority, catchup AS "catchup: CatchupPolicy", catchup_window_secs,
                     max_catchup, overlap AS "overlap: Overlap", jitter_secs, start_at, end_at, paused_at, paused_by,
                     paused_reason, last_tick, next_tick, due_at, generation, created_by, created_at, updated_at"#,
        current.tenant_id as TenantId,
        current.id as ScheduleId,
        pause.is_some(),
        by,
        reason.flatten(),
        next,
        due,
    )
    .fetch_one(&mut **tx)
    .await
}

/// Deletes a schedule; its tick history stays (by slug).
pub async fn delete(tx: &mut Tx, tenant: TenantId, id: ScheduleId) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "DELETE FROM schedules WHERE tenant_id = $1 AND id = $2",
        tenant as TenantId,
        id as ScheduleId,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Deletes every schedule of a workflow (it was deleted).
pub async fn delete_all(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "DELETE FROM schedules WHERE tenant_id = $1 AND workflow_id = $2",
        tenant as TenantId,
        workflow as WorkflowId,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Keeps the `default` schedule in step with a new version's IR: created
/// when the IR gains a `schedule:`, changed in place when it changes
/// (identity, pause state and history kept), deleted when it is removed.
/// Schedules made through the API are never touched.
pub async fn sync_default(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: WorkflowId,
    declared: Option<&couler_ir::Schedule>,
    author: &str,
) -> Result<(), sqlx::Error> {
    let current = get_for_update(tx, tenant, workflow, DEFAULT_SLUG).await?;
    if current.as_ref().is_some_and(|c| c.source != "workflow") {
        return Ok(());
    }
    match (current, declared) {
        (None, None) => Ok(()),
        (Some(c), None) => delete(tx, tenant, c.id).await.map(|_| ()),
        (None, Some(d)) => {
            let settings = declared_settings(Settings::new(Vec::new()), d);
            create(
                tx,
                tenant,
                workflow,
                DEFAULT_SLUG,
                "workflow",
                &settings,
                author,
            )
            .await
            .map(|_| ())
        }
        (Some(c), Some(d)) => {
            let settings = declared_settings(c.settings(), d);
            if settings != c.settings() {
                update(tx, &c, &settings).await?;
            }
            Ok(())
        }
    }
}

fn declared_settings(mut settings: Settings, declared: &couler_ir::Schedule) -> Settings {
    settings.crons = vec![declared.cron.clone()];
    settings.timezone = declared
        .timezone
        .clone()
        .unwrap_or_else(|| couler_schedule::UTC.to_owned());
    settings
}

/// The smallest gap a tenant's schedules may tick at, in seconds.
pub async fn min_interval_secs(tx: &mut Tx, tenant: TenantId) -> Result<i32, sqlx::Error> {
    sqlx::query_scalar!(
        "SELECT min_schedule_interval_secs FROM tenants WHERE id = $1",
        tenant as TenantId,
    )
    .fetch_one(&mut **tx)
    .await
}
