//! Tests of the search strategies, on tune blocks that passed the IR validator.

use super::*;
use serde_json::json;
use std::collections::BTreeSet;

/// A validated tune block on a step that reports `loss`.
fn tune(block: &str) -> Tune {
    let doc = format!(
        "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - name: train\n    container: {{image: x}}\n    outputs: {{parameters: [{{name: loss, path: /tmp/loss}}]}}\n    tune: {block}\n"
    );
    let workflow = couler_ir::load(&doc, couler_ir::Format::Yaml).unwrap();
    workflow.steps[0].tune.clone().unwrap()
}

/// Drives a search like a scheduler: every batch, then its outcomes.
fn drive(
    tune: &Tune,
    search: &Search,
    objective: impl Fn(&Trial) -> TrialOutcome,
) -> (Vec<Vec<Trial>>, Next) {
    let mut outcomes = BTreeMap::new();
    let mut batches = Vec::new();
    loop {
        match next(tune, search, &outcomes) {
            Next::Run(batch) => {
                assert!(!batch.is_empty() && batches.len() < 100);
                for t in &batch {
                    outcomes.insert(t.id.clone(), objective(t));
                }
                batches.push(batch);
            }
            done => return (batches, done),
        }
    }
}

fn number(t: &Trial, name: &str) -> f64 {
    t.parameters[name].parse().unwrap()
}

fn ok(objective: f64) -> TrialOutcome {
    TrialOutcome::Succeeded {
        objective,
        cached: false,
    }
}

fn summary(next: Next) -> Summary {
    match next {
        Next::Done(s) => s,
        other => panic!("expected Done, got {other:?}"),
    }
}

const SMALL_GRID: &str = "{space: {a: {type: int, min: 1, max: 3}, b: {type: categorical, values: [x, y]}}, objective: {metric: loss, goal: minimize}, strategy: grid, maxTrials: MAX}";

#[test]
fn grid_enumerates_the_product_in_order() {
    let s = search(&tune(&SMALL_GRID.replace("MAX", "10")), None);
    assert_eq!(s.strategy, Strategy::Grid);
    assert_eq!(s.configs.len(), 6);
    assert!(s.warnings.is_empty());
    let text = |c: &Config| format!("{}{}", c["a"], c["b"]);
    let all: Vec<String> = s.configs.iter().map(text).collect();
    assert_eq!(all, ["1x", "1y", "2x", "2y", "3x", "3y"]);
}

#[test]
fn a_grid_larger_than_max_trials_is_truncated_with_a_warning() {
    let s = search(&tune(&SMALL_GRID.replace("MAX", "4")), None);
    assert_eq!(s.configs.len(), 4);
    assert_eq!(s.configs[3]["a"], "2");
    assert_eq!(s.warnings.len(), 1);
    assert!(s.warnings[0].contains("6 points") && s.warnings[0].contains("last 2"));
}

#[test]
fn float_grid_values_print_cleanly() {
    let values = |space: &str| -> Vec<String> {
        let t = tune(&format!(
            "{{space: {{lr: {space}}}, objective: {{metric: loss, goal: minimize}}, strategy: grid, maxTrials: 100}}"
        ));
        search(&t, None)
            .configs
            .iter()
            .map(|c| c["lr"].clone())
            .collect()
    };
    assert_eq!(
        values("{type: double, min: 0.1, max: 0.3, step: 0.1}"),
        ["0.1", "0.2", "0.3"]
    );
    let lr = values("{type: double, min: 0.001, max: 0.1, step: 0.011}");
    assert_eq!(lr.len(), 10);
    assert_eq!((lr[3].as_str(), lr[9].as_str()), ("0.034", "0.1"));
    assert!(lr.iter().all(|v| v.len() <= 5), "{lr:?}");
    assert_eq!(
        values("{type: int, min: 0, max: 10, step: 5}"),
        ["0", "5", "10"]
    );
}

