//! Kubeflow Pipelines v2 compilation: the structure of the `PipelineSpec`
//! and platform spec for every example and IR feature, what is refused, and
//! KFP's own SDK and protos (`scripts/validate-kfp`) accepting the output.

mod compile_support;

use compile_support::{example, feature};

use couler_engines::compile::{Manifest, compile};
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{Action, ArtifactRef, Plan, ReuseStatus, StepOutputs};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

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

/// What each example and feature compiles to, or why it is refused.
#[test]
fn every_example_and_feature_compiles_or_is_refused_by_name() {
    let refused: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("market-trend", &["schedule"][..]),
        ("parallelism-schedule", &["schedule"][..]),
        ("while", &["step `poll`", "while"][..]),
        ("retry-timeout", &["step `flaky`", "transient"][..]),
        ("jobs", &["step `torch`", "job"][..]),
    ]);
    let all = compile_support::examples().into_iter().chain(features());
    let mut compiled_count = 0;
    for (name, plan) in all {
        if let Some(words) = refused.get(name.as_str()) {
            let why = unsupported(&plan);
            for w in *words {
                assert!(why.contains(w), "{name}: {why:?} should mention {w:?}");
            }
            continue;
        }
        let (spec, platform) = compiled(&plan);
        compiled_count += 1;
        assert_eq!(spec["schemaVersion"], "2.1.0");
        assert!(spec["sdkVersion"].as_str().unwrap().starts_with("couler-"));
        assert_eq!(spec["pipelineInfo"]["name"], plan.workflow.name.as_str());
        for step in plan.workflow.steps.iter().chain(&plan.workflow.on_exit) {
            let c = component(&spec, &format!("comp-{}", step.name));
            assert_eq!(c["executorLabel"], format!("exec-{}", step.name), "{name}");
            assert!(container(&spec, &step.name)["image"].is_string(), "{name}");
            let labels = &k8s(&platform, &step.name)["podMetadata"]["labels"];
            assert_eq!(labels["couler.dev/tenant"], "tnt_acme", "{name}");
            assert_eq!(labels["couler.dev/run"], "run_0001", "{name}");
            assert_eq!(labels["couler.dev/step"], step.name.as_str(), "{name}");
            for (k, v) in &plan.workflow.labels {
                assert_eq!(labels[k], v.as_str(), "{name}: workflow label {k}");
            }
        }
    }
    assert_eq!(compiled_count, 12);
}

#[test]
fn containers_carry_env_secrets_resources_hints_and_working_dir() {
    let (spec, platform) = compiled(&feature("container-args-env"));
    let c = container(&spec, "hello");
    assert_eq!(c["image"], "alpine:3.20");
    assert_eq!(c["env"], json!([{"name": "GREETING", "value": "hi"}]));
    // KFP has no working directory: the wrapper changes into it first.
    let a = argv(&spec, "hello");
    assert_eq!(&a[..2], ["sh", "-c"]);
    assert!(a[2].starts_with("cd \"$1\" || exit 1; shift\n"), "{}", a[2]);
    assert_eq!(&a[4..], ["/tmp", "sh", "-c", "echo hello world $GREETING"]);
    let r = &c["resources"];
    assert_eq!(r["cpuRequest"], 0.5);
    assert_eq!(r["cpuLimit"], 0.5);
    assert_eq!(r["resourceCpuLimit"], "500m");
    assert_eq!(r["memoryLimit"], 0.268435456);
    assert_eq!(r["resourceMemoryRequest"], "256Mi");
    assert_eq!(
        r["accelerator"],
        json!({"count": "1", "resourceCount": "1", "resourceType": "nvidia.com/gpu", "type": "nvidia.com/gpu"})
    );
    let k = k8s(&platform, "hello");
    assert_eq!(
        k["secretAsEnv"],
        json!([{
            "keyToEnv": [{"envVar": "TOKEN", "secretKey": "token"}],
            "optional": false,
            "secretName": "creds",
            "secretNameParameter": {"runtimeValue": {"constant": "creds"}}
        }])
    );
    assert_eq!(k["nodeSelector"], json!({"labels": {"pool": "gpu"}}));
    assert_eq!(
        k["tolerations"],
        json!([{"effect": "NoSchedule", "key": "gpu", "operator": "Exists"}])
    );
    // Labels that needed no sanitizing need no annotation.
    assert!(k["podMetadata"]["annotations"].is_null());
}

