//! Maps, loops, retries, exit handlers and schedules.

use super::*;

#[test]
fn map_items_with_parallelism_fans_out_inside_a_bounded_dag() {
    let wf = Wf::of(&feature("map-items"));
    let task = wf.task("main", "train");
    assert_eq!(task["template"], "train-fanout");
    let fanout = wf.template("train-fanout");
    assert_eq!(fanout["parallelism"], 2);
    let inner = &fanout["dag"]["tasks"][0];
    assert_eq!(inner["template"], "train");
    assert_eq!(inner["withItems"], json!([100, 200, 300]));
    assert_eq!(arg(inner, "item"), "{{item}}");
    assert_eq!(
        wf.template("train")["container"]["command"],
        json!(["echo", "batch {{inputs.parameters.item}}"])
    );
}

#[test]
fn map_conditions_split_between_the_step_and_its_instances() {
    let wf = Wf::of(&plan(MAP_WHEN));
    // Skipping the whole step must skip its dependents, so its own
    // condition sits on a wrapper; the per-item one on the instances.
    let task = wf.task("main", "work");
    assert_eq!(task["template"], "work-fanout");
    assert_eq!(task["when"], "'{{tasks.gate.outputs.result}}' == 'go'");
    assert_eq!(task["depends"], "gate.Succeeded");
    let fanout = wf.template("work-fanout");
    assert!(fanout.get("parallelism").is_none());
    let inner = &fanout["dag"]["tasks"][0];
    assert_eq!(inner["when"], "{{item.size}} > 1");
    assert_eq!(inner["withItems"], json!([{"size": 1}, {"size": 2}]));
    assert_eq!(arg(inner, "item-size"), "{{item.size}}");
    assert_eq!(wf.task("main", "after")["depends"], "work.Succeeded");
}

#[test]
fn map_from_uses_with_param() {
    let wf = Wf::of(&feature("map-from"));
    let work = wf.task("main", "work");
    assert_eq!(work["template"], "work");
    assert_eq!(work["withParam"], "{{tasks.shards.outputs.result}}");
    assert_eq!(work["depends"], "shards.Succeeded");
    assert_eq!(arg(work, "item"), "{{item}}");
}

#[test]
fn while_recurses_with_a_counter() {
    let wf = Wf::of(&feature("while"));
    let task = wf.task("main", "poll");
    assert_eq!(task["template"], "poll-while");
    assert_eq!(arg(task, "iteration"), "1");
    let looped = wf.template("poll-while");
    let steps = looped["steps"].as_array().unwrap();
    assert_eq!(steps[0][0]["template"], "poll");
    let next = &steps[1][0];
    assert_eq!(next["template"], "poll-while");
    assert_eq!(
        next["when"],
        "'{{steps.poll.outputs.result}}' != 'done' && {{inputs.parameters.iteration}} < 5"
    );
    assert_eq!(
        arg(next, "iteration"),
        "{{=asInt(inputs.parameters['iteration']) + 1}}"
    );
}

#[test]
fn loop_outputs_are_the_last_iterations() {
    let wf = Wf::of(&plan(LOOP_READS));
    let looped = wf.template("poll-while");
    // The seed's result passes through every iteration.
    assert_eq!(
        by_name(&looped["inputs"]["parameters"])
            .keys()
            .collect::<Vec<_>>(),
        ["iteration", "seed-result"]
    );
    assert_eq!(
        arg(wf.task("main", "poll"), "seed-result"),
        "{{tasks.seed.outputs.result}}"
    );
    let next = &looped["steps"][1][0];
    assert_eq!(
        arg(next, "seed-result"),
        "{{inputs.parameters.seed-result}}"
    );
    assert_eq!(
        next["when"],
        "'{{steps.poll.outputs.parameters.state}}' != 'done' && {{steps.poll.outputs.result}} < 10 && {{inputs.parameters.iteration}} < 3"
    );
    let outputs = by_name(&looped["outputs"]["parameters"]);
    assert_eq!(
        outputs["result"]["valueFrom"]["expression"],
        "steps['poll-next'].status == 'Skipped' ? steps['poll'].outputs.result : steps['poll-next'].outputs.parameters['result']"
    );
    assert_eq!(
        outputs["state"]["valueFrom"]["expression"],
        "steps['poll-next'].status == 'Skipped' ? steps['poll'].outputs.parameters['state'] : steps['poll-next'].outputs.parameters['state']"
    );
    assert_eq!(
        looped["outputs"]["artifacts"][0]["fromExpression"],
        "steps['poll-next'].status == 'Skipped' ? steps['poll'].outputs.artifacts['data'] : steps['poll-next'].outputs.artifacts['data']"
    );
    let use_task = wf.task("main", "use");
    assert_eq!(
        arg(use_task, "poll-result"),
        "{{tasks.poll.outputs.parameters.result}}"
    );
    assert_eq!(
        arg(use_task, "poll-state"),
        "{{tasks.poll.outputs.parameters.state}}"
    );
    assert_eq!(
        use_task["arguments"]["artifacts"][0]["from"],
        "{{tasks.poll.outputs.artifacts.data}}"
    );
}

