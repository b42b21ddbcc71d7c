//! Which workflows Tekton refuses, by step and feature, and that every
//! other one compiles to a Pipeline and its PipelineRun.

use super::*;

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