#[test]
fn scripts_outputs_and_artifacts_are_wired_through_placeholders() {
    let (spec, _) = compiled(&feature("script-outputs"));
    let produce = component(&spec, "comp-produce");
    assert_eq!(
        produce["outputDefinitions"]["parameters"],
        json!({"n": {"parameterType": "STRING"}, "result": {"parameterType": "STRING"}})
    );
    assert_eq!(
        produce["outputDefinitions"]["artifacts"]["data"]["artifactType"]["schemaTitle"],
        "system.Artifact"
    );
    let a = argv(&spec, "produce");
    // The wrapper tees stdout into `result` and writes the default of `n`.
    let wrapper = &a[2];
    assert!(wrapper.contains("tee \"$o/s\" < \"$o/p\" &"), "{wrapper}");
    assert!(wrapper.contains("f=\"{{$.outputs.parameters['result'].output_file}}\"; mkdir"));
    assert!(wrapper.contains(
        "f=\"{{$.outputs.parameters['n'].output_file}}\"; [ -e \"$f\" ] || { mkdir -p \"${f%/*}\"; printf '%s' '0' > \"$f\"; }"
    ));
    // Then the script runner: the source as $0, the interpreter after it.
    assert_eq!(
        a[4..7],
        [
            "sh",
            "-ec",
            "program=\"$(mktemp -d)/script\"\nprintf '%s' \"$0\" > \"$program\"\nexec \"$@\" \"$program\"\n"
        ]
    );
    assert_eq!(
        a[7],
        "open(\"{{$.outputs.parameters['n'].output_file}}\", \"w\").write(\"3\")\nopen(\"{{$.outputs.artifacts['data'].path}}\", \"w\").write(\"a,b\\n\")\n"
    );
    assert_eq!(a[8], "python3");

    let consume = task(&spec["root"], "consume");
    assert_eq!(deps(consume), ["produce"]);
    assert_eq!(
        consume["inputs"]["artifacts"]["data"],
        json!({"taskOutputArtifact": {"outputArtifactKey": "data", "producerTask": "produce"}})
    );
    assert_eq!(
        consume["inputs"]["parameters"]["pipelinechannel--produce-n"],
        json!({"taskOutputParameter": {"outputParameterKey": "n", "producerTask": "produce"}})
    );
    assert_eq!(
        argv(&spec, "consume")[2],
        "cat {{$.inputs.artifacts['data'].path}}; echo {{$.inputs.parameters['pipelinechannel--produce-n']}} {{$.inputs.parameters['pipelinechannel--produce-result']}}"
    );
    assert_eq!(
        consume["cachingOptions"],
        json!({}),
        "Couler caches, not KFP"
    );
}

#[test]
fn depends_and_groups_become_dependent_tasks() {
    let (spec, _) = compiled(&feature("depends-groups"));
    let root = &spec["root"];
    assert!(deps(task(root, "prep")).is_empty());
    assert_eq!(deps(task(root, "lstm")), ["prep"]);
    assert_eq!(deps(task(root, "gru")), ["prep"]);
    assert_eq!(deps(task(root, "pick")), ["gru", "lstm"]);
}

#[test]
fn when_becomes_a_condition_group_with_cel() {
    let (spec, _) = compiled(&feature("when"));
    let root = &spec["root"];
    let cond = |step: &str| task(root, step)["triggerPolicy"]["condition"].clone();
    let flip = "inputs.parameter_values['pipelinechannel--flip-result']";
    assert_eq!(cond("heads"), format!("{flip} == 'heads'"));
    assert_eq!(cond("tails"), format!("{flip} in ['tails', 'edge']"));
    assert_eq!(cond("big"), format!("{flip} != 'heads'"));
    let heads = task(root, "heads");
    assert_eq!(heads["componentRef"]["name"], "comp-condition-heads");
    assert_eq!(deps(heads), ["flip"]);
    assert_eq!(
        heads["inputs"]["parameters"]["pipelinechannel--flip-result"]["taskOutputParameter"]["producerTask"],
        "flip"
    );
    let group = component(&spec, "comp-condition-heads");
    assert_eq!(
        group["inputDefinitions"]["parameters"]["pipelinechannel--flip-result"]["parameterType"],
        "STRING"
    );
    assert_eq!(task(group, "heads")["componentRef"]["name"], "comp-heads");
    assert!(task(root, "flip")["triggerPolicy"].is_null());
    assert!(component(&spec, "comp-flip")["outputDefinitions"]["parameters"]["result"].is_object());

    // The coin-flip example has the same shape.
    let (spec, _) = compiled(&example("coin-flip"));
    assert_eq!(
        task(&spec["root"], "tails")["triggerPolicy"]["condition"],
        format!("{flip} == 'tails'")
    );
}

