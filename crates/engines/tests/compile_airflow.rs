//! The Airflow compiler: structure of every example and feature, what is
//! refused, quoting, scale, and Airflow's own verdict (`scripts/validate-airflow`)
//! plus real runs of the BashOperator DAGs with `dag.test()`.

mod compile_support;

use compile_support::{example, feature, repo_root};
use couler_engines::airflow::{self, AirflowOptions, Operator};
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const POD: AirflowOptions = AirflowOptions {
    operator: Operator::KubernetesPod,
};
const BASH: AirflowOptions = AirflowOptions {
    operator: Operator::Bash,
};

fn run_spec(run: &str) -> RunSpec {
    RunSpec::new("tnt_acme", run, 1)
}

fn compile(plan: &Plan, options: &AirflowOptions) -> String {
    let m = airflow::compile_with(plan, &run_spec("run_1"), options)
        .unwrap_or_else(|e| panic!("compiles: {e}"));
    assert_eq!(m.files.len(), 1);
    assert_eq!(m.files[0].media_type, "text/x-python");
    m.files[0].content.clone()
}

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

/// The shared feature plans, named.
fn features() -> Vec<(String, Plan)> {
    compile_support::features()
        .into_iter()
        .map(|(n, p)| (n.to_owned(), p))
        .collect()
}

/// The source of one task: from its `t_<var> = ` line to the closing paren.
fn task<'a>(dag: &'a str, var: &str) -> &'a str {
    let start = dag
        .find(&format!("    {var} = "))
        .unwrap_or_else(|| panic!("no task {var} in\n{dag}"));
    let rest = &dag[start..];
    let end = rest.find("\n    )").expect("task ends") + 6;
    &rest[..end]
}

fn has(haystack: &str, needle: &str) {
    assert!(
        haystack.contains(needle),
        "missing {needle:?} in\n{haystack}"
    );
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
        "secrets=[Secret(\"env\", \"TOKEN\", \"creds\", \"token\")]",
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
fn parallelism_and_schedule_with_timezone() {
    let dag = compile(&feature("parallelism-schedule"), &POD);
    has(
        &dag,
        "schedule=CronTriggerTimetable(\"0 2 * * *\", timezone=\"Europe/Berlin\")",
    );
    has(
        &dag,
        "start_date=pendulum.datetime(2024, 1, 1, tz=\"Europe/Berlin\")",
    );
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
        "couler_secret DATA_API_KEY 'tnt_acme' 'market-data' 'api-key'",
    );
    has(
        task(&dag, "t_collect_prices"),
        "retry_policy=COULER_TRANSIENT",
    );
    has(&dag, "exception=[\"builtins.OSError\"]");
    has(
        &dag,
        "schedule=CronTriggerTimetable(\"0 2 * * *\", timezone=\"UTC\")",
    );
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

#[test]
fn cached_steps_are_omitted_and_their_outputs_inlined() {
    let mut plan = example("diamond");
    plan.steps[0].action = Action::Reuse {
        status: ReuseStatus::Cached,
        outputs: StepOutputs {
            result: Some("it's \"cached\" {{x}}".into()),
            ..Default::default()
        },
    };
    let dag = compile(&plan, &POD);
    assert!(!dag.contains("t_a = "), "the cached step is not emitted");
    has(
        task(&dag, "t_b"),
        "\"echo B got: {{ \\\"it's \\\\\\\"cached\\\\\\\" \\\\x7b\\\\x7bx\\\\x7d\\\\x7d\\\" }}\"",
    );
    assert!(!dag.contains("t_a >>"));
    has(&dag, "    [t_b, t_c] >> t_d\n");
}

#[test]
fn output_is_deterministic() {
    for (name, plan) in compile_support::examples().into_iter().chain(features()) {
        for options in [&POD, &BASH] {
            let run = run_spec("run_1");
            let a = airflow::compile_with(&plan, &run, options);
            let b = airflow::compile_with(&plan, &run, options);
            match (a, b) {
                (Ok(a), Ok(b)) => assert_eq!(a, b, "{name}"),
                (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
                _ => panic!("{name}: one compile failed"),
            }
        }
    }
}

#[test]
fn dag_ids_carry_run_stage_and_attempt() {
    let plan = example("diamond");
    let mut run = RunSpec::new("tnt_acme", "run/x y", 2);
    run.stage = Some("part-1".into());
    let m = airflow::compile(&plan, &run).unwrap();
    assert_eq!(m.files[0].name, "couler_diamond_run_x_y_part-1_attempt2.py");
    has(
        &m.files[0].content,
        "dag_id=\"couler_diamond_run_x_y_part-1_attempt2\"",
    );
    has(&m.files[0].content, "\"couler.dev/run\": \"run-x-y\"");
}

fn chain_workflow(n: usize) -> Plan {
    let steps: Vec<serde_json::Value> = (0..n)
        .map(|i| {
            let mut s = serde_json::json!({
                "name": format!("s{i}"),
                "container": {"image": "alpine", "command": ["echo", format!("step {i}")]},
            });
            if i > 0 {
                s["container"]["args"] =
                    serde_json::json!([format!("{{{{steps.s{}.outputs.result}}}}", i - 1)]);
            }
            s
        })
        .collect();
    let wf: couler_ir::Workflow = serde_json::from_value(serde_json::json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "chain",
        "steps": steps,
    }))
    .unwrap();
    Plan::new(wf, BTreeMap::new())
}

