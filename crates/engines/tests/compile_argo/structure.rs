//! What every compiled Workflow looks like: templates, container fields,
//! how outputs, dependencies and conditions are wired, and the examples' shape.

use super::*;

#[test]
fn every_plan_compiles_to_a_workflow_naming_its_run() {
    for (name, plan) in all_plans() {
        let wf = Wf::of(&plan);
        let meta = &wf.0["metadata"];
        assert_eq!(wf.0["apiVersion"], "argoproj.io/v1alpha1", "{name}");
        assert_eq!(wf.0["kind"], "Workflow", "{name}");
        let wf_name = meta["name"].as_str().unwrap();
        assert!(couler_ir::names::is_dns_label(wf_name), "{name}: {wf_name}");
        assert!(wf_name.ends_with("-run-01hxyz-2"), "{name}: {wf_name}");
        assert_eq!(meta["labels"]["couler.dev/tenant"], "tnt_acme", "{name}");
        assert_eq!(meta["labels"]["couler.dev/run"], "run_01HXYZ", "{name}");
        assert_eq!(meta["labels"]["couler.dev/attempt"], "2", "{name}");
        assert_eq!(
            meta["annotations"]["couler.dev/run"], "run_01HXYZ",
            "{name}"
        );
        for (k, v) in &plan.workflow.labels {
            assert_eq!(meta["labels"][k], v.as_str(), "{name}: label {k}");
        }
        assert_eq!(
            wf.spec()["podMetadata"]["labels"]["couler.dev/tenant"],
            "tnt_acme"
        );
        let entry = wf.spec()["entrypoint"].as_str().unwrap();
        assert!(wf.template(entry)["dag"].is_object(), "{name}");
        // One task per running step, named after it, in the right DAG.
        for (i, step) in plan.steps.iter().enumerate() {
            let runs = matches!(step.action, couler_optimizer::Action::Run);
            let dag = if step.exit_handler {
                wf.spec()["onExit"].as_str().unwrap_or("-")
            } else {
                entry
            };
            // Argo refuses task names starting with a digit.
            let task = match step.name.starts_with(|c: char| c.is_ascii_digit()) {
                true => format!("s{}", step.name),
                false => step.name.clone(),
            };
            let has_task =
                wf.has_template(dag) && wf.tasks(dag).iter().any(|t| t["name"] == task.as_str());
            assert_eq!(has_task, runs, "{name}: task for {}", step.name);
            assert_eq!(
                wf.has_template(&step.name),
                runs,
                "{name}: template {}",
                step.name
            );
            if runs {
                let body = wf.template(&step.name);
                let kinds = ["container", "script", "resource"];
                assert_eq!(kinds.iter().filter(|k| body[**k].is_object()).count(), 1);
                let ir = plan.ir_step(i);
                let kind = match (&ir.container, &ir.script) {
                    (Some(_), _) => "container",
                    (_, Some(_)) => "script",
                    _ => "resource",
                };
                assert!(body[kind].is_object(), "{name}: {} is a {kind}", step.name);
            }
        }
    }
}

#[test]
fn container_fields_resources_hints_and_secret_references() {
    let plan = feature("container-args-env");
    let wf = Wf::of(&plan);
    // The workflow's deadline, in whole seconds.
    assert_eq!(wf.0["spec"]["activeDeadlineSeconds"], 7200);
    let hello = wf.template("hello");
    let c = &hello["container"];
    assert_eq!(c["image"], "alpine:3.20");
    assert_eq!(c["command"], json!(["sh", "-c"]));
    // The workflow parameter is written in.
    assert_eq!(c["args"], json!(["echo hello world $GREETING"]));
    assert_eq!(c["workingDir"], "/tmp");
    let env = by_name(&c["env"]);
    assert_eq!(env["GREETING"]["value"], "hi");
    assert_eq!(
        env["TOKEN"]["valueFrom"],
        json!({"secretKeyRef": {"name": "couler-secret-creds", "key": "token"}})
    );
    assert!(env["TOKEN"].get("value").is_none());
    assert_eq!(
        c["resources"],
        json!({"requests": {"cpu": "500m", "memory": "256Mi", "nvidia.com/gpu": "1"},
               "limits": {"nvidia.com/gpu": "1"}})
    );
    assert_eq!(hello["nodeSelector"], json!({"pool": "gpu"}));
    assert_eq!(
        hello["tolerations"],
        json!([{"key": "gpu", "operator": "Exists", "effect": "NoSchedule"}])
    );
    assert_eq!(
        hello["metadata"]["annotations"]["couler.dev/description"],
        "Says hello."
    );
    assert_eq!(wf.0["metadata"]["labels"]["team"], "ml");
    assert_eq!(
        wf.spec()["arguments"]["parameters"],
        json!([{"name": "who", "value": "world"}])
    );
}

