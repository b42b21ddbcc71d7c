//! Conditions: when expressions, skips and operators.

use super::*;

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
