//! The Tekton compiler: every example and feature workflow, checked field
//! by field, then run through the Tekton community's linter and the Tekton
//! v1 API schema (`scripts/validate-tekton`).

mod compile_support;

use compile_support::{example, examples, feature, features, plan, repo_root};
use couler_engines::compile::Manifest;
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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
            "schedule",
            "parallelism: 4",
        ],
    ),
    ("map-items", &["train", "map.parallelism: 2"]),
    ("while", &["poll", "while"]),
    ("retry-timeout", &["flaky", "retry.on: transient"]),
    ("parallelism-schedule", &["schedule", "parallelism: 2"]),
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
        .collect()
}

#[test]
fn refused_workflows_name_the_step_and_the_feature() {
    let all: Vec<(String, Plan)> = examples()
        .into_iter()
        .chain(features().into_iter().map(|(n, p)| (n.to_owned(), p)))
        .collect();
    for (name, words) in REFUSED {
        let (_, plan) = all.iter().find(|(n, _)| n == name).unwrap();
        let message = unsupported(plan);
        for w in *words {
            assert!(message.contains(w), "{name}: {w:?} missing in {message}");
        }
    }
}

#[test]
fn every_other_workflow_compiles_to_a_pipeline_and_its_run() {
    for (name, plan) in compilable() {
        let (pipeline, run) = compiled(&plan);
        assert_eq!(pipeline["apiVersion"], "tekton.dev/v1", "{name}");
        assert_eq!(pipeline["kind"], "Pipeline");
        assert_eq!(run["kind"], "PipelineRun");
        assert_eq!(
            run["spec"]["pipelineRef"]["name"],
            pipeline["metadata"]["name"]
        );
        assert_eq!(run["spec"]["timeouts"]["pipeline"], "0s");
        for object in [&pipeline, &run] {
            let labels = &object["metadata"]["labels"];
            assert_eq!(labels["couler.dev/tenant"], "tnt_acme", "{name}");
            assert_eq!(labels["couler.dev/run"], "run_01ABC");
            assert_eq!(labels["couler.dev/workflow"], plan.workflow.name.as_str());
        }
        let running = plan
            .steps
            .iter()
            .filter(|s| matches!(s.action, Action::Run))
            .count();
        let spec = &pipeline["spec"];
        let covered: usize = spec["tasks"]
            .as_array()
            .into_iter()
            .chain(spec["finally"].as_array())
            .flatten()
            .map(|t| {
                t["taskSpec"]["metadata"]["annotations"]["couler.dev/steps"]
                    .as_str()
                    .map_or(1, |s| s.split(',').count())
            })
            .sum();
        assert_eq!(covered, running, "{name}: every running step has a task");
    }
}

#[test]
fn diamond_passes_results_through_task_params() {
    let (pipeline, run) = compiled(&example("diamond"));
    assert_eq!(pipeline["metadata"]["name"], "diamond-run-01abc-a1");
    assert_eq!(run["metadata"]["name"], "diamond-run-01abc-a1");
    assert_eq!(pipeline["metadata"]["labels"]["example"], "diamond");
    assert_eq!(task_names(&pipeline, "tasks"), ["a", "b", "c", "d"]);
    assert_eq!(
        pipeline["spec"]["params"],
        json!([{"name": "message", "type": "string", "default": "hello"}])
    );
    assert_eq!(
        run["spec"]["params"],
        json!([{"name": "message", "value": "hello"}])
    );
    let a = task(&pipeline, "a");
    assert_eq!(a["taskSpec"]["results"][0]["name"], "result");
    assert!(
        step_script(a).contains("tee \"$out\""),
        "a's stdout is captured"
    );
    assert_eq!(
        a["taskSpec"]["steps"][0]["args"],
        json!(["sh", "-c", "echo A says hello"])
    );
    let b = task(&pipeline, "b");
    assert_eq!(params(b)["step_a_result"], "$(tasks.a.results.result)");
    assert_eq!(
        b["taskSpec"]["steps"][0]["args"][2],
        "echo B got: $(params.step_a_result)"
    );
    // Result references order the tasks; no runAfter is needed.
    let d = task(&pipeline, "d");
    assert!(d.get("runAfter").is_none());
    assert_eq!(params(d).len(), 2);
    // d's output is read by nobody: it runs as written, unwrapped.
    assert_eq!(d["taskSpec"]["steps"][0]["command"], json!(["sh", "-c"]));
    assert!(d["taskSpec"].get("results").is_none());
}

