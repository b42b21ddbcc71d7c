//! The Tekton adapter against a fake Kubernetes API server with the fake
//! Tekton controller (`couler_fakes::tekton`): the shared contract, the
//! examples, logs and re-attaching.

// Only the cases Tekton can meet are called (see below).
#[allow(dead_code)]
#[macro_use]
mod contract;

use contract::{Harness, TempDir, finish, plan, run, watch};
use couler_engines::k8s::KubeConfig;
use couler_engines::tekton::{TektonAdapter, TektonConfig};
use couler_engines::{EngineAdapter, EngineError, RunOutcome, RunSpec, StepPhase};
use couler_fakes::kube::Cluster;
use couler_fakes::tekton::{pipelineruns, taskruns};
use std::sync::Arc;

/// A fake cluster with the Tekton controller; stops both when dropped.
struct Fixture {
    cluster: Cluster,
    controller: tokio::task::JoinHandle<()>,
    _dir: TempDir,
}

impl Drop for Fixture {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

const TENANT: &str = "tnt_tekton";

async fn setup(name: &str) -> (Fixture, Harness) {
    let root = TempDir::new(&format!("tekton-{name}"));
    let cluster = Cluster::start(root.join("cluster"))
        .await
        .expect("fake cluster");
    let controller = couler_fakes::tekton::spawn(&cluster);
    let url = cluster.url();
    let h = Harness {
        engine: Box::new(move || Arc::new(adapter(&url)) as Arc<dyn EngineAdapter>),
        scratch_root: root.join("scratch"),
        tenant: TENANT.into(),
    };
    (
        Fixture {
            cluster,
            controller,
            _dir: root,
        },
        h,
    )
}

fn adapter(url: &str) -> TektonAdapter {
    TektonAdapter::new(TektonConfig::new(KubeConfig::at(url))).expect("adapter")
}

// The contract's cases Tekton cannot meet, and what is tested instead:
// - artifacts_pass_by_content: artifacts stay in the run's workspace (a
//   PVC); no digest or size reaches the Kubernetes API.
// - map_fans_out_and_aggregates: `map.parallelism` below the item count
//   is refused (a matrix cannot be bounded): matrices_fan_out_and_gather.
// - cancel_stops_a_running_step: Tekton's `$(tasks.status)` is Failed
//   after a cancel, so exit handlers see `failed`, not `cancelled`:
//   cancel_runs_finally_and_reports_tektons_status.
// - transient_failures_are_retried, user_errors_are_not_retried_on_transient:
//   `retry.on: transient` is refused (Tekton retries after any failure):
//   refused_features_are_unsupported, failed_attempts_are_retried_with_new_pods.
contract_cases!(
    setup;
    diamond_passes_outputs_along_edges,
    coin_flip_skips_exactly_one_branch,
    a_failing_step_fails_the_run,
    exit_handler_sees_the_workflow_status,
    timeout_kills_the_process_group,
    reused_steps_are_not_executed,
    resume_reattaches_a_running_step,
    resume_finishes_a_step_that_ended_unwatched,
    secrets_reach_the_steps_that_read_them,
    a_running_steps_log_is_read_as_it_grows,
);

/// The cases this engine meets, one after another on one cluster.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_supported_contract_runs_on_one_engine() {
    let (_fixture, h) = setup("supported").await;
    contract::diamond_passes_outputs_along_edges(&h).await;
    contract::coin_flip_skips_exactly_one_branch(&h).await;
    contract::a_failing_step_fails_the_run(&h).await;
    contract::exit_handler_sees_the_workflow_status(&h).await;
    contract::timeout_kills_the_process_group(&h).await;
    contract::reused_steps_are_not_executed(&h).await;
    contract::resume_reattaches_a_running_step(&h).await;
    contract::resume_finishes_a_step_that_ended_unwatched(&h).await;
    contract::secrets_reach_the_steps_that_read_them(&h).await;
    contract::a_running_steps_log_is_read_as_it_grows(&h).await;
}

