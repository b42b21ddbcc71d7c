//! Workflows that together use every IR feature, planned as a run would
//! plan them, for the engine compilers' tests: the examples, plus one small
//! workflow per feature.

#![allow(dead_code)]

use couler_optimizer::{Facts, Pipeline, Plan};
use std::path::PathBuf;

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Plans an IR document with every pass (no cache, no history).
pub fn plan(yaml: &str) -> Plan {
    let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml)
        .unwrap_or_else(|p| panic!("invalid test workflow: {p}\n{yaml}"));
    Pipeline::default()
        .plan(workflow, &Facts::default(), |_, f| f())
        .expect("the workflow plans")
}

/// `examples/*.yaml` except `tune.yaml` (searches run in stages), by name.
pub fn examples() -> Vec<(String, Plan)> {
    let mut out = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(repo_root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    paths.sort();
    for path in paths {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        if name == "tune" {
            continue;
        }
        out.push((name, plan(&std::fs::read_to_string(&path).unwrap())));
    }
    out
}

/// `examples/<name>.yaml`, planned.
pub fn example(name: &str) -> Plan {
    let path = repo_root().join("examples").join(format!("{name}.yaml"));
    plan(&std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("no example {name}: {e}")))
}

/// The feature workflow `name`, planned.
pub fn feature(name: &str) -> Plan {
    FEATURES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, yaml)| plan(yaml))
        .unwrap_or_else(|| panic!("no feature {name}"))
}

/// One small workflow per IR feature, by name.
pub fn features() -> Vec<(&'static str, Plan)> {
    FEATURES.iter().map(|(n, y)| (*n, plan(y))).collect()
}