#[test]
fn outputs_reach_consumers_through_parameters_and_artifacts() {
    let wf = Wf::of(&feature("script-outputs"));
    let produce = wf.template("produce");
    assert_eq!(
        produce["outputs"],
        json!({"parameters": [{"name": "n", "valueFrom": {"path": "/tmp/n", "default": "0"}}],
               "artifacts": [{"name": "data", "path": "/tmp/data.csv"}]})
    );
    // Output paths are written into the source.
    let source = produce["script"]["source"].as_str().unwrap();
    assert!(source.contains(r#"open("/tmp/n", "w")"#), "{source}");
    assert!(source.contains(r#"open("/tmp/data.csv", "w")"#), "{source}");
    assert_eq!(produce["script"]["command"], json!(["python3"]));

    let consume = wf.template("consume");
    assert_eq!(
        consume["inputs"],
        json!({"parameters": [{"name": "produce-n"}, {"name": "produce-result"}],
               "artifacts": [{"name": "data", "path": "/in/data.csv"}]})
    );
    assert_eq!(
        consume["container"]["command"][2],
        "cat /in/data.csv; echo {{inputs.parameters.produce-n}} {{inputs.parameters.produce-result}}"
    );
    let task = wf.task("main", "consume");
    assert_eq!(task["depends"], "produce.Succeeded");
    assert_eq!(
        arg(task, "produce-n"),
        "{{tasks.produce.outputs.parameters.n}}"
    );
    assert_eq!(
        arg(task, "produce-result"),
        "{{tasks.produce.outputs.result}}"
    );
    assert_eq!(
        task["arguments"]["artifacts"],
        json!([{"name": "data", "from": "{{tasks.produce.outputs.artifacts.data}}"}])
    );
}

#[test]
fn groups_and_depends_become_succeeded_dependencies() {
    let wf = Wf::of(&feature("depends-groups"));
    assert!(wf.task("main", "prep").get("depends").is_none());
    assert_eq!(wf.task("main", "lstm")["depends"], "prep.Succeeded");
    assert_eq!(wf.task("main", "gru")["depends"], "prep.Succeeded");
    assert_eq!(
        wf.task("main", "pick")["depends"],
        "lstm.Succeeded && gru.Succeeded"
    );
}

#[test]
fn when_becomes_govaluate() {
    let wf = Wf::of(&feature("when"));
    let flip = "'{{tasks.flip.outputs.result}}'";
    assert_eq!(
        wf.task("main", "heads")["when"],
        format!("{flip} == 'heads'")
    );
    assert_eq!(
        wf.task("main", "tails")["when"],
        format!("({flip} == 'tails' || {flip} == 'edge')")
    );
    assert_eq!(wf.task("main", "big")["when"], format!("{flip} != 'heads'"));
    assert_eq!(wf.task("main", "big")["depends"], "flip.Succeeded");
}

#[test]
fn examples_keep_their_shape() {
    let wf = Wf::of(&example("coin-flip"));
    assert_eq!(
        wf.task("main", "heads")["when"],
        "'{{tasks.flip.outputs.result}}' == 'heads'"
    );
    assert_eq!(wf.task("main", "tails")["depends"], "flip.Succeeded");

    let wf = Wf::of(&example("diamond"));
    assert_eq!(
        wf.task("main", "d")["depends"],
        "b.Succeeded && c.Succeeded"
    );
    assert_eq!(
        arg(wf.task("main", "b"), "a-result"),
        "{{tasks.a.outputs.result}}"
    );
    assert_eq!(
        wf.template("a")["container"]["args"],
        json!(["echo A says hello"])
    );
    assert_eq!(
        wf.0["metadata"]["annotations"]["workflows.argoproj.io/description"],
        "A → (B, C) → D, passing a message along each edge."
    );

    let wf = Wf::of(&example("automl"));
    assert_eq!(
        wf.task("main", "select-best")["depends"],
        "xgboost.Succeeded && lightgbm.Succeeded"
    );
    assert_eq!(
        wf.template("xgboost")["script"]["resources"]["requests"],
        json!({"cpu": "2", "memory": "2Gi"})
    );

    let wf = Wf::of(&example("map-batch-sizes"));
    assert_eq!(wf.template("train-fanout")["parallelism"], 3);
    assert_eq!(
        wf.task("main", "evaluate")["withParam"],
        "{{tasks.train.outputs.parameters.model}}"
    );

    let m = argo(&example("market-trend"));
    assert_eq!(m.files.len(), 1, "a run's manifest has no CronWorkflow");
    let wf = Wf(parse(&m.files[0].content));
    assert_eq!(wf.spec()["parallelism"], 4);
    assert_eq!(wf.spec()["onExit"], "exit-handler");
    assert_eq!(
        by_name(&wf.template("collect-prices")["container"]["env"])["DATA_API_KEY"]["valueFrom"]["secretKeyRef"],
        json!({"name": "couler-secret-market-data", "key": "api-key"})
    );
    assert!(!m.text().contains("api-key-value"));
    assert_eq!(
        wf.task("main", "select-best")["depends"],
        "train-lstm.Succeeded && train-gru.Succeeded && train-svm.Succeeded"
    );
}