// ---- what Tekton does where the contract asks more --------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refused_features_are_unsupported() {
    let (_fixture, h) = setup("refused").await;
    let engine = (h.engine)();
    for (yaml, feature) in [
        (
            "  - name: s\n    retry: {limit: 2, on: transient}\n    container: {image: x, command: [\"true\"]}\n",
            "retry.on: transient",
        ),
        (
            "  - name: s\n    map: {items: [1, 2, 3], parallelism: 2}\n    container: {image: x, command: [echo, \"{{item}}\"]}\n",
            "map.parallelism: 2",
        ),
    ] {
        let plan = plan(&format!(
            "apiVersion: couler.dev/v1alpha1\nname: refused\nsteps:\n{yaml}"
        ));
        match engine.start(&h.run_spec("refused"), plan, vec![]).await {
            Err(EngineError::Unsupported {
                engine,
                feature: text,
            }) => {
                assert_eq!(engine, "tekton");
                assert!(text.contains(feature), "{text}");
            }
            Err(other) => panic!("{other}"),
            Ok(_) => panic!("{feature} was accepted"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn matrices_fan_out_and_gather() {
    let (fixture, h) = setup("matrix").await;
    contract::fan_out(&h, "{items: [1, 2, 3]}").await;
    let mut names: Vec<String> = fixture
        .cluster
        .store
        .list(&taskruns(), None)
        .iter()
        .filter(|t| t["metadata"]["labels"]["tekton.dev/pipelineTask"] == "double")
        .map(|t| {
            t["metadata"]["name"]
                .as_str()
                .unwrap()
                .rsplit('-')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect();
    names.sort();
    assert_eq!(names, ["0", "1", "2"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_attempts_are_retried_with_new_pods() {
    let (fixture, h) = setup("retries").await;
    let s = h.scratch("retries");
    let engine = (h.engine)();
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: retries
steps:
  - name: flaky
    retry: {limit: 2}
    container: {image: alpine, command: [sh, -c, "echo run >> @S@/count; [ -e @S@/marker ] || { touch @S@/marker; exit 1; }; echo recovered"]}
"#,
    ));
    let r = run(&*engine, &h.run_spec("retries"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let last = r.last("flaky");
    assert_eq!((last.phase, last.attempt), (StepPhase::Succeeded, 2));
    assert_eq!(r.result("flaky"), "recovered");
    let running: Vec<u32> = r
        .of("flaky")
        .iter()
        .filter(|s| s.phase == StepPhase::Running)
        .map(|s| s.attempt)
        .collect();
    assert_eq!(running, [1, 2]);
    assert_eq!(s.lines("count"), 2);
    let tr = &fixture.cluster.store.list(&taskruns(), None)[0];
    assert_eq!(
        tr["status"]["retriesStatus"][0]["podName"]
            .as_str()
            .unwrap(),
        format!("{}-pod", tr["metadata"]["name"].as_str().unwrap())
    );
    assert!(
        tr["status"]["podName"]
            .as_str()
            .unwrap()
            .ends_with("-pod-retry1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_runs_finally_and_reports_tektons_status() {
    let (fixture, h) = setup("cancel").await;
    let engine = (h.engine)();
    let spec = h.run_spec("cancel");
    let (mut started, seen) =
        contract::start_until_running(&*engine, &spec, plan(contract::CANCEL_ME), "long").await;
    engine
        .cancel(&spec, &started.engine_ref)
        .await
        .expect("cancel");
    let r = finish(&mut started.updates, seen).await;
    assert_eq!(r.outcome, RunOutcome::Cancelled, "{r:#?}");
    r.expect(&[
        ("long", StepPhase::Cancelled),
        ("next", StepPhase::Cancelled),
        ("notify", StepPhase::Succeeded),
    ]);
    // Tekton counts a cancelled TaskRun as failed in `$(tasks.status)` and
    // tells finally tasks nothing more, so the exit handler sees `failed`.
    assert_eq!(r.result("notify"), "status=failed");
    let (_, name) = started.engine_ref.split_once('/').unwrap();
    let pr = fixture
        .cluster
        .store
        .list(&pipelineruns(), None)
        .into_iter()
        .find(|p| p["metadata"]["name"] == name)
        .unwrap();
    assert_eq!(pr["spec"]["status"], "CancelledRunFinally");
    assert_eq!(pr["status"]["conditions"][0]["reason"], "Cancelled");
    assert_eq!(
        pr["status"]["skippedTasks"][0]["reason"],
        "PipelineRun was gracefully cancelled"
    );
    // Cancelling a finished run changes nothing.
    engine
        .cancel(&spec, &started.engine_ref)
        .await
        .expect("cancel again");
}

// ---- examples, logs, re-attaching ---------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diamond_example_runs() {
    let (_fixture, h) = setup("example-diamond").await;
    contract::diamond_example(&*(h.engine)(), &h.run_spec("diamond")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_coin_flip_example_runs() {
    let (_fixture, h) = setup("example-coin").await;
    let (r, side) = contract::coin_flip_example(&*(h.engine)(), &h.run_spec("coin")).await;
    assert_eq!(
        r.last(contract::other_side(&side)).message.as_deref(),
        Some("When Expressions evaluated to false")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_come_from_the_taskrun_pods() {
    let (_fixture, h) = setup("logs").await;
    let spec = h.run_spec("logs");
    let stranger = RunSpec::new("tnt_other", spec.run.clone(), 1);
    let r = contract::pod_logs(&*(h.engine)(), &spec, &stranger).await;
    assert_eq!(
        r.last("fail").message.as_deref(),
        Some("\"step-fail\" exited with code 3")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_adapter_reattaches_to_a_running_pipelinerun() {
    let (fixture, h) = setup("reattach").await;
    let s = h.scratch("reattach");
    let yaml = s.yaml(&format!(
        "{}{}",
        contract::WAIT_FOR_GO,
        r#"  - name: after
    container: {image: x, command: [sh, -c, "echo after {{steps.wait.outputs.result}}"]}
"#
    ));
    let spec = h.run_spec("reattach");
    let first = (h.engine)();
    let (mut one, _) = contract::start_until_running(&*first, &spec, plan(&yaml), "wait").await;

    // Another scheduler starts the same run attempt with nothing to resume.
    let second = (h.engine)();
    let mut two = second.start(&spec, plan(&yaml), vec![]).await.unwrap();
    assert_eq!(two.engine_ref, one.engine_ref);
    watch(&mut two.updates, |s| {
        s.name == "wait" && s.phase == StepPhase::Running
    })
    .await;
    std::fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut two.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("after"), "after waited");
    let r1 = finish(&mut one.updates, Vec::new()).await;
    assert_eq!(r1.outcome, RunOutcome::Succeeded);
    assert_eq!(s.lines("wait.count"), 1, "wait ran twice");
    assert_eq!(fixture.cluster.store.list(&pipelineruns(), None).len(), 1);
    assert_eq!(fixture.cluster.store.list(&taskruns(), None).len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_outlast_their_watch_requests() {
    let (fixture, h) = setup("rewatch").await;
    let mut config = TektonConfig::new(KubeConfig::at(fixture.cluster.url()));
    config.watch_timeout_secs = 1;
    let engine = TektonAdapter::new(config).unwrap();
    // The step outlasts two watch requests of the tracker.
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: rewatch
steps:
  - name: slow
    container: {image: x, command: [sh, -c, "sleep 2.5; echo slow"]}
  - name: next
    container: {image: x, command: [sh, -c, "echo after {{steps.slow.outputs.result}}"]}
"#,
    );
    let r = run(&engine, &h.run_spec("rewatch"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("next"), "after slow");
    assert_eq!(r.of("slow").len(), 2, "{:#?}", r.of("slow"));
}
