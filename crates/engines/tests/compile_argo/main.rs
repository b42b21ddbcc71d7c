//! The Argo Workflows compiler: every example and feature plan compiles to a
//! Workflow with the expected structure, what Argo cannot express is refused
//! by name, and Argo's own models and schema (scripts/validate-argo) accept
//! every manifest.

#[path = "../compile_support/mod.rs"]
mod compile_support;

use compile_support::{example, examples, feature, features, plan, repo_root};
use couler_engines::compile::{Manifest, compile};
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{ArtifactRef, Facts, Named, Pipeline, Plan, ReuseStatus, StepOutputs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod control_flow;
mod depends;
mod limits;
mod reuse;
mod structure;
mod training_jobs;
mod validator;

fn run() -> RunSpec {
    RunSpec::new("tnt_acme", "run_01HXYZ", 2)
}

fn argo(plan: &Plan) -> Manifest {
    compile("argo", plan, &run()).unwrap_or_else(|e| panic!("{e}"))
}

fn parse(yaml: &str) -> Value {
    // No size budget: the 10,000-step manifest is large on purpose.
    let options = serde_saphyr::options! { budget: None };
    serde_saphyr::from_str_with_options(yaml, options).unwrap_or_else(|e| panic!("{e}\n{yaml}"))
}

/// A compiled Workflow, read back from its YAML.
struct Wf(Value);

impl Wf {
    fn of(plan: &Plan) -> Wf {
        let m = argo(plan);
        assert_eq!(m.files[0].name, "workflow.yaml");
        assert_eq!(m.files[0].media_type, "application/yaml");
        Wf(parse(&m.files[0].content))
    }

    fn spec(&self) -> &Value {
        &self.0["spec"]
    }

    fn templates(&self) -> &[Value] {
        self.spec()["templates"].as_array().unwrap()
    }

    fn template(&self, name: &str) -> &Value {
        self.templates()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no template {name:?} in\n{:#}", self.0))
    }

    fn has_template(&self, name: &str) -> bool {
        self.templates().iter().any(|t| t["name"] == name)
    }

    fn tasks(&self, dag: &str) -> &[Value] {
        self.template(dag)["dag"]["tasks"].as_array().unwrap()
    }

    fn task(&self, dag: &str, name: &str) -> &Value {
        self.tasks(dag)
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no task {name:?} in {dag:?}"))
    }
}

/// `name → value` of a list of parameters or artifacts.
fn by_name(list: &Value) -> BTreeMap<String, Value> {
    list.as_array()
        .map(|l| {
            l.iter()
                .map(|p| (p["name"].as_str().unwrap().to_owned(), p.clone()))
                .collect()
        })
        .unwrap_or_default()
}

fn arg(task: &Value, name: &str) -> String {
    by_name(&task["arguments"]["parameters"])[name]["value"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn planned(yaml: &str, facts: &Facts) -> Plan {
    let workflow = couler_ir::load(yaml, couler_ir::Format::Yaml).unwrap_or_else(|p| panic!("{p}"));
    Pipeline::default()
        .plan(workflow, facts, |_, f| f())
        .unwrap()
}

/// Every plan this file compiles, for the validator.
fn all_plans() -> Vec<(String, Plan)> {
    let mut out = examples();
    out.extend(features().into_iter().map(|(n, p)| (n.to_owned(), p)));
    out.push(("exit-reads".into(), plan(EXIT_READS)));
    out.push(("loop-reads".into(), plan(LOOP_READS)));
    out.push(("names".into(), plan(NAMES)));
    out.push(("cached".into(), cached_diamond()));
    out.push((
        "cached-artifact".into(),
        cached_artifact("s3://couler/cas/ab/abcd"),
    ));
    out.push(("reused-skip".into(), reused_skip()));
    out.push(("all-reused".into(), all_reused()));
    out.push(("job-options".into(), plan(JOB_OPTIONS)));
    out.push(("map-when".into(), plan(MAP_WHEN)));
    out.push(("depends-expressions".into(), plan(depends::DEPENDS_EXAMPLE)));
    out.push(("depends-reused".into(), depends::reused_depends_plan()));
    out
}

fn cached_diamond() -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/diamond.yaml")).unwrap();
    let outputs = StepOutputs {
        result: Some("A says it's cached".into()),
        ..StepOutputs::default()
    };
    let facts = Facts {
        cache_hits: BTreeMap::from([("a".to_owned(), (outputs, "hit".to_owned()))]),
        ..Facts::default()
    };
    planned(&text, &facts)
}

fn cached_artifact(location: &str) -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/artifact-passing.yaml")).unwrap();
    let outputs = StepOutputs {
        artifacts: Named::from_iter([(
            "dataset".to_owned(),
            ArtifactRef {
                digest: "abcd".into(),
                size: 4,
                location: location.into(),
            },
        )]),
        ..StepOutputs::default()
    };
    let facts = Facts {
        cache_hits: BTreeMap::from([("produce".to_owned(), (outputs, "hit".to_owned()))]),
        ..Facts::default()
    };
    planned(&text, &facts)
}

fn reused_skip() -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/coin-flip.yaml")).unwrap();
    let earlier = BTreeMap::from([
        (
            "flip".to_owned(),
            (
                ReuseStatus::Succeeded,
                StepOutputs {
                    result: Some("tails".into()),
                    ..StepOutputs::default()
                },
            ),
        ),
        (
            "heads".to_owned(),
            (ReuseStatus::Skipped, StepOutputs::default()),
        ),
    ]);
    let text = format!(
        "{text}\n  - name: after-heads\n    depends: [heads]\n    container: {{image: alpine, command: [echo, done]}}\n"
    );
    planned(
        &text,
        &Facts {
            earlier,
            ..Facts::default()
        },
    )
}

fn all_reused() -> Plan {
    let text = std::fs::read_to_string(repo_root().join("examples/diamond.yaml")).unwrap();
    let earlier = ["a", "b", "c", "d"]
        .map(|s| {
            (
                s.to_owned(),
                (ReuseStatus::Succeeded, StepOutputs::default()),
            )
        })
        .into();
    planned(
        &text,
        &Facts {
            earlier,
            ..Facts::default()
        },
    )
}

const EXIT_READS: &str = r#"
apiVersion: couler.dev/v1alpha1
name: exit-reads
steps:
  - name: a
    script: {image: python:3.12, command: [python3], source: 'open("{{outputs.parameters.p.path}}", "w").write("7"); open("{{outputs.artifacts.log.path}}", "w").write("x"); print("done")'}
    outputs: {parameters: [{name: p, path: /tmp/p}], artifacts: [{name: log, path: /tmp/log}]}
  - name: b
    map: {items: [1, 2]}
    container: {image: alpine, command: [echo, '{{item}}']}
  - name: c
    container: {image: alpine, command: [echo, '{{steps.a.outputs.result}}']}
onExit:
  - name: notify
    when: [{input: '{{workflow.status}}', operator: eq, value: failed}]
    inputs: {artifacts: [{name: log, from: '{{steps.a.outputs.artifacts.log}}', path: /in/log}]}
    container: {image: alpine, command: [sh, -c, 'echo {{steps.a.outputs.parameters.p}} {{steps.a.outputs.result}} {{steps.b.outputs.result}} {{workflow.status}}']}
"#;

const LOOP_READS: &str = r#"
apiVersion: couler.dev/v1alpha1
name: loop-reads
steps:
  - name: seed
    container: {image: alpine, command: [echo, '42']}
  - name: poll
    while:
      condition:
        - {input: '{{steps.poll.outputs.parameters.state}}', operator: ne, value: done}
        - {input: '{{steps.poll.outputs.result}}', operator: lt, value: 10}
      maxIterations: 3
    script:
      image: python:3.12
      command: [python3]
      source: 'open("{{outputs.parameters.state.path}}", "w").write("done"); open("{{outputs.artifacts.data.path}}", "w").write("{{steps.seed.outputs.result}}"); print(1)'
    outputs: {parameters: [{name: state, path: /tmp/state}], artifacts: [{name: data, path: /tmp/data}]}
  - name: use
    inputs: {artifacts: [{name: data, from: '{{steps.poll.outputs.artifacts.data}}', path: /in/data}]}
    container: {image: alpine, command: [echo, '{{steps.poll.outputs.result}} {{steps.poll.outputs.parameters.state}}']}
"#;

const JOB_OPTIONS: &str = r#"
apiVersion: couler.dev/v1alpha1
name: job-options
steps:
  - name: train
    map: {items: [0.1, 0.01]}
    retry: {limit: 2}
    timeout: 1h
    hints: {nodeSelector: {pool: gpu}, tolerations: [{key: gpu, operator: Exists}]}
    resources: {cpu: 4, memory: 16Gi, gpu: 2}
    job:
      framework: pytorch
      image: pytorch/pytorch:2.3.0
      command: [python, train.py]
      args: [--lr, '{{item}}']
      workingDir: /work
      env: [{name: WANDB_KEY, secret: {name: wandb, key: api-key}}]
      replicas: {worker: {count: 3}}
"#;

const MAP_WHEN: &str = r#"
apiVersion: couler.dev/v1alpha1
name: map-when
steps:
  - name: gate
    container: {image: alpine, command: [echo, go]}
  - name: work
    depends: [gate]
    map: {items: [{size: 1}, {size: 2}]}
    when:
      - {input: '{{steps.gate.outputs.result}}', operator: eq, value: go}
      - {input: '{{item.size}}', operator: gt, value: 1}
    container: {image: alpine, command: [echo, '{{item.size}}']}
  - name: after
    depends: [work]
    container: {image: alpine, command: [echo, done]}
"#;

const NAMES: &str = r#"
apiVersion: couler.dev/v1alpha1
name: names
steps:
  - name: 1st
    container: {image: alpine, command: [echo, one]}
  - name: main
    container: {image: alpine, command: [echo, '{{steps.1st.outputs.result}}']}
  - name: llllllllllllllllllllllllllllllllllllllllllllllllllllllllllll
    map: {items: [a, b], parallelism: 1}
    container: {image: alpine, command: [echo, '{{item}}']}
"#;
