//! Every example and feature compiles or is refused by name, and what
//! KFP refuses, step by step.

use super::*;

/// What each example and feature compiles to, or why it is refused.
#[test]
fn every_example_and_feature_compiles_or_is_refused_by_name() {
    let refused: BTreeMap<&str, &[&str]> = BTreeMap::from([
        ("market-trend", &["parallelism"][..]),
        ("parallelism-schedule", &["`parallelism` (2)"][..]),
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
fn a_schedule_compiles_workflow_parallelism_is_refused() {
    // The control plane fires schedules: a scheduled workflow's runs are
    // ordinary pipeline runs.
    let mut plan = feature("parallelism-schedule");
    let why = unsupported(&plan);
    assert!(
        why.contains("`parallelism` (2)") && !why.contains("schedule"),
        "{why}"
    );
    plan.workflow.parallelism = None;
    assert!(plan.workflow.schedule.is_some());
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
