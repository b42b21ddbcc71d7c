//! The structure of every example and feature DAG: XCom, branches,
//! operators, maps, containers, groups, retries, exit handlers and schedules,
//! and what Airflow cannot express.

use super::*;

fn refused(plan: &Plan, options: &AirflowOptions) -> String {
    match airflow::compile_with(plan, &run_spec("run_1"), options) {
        Err(EngineError::Unsupported { engine, feature }) => {
            assert_eq!(engine, "airflow");
            feature
        }
        Err(e) => panic!("expected Unsupported, got {e}"),
        Ok(_) => panic!("expected Unsupported, got a DAG"),
    }
}

#[test]
fn shared_feature_plans_are_valid() {
    assert_eq!(compile_support::features().len(), 11);
}

#[test]
fn diamond_passes_results_through_xcom() {
    let dag = compile(&example("diamond"), &POD);
    has(&dag, "from airflow.sdk import DAG");
    has(&dag, "dag_id=\"couler_diamond_run_1\"");
    has(&dag, "schedule=None");
    has(
        &dag,
        "tags=[\"couler\", \"couler.dev/workflow=diamond\", \"couler.dev/tenant=tnt_acme\", \"couler.dev/run=run_1\", \"example=diamond\"]",
    );
    let a = task(&dag, "t_a");
    has(a, "KubernetesPodOperator(");
    has(a, "image=\"alpine:3.20\"");
    has(a, "do_xcom_push=True");
    has(
        a,
        "COULER_POD_SH + \"couler_run \\\"$@\\\"\\ncouler_push\\n\"",
    );
    has(a, "arguments=[\"sh\", \"-c\", \"echo A says hello\"]");
    has(a, "\"couler.dev/tenant\": \"tnt_acme\"");
    has(a, "\"couler.dev/run\": \"run_1\"");
    has(a, "\"couler.dev/step\": \"a\"");
    let b = task(&dag, "t_b");
    has(b, "\"echo B got: {{ couler_output(ti, 'a') }}\"");
    let d = task(&dag, "t_d");
    has(d, "do_xcom_push=False");
    has(d, "cmds=[\"sh\", \"-c\"]");
    has(
        d,
        "arguments=[\"echo D joins: {{ couler_output(ti, 'b') }} / {{ couler_output(ti, 'c') }}\"]",
    );
    has(&dag, "    t_a >> t_b\n");
    has(&dag, "    t_a >> t_c\n");
    has(&dag, "    [t_b, t_c] >> t_d\n");
}

#[test]
fn coin_flip_gates_each_branch_with_a_short_circuit() {
    let dag = compile(&example("coin-flip"), &POD);
    let gate = task(&dag, "t_heads__when");
    has(gate, "ShortCircuitOperator(");
    has(gate, "python_callable=couler_when");
    has(
        gate,
        "op_kwargs={\"conditions\": [[\"{{ couler_output(ti, 'flip') }}\", \"eq\", [\"heads\"]]]}",
    );
    has(gate, "ignore_downstream_trigger_rules=False");
    has(&dag, "    t_flip >> t_heads__when\n");
    has(&dag, "    t_heads__when >> t_heads\n");
    has(&dag, "    t_flip >> t_tails__when\n");
    let flip = task(&dag, "t_flip");
    has(flip, "couler_script \\\"$1\\\"");
    has(flip, "\"python3\"]");
}

#[test]
fn when_covers_every_operator() {
    let dag = compile(&feature("when"), &POD);
    has(
        task(&dag, "t_tails__when"),
        "[\"{{ couler_output(ti, 'flip') }}\", \"in\", [\"tails\", \"edge\"]]",
    );
    has(
        task(&dag, "t_big__when"),
        "[\"{{ couler_output(ti, 'flip') }}\", \"ne\", [\"heads\"]]",
    );
}

#[test]
fn map_over_items_and_over_an_upstream_output() {
    let dag = compile(&example("map-batch-sizes"), &POD);
    let items = task(&dag, "t_train__items");
    has(items, "python_callable=couler_expand");
    has(items, "\"items\": \"[100,200,300]\"");
    has(items, "batch = int(\\\"\\x00couler:item\\x00\\\")");
    has(items, "epochs = int(\\\"3\\\")");
    let train = task(&dag, "t_train");
    has(train, "KubernetesPodOperator.partial(");
    has(train, "max_active_tis_per_dagrun=3");
    has(&dag, "    ).expand_kwargs(t_train__items.output)\n");
    has(train, "couler_param 'model' '/tmp/outputs/model.json'");
    has(
        train,
        "container_resources=k8s.V1ResourceRequirements(requests={\"cpu\": \"500m\", \"memory\": \"512Mi\"}, limits={\"memory\": \"512Mi\"})",
    );
    has(
        task(&dag, "t_evaluate__items"),
        "\"items\": \"{{ couler_output(ti, 'train', 'model', mapped=True) }}\"",
    );
    has(&dag, "    t_train >> t_evaluate__items\n");

    let dag = compile(&feature("map-items"), &POD);
    has(
        task(&dag, "t_train__items"),
        "\"fields\": {\"cmds\": [\"echo\", \"batch \\x00couler:item\\x00\"], \"arguments\": []}",
    );
    has(task(&dag, "t_train"), "max_active_tis_per_dagrun=2");
    let dag = compile(&feature("map-from"), &POD);
    has(
        task(&dag, "t_work__items"),
        "\"items\": \"{{ couler_output(ti, 'shards') }}\"",
    );
    has(&dag, "    t_shards >> t_work__items\n");
}