#[test]
fn a_ten_thousand_step_chain_compiles() {
    let n = 10_000;
    let dag = compile(&chain_workflow(n), &POD);
    assert_eq!(dag.matches("= KubernetesPodOperator(").count(), n);
    let edges = dag
        .lines()
        .filter(|l| l.starts_with("    t_") && l.contains(" >> "));
    assert_eq!(edges.count(), n - 1);
    has(&dag, "    t_s9998 >> t_s9999\n");
    has(
        task(&dag, "t_s9999"),
        "arguments=[\"{{ couler_output(ti, 's9998') }}\"]",
    );
    assert_eq!(dag.matches("do_xcom_push=True").count(), n - 1);
}

/// Strings that must survive Python, Jinja and the shell unchanged.
const TORTURE_SOURCE: &str = "print(\"\"\"triple \"double\" 'single'\"\"\")\nprint('''x''' + r'\\n' + \"\\\\\")\n# {% raw %} {# not a comment #} ${#x} {x} }} \u{e9}\u{2028}\ttab\nprint(\"{%\" + \"{#\" + \"{ {\")\n\n";

fn torture_plan() -> Plan {
    let wf: couler_ir::Workflow = serde_json::from_value(serde_json::json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "quoting",
        "steps": [
            {"name": "src", "script": {"image": "python:3.12", "command": ["python3"], "source": TORTURE_SOURCE}},
            {"name": "args", "container": {"image": "alpine", "command": ["sh", "-c"],
                "args": ["echo '$(x)' \"`y`\" \\ {a} {{steps.src.outputs.result}} {#c#} end.json"]}},
            {"name": "param", "script": {"image": "python:3.12", "command": ["python3"],
                "source": "open('{{outputs.parameters.n.path}}', 'w').write(\"it's 42\\n\")"},
             "outputs": {"parameters": [
                 {"name": "n", "path": "/tmp/couler-airflow-test-n"},
                 {"name": "m", "path": "/tmp/couler-airflow-test-absent", "default": "d'flt"}]}},
            {"name": "use", "container": {"image": "alpine", "command": ["echo",
                "{{steps.param.outputs.parameters.n}} {{steps.param.outputs.parameters.m}}"]}},
        ],
    }))
    .unwrap();
    couler_ir::validate(&wf, &Default::default()).expect("the quoting workflow is valid");
    Plan::new(wf, BTreeMap::new())
}

// ---------------------------------------------------------------- Airflow

fn skip_validators() -> bool {
    std::env::var("COULER_SKIP_VALIDATORS").is_ok_and(|v| v == "1")
}

