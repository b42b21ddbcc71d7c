//! What a step carries: artifacts, container and script bodies, retries,
//! timeouts, labels and parameters.

use super::*;

#[test]
fn artifacts_pass_between_steps() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: make, template: make}
      - name: use
        depends: make
        template: use
        arguments: {artifacts: [{name: data, from: "{{tasks.make.outputs.artifacts.data}}"}]}
  - name: make
    container: {image: alpine, command: [sh, -c, "echo hi > {{outputs.artifacts.data.path}}"]}
    outputs: {artifacts: [{name: data, path: /tmp/data, s3: {key: x}}]}
  - name: use
    inputs: {artifacts: [{name: data, path: /in/data}, {name: other, path: /in/other, http: {url: "https://x"}}]}
    container: {image: alpine, command: [cat, "{{inputs.artifacts.data.path}}", "{{inputs.artifacts.other.path}}"]}
"#,
    ));
    let wf = &imported.workflow;
    let use_ = step(wf, "use");
    let input = &use_.inputs.as_ref().unwrap().artifacts[0];
    assert_eq!(
        (input.from.as_str(), input.path.as_str()),
        ("{{steps.make.outputs.artifacts.data}}", "/in/data")
    );
    assert_eq!(
        use_.container.as_ref().unwrap().command,
        ["cat", "{{inputs.artifacts.data.path}}", "/in/other"]
    );
    assert_eq!(
        step(wf, "make").container.as_ref().unwrap().command[2],
        "echo hi > {{outputs.artifacts.data.path}}"
    );
    assert!(reported(&imported, "artifact s3"));
    assert!(reported(&imported, "artifact http"));
}

#[test]
fn container_and_script_bodies() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  nodeSelector: {pool: cpu}
  templates:
  - name: main
    steps:
    - - {name: c, template: c}
      - {name: s, template: s}
  - name: c
    tolerations: [{key: gpu, operator: Exists}]
    container:
      image: alpine
      command: [sh, -c]
      args: ["echo $A"]
      workingDir: /work
      env:
      - {name: A, value: "1"}
      - {name: NOTHING, value: null}
      - {name: TOKEN, valueFrom: {secretKeyRef: {name: creds, key: token}}}
      - {name: CM, valueFrom: {configMapKeyRef: {name: cm, key: k}}}
      resources:
        requests: {cpu: 500m, memory: 1Gi}
        limits: {cpu: "1", nvidia.com/gpu: 1}
      volumeMounts: [{name: v, mountPath: /v}]
  - name: s
    script: {image: python:3.12, command: [python], source: "print(1)"}
"#,
    ));
    let wf = &imported.workflow;
    let c = step(wf, "c");
    let container = c.container.as_ref().unwrap();
    assert_eq!(container.working_dir.as_deref(), Some("/work"));
    let env: Vec<(&str, Option<&str>, bool)> = container
        .env
        .iter()
        .map(|e| (e.name.as_str(), e.value.as_deref(), e.secret.is_some()))
        .collect();
    assert_eq!(
        env,
        [
            ("A", Some("1"), false),
            ("NOTHING", Some(""), false),
            ("TOKEN", None, true)
        ]
    );
    let r = c.resources.as_ref().unwrap();
    assert_eq!(
        (r.cpu.unwrap().millis(), r.memory.unwrap().bytes(), r.gpu),
        (500, 1 << 30, Some(1))
    );
    let hints = c.hints.as_ref().unwrap();
    assert_eq!(hints.node_selector["pool"], "cpu");
    assert_eq!(hints.tolerations.len(), 1);
    let script = step(wf, "s").script.as_ref().unwrap();
    assert_eq!(
        (script.command.as_slice(), script.source.as_str()),
        (&["python".to_owned()][..], "print(1)")
    );
    for feature in ["env configMapKeyRef", "volumeMounts", "resources.limits"] {
        assert!(
            reported(&imported, feature),
            "{feature} not reported: {:?}",
            imported.unsupported
        );
    }
}

