//! The Airflow compiler: structure of every example and feature, what is
//! refused, quoting, scale, and Airflow's own verdict (`scripts/validate-airflow`)
//! plus real runs of the BashOperator DAGs with `dag.test()`.

#[path = "../compile_support/mod.rs"]
mod compile_support;

use compile_support::{example, feature, repo_root};
use couler_engines::airflow::{self, AirflowOptions, Operator};
use couler_engines::{EngineError, RunSpec};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

mod bash_operator;
mod depends;
mod in_airflow;
mod output;
mod structure;
mod validator;

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
