//! Airflow's own verdict (`scripts/validate-airflow`) on every DAG, and
//! quoting that survives rendering.

use super::*;

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

/// Writes every plan that compiles, in both variants, as `<dag_id>.py`.
fn write_all(dir: &Path) -> Vec<String> {
    let mut written = Vec::new();
    let plans = compile_support::examples()
        .into_iter()
        .chain(features())
        .chain([("quoting".to_owned(), torture_plan())])
        .chain([(
            "depends-all-done".to_owned(),
            compile_support::plan(super::depends::ALL_DONE),
        )]);
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
