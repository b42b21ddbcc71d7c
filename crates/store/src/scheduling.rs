//! What schedulers do with runs: claim them fairly across tenants, hold
//! them under renewable leases, take over runs whose scheduler died, and
//! record plans, step states, logs and outcomes. Writes that change a run
//! are guarded by the lease owner, so a scheduler that lost its lease can
//! never overwrite its successor's work.

use crate::events::{self, NewEvent};
use crate::runs::{Parameters, Run, Step, TriggerKind};
use crate::status::{RunStatus, StepStatus};
use crate::tenants::SplitBudget;
use crate::workflows::Labels;
use crate::{RunId, TenantId, Tx, WorkflowId};
use sqlx::types::Json;
use std::time::Duration;

/// A run a scheduler now holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Claim {
    pub tenant_id: TenantId,
    pub run_id: RunId,
    pub status: RunStatus,
    pub attempt: i32,
    /// Taken over from a scheduler whose lease expired (reconcile, do not restart).
    pub takeover: bool,
}

fn secs(d: Duration) -> f64 {
    d.as_secs_f64()
}

/// Takes over one run whose lease expired (its scheduler died or hung).
pub async fn take_over_expired(
    tx: &mut Tx,
    owner: &str,
    lease: Duration,
) -> Result<Option<Claim>, sqlx::Error> {
    let row = sqlx::query!(
        r#"UPDATE runs SET lease_owner = $1, lease_expires_at = now() + make_interval(secs => $2), updated_at = now()
           WHERE (tenant_id, id) = (
               SELECT tenant_id, id FROM runs
               WHERE status IN ('planning', 'running') AND lease_expires_at < now()
               ORDER BY lease_expires_at
               LIMIT 1
               FOR UPDATE SKIP LOCKED)
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: RunId", status AS "status: RunStatus", attempt"#,
        owner,
        secs(lease),
    )
    .fetch_optional(&mut **tx)
    .await?;
    Ok(row.map(|r| Claim {
        tenant_id: r.tenant_id,
        run_id: r.id,
        status: r.status,
        attempt: r.attempt,
        takeover: true,
    }))
}

/// Claims the next queued run by weighted fair share: the tenant using the
/// smallest fraction of its concurrency quota goes first, then priority,
/// then age. A tenant at its quota is passed over. Claims for one tenant
/// are serialized on its row so replicas cannot overshoot the quota.
pub async fn claim_next(
    tx: &mut Tx,
    owner: &str,
    lease: Duration,
) -> Result<Option<Claim>, sqlx::Error> {
    let candidates = sqlx::query!(
        r#"SELECT t.id AS "tenant_id!: TenantId"
           FROM tenants t
           CROSS JOIN LATERAL (
               SELECT count(*) AS active FROM runs a
               WHERE a.tenant_id = t.id AND a.status IN ('planning', 'running')) u
           CROSS JOIN LATERAL (
               SELECT r.priority, r.queued_at FROM runs r
               WHERE r.tenant_id = t.id AND r.status = 'queued'
               ORDER BY r.priority DESC, r.queued_at
               LIMIT 1) next
           WHERE u.active < t.max_concurrent_runs
           ORDER BY u.active::float8 / t.max_concurrent_runs, next.priority DESC, next.queued_at
           LIMIT 16"#,
    )
    .fetch_all(&mut **tx)
    .await?;
    for candidate in candidates {
        let tenant = candidate.tenant_id;
        // Another scheduler is claiming for this tenant: try the next one.
        let locked = sqlx::query_scalar!(
            r#"SELECT max_concurrent_runs FROM tenants WHERE id = $1 FOR UPDATE SKIP LOCKED"#,
            tenant as TenantId,
        )
        .fetch_optional(&mut **tx)
        .await?;
        let Some(max) = locked else { continue };
        let active = sqlx::query_scalar!(
            r#"SELECT count(*) AS "n!" FROM runs WHERE tenant_id = $1 AND status IN ('planning', 'running')"#,
            tenant as TenantId,
        )
        .fetch_one(&mut **tx)
        .await?;
        if active >= max as i64 {
            continue;
        }
        let claimed = sqlx::query!(
            r#"UPDATE runs SET status = 'planning', lease_owner = $2,
                              lease_expires_at = now() + make_interval(secs => $3), updated_at = now()
               WHERE tenant_id = $1 AND id = (
                   SELECT id FROM runs WHERE tenant_id = $1 AND status = 'queued'
                   ORDER BY priority DESC, queued_at
                   LIMIT 1
                   FOR UPDATE SKIP LOCKED)
               RETURNING id AS "id: RunId", attempt"#,
            tenant as TenantId,
            owner,
            secs(lease),
        )
        .fetch_optional(&mut **tx)
        .await?;
        if let Some(r) = claimed {
            events::append(
                tx,
                tenant,
                r.id,
                &NewEvent::run("run.planning", RunStatus::Planning),
            )
            .await?;
            return Ok(Some(Claim {
                tenant_id: tenant,
                run_id: r.id,
                status: RunStatus::Planning,
                attempt: r.attempt,
                takeover: false,
            }));
        }
    }
    Ok(None)
}

