//! What adapters share when they turn an engine's view into updates:
//! reports of reused steps, which states are news, map steps' states and
//! outputs from their instances', log tails and multi-attempt logs, and
//! compiling off the async runtime.

use crate::{EngineError, RunSpec, StepPhase, StepState, Update};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// Updates an adapter may get ahead of the scheduler by.
pub(crate) const UPDATE_BUFFER: usize = 1024;
/// How much of a step's log terminal updates carry (and Postgres keeps),
/// by default: 1 MiB holds a 100,000-line log of short lines.
pub(crate) const LOG_TAIL_BYTES: usize = 1024 * 1024;

/// Runs `build` (a compiler) on the blocking pool: big plans take a while.
pub(crate) async fn compile<T: Send + 'static>(
    plan: &Arc<Plan>,
    run: &RunSpec,
    build: impl FnOnce(&Plan, &RunSpec) -> Result<T, EngineError> + Send + 'static,
) -> Result<T, EngineError> {
    let (plan, run) = (plan.clone(), run.clone());
    tokio::task::spawn_blocking(move || build(&plan, &run))
        .await
        .map_err(|e| EngineError::Other(format!("internal error: {e}")))?
}

/// The report of a step the plan reuses instead of running it.
pub fn reused_state(name: &str, status: ReuseStatus, outputs: &StepOutputs) -> StepState {
    let (phase, message) = match status {
        ReuseStatus::Succeeded => (StepPhase::Succeeded, "kept from an earlier attempt"),
        ReuseStatus::Skipped => (StepPhase::Skipped, "skipped in an earlier attempt"),
        ReuseStatus::Cached => (StepPhase::Cached, "reused from the cache"),
        ReuseStatus::NotNeeded => (
            StepPhase::Skipped,
            "not needed: computed before, and every step that reads it is cached",
        ),
    };
    StepState {
        name: name.to_owned(),
        phase,
        attempt: 0,
        message: Some(message.into()),
        outputs: outputs.clone(),
        metrics: None,
        engine_ref: None,
        logs: None,
    }
}

/// The steps the engine runs (with their index in the plan), and the
/// reports of those the plan reuses.
pub(crate) fn split_plan(plan: &Plan) -> (Vec<(usize, &couler_ir::Step)>, Vec<StepState>) {
    let mut run = Vec::new();
    let mut reused = Vec::new();
    for (i, planned) in plan.steps.iter().enumerate() {
        let step = plan.ir_step(i);
        match &planned.action {
            Action::Run => run.push((i, step)),
            Action::Reuse { status, outputs } => {
                reused.push(reused_state(&step.name, *status, outputs))
            }
        }
    }
    (run, reused)
}

/// An adapter that follows a run by looking at it now and then.
pub(crate) trait Poll {
    type Error: Debug;

    fn reporter(&mut self) -> &mut Reporter;

    /// One look at the run: sends what changed; `Finished` once it ended.
    async fn look(&mut self) -> Result<Option<Update>, Self::Error>;
}

/// Sends the reused steps' reports, then polls every `every` until the
/// run finishes or nobody listens. Failed looks are logged and tried
/// again: the engine's API may be restarting.
pub(crate) async fn poll_until_finished<P: Poll>(
    poller: &mut P,
    reused: Vec<StepState>,
    every: Duration,
) {
    if !poller.reporter().send_reused(reused).await {
        return;
    }
    let mut failures = 0u32;
    loop {
        if poller.reporter().is_closed() {
            return;
        }
        match poller.look().await {
            Ok(Some(finished)) => {
                poller.reporter().send_raw(finished).await;
                return;
            }
            Ok(None) => failures = 0,
            Err(e) => {
                failures += 1;
                tracing::warn!(error = ?e, failures, "cannot look at the run");
            }
        }
        tokio::time::sleep(every).await;
    }
}

/// The update stream of one run, and what it last said about each step
/// (instance): a phase and an attempt.
pub(crate) struct Reporter {
    tx: mpsc::Sender<Update>,
    last: HashMap<String, (StepPhase, u32)>,
}

impl Reporter {
    /// `resume` is what an earlier start reported.
    pub(crate) fn new(tx: mpsc::Sender<Update>, resume: Vec<StepState>) -> Reporter {
        let last = resume
            .into_iter()
            .map(|s| (s.name, (s.phase, s.attempt)))
            .collect();
        Reporter { tx, last }
    }

    /// Sends the reports of reused steps an earlier start did not finish;
    /// `false` once nobody listens.
    pub(crate) async fn send_reused(&mut self, reused: Vec<StepState>) -> bool {
        for state in reused {
            if self.is_final(&state.name) {
                continue;
            }
            if !self.send(state).await {
                return false;
            }
        }
        true
    }

    pub(crate) fn last(&self, name: &str) -> Option<(StepPhase, u32)> {
        self.last.get(name).copied()
    }