#[test]
fn coin_flip_guards_with_when_expressions() {
    let (pipeline, _) = compiled(&example("coin-flip"));
    for side in ["heads", "tails"] {
        let t = task(&pipeline, side);
        assert_eq!(
            t["when"],
            json!([{"input": "$(tasks.flip.results.result)", "operator": "in", "values": [side]}])
        );
        assert!(t.get("runAfter").is_none(), "the when reference orders it");
    }
    let flip = step_script(task(&pipeline, "flip"));
    assert!(flip.starts_with("#!/bin/sh\n"));
    assert!(flip.contains("python3 \"$src\""));
    assert!(flip.contains("import random"));
}

#[test]
fn skips_reach_the_steps_below() {
    let (pipeline, _) = compiled(&compile_support::plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: cascade
steps:
  - name: flip
    container: {image: alpine, command: [sh, -c, "echo heads"]}
  - name: heads
    depends: [flip]
    when: [{input: "{{steps.flip.outputs.result}}", operator: eq, value: heads}]
    container: {image: alpine, command: [sh, -c, "echo yes"]}
  - name: celebrate
    depends: [heads]
    when: [{input: "{{steps.heads.outputs.result}}", operator: ne, value: "no"}]
    container: {image: alpine, command: [sh, -c, "echo hooray"]}
  - name: party
    depends: [celebrate, flip]
    container: {image: alpine, command: [sh, -c, "echo party"]}
"#,
    ));
    // Each task below one that may be skipped requires that it ran: a
    // skipped task has no results, so Tekton skips the tasks that read one.
    let ran = |t: &str| json!({"input": format!("$(tasks.{t}.results.couler-ran)"), "operator": "in", "values": ["true"]});
    let own =
        json!({"input": "$(tasks.heads.results.result)", "operator": "notin", "values": ["no"]});
    assert_eq!(
        task(&pipeline, "celebrate")["when"],
        json!([own, ran("heads")])
    );
    assert_eq!(task(&pipeline, "party")["when"], json!([ran("celebrate")]));
    assert!(task(&pipeline, "flip").get("when").is_none());
    for (name, publishes) in [
        ("flip", false),
        ("heads", true),
        ("celebrate", true),
        ("party", false),
    ] {
        let results = task(&pipeline, name)["taskSpec"]["results"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(
            results.iter().any(|r| r["name"] == "couler-ran"),
            publishes,
            "{name}"
        );
    }
    assert!(
        step_script(task(&pipeline, "heads"))
            .ends_with("printf true > '$(results.couler-ran.path)' || exit 1\n")
    );
}

#[test]
fn when_operators_map_to_in_notin_and_cel() {
    let (pipeline, _) = compiled(&feature("when"));
    assert_eq!(task(&pipeline, "big")["when"][0]["operator"], "notin");
    assert_eq!(
        task(&pipeline, "big")["when"][0]["values"],
        json!(["heads"])
    );
    assert_eq!(
        task(&pipeline, "tails")["when"][0]["values"],
        json!(["tails", "edge"])
    );
    assert!(
        pipeline["metadata"].get("annotations").is_none(),
        "no feature flag needed"
    );

    let numeric = extras()
        .into_iter()
        .find(|(n, _)| n == "numeric-when")
        .unwrap()
        .1;
    let (pipeline, run) = compiled(&numeric);
    assert_eq!(
        task(&pipeline, "deploy")["when"],
        json!([
            {"cel": "double('$(tasks.train.results.acc)') > 0.9"},
            {"cel": "double('$(tasks.train.results.acc)') <= 1.0"}
        ])
    );
    for object in [&pipeline, &run] {
        assert_eq!(
            object["metadata"]["annotations"]["couler.dev/tekton-feature-flags"],
            "enable-cel-in-whenexpression=true"
        );
    }
}

