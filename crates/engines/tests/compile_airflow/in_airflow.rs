//! Real runs of the BashOperator DAGs with `dag.test()`.

use super::*;

const RUN_ALL: &str = r#"
import sys
from datetime import datetime, timezone
from airflow.models import DagBag
from airflow.utils.db import initdb

initdb()
bag = DagBag(dag_folder=sys.argv[1])
assert not bag.import_errors, bag.import_errors
# A fixed date, so each run's id (and directory) is known beforehand.
WHEN = datetime(2024, 1, 1, tzinfo=timezone.utc)
for dag_id, dag in sorted(bag.dags.items()):
    run = dag.test(run_after=WHEN, logical_date=WHEN)
    states = sorted(
        ti.task_id + ("" if ti.map_index < 0 else "[%d]" % ti.map_index) + "=" + str(ti.state)
        for ti in run.get_task_instances()
    )
    print("RUN", dag_id, run.state, " ".join(states), flush=True)
"#;

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
    for (name, plan) in &plans {
        let m = airflow::compile_with(plan, &run_spec("run_bash"), &BASH).unwrap();
        std::fs::write(dir.join("dags").join(&m.files[0].name), &m.files[0].content).unwrap();
        // market-trend reads a secret: where the adapter would write it,
        // under the run's directory (`dag.test` at WHEN names the run).
        if name == "market-trend" {
            let dag_id = m.files[0].name.trim_end_matches(".py");
            let secret = dir
                .join("data")
                .join(dag_id)
                .join("manual__2024-01-01T00:00:00+00:00/.secrets/market-data");
            std::fs::create_dir_all(&secret).unwrap();
            std::fs::write(secret.join("api-key"), "s3cr3t").unwrap();
        }
    }

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
