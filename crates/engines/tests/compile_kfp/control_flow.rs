//! Dependencies, conditions, parallel-for loops and exit handlers.

use super::*;

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