/// A held run, as the lease renewal sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Held {
    pub tenant_id: TenantId,
    pub run_id: RunId,
    pub cancel_requested: bool,
}

/// Extends the leases `owner` holds on `runs`; returns those still held.
/// Only runs a live driver follows are renewed, so a run whose driver gave
/// up lapses and is taken over.
pub async fn renew(
    tx: &mut Tx,
    owner: &str,
    runs: &[(TenantId, RunId)],
    lease: Duration,
) -> Result<Vec<Held>, sqlx::Error> {
    let tenants: Vec<uuid::Uuid> = runs.iter().map(|(t, _)| t.0).collect();
    let ids: Vec<uuid::Uuid> = runs.iter().map(|(_, r)| r.0).collect();
    let rows = sqlx::query!(
        r#"UPDATE runs SET lease_expires_at = now() + make_interval(secs => $2)
           WHERE lease_owner = $1 AND status IN ('planning', 'running')
             AND (tenant_id, id) IN (SELECT * FROM unnest($3::uuid[], $4::uuid[]))
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: RunId", cancel_requested_at IS NOT NULL AS "cancel!""#,
        owner,
        secs(lease),
        &tenants,
        &ids,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| Held {
            tenant_id: r.tenant_id,
            run_id: r.id,
            cancel_requested: r.cancel,
        })
        .collect())
}

