//! Leases: every held run is renewed on each heartbeat; a run missing from
//! the renewal was taken by someone else (its driver stops), and a run whose
//! cancel was requested is told so.

use crate::Context;
use couler_store::{RunId, scheduling};
use std::collections::HashMap;
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
    idle: Notify,
}

struct Entry {
    control: mpsc::UnboundedSender<Control>,
    cancel_sent: bool,
}

impl Held {
    pub fn insert(&self, run: RunId) -> mpsc::UnboundedReceiver<Control> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.runs.lock().expect("held lock").insert(
            run,
            Entry {
                control: tx,
                cancel_sent: false,
            },
        );
        rx
    }

    pub fn remove(&self, run: RunId) {
        let mut runs = self.runs.lock().expect("held lock");
        runs.remove(&run);
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

    /// Applies a renewal: lost runs stop, cancelled runs are told once.
    fn reconcile(&self, renewed: &[scheduling::Held]) {
        let still: HashMap<RunId, bool> = renewed
            .iter()
            .map(|h| (h.run_id, h.cancel_requested))
            .collect();
        let mut runs = self.runs.lock().expect("held lock");
        for (run, entry) in runs.iter_mut() {
            match still.get(run) {
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
        if ctx.held.is_empty() {
            continue;
        }
        let renewed = async {
            let mut tx = ctx.store.platform().await?;
            let held = scheduling::renew(&mut tx, &ctx.owner, ctx.config.lease()).await?;
            tx.commit().await?;
            Ok::<_, sqlx::Error>(held)
        }
        .await;
        match renewed {
            Ok(held) => ctx.held.reconcile(&held),
            // Keep driving; if the database stays away the lease lapses and
            // the run is taken over once it is back.
            Err(e) => tracing::warn!(error = %e, "lease renewal failed"),
        }
    }
}
