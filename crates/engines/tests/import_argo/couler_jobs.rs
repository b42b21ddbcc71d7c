//! What the Couler SDK emits beyond containers and scripts: the workflow's
//! deadline (`config_workflow(timeout=…)`), `Cache(name, key, max_age)`
//! (`memoize`) and `couler.steps.{pytorch,tensorflow,mpi}.train` (a
//! `resource` template creating a training-operator job). The documents
//! follow the shapes the SDK writes (its manifest is a YAML string, its
//! `command` one string, its resources bare numbers).

use super::*;
use couler_ir::{CachePolicy, Framework};

#[test]
fn the_workflow_deadline_is_imported() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  activeDeadlineSeconds: 3600
  templates:
  - name: main
    container: {image: alpine, command: [sh, -c, "echo hi"]}
"#,
    ));
    let wf = &imported.workflow;
    assert_eq!(wf.timeout.unwrap().as_std().as_secs(), 3600);
    assert!(!reported(&imported, "activeDeadlineSeconds"));

    let imported = import(&workflow(
        r#"
  entrypoint: main
  activeDeadlineSeconds: "soon"
  templates:
  - name: main
    container: {image: alpine, command: [sh, -c, "echo hi"]}
"#,
    ));
    assert!(imported.workflow.timeout.is_none());
    assert_eq!(
        reported_at(&imported, "activeDeadlineSeconds"),
        "/spec/activeDeadlineSeconds"
    );
}

#[test]
fn memoize_becomes_the_steps_cache_with_its_max_age() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: hour, template: hour}
      - {name: forever, template: forever}
      - {name: never, template: never}
  - name: hour
    memoize: {key: "cache-key", maxAge: "1h30m", cache: {configMap: {name: cache-name}}}
    container: {image: alpine, command: [sh, -c, "echo 1"]}
  - name: forever
    memoize: {key: "k", maxAge: "", cache: {configMap: {name: c}}}
    container: {image: alpine, command: [sh, -c, "echo 2"]}
  - name: never
    memoize: {key: "k", maxAge: "0", cache: {configMap: {name: c}}}
    container: {image: alpine, command: [sh, -c, "echo 3"]}
"#,
    ));
    let wf = &imported.workflow;
    let hour = step(wf, "hour").cache.as_ref().expect("memoize kept");
    assert_eq!(hour.policy, CachePolicy::Auto);
    assert_eq!(hour.ttl.unwrap().as_std().as_secs(), 5400);
    let forever = step(wf, "forever").cache.as_ref().unwrap();
    assert_eq!((forever.policy, forever.ttl), (CachePolicy::Auto, None));
    assert_eq!(
        step(wf, "never").cache.as_ref().unwrap().policy,
        CachePolicy::Off
    );
    // Couler keys on exact inputs: the user's key is reported, as is the
    // ConfigMap Argo would have kept the entries in.
    assert_eq!(
        reported_at(&imported, "memoize.key"),
        "/spec/templates/1/memoize/key"
    );
    assert!(reported(&imported, "memoize.cache"));
    assert!(!reported(&imported, "memoize"));
}

/// A `resource` template as `couler.steps.pytorch.train` writes it.
const PYTORCH: &str = r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: test-pytorch-train-51, template: test-pytorch-train}
  - name: test-pytorch-train
    resource:
      action: create
      setOwnerReference: "true"
      manifest: |
        apiVersion: '"kubeflow.org/v1"'
        kind: '"PyTorchJob"'
        metadata:
          name: pytorch-train-0d5d2b2c
        spec:
          cleanPodPolicy: Running
          pytorchReplicaSpecs:
            Master:
              replicas: 1
              template:
                spec:
                  containers:
                  - command: python pytorch.py
                    env:
                    - name: access_key
                      valueFrom:
                        secretKeyRef: {key: access_key, name: couler-secret}
                    image: pytorch:1.13
                    name: pytorch
            Worker:
              replicas: 3
              restartPolicy: OnFailure
              template:
                spec:
                  containers:
                  - command: python pytorch.py
                    env:
                    - name: access_key
                      valueFrom:
                        secretKeyRef: {key: access_key, name: couler-secret}
                    image: pytorch-gpu:1.13
                    name: pytorch
                    resources:
                      limits: {cpu: 0.5, memory: 1024}
      successCondition: status.replicaStatuses.Worker.succeeded == 3
      failureCondition: status.replicaStatuses.Worker.failed > 0
    outputs:
      parameters:
      - {name: job-name, valueFrom: {jsonPath: '"{.metadata.name}"'}}
