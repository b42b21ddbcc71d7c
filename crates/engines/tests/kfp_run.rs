//! The KFP adapter against the fake Kubeflow Pipelines API server
//! (`couler_fakes::kfp`), which executes the uploaded `PipelineSpec` with
//! pods on a fake kubelet whose logs a fake Kubernetes API serves: every
//! case of the shared contract, the examples, and re-attaching.

#[macro_use]
mod contract;

use contract::{Harness, TempDir, finish, plan};
use couler_engines::k8s::KubeConfig;
use couler_engines::kfp::{KfpAdapter, KfpConfig};
use couler_engines::{EngineAdapter, RunOutcome};
use couler_fakes::kfp::KfpServer;
use couler_fakes::kube::Cluster;
use std::sync::Arc;

/// The fake servers of one test; they stop on drop.
struct Servers {
    kfp: KfpServer,
    _cluster: Cluster,
    _dir: TempDir,
}

async fn setup(name: &str) -> (Servers, Harness) {
    let dir = TempDir::new(&format!("kfp-{name}"));
    let cluster = Cluster::start(dir.join("pods"))
        .await
        .expect("fake cluster");
    let kfp = KfpServer::start_with(&dir.0, cluster.kubelet.clone())
        .await
        .expect("fake KFP server");
    let mut config = KfpConfig::new(kfp.url());
    config.poll_ms = 50;
    config.kube = Some(KubeConfig::at(cluster.url()));
    let harness = Harness {
        engine: Box::new(move || {
            Arc::new(KfpAdapter::new(config.clone()).expect("adapter")) as Arc<dyn EngineAdapter>
        }),
        scratch_root: dir.join("scratch"),
        tenant: "tnt_kfp".into(),
    };
    let servers = Servers {
        kfp,
        _cluster: cluster,
        _dir: dir,
    };
    (servers, harness)
}

contract_cases!(setup);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_contract_runs_on_one_server() {
    let (_servers, h) = setup("all").await;
    contract::run_all(&h).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diamond_example_runs() {
    let (_servers, h) = setup("example-diamond").await;
    let r = contract::diamond_example(&*(h.engine)(), &h.run_spec("diamond")).await;
    assert!(
        r.last("d")
            .logs
            .as_deref()
            .unwrap_or_default()
            .contains("D joins")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_coin_flip_example_runs() {
    let (_servers, h) = setup("example-coin").await;
    contract::coin_flip_example(&*(h.engine)(), &h.run_spec("coin")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_adapter_reattaches_to_the_running_run() {
    let (servers, h) = setup("reattach").await;
    let s = h.scratch("reattach");
    let yaml = s.yaml(contract::WAIT_FOR_GO);
    let spec = h.run_spec("reattach");
    let first = (h.engine)();
    let (started, _) = contract::start_until_running(&*first, &spec, plan(&yaml), "wait").await;
    let run_id = started.engine_ref.clone();
    drop(started);
    drop(first);

    // A new scheduler with no stored state still finds the run by name.
    let second = (h.engine)();
    let mut again = second
        .start(&spec, plan(&yaml), vec![])
        .await
        .expect("start again");
    assert_eq!(again.engine_ref, run_id);
    std::fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut again.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("wait"), "waited");
    assert_eq!(s.lines("wait.count"), 1, "the step ran twice");
    assert_eq!(servers.kfp.run_count(), 1, "a second run was created");
    let logs = second.logs(&spec, &run_id, "wait").await.expect("logs");
    assert_eq!(logs, "waited\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retries_report_attempts_and_logs_without_kube_are_refused() {
    let (servers, h) = setup("retries").await;
    let s = h.scratch("retries");
    let yaml = s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: retries
steps:
  - name: flaky
    retry: {limit: 2}
    container: {image: alpine, command: [sh, -c, "echo run >> @S@/n; [ $(wc -l < @S@/n) -ge 2 ] && echo ok"]}
"#,
    );
    let engine = (h.engine)();
    let spec = h.run_spec("retries");
    let mut started = engine
        .start(&spec, plan(&yaml), vec![])
        .await
        .expect("start");
    let r = finish(&mut started.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.last("flaky").attempt, 2);
    assert_eq!(r.result("flaky"), "ok");
    assert_eq!(s.lines("n"), 2);
    let both = engine
        .logs(&spec, &started.engine_ref, "flaky")
        .await
        .unwrap();
    assert_eq!(both, "=== attempt 1 ===\n=== attempt 2 ===\nok\n");
    let stranger = h.run_spec("other");
    let theirs = engine.logs(&stranger, &started.engine_ref, "flaky").await;
    assert!(theirs.is_err(), "{theirs:?}");
    let cancelled = engine.cancel(&stranger, &started.engine_ref).await;
    assert!(cancelled.is_err(), "{cancelled:?}");

    let blind = KfpAdapter::new(KfpConfig::new(servers.kfp.url())).unwrap();
    let refused = blind.logs(&spec, &started.engine_ref, "flaky").await;
    assert!(
        matches!(
            refused,
            Err(couler_engines::EngineError::Unsupported { .. })
        ),
        "{refused:?}"
    );
}