const SPACE: &str = "{lr: {type: double, min: 0.001, max: 0.1, log: true}, layers: {type: int, min: 1, max: 8}, act: {type: categorical, values: [relu, tanh]}}";

/// Random search over [`SPACE`], 20 trials, plus `extra` fields.
fn random(extra: &str) -> Tune {
    tune(&format!(
        "{{space: {SPACE}, objective: {{metric: loss, goal: minimize}}, maxTrials: 20{extra}}}"
    ))
}

#[test]
fn random_is_reproducible_and_within_bounds() {
    let with_seed = |seed: &str| search(&random(seed), None);
    let a = with_seed(", seed: 7");
    assert_eq!(a, with_seed(", seed: 7"));
    assert_ne!(a.configs, with_seed(", seed: 8").configs);
    // Without a seed, the space decides: still reproducible.
    assert_eq!(with_seed(""), with_seed(""));
    assert_eq!(a.strategy, Strategy::Random);
    assert_eq!(a.configs.len(), 20);
    assert_eq!(a.configs.iter().collect::<BTreeSet<_>>().len(), 20);
    for c in &a.configs {
        let lr: f64 = c["lr"].parse().unwrap();
        assert!((0.001..=0.1).contains(&lr), "{c:?}");
        assert!(
            (1..=8).contains(&c["layers"].parse::<i64>().unwrap()),
            "{c:?}"
        );
        assert!(["relu", "tanh"].contains(&c["act"].as_str()), "{c:?}");
    }
}

#[test]
fn log_uniform_samples_spread_over_the_decades() {
    let t = tune(
        "{space: {lr: {type: double, min: 0.0001, max: 1, log: true}}, objective: {metric: loss, goal: minimize}, maxTrials: 400, seed: 1}",
    );
    let mut decades = [0; 4];
    for c in search(&t, None).configs {
        let lr: f64 = c["lr"].parse().unwrap();
        decades[((lr.log10() + 4.0).floor() as usize).min(3)] += 1;
    }
    // About 100 each; a linear sampler would put ~90% in the top decade.
    assert!(
        decades.iter().all(|&n| (60..=140).contains(&n)),
        "{decades:?}"
    );
}

#[test]
fn a_space_smaller_than_max_trials_gives_all_of_it_with_a_warning() {
    let t = tune(
        "{space: {n: {type: int, min: 1, max: 3}}, objective: {metric: loss, goal: minimize}, maxTrials: 5}",
    );
    let s = search(&t, None);
    let mut values: Vec<&str> = s.configs.iter().map(|c| c["n"].as_str()).collect();
    values.sort();
    assert_eq!(values, ["1", "2", "3"]);
    assert!(
        s.warnings[0].contains("only 3 configurations"),
        "{:?}",
        s.warnings
    );
}

const HALVING: &str = "{space: {lr: {type: double, min: 0.001, max: 0.1, log: true}}, objective: {metric: loss, goal: minimize}, strategy: halving, maxTrials: 9, parallelism: 9, seed: 3, halving: {minBudget: 1, maxBudget: 9, eta: 3}}";

/// Best near lr = 0.01; more budget lowers the loss.
fn loss(t: &Trial) -> f64 {
    (number(t, "lr").log10() + 2.0).abs() + 1.0 / t.budget.unwrap() as f64
}

#[test]
fn halving_runs_rungs_of_shrinking_size_and_growing_budget() {
    let t = tune(HALVING);
    let s = search(&t, None);
    let (batches, done) = drive(&t, &s, |t| ok(loss(t)));
    let shape: Vec<(usize, Option<u32>)> = batches.iter().map(|b| (b.len(), b[0].budget)).collect();
    assert_eq!(shape, [(9, Some(1)), (3, Some(3)), (1, Some(9))]);
    let true_best = (0..9)
        .min_by(|&a, &b| loss(&batches[0][a]).total_cmp(&loss(&batches[0][b])))
        .unwrap();
    let promoted: BTreeSet<u32> = batches[1].iter().map(|t| t.config).collect();
    assert!(promoted.contains(&batches[0][true_best].config));
    let summary = summary(done);
    assert_eq!(
        summary.best,
        format!("t{}-r2", batches[0][true_best].config)
    );
    assert_eq!(summary.trials.len(), 13);
    assert!(summary.reason.contains("halving") && summary.reason.contains("1, 3, 9"));
}