#[test]
fn map_over_items_is_a_parallel_for_with_raw_items() {
    let (spec, _) = compiled(&feature("map-items"));
    let train = task(&spec["root"], "train");
    assert_eq!(train["componentRef"]["name"], "comp-for-loop-train");
    assert_eq!(
        train["parameterIterator"],
        json!({"itemInput": "pipelinechannel--train-loop-item", "items": {"raw": "[100,200,300]"}})
    );
    assert_eq!(train["iteratorPolicy"], json!({"parallelismLimit": 2}));
    let body = component(&spec, "comp-for-loop-train");
    assert_eq!(
        task(body, "train")["inputs"]["parameters"]["pipelinechannel--train-loop-item"],
        json!({"componentInputParameter": "pipelinechannel--train-loop-item"})
    );
    assert_eq!(
        argv(&spec, "train"),
        [
            "echo",
            "batch {{$.inputs.parameters['pipelinechannel--train-loop-item']}}"
        ]
    );
}

#[test]
fn map_from_an_output_iterates_over_a_list_parameter() {
    let (spec, _) = compiled(&feature("map-from"));
    // The list is typed LIST where it is produced, so KFP parses it.
    assert_eq!(
        component(&spec, "comp-shards")["outputDefinitions"]["parameters"]["result"]["parameterType"],
        "LIST"
    );
    let work = task(&spec["root"], "work");
    assert_eq!(deps(work), ["shards"]);
    assert_eq!(
        work["parameterIterator"]["items"]["inputParameter"],
        "pipelinechannel--shards-result"
    );
    assert_eq!(
        component(&spec, "comp-for-loop-work")["inputDefinitions"]["parameters"]["pipelinechannel--shards-result"]
            ["parameterType"],
        "LIST"
    );

    // A fan-out's outputs are collected into a list that the next map reads.
    let (spec, _) = compiled(&example("map-batch-sizes"));
    let train = component(&spec, "comp-for-loop-train");
    assert_eq!(
        train["dag"]["outputs"]["parameters"]["pipelinechannel--train-model"],
        json!({"valueFromParameter": {"outputParameterKey": "model", "producerSubtask": "train"}})
    );
    assert_eq!(
        train["outputDefinitions"]["parameters"]["pipelinechannel--train-model"]["parameterType"],
        "LIST"
    );
    let evaluate = task(&spec["root"], "evaluate");
    assert_eq!(
        evaluate["inputs"]["parameters"]["pipelinechannel--train-model"]["taskOutputParameter"],
        json!({"outputParameterKey": "pipelinechannel--train-model", "producerTask": "train"})
    );
}

