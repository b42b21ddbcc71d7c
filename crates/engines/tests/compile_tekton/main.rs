//! The Tekton compiler: every example and feature workflow, checked field
//! by field, then run through the Tekton community's linter and the Tekton
//! v1 API schema (`scripts/validate-tekton`).

#[path = "../compile_support/mod.rs"]
mod compile_support;

use compile_support::{example, examples, feature, features, plan, repo_root};
use couler_engines::compile::Manifest;
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod conditions;
mod coverage;
mod data_flow;
mod depends;
mod output;
mod reused;
mod tasks;
mod validator;

fn run() -> RunSpec {
    RunSpec::new("tnt_acme", "run_01ABC", 1)
}

fn compile(plan: &Plan) -> Result<Manifest, EngineError> {
    couler_engines::compile::compile("tekton", plan, &run())
}

/// The Pipeline and the PipelineRun, read back from the YAML.
fn objects(m: &Manifest) -> (Value, Value) {
    let names: Vec<&str> = m.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["pipeline.yaml", "pipelinerun.yaml"]);
    let read = |i: usize| -> Value {
        assert_eq!(m.files[i].media_type, "application/yaml");
        serde_saphyr::from_str(&m.files[i].content).expect("the manifest is YAML")
    };
    (read(0), read(1))
}

fn compiled(plan: &Plan) -> (Value, Value) {
    objects(&compile(plan).unwrap_or_else(|e| panic!("{e}")))
}

/// A task of the pipeline, main or `finally`.
fn task<'a>(pipeline: &'a Value, name: &str) -> &'a Value {
    let spec = &pipeline["spec"];
    spec["tasks"]
        .as_array()
        .into_iter()
        .chain(spec["finally"].as_array())
        .flatten()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no task {name}"))
}

