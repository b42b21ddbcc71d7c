//! Every shipped example is a valid workflow with the shape its comment promises.

use couler_ir::{Format, Workflow, load};
use std::path::PathBuf;

fn examples_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn example(name: &str) -> Workflow {
    let path = examples_dir().join(name);
    let text = std::fs::read_to_string(&path).unwrap();
    load(&text, Format::Yaml).unwrap_or_else(|p| panic!("{name}: {p}"))
}

#[test]
fn every_example_is_valid() {
    let mut count = 0;
    for entry in std::fs::read_dir(examples_dir()).unwrap() {
        let path = entry.unwrap().path();
        if Format::from_path(&path).is_none() {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let format = Format::from_path(&path).unwrap();
        if let Err(problems) = load(&text, format) {
            panic!("{}: {problems}", path.display());
        }
        count += 1;
    }
    assert!(count >= 7, "expected at least 7 examples, found {count}");
}

#[test]
fn diamond_joins_two_branches() {
    let wf = example("diamond.yaml");
    let dag = couler_ir::validate(&wf, &Default::default()).unwrap();
    let idx = |n: &str| wf.steps.iter().position(|s| s.name == n).unwrap() as u32;
    assert_eq!(dag.steps.upstream(idx("b")), &[idx("a")]);
    assert_eq!(dag.steps.upstream(idx("c")), &[idx("a")]);
    assert_eq!(dag.steps.upstream(idx("d")), &[idx("b"), idx("c")]);
    assert_eq!(dag.steps.critical_path_len(), 3);
}

#[test]
fn coin_flip_branches_on_the_result() {
    let wf = example("coin-flip.yaml");
    let heads = wf.steps.iter().find(|s| s.name == "heads").unwrap();
    assert_eq!(heads.when[0].input, "{{steps.flip.outputs.result}}");
    assert_eq!(heads.when[0].value.as_ref().unwrap().as_str(), "heads");
}

#[test]
fn artifact_passing_wires_producer_to_consumer() {
    let wf = example("artifact-passing.yaml");
    let dag = couler_ir::validate(&wf, &Default::default()).unwrap();
    assert_eq!(
        dag.steps.upstream(1),
        &[0],
        "the input artifact implies the dependency"
    );
}

#[test]
fn map_evaluates_every_trained_model() {
    let wf = example("map-batch-sizes.yaml");
    let train = &wf.steps[0];
    assert_eq!(train.map.as_ref().unwrap().items.as_ref().unwrap().len(), 3);
    let evaluate = &wf.steps[1];
    assert_eq!(
        evaluate.map.as_ref().unwrap().from.as_deref(),
        Some("{{steps.train.outputs.parameters.model}}")
    );
}

#[test]
fn automl_trains_concurrently_then_selects() {
    let wf = example("automl.yaml");
    let dag = couler_ir::validate(&wf, &Default::default()).unwrap();
    let idx = |n: &str| wf.steps.iter().position(|s| s.name == n).unwrap() as u32;
    assert_eq!(
        dag.steps.upstream(idx("select-best")),
        &[idx("xgboost"), idx("lightgbm")]
    );
    assert!(!dag.steps.is_ancestor(idx("xgboost"), idx("lightgbm")));
}

#[test]
fn market_trend_has_schedule_exit_handler_and_secret() {
    let wf = example("market-trend.yaml");
    assert_eq!(wf.schedule.as_ref().unwrap().cron, "0 2 * * *");
    assert_eq!(wf.on_exit[0].name, "notify");
    let collect = &wf.steps[0];
    assert!(
        collect
            .env()
            .iter()
            .any(|e| e.secret.is_some() && e.value.is_none())
    );
    // YAML anchors and merge keys expand into full steps.
    let gru = wf.steps.iter().find(|s| s.name == "train-gru").unwrap();
    assert!(gru.script.as_ref().unwrap().source.contains("zlib"));
    assert_eq!(gru.env()[0].value.as_deref(), Some("gru"));
}

#[test]
fn tune_example_searches_with_halving() {
    let wf = example("tune.yaml");
    let tune = wf.steps[0].tune.as_ref().unwrap();
    assert_eq!(tune.strategy, couler_ir::Strategy::Halving);
    assert_eq!(tune.space.len(), 2);
}
