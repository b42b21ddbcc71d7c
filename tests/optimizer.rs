//! The optimizer end to end on the local engine: a workflow over its
//! tenant's budget runs as sub-workflows yet reads as one run; a
//! hyperparameter search with a real objective picks the true best trial,
//! and successive halving gets there with fewer step-seconds than a grid;
//! resources are advised from measured history; plans explain themselves.

use couler_tests::*;
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(180);

fn set_split_budget(couler: &Couler, tenant: &str, budget: Value) {
    let (status, body) = couler.call(
        Method::PATCH,
        &format!("/v1/tenants/{tenant}"),
        &couler.platform,
        Some(json!({ "split_budget": budget })),
    );
    assert_eq!(status, 200, "{body}");
}

fn ir(yaml: &str) -> Value {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    serde_saphyr::from_str_with_options(yaml, options).unwrap()
}

/// A fan-out and a chain whose values and artifacts cross every cut.
const WIDE: &str = r#"
apiVersion: couler.dev/v1alpha1
name: wide
steps:
  - name: seed
    script: {image: alpine, command: [sh], source: 'echo 7 > {{outputs.parameters.n.path}}; seq 1 10 > {{outputs.artifacts.rows.path}}'}
    outputs: {parameters: [{name: n, path: /n}], artifacts: [{name: rows, path: /rows}]}
  - {name: a1, script: {image: alpine, command: [sh], source: 'echo $(( {{steps.seed.outputs.parameters.n}} + 1 ))'}}
  - {name: a2, script: {image: alpine, command: [sh], source: 'echo $(( {{steps.seed.outputs.parameters.n}} + 2 ))'}}
  - {name: a3, script: {image: alpine, command: [sh], source: 'echo $(( {{steps.seed.outputs.parameters.n}} + 3 ))'}}
  - {name: a4, script: {image: alpine, command: [sh], source: 'echo $(( {{steps.seed.outputs.parameters.n}} + 4 ))'}}
  - name: count
    inputs: {artifacts: [{name: rows, from: '{{steps.seed.outputs.artifacts.rows}}', path: /in/rows}]}
    script: {image: alpine, command: [sh], source: 'wc -l < {{inputs.artifacts.rows.path}}'}
  - {name: sum, script: {image: alpine, command: [sh], source: 'echo $(( {{steps.a1.outputs.result}} + {{steps.a2.outputs.result}} + {{steps.a3.outputs.result}} + {{steps.a4.outputs.result}} + {{steps.count.outputs.result}} ))'}}
  - {name: double, script: {image: alpine, command: [sh], source: 'echo $(( {{steps.sum.outputs.result}} * 2 ))'}}
onExit:
  - {name: notify, script: {image: alpine, command: [sh], source: 'echo run {{workflow.status}}, sum {{steps.sum.outputs.result}}'}}
"#;

#[test]
fn a_workflow_over_its_budget_runs_as_sub_workflows_and_reads_as_one_run() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("splitter");
    let (tenant, token) = couler.tenant("big");
    set_split_budget(&couler, &tenant, json!({"max_steps": 3}));

    // The plan says how it will be split, before anything runs.
    let (status, plan) = couler.call(
        Method::POST,
        "/v1/plans",
        &token,
        Some(json!({ "ir": ir(WIDE) })),
    );
    assert_eq!(status, 200, "{plan:#}");
    let parts = plan["parts"].as_array().unwrap();
    assert!(parts.len() >= 3, "{plan:#}");
    assert!(
        parts
            .iter()
            .all(|p| p["steps"].as_array().unwrap().len() <= 3)
    );
    let split = plan["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["pass"] == "split")
        .unwrap_or_else(|| panic!("{plan:#}"));
    assert!(
        split["message"]
            .as_str()
            .unwrap()
            .contains("critical path 4 → 4"),
        "{split}"
    );

    let id = couler.submit(&token, WIDE, json!({}));
    let run = couler.wait(&token, &id, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let statuses = step_statuses(&run);
    assert_eq!(statuses.len(), 9, "one run, every step once: {statuses:?}");
    assert!(statuses.values().all(|s| s == "succeeded"), "{statuses:?}");
    // 8 + 9 + 10 + 11 + 10 rows = 48, across cuts (parameters and an artifact).
    assert_eq!(step(&run, "sum")["outputs"]["result"], "48");
    assert_eq!(step(&run, "double")["outputs"]["result"], "96");
    assert_eq!(
        step(&run, "notify")["outputs"]["result"],
        "run succeeded, sum 48"
    );

    let (status, stored) = couler.call(Method::GET, &format!("/v1/runs/{id}/plan"), &token, None);
    assert_eq!(status, 200, "{stored}");
    assert_eq!(stored["parts"], plan["parts"]);
}

#[test]
fn a_failed_sub_workflow_stops_the_rest_and_the_exit_handler_is_told() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("splitter");
    let (tenant, token) = couler.tenant("big");
    set_split_budget(&couler, &tenant, json!({"max_steps": 3}));
    // The exit handler reads what did run (a cancelled step has no result).
    let failing = WIDE
        .replace("'wc -l < {{inputs.artifacts.rows.path}}'", "'exit 3'")
        .replace(
            "sum {{steps.sum.outputs.result}}",
            "seed {{steps.seed.outputs.parameters.n}}",
        );

    let id = couler.submit(&token, &failing, json!({}));
    let run = couler.wait(&token, &id, LIMIT);
    assert_eq!(run["status"], "failed", "{run:#}");
    assert!(
        run["message"].as_str().unwrap().contains("count"),
        "{run:#}"
    );
    let statuses = step_statuses(&run);
    assert_eq!(statuses["count"], "failed");
    assert_eq!(statuses["sum"], "cancelled", "{statuses:?}");
    assert_eq!(statuses["double"], "cancelled", "{statuses:?}");
    assert_eq!(statuses["notify"], "succeeded", "{statuses:?}");
    let notify = step(&run, "notify")["outputs"]["result"].as_str().unwrap();
    assert_eq!(notify, "run failed, seed 7");
}

