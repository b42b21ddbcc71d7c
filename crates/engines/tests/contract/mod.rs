//! The engine contract, written once and run against every adapter.
//!
//! Each case is a public async function over a [`Harness`]; an adapter's
//! test file calls them (one `#[tokio::test]` each, or [`run_all`]). The
//! steps are POSIX shell and leave marker files in `Harness::scratch`, so
//! an adapter under test must run them where that directory is visible.
//! [`contract_cases!`] makes the tests; [`common`] holds what adapter
//! tests share besides the cases.

mod common;
mod live_logs;
mod secrets;
pub use common::*;
pub use live_logs::*;
pub use secrets::*;

use couler_engines::{EngineAdapter, RunOutcome, RunSpec, StepPhase, StepState, Update};
use couler_optimizer::{Facts, Pipeline, Plan, ReuseStatus, StepOutputs};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// How long any one run may take before a case gives up.
const RUN_LIMIT: Duration = Duration::from_secs(60);

pub struct Harness {
    /// A new adapter over the same backing state. Dropping every adapter
    /// and calling this again is a scheduler restart.
    pub engine: Box<dyn Fn() -> Arc<dyn EngineAdapter> + Send + Sync>,
    /// A directory the steps can read and write.
    pub scratch_root: PathBuf,
    pub tenant: String,
}

impl Harness {
    pub fn run_spec(&self, case: &str) -> RunSpec {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        RunSpec::new(
            self.tenant.clone(),
            format!("run_{case}_{}", NEXT.fetch_add(1, Ordering::Relaxed)),
            1,
        )
    }

    /// A fresh directory for one case's marker files.
    pub fn scratch(&self, case: &str) -> Scratch {
        use std::os::unix::fs::PermissionsExt;
        let dir = self.scratch_root.join(self.run_spec(case).run);
        std::fs::create_dir_all(&dir).expect("scratch directory");
        // Steps may run as another (unprivileged) user than the test.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777))
            .expect("scratch directory mode");
        Scratch(dir)
    }
}

/// Marker files of one case.
pub struct Scratch(pub PathBuf);

impl Scratch {
    /// The workflow text with `@S@` replaced by this directory.
    pub fn yaml(&self, text: &str) -> String {
        text.replace("@S@", &self.0.to_string_lossy())
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.0.join(file)
    }

    /// Lines in a marker file (0 when absent).
    pub fn lines(&self, file: &str) -> usize {
        std::fs::read_to_string(self.path(file))
            .map(|t| t.lines().count())
            .unwrap_or(0)
    }
}

/// One `#[tokio::test]` per case (the named ones, or all), each on a
/// harness of its own from `setup(case).await`, an async function of the
/// test file that returns `(guard, Harness)`.
#[allow(unused_macros)]
macro_rules! contract_cases {
    ($setup:ident) => {
        contract_cases!(
            $setup;
            diamond_passes_outputs_along_edges,
            coin_flip_skips_exactly_one_branch,
            artifacts_pass_by_content,
            map_fans_out_and_aggregates,
            a_failing_step_fails_the_run,
            exit_handler_sees_the_workflow_status,
            cancel_stops_a_running_step,
            timeout_kills_the_process_group,
            transient_failures_are_retried,
            user_errors_are_not_retried_on_transient,
            reused_steps_are_not_executed,
            resume_reattaches_a_running_step,
            resume_finishes_a_step_that_ended_unwatched,
            secrets_reach_the_steps_that_read_them,
            a_running_steps_log_is_read_as_it_grows,
        );
    };
    ($setup:ident; $($case:ident),* $(,)?) => {
        mod contract_suite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let (_guard, h) = super::$setup(stringify!($case)).await;
                    super::contract::$case(&h).await;
                }
            )*
        }
    };
}