"#;

#[test]
fn a_pytorch_job_becomes_a_job_step_with_per_role_images() {
    let imported = import(&workflow(PYTORCH));
    let wf = &imported.workflow;
    let s = step(wf, "test-pytorch-train-51");
    let job = s.job.as_ref().expect("a job step");
    assert_eq!(job.framework, Framework::Pytorch);
    assert_eq!(job.image, "pytorch:1.13");
    assert_eq!(job.command, ["sh", "-c", "python pytorch.py"]);
    assert_eq!(job.env[0].secret.as_ref().unwrap().name, "couler-secret");
    let master = &job.replicas["master"];
    assert_eq!((master.count, &master.image), (1, &None));
    let worker = &job.replicas["worker"];
    assert_eq!(worker.count, 3);
    assert_eq!(worker.image.as_deref(), Some("pytorch-gpu:1.13"));
    assert!(
        worker.command.is_empty(),
        "the worker runs the job's command"
    );
    let r = worker.resources.as_ref().unwrap();
    assert_eq!(r.cpu.unwrap().millis(), 500);
    assert_eq!(r.memory.unwrap().bytes(), 1024);
    // What the IR cannot say is reported, nothing silently dropped.
    for feature in [
        "command string",
        "restartPolicy",
        "cleanPodPolicy",
        "job condition",
        "job outputs",
    ] {
        assert!(reported(&imported, feature), "{feature} not reported");
    }
    // Couler's replica-count conditions ask what the leading role's outcome
    // says; what changes the run is the one-string commands and the restarts.
    let changing: Vec<&str> = imported
        .unsupported
        .iter()
        .filter(|u| u.changes_run())
        .map(|u| u.feature.as_str())
        .collect();
    assert_eq!(
        changing,
        ["command string", "restartPolicy", "command string"],
        "{:?}",
        imported.unsupported
    );
    assert!(!reported(&imported, "resource template"));
    assert_eq!(
        reported_at(&imported, "restartPolicy"),
        "/spec/templates/1/resource/manifest/spec/pytorchReplicaSpecs/Worker/restartPolicy"
    );
}

#[test]
fn a_tensorflow_job_keeps_each_roles_command_and_resources() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: train, template: train}
  - name: train
    activeDeadlineSeconds: 600
    retryStrategy: {limit: 2}
    resource:
      action: create
      manifest: |
        apiVersion: kubeflow.org/v1
        kind: TFJob
        metadata: {name: tf}
        spec:
          tfReplicaSpecs:
            Chief:
              replicas: 1
              template: {spec: {containers: [{name: tensorflow, image: "tf:1", command: [python, tf.py], args: [--chief]}]}}
            PS:
              replicas: 2
              restartPolicy: Never
              template: {spec: {containers: [{name: tensorflow, image: "tf:1", command: [python, ps.py]}]}}
            Worker:
              replicas: 3
              template: {spec: {containers: [{name: tensorflow, image: "tf:1", command: [python, tf.py], args: [--worker]}]}}
            Evaluator:
              replicas: 1
              template: {spec: {containers: [{name: tensorflow, image: "tf:1", command: [python, tf.py], args: [--chief], resources: {limits: {cpu: 2, memory: 4096}}}]}}
"#,
    ));
    let s = step(&imported.workflow, "train");
    let job = s.job.as_ref().unwrap();
    assert_eq!(job.framework, Framework::Tensorflow);
    assert_eq!(
        (&job.command[..], &job.args[..]),
        (
            &["python".to_owned(), "tf.py".to_owned()][..],
            &["--chief".to_owned()][..]
        )
    );
    assert_eq!(job.replicas["ps"].command, ["python", "ps.py"]);
    assert!(job.replicas["ps"].args.is_empty());
    assert!(job.replicas["worker"].command.is_empty());
    assert_eq!(job.replicas["worker"].args, ["--worker"]);
    let evaluator = &job.replicas["evaluator"];
    assert!(evaluator.command.is_empty() && evaluator.args.is_empty());
    assert_eq!(
        evaluator.resources.as_ref().unwrap().cpu.unwrap().millis(),
        2000
    );
    for (role, want) in [
        ("chief", "--chief"),
        ("worker", "--worker"),
        ("evaluator", "--chief"),
    ] {
        assert_eq!(job.argv_of(role).1, [want], "{role}");
    }
    assert_eq!(s.timeout.unwrap().as_std().as_secs(), 600);
    assert_eq!(s.retry.as_ref().unwrap().limit, 2);
}

