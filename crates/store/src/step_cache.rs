//! What the cache index said of a run's steps (`run_step_cache`): recorded
//! by the scheduler when it plans a run or looks a later stage up, read by
//! the API for the run's page and the savings in run lists.

use crate::{RunId, TenantId, Tx};

/// One step's verdict, as the scheduler records it.
#[derive(Debug, Clone)]
pub struct NewVerdict {
    pub step: String,
    /// `hit`, `miss`, `pending`, `not_cacheable` or `not_needed`.
    pub status: &'static str,
    pub reason: Option<String>,
    /// The step's 32-byte cache key, when it has one.
    pub key: Option<[u8; 32]>,
    pub saved_ms: Option<i64>,
}

/// One step's verdict, as a run's page shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepCache {
    pub step: String,
    pub status: String,
    pub reason: Option<String>,
    pub saved_ms: Option<i64>,
    /// For a hit: the tenant's latest run whose step computed the same key
    /// and succeeded (none when only another tenant's runs did).
    pub producer_run: Option<RunId>,
}

/// Records verdicts (a later one for the same step replaces the earlier,
/// also within `verdicts`).
pub async fn record(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    verdicts: &[NewVerdict],
) -> Result<(), sqlx::Error> {
    if verdicts.is_empty() {
        return Ok(());
    }
    let steps: Vec<&str> = verdicts.iter().map(|v| v.step.as_str()).collect();
    let statuses: Vec<&str> = verdicts.iter().map(|v| v.status).collect();
    let reasons: Vec<Option<&str>> = verdicts.iter().map(|v| v.reason.as_deref()).collect();
    let keys: Vec<Option<&[u8]>> = (verdicts.iter())
        .map(|v| v.key.as_ref().map(|k| &k[..]))
        .collect();
    let saved: Vec<Option<i64>> = verdicts.iter().map(|v| v.saved_ms).collect();
    sqlx::query!(
        r#"WITH input AS (
               SELECT DISTINCT ON (i.step) i.*
               FROM UNNEST($3::text[], $4::text[], $5::text[], $6::bytea[], $7::bigint[])
                    WITH ORDINALITY AS i(step, status, reason, cache_key, saved_ms, n)
               ORDER BY i.step, i.n DESC
           )
           INSERT INTO run_step_cache (tenant_id, run_id, step, status, reason, cache_key, saved_ms, producer_run)
           SELECT $1, $2, i.step, i.status, i.reason, i.cache_key, i.saved_ms,
                  CASE WHEN i.status = 'hit' THEN (
                      SELECT c.run_id FROM run_step_cache c
                      JOIN run_steps s ON s.tenant_id = c.tenant_id AND s.run_id = c.run_id
                                      AND s.name = c.step AND s.status = 'succeeded'
                      WHERE c.tenant_id = $1 AND c.cache_key = i.cache_key AND c.status IN ('miss', 'pending')
                      ORDER BY s.finished_at DESC NULLS LAST LIMIT 1)
                  END
           FROM input i
           ON CONFLICT (tenant_id, run_id, step) DO UPDATE
               SET status = excluded.status, reason = excluded.reason, cache_key = excluded.cache_key,
                   saved_ms = excluded.saved_ms, producer_run = excluded.producer_run, recorded_at = now()"#,
        tenant as TenantId,
        run as RunId,
        &steps as &[&str],
        &statuses as &[&str],
        &reasons as &[Option<&str>],
        &keys as &[Option<&[u8]>],
        &saved as &[Option<i64>],
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Notes the key under which a step of the run computed its result. A
/// step pending at planning learns its key only once it ran: it becomes a
/// miss, saying it was not looked up.
pub async fn note_key(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
    step: &str,
    key: &[u8; 32],
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO run_step_cache (tenant_id, run_id, step, status, reason, cache_key)
           VALUES ($1, $2, $3, 'miss', 'not cached', $4)
           ON CONFLICT (tenant_id, run_id, step) DO UPDATE
               SET cache_key = excluded.cache_key,
                   status = CASE WHEN run_step_cache.status = 'pending' THEN 'miss' ELSE run_step_cache.status END,
                   reason = CASE WHEN run_step_cache.status = 'pending'
                                 THEN 'not looked up before it ran: ' || coalesce(run_step_cache.reason, 'its key needed outputs of steps that ran')
                                 ELSE run_step_cache.reason END"#,
        tenant as TenantId,
        run as RunId,
        step,
        &key[..],
    )
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// Every recorded verdict of a run.
pub async fn of_run(
    tx: &mut Tx,
    tenant: TenantId,
    run: RunId,
) -> Result<Vec<StepCache>, sqlx::Error> {
    sqlx::query_as!(
        StepCache,
        r#"SELECT step, status, reason, saved_ms, producer_run AS "producer_run: RunId"
           FROM run_step_cache WHERE tenant_id = $1 AND run_id = $2"#,
        tenant as TenantId,
        run as RunId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// The compute time each run's cache verdicts save (hits and steps not
/// needed), for the runs that have any; one query for a page of runs.
pub async fn savings(
    tx: &mut Tx,
    tenant: TenantId,
    runs: &[RunId],
) -> Result<Vec<(RunId, i64)>, sqlx::Error> {
    let ids: Vec<uuid::Uuid> = runs.iter().map(|r| r.0).collect();
    let rows = sqlx::query!(
        r#"SELECT run_id AS "run_id!: RunId", sum(saved_ms)::bigint AS "saved!"
           FROM run_step_cache
           WHERE tenant_id = $1 AND run_id = ANY($2) AND saved_ms IS NOT NULL
           GROUP BY run_id"#,
        tenant as TenantId,
        &ids,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows.into_iter().map(|r| (r.run_id, r.saved)).collect())
}