/// Runs every case in turn.
pub async fn run_all(h: &Harness) {
    diamond_passes_outputs_along_edges(h).await;
    coin_flip_skips_exactly_one_branch(h).await;
    artifacts_pass_by_content(h).await;
    map_fans_out_and_aggregates(h).await;
    a_failing_step_fails_the_run(h).await;
    exit_handler_sees_the_workflow_status(h).await;
    cancel_stops_a_running_step(h).await;
    timeout_kills_the_process_group(h).await;
    transient_failures_are_retried(h).await;
    user_errors_are_not_retried_on_transient(h).await;
    reused_steps_are_not_executed(h).await;
    resume_reattaches_a_running_step(h).await;
    resume_finishes_a_step_that_ended_unwatched(h).await;
    secrets_reach_the_steps_that_read_them(h).await;
    a_running_steps_log_is_read_as_it_grows(h).await;
}

pub fn plan(yaml: &str) -> Arc<Plan> {
    plan_with(yaml, Facts::default())
}

pub fn plan_with(yaml: &str, facts: Facts) -> Arc<Plan> {
    let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml)
        .unwrap_or_else(|p| panic!("test workflow is invalid: {p}\n{yaml}"));
    Arc::new(
        Pipeline::default()
            .plan(workflow, &facts, |_, f| f())
            .expect("plan"),
    )
}

/// Every update of one run.
#[derive(Debug)]
pub struct Report {
    pub steps: Vec<StepState>,
    pub outcome: RunOutcome,
    pub message: Option<String>,
}

impl Report {
    /// The last update about a step (instance).
    pub fn last(&self, name: &str) -> &StepState {
        self.steps
            .iter()
            .rev()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("no update about {name}: {:#?}", self.steps))
    }

    pub fn phase(&self, name: &str) -> StepPhase {
        self.last(name).phase
    }

    pub fn result(&self, name: &str) -> &str {
        self.last(name)
            .outputs
            .result
            .as_deref()
            .unwrap_or_default()
    }

    /// Every update about one step, in order.
    pub fn of(&self, name: &str) -> Vec<&StepState> {
        self.steps.iter().filter(|s| s.name == name).collect()
    }

    /// Asserts the final phase of each named step.
    pub fn expect(&self, phases: &[(&str, StepPhase)]) {
        for (name, phase) in phases {
            assert_eq!(self.phase(name), *phase, "{name}: {:#?}", self.last(name));
        }
    }
}

/// Reads updates until `Finished`.
pub async fn finish(updates: &mut mpsc::Receiver<Update>, steps: Vec<StepState>) -> Report {
    finish_within(RUN_LIMIT, updates, steps).await
}

/// Reads updates until `Finished`, for at most `limit`.
pub async fn finish_within(
    limit: Duration,
    updates: &mut mpsc::Receiver<Update>,
    mut steps: Vec<StepState>,
) -> Report {
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, updates.recv()).await {
            Ok(Some(Update::Step(s))) => steps.push(s),
            Ok(Some(Update::Finished { outcome, message })) => {
                return Report {
                    steps,
                    outcome,
                    message,
                };
            }
            Ok(None) => panic!("updates ended without Finished: {steps:#?}"),
            Err(_) => panic!("run did not finish in {limit:?}: {steps:#?}"),
        }
    }
}

/// Reads updates until one satisfies `until`; returns all read so far.
pub async fn watch(
    updates: &mut mpsc::Receiver<Update>,
    until: impl Fn(&StepState) -> bool,
) -> Vec<StepState> {
    watch_within(RUN_LIMIT, updates, until).await
}

/// Reads updates until one satisfies `until`, for at most `limit`.
pub async fn watch_within(
    limit: Duration,
    updates: &mut mpsc::Receiver<Update>,
    until: impl Fn(&StepState) -> bool,
) -> Vec<StepState> {
    let mut seen = Vec::new();
    let deadline = Instant::now() + limit;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, updates.recv()).await {
            Ok(Some(Update::Step(s))) => {
                let done = until(&s);
                seen.push(s);
                if done {
                    return seen;
                }
            }
            other => panic!("stopped waiting at {other:?}: {seen:#?}"),
        }
    }
}