#[test]
fn container_fields_secrets_resources_and_hints() {
    let dag = compile(&feature("container-args-env"), &POD);
    let t = task(&dag, "t_hello");
    has(t, "cmds=[\"sh\", \"-c\"]");
    has(t, "arguments=[\"echo hello world $GREETING\"]");
    has(t, "env_vars={\"GREETING\": \"hi\"}");
    has(
        t,
        "secrets=[Secret(\"env\", \"TOKEN\", \"couler-secret-tnt-acme-creds\", \"token\")]",
    );
    has(
        t,
        "container_resources=k8s.V1ResourceRequirements(requests={\"cpu\": \"500m\", \"memory\": \"256Mi\"}, limits={\"memory\": \"256Mi\", \"nvidia.com/gpu\": \"1\"})",
    );
    has(t, "node_selector={\"pool\": \"gpu\"}");
    has(
        t,
        "tolerations=[k8s.V1Toleration(effect=\"NoSchedule\", key=\"gpu\", operator=\"Exists\")]",
    );
    has(t, "working_dir=\"/tmp\"");
    has(t, "\"team\": \"ml\"");
    has(t, "doc_md=\"Says hello.\"");
    // The workflow's deadline.
    has(&dag, "    dagrun_timeout=timedelta(seconds=7200),\n");
    assert!(
        !t.contains("TOKEN\":"),
        "a secret is a reference, not a value"
    );
}

#[test]
fn groups_expand_to_member_edges() {
    let dag = compile(&feature("depends-groups"), &POD);
    has(&dag, "    t_prep >> t_lstm\n");
    has(&dag, "    t_prep >> t_gru\n");
    has(&dag, "    [t_lstm, t_gru] >> t_pick\n");
}

#[test]
fn retry_backoff_transient_and_timeout() {
    let dag = compile(&feature("retry-timeout"), &POD);
    let flaky = task(&dag, "t_flaky");
    has(flaky, "retries=3");
    has(flaky, "retry_delay=timedelta(seconds=10)");
    has(flaky, "retry_exponential_backoff=2.0");
    has(flaky, "max_retry_delay=timedelta(seconds=300)");
    has(flaky, "retry_policy=COULER_TRANSIENT");
    has(flaky, "execution_timeout=timedelta(seconds=1800)");
    has(&dag, "COULER_TRANSIENT = ExceptionRetryPolicy(");
    has(&dag, "PodLaunchFailedException");
    let always = task(&dag, "t_always");
    has(always, "retries=2");
    has(always, "retry_delay=timedelta(0)");
    assert!(!always.contains("retry_policy"));
    assert!(!always.contains("execution_timeout"));
}

#[test]
fn exit_handlers_run_after_every_leaf_and_see_the_status() {
    let dag = compile(&feature("exit-handler"), &POD);
    let status = task(&dag, "t_couler__status");
    has(status, "python_callable=couler_status");
    has(status, "op_kwargs={\"tasks\": [\"work\"]}");
    has(status, "trigger_rule=TriggerRule.ALL_DONE");
    has(
        task(&dag, "t_notify"),
        "\"echo run {{ ti.xcom_pull(task_ids='couler__status') }}\"",
    );
    let outcome = task(&dag, "t_couler__outcome");
    has(
        outcome,
        "op_kwargs={\"tasks\": [\"work\", \"notify\", \"cleanup\", \"couler__status\"]}",
    );
    has(outcome, "trigger_rule=TriggerRule.ALL_DONE");
    has(&dag, "    t_work >> t_couler__status\n");
    has(&dag, "    t_couler__status >> t_notify\n");
    has(&dag, "    t_notify >> t_cleanup\n");
    has(&dag, "    t_cleanup >> t_couler__outcome\n");
}

#[test]
fn a_scheduled_workflow_compiles_to_a_dag_without_a_timetable() {
    // The DAG of one run is triggered once; a timetable of its own would
    // make Airflow start runs Couler never tracks (issue 37).
    let dag = compile(&feature("parallelism-schedule"), &POD);
    has(&dag, "schedule=None,");
    assert!(!dag.contains("CronTriggerTimetable"), "{dag}");
    has(&dag, "start_date=pendulum.datetime(2024, 1, 1, tz=\"UTC\")");
    has(&dag, "max_active_tasks=2,");
    has(&dag, "catchup=False");
}

#[test]
fn refuses_what_airflow_cannot_express() {
    let why = refused(&feature("while"), &POD);
    assert!(why.contains("`poll`") && why.contains("while"), "{why}");
    let why = refused(&feature("while"), &BASH);
    assert!(why.contains("acyclic"), "{why}");
    let why = refused(&feature("jobs"), &POD);
    assert!(
        why.contains("`torch`") && why.contains("training job"),
        "{why}"
    );
    refused(&feature("jobs"), &BASH);
    // Airflow's dagrun_timeout would skip the exit steps Couler runs.
    let mut deadline = feature("exit-handler");
    deadline.workflow.timeout = Some(couler_ir::scalar::Duration(std::time::Duration::from_secs(
        60,
    )));
    let why = refused(&deadline, &POD);
    assert!(
        why.contains("`timeout`") && why.contains("`onExit`"),
        "{why}"
    );
    let why = refused(&feature("script-outputs"), &POD);
    assert!(
        why.contains("`produce`") && why.contains("artifact `data`"),
        "{why}"
    );
    for name in ["artifact-passing", "automl", "market-trend"] {
        let why = refused(&example(name), &POD);
        assert!(why.contains("artifact"), "{name}: {why}");
    }
    let tune = compile_support::plan(
        &std::fs::read_to_string(repo_root().join("examples/tune.yaml")).unwrap(),
    );
    let why = refused(&tune, &POD);
    assert!(
        why.contains("`train`") && why.contains("scheduler runs hyperparameter trials in stages"),
        "{why}"
    );
}
