//! The shared cache index end to end where artifacts live in an engine's
//! object store: a hit another engine cannot read is run once and kept as
//! a copy; a result whose artifacts were not stored is not reused; a hit
//! whose object was deleted from the store runs again.

use couler_fakes::s3::S3Server;
use couler_tests::*;
use serde_json::{Value, json};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// A slow step that writes a model, and one that reads it for the split
/// given as a parameter.
const TRAIN_AND_EVALUATE: &str = "apiVersion: couler.dev/v1alpha1
name: train-and-evaluate
parameters: [{name: split, default: '1'}]
steps:
  - name: train
    container:
      image: alpine
      command: [sh, -c, 'sleep 1; mkdir -p $(dirname {{outputs.artifacts.model.path}}); echo weights-7 > {{outputs.artifacts.model.path}}']
    outputs: {artifacts: [{name: model, path: /tmp/outputs/model.txt}]}
  - name: evaluate
    inputs: {artifacts: [{name: model, from: '{{steps.train.outputs.artifacts.model}}', path: /tmp/inputs/model.txt}]}
    container: {image: alpine, command: [sh, -c, 'echo $(cat {{inputs.artifacts.model.path}}) on split {{workflow.parameters.split}}']}
";

/// How a scheduler reads a fake engine's bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Bucket {
    /// As a directory.
    Mounted,
    /// As an S3-compatible store, listed in `cache.s3`.
    OverS3,
    /// Not at all.
    Unread,
}

/// `COULER__CACHE__S3`, listing `server` as the store of the locations
/// under `prefix`.
fn listed(prefix: &str, server: &S3Server) -> (&'static str, String) {
    let store = format!(
        r#"[{{prefix = "{prefix}", endpoint = "{}", access_key_id = "{}", secret_access_key = "{}"}}]"#,
        server.url(),
        couler_fakes::s3::ACCESS_KEY,
        couler_fakes::s3::SECRET_KEY
    );
    ("COULER__CACHE__S3", store)
}

/// The fake Kubernetes API server and Argo controller, on a runtime of
/// their own, with the artifact bucket in a directory that a real S3
/// server serves.
struct FakeArgo {
    runtime: tokio::runtime::Runtime,
    cluster: Option<couler_fakes::kube::Cluster>,
    controller: tokio::task::JoinHandle<()>,
    objects: S3Server,
    /// Removed on drop, after the servers.
    _dir: tempdir::Dir,
}

/// The fake Argo's bucket (the adapter's default).
const ARGO_BUCKET: &str = "couler-artifacts";

impl FakeArgo {
    fn start() -> FakeArgo {
        let dir = tempdir::Dir::new("fake-argo");
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let cluster = runtime
            .block_on(couler_fakes::kube::Cluster::start(dir.path().join("pods")))
            .expect("fake cluster");
        let objects = S3Server::start(&dir.path().join("s3"));
        let config = couler_fakes::argo::Config::new(objects.path(ARGO_BUCKET, ""));
        let controller = {
            // The controller is a task on this runtime.
            let _guard = runtime.enter();
            couler_fakes::argo::spawn(&cluster, config)
        };
        FakeArgo {
            runtime,
            cluster: Some(cluster),
            controller,
            objects,
            _dir: dir,
        }
    }

    /// The scheduler's settings for this cluster, reading its bucket as
    /// `bucket` says.
    fn env(&self, bucket: Bucket) -> Vec<(&'static str, String)> {
        let cluster = self.cluster.as_ref().expect("running");
        let mut env = vec![("COULER__ARGO__API_URL", cluster.url())];
        match bucket {
            Bucket::Mounted => {
                let path = self.objects.path(ARGO_BUCKET, "");
                env.push(("COULER__ARGO__ARTIFACT_MOUNT", path.display().to_string()));
            }
            Bucket::OverS3 => env.push(listed(&format!("s3://{ARGO_BUCKET}/"), &self.objects)),
            Bucket::Unread => {}
        }
        env
    }
}

