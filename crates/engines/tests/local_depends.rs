//! `depends` expressions on the local engine: which steps run, which are
//! skipped and why, and how the run ends, for the shapes the Couler SDK's
//! programs emit (`integration_tests/dag_depends_example.py`,
//! `examples/depends.py`). Outcomes follow Argo's rule for DAGs: a failure
//! fails the run only when it reaches a last step through steps that did
//! not run. The same programs as the Argo the SDK emits, imported and run,
//! give Argo's step statuses and outcome.

mod argo_depends;
#[allow(dead_code, unused_macros)]
mod contract;
mod local_setup;

use contract::{Report, plan, run};
use couler_engines::{RunOutcome, StepPhase};
use local_setup::setup;

async fn run_yaml(name: &str, yaml: &str) -> Report {
    let (_tmp, h) = setup(name);
    run(&*(h.engine)(), &h.run_spec(name), plan(yaml), vec![]).await
}

const PASS: &str = r#"container: {image: alpine, command: [sh, -c, "exit 0"]}"#;
const FAIL: &str = r#"container: {image: alpine, command: [sh, -c, "exit 1"]}"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dag_depends_example_handles_the_failure_and_succeeds() {
    let yaml = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: dag-depends
steps:
  - {{name: a, {PASS}}}
  - {{name: b, depends: [a], {PASS}}}
  - {{name: c, depends: [a], {FAIL}}}
  - {{name: should-execute-1, depends: ["a && (c.succeeded || c.failed)"], {PASS}}}
  - {{name: should-execute-2, depends: ["b || c"], {PASS}}}
  - {{name: should-not-execute, depends: ["b && c"], {PASS}}}
  - {{name: should-execute-3, depends: ["should-execute-2.succeeded || should-not-execute"], {PASS}}}
"#
    );
    let r = run_yaml("dag-depends", &yaml).await;
    r.expect(&[
        ("a", StepPhase::Succeeded),
        ("b", StepPhase::Succeeded),
        ("c", StepPhase::Failed),
        ("should-execute-1", StepPhase::Succeeded),
        ("should-execute-2", StepPhase::Succeeded),
        ("should-not-execute", StepPhase::Skipped),
        ("should-execute-3", StepPhase::Succeeded),
    ]);
    assert_eq!(
        r.last("should-not-execute").message.as_deref(),
        Some("`depends` entry `b && c` is false (b succeeded, c failed)")
    );
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{:?}", r.message);
}

