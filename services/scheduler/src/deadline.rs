//! The deadline of a run: the workflow's `timeout`, kept here for every
//! engine (those with a field of their own get it in their manifest too).
//! Once the run has been running that long, the engine is told to stop it
//! (`EngineAdapter::expire`: running steps stop, nothing new starts, exit
//! handlers still run), and the run fails with "deadline exceeded after …"
//! whatever the engine reports then. A step the deadline stopped is failed
//! with that reason, as a step's own timeout fails it; a step it kept from
//! starting is cancelled with it.
//!
//! The clock starts when the attempt started running (a retry's when it
//! was queued again), so a scheduler taking the run over keeps the same
//! deadline.

use couler_engines::{StepPhase, StepState};
use couler_store::StepStatus;
use couler_store::scheduling::Driving;
use tokio::time::Instant;

pub(crate) struct Deadline {
    at: Instant,
    timeout: couler_ir::scalar::Duration,
    /// Whether the engine was told to stop the run.
    fired: bool,
}

impl Deadline {
    /// The run's deadline, when its workflow has a `timeout`.
    pub(crate) fn of(d: &Driving, workflow: &couler_ir::Workflow) -> Option<Deadline> {
        let timeout = workflow.timeout?;
        let now = chrono::Utc::now();
        let started = d
            .run
            .started_at
            .unwrap_or(now)
            .max(d.run.queued_at)
            .min(now);
        let running = (now - started).to_std().unwrap_or_default();
        let left = timeout.as_std().saturating_sub(running);
        Some(Deadline {
            at: Instant::now() + left,
            timeout,
            fired: false,
        })
    }

    /// Why the run failed.
    pub(crate) fn message(&self) -> String {
        format!("deadline exceeded after {}", self.timeout)
    }

    /// Waits until the deadline, unless the engine was told already.
    pub(crate) async fn passes(&self) {
        if self.fired {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep_until(self.at).await;
    }

    /// Notes that the engine was told to stop the run.
    pub(crate) fn fire(&mut self) {
        self.fired = true;
    }

    /// Whether the deadline has passed (an engine keeping it on its own
    /// may report the end before the engine was told).
    pub(crate) fn passed(&self) -> bool {
        self.fired || Instant::now() >= self.at
    }
}

/// Records on the run's events that its deadline stopped it.
pub(crate) async fn note(
    ctx: &crate::Context,
    tenant: couler_store::TenantId,
    run: couler_store::RunId,
    message: &str,
) -> anyhow::Result<()> {
    let mut event =
        couler_store::events::NewEvent::run("run.deadline", couler_store::RunStatus::Running);
    event.message = Some(format!("{message}: stopping the run"));
    crate::driver::retrying("note the deadline", || async {
        let mut tx = ctx.store.tenant(tenant).await?;
        couler_store::events::append(&mut tx, tenant, run, &event).await?;
        tx.commit().await
    })
    .await
}

/// Waits for `deadline`, if there is one.
pub(crate) async fn passes(deadline: &Option<Deadline>) {
    match deadline {
        Some(d) => d.passes().await,
        None => std::future::pending().await,
    }
}

/// How the run ends: a run that did not succeed by its deadline failed
/// because of it.
pub(crate) fn outcome(
    deadline: Option<&Deadline>,
    to: couler_store::RunStatus,
    message: Option<String>,
) -> (couler_store::RunStatus, Option<String>) {
    match deadline {
        Some(d) if d.passed() && to != couler_store::RunStatus::Succeeded => {
            (couler_store::RunStatus::Failed, Some(d.message()))
        }
        _ => (to, message),
    }
}

/// A step report after the deadline stopped the run (`reason`): a
/// cancelled step that was running failed, one that never started was
/// cancelled, both for that reason.
pub(crate) fn stopped(state: &StepState, from: StepStatus, reason: &str) -> Option<StepState> {
    if state.phase != StepPhase::Cancelled {
        return None;
    }
    let mut state = state.clone();
    if from == StepStatus::Running {
        state.phase = StepPhase::Failed;
        state.message = Some(format!("{reason}: the run's deadline stopped the step"));
    } else {
        state.message = Some(format!("{reason} before the step started"));
    }
    Some(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn state(phase: StepPhase) -> StepState {
        StepState {
            name: "train".into(),
            phase,
            attempt: 1,
            message: Some("run cancelled".into()),
            outputs: Default::default(),
            metrics: None,
            engine_ref: None,
            logs: None,
        }
    }

    #[test]
    fn a_stopped_running_step_failed_and_a_waiting_one_was_cancelled() {
        let reason = "deadline exceeded after 1h";
        let running = stopped(&state(StepPhase::Cancelled), StepStatus::Running, reason).unwrap();
        assert_eq!(running.phase, StepPhase::Failed);
        assert!(running.message.unwrap().starts_with(reason));
        let waiting = stopped(&state(StepPhase::Cancelled), StepStatus::Pending, reason).unwrap();
        assert_eq!(waiting.phase, StepPhase::Cancelled);
        assert_eq!(
            waiting.message.as_deref(),
            Some("deadline exceeded after 1h before the step started")
        );
        assert!(stopped(&state(StepPhase::Succeeded), StepStatus::Running, reason).is_none());
    }

    #[test]
    fn a_run_that_did_not_succeed_by_its_deadline_failed_because_of_it() {
        use couler_store::RunStatus;
        let mut d = Deadline {
            at: Instant::now() + Duration::from_secs(3600),
            timeout: couler_ir::scalar::Duration(Duration::from_secs(3600)),
            fired: false,
        };
        let engine = Some("cancelled".to_owned());
        assert_eq!(
            outcome(Some(&d), RunStatus::Cancelled, engine.clone()),
            (RunStatus::Cancelled, engine.clone())
        );
        d.fire();
        assert_eq!(
            outcome(Some(&d), RunStatus::Cancelled, engine.clone()),
            (RunStatus::Failed, Some("deadline exceeded after 1h".into()))
        );
        assert_eq!(
            outcome(Some(&d), RunStatus::Succeeded, None),
            (RunStatus::Succeeded, None)
        );
    }
}