#[test]
fn artifacts_travel_through_the_workspace() {
    let (pipeline, run) = compiled(&example("artifact-passing"));
    assert_eq!(
        pipeline["spec"]["workspaces"],
        json!([{"name": "artifacts"}])
    );
    let claim = &run["spec"]["workspaces"][0];
    assert_eq!(claim["name"], "artifacts");
    assert_eq!(
        claim["volumeClaimTemplate"]["spec"]["accessModes"],
        json!(["ReadWriteOnce"])
    );
    let produce = task(&pipeline, "produce");
    assert_eq!(
        produce["workspaces"],
        json!([{"name": "artifacts", "workspace": "artifacts"}])
    );
    assert!(
        step_script(produce).contains("cp -a /tmp/outputs/dataset.csv \"$ws/produce/dataset\"")
    );
    let consume = task(&pipeline, "consume");
    assert_eq!(
        consume["runAfter"],
        json!(["produce"]),
        "no result orders it"
    );
    assert!(step_script(consume).contains("cp -a \"$ws/produce/dataset\" /tmp/inputs/dataset.csv"));
    // The wrapper runs the step's own argv.
    assert_eq!(
        consume["taskSpec"]["steps"][0]["args"],
        json!(["sh", "-c", "wc -l < /tmp/inputs/dataset.csv"])
    );
}