#[test]
fn failed_trials_are_never_promoted() {
    let t = tune(HALVING);
    let s = search(&t, None);
    // Every trial but two fails at the first rung: only those two go on.
    let (batches, done) = drive(&t, &s, |t| match t.config {
        4 | 7 => ok(loss(t)),
        _ if t.rung == 0 => TrialOutcome::Failed {
            message: "oom".into(),
        },
        _ => ok(loss(t)),
    });
    let promoted: Vec<u32> = batches[1].iter().map(|t| t.config).collect();
    assert_eq!(promoted.len(), 2);
    assert!(promoted.iter().all(|c| [4, 7].contains(c)));
    assert_eq!(
        summary(done)
            .trials
            .iter()
            .filter(|r| r.status == "failed")
            .count(),
        7
    );
}

#[test]
fn reaching_the_target_stops_early() {
    let t = tune(&format!(
        "{{space: {SPACE}, objective: {{metric: loss, goal: minimize, target: 1}}, maxTrials: 20, parallelism: 2, seed: 1}}"
    ));
    let s = search(&t, None);
    let (batches, done) = drive(&t, &s, |t| ok(number(t, "lr")));
    assert_eq!(batches.len(), 1);
    let summary = summary(done);
    assert!(summary.stopped_early && summary.reason.contains("stopped early"));
    let not_run = summary
        .trials
        .iter()
        .filter(|r| r.status == "not-run")
        .count();
    assert_eq!((summary.trials.len(), not_run), (20, 18));
    assert!(summary.objective <= 1.0);
}

#[test]
fn batches_respect_parallelism() {
    let sizes = |extra: &str| {
        let t = random(extra);
        let (batches, _) = drive(&t, &search(&t, None), |_| ok(1.0));
        batches.iter().map(Vec::len).collect::<Vec<_>>()
    };
    assert_eq!(sizes(", parallelism: 6"), [6, 6, 6, 2]);
    assert_eq!(sizes(""), [4; 5]);
}

#[test]
fn ties_go_to_the_lower_config() {
    let t = random("");
    let (_, done) = drive(&t, &search(&t, None), |_| ok(0.5));
    assert_eq!(summary(done).best, "t0");
}

#[test]
fn every_trial_failing_fails_the_search() {
    let t = random("");
    let s = search(&t, None);
    let (_, done) = drive(&t, &s, |t| match t.config {
        0 => ok(f64::NAN),
        n => TrialOutcome::Failed {
            message: format!("crash {n}"),
        },
    });
    let Next::Failed(why) = done else {
        panic!("{done:?}")
    };
    assert!(
        why.contains("all 20 trials failed") && why.contains("t0"),
        "{why}"
    );
    assert!(why.contains("not a finite number"), "{why}");
}

#[test]
fn next_is_idempotent() {
    let t = tune(HALVING);
    let s = search(&t, None);
    assert_eq!(s, search(&t, None));
    let mut outcomes = BTreeMap::new();
    for i in 0..9 {
        outcomes.insert(format!("t{i}"), ok(i as f64));
    }
    outcomes.insert("t0-r1".into(), ok(0.0));
    let first = next(&t, &s, &outcomes);
    assert!(matches!(&first, Next::Run(b) if b.len() == 2 && b[0].id == "t1-r1"));
    assert_eq!(first, next(&t, &s, &outcomes));
}

const LLM: &str = "{space: {lr: {type: double, min: 0.001, max: 0.1}, layers: {type: int, min: 1, max: 8}, act: {type: categorical, values: [relu, tanh]}}, objective: {metric: loss, goal: minimize}, strategy: llm, maxTrials: 4, seed: 5}";
const ANSWER: &str = r#"{"configurations": [{"lr": 0.01, "layers": 4, "act": "relu"}, {"lr": "0.05", "layers": 2.0, "act": "tanh"}]}"#;

