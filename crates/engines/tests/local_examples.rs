//! Every example workflow end to end on the local engine.

#[allow(dead_code)]
mod contract;
mod local_setup;

use contract::{Harness, Report, run};
use couler_engines::{EngineError, RunOutcome, RunSpec, SecretValues, StepPhase};
use couler_optimizer::{Facts, Pipeline, Plan};
use local_setup::*;
use secrecy::SecretString;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const EXAMPLES: &[&str] = &[
    "artifact-passing",
    "automl",
    "coin-flip",
    "diamond",
    "map-batch-sizes",
    "market-trend",
    "tune",
];

fn examples_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples")
}

fn example_plan(name: &str) -> Arc<Plan> {
    let text = fs::read_to_string(examples_dir().join(format!("{name}.yaml"))).unwrap();
    let workflow = couler_ir::load(&text, couler_ir::Format::Yaml).unwrap();
    Arc::new(
        Pipeline::default()
            .plan(workflow, &Facts::default(), |_, f| f())
            .unwrap(),
    )
}

async fn run_example(h: &Harness, name: &str) -> Report {
    run_example_with(h, name, SecretValues::default()).await
}

/// Runs an example with the secret values the scheduler would hand over.
async fn run_example_with(h: &Harness, name: &str, secrets: SecretValues) -> Report {
    let engine = (h.engine)();
    let spec = RunSpec {
        secrets,
        ..h.run_spec(name)
    };
    run(&*engine, &spec, example_plan(name), vec![]).await
}

#[test]
fn every_example_has_a_test_here() {
    let mut found: Vec<String> = fs::read_dir(examples_dir())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".yaml").map(str::to_owned)
        })
        .collect();
    found.sort();
    assert_eq!(found, EXAMPLES, "add a test for each new example");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_diamond() {
    let (_tmp, h) = setup("ex-diamond");
    let r = run_example(&h, "diamond").await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for step in ["a", "b", "c", "d"] {
        assert_eq!(r.phase(step), StepPhase::Succeeded, "{step}");
    }
    assert_eq!(
        r.result("d"),
        "D joins: B got: A says hello / C got: A says hello"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_coin_flip() {
    let (_tmp, h) = setup("ex-coin");
    let r = run_example(&h, "coin-flip").await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.phase("flip"), StepPhase::Succeeded);
    let side = r.result("flip").to_owned();
    let other = if side == "heads" { "tails" } else { "heads" };
    assert_eq!(r.phase(&side), StepPhase::Succeeded);
    assert_eq!(r.phase(other), StepPhase::Skipped);
    assert_eq!(r.result(&side), format!("it was {side}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_artifact_passing() {
    let (_tmp, h) = setup("ex-artifacts");
    let r = run_example(&h, "artifact-passing").await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let content: String = (1..=100).map(|i| format!("{i}\n")).collect();
    let stored = &r.last("produce").outputs.artifacts.get("dataset").unwrap();
    assert_eq!(
        stored.digest,
        blake3::hash(content.as_bytes()).to_hex().to_string()
    );
    assert_eq!(stored.size, content.len() as u64);
    assert_eq!(r.phase("consume"), StepPhase::Succeeded);
    assert_eq!(r.result("consume"), "100");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_automl() {
    let (_tmp, h) = setup("ex-automl");
    let r = run_example(&h, "automl").await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for step in ["load-data", "xgboost", "lightgbm", "select-best"] {
        assert_eq!(r.phase(step), StepPhase::Succeeded, "{step}");
    }
    assert_eq!(
        r.last("xgboost")
            .outputs
            .parameters
            .get("accuracy")
            .unwrap(),
        "0.901"
    );
    assert_eq!(r.result("select-best"), "lightgbm");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_map_batch_sizes() {
    let (_tmp, h) = setup("ex-map");
    let r = run_example(&h, "map-batch-sizes").await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for step in [
        "train",
        "train[0]",
        "train[1]",
        "train[2]",
        "evaluate",
        "evaluate[0]",
        "evaluate[1]",
        "evaluate[2]",
    ] {
        assert_eq!(r.phase(step), StepPhase::Succeeded, "{step}");
    }
    let models: serde_json::Value =
        serde_json::from_str(r.last("train").outputs.parameters.get("model").unwrap()).unwrap();
    assert_eq!(models[2]["batch"], 300);
    assert!(
        r.result("evaluate[0]").starts_with("batch=100 accuracy="),
        "{}",
        r.result("evaluate[0]")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_market_trend() {
    let (_tmp, h) = setup("ex-market");
    let secrets = SecretValues::new(BTreeMap::from([(
        "market-data".to_owned(),
        BTreeMap::from([("api-key".to_owned(), SecretString::from("s3cret-value"))]),
    )]));
    let r = run_example_with(&h, "market-trend", secrets).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for step in [
        "collect-prices",
        "collect-news",
        "clean",
        "features",
        "train-lstm",
        "train-gru",
        "train-svm",
        "select-best",
        "report",
        "notify",
    ] {
        assert_eq!(r.phase(step), StepPhase::Succeeded, "{step}");
    }
    let best = r.result("select-best");
    assert!(["lstm", "gru", "svm"].contains(&best), "{best}");
    assert_eq!(r.result("report"), format!("best model for NASDAQ: {best}"));
    assert_eq!(
        r.result("notify"),
        "market-trend finished with status succeeded"
    );
    // The exit handler ran after every main step.
    let notify = r.steps.iter().position(|s| s.name == "notify").unwrap();
    let report = r.steps.iter().rposition(|s| s.name == "report").unwrap();
    assert!(notify > report);
    let everything = serde_json::to_string(&r.steps).unwrap();
    assert!(
        !everything.contains("s3cret-value"),
        "a secret leaked into updates"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn example_market_trend_without_its_secret_fails_clearly() {
    let (_tmp, h) = setup("ex-market-nosecret");
    let r = run_example(&h, "market-trend").await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    let step = r.last("collect-prices");
    assert_eq!(step.phase, StepPhase::Failed);
    let message = step.message.as_deref().unwrap_or_default();
    assert!(
        message.contains("secret market-data/api-key (env DATA_API_KEY) was not handed to the run"),
        "{message}"
    );
    assert_eq!(r.phase("clean"), StepPhase::Cancelled);
    assert_eq!(
        r.result("notify"),
        "market-trend finished with status failed"
    );
}

#[tokio::test]
async fn example_tune_is_refused_until_trials_are_expanded() {
    let (_tmp, h) = setup("ex-tune");
    let engine = (h.engine)();
    let err = engine
        .start(&h.run_spec("tune"), example_plan("tune"), vec![])
        .await
        .err()
        .expect("tune is unsupported");
    assert!(
        matches!(
            err,
            EngineError::Unsupported {
                engine: "local",
                ..
            }
        ),
        "{err}"
    );
}

// ---- local behaviour -----------------------------------------------------
