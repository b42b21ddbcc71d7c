//! Step logs (`step_logs`, one row per run attempt and step attempt): the
//! log a scheduler stores when a step ends, and the live log it appends to
//! while a reader watches the running step. Readers ask for the live log
//! with a notification on [`LOG_WATCH_CHANNEL`]; a step nobody watches has
//! no row until it ends.

use crate::status::StepStatus;
use crate::{RunId, TenantId, Tx};

/// Channel readers of a running step's log notify, so that the scheduler
/// driving the run tails that step for a while (payload: see [`Watch`]).
pub const LOG_WATCH_CHANNEL: &str = "couler_log_watch";

/// A request to tail one step's log: `<tenant-uuid> <run-uuid> <step>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Watch {
    pub tenant: TenantId,
    pub run: RunId,
    pub step: String,
}

impl Watch {
    pub fn payload(&self) -> String {
        format!("{} {} {}", self.tenant.0, self.run.0, self.step)
    }

    pub fn parse(payload: &str) -> Option<Watch> {
        let mut parts = payload.splitn(3, ' ');
        let tenant = uuid::Uuid::parse_str(parts.next()?).ok()?;
        let run = uuid::Uuid::parse_str(parts.next()?).ok()?;
        let step = parts.next().filter(|s| !s.is_empty())?;
        Some(Watch {
            tenant: TenantId(tenant),
            run: RunId(run),
            step: step.to_owned(),
        })
    }
}

/// Asks (on commit) whichever scheduler drives the run to tail the step.
pub async fn watch(tx: &mut Tx, watch: &Watch) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"SELECT 1 AS "one!" FROM pg_notify($1, $2)"#,
        LOG_WATCH_CHANNEL,
        watch.payload(),
    )
    .fetch_one(&mut **tx)
    .await?;
    Ok(())
}

/// What a reader sees of one step's log from a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogRead {
    /// The step's status in the run; none: the run has no such step.
    pub status: Option<StepStatus>,
    /// Whether the step can still write the log read: pending or running
    /// (or not started, in a run that has not ended and names it), and the
    /// run attempt read is the current one.
    pub live: bool,
    /// The step attempt the log belongs to (the current one while live).
    pub attempt: Option<i32>,
    /// The log's length in bytes; none: there is no log (yet).
    pub len: Option<i64>,
    /// The log from the offset on; none when the offset is beyond its end.
    pub rest: Option<Vec<u8>>,
}

/// The log of a step's latest attempt in run attempt `run_attempt` (or the
/// latest run attempt that ran it) from byte `offset` on; while the step
/// runs, only its current attempt's. None when the run does not exist.
pub async fn read(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    step: &str,
    run_attempt: Option<i32>,
    offset: i64,
) -> Result<Option<LogRead>, sqlx::Error> {
    let row = sqlx::query!(
        r#"WITH cur AS (
               SELECT r.attempt AS run_attempt, s.attempt, s.status,
                      ($4::integer IS NULL OR $4 = r.attempt) AND CASE
                          WHEN s.status IS NOT NULL THEN s.status IN ('pending', 'running')
                          -- Not started yet: live while the run may still start it.
                          ELSE r.status IN ('queued', 'planning', 'running') AND EXISTS (
                              SELECT 1 FROM jsonb_array_elements(
                                  coalesce(coalesce(r.inline_ir, v.ir)->'steps', '[]') || coalesce(coalesce(r.inline_ir, v.ir)->'on_exit', '[]')) e
                              WHERE e->>'name' = regexp_replace($3, '\[\d+\]$', ''))
                      END AS live
               FROM runs r
               LEFT JOIN run_steps s ON s.tenant_id = r.tenant_id AND s.run_id = r.id AND s.name = $3
               LEFT JOIN workflow_versions v
                 ON v.tenant_id = r.tenant_id AND v.workflow_id = r.workflow_id AND v.version = r.workflow_version
               WHERE r.tenant_id = $1 AND r.id = $2
           )
           SELECT cur.status AS "status?: StepStatus", cur.live AS "live!", coalesce(l.attempt, cur.attempt) AS attempt,
                  octet_length(l.content) AS len,
                  CASE WHEN octet_length(l.content) >= $5::bigint THEN substring(convert_to(l.content, 'UTF8') FROM ($5::bigint + 1)::integer) END AS rest
           FROM cur LEFT JOIN LATERAL (
               SELECT content, attempt FROM step_logs l
               WHERE l.tenant_id = $1 AND l.run_id = $2 AND l.step = $3
                 AND ($4::integer IS NULL OR l.run_attempt = $4)
                 AND (NOT cur.live OR cur.attempt IS NULL OR (l.run_attempt, l.attempt) = (cur.run_attempt, cur.attempt))
               ORDER BY l.run_attempt DESC, l.attempt DESC LIMIT 1
           ) l ON true"#,
        tenant as TenantId,
        run as RunId,
        step,
        run_attempt,
        offset,
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| LogRead {
        status: r.status,
        live: r.live,
        attempt: r.attempt,
        len: r.len.map(i64::from),
        rest: r.rest,
    }))
}

/// A step's status and attempt, for a scheduler tailing it.
pub async fn step_state(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    step: &str,
) -> Result<Option<(StepStatus, i32)>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT status AS "status: StepStatus", attempt FROM run_steps
           WHERE tenant_id = $1 AND run_id = $2 AND name = $3"#,
        tenant as TenantId,
        run as RunId,
        step,
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| (r.status, r.attempt)))
}

/// A live log stops growing past this many bytes (the stored log of a
/// finished step is its engine's tail, 1 MiB); a follower then waits for
/// the step's end and gets that.
pub const LIVE_LOG_LIMIT: i32 = 8 << 20;

/// Appends `text` to the live log of step attempt `attempt` in the run's
/// current attempt, while that attempt runs and `owner` holds the run;
/// false otherwise (also once the log reached [`LIVE_LOG_LIMIT`]). The
/// step's row is locked first, so an append never lands after the log its
/// end stores.
pub async fn append(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    owner: &str,
    step: &str,
    attempt: i32,
    text: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"WITH running AS (
               SELECT r.attempt AS run_attempt FROM run_steps s
               JOIN runs r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
               WHERE s.tenant_id = $1 AND s.run_id = $2 AND s.name = $3 AND s.attempt = $4
                 AND s.status = 'running' AND r.lease_owner = $5
               FOR SHARE OF s
           )
           INSERT INTO step_logs AS l (tenant_id, run_id, step, run_attempt, attempt, content)
           SELECT $1, $2, $3, run_attempt, $4, $6 FROM running
           ON CONFLICT (tenant_id, run_id, step, run_attempt, attempt)
           DO UPDATE SET content = l.content || excluded.content
           WHERE octet_length(l.content) < $7"#,
        tenant as TenantId,
        run as RunId,
        step,
        attempt,
        owner,
        text,
        LIVE_LOG_LIMIT,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn watch_payloads_round_trip_with_spaces_in_step_names() {
        let w = Watch {
            tenant: TenantId::new(),
            run: RunId::new(),
            step: "odd step[0]".into(),
        };
        assert_eq!(Watch::parse(&w.payload()), Some(w));
        assert_eq!(Watch::parse("x y z"), None);
        let t = TenantId::new().0;
        assert_eq!(Watch::parse(&format!("{t} {t} ")), None);
    }
}