#[test]
fn exit_handlers_run_after_the_main_dag_with_its_final_status() {
    let (spec, _) = compiled(&feature("exit-handler"));
    let root = &spec["root"];
    assert_eq!(
        root["dag"]["tasks"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["exit-handler-1", "on-exit"]
    );
    assert!(task(component(&spec, "comp-exit-handler-1"), "work").is_object());
    let on_exit = task(root, "on-exit");
    assert_eq!(deps(on_exit), ["exit-handler-1"]);
    assert_eq!(
        on_exit["triggerPolicy"]["strategy"],
        "ALL_UPSTREAM_TASKS_COMPLETED"
    );
    assert_eq!(
        on_exit["inputs"]["parameters"]["status"],
        json!({"taskFinalStatus": {"producerTask": "exit-handler-1"}})
    );
    let exit = component(&spec, "comp-on-exit");
    assert_eq!(
        exit["inputDefinitions"]["parameters"]["status"],
        json!({"isOptional": true, "parameterType": "TASK_FINAL_STATUS"})
    );
    let status = &task(exit, "notify")["inputs"]["parameters"]["pipelinechannel--workflow-status"];
    assert_eq!(status["componentInputParameter"], "status");
    assert!(
        status["parameterExpressionSelector"]
            .as_str()
            .unwrap()
            .starts_with("struct_value.state == 'SUCCEEDED' ? 'succeeded'")
    );
    assert_eq!(deps(task(exit, "cleanup")), ["notify"]);
    assert_eq!(
        argv(&spec, "notify")[2],
        "echo run {{$.inputs.parameters['pipelinechannel--workflow-status']}}"
    );
}

/// The flagship example without what KFP refuses in it (schedule,
/// workflow parallelism, transient-only retries) compiles in full.
#[test]
fn market_trend_without_refused_features_compiles_in_full() {
    let mut plan = example("market-trend");
    plan.workflow.schedule = None;
    plan.workflow.parallelism = None;
    for s in &mut plan.workflow.steps {
        if let Some(r) = &mut s.retry {
            r.on = couler_ir::RetryOn::Always;
        }
    }
    let (spec, platform) = compiled(&plan);
    let main = component(&spec, "comp-exit-handler-1");
    let prices = task(main, "collect-prices");
    assert_eq!(
        prices["retryPolicy"],
        json!({"backoffDuration": "10s", "backoffFactor": 2.0, "backoffMaxDuration": "300s", "maxRetryCount": 3})
    );
    assert_eq!(
        task(main, "collect-news")["retryPolicy"],
        json!({"maxRetryCount": 3})
    );
    assert_eq!(
        container(&spec, "collect-prices")["env"],
        json!([{"name": "MARKET", "value": "NASDAQ"}])
    );
    assert_eq!(
        k8s(&platform, "collect-prices")["secretAsEnv"][0]["keyToEnv"],
        json!([{"envVar": "DATA_API_KEY", "secretKey": "api-key"}])
    );
    assert_eq!(
        deps(task(main, "clean")),
        ["collect-news", "collect-prices"]
    );
    assert_eq!(
        task(main, "clean")["inputs"]["artifacts"]["news"]["taskOutputArtifact"],
        json!({"outputArtifactKey": "headlines", "producerTask": "collect-news"})
    );
    assert_eq!(
        deps(task(main, "select-best")),
        ["train-gru", "train-lstm", "train-svm"]
    );
    assert_eq!(
        container(&spec, "train-lstm")["resources"]["accelerator"]["count"],
        "1"
    );
    assert!(task(component(&spec, "comp-on-exit"), "notify").is_object());
}

#[test]
fn timeouts_and_plain_retries_compile() {
    let mut plan = feature("retry-timeout");
    plan.workflow.steps[0].retry.as_mut().unwrap().on = couler_ir::RetryOn::Always;
    let (spec, platform) = compiled(&plan);
    assert_eq!(k8s(&platform, "flaky")["activeDeadlineSeconds"], "1800");
    assert!(k8s(&platform, "always")["activeDeadlineSeconds"].is_null());
    assert_eq!(
        task(&spec["root"], "always")["retryPolicy"],
        json!({"maxRetryCount": 2})
    );
}

#[test]
fn workflow_parallelism_and_schedules_are_refused_separately() {
    let mut plan = feature("parallelism-schedule");
    assert!(unsupported(&plan).contains("recurring runs"));
    plan.workflow.schedule = None;
    assert!(unsupported(&plan).contains("`parallelism` (2)"));
    plan.workflow.parallelism = None;
    let (spec, _) = compiled(&plan);
    assert_eq!(spec["root"]["dag"]["tasks"].as_object().unwrap().len(), 3);
}

#[test]
fn tune_steps_that_run_are_refused() {
    let path = compile_support::repo_root().join("examples/tune.yaml");
    let plan = compile_support::plan(&std::fs::read_to_string(path).unwrap());
    let why = unsupported(&plan);
    assert!(
        why.contains("step `train`")
            && why.contains("the scheduler runs hyperparameter trials in stages"),
        "{why}"
    );
}

#[test]
fn artifacts_of_map_steps_are_refused() {
    let plan = compile_support::plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: map-artifacts
steps:
  - name: make
    map: {items: [1, 2]}
    container: {image: alpine, command: [sh, -c, 'echo {{item}} > {{outputs.artifacts.out.path}}']}
    outputs: {artifacts: [{name: out, path: /tmp/out}]}
  - name: use
    inputs: {artifacts: [{name: in, from: '{{steps.make.outputs.artifacts.out}}', path: /tmp/in}]}
    container: {image: alpine, command: [cat, '{{inputs.artifacts.in.path}}']}
"#,
    );
    let why = unsupported(&plan);
    assert!(
        why.contains("step `use`") && why.contains("`make`, a `map` step"),
        "{why}"
    );
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
            parameters: BTreeMap::new(),
            artifacts: BTreeMap::from([("report".into(), stored)]),
        },
    );
    plan
}