    /// Whether a terminal state was reported: terminal states are final,
    /// whatever a later look shows.
    pub(crate) fn is_final(&self, name: &str) -> bool {
        self.last(name).is_some_and(|(p, _)| p.is_terminal())
    }

    /// Whether a step's state is worth an update: not pending, not said
    /// already, and the step not finished.
    pub(crate) fn is_news(&self, name: &str, phase: StepPhase, attempt: u32) -> bool {
        phase != StepPhase::Pending
            && self.last(name) != Some((phase, attempt))
            && !self.is_final(name)
    }

    /// Sends `state` running first when its attempt started and ended
    /// between two looks: every engine reports a run attempt running.
    pub(crate) async fn running_first(&self, state: &StepState) {
        let ran = matches!(state.phase, StepPhase::Succeeded | StepPhase::Failed);
        let running = (StepPhase::Running, state.attempt);
        if ran && state.attempt > 0 && self.last(&state.name) != Some(running) {
            let before = StepState {
                phase: StepPhase::Running,
                message: None,
                outputs: StepOutputs::default(),
                metrics: None,
                logs: None,
                ..state.clone()
            };
            let _ = self.tx.send(Update::Step(before)).await;
        }
    }

    /// Sends and remembers a step's state; `false` once nobody listens.
    pub(crate) async fn send(&mut self, state: StepState) -> bool {
        self.last
            .insert(state.name.clone(), (state.phase, state.attempt));
        self.tx.send(Update::Step(state)).await.is_ok()
    }

    /// Sends an update as it is (`Running` attempts, `Finished`).
    pub(crate) async fn send_raw(&self, update: Update) {
        let _ = self.tx.send(update).await;
    }

    /// Whether nobody listens any more.
    pub(crate) fn is_closed(&self) -> bool {
        self.tx.is_closed()
    }

    /// Resolves once nobody listens any more.
    pub(crate) async fn closed(&self) {
        self.tx.closed().await
    }
}

/// A map step's state from its instances'.
pub(crate) struct MapState {
    pub phase: StepPhase,
    /// 1 once anything happened.
    pub attempt: u32,
    /// Which instances failed, when the step failed.
    pub message: Option<String>,
}

/// A map step's state from its instances' indices and phases: running
/// while any is, then failed, cancelled, skipped (all were) or succeeded.
pub(crate) fn map_state<I: std::fmt::Display>(
    instances: impl IntoIterator<Item = (I, StepPhase)>,
) -> MapState {
    let instances: Vec<(I, StepPhase)> = instances.into_iter().collect();
    let any = |p: StepPhase| instances.iter().any(|(_, q)| *q == p);
    let phase = if instances.iter().any(|(_, p)| !p.is_terminal()) {
        if any(StepPhase::Running) {
            StepPhase::Running
        } else {
            StepPhase::Pending
        }
    } else if any(StepPhase::Failed) {
        StepPhase::Failed
    } else if any(StepPhase::Cancelled) {
        StepPhase::Cancelled
    } else if !instances.is_empty() && instances.iter().all(|(_, p)| *p == StepPhase::Skipped) {
        StepPhase::Skipped
    } else {
        StepPhase::Succeeded
    };
    let message = (phase == StepPhase::Failed).then(|| {
        let failed: Vec<String> = instances
            .iter()
            .filter(|(_, p)| *p == StepPhase::Failed)
            .map(|(i, _)| i.to_string())
            .collect();
        format!("instance(s) {} failed", failed.join(", "))
    });
    MapState {
        phase,
        attempt: u32::from(phase != StepPhase::Pending),
        message,
    }
}

/// A map step's outputs from its instances' in index order: the results
/// and each parameter as JSON lists (a missing value is empty), like the
/// local engine's.
pub(crate) fn gather<'o>(instances: impl IntoIterator<Item = &'o StepOutputs>) -> StepOutputs {
    let all: Vec<&StepOutputs> = instances.into_iter().collect();
    let mut outputs = StepOutputs {
        result: Some(json_list(
            all.iter().map(|o| o.result.as_deref().unwrap_or_default()),
        )),
        ..StepOutputs::default()
    };
    let names: BTreeSet<&String> = all.iter().flat_map(|o| o.parameters.keys()).collect();
    for p in names {
        let values = all
            .iter()
            .map(|o| o.parameters.get(p).map(String::as_str).unwrap_or_default());
        outputs.parameters.insert(p.clone(), json_list(values));
    }
    outputs
}

/// A JSON list of instance values (map aggregation): values that are JSON
/// objects or arrays are embedded as JSON, anything else as a JSON string
/// (as the compiled `couler_json_list` helpers do).
pub(crate) fn json_list<'a>(values: impl Iterator<Item = &'a str>) -> String {
    let parts: Vec<String> = values
        .map(|v| {
            let t = v.trim();
            let structured = (t.starts_with('{') || t.starts_with('['))
                && serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok();
            if structured {
                t.to_owned()
            } else {
                Value::String(v.to_owned()).to_string()
            }
        })
        .collect();
    format!("[{}]", parts.join(","))
}