fn tmp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("airflow-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `scripts/validate-airflow DIR`: (success, output).
fn validate(dir: &Path) -> (bool, String) {
    let out = Command::new(repo_root().join("scripts/validate-airflow"))
        .arg(dir)
        .output()
        .unwrap_or_else(|e| panic!("cannot run scripts/validate-airflow: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

fn venv_python() -> PathBuf {
    repo_root().join(".tools/venv-airflow/bin/python")
}

/// Writes every plan that compiles, in both variants, as `<dag_id>.py`.
fn write_all(dir: &Path) -> Vec<String> {
    let mut written = Vec::new();
    let plans = compile_support::examples()
        .into_iter()
        .chain(features())
        .chain([("quoting".to_owned(), torture_plan())]);
    for (name, plan) in plans {
        for (variant, options) in [("pod", &POD), ("bash", &BASH)] {
            let run = run_spec(&format!("run_{variant}"));
            match airflow::compile_with(&plan, &run, options) {
                Ok(m) => {
                    for f in m.files {
                        std::fs::write(dir.join(&f.name), f.content).unwrap();
                        written.push(f.name);
                    }
                }
                Err(EngineError::Unsupported { .. }) => {}
                Err(e) => panic!("{name} ({variant}): {e}"),
            }
        }
    }
    written
}

#[test]
fn airflow_accepts_every_dag() {
    if skip_validators() {
        eprintln!("COULER_SKIP_VALIDATORS=1: not running scripts/validate-airflow");
        return;
    }
    let dir = tmp_dir("all");
    let written = write_all(&dir);
    assert!(written.len() >= 25, "{written:?}");
    let (ok, output) = validate(&dir);
    assert!(ok, "scripts/validate-airflow failed:\n{output}");
    assert!(
        output.contains(&format!("DagBag imported {} DAG file(s)", written.len())),
        "{output}"
    );
    assert!(
        output.contains("list-import-errors reports none"),
        "{output}"
    );
}

#[test]
fn the_validator_rejects_a_broken_dag() {
    if skip_validators() {
        return;
    }
    let dir = tmp_dir("broken");
    let good = airflow::compile(&example("diamond"), &run_spec("run_1")).unwrap();
    std::fs::write(dir.join(&good.files[0].name), &good.files[0].content).unwrap();
    std::fs::write(
        dir.join("couler_broken.py"),
        "from airflow.sdk import DAG\nwith DAG(dag_id=\"couler_broken\") as dag:\n    t = (\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("couler_missing.py"),
        "from airflow.sdk import DAG\nimport couler_no_such_module\n",
    )
    .unwrap();
    let (ok, output) = validate(&dir);
    assert!(!ok, "the validator passed broken DAGs:\n{output}");
    assert!(
        output.contains("import error in") && output.contains("couler_broken.py"),
        "{output}"
    );
    assert!(output.contains("couler_no_such_module"), "{output}");
    assert!(output.contains("list-import-errors reported"), "{output}");
}

/// Python run inside the Airflow venv against a folder of DAGs.
fn airflow_python(dir: &Path, script: &str, args: &[&str]) -> String {
    let home = dir.join("home");
    std::fs::create_dir_all(&home).unwrap();
    let out = Command::new(venv_python())
        .arg("-c")
        .arg(script)
        .args(args)
        .env("AIRFLOW_HOME", &home)
        .env("AIRFLOW__CORE__DAGS_FOLDER", dir.join("dags"))
        .env("AIRFLOW__CORE__LOAD_EXAMPLES", "False")
        .env(
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN",
            format!("sqlite:///{}/airflow.db", home.display()),
        )
        .env("COULER_AIRFLOW_DATA", dir.join("data"))
        .env("PYTHONWARNINGS", "ignore")
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "python failed:\n{text}");
    text
}

fn setup_venv() {
    let out = Command::new(repo_root().join("scripts/validate-airflow"))
        .arg("--setup")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "scripts/validate-airflow cannot set up Airflow:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

const RENDER: &str = r#"
import base64, json, os, subprocess, sys, tempfile
from airflow.models import DagBag

expected = json.loads(sys.argv[1])
bag = DagBag(dag_folder=sys.argv[2])
assert not bag.import_errors, bag.import_errors

class TI:
    dag_id, run_id, map_index = "d", "r", -1
    def xcom_pull(self, task_ids=None, **_):
        b = base64.b64encode(b"  up'stream {{ x }}\n").decode()
        return {"result": b, "parameters": {}}

def b64(text):
    return base64.b64decode(text).decode()

def in_pod(task, ctx, env):
    """Runs a pod task's rendered command under dash and busybox sh; returns its XCom."""
    argv = task.render_template(task.cmds, ctx, env) + task.render_template(task.arguments, ctx, env)
    assert argv[0] == "/bin/sh", argv
    pushed = []
    for shell in (["/bin/sh"], ["busybox", "sh"]):
        xcom = tempfile.mkdtemp()
        p = subprocess.run(shell + argv[1:], env=dict(os.environ, COULER_XCOM_DIR=xcom),
                           capture_output=True, text=True)
        assert p.returncode == 0, (shell, p.stderr)
        pushed.append((p.stdout, json.load(open(xcom + "/return.json"))))
    assert pushed[0] == pushed[1], pushed
    return pushed[0]

for dag_id, dag in bag.dags.items():
    env = dag.get_template_env()
    src = dag.get_task("src")
    args = dag.get_task("args")
    ctx = {"ti": TI()}
    if "pod" in dag_id:
        got_src = src.render_template(src.arguments, ctx, env)[0]
        got_args = args.render_template(args.arguments, ctx, env)
        direct = subprocess.run(["python3", "-c", expected["source"]], capture_output=True, text=True).stdout
        stdout, pushed = in_pod(src, ctx, env)
        assert stdout == direct and b64(pushed["result"]) == direct, (stdout, pushed, direct)
        stdout, pushed = in_pod(dag.get_task("param"), ctx, env)
        assert pushed["parameters"] == {"n": base64.b64encode(b"it's 42\n").decode(),
                                        "m": base64.b64encode(b"d'flt").decode()}, pushed
        print("ran pod wrappers", dag_id)
    else:
        got_src = src.render_template(src.env, ctx, env)["COULER_SCRIPT"]
        got_args = [args.render_template(args.env, ctx, env)["COULER_ARG_2"]]
    assert got_src == expected["source"], (dag_id, got_src, expected["source"])
    assert got_args == [expected["arg"]], (dag_id, got_args, expected["arg"])
    print("rendered", dag_id)
"#;

#[test]
fn quotes_backslashes_and_jinja_lookalikes_survive() {
    if skip_validators() {
        return;
    }
    setup_venv();
    let dir = tmp_dir("quoting");
    std::fs::create_dir_all(dir.join("dags")).unwrap();
    for (variant, options) in [("pod", &POD), ("bash", &BASH)] {
        let m = airflow::compile_with(
            &torture_plan(),
            &run_spec(&format!("run_{variant}")),
            options,
        )
        .unwrap();
        std::fs::write(dir.join("dags").join(&m.files[0].name), &m.files[0].content).unwrap();
    }
    let expected = serde_json::json!({
        "source": TORTURE_SOURCE,
        "arg": "echo '$(x)' \"`y`\" \\ {a} up'stream {{ x }} {#c#} end.json",
    });
    let out = airflow_python(
        &dir,
        RENDER,
        &[
            &expected.to_string(),
            &dir.join("dags").display().to_string(),
        ],
    );
    assert_eq!(out.matches("rendered ").count(), 2, "{out}");
    assert_eq!(out.matches("ran pod wrappers ").count(), 1, "{out}");
}

const RUN_ALL: &str = r#"
import sys
from airflow.models import DagBag
from airflow.utils.db import initdb

initdb()
bag = DagBag(dag_folder=sys.argv[1])
assert not bag.import_errors, bag.import_errors
for dag_id, dag in sorted(bag.dags.items()):
    run = dag.test()
    states = sorted(
        ti.task_id + ("" if ti.map_index < 0 else "[%d]" % ti.map_index) + "=" + str(ti.state)
        for ti in run.get_task_instances()
    )
    print("RUN", dag_id, run.state, " ".join(states), flush=True)
"#;

/// `RUN <dag_id> <state> task=state …` lines, by workflow name.
fn runs(output: &str) -> BTreeMap<String, (String, Vec<String>)> {
    output
        .lines()
        .filter_map(|l| l.strip_prefix("RUN "))
        .map(|l| {
            let mut parts = l.split(' ');
            let id = parts.next().unwrap();
            let wf = id
                .strip_prefix("couler_")
                .and_then(|s| s.strip_suffix("_run_bash"))
                .unwrap_or(id)
                .to_owned();
            let state = parts.next().unwrap().to_owned();
            (wf, (state, parts.map(str::to_owned).collect()))
        })
        .collect()
}

#[test]
fn bash_dags_run_in_airflow() {
    if skip_validators() {
        return;
    }
    setup_venv();
    let dir = tmp_dir("run");
    std::fs::create_dir_all(dir.join("dags")).unwrap();
    let failing: couler_ir::Workflow = serde_json::from_value(serde_json::json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "failing",
        "steps": [
            {"name": "boom", "container": {"image": "alpine", "command": ["sh", "-c", "exit 3"]}},
            {"name": "after", "depends": ["boom"], "container": {"image": "alpine", "command": ["true"]}},
        ],
        "onExit": [{"name": "report", "container": {"image": "alpine", "command": ["sh", "-c", "echo status={{workflow.status}}"]}}],
    }))
    .unwrap();
    let mut plans = compile_support::examples();
    plans.push(("failing".into(), Plan::new(failing, BTreeMap::new())));
    for name in ["when", "map-from", "exit-handler", "script-outputs"] {
        plans.push((name.into(), feature(name)));
    }
    for (_, plan) in &plans {
        let m = airflow::compile_with(plan, &run_spec("run_bash"), &BASH).unwrap();
        std::fs::write(dir.join("dags").join(&m.files[0].name), &m.files[0].content).unwrap();
    }
    // market-trend reads a secret: the worker keeps it as a file.
    let secret = dir.join("data/secrets/tnt_acme/market-data");
    std::fs::create_dir_all(&secret).unwrap();
    std::fs::write(secret.join("api-key"), "s3cr3t").unwrap();

    let out = airflow_python(&dir, RUN_ALL, &[&dir.join("dags").display().to_string()]);
    let runs = runs(&out);
    let state = |wf: &str| -> &(String, Vec<String>) {
        runs.get(wf)
            .unwrap_or_else(|| panic!("no run of {wf}:\n{out}"))
    };
    let task = |wf: &str, t: &str| -> String {
        state(wf)
            .1
            .iter()
            .find_map(|s| s.strip_prefix(&format!("{t}=")))
            .unwrap_or_else(|| panic!("no task {t} in {wf}: {:?}", state(wf)))
            .to_owned()
    };
    for wf in [
        "artifact-passing",
        "automl",
        "coin-flip",
        "diamond",
        "map-batch-sizes",
        "market-trend",
        "when",
        "map-from",
        "exit-handler",
        "script-outputs",
    ] {
        assert_eq!(state(wf).0, "success", "{wf}: {:?}\n{out}", state(wf).1);
    }
    // Exactly one branch of the coin runs; the other is skipped.
    let (heads, tails) = (task("coin-flip", "heads"), task("coin-flip", "tails"));
    assert!(
        (heads == "success") != (tails == "success")
            && [&heads, &tails].contains(&&"skipped".to_owned()),
        "heads={heads} tails={tails}"
    );
    assert_eq!(task("map-batch-sizes", "evaluate[2]"), "success");
    assert_eq!(task("map-from", "work[2]"), "success");
    assert_eq!(task("market-trend", "notify"), "success");
    // A failed step: downstream upstream_failed, the exit handler still
    // runs and sees `failed`, and the run fails.
    assert_eq!(state("failing").0, "failed", "{:?}", state("failing").1);
    assert_eq!(task("failing", "boom"), "failed");
    assert_eq!(task("failing", "after"), "upstream_failed");
    assert_eq!(task("failing", "report"), "success");
    assert_eq!(task("failing", "couler__outcome"), "failed");
    assert!(
        out.contains("status=failed"),
        "the exit handler saw the status:\n{out}"
    );
    assert!(out.contains("batch=300 accuracy="), "{out}");
    assert!(out.contains("best model for NASDAQ:"), "{out}");
}
