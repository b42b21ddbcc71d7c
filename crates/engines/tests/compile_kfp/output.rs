//! The output itself: determinism, labels and scale.

use super::*;

#[test]
fn output_is_deterministic_and_labels_are_sanitized() {
    for (name, plan) in compile_support::examples().into_iter().chain(features()) {
        if let Ok(first) = kfp(&plan) {
            assert_eq!(first, kfp(&plan).unwrap(), "{name}");
        }
    }
    let spec = RunSpec::new("tnt_Ünïcode/x", "-run:42-", 3).stage("part 1");
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