/// Hands a run back at once (graceful shutdown): another scheduler may take
/// it over without waiting for the lease to run out.
pub async fn release(
    tx: &mut Tx,
    owner: &str,
    tenant: TenantId,
    run: RunId,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        "UPDATE runs SET lease_expires_at = now() - interval '1 second' WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3",
        tenant as TenantId,
        run as RunId,
        owner,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Everything a scheduler needs to drive a run.
#[derive(Debug, Clone)]
pub struct Driving {
    pub run: Run,
    pub ir: serde_json::Value,
    pub plan: Option<serde_json::Value>,
    pub engine_ref: Option<String>,
    /// The engine the tenant uses.
    pub engine: String,
    /// Whether the tenant shares cache entries with other tenants.
    pub share_cache: bool,
    /// The tenant's default TTL for cache entries.
    pub cache_ttl_secs: Option<i32>,
    /// The tenant's limits of one sub-workflow.
    pub split_budget: SplitBudget,
    /// The network the tenant's steps get on the local engine, where a
    /// platform admin set one.
    pub step_network: Option<String>,
    pub cancel_requested: bool,
    pub trace_context: std::collections::BTreeMap<String, String>,
    pub steps: Vec<Step>,
}

pub async fn load(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
) -> Result<Option<Driving>, sqlx::Error> {
    let row = sqlx::query!(
        r#"SELECT r.tenant_id AS "tenant_id: TenantId", r.id AS "id: RunId", r.workflow_id AS "workflow_id: WorkflowId",
                  r.workflow_version, r.workflow_name, r.ir_hash, r.status AS "status: RunStatus",
                  r.parameters AS "parameters: Json<Parameters>", r.labels AS "labels: Json<Labels>", r.priority, r.attempt,
                  r.message, r.idempotency_key, r.created_by, r.created_at, r.updated_at, r.queued_at, r.started_at,
                  r.finished_at, r.cancel_requested_at, r.trigger_kind AS "trigger_kind: TriggerKind", r.trigger_id,
                  r.scheduled_for,
                  coalesce(r.inline_ir, v.ir) AS "ir!: Json<serde_json::Value>",
                  r.plan AS "plan: Json<serde_json::Value>", r.engine_ref, t.engine, t.share_cache, t.cache_ttl_secs, t.step_network,
                  t.split_budget AS "split_budget: Json<SplitBudget>",
                  r.trace_context AS "trace_context: Json<std::collections::BTreeMap<String, String>>"
           FROM runs r
           JOIN tenants t ON t.id = r.tenant_id
           LEFT JOIN workflow_versions v
             ON v.tenant_id = r.tenant_id AND v.workflow_id = r.workflow_id AND v.version = r.workflow_version
           WHERE r.tenant_id = $1 AND r.id = $2"#,
        tenant as TenantId,
        run as RunId,
    )
    .fetch_optional(&mut **tx)
    .await?;
    let Some(r) = row else { return Ok(None) };
    let steps = sqlx::query!(
        r#"SELECT name, status AS "status: StepStatus", attempt, message, outputs AS "outputs: Json<serde_json::Value>",
                  started_at, finished_at, engine_ref, wall_ms, cpu_ms, max_rss_kb, exit_code
           FROM run_steps WHERE tenant_id = $1 AND run_id = $2"#,
        tenant as TenantId,
        run as RunId,
    )
    .fetch_all(&mut **tx)
    .await?
    .into_iter()
    .map(|s| Step {
        name: s.name,
        status: s.status,
        attempt: s.attempt,
        message: s.message,
        outputs: s.outputs,
        started_at: s.started_at,
        finished_at: s.finished_at,
        engine_ref: s.engine_ref,
        wall_ms: s.wall_ms,
        cpu_ms: s.cpu_ms,
        max_rss_kb: s.max_rss_kb,
        exit_code: s.exit_code,
    })
    .collect();
    let cancel_requested = r.cancel_requested_at.is_some();
    Ok(Some(Driving {
        run: Run {
            tenant_id: r.tenant_id,
            id: r.id,
            workflow_id: r.workflow_id,
            workflow_version: r.workflow_version,
            workflow_name: r.workflow_name,
            ir_hash: r.ir_hash,
            status: r.status,
            parameters: r.parameters,
            labels: r.labels,
            priority: r.priority,
            attempt: r.attempt,
            message: r.message,
            idempotency_key: r.idempotency_key,
            created_by: r.created_by,
            created_at: r.created_at,
            updated_at: r.updated_at,
            queued_at: r.queued_at,
            started_at: r.started_at,
            finished_at: r.finished_at,
            cancel_requested_at: r.cancel_requested_at,
            trigger_kind: r.trigger_kind,
            trigger_id: r.trigger_id,
            scheduled_for: r.scheduled_for,
        },
        ir: r.ir.0,
        plan: r.plan.map(|p| p.0),
        engine_ref: r.engine_ref,
        engine: r.engine,
        share_cache: r.share_cache,
        cache_ttl_secs: r.cache_ttl_secs,
        split_budget: r.split_budget.0,
        step_network: r.step_network,
        cancel_requested,
        trace_context: r.trace_context.0,
        steps,
    }))
}

/// Stores the plan and moves the run from planning to running; false when
/// the lease was lost.
pub async fn start_running(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    owner: &str,
    plan: &serde_json::Value,
    engine: &str,
    restart: &[String],
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE runs SET plan = $4, engine = $5, status = 'running', started_at = coalesce(started_at, now()), updated_at = now()
           WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3 AND status = 'planning'"#,
        tenant as TenantId,
        run as RunId,
        owner,
        Json(plan) as _,
        engine,
    )
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    // A retry's plan may run again steps an earlier attempt finished (an
    // artifact is gone, or was never recorded): their rows start over, so
    // that the new results replace the old ones.
    if !restart.is_empty() {
        sqlx::query!(
            r#"UPDATE run_steps SET status = 'pending', message = NULL, outputs = '{}', started_at = NULL,
                                   finished_at = NULL, updated_at = now()
               WHERE tenant_id = $1 AND run_id = $2 AND name = ANY($3)"#,
            tenant as TenantId,
            run as RunId,
            restart,
        )
        .execute(&mut **tx)
        .await?;
    }
    events::append(
        tx,
        tenant,
        run,
        &NewEvent::run("run.running", RunStatus::Running),
    )
    .await?;
    Ok(true)
}

