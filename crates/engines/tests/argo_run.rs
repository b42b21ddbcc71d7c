//! The Argo adapter against the fake Kubernetes API server and the fake
//! Argo workflow-controller (`couler_fakes`): every case of the shared
//! contract, the diamond and coin-flip examples end to end, logs, and a
//! second adapter re-attaching to a running Workflow.

mod compile_support;
mod contract;

use contract::{Harness, finish, plan, watch};
use couler_engines::argo::{ArgoAdapter, ArgoConfig};
use couler_engines::k8s::KubeConfig;
use couler_engines::{EngineAdapter, RunOutcome, StepPhase};
use couler_fakes::argo::{self as fake_argo, pods, workflows};
use couler_fakes::kube::Cluster;
use couler_optimizer::Plan;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

const TENANT: &str = "tnt_test";
const NAMESPACE: &str = "couler-tnt-test";

/// A fake cluster with the fake Argo controller, and a directory for
/// pods, artifacts and the contract's scratch files; all gone on drop.
struct Env {
    dir: PathBuf,
    cluster: Cluster,
    controller: tokio::task::JoinHandle<()>,
}

impl Env {
    async fn start(name: &str) -> Env {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!(
            "couler-argo-{name}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("scratch")).unwrap();
        let cluster = Cluster::start(dir.join("pods"))
            .await
            .expect("fake cluster");
        let controller = fake_argo::spawn(&cluster, fake_argo::Config::new(dir.join("artifacts")));
        Env {
            dir,
            cluster,
            controller,
        }
    }

    fn config(&self) -> ArgoConfig {
        let mut config = ArgoConfig::new(KubeConfig::at(self.cluster.url()));
        config.artifact_mount = Some(self.dir.join("artifacts"));
        config
    }

    fn adapter(&self) -> Arc<dyn EngineAdapter> {
        Arc::new(ArgoAdapter::new(self.config()).expect("adapter"))
    }

    fn harness(&self) -> Harness {
        let config = self.config();
        Harness {
            engine: Box::new(move || {
                Arc::new(ArgoAdapter::new(config.clone()).expect("adapter"))
                    as Arc<dyn EngineAdapter>
            }),
            scratch_root: self.dir.join("scratch"),
            tenant: TENANT.into(),
        }
    }
}

impl Drop for Env {
    fn drop(&mut self) {
        self.controller.abort();
        if std::thread::panicking() {
            eprintln!("kept {} for a look", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

macro_rules! contract_cases {
    ($($case:ident),* $(,)?) => {
        mod contract_suite {
            $(
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn $case() {
                    let env = super::Env::start(stringify!($case)).await;
                    super::contract::$case(&env.harness()).await;
                }
            )*
        }
    };
}

contract_cases!(
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
);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_contract_runs_on_one_engine() {
    let env = Env::start("all").await;
    contract::run_all(&env.harness()).await;
}

fn example(name: &str) -> Arc<Plan> {
    Arc::new(compile_support::example(name))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diamond_example_runs_in_argos_shapes() {
    let env = Env::start("diamond").await;
    let h = env.harness();
    let spec = h.run_spec("diamond");
    let r = contract::run(&*env.adapter(), &spec, example("diamond"), vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("a"), "A says hello");
    assert_eq!(
        r.result("d"),
        "D joins: B got: A says hello / C got: A says hello"
    );
    // The Workflow's status is Argo's: a root DAG node, one Pod node per
    // step with a v2-named Pod object, and the workflow's phase.
    let workflows = env.cluster.store.list(&workflows(), Some(NAMESPACE));
    let [wf] = workflows.as_slice() else {
        panic!("one Workflow: {workflows:#?}")
    };
    let name = wf["metadata"]["name"].as_str().unwrap();
    let status = &wf["status"];
    assert_eq!(status["phase"], "Succeeded");
    assert!(status["startedAt"].is_string() && status["finishedAt"].is_string());
    let nodes = status["nodes"].as_object().unwrap();
    assert_eq!(nodes[name]["type"], "DAG");
    assert_eq!(nodes[name]["templateName"], "main");
    let pod_objects: Vec<String> = env
        .cluster
        .store
        .list(&pods(), Some(NAMESPACE))
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_owned())
        .collect();
    let pod_nodes: Vec<&serde_json::Value> =
        nodes.values().filter(|n| n["type"] == "Pod").collect();
    assert_eq!(pod_nodes.len(), 4);
    for node in pod_nodes {
        let node_name = node["name"].as_str().unwrap();
        assert_eq!(
            node["id"].as_str().unwrap(),
            fake_argo::text::node_id(name, node_name)
        );
        assert_eq!(node["boundaryID"], name);
        assert_eq!(node["phase"], "Succeeded");
        assert_eq!(node["outputs"]["exitCode"], "0");
        let pod =
            fake_argo::text::pod_name(name, node["templateName"].as_str().unwrap(), node_name);
        assert!(pod_objects.contains(&pod), "{pod} in {pod_objects:?}");
    }
    // d hangs from both b and c.
    let d = fake_argo::text::node_id(name, &format!("{name}.d"));
    for parent in ["b", "c"] {
        let id = fake_argo::text::node_id(name, &format!("{name}.{parent}"));
        assert!(
            nodes[&id]["children"]
                .as_array()
                .unwrap()
                .contains(&d.clone().into())
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_coin_flip_example_takes_one_branch() {
    let env = Env::start("coin").await;
    let h = env.harness();
    let r = contract::run(
        &*env.adapter(),
        &h.run_spec("coin"),
        example("coin-flip"),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let side = r.result("flip").to_owned();
    let other = match side.as_str() {
        "heads" => "tails",
        "tails" => "heads",
        s => panic!("flip said {s:?}"),
    };
    r.expect(&[(&side, StepPhase::Succeeded), (other, StepPhase::Skipped)]);
    assert_eq!(r.result(&side), format!("it was {side}"));
    let skipped = r.last(other).message.clone().unwrap_or_default();
    assert!(skipped.contains("evaluated false"), "{skipped}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_come_from_the_pods() {
    let env = Env::start("logs").await;
    let engine = env.adapter();
    let spec = env.harness().run_spec("logs");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: talk
steps:
  - name: talk
    container: {image: x, command: [sh, -c, "echo out; echo err >&2"]}
  - name: fail
    depends: [talk]
    container: {image: x, command: [sh, -c, "echo bad >&2; exit 3"]}
"#,
    );
    let mut started = engine.start(&spec, plan, vec![]).await.unwrap();
    let r = finish(&mut started.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    let talk = r.last("talk");
    assert_eq!(talk.logs.as_deref(), Some("out\nerr\n"));
    assert_eq!(talk.metrics.unwrap().exit_code, Some(0));
    let fail = r.last("fail");
    assert_eq!(fail.message.as_deref(), Some("Error (exit code 3)"));
    assert_eq!(fail.metrics.unwrap().exit_code, Some(3));
    assert_eq!(
        engine
            .logs(&spec, &started.engine_ref, "talk")
            .await
            .unwrap(),
        "out\nerr\n"
    );
    assert_eq!(
        engine
            .logs(&spec, &started.engine_ref, "fail")
            .await
            .unwrap(),
        "bad\n"
    );
    assert!(
        engine
            .logs(&spec, &started.engine_ref, "nope")
            .await
            .is_err()
    );
    let other_run = env.harness().run_spec("other");
    assert!(
        engine
            .logs(&other_run, &started.engine_ref, "talk")
            .await
            .is_err()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_adapter_reattaches_to_the_running_workflow() {
    let env = Env::start("reattach").await;
    let h = env.harness();
    let s = h.scratch("reattach");
    let yaml = s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: reattach
steps:
  - name: wait
    container: {image: x, command: [sh, -c, "echo run >> @S@/wait.count; while [ ! -e @S@/go ]; do sleep 0.05; done; echo waited"]}
"#,
    );
    let spec = h.run_spec("reattach");
    let first = env.adapter();
    let mut one = first.start(&spec, plan(&yaml), vec![]).await.unwrap();
    let seen = watch(&mut one.updates, |s| {
        s.name == "wait" && s.phase == StepPhase::Running
    })
    .await;

    let second = env.adapter();
    let mut two = second
        .start(&spec, plan(&yaml), seen.clone())
        .await
        .unwrap();
    assert_eq!(two.engine_ref, one.engine_ref);
    assert_eq!(
        env.cluster.store.list(&workflows(), Some(NAMESPACE)).len(),
        1
    );
    std::fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut two.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("wait"), "waited");
    assert_eq!(
        r.of("wait")
            .iter()
            .filter(|u| u.phase == StepPhase::Running)
            .count(),
        0,
        "the second adapter knew it was running"
    );
    assert_eq!(s.lines("wait.count"), 1);
    // The first adapter's stream ends the same way.
    let r1 = finish(&mut one.updates, seen).await;
    assert_eq!(r1.outcome, RunOutcome::Succeeded);
}