#[test]
fn llm_configurations_are_kept_and_filled_up_with_random_ones() {
    let t = tune(LLM);
    let s = search(&t, Some(ANSWER));
    assert_eq!(s.strategy, Strategy::Llm);
    assert_eq!(s.configs.len(), 4);
    let first = |c: &Config| format!("{} {} {}", c["lr"], c["layers"], c["act"]);
    assert_eq!(first(&s.configs[0]), "0.01 4 relu");
    assert_eq!(first(&s.configs[1]), "0.05 2 tanh");
    assert!(
        s.warnings.iter().any(|w| w.contains("fill up")),
        "{:?}",
        s.warnings
    );
    let fenced = format!("Here you go:\n```json\n{ANSWER}\n```\nGood luck!");
    assert_eq!(search(&t, Some(&fenced)).configs, s.configs);
    assert_eq!(
        search(&t, Some(&format!("Sure! {ANSWER} Hope it helps."))).configs,
        s.configs
    );
}

#[test]
fn invalid_llm_configurations_are_dropped_with_warnings() {
    let answer = r#"{"configurations": [
        {"lr": 5, "layers": 4, "act": "relu"},
        {"lr": 0.01, "layers": 2.5, "act": "relu"},
        {"lr": 0.01, "layers": 2, "act": "gelu"},
        {"lr": 0.01, "layers": 2},
        {"lr": 0.01, "layers": 2, "act": "relu", "momentum": 0.9},
        {"lr": 0.02, "layers": 3, "act": "tanh"},
        {"lr": 0.02, "layers": 3, "act": "tanh"}]}"#;
    let s = search(&tune(LLM), Some(answer));
    assert_eq!(s.strategy, Strategy::Llm);
    assert_eq!(s.configs[0]["lr"], "0.02");
    let expect = [
        "outside",
        "whole number",
        "not one of",
        "missing",
        "not in the search space",
        "repeats",
    ];
    for (i, needle) in expect.iter().enumerate() {
        assert!(s.warnings[i].contains(needle), "{i}: {:?}", s.warnings);
    }
}

#[test]
fn an_unusable_llm_answer_falls_back_to_random() {
    let t = tune(LLM);
    let random = search(
        &tune(&LLM.replace("strategy: llm", "strategy: random")),
        None,
    );
    for (answer, warning) in [
        (None, "no LLM configured"),
        (Some("I cannot help with that."), "not usable"),
        (Some(r#"{"configurations": [{"lr": 9}]}"#), "not usable"),
    ] {
        let s = search(&t, answer);
        assert_eq!(s.strategy, Strategy::Random);
        assert_eq!(s.configs, random.configs);
        assert!(
            s.warnings.iter().any(|w| w.contains(warning)),
            "{:?}",
            s.warnings
        );
    }
}

#[test]
fn the_llm_request_describes_the_cards_space_and_goal() {
    let t = tune(&LLM.replace("seed: 5", "seed: 5, dataCard: {name: mnist, type: image, labels: [digit]}, modelCard: {name: cnn, structure: 2 conv layers}"));
    let r = llm_request(&t);
    assert!(r.system.contains("JSON"));
    for needle in [
        "mnist",
        "image",
        "digit",
        "cnn",
        "2 conv layers",
        "minimize",
        "loss",
        "Propose 4",
    ] {
        assert!(r.user.contains(needle), "{needle}: {}", r.user);
    }
    let item = &r.schema["properties"]["configurations"]["items"];
    assert_eq!(item["properties"]["act"]["enum"], json!(["relu", "tanh"]));
    assert_eq!(
        item["properties"]["layers"],
        json!({"type": "integer", "minimum": 1, "maximum": 8})
    );
    assert_eq!(item["required"], json!(["act", "layers", "lr"]));
}
