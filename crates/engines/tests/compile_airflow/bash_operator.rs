//! The BashOperator keeps artifacts on the worker.

use super::*;

#[test]
fn bash_operator_keeps_artifacts_on_the_worker() {
    let dag = compile(&example("artifact-passing"), &BASH);
    has(
        &dag,
        "from airflow.providers.standard.operators.bash import BashOperator",
    );
    assert!(!dag.contains("KubernetesPodOperator"));
    let produce = task(&dag, "t_produce");
    has(produce, "BashOperator(");
    has(produce, "couler_artifact 'dataset'");
    has(
        produce,
        "\"COULER_STEP_DIR\": \"{{ couler_dir(ti) }}/produce\"",
    );
    has(
        produce,
        "mkdir -p $(dirname {{ couler_dir(ti) }}/produce/outputs/artifacts/dataset)",
    );
    has(produce, "skip_on_exit_code=None");
    has(produce, "recorded, not used: image `alpine:3.20`");
    let consume = task(&dag, "t_consume");
    has(
        consume,
        "couler_in 'dataset' \\\"$COULER_RUN_DIR\\\"/'produce/outputs/artifacts/dataset'",
    );
    has(
        consume,
        "wc -l < {{ couler_dir(ti) }}/consume/inputs/dataset",
    );

    let dag = compile(&example("market-trend"), &BASH);
    has(
        task(&dag, "t_collect_prices"),
        "couler_secret DATA_API_KEY 'market-data/api-key'",
    );
    has(
        task(&dag, "t_collect_prices"),
        "retry_policy=COULER_TRANSIENT",
    );
    has(&dag, "exception=[\"builtins.OSError\"]");
    has(&dag, "schedule=None,");
    has(&dag, "max_active_tasks=4,");
    let select = task(&dag, "t_select_best");
    has(select, "do_xcom_push=True");
    has(select, "output_processor=json.loads");
    has(
        &dag,
        "    [t_train_lstm, t_train_gru, t_train_svm] >> t_select_best\n",
    );

    let dag = compile(&feature("script-outputs"), &BASH);
    let produce = task(&dag, "t_produce");
    has(produce, "couler_param 'n' MA==");
    has(produce, "{{ couler_dir(ti) }}/produce/outputs/parameters/n");
}