pub async fn run(
    engine: &dyn EngineAdapter,
    spec: &RunSpec,
    plan: Arc<Plan>,
    resume: Vec<StepState>,
) -> Report {
    let mut started = engine.start(spec, plan, resume).await.expect("start");
    finish(&mut started.updates, Vec::new()).await
}

/// Waits for a condition that some process brings about.
pub async fn eventually(what: &str, condition: impl Fn() -> bool) {
    // Generous: a loaded two-core machine can be slow to schedule the stop.
    let deadline = Instant::now() + Duration::from_secs(30);
    while !condition() {
        assert!(Instant::now() < deadline, "gave up waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Whether a live process runs exactly `argv` (found by its command line,
/// as steps may run in a pid namespace of their own).
pub fn running(argv: &[&str]) -> bool {
    let wanted: Vec<u8> = argv
        .iter()
        .flat_map(|a| [a.as_bytes(), b"\0"].concat())
        .collect();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .any(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline")).is_ok_and(|c| c == wanted)
                && process_alive(pid)
        })
}

/// Whether a process exists and is not a zombie.
pub fn process_alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

pub async fn diamond_passes_outputs_along_edges(h: &Harness) {
    let engine = (h.engine)();
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: diamond
steps:
  - name: a
    container: {image: alpine, command: [sh, -c, "echo A"]}
  - name: b
    container: {image: alpine, command: [sh, -c, "echo B got {{steps.a.outputs.result}}"]}
  - name: c
    container: {image: alpine, command: [sh, -c, "echo C got {{steps.a.outputs.result}}"]}
  - name: d
    container: {image: alpine, command: [sh, -c, "echo D joins {{steps.b.outputs.result}} and {{steps.c.outputs.result}}"]}
"#,
    );
    let r = run(&*engine, &h.run_spec("diamond"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    r.expect(&[
        ("a", StepPhase::Succeeded),
        ("b", StepPhase::Succeeded),
        ("c", StepPhase::Succeeded),
        ("d", StepPhase::Succeeded),
    ]);
    assert_eq!(r.result("b"), "B got A");
    assert_eq!(r.result("d"), "D joins B got A and C got A");
    // d started only after both b and c had finished.
    let position = |name: &str, phase| {
        r.steps
            .iter()
            .position(|s| s.name == name && s.phase == phase)
            .unwrap()
    };
    assert!(position("d", StepPhase::Running) > position("b", StepPhase::Succeeded));
    assert!(position("d", StepPhase::Running) > position("c", StepPhase::Succeeded));
}

pub async fn coin_flip_skips_exactly_one_branch(h: &Harness) {
    let engine = (h.engine)();
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: coin-flip
steps:
  - name: flip
    container: {image: alpine, command: [sh, -c, "if [ $(( $$ % 2 )) -eq 0 ]; then echo heads; else echo tails; fi"]}
  - name: heads
    when: [{input: "{{steps.flip.outputs.result}}", operator: eq, value: heads}]
    depends: [flip]
    container: {image: alpine, command: [sh, -c, "echo it was heads"]}
  - name: tails
    when: [{input: "{{steps.flip.outputs.result}}", operator: eq, value: tails}]
    depends: [flip]
    container: {image: alpine, command: [sh, -c, "echo it was tails"]}
  - name: celebrate-heads
    depends: [heads]
    container: {image: alpine, command: [sh, -c, "echo hooray"]}
"#,
    );
    let r = run(&*engine, &h.run_spec("coin"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let side = r.result("flip").to_owned();
    let (ran, skipped) = match side.as_str() {
        "heads" => ("heads", "tails"),
        "tails" => ("tails", "heads"),
        other => panic!("flip said {other:?}"),
    };
    r.expect(&[(ran, StepPhase::Succeeded), (skipped, StepPhase::Skipped)]);
    assert_eq!(r.result(ran), format!("it was {side}"));
    // A skip propagates to the skipped step's downstream steps.
    assert_eq!(r.phase("celebrate-heads"), r.phase("heads"));
    assert_eq!(r.of(skipped).len(), 1, "a skipped step is reported once");
}

pub async fn artifacts_pass_by_content(h: &Harness) {
    let engine = (h.engine)();
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: artifacts
steps:
  - name: produce
    container: {image: alpine, command: [sh, -c, "printf 'hello artifact\n' > {{outputs.artifacts.data.path}}"]}
    outputs: {artifacts: [{name: data, path: /tmp/data.txt}]}
  - name: consume
    inputs: {artifacts: [{name: data, from: "{{steps.produce.outputs.artifacts.data}}", path: /tmp/in.txt}]}
    container: {image: alpine, command: [sh, -c, "cat {{inputs.artifacts.data.path}}"]}
"#,
    );
    let r = run(&*engine, &h.run_spec("artifacts"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let stored = &r.last("produce").outputs.artifacts.get("data").unwrap();
    assert_eq!(
        stored.digest,
        blake3::hash(b"hello artifact\n").to_hex().to_string()
    );
    assert_eq!(stored.size, 15);
    assert_eq!(r.result("consume"), "hello artifact");
}

pub async fn map_fans_out_and_aggregates(h: &Harness) {
    fan_out(h, "{items: [1, 2, 3], parallelism: 2}").await;
}

pub async fn a_failing_step_fails_the_run(h: &Harness) {
    let s = h.scratch("failing");
    let engine = (h.engine)();
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: failing
steps:
  - name: ok
    container: {image: alpine, command: [sh, -c, "echo fine"]}
  - name: bad
    depends: [ok]
    container: {image: alpine, command: [sh, -c, "echo oops >&2; exit 3"]}
  - name: after
    depends: [bad]
    container: {image: alpine, command: [sh, -c, "touch @S@/after-ran"]}
"#,
    ));
    let r = run(&*engine, &h.run_spec("failing"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    assert!(
        r.message.as_deref().unwrap_or_default().contains("bad"),
        "{:?}",
        r.message
    );
    r.expect(&[
        ("ok", StepPhase::Succeeded),
        ("bad", StepPhase::Failed),
        ("after", StepPhase::Cancelled),
    ]);
    assert_eq!(r.last("after").message.as_deref(), Some("upstream failed"));
    assert!(!s.path("after-ran").exists());
}

pub async fn exit_handler_sees_the_workflow_status(h: &Harness) {
    let engine = (h.engine)();
    let yaml = r#"
apiVersion: couler.dev/v1alpha1
name: with-exit-handler
parameters: [{name: code, default: "0"}]
steps:
  - name: work
    container: {image: alpine, command: [sh, -c, "exit {{workflow.parameters.code}}"]}
onExit:
  - name: notify
    container: {image: alpine, command: [sh, -c, "echo status={{workflow.status}}"]}
"#;
    for (code, outcome, status) in [
        ("0", RunOutcome::Succeeded, "succeeded"),
        ("1", RunOutcome::Failed, "failed"),
    ] {
        let facts = Facts {
            parameters: BTreeMap::from([("code".to_owned(), code.to_owned())]),
            ..Default::default()
        };
        let r = run(
            &*engine,
            &h.run_spec("exit"),
            plan_with(yaml, facts),
            vec![],
        )
        .await;
        assert_eq!(r.outcome, outcome, "{r:#?}");
        assert_eq!(r.phase("notify"), StepPhase::Succeeded);
        assert_eq!(r.result("notify"), format!("status={status}"));
    }
}

pub async fn cancel_stops_a_running_step(h: &Harness) {
    let engine = (h.engine)();
    let spec = h.run_spec("cancel");
    let (mut started, seen) = start_until_running(&*engine, &spec, plan(CANCEL_ME), "long").await;
    let asked = Instant::now();
    engine
        .cancel(&spec, &started.engine_ref)
        .await
        .expect("cancel");
    let r = finish(&mut started.updates, seen).await;
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "cancel took {:?}",
        asked.elapsed()
    );
    assert_eq!(r.outcome, RunOutcome::Cancelled);
    r.expect(&[
        ("long", StepPhase::Cancelled),
        ("next", StepPhase::Cancelled),
        ("notify", StepPhase::Succeeded),
    ]);
    assert_eq!(r.result("notify"), "status=cancelled");
}

pub async fn timeout_kills_the_process_group(h: &Harness) {
    let s = h.scratch("timeout");
    let engine = (h.engine)();
    // A duration no other process sleeps, to find the child by.
    let nap = format!(
        "60.{}{}",
        std::process::id(),
        h.run_spec("timeout").run.len()
    );
    let plan = plan(&s.yaml(
        &r#"
apiVersion: couler.dev/v1alpha1
name: too-slow
steps:
  - name: slow
    timeout: 1s
    container: {image: alpine, command: [sh, -c, "sleep @NAP@ & echo started > @S@/child.pid; wait"]}
"#
        .replace("@NAP@", &nap),
    ));
    let r = run(&*engine, &h.run_spec("timeout"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    let slow = r.last("slow");
    assert_eq!(slow.phase, StepPhase::Failed);
    assert!(
        slow.message
            .as_deref()
            .unwrap_or_default()
            .contains("timed out"),
        "{slow:?}"
    );
    assert!(s.path("child.pid").exists(), "the step started its child");
    eventually("the background child to die", || !running(&["sleep", &nap])).await;
}

pub async fn transient_failures_are_retried(h: &Harness) {
    let s = h.scratch("flaky");
    let engine = (h.engine)();
    // The first attempt dies from SIGKILL (as an OOM kill would).
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: flaky
steps:
  - name: flaky
    retry: {limit: 2, on: transient}
    script:
      image: alpine
      command: [sh]
      source: |
        echo run >> @S@/flaky.count
        if [ -e @S@/flaky.marker ]; then echo recovered; else touch @S@/flaky.marker; kill -9 $$; fi
"#,
    ));
    let r = run(&*engine, &h.run_spec("flaky"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let last = r.last("flaky");
    assert_eq!(last.phase, StepPhase::Succeeded);
    assert_eq!(last.attempt, 2);
    assert_eq!(r.result("flaky"), "recovered");
    let running: Vec<u32> = r
        .of("flaky")
        .iter()
        .filter(|s| s.phase == StepPhase::Running)
        .map(|s| s.attempt)
        .collect();
    assert!(running.contains(&1) && running.contains(&2), "{running:?}");
    assert_eq!(s.lines("flaky.count"), 2);
}

pub async fn user_errors_are_not_retried_on_transient(h: &Harness) {
    let s = h.scratch("broken");
    let engine = (h.engine)();
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: broken
steps:
  - name: broken
    retry: {limit: 3, on: transient}
    container: {image: alpine, command: [sh, -c, "echo run >> @S@/broken.count; exit 1"]}
"#,
    ));
    let r = run(&*engine, &h.run_spec("broken"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    let last = r.last("broken");
    assert_eq!(last.phase, StepPhase::Failed);
    assert_eq!(last.attempt, 1);
    assert_eq!(s.lines("broken.count"), 1);
}

pub async fn reused_steps_are_not_executed(h: &Harness) {
    let s = h.scratch("reuse");
    let engine = (h.engine)();
    let yaml = s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: reuse
steps:
  - name: a
    container: {image: alpine, command: [sh, -c, "touch @S@/a-ran; echo fresh"]}
  - name: c
    container: {image: alpine, command: [sh, -c, "touch @S@/c-ran; echo fresh"]}
  - name: b
    container: {image: alpine, command: [sh, -c, "echo b saw {{steps.a.outputs.result}} {{steps.c.outputs.result}}"]}
"#,
    );
    let kept = |result: &str| StepOutputs {
        result: Some(result.into()),
        ..Default::default()
    };
    let facts = Facts {
        earlier: BTreeMap::from([
            ("a".to_owned(), (ReuseStatus::Succeeded, kept("kept"))),
            ("c".to_owned(), (ReuseStatus::Cached, kept("cached"))),
        ]),
        ..Default::default()
    };
    let r = run(
        &*engine,
        &h.run_spec("reuse"),
        plan_with(&yaml, facts),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    r.expect(&[
        ("a", StepPhase::Succeeded),
        ("c", StepPhase::Cached),
        ("b", StepPhase::Succeeded),
    ]);
    assert_eq!(r.of("a").len(), 1, "a reused step is reported once");
    assert_eq!(r.result("a"), "kept");
    assert_eq!(r.result("b"), "b saw kept cached");
    assert!(!s.path("a-ran").exists());
    assert!(!s.path("c-ran").exists());
}

const RESUME: &str = r#"
apiVersion: couler.dev/v1alpha1
name: resume
steps:
  - name: first
    container: {image: alpine, command: [sh, -c, "echo run >> @S@/first.count; while [ ! -e @S@/go ]; do sleep 0.05; done; echo done-first; touch @S@/first.done"]}
  - name: second
    container: {image: alpine, command: [sh, -c, "echo run >> @S@/second.count; echo second saw {{steps.first.outputs.result}}"]}
"#;

/// Starts `RESUME`, waits for `first` to run, then drops the adapter.
async fn start_and_crash(h: &Harness, s: &Scratch, spec: &RunSpec) -> Vec<StepState> {
    let engine = (h.engine)();
    let mut started = engine
        .start(spec, plan(&s.yaml(RESUME)), vec![])
        .await
        .expect("start");
    let seen = watch(&mut started.updates, |s| {
        s.name == "first" && s.phase == StepPhase::Running
    })
    .await;
    drop(started);
    drop(engine);
    seen
}

/// The last state of each step, as a scheduler would have stored it.
pub fn last_states(seen: Vec<StepState>) -> Vec<StepState> {
    let mut last = BTreeMap::new();
    for s in seen {
        last.insert(s.name.clone(), s);
    }
    last.into_values().collect()
}

pub async fn resume_reattaches_a_running_step(h: &Harness) {
    let s = h.scratch("resume-running");
    let spec = h.run_spec("resume-running");
    let seen = start_and_crash(h, &s, &spec).await;
    let resume = last_states(seen);
    assert!(resume[0].engine_ref.is_some(), "{resume:?}");

    let engine = (h.engine)();
    let mut started = engine
        .start(&spec, plan(&s.yaml(RESUME)), resume)
        .await
        .expect("start again");
    // Still running under the new adapter; let it finish now.
    std::fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut started.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    r.expect(&[
        ("first", StepPhase::Succeeded),
        ("second", StepPhase::Succeeded),
    ]);
    assert_eq!(s.lines("first.count"), 1, "first ran twice");
    assert_eq!(s.lines("second.count"), 1);
    assert_eq!(r.result("second"), "second saw done-first");
}

pub async fn resume_finishes_a_step_that_ended_unwatched(h: &Harness) {
    let s = h.scratch("resume-ended");
    let spec = h.run_spec("resume-ended");
    let seen = start_and_crash(h, &s, &spec).await;
    std::fs::write(s.path("go"), b"").unwrap();
    eventually("first to end unwatched", || s.path("first.done").exists()).await;

    let engine = (h.engine)();
    let r = run(&*engine, &spec, plan(&s.yaml(RESUME)), last_states(seen)).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    r.expect(&[
        ("first", StepPhase::Succeeded),
        ("second", StepPhase::Succeeded),
    ]);
    assert_eq!(r.result("first"), "done-first");
    assert_eq!(s.lines("first.count"), 1, "first ran twice");
    assert_eq!(r.result("second"), "second saw done-first");
}