fn task_names(pipeline: &Value, list: &str) -> Vec<String> {
    pipeline["spec"][list]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| t["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn step_script(task: &Value) -> &str {
    let steps = task["taskSpec"]["steps"].as_array().unwrap();
    steps.last().unwrap()["script"].as_str().unwrap_or_default()
}

fn params(task: &Value) -> BTreeMap<String, Value> {
    task["params"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| (p["name"].as_str().unwrap().to_owned(), p["value"].clone()))
        .collect()
}

fn unsupported(plan: &Plan) -> String {
    match compile(plan) {
        Err(EngineError::Unsupported { engine, feature }) => {
            assert_eq!(engine, "tekton");
            feature
        }
        Err(other) => panic!("expected Unsupported, got {other}"),
        Ok(_) => panic!("expected Unsupported, got a manifest"),
    }
}

/// What Tekton refuses, and words its message must hold (step names first).
const REFUSED: &[(&str, &[&str])] = &[
    (
        "market-trend",
        &[
            "collect-prices",
            "collect-news",
            "retry.on: transient",
            "parallelism: 4",
        ],
    ),
    ("map-items", &["train", "map.parallelism: 2"]),
    ("while", &["poll", "while"]),
    ("retry-timeout", &["flaky", "retry.on: transient"]),
    ("parallelism-schedule", &["parallelism: 2"]),
    ("jobs", &["`torch`", "`tf`", "`mpi`", "training jobs"]),
];

/// Refused workflows with the refused part taken out, so the rest of what
/// they use is compiled and validated too.
fn adapted() -> Vec<(String, Plan)> {
    let mut out = Vec::new();
    let mut p = example("market-trend");
    p.workflow.schedule = None;
    p.workflow.parallelism = None;
    for s in &mut p.workflow.steps {
        if let Some(r) = &mut s.retry {
            r.on = couler_ir::RetryOn::Always;
        }
    }
    out.push(("market-trend-adapted".to_owned(), p));
    let mut p = feature("map-items");
    p.workflow.steps[0].map.as_mut().unwrap().parallelism = None;
    out.push(("map-items-adapted".to_owned(), p));
    let mut p = feature("retry-timeout");
    p.workflow.steps[0].retry.as_mut().unwrap().on = couler_ir::RetryOn::Always;
    out.push(("retry-timeout-adapted".to_owned(), p));
    let mut p = feature("exit-handler");
    p.workflow.on_exit[1].depends.clear();
    out.push(("exit-handler-adapted".to_owned(), p));
    let mut p = feature("parallelism-schedule");
    p.workflow.schedule = None;
    p.workflow.parallelism = Some(3);
    out.push(("parallelism-schedule-adapted".to_owned(), p));
    out
}

/// Workflows for what the examples and features leave out.
fn extras() -> Vec<(String, Plan)> {
    let yaml = [
        (
            "numeric-when",
            r#"
apiVersion: couler.dev/v1alpha1
name: numeric-when
steps:
  - name: train
    script: {image: python:3.12, command: [python3], source: 'open("{{outputs.parameters.acc.path}}", "w").write("0.93")'}
    outputs: {parameters: [{name: acc, path: /tmp/acc}]}
  - name: deploy
    depends: [train]
    when:
      - {input: '{{steps.train.outputs.parameters.acc}}', operator: gt, value: 0.9}
      - {input: '{{steps.train.outputs.parameters.acc}}', operator: le, value: 1}
    container: {image: alpine:3.20, command: [echo, deploy]}
"#,
        ),
        (
            "item-fields",
            r#"
apiVersion: couler.dev/v1alpha1
name: item-fields
steps:
  - name: train
    map: {items: [{lr: 0.1, depth: 3}, {lr: 0.01, depth: 5}]}
    container: {image: alpine:3.20, command: [echo, 'lr={{item.lr}} depth={{item.depth}} all={{item}}']}
"#,
        ),
        (
            "yaml-11-strings",
            r#"
apiVersion: couler.dev/v1alpha1
name: yaml-11-strings
parameters: [{name: flag, default: "no"}]
steps:
  - name: echo
    map: {items: ["1.0", "on", "yes"]}
    container:
      image: alpine:3.20
      command: [echo, "{{workflow.parameters.flag}}", "true", "1.0", "0", "null", "~", "{{item}}"]
      env: [{name: MODE, value: "on"}, {name: COUNT, value: "010"}]
"#,
        ),
        (
            "exit-status-when",
            r#"
apiVersion: couler.dev/v1alpha1
name: exit-status-when
steps:
  - {name: work, container: {image: alpine:3.20, command: [echo, work]}}
onExit:
  - name: celebrate
    when: [{input: '{{workflow.status}}', operator: eq, value: Succeeded}]
    container: {image: alpine:3.20, command: [echo, '{{steps.work.outputs.result}}']}
"#,
        ),
        (
            "required-output",
            r#"
apiVersion: couler.dev/v1alpha1
name: required-output
steps:
  - name: produce
    container: {image: alpine:3.20, command: [sh, -c, 'echo 5 > /tmp/n']}
    outputs: {parameters: [{name: n, path: /tmp/n}]}
  - name: consume
    container: {image: alpine:3.20, command: [echo, '{{steps.produce.outputs.parameters.n}}']}
"#,
        ),
    ];
    let mut out: Vec<(String, Plan)> = yaml
        .iter()
        .map(|(n, y)| ((*n).to_owned(), plan(y)))
        .collect();
    out.push(("reused-chain".to_owned(), reused_chain()));
    out
}

fn reuse(plan: &mut Plan, step: &str, outputs: StepOutputs) {
    let s = plan.steps.iter_mut().find(|s| s.name == step).unwrap();
    s.action = Action::Reuse {
        status: ReuseStatus::Cached,
        outputs,
    };
}

/// p → q (cached) → r, where r reads q's result.
fn reused_chain() -> Plan {
    let mut p = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: reused-chain
steps:
  - {name: p, container: {image: alpine:3.20, command: [echo, p]}}
  - {name: q, depends: [p], container: {image: alpine:3.20, command: [echo, q]}}
  - {name: r, container: {image: alpine:3.20, command: [echo, '{{steps.q.outputs.result}}']}}
"#,
    );
    reuse(
        &mut p,
        "q",
        StepOutputs {
            result: Some("cached q".into()),
            ..Default::default()
        },
    );
    p
}

/// Everything that compiles, by name.
fn compilable() -> Vec<(String, Plan)> {
    let refused = |n: &str| REFUSED.iter().any(|(r, _)| *r == n);
    examples()
        .into_iter()
        .chain(features().into_iter().map(|(n, p)| (n.to_owned(), p)))
        .filter(|(n, _)| !refused(n))
        .chain(adapted())
        .chain(extras())
        .chain([("depends-succeeded".to_owned(), plan(depends::SUCCEEDED))])
        .collect()
}