#[test]
fn a_cancelled_split_run_stops_its_sub_workflows_and_still_runs_the_exit_handler() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("splitter");
    let (tenant, token) = couler.tenant("big");
    set_split_budget(&couler, &tenant, json!({"max_steps": 3}));
    let slow = WIDE
        .replace(
            "'echo $(( {{steps.seed.outputs.parameters.n}} + 1 ))'",
            "'sleep 60'",
        )
        .replace(
            "sum {{steps.sum.outputs.result}}",
            "seed {{steps.seed.outputs.parameters.n}}",
        );

    let id = couler.submit(&token, &slow, json!({}));
    wait_until(LIMIT, || {
        step_statuses(&couler.run(&token, &id))
            .get("a1")
            .map(String::as_str)
            == Some("running")
    });
    let (status, body) = couler.call(Method::POST, &format!("/v1/runs/{id}/cancel"), &token, None);
    assert_eq!(status, 200, "{body}");
    let run = couler.wait(&token, &id, Duration::from_secs(30));
    assert_eq!(run["status"], "cancelled", "{run:#}");
    let statuses = step_statuses(&run);
    assert_eq!(statuses["a1"], "cancelled", "{statuses:?}");
    assert_eq!(
        statuses["double"], "cancelled",
        "never started: {statuses:?}"
    );
    assert_eq!(statuses["notify"], "succeeded", "{statuses:?}");
    assert_eq!(
        step(&run, "notify")["outputs"]["result"],
        "run cancelled, seed 7"
    );
}

/// A training script whose loss depends on its hyperparameters and on the
/// budget (epochs), and which takes time in proportion to the budget.
fn tuned(strategy: &str, extra: &str) -> String {
    // Without successive halving every trial trains the full 9 epochs.
    let budget = if strategy == "halving" {
        "int(\"{{trial.budget}}\")"
    } else {
        "9"
    };
    format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: tuned-{strategy}
steps:
  - name: train
    script:
      image: python:3.12
      command: [python3]
      source: |
        import time
        lr, layers = float("{{{{trial.parameters.lr}}}}"), int("{{{{trial.parameters.layers}}}}")
        budget = {budget}
        time.sleep(0.5 * budget)
        loss = (lr - 0.03) ** 2 * 1000 + (layers - 3) ** 2 * 0.5 + 1.0 / budget
        open("{{{{outputs.parameters.loss.path}}}}", "w").write(f"{{loss:.6f}}")
        open("{{{{outputs.parameters.lr.path}}}}", "w").write(str(lr))
    outputs: {{parameters: [{{name: loss, path: /loss}}, {{name: lr, path: /lr}}]}}
    tune:
      space:
        lr: {{type: double, min: 0.01, max: 0.05, step: 0.02}}
        layers: {{type: int, min: 2, max: 4}}
      objective: {{metric: loss, goal: minimize}}
      strategy: {strategy}
      maxTrials: 9
      parallelism: 3
      {extra}
  - name: report
    script: {{image: alpine, command: [sh], source: 'echo best lr {{{{steps.train.outputs.parameters.lr}}}} loss {{{{steps.train.outputs.parameters.loss}}}}'}}
"#
    )
}