/// A scheduler for `couler` with `env` besides its own settings.
fn scheduler(couler: &Couler, id: &str, env: Vec<(&'static str, String)>) -> Proc {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    couler.scheduler_with(id, &env)
}

/// Runs the workflow of [`TRAIN_AND_EVALUATE`] to success; the statuses of
/// train and evaluate, and what evaluate printed.
fn train_and_evaluate(couler: &Couler, token: &str, split: &str) -> (String, String, Value) {
    let id = couler.submit(token, TRAIN_AND_EVALUATE, json!({"split": split}));
    let run = couler.wait(token, &id, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let steps = step_statuses(&run);
    let evaluated = step(&run, "evaluate")["outputs"]["result"].clone();
    (steps["train"].clone(), steps["evaluate"].clone(), evaluated)
}

/// Whether the cache index (as the API sees it) holds train's result of
/// [`TRAIN_AND_EVALUATE`] for `token`'s tenant: the scheduler offers a
/// result without holding up the run.
fn train_hits(couler: &Couler, token: &str) -> bool {
    let ir: Value = serde_saphyr::from_str(TRAIN_AND_EVALUATE).unwrap();
    let (status, explained) = couler.call(
        reqwest::Method::POST,
        "/v1/cache/explain",
        token,
        Some(json!({"ir": ir, "parameters": {"split": "0"}})),
    );
    assert_eq!(status, 200, "{explained}");
    explained["steps"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["step"] == "train" && s["status"] == "hit")
}

/// What [`train_and_evaluate`] returns when evaluate read train's model,
/// train having `train` status.
fn evaluated(train: &str, split: &str) -> (String, String, Value) {
    (
        train.to_owned(),
        "succeeded".to_owned(),
        json!(format!("weights-7 on split {split}")),
    )
}

impl Drop for FakeArgo {
    fn drop(&mut self) {
        self.controller.abort();
        // The cluster's server task stops with it, on its runtime.
        let _guard = self.runtime.enter();
        self.cluster.take();
    }
}

#[test]
fn a_step_cached_where_argo_cannot_read_it_runs_once_there_and_is_then_read_from_its_copy() {
    let argo = FakeArgo::start();
    let couler = Couler::start();
    let _scheduler = scheduler(&couler, "argo", argo.env(Bucket::Mounted));
    let (_, alice) = couler.tenant("alice");
    let (_, bob) = couler.tenant_with("bob", json!({"engine": "argo"}));
    let run = |token: &str, split: &str| train_and_evaluate(&couler, token, split);

    // alice, on the local engine, trains: the model is a file on the host.
    assert_eq!(run(&alice, "1"), evaluated("succeeded", "1"));
    // bob's Argo pods cannot fetch that file, and evaluate reads it: train
    // runs on Argo, and its model, in the bucket, is kept as a copy.
    assert_eq!(run(&bob, "2"), evaluated("succeeded", "2"));
    // The scheduler offers a result without holding up the run.
    wait_until(Duration::from_secs(10), || train_hits(&couler, &bob));
    // From then on bob's pods read the copy.
    assert_eq!(run(&bob, "3"), evaluated("cached", "3"));
    // alice's runs still read her file.
    assert_eq!(run(&alice, "4"), evaluated("cached", "4"));
}

#[test]
fn a_result_whose_artifacts_the_engine_did_not_store_is_not_reused() {
    let argo = FakeArgo::start();
    let couler = Couler::start();
    // Without the bucket mounted or listed the scheduler cannot digest
    // train's model, nor tell where it is.
    let _scheduler = scheduler(&couler, "argo", argo.env(Bucket::Unread));
    let (_, alice) = couler.tenant("alice");
    let (_, bob) = couler.tenant_with("bob", json!({"engine": "argo"}));
    // bob's second run is not cut into stages at train's model (a later
    // stage could not read it): both run whole.
    for split in ["1", "2"] {
        assert_eq!(
            train_and_evaluate(&couler, &bob, split),
            evaluated("succeeded", split)
        );
    }
    // Had bob's result been cached without its model, alice's evaluate
    // would have found no model to read; train runs again instead.
    assert_eq!(
        train_and_evaluate(&couler, &alice, "3"),
        evaluated("succeeded", "3")
    );
    assert_eq!(
        train_and_evaluate(&couler, &alice, "4"),
        evaluated("cached", "4")
    );
}

/// The fake Kubeflow Pipelines API server and the fake cluster its pods
/// run on, on a runtime of their own, with its MinIO bucket served by a
/// real S3 server (s3s-fs) over the same directory.
struct FakeKfp {
    runtime: tokio::runtime::Runtime,
    servers: Option<(couler_fakes::kube::Cluster, couler_fakes::kfp::KfpServer)>,
    minio: S3Server,
    /// Removed on drop, after the servers.
    _dir: tempdir::Dir,
}

impl FakeKfp {
    fn start() -> FakeKfp {
        let dir = tempdir::Dir::new("fake-kfp");
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let servers = runtime.block_on(async {
            let cluster = couler_fakes::kube::Cluster::start(dir.path().join("pods"))
                .await
                .expect("fake cluster");
            let kfp = couler_fakes::kfp::KfpServer::start_with(dir.path(), cluster.kubelet.clone())
                .await
                .expect("fake KFP server");
            (cluster, kfp)
        });
        let minio = S3Server::start(&dir.path().join("object-store"));
        FakeKfp {
            runtime,
            servers: Some(servers),
            minio,
            _dir: dir,
        }
    }

    /// The scheduler's settings for this KFP; `asked`: with its MinIO
    /// listed in the cache's settings, so that hits there are checked.
    fn env(&self, asked: bool) -> Vec<(&'static str, String)> {
        let (cluster, kfp) = self.servers.as_ref().expect("running");
        let mut env = vec![
            ("COULER__KFP__BASE_URL", kfp.url()),
            ("COULER__KFP__PODS__API_URL", cluster.url()),
            (
                "COULER__KFP__PODS__NAMESPACE",
                couler_fakes::kfp::NAMESPACE.to_owned(),
            ),
        ];
        if asked {
            env.push(listed("minio://mlpipeline/", &self.minio));
        }
        env
    }
}

/// Deletes every object named `name` under `dir`, as an engine's artifact
/// retention or a user cleaning the bucket would; how many.
fn delete_objects_named(dir: &std::path::Path, name: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    entries
        .flatten()
        .map(|e| match e.path() {
            p if p.is_dir() => delete_objects_named(&p, name),
            p if p.file_name().is_some_and(|f| f == name) => {
                std::fs::remove_file(&p).unwrap();
                1
            }
            _ => 0,
        })
        .sum()
}

impl Drop for FakeKfp {
    fn drop(&mut self) {
        // The servers' tasks stop with them, on their runtime.
        let _guard = self.runtime.enter();
        self.servers.take();
    }
}

#[test]
fn a_hit_whose_object_was_deleted_from_kfps_minio_runs_again() {
    let kfp = FakeKfp::start();
    let couler = Couler::start();
    let _scheduler = scheduler(&couler, "kfp", kfp.env(true));
    let (_, bob) = couler.tenant_with("bob", json!({"engine": "kfp"}));
    let run = |split: &str| train_and_evaluate(&couler, &bob, split);

    assert_eq!(run("1"), evaluated("succeeded", "1"));
    // The scheduler offers a result without holding up the run.
    wait_until(Duration::from_secs(10), || train_hits(&couler, &bob));
    assert_eq!(run("2"), evaluated("cached", "2"));
    // The model goes from MinIO: evaluate would find nothing to read, so
    // the scheduler, asking MinIO, runs train again.
    assert!(delete_objects_named(&kfp.minio.path("mlpipeline", ""), "model") > 0);
    assert_eq!(run("3"), evaluated("succeeded", "3"));
    // Its new model is cached in turn.
    wait_until(Duration::from_secs(10), || train_hits(&couler, &bob));
    assert_eq!(run("4"), evaluated("cached", "4"));
}

#[test]
fn an_argo_result_is_read_from_its_bucket_over_s3_and_a_deleted_one_runs_again() {
    let argo = FakeArgo::start();
    let couler = Couler::start();
    // Not mounted: the scheduler downloads train's model from the bucket
    // to digest it, and asks the bucket about it on a hit.
    let _scheduler = scheduler(&couler, "argo", argo.env(Bucket::OverS3));
    let (_, bob) = couler.tenant_with("bob", json!({"engine": "argo"}));
    let run = |split: &str| train_and_evaluate(&couler, &bob, split);

    assert_eq!(run("1"), evaluated("succeeded", "1"));
    wait_until(Duration::from_secs(10), || train_hits(&couler, &bob));
    assert_eq!(run("2"), evaluated("cached", "2"));
    let bucket = argo.objects.path(ARGO_BUCKET, "");
    assert!(delete_objects_named(&bucket, "model") > 0);
    assert_eq!(run("3"), evaluated("succeeded", "3"));
}