/// `examples/depends.py` with the coin flips fixed: each task runs only if
/// the one before failed; `allfail` if all failed, `anysucceeded` if one
/// succeeded.
fn depends_py(outcomes: [bool; 4]) -> String {
    let mut yaml = String::from("apiVersion: couler.dev/v1alpha1\nname: depends\nsteps:\n");
    for (i, ok) in outcomes.iter().enumerate() {
        let body = if *ok { PASS } else { FAIL };
        let depends = match i {
            0 => String::new(),
            _ => format!("depends: [task{i}.failed], "),
        };
        yaml += &format!("  - {{name: task{}, {depends}{body}}}\n", i + 1);
    }
    yaml += &format!(
        "  - {{name: allfail, depends: [task1.failed && task2.failed && task3.failed && task4.failed], {PASS}}}\n"
    );
    yaml += &format!(
        "  - {{name: anysucceeded, depends: [task1.succeeded || task2.succeeded || task3.succeeded || task4.succeeded], {PASS}}}\n"
    );
    yaml
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depends_py_succeeds_when_the_first_task_does() {
    let r = run_yaml("depends-ok", &depends_py([true, true, true, true])).await;
    r.expect(&[
        ("task1", StepPhase::Succeeded),
        ("task2", StepPhase::Skipped),
        ("task3", StepPhase::Skipped),
        ("task4", StepPhase::Skipped),
        ("allfail", StepPhase::Skipped),
        ("anysucceeded", StepPhase::Succeeded),
    ]);
    assert_eq!(
        r.last("task3").message.as_deref(),
        Some("`depends` entry `task2.failed` is false (task2 skipped)")
    );
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{:?}", r.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depends_py_fails_when_an_unhandled_failure_reaches_a_last_step() {
    // task1 fails, task2 succeeds: the failure branch ran and anysucceeded
    // runs, but allfail, a last step, did not run and hangs off task1.
    let r = run_yaml("depends-mixed", &depends_py([false, true, true, true])).await;
    r.expect(&[
        ("task1", StepPhase::Failed),
        ("task2", StepPhase::Succeeded),
        ("task3", StepPhase::Skipped),
        ("task4", StepPhase::Skipped),
        ("allfail", StepPhase::Skipped),
        ("anysucceeded", StepPhase::Succeeded),
    ]);
    assert_eq!(r.outcome, RunOutcome::Failed);
    assert_eq!(
        r.message.as_deref(),
        Some("step `task1` failed: exit code 1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depends_py_when_every_task_fails() {
    let r = run_yaml("depends-all-fail", &depends_py([false; 4])).await;
    r.expect(&[
        ("task1", StepPhase::Failed),
        ("task2", StepPhase::Failed),
        ("task3", StepPhase::Failed),
        ("task4", StepPhase::Failed),
        ("allfail", StepPhase::Succeeded),
        ("anysucceeded", StepPhase::Skipped),
    ]);
    // anysucceeded did not run and hangs off the failed tasks.
    assert_eq!(r.outcome, RunOutcome::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handled_failure_lets_the_run_succeed_and_plain_failures_still_stop_it() {
    let handled = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: handled
steps:
  - {{name: train, {FAIL}}}
  - {{name: cleanup, depends: [train.failed], {PASS}}}
  - {{name: report, depends: [cleanup], {PASS}}}
  - {{name: publish, depends: ["train.succeeded || train.skipped"], {PASS}}}
  - {{name: notify, depends: ["publish.any"], {PASS}}}
"#
    );
    let r = run_yaml("handled", &handled).await;
    r.expect(&[
        ("train", StepPhase::Failed),
        ("cleanup", StepPhase::Succeeded),
        ("report", StepPhase::Succeeded),
        ("publish", StepPhase::Skipped),
        ("notify", StepPhase::Succeeded),
    ]);
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{:?}", r.message);

    // The same failure with only plain dependencies: fail-fast as always.
    let plain = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: plain
steps:
  - {{name: train, {FAIL}}}
  - {{name: report, depends: [train], {PASS}}}
"#
    );
    let r = run_yaml("plain", &plain).await;
    r.expect(&[
        ("train", StepPhase::Failed),
        ("report", StepPhase::Cancelled),
    ]);
    assert_eq!(r.last("report").message.as_deref(), Some("upstream failed"));
    assert_eq!(r.outcome, RunOutcome::Failed);
}

/// Imports an Argo workflow, which must lose nothing that changes what
/// runs, and runs it.
async fn import_and_run(name: &str, argo: &str) -> Report {
    let imported = couler_engines::import::argo(argo).expect("imports");
    let changing: Vec<String> = (imported.unsupported.iter())
        .filter(|u| u.changes_run())
        .map(ToString::to_string)
        .collect();
    assert!(changing.is_empty(), "{changing:?}");
    let ir = serde_json::to_string(&imported.workflow).expect("IR as JSON");
    run_yaml(name, &ir).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_imported_dag_depends_example_runs_as_in_argo() {
    let r = import_and_run("argo-dag-depends", &argo_depends::dag_depends_example()).await;
    r.expect(&[
        ("a", StepPhase::Succeeded),
        ("b", StepPhase::Succeeded),
        ("c", StepPhase::Failed),
        ("should-execute-1", StepPhase::Succeeded),
        ("should-execute-2", StepPhase::Succeeded),
        // Argo: Omitted.
        ("should-not-execute", StepPhase::Skipped),
        ("should-execute-3", StepPhase::Succeeded),
    ]);
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{:?}", r.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_imported_depends_program_runs_as_in_argo() {
    use StepPhase::{Failed as F, Skipped as S, Succeeded as Ok};
    // (exit codes of task1..4, phases of task1..4, allfail, anysucceeded,
    // the run's outcome by Argo's rule)
    let cases = [
        ([0, 0, 0, 0], [Ok, S, S, S], S, Ok, RunOutcome::Succeeded),
        ([1, 0, 0, 0], [F, Ok, S, S], S, Ok, RunOutcome::Failed),
        ([1, 1, 1, 1], [F, F, F, F], Ok, S, RunOutcome::Failed),
    ];
    for (i, (codes, tasks, allfail, any, outcome)) in cases.into_iter().enumerate() {
        let r = import_and_run(
            &format!("argo-depends-{i}"),
            &argo_depends::depends_py(codes),
        )
        .await;
        let mut expected: Vec<(String, StepPhase)> = (tasks.iter().enumerate())
            .map(|(t, p)| (format!("task{}", t + 1), *p))
            .collect();
        expected.push(("allfail".into(), allfail));
        expected.push(("anysucceeded".into(), any));
        let expected: Vec<(&str, StepPhase)> =
            expected.iter().map(|(n, p)| (n.as_str(), *p)).collect();
        r.expect(&expected);
        assert_eq!(r.outcome, outcome, "{codes:?}: {:?}", r.message);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_imported_exit_handler_runs_its_second_group_after_a_skipped_first() {
    let r = import_and_run("argo-exit-failed", &argo_depends::exit_handler(1)).await;
    r.expect(&[
        ("flip-coin-167", StepPhase::Failed),
        ("heads-637", StepPhase::Skipped),
        ("tails-637", StepPhase::Succeeded),
    ]);
    assert_eq!(r.outcome, RunOutcome::Failed);

    let r = import_and_run("argo-exit-succeeded", &argo_depends::exit_handler(0)).await;
    r.expect(&[
        ("flip-coin-167", StepPhase::Succeeded),
        ("heads-637", StepPhase::Succeeded),
        ("tails-637", StepPhase::Skipped),
    ]);
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{:?}", r.message);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_imported_step_group_runs_after_a_skip_and_not_after_a_failure() {
    let r = import_and_run("argo-steps-pass", &argo_depends::steps_after_a_skip(0)).await;
    r.expect(&[
        ("heads", StepPhase::Skipped),
        ("tails", StepPhase::Succeeded),
        ("after", StepPhase::Succeeded),
    ]);
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{:?}", r.message);

    // Argo ends the template at the failed group; `after` never runs.
    let r = import_and_run("argo-steps-fail", &argo_depends::steps_after_a_skip(1)).await;
    r.expect(&[
        ("heads", StepPhase::Skipped),
        ("tails", StepPhase::Failed),
        ("after", StepPhase::Skipped),
    ]);
    assert_eq!(r.outcome, RunOutcome::Failed);
}
