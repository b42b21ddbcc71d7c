//! `depends` on Airflow: a step that waits for every upstream step to end
//! whatever its outcome is `all_done`; other outcome or `||`/`!` entries,
//! which no one trigger rule says exactly, are refused by name.

use super::*;

pub(super) const ALL_DONE: &str = r#"
apiVersion: couler.dev/v1alpha1
name: depends-all-done
steps:
  - {name: train, container: {image: alpine:3.20, command: ["false"]}}
  - {name: eval, container: {image: alpine:3.20, command: ["true"]}}
  - {name: report, depends: ["train.any && eval.any"], container: {image: alpine:3.20, command: ["true"]}}
"#;

#[test]
fn any_over_every_upstream_step_is_all_done() {
    let dag = compile(&compile_support::plan(ALL_DONE), &POD);
    has(task(&dag, "t_report"), "trigger_rule=TriggerRule.ALL_DONE");
    assert!(!task(&dag, "t_eval").contains("trigger_rule"));
}

#[test]
fn other_outcomes_and_alternatives_are_refused_by_name() {
    for (entry, case) in [
        (
            "train.failed && eval.failed",
            "all_failed counts upstream_failed",
        ),
        ("train || eval", "one_success does not wait"),
        ("train.any", "eval is upstream too, not named `.any`"),
    ] {
        let yaml = ALL_DONE.replace("train.any && eval.any", entry);
        let yaml = if entry == "train.any" {
            yaml.replace("depends: [\"train.any\"]", "depends: [\"train.any\", eval]")
        } else {
            yaml
        };
        let why = refused(&compile_support::plan(&yaml), &POD);
        assert!(
            why.contains("step `report`: the `depends` entry")
                && why.contains("has no Airflow trigger rule of the same meaning"),
            "{case}: {why}"
        );
    }
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