#[test]
fn retry_and_timeout() {
    let wf = Wf::of(&feature("retry-timeout"));
    let flaky = wf.template("flaky");
    assert_eq!(
        flaky["retryStrategy"],
        json!({"limit": "3", "retryPolicy": "OnTransientError",
               "backoff": {"duration": "10s", "factor": "2", "cap": "300s"}})
    );
    assert_eq!(flaky["activeDeadlineSeconds"], "1800");
    let always = wf.template("always");
    assert_eq!(
        always["retryStrategy"],
        json!({"limit": "2", "retryPolicy": "Always"})
    );
    assert!(always.get("activeDeadlineSeconds").is_none());
}

#[test]
fn exit_handler_and_workflow_status() {
    let wf = Wf::of(&feature("exit-handler"));
    assert_eq!(wf.spec()["onExit"], "exit-handler");
    assert_eq!(wf.tasks("main").len(), 1);
    let notify = wf.task("exit-handler", "notify");
    assert_eq!(
        arg(notify, "workflow-status"),
        "{{=workflow.status == 'Succeeded' ? 'succeeded' : (workflow.annotations['couler-cancelled'] == 'true' ? 'cancelled' : 'failed')}}"
    );
    assert_eq!(
        wf.template("notify")["container"]["command"][2],
        "echo run {{inputs.parameters.workflow-status}}"
    );
    assert_eq!(
        wf.task("exit-handler", "cleanup")["depends"],
        "notify.Succeeded"
    );
}

#[test]
fn exit_handlers_read_main_steps_through_global_outputs() {
    let wf = Wf::of(&plan(EXIT_READS));
    // `a`'s result is read by an exit handler: a one-task DAG exports it.
    assert_eq!(wf.task("main", "a")["template"], "a-export");
    let export = wf.template("a-export");
    let params = by_name(&export["outputs"]["parameters"]);
    assert_eq!(params["result"]["globalName"], "a-result");
    assert_eq!(
        params["result"]["valueFrom"]["parameter"],
        "{{tasks.a.outputs.result}}"
    );
    assert_eq!(params["p"]["globalName"], "a-p");
    assert_eq!(export["outputs"]["artifacts"][0]["globalName"], "a-log");
    // Main consumers read the exported result.
    assert_eq!(
        arg(wf.task("main", "c"), "a-result"),
        "{{tasks.a.outputs.parameters.result}}"
    );
    // A fanned-out step's aggregate too.
    assert_eq!(
        by_name(&wf.template("b-fanout")["outputs"]["parameters"])["result"]["globalName"],
        "b-result"
    );
    let notify = wf.task("exit-handler", "notify");
    assert_eq!(arg(notify, "a-p"), "{{workflow.outputs.parameters.a-p}}");
    assert_eq!(
        arg(notify, "a-result"),
        "{{workflow.outputs.parameters.a-result}}"
    );
    assert_eq!(
        arg(notify, "b-result"),
        "{{workflow.outputs.parameters.b-result}}"
    );
    assert_eq!(
        notify["arguments"]["artifacts"][0]["from"],
        "{{workflow.outputs.artifacts.a-log}}"
    );
    assert_eq!(
        notify["when"],
        "'{{=workflow.status == 'Succeeded' ? 'succeeded' : (workflow.annotations['couler-cancelled'] == 'true' ? 'cancelled' : 'failed')}}' == 'failed'"
    );
}

#[test]
fn a_schedule_is_only_in_the_native_export() {
    let plan = feature("parallelism-schedule");
    let m = argo(&plan);
    // A run is one Workflow: the control plane fires the schedule.
    assert_eq!(m.files.len(), 1);
    let wf = parse(&m.files[0].content);
    assert_eq!(wf["spec"]["parallelism"], 2);
    let export = couler_engines::argo::native_schedule(&plan, &run())
        .unwrap()
        .unwrap();
    assert_eq!(export.name, "cronworkflow.yaml");
    let cron = parse(&export.content);
    assert_eq!(cron["kind"], "CronWorkflow");
    assert_eq!(cron["spec"]["schedules"], json!(["0 2 * * *"]));
    assert_eq!(cron["spec"]["timezone"], "Europe/Berlin");
    assert_eq!(cron["spec"]["workflowSpec"], wf["spec"]);
    assert_eq!(
        cron["spec"]["workflowMetadata"]["labels"]["couler.dev/run"],
        "run_01HXYZ"
    );
    let name = cron["metadata"]["name"].as_str().unwrap();
    assert!(
        name.len() <= 52 && couler_ir::names::is_dns_label(name),
        "{name}"
    );
    // Without a schedule there is nothing to export.
    assert!(
        couler_engines::argo::native_schedule(&feature("when"), &run())
            .unwrap()
            .is_none()
    );
}
