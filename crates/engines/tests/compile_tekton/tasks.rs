//! What a task carries: containers, matrices, retries and finally tasks.

use super::*;

#[test]
fn containers_keep_env_secrets_resources_and_hints() {
    let (pipeline, run) = compiled(&feature("container-args-env"));
    // The workflow's deadline bounds the tasks; `finally` tasks run after it.
    assert_eq!(
        run["spec"]["timeouts"],
        json!({"pipeline": "0s", "tasks": "2h0m0s"})
    );
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
            {"name": "TOKEN", "valueFrom": {"secretKeyRef": {"name": "couler-secret-creds", "key": "token"}}}
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
