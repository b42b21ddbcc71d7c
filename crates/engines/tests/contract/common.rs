//! What adapter tests share besides the contract's cases: scratch
//! directories, the examples and what every engine must make of them, and
//! the logs of a talking and a failing step.

// Each test binary uses some of these.
#![allow(dead_code)]

use super::{Harness, Report, finish, plan, run, watch};
use couler_engines::{EngineAdapter, RunOutcome, RunSpec, Started, StepPhase, StepState};
use couler_optimizer::Plan;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

/// A fresh directory, removed when the test ends (kept for a look when
/// it failed).
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// In Cargo's scratch space for integration tests, not `/tmp`: pods
    /// of the fake kubelets see a private `/tmp` of their own.
    pub fn new(name: &str) -> TempDir {
        TempDir::under(Path::new(env!("CARGO_TARGET_TMPDIR")), name)
    }

    pub fn under(base: &Path, name: &str) -> TempDir {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = base.join(format!(
            "couler-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test directory");
        TempDir(dir)
    }

    pub fn join(&self, path: &str) -> PathBuf {
        self.0.join(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for a look", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// `examples/<name>.yaml`, planned.
pub fn example(name: &str) -> Arc<Plan> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../examples/{name}.yaml"));
    plan(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("no example {name}: {e}")))
}

/// Runs the diamond example: `d` joins what `b` and `c` made of `a`'s.
pub async fn diamond_example(engine: &dyn EngineAdapter, spec: &RunSpec) -> Report {
    let r = run(engine, spec, example("diamond"), vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("a"), "A says hello");
    assert_eq!(
        r.result("d"),
        "D joins: B got: A says hello / C got: A says hello"
    );
    r
}

/// Runs the coin-flip example: exactly one side runs, the other is
/// skipped. Returns the report and the side that ran.
pub async fn coin_flip_example(engine: &dyn EngineAdapter, spec: &RunSpec) -> (Report, String) {
    let r = run(engine, spec, example("coin-flip"), vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let side = r.result("flip").to_owned();
    let other = other_side(&side);
    r.expect(&[(&side, StepPhase::Succeeded), (other, StepPhase::Skipped)]);
    assert_eq!(r.result(&side), format!("it was {side}"));
    (r, side)
}

/// The side of the coin that did not come up.
pub fn other_side(side: &str) -> &'static str {
    match side {
        "heads" => "tails",
        "tails" => "heads",
        s => panic!("flip said {s:?}"),
    }
}

/// `talk` writes to both streams, then `fail` fails with exit code 3.
pub const TALK_AND_FAIL: &str = r#"
apiVersion: couler.dev/v1alpha1
name: talk
steps:
  - name: talk
    container: {image: x, command: [sh, -c, "echo out; echo err >&2"]}
  - name: fail
    depends: [talk]
    container: {image: x, command: [sh, -c, "echo bad >&2; exit 3"]}
"#;

/// Runs [`TALK_AND_FAIL`] on an engine whose steps are pods (one stream
/// of logs): terminal updates carry the logs, `logs` serves them to the
/// run that owns them and to no other (`stranger`).
pub async fn pod_logs(engine: &dyn EngineAdapter, spec: &RunSpec, stranger: &RunSpec) -> Report {
    let mut started = engine
        .start(spec, plan(TALK_AND_FAIL), vec![])
        .await
        .expect("start");
    let r = finish(&mut started.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Failed, "{r:#?}");
    assert_eq!(r.last("talk").logs.as_deref(), Some("out\nerr\n"));
    assert_eq!(r.last("fail").metrics.unwrap().exit_code, Some(3));
    let at = started.engine_ref.as_str();
    assert_eq!(engine.logs(spec, at, "talk").await.unwrap(), "out\nerr\n");
    assert_eq!(engine.logs(spec, at, "fail").await.unwrap(), "bad\n");
    assert!(engine.logs(spec, at, "nope").await.is_err());
    assert!(engine.logs(stranger, at, "talk").await.is_err());
    r
}

/// `wait` counts its runs in `wait.count`, waits for the file `go`, then
/// says `waited`.
pub const WAIT_FOR_GO: &str = r#"
apiVersion: couler.dev/v1alpha1
name: reattach
steps:
  - name: wait
    container: {image: alpine, command: [sh, -c, "echo run >> @S@/wait.count; while [ ! -e @S@/go ]; do sleep 0.05; done; echo waited"]}
"#;

/// `long` sleeps a minute, `next` waits for it; the exit handler `notify`
/// says the workflow's status.
pub const CANCEL_ME: &str = r#"
apiVersion: couler.dev/v1alpha1
name: cancel-me
steps:
  - name: long
    container: {image: alpine, command: [sleep, "60"]}
  - name: next
    depends: [long]
    container: {image: alpine, command: ["true"]}
onExit:
  - name: notify
    container: {image: alpine, command: [sh, -c, "echo status={{workflow.status}}"]}
"#;

/// Starts a run and reads its updates until `step` runs; returns the run
/// and the updates read.
pub async fn start_until_running(
    engine: &dyn EngineAdapter,
    spec: &RunSpec,
    plan: Arc<Plan>,
    step: &str,
) -> (Started, Vec<StepState>) {
    let mut started = engine.start(spec, plan, vec![]).await.expect("start");
    let seen = watch(&mut started.updates, |s| {
        s.name == step && s.phase == StepPhase::Running
    })
    .await;
    (started, seen)
}

/// Runs `double` over three items with `map: <map>`, and `show` over
/// what `double` made: instances and steps succeed, outputs gathered.
pub async fn fan_out(h: &Harness, map: &str) -> Report {
    let engine = (h.engine)();
    let plan = plan(
        &r#"
apiVersion: couler.dev/v1alpha1
name: fan-out
steps:
  - name: double
    map: @MAP@
    container: {image: alpine, command: [sh, -c, "echo $(({{item}} * 10)) > {{outputs.parameters.value.path}}; echo item {{item}}"]}
    outputs: {parameters: [{name: value, path: /tmp/value}]}
  - name: show
    map: {from: "{{steps.double.outputs.parameters.value}}"}
    container: {image: alpine, command: [sh, -c, "echo got {{item}}"]}
"#
        .replace("@MAP@", map),
    );
    let r = run(&*engine, &h.run_spec("map"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for (i, value) in ["10", "20", "30"].iter().enumerate() {
        let instance = r.last(&format!("double[{i}]"));
        assert_eq!(instance.phase, StepPhase::Succeeded);
        assert_eq!(instance.outputs.parameters.get("value").unwrap(), *value);
        assert_eq!(r.result(&format!("show[{i}]")), format!("got {value}"));
    }
    let double = r.last("double");
    assert_eq!(double.phase, StepPhase::Succeeded);
    assert_eq!(
        double.outputs.parameters.get("value").unwrap(),
        r#"["10","20","30"]"#
    );
    assert_eq!(
        double.outputs.result.as_deref(),
        Some(r#"["item 1","item 2","item 3"]"#)
    );
    assert_eq!(r.result("show"), r#"["got 10","got 20","got 30"]"#);
    r
}
