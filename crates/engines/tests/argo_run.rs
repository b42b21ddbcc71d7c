//! The Argo adapter against the fake Kubernetes API server and the fake
//! Argo workflow-controller (`couler_fakes`): every case of the shared
//! contract, the diamond and coin-flip examples end to end, logs, and a
//! second adapter re-attaching to a running Workflow.

#[macro_use]
mod contract;

use contract::{Harness, TempDir, finish, plan};
use couler_engines::argo::{ArgoAdapter, ArgoConfig};
use couler_engines::k8s::KubeConfig;
use couler_engines::{EngineAdapter, RunOutcome, StepPhase};
use couler_fakes::argo::{self as fake_argo, pods, workflows};
use couler_fakes::kube::Cluster;
use std::sync::Arc;

const TENANT: &str = "tnt_test";
const NAMESPACE: &str = "couler-tnt-test";

/// A fake cluster with the fake Argo controller, and a directory for
/// pods, artifacts and the contract's scratch files; all gone on drop.
struct Env {
    cluster: Cluster,
    controller: tokio::task::JoinHandle<()>,
    dir: TempDir,
}

impl Env {
    async fn start(name: &str) -> Env {
        let dir = TempDir::new(&format!("argo-{name}"));
        std::fs::create_dir_all(dir.join("scratch")).unwrap();
        let cluster = Cluster::start(dir.join("pods"))
            .await
            .expect("fake cluster");
        let controller = fake_argo::spawn(&cluster, fake_argo::Config::new(dir.join("artifacts")));
        Env {
            cluster,
            controller,
            dir,
        }
    }

    fn config(&self) -> ArgoConfig {
        let mut config = ArgoConfig::new(KubeConfig::at(self.cluster.url()));
        let bucket = couler_objects::Mount {
            prefix: config.bucket_prefix(),
            path: self.dir.join("artifacts"),
        };
        config.artifact_stores = couler_objects::Stores::new(vec![bucket], vec![]);
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
    }
}

async fn setup(name: &str) -> (Env, Harness) {
    let env = Env::start(name).await;
    let h = env.harness();
    (env, h)
}

contract_cases!(setup);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_contract_runs_on_one_engine() {
    let env = Env::start("all").await;
    contract::run_all(&env.harness()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_diamond_example_runs_in_argos_shapes() {
    let env = Env::start("diamond").await;
    let h = env.harness();
    contract::diamond_example(&*env.adapter(), &h.run_spec("diamond")).await;
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
    let (r, side) = contract::coin_flip_example(&*env.adapter(), &h.run_spec("coin")).await;
    let other = contract::other_side(&side);
    let skipped = r.last(other).message.clone().unwrap_or_default();
    assert!(skipped.contains("evaluated false"), "{skipped}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_come_from_the_pods() {
    let env = Env::start("logs").await;
    let h = env.harness();
    let (spec, other_run) = (h.run_spec("logs"), h.run_spec("other"));
    let r = contract::pod_logs(&*env.adapter(), &spec, &other_run).await;
    assert_eq!(r.last("talk").metrics.unwrap().exit_code, Some(0));
    let fail = r.last("fail");
    assert_eq!(fail.message.as_deref(), Some("Error (exit code 3)"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_adapter_reattaches_to_the_running_workflow() {
    let env = Env::start("reattach").await;
    let h = env.harness();
    let s = h.scratch("reattach");
    let yaml = s.yaml(contract::WAIT_FOR_GO);
    let spec = h.run_spec("reattach");
    let first = env.adapter();
    let (mut one, seen) = contract::start_until_running(&*first, &spec, plan(&yaml), "wait").await;

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

/// The tenant secret's Kubernetes Secret: Couler's, the tenant's, exactly
/// the current version's keys; and a Secret that is not Couler's is never
/// overwritten (the run is refused instead).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_are_mirrored_into_couler_managed_kubernetes_secrets() {
    use base64::Engine as _;
    use couler_engines::SecretValues;
    use couler_fakes::kube::Resource;
    use secrecy::SecretString;
    use std::collections::BTreeMap;

    let env = Env::start("secrets").await;
    let h = env.harness();
    let secrets = Resource::new("", "v1", "secrets");
    let read = |name: &str| env.cluster.store.get(&secrets, NAMESPACE, name);
    let decoded = |s: &serde_json::Value, key: &str| {
        let b64 = s["data"][key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} in {s:#}"));
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(b64)
                .unwrap(),
        )
        .unwrap()
    };

    contract::secrets_reach_the_steps_that_read_them(&h).await;
    let mirrored = read("couler-secret-hub").expect("the Secret was written");
    assert_eq!(
        mirrored["metadata"]["labels"]["app.kubernetes.io/managed-by"],
        "couler"
    );
    assert_eq!(mirrored["metadata"]["labels"]["couler.dev/tenant"], TENANT);
    assert_eq!(
        mirrored["metadata"]["annotations"]["couler.dev/secret"],
        "hub"
    );
    assert_eq!(decoded(&mirrored, "token"), contract::TOKEN);
    assert_eq!(decoded(&mirrored, "unread"), "never-read");

    // A new version without `unread`: the Secret follows it exactly.
    let yaml = r#"
apiVersion: couler.dev/v1alpha1
name: rotated
steps:
  - name: reads
    container:
      image: alpine
      command: [sh, -c, 'echo "$HUB_TOKEN"']
      env: [{name: HUB_TOKEN, secret: {name: hub, key: token}}]
"#;
    let mut spec = h.run_spec("rotated");
    spec.secrets = SecretValues::new(BTreeMap::from([(
        "hub".to_owned(),
        BTreeMap::from([("token".to_owned(), SecretString::from("rotated-value"))]),
    )]));
    let r = contract::run(&*env.adapter(), &spec, plan(yaml), vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("reads"), "rotated-value");
    let mirrored = read("couler-secret-hub").unwrap();
    assert_eq!(decoded(&mirrored, "token"), "rotated-value");
    assert!(mirrored["data"].get("unread").is_none(), "{mirrored:#}");

    // Someone else's Secret under the name Couler would use.
    let theirs = serde_json::json!({
        "apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "couler-secret-db"},
        "data": {"password": "aHVudGVyMg=="},
    });
    env.cluster
        .store
        .create(&secrets, NAMESPACE, theirs)
        .unwrap();
    let mut spec = h.run_spec("not-ours");
    spec.secrets = SecretValues::new(BTreeMap::from([(
        "db".to_owned(),
        BTreeMap::from([("password".to_owned(), SecretString::from("mine"))]),
    )]));
    let yaml = yaml
        .replace("hub", "db")
        .replace("key: token", "key: password");
    let refused = env.adapter().start(&spec, plan(&yaml), vec![]).await;
    let Err(e) = refused else {
        panic!("a Secret that is not Couler's was taken over")
    };
    assert!(
        e.to_string().contains("not this tenant's Couler secret"),
        "{e}"
    );
    assert_eq!(
        read("couler-secret-db").unwrap()["data"]["password"],
        "aHVudGVyMg=="
    );
    assert!(env.cluster.store.list(&workflows(), Some(NAMESPACE)).len() == 2);
}
