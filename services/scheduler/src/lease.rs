//! Leases: every held run is renewed on each heartbeat; a run missing from
//! the renewal was taken by someone else (its driver stops), and a run whose
//! cancel was requested is told so.

use crate::Context;
use couler_store::{RunId, TenantId, scheduling};
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{Notify, mpsc};
use tokio_util::sync::CancellationToken;

/// What a driver is told from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// The user asked to cancel the run.
    Cancel,
    /// Another scheduler holds the run now: stop without writing.
    LeaseLost,
    /// This scheduler is stopping: hand the run back.
    Shutdown,
}

/// The runs this replica drives.
#[derive(Default)]
pub struct Held {
    runs: Mutex<HashMap<RunId, Entry>>,
    next: AtomicU64,
    idle: Notify,
}

struct Entry {
    /// Which driver holds the run: a driver that lingers after a takeover
    /// of its run by this replica must not release the new driver's hold.
    ticket: Ticket,
    tenant: TenantId,
    control: mpsc::UnboundedSender<Control>,
    cancel_sent: bool,
}

/// One driver's hold on a run, from [`Held::insert`] to [`Held::remove`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ticket(u64);

/// The runs one renewal asks for, as held when it began.
pub struct Asked(Vec<(TenantId, RunId, Ticket)>);

impl Asked {
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn runs(&self) -> Vec<(TenantId, RunId)> {
        self.0.iter().map(|&(t, r, _)| (t, r)).collect()
    }
}

impl Held {
    pub fn insert(
        &self,
        tenant: TenantId,
        run: RunId,
    ) -> (Ticket, mpsc::UnboundedReceiver<Control>) {
        let (tx, rx) = mpsc::unbounded_channel();
        let ticket = Ticket(self.next.fetch_add(1, Ordering::Relaxed));
        self.runs.lock().expect("held lock").insert(
            run,
            Entry {
                ticket,
                tenant,
                control: tx,
                cancel_sent: false,
            },
        );
        (ticket, rx)
    }

    /// Ends the hold `ticket` has on `run` (none when a newer driver holds it).
    pub fn remove(&self, run: RunId, ticket: Ticket) {
        let mut runs = self.runs.lock().expect("held lock");
        if runs.get(&run).is_some_and(|e| e.ticket == ticket) {
            runs.remove(&run);
        }
        if runs.is_empty() {
            self.idle.notify_waiters();
        }
    }

    pub fn len(&self) -> usize {
        self.runs.lock().expect("held lock").len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn shutdown_all(&self) {
        for entry in self.runs.lock().expect("held lock").values() {
            let _ = entry.control.send(Control::Shutdown);
        }
    }

    pub async fn wait_idle(&self) {
        loop {
            let notified = self.idle.notified();
            if self.is_empty() {
                return;
            }
            notified.await;
        }
    }

    /// What a renewal starting now asks for.
    pub fn asked(&self) -> Asked {
        let runs = self.runs.lock().expect("held lock");
        Asked(runs.iter().map(|(&r, e)| (e.tenant, r, e.ticket)).collect())
    }

    /// Applies a renewal of `asked`: its lost runs stop, its cancelled runs
    /// are told once. Holds taken since it began are not judged by it.
    fn reconcile(&self, asked: &Asked, renewed: &[scheduling::Held]) {
        let still: HashMap<RunId, bool> = renewed
            .iter()
            .map(|h| (h.run_id, h.cancel_requested))
            .collect();
        let mut runs = self.runs.lock().expect("held lock");
        for &(_, run, ticket) in &asked.0 {
            let Some(entry) = runs.get_mut(&run).filter(|e| e.ticket == ticket) else {
                continue;
            };
            match still.get(&run) {
                None => {
                    let _ = entry.control.send(Control::LeaseLost);
                }
                Some(true) if !entry.cancel_sent => {
                    entry.cancel_sent = true;
                    let _ = entry.control.send(Control::Cancel);
                }
                Some(_) => {}
            }
        }
    }
}

/// Renews leases until `shutdown`.
pub async fn heartbeat(ctx: Arc<Context>, shutdown: CancellationToken) {
    let period = std::time::Duration::from_millis(ctx.config.heartbeat_ms);
    let mut tick = tokio::time::interval(period);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = shutdown.cancelled() => return,
            _ = tick.tick() => {}
        }
        let asked = ctx.held.asked();
        if asked.is_empty() {
            continue;
        }
        let renewed = async {
            let mut tx = ctx.store.platform().await?;
            let held =
                scheduling::renew(&mut tx, &ctx.owner, &asked.runs(), ctx.config.lease()).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(held)
        }
        .await;
        match renewed {
            Ok(held) => ctx.held.reconcile(&asked, &held),
            // Keep driving; if the database stays away the lease lapses and
            // the run is taken over once it is back.
            Err(e) => tracing::warn!(error = %e, "lease renewal failed"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::sync::mpsc::error::TryRecvError;

    fn renewed(tenant: TenantId, run: RunId, cancel_requested: bool) -> scheduling::Held {
        scheduling::Held {
            tenant_id: tenant,
            run_id: run,
            cancel_requested,
        }
    }

    #[test]
    fn a_run_missing_from_its_renewal_is_lost_and_a_cancel_is_told_once() {
        let held = Held::default();
        let (tenant, lost, cancelled) = (TenantId::new(), RunId::new(), RunId::new());
        let (_, mut lost_rx) = held.insert(tenant, lost);
        let (_, mut cancelled_rx) = held.insert(tenant, cancelled);
        let asked = held.asked();
        held.reconcile(&asked, &[renewed(tenant, cancelled, true)]);
        held.reconcile(&held.asked(), &[renewed(tenant, cancelled, true)]);
        assert_eq!(lost_rx.try_recv(), Ok(Control::LeaseLost));
        assert_eq!(cancelled_rx.try_recv(), Ok(Control::Cancel));
        assert_eq!(cancelled_rx.try_recv(), Err(TryRecvError::Empty));
    }

    #[test]
    fn a_renewal_does_not_judge_a_run_claimed_while_it_ran() {
        let held = Held::default();
        let (tenant, old, new) = (TenantId::new(), RunId::new(), RunId::new());
        let (_, mut old_rx) = held.insert(tenant, old);
        let asked = held.asked();
        // Claimed (and committed) after the renewal's snapshot was taken.
        let (_, mut new_rx) = held.insert(tenant, new);
        held.reconcile(&asked, &[renewed(tenant, old, false)]);
        assert_eq!(old_rx.try_recv(), Err(TryRecvError::Empty));
        assert_eq!(new_rx.try_recv(), Err(TryRecvError::Empty));
        assert_eq!(asked.runs(), vec![(tenant, old)]);
    }

    #[test]
    fn a_driver_replaced_by_a_takeover_neither_releases_nor_answers_for_the_new_hold() {
        let held = Held::default();
        let (tenant, run) = (TenantId::new(), RunId::new());
        let (first, mut first_rx) = held.insert(tenant, run);
        let asked_of_first = held.asked();
        let (second, mut second_rx) = held.insert(tenant, run);
        // The first driver is told to stop: its channel closed.
        assert_eq!(first_rx.try_recv(), Err(TryRecvError::Disconnected));
        // A renewal begun under the first hold does not judge the second.
        held.reconcile(&asked_of_first, &[]);
        assert_eq!(second_rx.try_recv(), Err(TryRecvError::Empty));
        held.remove(run, first);
        assert_eq!(held.len(), 1);
        held.remove(run, second);
        assert!(held.is_empty());
    }
}