#[test]
fn retries_timeouts_labels_and_parameters() {
    let imported = import(
        r#"
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: Retry_Me
  labels: {team: ml}
  annotations: {workflows.argoproj.io/description: "Retries.", other: x}
spec:
  entrypoint: main
  arguments:
    parameters:
    - {name: who, value: world, enum: [world, moon], description: Whom to greet.}
  templates:
  - name: main
    inputs: {parameters: [{name: who}, {name: extra, value: "7"}]}
    activeDeadlineSeconds: 600
    retryStrategy:
      limit: "3"
      retryPolicy: OnTransientError
      backoff: {duration: "1m30s", factor: "2", cap: "2m", maxDuration: "5m"}
    container: {image: alpine, args: ["{{inputs.parameters.who}} {{workflow.parameters.who}} {{inputs.parameters.extra}} {{workflow.name}} {{pod.name}}"]}
"#,
    );
    let wf = &imported.workflow;
    assert_eq!(
        (wf.name.as_str(), wf.description.as_deref()),
        ("retry-me", Some("Retries."))
    );
    assert_eq!(wf.labels["team"], "ml");
    let who = &wf.parameters[0];
    assert_eq!(
        (who.default.as_ref().unwrap().as_str(), who.allowed.len()),
        ("world", 2)
    );
    let main = step(wf, "main");
    assert_eq!(
        args(main),
        ["{{workflow.parameters.who}} {{workflow.parameters.who}} 7 {{workflow.name}} %pod.name%"]
    );
    let retry = main.retry.as_ref().unwrap();
    assert_eq!((retry.limit, retry.on), (3, RetryOn::Transient));
    let backoff = retry.backoff.as_ref().unwrap();
    assert_eq!(backoff.duration.as_std().as_secs(), 90);
    assert_eq!(
        (
            backoff.factor,
            backoff.max_duration.unwrap().as_std().as_secs()
        ),
        (Some(2), 120)
    );
    assert_eq!(main.timeout.unwrap().as_std().as_secs(), 600);
    for feature in ["backoff.maxDuration", "{{pod.name}}", "annotation"] {
        assert!(
            reported(&imported, feature),
            "{feature} not reported: {:?}",
            imported.unsupported
        );
    }
}

#[test]
fn empty_dir_volumes_where_paths_are_declared_keep_the_run() {
    // The Couler SDK's shape: an emptyDir mounted at /mnt, outputs in /mnt.
    let imported = import(&workflow(
        r#"
  entrypoint: main
  volumes:
  - {name: couler-out-dir-0, emptyDir: {}}
  - {name: data, persistentVolumeClaim: {claimName: datasets}}
  - {name: conf, configMap: {name: app}}
  templates:
  - name: main
    steps:
    - - {name: produce, template: produce}
    - - {name: other, template: other}
  - name: produce
    container:
      image: alpine
      command: [sh, -c, "echo -n hi > /mnt/hello_world.txt"]
      volumeMounts: [{name: couler-out-dir-0, mountPath: /mnt/}]
    outputs: {parameters: [{name: out, valueFrom: {path: /mnt/hello_world.txt}}]}
  - name: other
    volumes: [{name: scratch, emptyDir: {medium: Memory}}, {name: host, hostPath: {path: /var/run}}]
    container:
      image: alpine
      command: [sh, -c, "cat /in/x"]
      volumeMounts:
      - {name: scratch, mountPath: /in}
      - {name: couler-out-dir-0, mountPath: /scratch}
      - {name: scratch, mountPath: /ro, readOnly: true}
      - {name: data, mountPath: /data}
      - {name: host, mountPath: /var/run}
    outputs: {artifacts: [{name: x, path: /in/x}]}
"#,
    ));
    let at = |feature: &str| -> Vec<&str> {
        let mut paths: Vec<&str> = imported
            .unsupported
            .iter()
            .filter(|u| u.feature == feature)
            .map(|u| u.path.as_str())
            .collect();
        paths.sort();
        paths
    };
    assert_eq!(
        at("emptyDir volume"),
        ["/spec/templates/2/volumes/0", "/spec/volumes/0"]
    );
    assert_eq!(
        at("emptyDir mount"),
        [
            "/spec/templates/1/container/volumeMounts/0",
            "/spec/templates/2/container/volumeMounts/0"
        ]
    );
    assert_eq!(
        at("volumes"),
        [
            "/spec/templates/2/volumes/1",
            "/spec/volumes/1",
            "/spec/volumes/2"
        ]
    );
    // At a directory without declared paths, read only, or another volume.
    assert_eq!(
        at("volumeMounts"),
        [
            "/spec/templates/2/container/volumeMounts/1",
            "/spec/templates/2/container/volumeMounts/2",
            "/spec/templates/2/container/volumeMounts/3",
            "/spec/templates/2/container/volumeMounts/4"
        ]
    );
    let changing: Vec<(&str, &str)> = imported
        .unsupported
        .iter()
        .filter(|u| u.changes_run())
        .map(|u| (u.feature.as_str(), u.path.as_str()))
        .filter(|(_, path)| !path.starts_with("/spec/templates/2/container/volumeMounts"))
        .collect();
    assert_eq!(
        changing,
        [
            ("volumes", "/spec/volumes/1"),
            ("volumes", "/spec/volumes/2"),
            ("volumes", "/spec/templates/2/volumes/1"),
        ]
    );
    let message = |path: &str| {
        let u = imported
            .unsupported
            .iter()
            .find(|u| u.path == path)
            .unwrap();
        u.message.clone()
    };
    assert!(
        message("/spec/templates/1/container/volumeMounts/0")
            .contains("each step gets a fresh writable directory there"),
        "{:?}",
        imported.unsupported
    );
    assert!(
        message("/spec/templates/2/container/volumeMounts/1")
            .contains("no declared input or output path lies directly in /scratch"),
        "{:?}",
        imported.unsupported
    );
    assert!(message("/spec/volumes/1").contains("persistentVolumeClaim volume \"data\""));
}