/// Records the engine's handle for the run.
pub async fn set_engine_ref(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    owner: &str,
    engine_ref: &str,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE runs SET engine_ref = $4 WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3",
        tenant as TenantId,
        run as RunId,
        owner,
        engine_ref,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Ends a run (the caller checked the transition); false when the lease was lost.
pub async fn finish(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    owner: &str,
    to: RunStatus,
    message: Option<&str>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE runs SET status = $4, message = $5, finished_at = now(), updated_at = now(),
                          lease_owner = NULL, lease_expires_at = NULL
           WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3"#,
        tenant as TenantId,
        run as RunId,
        owner,
        to.as_str(),
        message,
    )
    .execute(&mut **tx)
    .await?;
    if done.rows_affected() == 0 {
        return Ok(false);
    }
    let mut event = NewEvent::run(&format!("run.{to}"), to);
    event.message = message.map(str::to_owned);
    events::append(tx, tenant, run, &event).await?;
    Ok(true)
}

/// A step's new state, as the scheduler writes it.
#[derive(Debug, Clone)]
pub struct StepWrite {
    pub name: String,
    pub status: StepStatus,
    pub attempt: i32,
    pub message: Option<String>,
    pub outputs: serde_json::Value,
    pub engine_ref: Option<String>,
    pub wall_ms: Option<i64>,
    pub cpu_ms: Option<i64>,
    pub max_rss_kb: Option<i64>,
    pub exit_code: Option<i32>,
    pub logs: Option<String>,
    /// The step's image and command, digested (resource history).
    pub family: Option<String>,
}