fn reuse(plan: &mut Plan, step: &str, status: ReuseStatus, outputs: StepOutputs) {
    let s = plan.steps.iter_mut().find(|s| s.name == step).unwrap();
    s.action = Action::Reuse { status, outputs };
}

#[test]
fn reused_steps_are_omitted_and_their_outputs_injected() {
    let mut plan = feature("script-outputs");
    reuse(
        &mut plan,
        "produce",
        ReuseStatus::Cached,
        StepOutputs {
            result: Some("done".into()),
            parameters: BTreeMap::from([("n".into(), "7".into())]),
            artifacts: BTreeMap::from([(
                "data".into(),
                ArtifactRef {
                    digest: "ab".repeat(32),
                    size: 4,
                    location: "s3://couler-cas/ab/abab".into(),
                },
            )]),
        },
    );
    let (spec, _) = compiled(&plan);
    let tasks = spec["root"]["dag"]["tasks"].as_object().unwrap();
    assert!(!tasks.contains_key("produce"));
    assert!(spec["components"].get("comp-produce").is_none());
    assert_eq!(
        argv(&spec, "consume")[2],
        "cat {{$.inputs.artifacts['data'].path}}; echo 7 done"
    );
    // The stored artifact comes in through an importer.
    let consume = task(&spec["root"], "consume");
    assert_eq!(deps(consume), ["importer-produce-data"]);
    assert_eq!(
        consume["inputs"]["artifacts"]["data"]["taskOutputArtifact"],
        json!({"outputArtifactKey": "artifact", "producerTask": "importer-produce-data"})
    );
    let importer = &spec["deploymentSpec"]["executors"]["exec-importer-produce-data"]["importer"];
    assert_eq!(importer["artifactUri"], json!({"runtimeParameter": "uri"}));
    assert_eq!(importer["metadata"]["couler.dev/digest"], "ab".repeat(32));
    assert_eq!(
        task(&spec["root"], "importer-produce-data")["inputs"]["parameters"]["uri"],
        json!({"runtimeValue": {"constant": "s3://couler-cas/ab/abab"}})
    );

    // Behind a step an earlier attempt skipped, a step is skipped too.
    let mut plan = feature("depends-groups");
    reuse(
        &mut plan,
        "prep",
        ReuseStatus::Skipped,
        StepOutputs::default(),
    );
    let (spec, _) = compiled(&plan);
    let lstm = task(&spec["root"], "lstm");
    assert_eq!(lstm["triggerPolicy"]["condition"], "false");
    assert!(deps(lstm).is_empty());

    // Every main step reused: exit handlers run alone, the run succeeded.
    let mut plan = feature("exit-handler");
    reuse(
        &mut plan,
        "work",
        ReuseStatus::Succeeded,
        StepOutputs::default(),
    );
    let (spec, _) = compiled(&plan);
    assert!(task(&spec["root"], "notify").is_object());
    assert_eq!(argv(&spec, "notify")[2], "echo run succeeded");

    // With exit handlers, an importer sits in the DAG of the step reading it.
    let (spec, _) = compiled(&kitchen_sink_with_gen_reused());
    let main = component(&spec, "comp-exit-handler-1");
    assert!(main["dag"]["tasks"].get("importer-gen-report").is_none());
    let exit = component(&spec, "comp-on-exit");
    assert!(task(exit, "importer-gen-report").is_object());
    assert_eq!(deps(task(exit, "report")), ["importer-gen-report"]);
    assert_eq!(
        task(main, "gated")["triggerPolicy"]["condition"],
        "(double('4') >= 3.0) && (!('4' in ['0']))"
    );
    // A literal env value is set on the container, not by the wrapper.
    assert_eq!(
        container(&spec, "fan")["env"],
        json!([{"name": "LEVEL", "value": "level-4"}])
    );
    let a = argv(&spec, "fan");
    assert!(!a[2].contains("export LEVEL"), "{}", a[2]);
    assert_eq!(a[4], "sh", "the step's own command follows the wrapper");

    // Nothing left to run: KFP needs a task.
    let mut plan = feature("map-items");
    reuse(
        &mut plan,
        "train",
        ReuseStatus::Cached,
        StepOutputs::default(),
    );
    assert!(unsupported(&plan).contains("no task"));
}