#[test]
fn output_parameters_become_results() {
    let (pipeline, _) = compiled(&feature("script-outputs"));
    let produce = task(&pipeline, "produce");
    let results: Vec<&str> = produce["taskSpec"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(results, ["n", "result"]);
    let script = step_script(produce);
    assert!(script.contains("if [ -f /tmp/n ]; then v=$(cat /tmp/n); else v=0; fi"));
    assert!(
        script.contains("open(\"/tmp/n\", \"w\")"),
        "paths are the declared ones"
    );
    let consume = task(&pipeline, "consume");
    assert_eq!(
        params(consume)["step_produce_n"],
        "$(tasks.produce.results.n)"
    );
    assert_eq!(consume["runAfter"], Value::Null);

    let required = extras()
        .into_iter()
        .find(|(n, _)| n == "required-output")
        .unwrap()
        .1;
    let (pipeline, _) = compiled(&required);
    assert!(step_script(task(&pipeline, "produce")).contains("and has no default"));
}

#[test]
fn groups_and_depends_become_run_after() {
    let (pipeline, _) = compiled(&feature("depends-groups"));
    assert_eq!(task(&pipeline, "lstm")["runAfter"], json!(["prep"]));
    assert_eq!(task(&pipeline, "gru")["runAfter"], json!(["prep"]));
    assert_eq!(task(&pipeline, "pick")["runAfter"], json!(["lstm", "gru"]));
    assert_eq!(
        task(&pipeline, "lstm")["taskSpec"]["metadata"]["labels"]["couler.dev/group"],
        "trainers"
    );
}

#[test]
fn automl_reads_parallel_scores() {
    let (pipeline, _) = compiled(&example("automl"));
    let best = task(&pipeline, "select-best");
    assert_eq!(
        params(best)["step_xgboost_accuracy"],
        "$(tasks.xgboost.results.accuracy)"
    );
    assert_eq!(
        params(best)["step_lightgbm_accuracy"],
        "$(tasks.lightgbm.results.accuracy)"
    );
    assert_eq!(
        best["runAfter"],
        Value::Null,
        "the group is implied by the results"
    );
    let xgboost = &task(&pipeline, "xgboost")["taskSpec"]["steps"][0];
    assert_eq!(
        xgboost["computeResources"],
        json!({"requests": {"cpu": "2", "memory": "2Gi"}})
    );
    assert_eq!(
        task(&pipeline, "xgboost")["taskSpec"]["metadata"]["labels"]["couler.dev/group"],
        "train-models"
    );
}

#[test]
fn containers_keep_env_secrets_resources_and_hints() {
    let (pipeline, run) = compiled(&feature("container-args-env"));
    let hello = task(&pipeline, "hello");
    assert_eq!(hello["description"], "Says hello.");
    let step = &hello["taskSpec"]["steps"][0];
    assert_eq!(step["command"], json!(["sh", "-c"]));
    assert_eq!(step["args"], json!(["echo hello world $GREETING"]));
    assert_eq!(step["workingDir"], "/tmp");
    assert_eq!(
        step["env"],
        json!([
            {"name": "GREETING", "value": "hi"},
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token"}}}
        ])
    );
    assert_eq!(
        step["computeResources"],
        json!({"requests": {"cpu": "500m", "memory": "256Mi"}, "limits": {"nvidia.com/gpu": "1"}})
    );
    assert_eq!(
        run["spec"]["taskRunSpecs"],
        json!([{
            "pipelineTaskName": "hello",
            "podTemplate": {
                "nodeSelector": {"pool": "gpu"},
                "tolerations": [{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}]
            }
        }])
    );
    assert_eq!(pipeline["metadata"]["labels"]["team"], "ml");
    assert_eq!(
        run["spec"]["params"],
        json!([{"name": "who", "value": "world"}])
    );
}

#[test]
fn maps_fan_out_as_matrices() {
    let (pipeline, _) = compiled(&example("map-batch-sizes"));
    let train = task(&pipeline, "train");
    assert_eq!(
        train["matrix"],
        json!({"params": [{"name": "item", "value": ["100", "200", "300"]}]})
    );
    assert!(step_script(train).contains("batch = int(\"$(params.item)\")"));
    let evaluate = task(&pipeline, "evaluate");
    assert_eq!(
        evaluate["matrix"],
        json!({"params": [{"name": "item", "value": "$(tasks.train.results.model[*])"}]})
    );
    assert_eq!(
        pipeline["metadata"]["annotations"]["couler.dev/tekton-feature-flags"],
        "enable-api-fields=beta"
    );

    let fields = extras()
        .into_iter()
        .find(|(n, _)| n == "item-fields")
        .unwrap()
        .1;
    let (pipeline, _) = compiled(&fields);
    let train = task(&pipeline, "train");
    assert_eq!(
        train["matrix"]["include"][1],
        json!({"name": "item-1", "params": [
            {"name": "item", "value": "{\"depth\":5,\"lr\":0.01}"},
            {"name": "item_depth", "value": "5"},
            {"name": "item_lr", "value": "0.01"}
        ]})
    );
    assert_eq!(
        train["taskSpec"]["steps"][0]["command"][1],
        "lr=$(params.item_lr) depth=$(params.item_depth) all=$(params.item)"
    );
}

#[test]
fn retries_backoff_and_timeouts() {
    let (_, plan) = adapted()
        .into_iter()
        .find(|(n, _)| n == "retry-timeout-adapted")
        .unwrap();
    let (pipeline, _) = compiled(&plan);
    let flaky = task(&pipeline, "flaky");
    assert_eq!(flaky["retries"], 3);
    assert_eq!(flaky["timeout"], "30m0s");
    let steps = flaky["taskSpec"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["name"], "backoff");
    let backoff = steps[0]["script"].as_str().unwrap();
    assert!(backoff.contains("n=$(context.task.retry-count)"));
    assert!(backoff.contains("d=10\n") && backoff.contains("d * 2") && backoff.contains("-le 300"));
    let always = task(&pipeline, "always");
    assert_eq!(always["retries"], 2);
    assert_eq!(always["taskSpec"]["steps"].as_array().unwrap().len(), 1);
}

#[test]
fn exit_handlers_become_finally_tasks() {
    let (_, plan) = adapted()
        .into_iter()
        .find(|(n, _)| n == "exit-handler-adapted")
        .unwrap();
    let (pipeline, _) = compiled(&plan);
    assert_eq!(task_names(&pipeline, "tasks"), ["work"]);
    assert_eq!(task_names(&pipeline, "finally"), ["notify", "cleanup"]);
    let notify = task(&pipeline, "notify");
    assert_eq!(params(notify)["workflow_status"], "$(tasks.status)");
    // The wrapper turns Tekton's words into Couler's before the step runs.
    let step = &notify["taskSpec"]["steps"][0];
    assert_eq!(step["args"][2], "echo run @COULER_WORKFLOW_STATUS@");
    let script = step["script"].as_str().unwrap();
    assert!(
        script.contains("case '$(params.workflow_status)' in")
            && script.contains("Succeeded|Completed) couler_status=succeeded"),
        "{script}"
    );

    let when = extras()
        .into_iter()
        .find(|(n, _)| n == "exit-status-when")
        .unwrap()
        .1;
    let (pipeline, _) = compiled(&when);
    let celebrate = task(&pipeline, "celebrate");
    assert_eq!(
        celebrate["when"],
        json!([{"input": "$(tasks.status)", "operator": "in", "values": ["Succeeded", "Completed"]}])
    );
    assert_eq!(
        params(celebrate)["step_work_result"],
        "$(tasks.work.results.result)"
    );
}

#[test]
fn chained_exit_handlers_run_as_steps_of_one_finally_task() {
    let (pipeline, run) = compiled(&feature("exit-handler"));
    assert_eq!(task_names(&pipeline, "finally"), ["notify"]);
    let notify = task(&pipeline, "notify");
    let steps: Vec<&str> = notify["taskSpec"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(steps, ["notify", "cleanup"]);
    assert_eq!(
        notify["taskSpec"]["metadata"]["annotations"]["couler.dev/steps"],
        "notify,cleanup"
    );
    assert_eq!(params(notify)["workflow_status"], "$(tasks.status)");
    assert!(run["spec"].get("taskRunSpecs").is_none());

    // Exit handlers that fan out cannot run one after another unchanged.
    let mut p = feature("exit-handler");
    p.workflow.on_exit.push(p.workflow.on_exit[1].clone());
    p.workflow.on_exit[2].name = "archive".into();
    p.steps.push(couler_optimizer::PlannedStep {
        name: "archive".into(),
        exit_handler: true,
        action: Action::Run,
    });
    let m = unsupported(&p);
    assert!(
        m.contains("notify, cleanup, archive") && m.contains("one chain"),
        "{m}"
    );

    // Nor can a chained exit handler be guarded on its own.
    let mut p = feature("exit-handler");
    p.workflow.on_exit[1].when = vec![couler_ir::Condition {
        input: "{{workflow.status}}".into(),
        operator: couler_ir::Operator::Eq,
        value: Some(couler_ir::scalar::ParamValue("Failed".into())),
        values: Vec::new(),
    }];
    let m = unsupported(&p);
    assert!(m.contains("step `cleanup`: `when`"), "{m}");
}

#[test]
fn reused_steps_become_literals_and_keep_the_order() {
    let (pipeline, _) = compiled(&reused_chain());
    assert_eq!(task_names(&pipeline, "tasks"), ["p", "r"]);
    let r = task(&pipeline, "r");
    assert_eq!(
        r["taskSpec"]["steps"][0]["command"],
        json!(["echo", "cached q"])
    );
    assert_eq!(
        r["runAfter"],
        json!(["p"]),
        "r still waits for what q waited for"
    );
    assert!(task(&pipeline, "p")["taskSpec"].get("results").is_none());

    // A cached producer whose artifact another step needs cannot be fed.
    let mut p = example("artifact-passing");
    reuse(&mut p, "produce", StepOutputs::default());
    let message = unsupported(&p);
    assert!(
        message.contains("`consume`") && message.contains("reused"),
        "{message}"
    );

    // A reused step that recorded no result cannot be read.
    let mut p = example("diamond");
    reuse(&mut p, "a", StepOutputs::default());
    match compile(&p) {
        Err(EngineError::Other(m)) => {
            assert!(m.contains("step `b`") && m.contains("recorded none"), "{m}")
        }
        other => panic!("expected an error, got {other:?}"),
    }

    // Nothing left to run.
    let mut p = feature("map-items");
    reuse(&mut p, "train", StepOutputs::default());
    assert!(matches!(compile(&p), Err(EngineError::Other(m)) if m.contains("nothing")));
}

#[test]
fn other_refusals_name_their_step() {
    // Reading a mapped step's output as one value.
    let p = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: gather
steps:
  - {name: fan, map: {items: [1, 2]}, container: {image: alpine, command: [echo, '{{item}}']}}
  - {name: sum, container: {image: alpine, command: [echo, '{{steps.fan.outputs.result}}']}}
"#,
    );
    let m = unsupported(&p);
    assert!(
        m.contains("step `sum`") && m.contains("mapped step `fan`"),
        "{m}"
    );

    // A result name Tekton refuses.
    let p = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: bad-result
steps:
  - {name: a, container: {image: alpine, command: [echo]}, outputs: {parameters: [{name: _x, path: /tmp/x}]}}
"#,
    );
    assert!(unsupported(&p).contains("output parameter `_x`"));

    // A wrapper needs to know what to run.
    let p = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: entrypoint
steps:
  - {name: a, container: {image: alpine, args: [x]}, outputs: {parameters: [{name: x, path: /tmp/x}]}}
"#,
    );
    assert!(unsupported(&p).contains("without `command`"));

    // A tune step the scheduler did not expand.
    let text = std::fs::read_to_string(repo_root().join("examples/tune.yaml")).unwrap();
    let workflow = couler_ir::load(&text, couler_ir::Format::Yaml).unwrap();
    let p = Plan::new(workflow, BTreeMap::new());
    let m = unsupported(&p);
    assert!(
        m.contains("step `train`")
            && m.contains("the scheduler runs hyperparameter trials in stages"),
        "{m}"
    );
}