const FEATURES: &[(&str, &str)] = &[
    (
        "container-args-env",
        r#"
apiVersion: couler.dev/v1alpha1
name: container-args-env
labels: {team: ml}
timeout: 2h
parameters: [{name: who, default: world}]
steps:
  - name: hello
    description: Says hello.
    container:
      image: alpine:3.20
      command: [sh, -c]
      args: ['echo hello {{workflow.parameters.who}} $GREETING']
      env: [{name: GREETING, value: hi}, {name: TOKEN, secret: {name: creds, key: token}}]
      workingDir: /tmp
    resources: {cpu: 500m, memory: 256Mi, gpu: 1}
    hints: {nodeSelector: {pool: gpu}, tolerations: [{key: gpu, operator: Exists, effect: NoSchedule}]}
"#,
    ),
    (
        "script-outputs",
        r#"
apiVersion: couler.dev/v1alpha1
name: script-outputs
steps:
  - name: produce
    script:
      image: python:3.12
      command: [python3]
      source: |
        open("{{outputs.parameters.n.path}}", "w").write("3")
        open("{{outputs.artifacts.data.path}}", "w").write("a,b\n")
    outputs:
      parameters: [{name: n, path: /tmp/n, default: '0'}]
      artifacts: [{name: data, path: /tmp/data.csv}]
  - name: consume
    inputs: {artifacts: [{name: data, from: '{{steps.produce.outputs.artifacts.data}}', path: /in/data.csv}]}
    container: {image: alpine, command: [sh, -c, 'cat {{inputs.artifacts.data.path}}; echo {{steps.produce.outputs.parameters.n}} {{steps.produce.outputs.result}}']}
"#,
    ),
    (
        "depends-groups",
        r#"
apiVersion: couler.dev/v1alpha1
name: depends-groups
groups:
  - {name: trainers, steps: [lstm, gru], depends: [prep]}
steps:
  - {name: prep, container: {image: alpine, command: [echo, prep]}}
  - {name: lstm, container: {image: alpine, command: [echo, lstm]}}
  - {name: gru, container: {image: alpine, command: [echo, gru]}}
  - {name: pick, depends: [trainers], container: {image: alpine, command: [echo, pick]}}
"#,
    ),
    (
        "when",
        r#"
apiVersion: couler.dev/v1alpha1
name: when
steps:
  - {name: flip, script: {image: python:3.12, command: [python3], source: 'import random; print(random.choice(["heads", "tails"]))'}}
  - name: heads
    depends: [flip]
    when: [{input: '{{steps.flip.outputs.result}}', operator: eq, value: heads}]
    container: {image: alpine, command: [echo, heads]}
  - name: tails
    depends: [flip]
    when: [{input: '{{steps.flip.outputs.result}}', operator: in, values: [tails, edge]}]
    container: {image: alpine, command: [echo, tails]}
  - name: big
    depends: [flip]
    when: [{input: '{{steps.flip.outputs.result}}', operator: ne, value: heads}]
    container: {image: alpine, command: [echo, big]}
"#,
    ),
    (
        "map-items",
        r#"
apiVersion: couler.dev/v1alpha1
name: map-items
steps:
  - name: train
    map: {items: [100, 200, 300], parallelism: 2}
    container: {image: alpine, command: [echo, 'batch {{item}}']}
"#,
    ),
    (
        "map-from",
        r#"
apiVersion: couler.dev/v1alpha1
name: map-from
steps:
  - name: shards
    script: {image: python:3.12, command: [python3], source: 'import json; print(json.dumps([1, 2, 3]))'}
  - name: work
    map: {from: '{{steps.shards.outputs.result}}'}
    container: {image: alpine, command: [echo, 'shard {{item}}']}
"#,
    ),
    (
        "while",
        r#"
apiVersion: couler.dev/v1alpha1
name: while
steps:
  - name: poll
    while: {condition: [{input: '{{steps.poll.outputs.result}}', operator: ne, value: done}], maxIterations: 5}
    script: {image: python:3.12, command: [python3], source: 'import random; print(random.choice(["done", "wait"]))'}
"#,
    ),
    (
        "retry-timeout",
        r#"
apiVersion: couler.dev/v1alpha1
name: retry-timeout
steps:
  - name: flaky
    retry: {limit: 3, backoff: {duration: 10s, factor: 2, maxDuration: 5m}, on: transient}
    timeout: 30m
    container: {image: alpine, command: [sh, -c, 'exit 0']}
  - name: always
    retry: {limit: 2}
    container: {image: alpine, command: [sh, -c, 'exit 0']}
"#,
    ),
    (
        "exit-handler",
        r#"
apiVersion: couler.dev/v1alpha1
name: exit-handler
steps:
  - {name: work, container: {image: alpine, command: [echo, work]}}
onExit:
  - {name: notify, container: {image: alpine, command: [sh, -c, 'echo run {{workflow.status}}']}}
  - {name: cleanup, depends: [notify], container: {image: alpine, command: [echo, cleanup]}}
"#,
    ),
    (
        "parallelism-schedule",
        r#"
apiVersion: couler.dev/v1alpha1
name: parallelism-schedule
parallelism: 2
schedule: {cron: '0 2 * * *', timezone: Europe/Berlin}
steps:
  - {name: a, container: {image: alpine, command: [echo, a]}}
  - {name: b, container: {image: alpine, command: [echo, b]}}
  - {name: c, container: {image: alpine, command: [echo, c]}}
"#,
    ),
    (
        "jobs",
        r#"
apiVersion: couler.dev/v1alpha1
name: jobs
steps:
  - name: torch
    job:
      framework: pytorch
      image: pytorch/pytorch:2.3.0
      command: [python, train.py]
      replicas: {master: {count: 1}, worker: {count: 2, resources: {gpu: 1}, image: 'pytorch/pytorch:2.3.0-cuda12.1-cudnn8-runtime'}}
  - name: tf
    job:
      framework: tensorflow
      image: tensorflow/tensorflow:2.16.1
      command: [python, train.py]
      args: [--role=chief]
      replicas: {chief: {count: 1}, worker: {count: 2, args: [--role=worker]}, ps: {count: 1, command: [python, ps.py]}}
  - name: mpi
    job:
      framework: mpi
      image: mpioperator/mpi-pi:latest
      command: [mpirun, pi]
      replicas: {launcher: {count: 1}, worker: {count: 2}}
"#,
    ),
];
