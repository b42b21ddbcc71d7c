//! The claim loop: takes over runs whose scheduler died, then claims queued
//! runs by fair share, while this replica has room.

use crate::{Context, driver};
use couler_store::{RUNS_QUEUED_CHANNEL, scheduling};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

pub async fn claim_loop(ctx: Arc<Context>, shutdown: CancellationToken) -> anyhow::Result<()> {
    let mut listener = sqlx::postgres::PgListener::connect_with(ctx.store.pool()).await?;
    listener.listen(RUNS_QUEUED_CHANNEL).await?;
    let poll = Duration::from_millis(ctx.config.poll_ms);
    let mut last_depth = Instant::now() - Duration::from_secs(60);
    loop {
        if shutdown.is_cancelled() {
            return Ok(());
        }
        while ctx.held.len() < ctx.config.max_active_runs && !shutdown.is_cancelled() {
            match claim_one(&ctx).await {
                Ok(Some(claim)) => {
                    let (ticket, control) = ctx.held.insert(claim.tenant_id, claim.run_id);
                    let span = tracing::info_span!("run", run = %claim.run_id, tenant = %claim.tenant_id, takeover = claim.takeover);
                    tokio::spawn(
                        driver::drive(ctx.clone(), claim, ticket, control).instrument(span),
                    );
                }
                Ok(None) => break,
                Err(e) => {
                    tracing::warn!(error = %e, "claiming failed");
                    break;
                }
            }
        }
        if last_depth.elapsed() > Duration::from_secs(5) {
            last_depth = Instant::now();
            record_queue_depth(&ctx).await;
        }
        tokio::select! {
            _ = shutdown.cancelled() => return Ok(()),
            note = listener.recv() => {
                if let Err(e) = note {
                    tracing::warn!(error = %e, "queue listener lost its connection");
                    tokio::time::sleep(poll).await;
                }
            }
            _ = tokio::time::sleep(poll) => {}
        }
    }
}

#[tracing::instrument(name = "claim", skip_all, fields(owner = %ctx.owner))]
async fn claim_one(ctx: &Context) -> Result<Option<scheduling::Claim>, sqlx::Error> {
    let start = Instant::now();
    let mut tx = ctx.store.platform().await?;
    let mut claim = scheduling::take_over_expired(&mut tx, &ctx.owner, ctx.config.lease()).await?;
    if claim.is_some() {
        metrics::counter!("couler_lease_takeovers_total").increment(1);
    } else {
        claim = scheduling::claim_next(&mut tx, &ctx.owner, ctx.config.lease()).await?;
    }
    tx.commit().await?;
    if let Some(c) = &claim {
        metrics::histogram!("couler_claim_duration_seconds").record(start.elapsed().as_secs_f64());
        tracing::info!(run = %c.run_id, tenant = %c.tenant_id, takeover = c.takeover, "claimed run");
    }
    Ok(claim)
}

async fn record_queue_depth(ctx: &Context) {
    let depths = async {
        let mut tx = ctx.store.platform().await?;
        let d = scheduling::queue_depths(&mut tx).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(d)
    }
    .await;
    if let Ok(depths) = depths {
        for (tenant, depth) in depths {
            metrics::gauge!("couler_queue_depth", "tenant" => tenant).set(depth as f64);
        }
    }
}