#[test]
fn yaml_keeps_strings_that_look_like_other_scalars() {
    let p = extras()
        .into_iter()
        .find(|(n, _)| n == "yaml-11-strings")
        .unwrap()
        .1;
    let m = compile(&p).unwrap();
    let (pipeline, run) = objects(&m);
    let step = &task(&pipeline, "echo")["taskSpec"]["steps"][0];
    assert_eq!(
        step["command"],
        json!([
            "echo",
            "no",
            "true",
            "1.0",
            "0",
            "null",
            "~",
            "$(params.item)"
        ])
    );
    assert_eq!(step["env"][0]["value"], "on");
    assert_eq!(step["env"][1]["value"], "010");
    assert_eq!(
        task(&pipeline, "echo")["matrix"]["params"][0]["value"],
        json!(["1.0", "on", "yes"])
    );
    assert_eq!(run["spec"]["params"][0]["value"], "no");
    assert_eq!(run["metadata"]["labels"]["couler.dev/attempt"], "1");
    // Also for YAML 1.1 readers (kubectl, PyYAML): such strings are quoted.
    let text = &m.files[0].content;
    for quoted in ["'no'", "'on'", "'1.0'", "'true'", "'yes'"] {
        assert!(text.contains(quoted), "{quoted} is quoted");
    }
}