/// Writes step states and their events in one statement each; progress
/// batches skip the fsync wait (the engine can replay them), so call this
/// in its own transaction.
pub async fn write_steps(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    owner: &str,
    steps: &[StepWrite],
) -> Result<bool, sqlx::Error> {
    sqlx::query!("SET LOCAL synchronous_commit TO off")
        .execute(&mut **tx)
        .await?;
    let held = sqlx::query_scalar!(
        r#"SELECT 1 AS "one!" FROM runs WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3 FOR SHARE"#,
        tenant as TenantId,
        run as RunId,
        owner,
    )
    .fetch_optional(&mut **tx)
    .await?;
    if held.is_none() {
        return Ok(false);
    }
    let names: Vec<&str> = steps.iter().map(|s| s.name.as_str()).collect();
    let statuses: Vec<&str> = steps.iter().map(|s| s.status.as_str()).collect();
    let attempts: Vec<i32> = steps.iter().map(|s| s.attempt).collect();
    let messages: Vec<Option<String>> = steps.iter().map(|s| s.message.clone()).collect();
    let outputs: Vec<Json<&serde_json::Value>> = steps.iter().map(|s| Json(&s.outputs)).collect();
    let refs: Vec<Option<String>> = steps.iter().map(|s| s.engine_ref.clone()).collect();
    let walls: Vec<Option<i64>> = steps.iter().map(|s| s.wall_ms).collect();
    let cpus: Vec<Option<i64>> = steps.iter().map(|s| s.cpu_ms).collect();
    let rss: Vec<Option<i64>> = steps.iter().map(|s| s.max_rss_kb).collect();
    let codes: Vec<Option<i32>> = steps.iter().map(|s| s.exit_code).collect();
    let families: Vec<Option<String>> = steps.iter().map(|s| s.family.clone()).collect();
    sqlx::query!(
        r#"WITH input AS (
               SELECT * FROM unnest($3::text[], $4::text[], $5::int[], $6::text[], $7::jsonb[], $8::text[],
                                    $9::bigint[], $10::bigint[], $11::bigint[], $12::int[], $13::text[])
                   WITH ORDINALITY AS i(name, status, attempt, message, outputs, engine_ref, wall_ms, cpu_ms, max_rss_kb, exit_code, family, n)
           ), latest AS (
               -- A step's reports batched together keep only the last, but
               -- one that ran in the batch has started.
               SELECT DISTINCT ON (name) *, bool_or(status = 'running') OVER (PARTITION BY name) AS ran
               FROM input ORDER BY name, n DESC
           ), upsert AS (
               INSERT INTO run_steps AS s (tenant_id, run_id, name, status, attempt, message, outputs, engine_ref,
                                           wall_ms, cpu_ms, max_rss_kb, exit_code, family, started_at, finished_at, updated_at)
               SELECT $1, $2, name, status, attempt, message, outputs, engine_ref, wall_ms, cpu_ms, max_rss_kb, exit_code, family,
                      CASE WHEN ran THEN now() END,
                      CASE WHEN status NOT IN ('pending', 'running') THEN now() END,
                      now()
               FROM latest
               ON CONFLICT (tenant_id, run_id, name) DO UPDATE SET
                   status = excluded.status, attempt = excluded.attempt, message = excluded.message,
                   outputs = excluded.outputs, engine_ref = coalesce(excluded.engine_ref, s.engine_ref),
                   wall_ms = coalesce(excluded.wall_ms, s.wall_ms), cpu_ms = coalesce(excluded.cpu_ms, s.cpu_ms),
                   max_rss_kb = coalesce(excluded.max_rss_kb, s.max_rss_kb), exit_code = coalesce(excluded.exit_code, s.exit_code),
                   family = coalesce(excluded.family, s.family),
                   started_at = CASE WHEN excluded.status = 'pending' THEN NULL
                                     ELSE coalesce(s.started_at, excluded.started_at) END,
                   finished_at = excluded.finished_at,
                   updated_at = now()
           )
           INSERT INTO run_events (tenant_id, run_id, kind, step, status, message, data)
           SELECT $1, $2, 'step.' || status, name, status, message, jsonb_build_object('attempt', attempt)
           FROM input ORDER BY n"#,
        tenant as TenantId,
        run as RunId,
        &names as &[&str],
        &statuses as &[&str],
        &attempts,
        &messages as &[Option<String>],
        &outputs as &[Json<&serde_json::Value>],
        &refs as &[Option<String>],
        &walls as &[Option<i64>],
        &cpus as &[Option<i64>],
        &rss as &[Option<i64>],
        &codes as &[Option<i32>],
        &families as &[Option<String>],
    )
    .execute(&mut **tx)
    .await?;
    for s in steps {
        if let Some(logs) = &s.logs {
            sqlx::query!(
                r#"INSERT INTO step_logs (tenant_id, run_id, step, run_attempt, attempt, content)
                   SELECT $1, $2, $3, r.attempt, $4, $5 FROM runs r WHERE r.tenant_id = $1 AND r.id = $2
                   ON CONFLICT (tenant_id, run_id, step, run_attempt, attempt) DO UPDATE SET content = excluded.content"#,
                tenant as TenantId,
                run as RunId,
                s.name,
                s.attempt,
                logs,
            )
            .execute(&mut **tx)
            .await?;
        }
    }
    Ok(true)
}