#[test]
fn output_is_deterministic_and_labels_are_sanitized() {
    for (name, plan) in compile_support::examples().into_iter().chain(features()) {
        if let Ok(first) = kfp(&plan) {
            assert_eq!(first, kfp(&plan).unwrap(), "{name}");
        }
    }
    let spec = RunSpec {
        tenant: "tnt_Ünïcode/x".into(),
        run: "-run:42-".into(),
        attempt: 3,
        stage: Some("part 1".into()),
    };
    let m = compile("kfp", &feature("depends-groups"), &spec).unwrap();
    let (_, platform) = docs(&m);
    let meta = &k8s(&platform, "prep")["podMetadata"];
    for (k, v) in meta["labels"].as_object().unwrap() {
        assert!(
            couler_ir::names::is_label_value(v.as_str().unwrap()),
            "{k}={v}"
        );
    }
    assert_eq!(meta["labels"]["couler.dev/run"], "run-42");
    assert_eq!(meta["labels"]["couler.dev/stage"], "part-1");
    // Annotations keep the exact values the labels could not.
    assert_eq!(
        meta["annotations"],
        json!({"couler.dev/tenant": "tnt_Ünïcode/x", "couler.dev/run": "-run:42-", "couler.dev/stage": "part 1"})
    );
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

#[test]
fn a_ten_thousand_step_chain_compiles() {
    let plan = chain(10_000);
    let (spec, platform) = compiled(&plan);
    let tasks = spec["root"]["dag"]["tasks"].as_object().unwrap();
    assert_eq!(tasks.len(), 10_000);
    assert_eq!(spec["components"].as_object().unwrap().len(), 10_000);
    assert_eq!(
        spec["deploymentSpec"]["executors"]
            .as_object()
            .unwrap()
            .len(),
        10_000
    );
    assert_eq!(
        platform["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
            .as_object()
            .unwrap()
            .len(),
        10_000
    );
    assert!(deps(&tasks["s0"]).is_empty());
    for i in 1..10_000 {
        assert_eq!(deps(&tasks[&format!("s{i}")]), [format!("s{}", i - 1)]);
    }
    assert_eq!(
        argv(&spec, "s9999"),
        [
            "echo",
            "step {{$.inputs.parameters['pipelinechannel--s9998-result']}}"
        ]
    );
}

fn repo_root() -> PathBuf {
    compile_support::repo_root()
}

fn skip_validators() -> bool {
    std::env::var("COULER_SKIP_VALIDATORS").is_ok_and(|v| v == "1")
}

/// Installs the validator once (flock'ed, idempotent); false when
/// `COULER_SKIP_VALIDATORS=1` says to skip it.
fn validator_ready() -> bool {
    if skip_validators() {
        eprintln!("COULER_SKIP_VALIDATORS=1: skipping the KFP validator");
        return false;
    }
    let out = Command::new(repo_root().join("scripts/validate-kfp"))
        .arg("--setup")
        .output()
        .expect("scripts/validate-kfp runs");
    assert!(
        out.status.success(),
        "setting up the KFP validator (scripts/validate-kfp --setup: a virtualenv with kfp from PyPI under .tools/) failed; set COULER_SKIP_VALIDATORS=1 to skip it\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

fn validate(dir: &Path) -> std::process::Output {
    Command::new(repo_root().join("scripts/validate-kfp"))
        .arg(dir)
        .output()
        .expect("scripts/validate-kfp runs")
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Everything that compiles, plus the variants above, as KFP reads it.
#[test]
fn kfp_sdk_and_protos_accept_every_manifest() {
    if !validator_ready() {
        return;
    }
    let dir = fresh_dir("kfp-manifests");
    let mut plans: Vec<(String, Plan)> = compile_support::examples()
        .into_iter()
        .chain(features())
        .collect();
    let mut market = example("market-trend");
    market.workflow.schedule = None;
    market.workflow.parallelism = None;
    for s in &mut market.workflow.steps {
        if let Some(r) = &mut s.retry {
            r.on = couler_ir::RetryOn::Always;
        }
    }
    plans.push(("market-trend-runnable".into(), market));
    let mut cached = feature("script-outputs");
    let stored = ArtifactRef {
        digest: "cd".repeat(32),
        size: 1,
        location: "s3://cas/cd".into(),
    };
    reuse(
        &mut cached,
        "produce",
        ReuseStatus::Cached,
        StepOutputs {
            result: Some("x".into()),
            parameters: BTreeMap::from([("n".into(), "1".into())]),
            artifacts: BTreeMap::from([("data".into(), stored)]),
        },
    );
    plans.push(("script-outputs-cached".into(), cached));
    plans.push(("chain".into(), chain(50)));
    plans.push(("kitchen-sink".into(), compile_support::plan(KITCHEN_SINK)));
    plans.push(("kitchen-sink-reused".into(), kitchen_sink_with_gen_reused()));
    let mut written = Vec::new();
    for (name, plan) in plans {
        if let Ok(m) = kfp(&plan) {
            let path = dir.join(format!("{name}.yaml"));
            std::fs::write(&path, &m.files[0].content).unwrap();
            written.push((path, m));
        }
    }
    assert_eq!(written.len(), 17);
    let out = validate(&dir);
    assert!(
        out.status.success(),
        "KFP rejected compiled manifests:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // PyYAML (YAML 1.1, what KFP reads with) sees what we meant.
    let python = repo_root().join(".tools/venv-kfp/bin/python");
    for (path, m) in written {
        let out = Command::new(&python)
            .args([
                "-c",
                "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pyyaml: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (spec, platform) = docs(&m);
        assert_eq!(pyyaml, json!([spec, platform]), "{}", path.display());
    }
}

/// The validator is not a rubber stamp: a misspelled field fails it.
#[test]
fn the_validator_rejects_a_misspelled_field() {
    if !validator_ready() {
        return;
    }
    let dir = fresh_dir("kfp-misspelled");
    let m = kfp(&feature("depends-groups")).unwrap();
    let bad = m.files[0]
        .content
        .replace("dependentTasks:", "dependentTask:");
    assert_ne!(bad, m.files[0].content);
    std::fs::write(dir.join("typo.yaml"), bad).unwrap();
    let out = validate(&dir);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a typo passed: {report}");
    assert!(
        report.contains("has no field named \"dependentTask\""),
        "{report}"
    );
}

/// Per-item `when`, `{{item.FIELD}}`, env values with references, collected
/// outputs, and exit handlers reading main steps' outputs and the status.
#[test]
fn combined_features_thread_inputs_through_every_wrapper() {
    let (spec, _) = compiled(&compile_support::plan(KITCHEN_SINK));
    let main = component(&spec, "comp-exit-handler-1");

    // map.from an output, with a `when` per item inside the loop.
    let fan = task(main, "fan");
    assert_eq!(fan["componentRef"]["name"], "comp-for-loop-fan");
    assert_eq!(deps(fan), ["gen", "sizes"]);
    assert_eq!(
        fan["parameterIterator"]["items"]["inputParameter"],
        "pipelinechannel--sizes-result"
    );
    let per_item = task(component(&spec, "comp-for-loop-fan"), "fan");
    assert_eq!(
        per_item["triggerPolicy"]["condition"],
        "double(inputs.parameter_values['pipelinechannel--fan-loop-item-n']) > 2.0"
    );
    assert_eq!(
        per_item["inputs"]["parameters"]["pipelinechannel--fan-loop-item-tag"],
        json!({"componentInputParameter": "pipelinechannel--fan-loop-item", "parameterExpressionSelector": "parseJson(string_value)[\"tag\"]"})
    );
    // The env value with a reference is exported by the wrapper from an argument.
    let a = argv(&spec, "fan");
    assert!(a[2].starts_with("export LEVEL=\"$1\"; shift\n"), "{}", a[2]);
    assert_eq!(
        a[4],
        "level-{{$.inputs.parameters['pipelinechannel--gen-result']}}"
    );
    assert_eq!(
        a[7],
        "echo {{$.inputs.parameters['pipelinechannel--fan-loop-item-tag']}} $LEVEL"
    );
    assert!(container(&spec, "fan")["env"].is_null());

    // A `when` outside the loop, collected outputs read downstream.
    assert_eq!(
        task(main, "gated")["triggerPolicy"]["condition"],
        "(double(inputs.parameter_values['pipelinechannel--gen-result']) >= 3.0) && (!(inputs.parameter_values['pipelinechannel--gen-result'] in ['0']))"
    );
    assert_eq!(
        component(&spec, "comp-condition-gated")["outputDefinitions"]["parameters"]["pipelinechannel--gated-result"]
            ["parameterType"],
        "LIST"
    );
    assert_eq!(
        task(main, "after")["inputs"]["parameters"]["pipelinechannel--gated-result"]["taskOutputParameter"],
        json!({"outputParameterKey": "pipelinechannel--gated-result", "producerTask": "gated"})
    );

    // Exit handlers read main outputs through the main DAG's outputs.
    assert_eq!(
        main["dag"]["outputs"]["artifacts"]["pipelinechannel--gen-report"]["artifactSelectors"],
        json!([{"outputArtifactKey": "report", "producerSubtask": "gen"}])
    );
    assert_eq!(
        main["outputDefinitions"]["parameters"]["pipelinechannel--fan-result"]["parameterType"],
        "LIST"
    );
    let on_exit = task(&spec["root"], "on-exit");
    assert_eq!(
        on_exit["inputs"]["artifacts"]["pipelinechannel--gen-report"]["taskOutputArtifact"],
        json!({"outputArtifactKey": "pipelinechannel--gen-report", "producerTask": "exit-handler-1"})
    );
    let report = task(component(&spec, "comp-on-exit"), "report");
    assert_eq!(
        report["triggerPolicy"]["condition"],
        "inputs.parameter_values['pipelinechannel--workflow-status'] == 'failed'"
    );
    assert_eq!(
        report["inputs"]["artifacts"]["r"],
        json!({"componentInputArtifact": "pipelinechannel--gen-report"})
    );
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

/// The wrapper runs under `sh` as the KFP launcher would run it, with the
/// placeholders filled in: stdout is kept as `result` (and still logged),
/// defaults fill unwritten outputs, env values and the working directory
/// are set, and the exit status survives.
#[test]
fn the_wrapper_keeps_stdout_defaults_env_and_exit_status() {
    let plan = compile_support::plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: wrapper
steps:
  - {name: src, container: {image: alpine, command: [echo, world]}}
  - name: w
    container:
      image: alpine
      command: [sh, -c, 'echo "hello $WHO from $(pwd)"; echo; exit 3']
      env: [{name: WHO, value: '{{steps.src.outputs.result}}'}]
      workingDir: /
    outputs: {parameters: [{name: p, path: /tmp/p, default: "it's"}]}
  - {name: reader, container: {image: alpine, command: [echo, '{{steps.w.outputs.result}}']}}
"#,
    );
    let (spec, _) = compiled(&plan);
    let dir = fresh_dir("kfp-wrapper");
    let result = dir.join("outputs/result/data");
    let p = dir.join("outputs/p/data");
    let fill = |s: &str| {
        s.replace(
            "{{$.inputs.parameters['pipelinechannel--src-result']}}",
            "world",
        )
        .replace(
            "{{$.outputs.parameters['result'].output_file}}",
            result.to_str().unwrap(),
        )
        .replace(
            "{{$.outputs.parameters['p'].output_file}}",
            p.to_str().unwrap(),
        )
    };
    let argv: Vec<String> = argv(&spec, "w").iter().map(|s| fill(s)).collect();
    assert!(!argv.iter().any(|a| a.contains("{{")), "{argv:?}");
    let out = Command::new(&argv[0]).args(&argv[1..]).output().unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hello world from /\n\n"
    );
    assert_eq!(
        std::fs::read_to_string(&result).unwrap(),
        "hello world from /"
    );
    assert_eq!(std::fs::read_to_string(&p).unwrap(), "it's");
}