#[test]
fn names_and_labels_follow_the_run() {
    let plan = example("diamond");
    let run = RunSpec::new("tnt_ACME corp!", "run_01ABC", 2).stage("part-1");
    let m = couler_engines::compile::compile("tekton", &plan, &run).unwrap();
    let (pipeline, pr) = objects(&m);
    assert_eq!(pipeline["metadata"]["name"], "diamond-run-01abc-part-1-a2");
    assert_eq!(pr["metadata"]["name"], "diamond-run-01abc-part-1-a2");
    let labels = &pr["metadata"]["labels"];
    assert_eq!(labels["couler.dev/tenant"], "tnt_ACME-corp");
    assert_eq!(labels["couler.dev/stage"], "part-1");
    assert_eq!(labels["couler.dev/attempt"], "2");
    let long = RunSpec::new("tnt_acme", "run_".to_owned() + &"x".repeat(80), 1);
    let m = couler_engines::compile::compile("tekton", &plan, &long).unwrap();
    let name = objects(&m).0["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        name.len() <= 63 && name.starts_with("diamond-run-x"),
        "{name}"
    );
}

#[test]
fn output_is_deterministic() {
    for (name, plan) in compilable() {
        assert_eq!(compile(&plan).unwrap(), compile(&plan).unwrap(), "{name}");
    }
}