/// Seconds the run's trial steps ran, and how many trials there were.
fn trial_seconds(run: &Value) -> (f64, usize) {
    let time = |s: &Value, f: &str| {
        s[f].as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };
    let trials: Vec<&Value> = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"].as_str().unwrap().starts_with("train-t"))
        .collect();
    let seconds = trials
        .iter()
        .map(|s| (time(s, "finished_at") - time(s, "started_at")).as_seconds_f64())
        .sum();
    (seconds, trials.len())
}

#[test]
fn halving_finds_the_true_best_trial_with_fewer_step_seconds_than_grid() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("tuner");
    let (_, token) = couler.tenant("ml");

    let mut results = BTreeMap::new();
    for (strategy, extra) in [
        ("grid", ""),
        ("halving", "halving: {minBudget: 1, maxBudget: 9, eta: 3}"),
    ] {
        let id = couler.submit(&token, &tuned(strategy, extra), json!({}));
        let run = couler.wait(&token, &id, LIMIT);
        assert_eq!(run["status"], "succeeded", "{run:#}");
        let search = &run["outputs"]["tuning"]["train"];
        // The chosen trial is the best among those run…
        let rows = search["trials"].as_array().unwrap();
        let finished: Vec<f64> = rows
            .iter()
            .filter(|t| t["status"] == "succeeded")
            .filter(|t| t["budget"].is_null() || t["budget"] == 9)
            .map(|t| t["objective"].as_f64().unwrap())
            .collect();
        let best = search["objective"].as_f64().unwrap();
        assert!(finished.iter().all(|&o| best <= o), "{search:#}");
        // …and the true best of the space: lr 0.03, 3 layers.
        assert_eq!(
            search["parameters"],
            json!({"lr": "0.03", "layers": "3"}),
            "{search:#}"
        );
        // The tune step carries the best trial's outputs downstream.
        assert_eq!(step(&run, "train")["status"], "succeeded");
        assert_eq!(
            step(&run, "report")["outputs"]["result"],
            format!(
                "best lr 0.03 loss {}",
                step(&run, "train")["outputs"]["parameters"]["loss"]
                    .as_str()
                    .unwrap()
            )
        );
        results.insert(strategy, trial_seconds(&run));
    }
    let (grid, grid_trials) = results["grid"];
    let (halving, halving_trials) = results["halving"];
    assert_eq!(grid_trials, 9);
    assert_eq!(halving_trials, 9 + 3 + 1, "rungs of 9, 3 and 1 trials");
    // 27 epochs against 81, plus each trial's start-up (13 trials against 9).
    assert!(
        halving < grid,
        "halving spent {halving:.2} step-seconds, grid {grid:.2}"
    );
    println!("step-seconds: grid {grid:.2}, halving {halving:.2}");

    // Trials are ordinary steps: the same search again comes from the cache.
    let id = couler.submit(&token, &tuned("grid", ""), json!({}));
    let run = couler.wait(&token, &id, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let cached = step_statuses(&run)
        .iter()
        .filter(|(name, status)| name.starts_with("train-t") && *status == "cached")
        .count();
    assert_eq!(cached, 9, "{run:#}");
    // The search says so: no trial ran.
    let search = &run["outputs"]["tuning"]["train"];
    let rows = search["trials"].as_array().unwrap();
    assert!(rows.iter().all(|t| t["status"] == "cached"), "{search:#}");
    assert!(
        search["reason"]
            .as_str()
            .unwrap()
            .ends_with("; 0 trials ran, 0 failed, 9 came from the cache"),
        "{search:#}"
    );
}

#[test]
fn resources_are_advised_from_measured_history() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("adviser");
    let (_, token) = couler.tenant("ops");
    let workflow = r#"
apiVersion: couler.dev/v1alpha1
name: hungry
steps:
  - name: load
    cache: {policy: off}
    script:
      image: python:3.12
      command: [python3]
      source: |
        data = bytearray(40 * 1024 * 1024)
        for i in range(0, len(data), 4096):
            data[i] = 1
        print(sum(data[::4096]))
  - name: sized
    cache: {policy: off}
    resources: {cpu: 100m, memory: 1Gi}
    script: {image: alpine, command: [sh], source: 'echo ok'}
