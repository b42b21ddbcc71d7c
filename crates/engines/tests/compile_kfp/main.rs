//! Kubeflow Pipelines v2 compilation: the structure of the `PipelineSpec`
//! and platform spec for every example and IR feature, what is refused, and
//! KFP's own SDK and protos (`scripts/validate-kfp`) accepting the output.

#[path = "../compile_support/mod.rs"]
mod compile_support;

use compile_support::{example, feature};

use couler_engines::compile::{Manifest, compile};
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{Action, ArtifactRef, Named, Plan, ReuseStatus, StepOutputs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod components;
mod control_flow;
mod coverage;
mod depends;
mod output;
mod reused;
mod validator;
mod wrapper;

fn run() -> RunSpec {
    RunSpec::new("tnt_acme", "run_0001", 1)
}

fn kfp(plan: &Plan) -> Result<Manifest, EngineError> {
    compile("kfp", plan, &run())
}

/// The pipeline spec and the platform spec, parsed back.
fn docs(m: &Manifest) -> (Value, Value) {
    assert_eq!(m.files.len(), 1);
    assert_eq!(m.files[0].name, "pipeline.yaml");
    let parts: Vec<&str> = m.files[0].content.split("\n---\n").collect();
    assert_eq!(parts.len(), 2, "a pipeline spec and a platform spec");
    // Room for the 10,000-step chain.
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! {
            max_events: usize::MAX,
            max_nodes: usize::MAX,
            max_total_scalar_bytes: usize::MAX,
        },
    };
    let parse = |s: &str| -> Value {
        serde_saphyr::from_str_with_options(s, options.clone()).expect("the YAML parses")
    };
    (parse(parts[0]), parse(parts[1]))
}

fn compiled(plan: &Plan) -> (Value, Value) {
    docs(&kfp(plan).unwrap_or_else(|e| panic!("{} compiles: {e}", plan.workflow.name)))
}

fn unsupported(plan: &Plan) -> String {
    match kfp(plan) {
        Err(EngineError::Unsupported { engine, feature }) => {
            assert_eq!(engine, "kfp");
            feature
        }
        other => panic!("{} should be refused, got {other:?}", plan.workflow.name),
    }
}

/// The shared feature plans, named.
fn features() -> Vec<(String, Plan)> {
    compile_support::features()
        .into_iter()
        .map(|(n, p)| (n.to_owned(), p))
        .collect()
}

fn task<'v>(dag_owner: &'v Value, name: &str) -> &'v Value {
    let t = &dag_owner["dag"]["tasks"][name];
    assert!(t.is_object(), "no task {name} in {dag_owner:#}");
    t
}

fn component<'v>(spec: &'v Value, name: &str) -> &'v Value {
    let c = &spec["components"][name];
    assert!(c.is_object(), "no component {name}");
    c
}

fn container<'v>(spec: &'v Value, step: &str) -> &'v Value {
    &spec["deploymentSpec"]["executors"][format!("exec-{step}")]["container"]
}

fn argv(spec: &Value, step: &str) -> Vec<String> {
    let c = container(spec, step);
    let list = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| a.iter().map(|s| s.as_str().unwrap().to_owned()).collect())
            .unwrap_or_default()
    };
    let mut out = list(&c["command"]);
    out.extend(list(&c["args"]));
    out
}

fn k8s<'v>(platform: &'v Value, step: &str) -> &'v Value {
    &platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"][format!("exec-{step}")]
}

fn deps(task: &Value) -> Vec<&str> {
    task["dependentTasks"]
        .as_array()
        .map(|a| a.iter().map(|v| v.as_str().unwrap()).collect())
        .unwrap_or_default()
}

fn kitchen_sink_with_gen_reused() -> Plan {
    let mut plan = compile_support::plan(KITCHEN_SINK);
    let stored = ArtifactRef {
        digest: "ef".repeat(32),
        size: 2,
        location: "s3://couler-cas/ef/efef".into(),
    };
    reuse(
        &mut plan,
        "gen",
        ReuseStatus::Cached,
        StepOutputs {
            result: Some("4".into()),
            parameters: Named::new(),
            artifacts: Named::from_iter([("report".into(), stored)]),
        },
    );
    plan
}

fn reuse(plan: &mut Plan, step: &str, status: ReuseStatus, outputs: StepOutputs) {
    let s = plan.steps.iter_mut().find(|s| s.name == step).unwrap();
    s.action = Action::Reuse { status, outputs };
}

/// A workflow of `n` steps in one chain, each reading the previous result.
fn chain(n: usize) -> Plan {
    let mut yaml = String::from("apiVersion: couler.dev/v1alpha1\nname: chain\nsteps:\n");
    for i in 0..n {
        let read = if i == 0 {
            String::new()
        } else {
            format!(" {{{{steps.s{}.outputs.result}}}}", i - 1)
        };
        yaml.push_str(&format!(
            "  - {{name: s{i}, container: {{image: alpine, command: [echo, 'step{read}']}}}}\n"
        ));
    }
    let limits = couler_ir::Limits {
        max_steps: n + 1,
        ..Default::default()
    };
    let workflow = couler_ir::load_with(&yaml, couler_ir::Format::Yaml, &limits).unwrap();
    Plan::new(workflow, BTreeMap::new())
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

const KITCHEN_SINK: &str = r#"
apiVersion: couler.dev/v1alpha1
name: kitchen-sink
steps:
  - name: sizes
    container: {image: alpine, command: [echo, '[{"n": 1, "tag": "a"}, {"n": 5, "tag": "b"}]']}
  - name: gen
    container: {image: alpine, command: [sh, -c, 'echo 3; echo r > {{outputs.artifacts.report.path}}']}
    outputs: {artifacts: [{name: report, path: /tmp/r}]}
  - name: fan
    map: {from: '{{steps.sizes.outputs.result}}', parallelism: 1}
    when: [{input: '{{item.n}}', operator: gt, value: 2}]
    container:
      image: alpine
      command: [sh, -c, 'echo {{item.tag}} $LEVEL']
      env: [{name: LEVEL, value: 'level-{{steps.gen.outputs.result}}'}]
  - name: gated
    depends: [gen]
    when:
      - {input: '{{steps.gen.outputs.result}}', operator: ge, value: 3}
      - {input: '{{steps.gen.outputs.result}}', operator: notin, values: ['0']}
    map: {items: [x, y]}
    container: {image: alpine, command: [echo, '{{item}}']}
  - name: after
    container: {image: alpine, command: [echo, '{{steps.gated.outputs.result}}']}
onExit:
  - name: report
    when: [{input: '{{workflow.status}}', operator: eq, value: failed}]
    inputs: {artifacts: [{name: r, from: '{{steps.gen.outputs.artifacts.report}}', path: /in/r}]}
    container: {image: alpine, command: [sh, -c, 'cat {{inputs.artifacts.r.path}}; echo {{steps.gen.outputs.result}} {{steps.fan.outputs.result}}']}
"#;