#[test]
fn a_ten_thousand_step_chain_compiles() {
    let steps: Vec<Value> = (0..10_000)
        .map(|i| {
            let mut step = json!({"name": format!("s{i}"), "container": {"image": "alpine:3.20", "command": ["echo", i.to_string()]}});
            if i > 0 {
                step["depends"] = json!([format!("s{}", i - 1)]);
            }
            if i % 1000 == 1 {
                step["container"]["command"][1] = json!(format!("{{{{steps.s{}.outputs.result}}}}", i - 1));
            }
            step
        })
        .collect();
    let doc = json!({"apiVersion": "couler.dev/v1alpha1", "name": "chain", "steps": steps});
    let workflow = couler_ir::load_value(doc, &couler_ir::Limits::default()).unwrap();
    let plan = Plan::new(workflow, BTreeMap::new());
    let mut fastest = std::time::Duration::MAX;
    let mut m = None;
    for _ in 0..3 {
        let started = std::time::Instant::now();
        m = Some(compile(&plan).unwrap());
        fastest = fastest.min(started.elapsed());
    }
    let m = m.unwrap();
    let build = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    eprintln!("10k-step chain: {fastest:?} ({build} build, fastest of 3)");
    let options = serde_saphyr::options! {
        budget: serde_saphyr::budget! { max_nodes: 10_000_000 },
    };
    let pipeline: Value =
        serde_saphyr::from_str_with_options(&m.files[0].content, options).unwrap();
    let tasks = pipeline["spec"]["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 10_000);
    assert_eq!(tasks[9_999]["runAfter"], json!(["s9998"]));
    assert_eq!(
        tasks[1001].get("runAfter"),
        None,
        "ordered by the result it reads"
    );
    assert_eq!(
        params(&tasks[1001])["step_s1000_result"],
        "$(tasks.s1000.results.result)"
    );
}

// The validators.

fn write(dir: &Path, name: &str, m: &Manifest) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    for f in &m.files {
        std::fs::write(d.join(&f.name), &f.content).unwrap();
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tekton")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `scripts/validate-tekton`: `None` when validators are skipped,
/// otherwise whether it passed and what it printed.
fn validate(dir: &Path) -> Option<(bool, String)> {
    if std::env::var("COULER_SKIP_VALIDATORS").as_deref() == Ok("1") {
        eprintln!("COULER_SKIP_VALIDATORS=1: not running scripts/validate-tekton");
        return None;
    }
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/validate-tekton"))
        .arg(dir)
        .output()
        .expect("bash runs scripts/validate-tekton");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() == Some(2) {
        panic!(
            "the Tekton validators could not be set up (set COULER_SKIP_VALIDATORS=1 to skip them):\n{text}"
        );
    }
    Some((out.status.success(), text))
}

#[test]
fn tekton_lint_and_the_v1_schema_accept_every_manifest() {
    let dir = fresh_dir("all");
    let mut count = 0;
    for (name, plan) in compilable() {
        write(&dir, &name, &compile(&plan).unwrap());
        count += 1;
    }
    if let Some((ok, output)) = validate(&dir) {
        println!("{output}");
        assert!(ok, "scripts/validate-tekton rejected a manifest:\n{output}");
        assert!(
            output.contains(&format!("OK ({count} manifests)")),
            "{output}"
        );
    }
}

#[test]
fn the_schema_check_rejects_a_misspelt_key() {
    let dir = fresh_dir("typo");
    let mut m = compile(&example("artifact-passing")).unwrap();
    assert!(m.files[0].content.contains("runAfter:"));
    m.files[0].content = m.files[0].content.replace("runAfter:", "runAftr:");
    write(&dir, "artifact-passing", &m);
    if let Some((ok, output)) = validate(&dir) {
        assert!(!ok, "a misspelt key passed:\n{output}");
        assert!(output.contains("'runAftr' was unexpected"), "{output}");
        assert!(output.contains("/spec/tasks/1"), "{output}");
    }
}

#[test]
fn tekton_lint_rejects_an_undefined_param() {
    let dir = fresh_dir("undefined-param");
    let mut m = compile(&example("diamond")).unwrap();
    m.files[0].content = m.files[0].content.replace(
        "echo B got: $(params.step_a_result)",
        "echo B got: $(params.step_a_rezult)",
    );
    write(&dir, "diamond", &m);
    if let Some((ok, output)) = validate(&dir) {
        assert!(!ok, "an undefined param passed:\n{output}");
        assert!(output.contains("no-undefined-param"), "{output}");
        assert!(
            output.contains("tekton v1 schema: 2 objects, 0 errors"),
            "{output}"
        );
    }
}