"#;
    // No history yet: no advice.
    let (status, plan) = couler.call(
        Method::POST,
        "/v1/plans",
        &token,
        Some(json!({"ir": ir(workflow)})),
    );
    assert_eq!(status, 200, "{plan:#}");
    assert_eq!(plan["advice"], json!([]), "{plan:#}");

    for _ in 0..3 {
        let id = couler.submit(&token, workflow, json!({}));
        let run = couler.wait(&token, &id, LIMIT);
        assert_eq!(run["status"], "succeeded", "{run:#}");
    }
    let (status, plan) = couler.call(
        Method::POST,
        "/v1/plans",
        &token,
        Some(json!({"ir": ir(workflow)})),
    );
    assert_eq!(status, 200, "{plan:#}");
    let advice = plan["advice"].as_array().unwrap();
    let load = advice
        .iter()
        .find(|a| a["step"] == "load")
        .unwrap_or_else(|| panic!("{plan:#}"));
    assert_eq!(load["applied"], true);
    assert_eq!(load["samples"], 3);
    let memory = load["memory"].as_str().unwrap();
    let mib: u64 = memory
        .trim_end_matches("Mi")
        .parse()
        .unwrap_or_else(|_| panic!("{memory}"));
    assert!(
        (48..=200).contains(&mib),
        "40 MiB measured, plus headroom: {memory}"
    );
    let planned = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "load")
        .unwrap();
    assert_eq!(planned["memory"], memory, "applied to a step that set none");
    // A step with its own requests keeps them; the advice is only reported.
    let sized = advice
        .iter()
        .find(|a| a["step"] == "sized")
        .unwrap_or_else(|| panic!("{plan:#}"));
    assert_eq!(sized["applied"], false);
    let planned = plan["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "sized")
        .unwrap();
    assert_eq!(planned["memory"], "1Gi");

    // The next run uses the advice (and its memory limit holds).
    let id = couler.submit(&token, workflow, json!({}));
    let run = couler.wait(&token, &id, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let (_, stored) = couler.call(Method::GET, &format!("/v1/runs/{id}/plan"), &token, None);
    let load = stored["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "load")
        .unwrap();
    assert_eq!(load["memory"], memory, "{stored:#}");
}

#[test]
fn an_llm_search_asks_the_configured_llm_for_its_configurations() {
    let Some(llm) = LlmServer::start() else {
        return;
    };
    let couler = Couler::start();
    let base_url = llm.base_url();
    let _scheduler = couler.scheduler_with(
        "llm-tuner",
        &[
            ("COULER__LLM__BASE_URL", base_url.as_str()),
            ("COULER__LLM__MODEL", "smollm2"),
            ("COULER__LLM__TIMEOUT_SECS", "240"),
        ],
    );
    let (_, token) = couler.tenant("ml");
    let workflow = r#"
apiVersion: couler.dev/v1alpha1
name: tuned-by-llm
steps:
  - name: train
    script:
      image: python:3.12
      command: [python3]
      source: |
        lr, layers = float("{{trial.parameters.lr}}"), int("{{trial.parameters.layers}}")
        open("{{outputs.parameters.loss.path}}", "w").write(str((lr - 0.03) ** 2 + (layers - 3) ** 2))
    outputs: {parameters: [{name: loss, path: /loss}]}
    tune:
      space:
        lr: {type: double, min: 0.001, max: 0.1}
        layers: {type: int, min: 1, max: 6}
      objective: {metric: loss, goal: minimize}
      strategy: llm
      maxTrials: 4
      dataCard: {name: market-prices, type: tabular, size: 1.2M rows, metric: mse}
      modelCard: {name: lstm, structure: 2-layer LSTM regressor}
"#;
    let id = couler.submit(&token, workflow, json!({}));
    let run = couler.wait(&token, &id, Duration::from_secs(600));
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let (_, plan) = couler.call(Method::GET, &format!("/v1/runs/{id}/plan"), &token, None);
    let search = &plan["tuning"][0];
    assert_eq!(
        search["configurations"].as_array().unwrap().len(),
        4,
        "{plan:#}"
    );
    let warnings = search["warnings"].to_string();
    // The scheduler asked the LLM: its configurations were used, or its
    // answer was judged unusable and random ones took their place.
    assert!(!warnings.contains("no LLM configured"), "{plan:#}");
    assert!(
        search["strategy"] == "llm" || warnings.contains("not usable"),
        "{plan:#}"
    );
    eprintln!(
        "llm search: strategy {}, warnings {warnings}",
        search["strategy"]
    );
    let best = &run["outputs"]["tuning"]["train"];
    assert!(best["objective"].is_number(), "{run:#}");
}