/// `integration_tests/mpi_example.py`: the launcher and one worker, the
/// command a list, and the workflow's deadline.
const MPI: &str = r#"
  entrypoint: main
  activeDeadlineSeconds: 3600
  templates:
  - name: main
    steps:
    - - {name: mpi-train-34, template: mpi-train}
  - name: mpi-train
    resource:
      action: create
      setOwnerReference: "true"
      manifest: |
        apiVersion: '"kubeflow.org/v1"'
        kind: '"MPIJob"'
        metadata:
          name: mpi-train-6a0e
        spec:
          cleanPodPolicy: Running
          mpiReplicaSpecs:
            Launcher:
              replicas: 1
              template:
                spec:
                  containers:
                  - command: [sh, -c, 'echo "running"; exit 0']
                    image: alpine:3.6
                    name: mpi
            Worker:
              replicas: 1
              template:
                spec:
                  containers:
                  - command: [sh, -c, 'echo "running"; exit 0']
                    image: alpine:3.6
                    name: mpi
          slotsPerWorker: 1
      successCondition: status.replicaStatuses.Worker.succeeded == 1
      failureCondition: status.replicaStatuses.Worker.failed > 0
"#;

#[test]
fn the_mpi_example_imports_and_compiles_back_with_each_roles_command() {
    let imported = import(&workflow(MPI));
    let wf = &imported.workflow;
    assert_eq!(wf.timeout.unwrap().as_std().as_secs(), 3600);
    let job = step(wf, "mpi-train-34").job.as_ref().unwrap();
    assert_eq!(job.framework, Framework::Mpi);
    assert_eq!(job.command, ["sh", "-c", "echo \"running\"; exit 0"]);
    // MPI workers run only what they set: the worker keeps its command.
    assert_eq!(job.replicas["worker"].command, job.command);
    assert!(!reported(&imported, "job spec.slotsPerWorker"));

    let manifest = compile_back(wf).expect("compiles to Argo");
    let text = manifest.text();
    let argo: Value = serde_saphyr::from_str(&manifest.files[0].content).unwrap();
    assert_eq!(argo["spec"]["activeDeadlineSeconds"], 3600, "{text}");
    let resource = argo["spec"]["templates"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|t| t.get("resource"))
        .expect("a resource template");
    let job: Value = serde_saphyr::from_str(resource["manifest"].as_str().unwrap()).unwrap();
    for role in ["Launcher", "Worker"] {
        let c = &job["spec"]["mpiReplicaSpecs"][role]["template"]["spec"]["containers"][0];
        assert_eq!(c["image"], "alpine:3.6", "{role}");
        assert_eq!(c["command"][2], "echo \"running\"; exit 0", "{role}");
    }
    let dir = fresh_dir("import-couler-jobs");
    write_manifest(&dir, "mpi", &manifest);
    write_manifest(
        &dir,
        "pytorch",
        &compile_back(&import(&workflow(PYTORCH)).workflow).unwrap(),
    );
    let problems = validate_argo(&dir);
    assert!(problems.is_empty(), "{problems:#?}");
}

#[test]
fn other_resources_and_unknown_roles_are_reported() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: cm, template: cm}
      - {name: train, template: train}
  - name: cm
    resource:
      action: create
      manifest: "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"
  - name: train
    resource:
      action: create
      manifest: |
        apiVersion: kubeflow.org/v1
        kind: PyTorchJob
        spec:
          pytorchReplicaSpecs:
            Master: {replicas: 1, template: {spec: {containers: [{name: p, image: "p:1", command: [python, m.py]}, {name: side, image: envoy}]}}}
            Launcher: {replicas: 1, template: {spec: {containers: [{name: p, image: "p:1"}]}}}
"#,
    ));
    let wf = &imported.workflow;
    assert!(wf.steps.iter().all(|s| s.name != "cm"));
    assert_eq!(
        reported_at(&imported, "resource template"),
        "/spec/templates/1/resource"
    );
    let job = step(wf, "train").job.as_ref().unwrap();
    assert_eq!(job.replicas.keys().collect::<Vec<_>>(), ["master"]);
    assert!(reported(&imported, "job role"));
    assert!(reported(&imported, "sidecar"));
}
