//! The local engine under a run's deadline (`EngineAdapter::expire`): the
//! main DAG stops, the run fails with the reason, and exit handlers still
//! run, seeing `{{workflow.status}}` failed; and training jobs with
//! per-role commands run their leading role's.

#[allow(dead_code)]
mod contract;
mod local_setup;

use contract::{finish, plan, run, watch};
use couler_engines::{RunOutcome, StepPhase};
use local_setup::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_run_fails_and_its_exit_handlers_see_it_failed() {
    let (_tmp, h) = setup("deadline");
    let engine = (h.engine)();
    let slow = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: slow
timeout: 1h
steps:
  - {name: work, container: {image: x, command: [sleep, "60"]}}
  - {name: later, depends: [work], container: {image: x, command: ["true"]}}
onExit:
  - {name: failed, when: [{input: "{{workflow.status}}", operator: eq, value: failed}], container: {image: x, command: [echo, saw-failed]}}
  - {name: cancelled, when: [{input: "{{workflow.status}}", operator: eq, value: cancelled}], container: {image: x, command: [echo, saw-cancelled]}}
"#,
    );
    let spec = h.run_spec("deadline");
    let mut started = engine.start(&spec, slow, vec![]).await.unwrap();
    let seen = watch(&mut started.updates, |s| {
        s.name == "work" && s.phase == StepPhase::Running
    })
    .await;
    let reason = "deadline exceeded after 1h";
    engine
        .expire(&spec, &started.engine_ref, reason)
        .await
        .unwrap();
    let r = finish(&mut started.updates, seen).await;
    assert_eq!(r.outcome, RunOutcome::Failed, "{r:#?}");
    assert_eq!(r.message.as_deref(), Some(reason));
    r.expect(&[
        ("work", StepPhase::Cancelled),
        ("later", StepPhase::Cancelled),
        ("failed", StepPhase::Succeeded),
        ("cancelled", StepPhase::Skipped),
    ]);
    assert_eq!(r.result("failed"), "saw-failed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_job_runs_its_leading_roles_command() {
    let (_tmp, h) = setup("job-roles");
    let plan_of = plan;
    let plan = plan_of(
        r#"
apiVersion: couler.dev/v1alpha1
name: roles
steps:
  - name: train
    job:
      framework: tensorflow
      image: tf
      command: [sh, -c, "echo job"]
      replicas:
        chief: {count: 1, command: [sh, -c, "echo chief $RANK"]}
        worker: {count: 2, command: [sh, -c, "echo worker"]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("roles"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("train"), "chief 0");
    let message = r.last("train").message.clone().unwrap_or_default();
    assert!(message.contains("running the chief's command"), "{message}");

    let mpi = plan_of(
        r#"
apiVersion: couler.dev/v1alpha1
name: mpi
steps:
  - name: launch
    job:
      framework: mpi
      image: mpi
      replicas:
        launcher: {count: 1}
        worker: {count: 2, command: [sh, -c, "echo worker"]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("mpi"), mpi, vec![]).await;
    // An MPI launcher without a command: the step fails, saying why.
    let launch = r.last("launch");
    assert_eq!(launch.phase, StepPhase::Failed, "{launch:?}");
    let why = launch.message.clone().unwrap_or_default();
    assert!(why.contains("launcher has no command"), "{why}");
}