/// The last `max` bytes of a log, cut at a character boundary.
pub(crate) fn tail(mut log: String, max: usize) -> String {
    if log.len() > max {
        let mut cut = log.len() - max;
        while !log.is_char_boundary(cut) {
            cut += 1;
        }
        log.drain(..cut);
    }
    log
}

/// Several attempts' logs as one text: with more than one, each starts on
/// a line of its own under `=== attempt N ===`.
pub(crate) fn join_attempts(logs: impl IntoIterator<Item = (u32, String)>) -> String {
    let logs: Vec<(u32, String)> = logs.into_iter().collect();
    let mut text = String::new();
    for (attempt, log) in &logs {
        if logs.len() > 1 {
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&format!("=== attempt {attempt} ===\n"));
        }
        text.push_str(log);
    }
    text
}

/// `train[2]` → (`train`, Some(2)); anything else is a whole step.
pub(crate) fn instance(step: &str) -> (&str, Option<usize>) {
    if let Some((name, rest)) = step.split_once('[')
        && let Some(Ok(i)) = rest.strip_suffix(']').map(str::parse::<usize>)
    {
        return (name, Some(i));
    }
    (step, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_embed_structured_values() {
        assert_eq!(
            json_list(["1", "{\"a\": 1}", "x\"y", "[oops"].into_iter()),
            r#"["1",{"a": 1},"x\"y","[oops"]"#
        );
        assert_eq!(
            json_list(["a", "{\"x\":1}"].into_iter()),
            r#"["a",{"x":1}]"#
        );
    }

    #[test]
    fn map_steps_follow_their_instances() {
        use StepPhase::*;
        let state = map_state([(0, Succeeded), (1, Running)]);
        assert_eq!((state.phase, state.attempt), (Running, 1));
        assert_eq!(map_state([(0, Pending)]).attempt, 0);
        let failed = map_state([(0, Failed), (1, Cancelled), (2, Failed)]);
        assert_eq!(failed.phase, Failed);
        assert_eq!(failed.message.as_deref(), Some("instance(s) 0, 2 failed"));
        assert_eq!(map_state([(0, Skipped), (1, Skipped)]).phase, Skipped);
        assert_eq!(map_state([(0, Skipped), (1, Succeeded)]).phase, Succeeded);
        let a = StepOutputs {
            result: Some("x".into()),
            parameters: [("p".to_owned(), "1".to_owned())].into_iter().collect(),
            ..StepOutputs::default()
        };
        let b = StepOutputs {
            result: Some("[1]".into()),
            ..StepOutputs::default()
        };
        let gathered = gather([&a, &b]);
        assert_eq!(gathered.result.as_deref(), Some(r#"["x",[1]]"#));
        assert_eq!(gathered.parameters.get("p").unwrap(), r#"["1",""]"#);
    }

    #[test]
    fn tails_and_attempts() {
        assert_eq!(tail("0123456789".into(), 4), "6789");
        assert_eq!(tail("aé".into(), 1), "");
        assert_eq!(join_attempts([(1, "one".to_owned())]), "one");
        assert_eq!(
            join_attempts([(1, "a".to_owned()), (2, "b\n".to_owned())]),
            "=== attempt 1 ===\na\n=== attempt 2 ===\nb\n"
        );
        assert_eq!(instance("train[2]"), ("train", Some(2)));
        assert_eq!(instance("train"), ("train", None));
        assert_eq!(instance("t[x]"), ("t[x]", None));
    }

    #[tokio::test]
    async fn only_news_is_reported() {
        let (tx, mut rx) = mpsc::channel(8);
        let done = StepState {
            phase: StepPhase::Succeeded,
            ..reused_state("a", ReuseStatus::Succeeded, &StepOutputs::default())
        };
        let mut r = Reporter::new(tx, vec![done]);
        assert!(!r.is_news("a", StepPhase::Failed, 2));
        assert!(!r.is_news("b", StepPhase::Pending, 0));
        let cached = reused_state("b", ReuseStatus::Cached, &StepOutputs::default());
        let kept = reused_state("a", ReuseStatus::Succeeded, &StepOutputs::default());
        assert!(r.send_reused(vec![kept, cached]).await);
        assert!(!r.is_news("b", StepPhase::Cached, 0));
        let mut ended = reused_state("c", ReuseStatus::Succeeded, &StepOutputs::default());
        ended.attempt = 1;
        r.running_first(&ended).await;
        drop(r);
        let mut got = Vec::new();
        while let Some(Update::Step(s)) = rx.recv().await {
            got.push((s.name, s.phase));
        }
        assert_eq!(
            got,
            [
                ("b".to_owned(), StepPhase::Cached),
                ("c".to_owned(), StepPhase::Running)
            ]
        );
    }
}