/// Queued runs per tenant (platform transaction), for the queue-depth gauge.
pub async fn queue_depths(tx: &mut Tx) -> Result<Vec<(String, i64)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT t.name, count(r.id) AS "queued!" FROM tenants t
           LEFT JOIN runs r ON r.tenant_id = t.id AND r.status = 'queued'
           GROUP BY t.name"#
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|r| (r.name, r.queued)).collect())
}

/// Merges `outputs` (an object) into the run's outputs; false when the
/// lease was lost.
pub async fn add_outputs(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    owner: &str,
    outputs: &serde_json::Value,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        r#"UPDATE runs SET outputs = outputs || $4, updated_at = now()
           WHERE tenant_id = $1 AND id = $2 AND lease_owner = $3"#,
        tenant as TenantId,
        run as RunId,
        owner,
        Json(outputs) as _,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() > 0)
}

/// One measured success of a step, for resource advice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Measured {
    /// The step it was measured for (the asked name).
    pub step: String,
    pub wall_ms: i64,
    pub cpu_ms: i64,
    pub max_rss_kb: i64,
}

/// The latest `per_step` measured successes of each asked step: the same
/// step name in runs of the same workflow, or the same family (image and
/// command) anywhere in the tenant.
pub async fn history(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: &str,
    steps: &[(String, Option<String>)],
    per_step: i64,
) -> Result<Vec<Measured>, sqlx::Error> {
    let names: Vec<&str> = steps.iter().map(|(n, _)| n.as_str()).collect();
    let families: Vec<Option<String>> = steps.iter().map(|(_, f)| f.clone()).collect();
    sqlx::query_as!(
        Measured,
        r#"SELECT asked.name AS "step!", m.wall_ms AS "wall_ms!", m.cpu_ms AS "cpu_ms!", m.max_rss_kb AS "max_rss_kb!"
           FROM unnest($3::text[], $4::text[]) AS asked(name, family)
           CROSS JOIN LATERAL (
               SELECT u.wall_ms, u.cpu_ms, u.max_rss_kb FROM (
                   (SELECT s.finished_at, s.wall_ms, coalesce(s.cpu_ms, 0) AS cpu_ms, coalesce(s.max_rss_kb, 0) AS max_rss_kb
                    FROM run_steps s JOIN runs r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
                    WHERE s.tenant_id = $1 AND s.name = asked.name AND r.workflow_name = $2
                      AND s.status = 'succeeded' AND s.wall_ms IS NOT NULL
                    ORDER BY s.finished_at DESC LIMIT $5)
                   UNION ALL
                   (SELECT s.finished_at, s.wall_ms, coalesce(s.cpu_ms, 0), coalesce(s.max_rss_kb, 0)
                    FROM run_steps s JOIN runs r ON r.tenant_id = s.tenant_id AND r.id = s.run_id
                    WHERE s.tenant_id = $1 AND s.family = asked.family
                      AND NOT (s.name = asked.name AND r.workflow_name = $2)
                      AND s.status = 'succeeded' AND s.wall_ms IS NOT NULL
                    ORDER BY s.finished_at DESC LIMIT $5)
               ) u
               ORDER BY u.finished_at DESC NULLS LAST
               LIMIT $5
           ) m"#,
        tenant as TenantId,
        workflow,
        &names as &[&str],
        &families as &[Option<String>],
        per_step,
    )
    .fetch_all(&mut **tx)
    .await
}
