//! The shared cache index end to end: a step computed by one tenant is not
//! computed again by another, unless it is private (secrets, `scope:
//! tenant`) or its inputs differ; and losing Redis never fails a run.

use couler_tests::*;
use serde_json::{Value, json};
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// Two slow steps passing an artifact, then a quick report.
fn pipeline(extra_env: &str, version: &str) -> String {
    format!(
        "apiVersion: couler.dev/v1alpha1
name: slow-pipeline
steps:
  - name: prepare
    cache: {{version: '{version}'}}
    container:
      image: alpine
      command: [sh, -c, 'sleep 1.5; mkdir -p $(dirname {{{{outputs.artifacts.data.path}}}}); seq 1 50 > {{{{outputs.artifacts.data.path}}}}']
      {extra_env}
    outputs: {{artifacts: [{{name: data, path: /tmp/data.csv}}]}}
  - name: train
    inputs: {{artifacts: [{{name: data, from: '{{{{steps.prepare.outputs.artifacts.data}}}}', path: /in/data.csv}}]}}
    container: {{image: alpine, command: [sh, -c, 'sleep 1.5; wc -l < {{{{inputs.artifacts.data.path}}}}']}}
  - name: report
    container: {{image: alpine, command: [sh, -c, 'echo rows: {{{{steps.train.outputs.result}}}}']}}
"
    )
}

fn duration(run: &Value) -> Duration {
    let t = |f: &str| {
        run[f]
            .as_str()
            .unwrap()
            .parse::<chrono::DateTime<chrono::Utc>>()
            .unwrap()
    };
    (t("finished_at") - t("started_at")).to_std().unwrap()
}

fn run_to_end(couler: &Couler, token: &str, yaml: &str) -> Value {
    let id = couler.submit(token, yaml, json!({}));
    let run = couler.wait(token, &id, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    run
}

/// The statuses of the pipeline's three steps.
fn three(run: &Value) -> [String; 3] {
    let steps = step_statuses(run);
    ["prepare", "train", "report"].map(|name| steps[name].clone())
}

/// A run's plan.
fn plan_of(couler: &Couler, token: &str, run: &Value) -> Value {
    let id = run["id"].as_str().unwrap();
    let (status, plan) = couler.call(
        reqwest::Method::GET,
        &format!("/v1/runs/{id}/plan"),
        token,
        None,
    );
    assert_eq!(status, 200, "{plan}");
    plan
}

#[test]
fn another_tenant_reuses_results_and_runs_five_times_faster() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("cacher");
    let (_, a) = couler.tenant("alice");
    let (_, b) = couler.tenant("bob");

    let first = run_to_end(&couler, &a, &pipeline("", "1"));
    let steps = step_statuses(&first);
    assert!(steps.values().all(|s| s == "succeeded"), "{first:#}");

    let second = run_to_end(&couler, &b, &pipeline("", "1"));
    assert_eq!(three(&second), ["cached", "cached", "cached"], "{second:#}");
    let (slow, fast) = (duration(&first), duration(&second));
    assert!(
        fast * 5 <= slow,
        "cached run took {fast:?}, the original {slow:?}"
    );
    // Outputs are wired through: the report is the first run's.
    let report = |run: &Value| step(run, "report")["outputs"]["result"].clone();
    assert_eq!(report(&second), report(&first));
    // Each step says what the cache said of it and what that saved; the
    // run that computed a hit stays alice's business.
    for name in ["prepare", "train", "report"] {
        let cache = &step(&second, name)["cache"];
        assert_eq!(cache["status"], "hit", "{name}: {second:#}");
        assert!(cache.get("producer_run").is_none(), "{name}: {cache}");
    }
    let saved = |run: &Value, name: &str| step(run, name)["cache"]["saved_ms"].as_u64().unwrap();
    assert!(saved(&second, "prepare") >= 1500, "{second:#}");
    let total = second["cache_saved_ms"].as_u64().unwrap();
    assert_eq!(
        total,
        ["prepare", "train", "report"]
            .map(|n| saved(&second, n))
            .iter()
            .sum::<u64>(),
        "{second:#}"
    );
    let (status, listed) = couler.call(reqwest::Method::GET, "/v1/runs", &b, None);
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["items"][0]["cache_saved_ms"], total, "{listed:#}");
    let verdict = |run: &Value, name: &str| step(run, name)["cache"]["status"].clone();
    assert_eq!(verdict(&first, "prepare"), "miss", "{first:#}");
    assert_eq!(first["cache_saved_ms"], 0, "{first:#}");

    // The cache's statistics are the tenant's own.
    let (status, stats) = couler.call(reqwest::Method::GET, "/v1/cache/stats", &b, None);
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["hits"], 3, "{stats}");
    assert!(
        stats["compute_ms_saved"].as_u64().unwrap() >= 3000,
        "{stats}"
    );
    assert_eq!(stats["misses"], 0, "{stats}");
    // Every step of alice's first run had to run, `train` and `report`
    // too, although they could not be looked up before `prepare` ran.
    let alice = || {
        couler
            .call(reqwest::Method::GET, "/v1/cache/stats", &a, None)
            .1
    };
    wait_until(Duration::from_secs(10), || alice()["misses"] == 3);
    assert_eq!(alice()["hits"], 0);

    // A new cache.version misses. Downstream keys need the upstream outputs,
    // known before the run only from hits; bob never ran `train` himself,
    // so it is not looked up again after `prepare` (no cut) and runs too.
    // The next run with the new version hits everything again.
    let bumped = run_to_end(&couler, &b, &pipeline("", "2"));
    let steps = step_statuses(&bumped);
    assert_eq!(
        (steps["prepare"].as_str(), steps["train"].as_str()),
        ("succeeded", "succeeded"),
        "{bumped:#}"
    );
    let again = run_to_end(&couler, &a, &pipeline("", "2"));
    assert!(
        step_statuses(&again).values().all(|s| s == "cached"),
        "{again:#}"
    );
    // alice sees which of her runs computed what she reused (`train`
    // learnt its key only as it ran in her first run), not bob's.
    let producer = |name: &str| step(&again, name)["cache"]["producer_run"].clone();
    assert_eq!(producer("train"), first["id"], "{again:#}");
    assert_eq!(producer("prepare"), Value::Null, "{again:#}");

    // The same from the terminal, `couler cache`. With version 2, bob
    // computed `prepare` (alice reused it); `train` and `report`, whose
    // inputs did not change, are still alice's from her first run.
    let dir = tempdir::Dir::new("cache-cli");
    let file = dir.path().join("pipeline.yaml");
    std::fs::write(&file, pipeline("", "2")).unwrap();
    let file = file.to_str().unwrap();
    let explain = |token: &str| couler.cli_ok(token, &["cache", "explain", file]);
    let line = |text: &str, step: &str| {
        text.lines()
            .find(|l| l.split_whitespace().next() == Some(step))
            .unwrap_or_else(|| panic!("no line for {step}: {text}"))
            .to_owned()
    };
    let text = explain(&a);
    assert!(
        text.starts_with("slow-pipeline: 3 steps — 3 hit, 0 not needed, 0 miss"),
        "{text}"
    );
    assert!(
        !line(&text, "prepare").contains("yours"),
        "another tenant's history shows: {text}"
    );
    assert!(line(&text, "train").contains("yours: computed "), "{text}");
    let text = explain(&b);
    assert!(
        line(&text, "prepare").contains("yours: computed ")
            && line(&text, "prepare").contains("reused by 1 run,"),
        "{text}"
    );
    assert!(!line(&text, "train").contains("yours"), "{text}");
    let text = couler.cli_ok(&a, &["cache", "stats"]);
    assert!(text.contains("hits              3\n"), "{text}");

    // Only the producer's invalidation removes anything.
    let removed = |token: &str| couler.cli_ok(token, &["cache", "invalidate", "--version", "2"]);
    assert_eq!(removed(&a), "removed 0 cached results\n");
    assert_eq!(removed(&b), "removed 1 cached result\n");
    let text = explain(&a);
    assert!(!line(&text, "prepare").contains(" hit "), "{text}");

    for wrong in [
        &["cache", "invalidate"][..],
        &["cache", "invalidate", "--step", "prepare"],
        &[
            "cache",
            "invalidate",
            "--image",
            "alpine",
            "--step",
            "prepare",
        ],
    ] {
        let refused = couler.cli(&b, wrong);
        assert_eq!(refused.status.code(), Some(2), "{wrong:?}: {refused:?}");
    }
    // What the server finds wrong is shown with where it is.
    let nowhere = "wf_0190f0e0aaaa7bbb8ccc000000000000";
    let refused = couler.cli(
        &b,
        &[
            "cache",
            "invalidate",
            "--workflow",
            nowhere,
            "--step",
            "prepare",
        ],
    );
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        said.contains(&format!(
            "not_found: workflow {nowhere:?} was not found (at /workflow, HTTP 404"
        )),
        "{said}"
    );
    let refused = couler.cli(&b, &["cache", "flush", "--yes"]);
    assert!(!refused.status.success());
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("forbidden"),
        "{refused:?}"
    );
    let flushed = couler.cli_ok(&couler.platform, &["cache", "flush", "--yes"]);
    assert!(flushed.starts_with("flushed the cache index"), "{flushed}");
    assert!(explain(&b).contains(" 0 hit,"));
}

/// The messages of a run's `run.waiting` events.
fn waits(couler: &Couler, token: &str, id: &str) -> Vec<String> {
    let path = format!("/v1/runs/{id}/events");
    let (status, events) = couler.call(reqwest::Method::GET, &path, token, None);
    assert_eq!(status, 200, "{events}");
    (events["items"].as_array().unwrap().iter())
        .filter(|e| e["kind"] == "run.waiting")
        .map(|e| e["message"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn runs_computing_the_same_steps_at_once_compute_them_once() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("together");
    let (_, a) = couler.tenant("alice");
    let (_, b) = couler.tenant("bob");
    let scratch = couler.scratch("together");
    let log = scratch.path().join("ran").display().to_string();
    let yaml = format!(
        "apiVersion: couler.dev/v1alpha1
name: together
steps:
  - name: prepare
    container:
      image: alpine
      command: [sh, -c, 'sleep 2; echo prepare >> {log}; mkdir -p $(dirname {{{{outputs.artifacts.data.path}}}}); seq 1 9 > {{{{outputs.artifacts.data.path}}}}']
    outputs: {{artifacts: [{{name: data, path: /tmp/data.csv}}]}}
  - name: train
    inputs: {{artifacts: [{{name: data, from: '{{{{steps.prepare.outputs.artifacts.data}}}}', path: /in/data.csv}}]}}
    container: {{image: alpine, command: [sh, -c, 'sleep 1; echo train >> {log}; wc -l < {{{{inputs.artifacts.data.path}}}}']}}
"
    );
    let first = couler.submit(&a, &yaml, json!({}));
    let second = couler.submit(&b, &yaml, json!({}));
    let runs = [(&a, &first), (&b, &second)].map(|(token, id)| {
        let run = couler.wait(token, id, LIMIT);
        assert_eq!(run["status"], "succeeded", "{run:#}");
        let steps = step_statuses(&run);
        (run, [steps["prepare"].clone(), steps["train"].clone()])
    });
    // Each step ran once, in whichever run was planned first; the other
    // run waited for it and reused what it computed.
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(ran, "prepare\ntrain\n");
    let statuses: Vec<&[String; 2]> = runs.iter().map(|(_, s)| s).collect();
    assert!(
        statuses.contains(&&["succeeded".to_owned(), "succeeded".to_owned()])
            && statuses.contains(&&["cached".to_owned(), "cached".to_owned()]),
        "{statuses:?}"
    );
    let (waited, token) = match runs[0].1[0].as_str() {
        "cached" => (&runs[0].0, &a),
        _ => (&runs[1].0, &b),
    };
    let said = waits(&couler, token, waited["id"].as_str().unwrap());
    assert!(
        said.first()
            .is_some_and(|m| m.contains("computing prepare with the same inputs")),
        "{said:?}"
    );
    // Planned again after each wait (for `prepare`, then for `train`,
    // claimed once `prepare` ended), the run counts its hits once, when it
    // goes ahead with them.
    let (status, stats) = couler.call(reqwest::Method::GET, "/v1/cache/stats", token, None);
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["hits"], 2, "{said:?} {stats}");

    // A run waiting for another can be cancelled.
    let long = yaml.replace("sleep 2;", "sleep 60;");
    let holder = couler.submit(&a, &long, json!({}));
    let waiter = couler.submit(&b, &long, json!({}));
    let waiting = |token: &str, id: &str| !waits(&couler, token, id).is_empty();
    wait_until(Duration::from_secs(30), || {
        waiting(&a, &holder) || waiting(&b, &waiter)
    });
    let ((token, id), (other_token, other)) = match waiting(&b, &waiter) {
        true => ((&b, &waiter), (&a, &holder)),
        false => ((&a, &holder), (&b, &waiter)),
    };
    let cancel = |token: &str, id: &str| {
        let path = format!("/v1/runs/{id}/cancel");
        let (status, body) = couler.call(reqwest::Method::POST, &path, token, None);
        assert_eq!(status, 200, "{body}");
        let done = couler.wait(token, id, Duration::from_secs(30));
        assert_eq!(done["status"], "cancelled", "{done:#}");
        done["message"].as_str().unwrap_or_default().to_owned()
    };
    let message = cancel(token, id);
    assert!(message.contains("while waiting"), "{message}");
    cancel(other_token, other);
}

#[test]
fn a_later_stage_waits_for_a_run_computing_its_steps() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("stages-together");
    let (_, a) = couler.tenant("alice");
    let scratch = couler.scratch("stages-together");
    let log = scratch.path().join("ran").display().to_string();
    // `train` can be keyed only once `measure` (never cached) has run: the
    // tenant has run it before, so it is looked up in a stage of its own.
    let yaml = |version: &str| {
        format!(
            "apiVersion: couler.dev/v1alpha1
name: staged
steps:
  - name: measure
    cache: {{policy: 'off'}}
    container: {{image: alpine, command: [sh, -c, 'echo 9']}}
  - name: train
    cache: {{version: '{version}'}}
    container: {{image: alpine, command: [sh, -c, 'sleep 2; echo train >> {log}; echo {{{{steps.measure.outputs.result}}}}']}}
"
        )
    };
    run_to_end(&couler, &a, &yaml("1"));
    let ids = [1, 2].map(|_| couler.submit(&a, &yaml("2"), json!({})));
    let runs = ids.each_ref().map(|id| {
        let run = couler.wait(&a, id, LIMIT);
        assert_eq!(run["status"], "succeeded", "{run:#}");
        run
    });
    let ran = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        ran, "train\ntrain\n",
        "the second run computed `train` again"
    );
    let mut trains: Vec<String> = runs
        .iter()
        .map(|r| step_statuses(r)["train"].clone())
        .collect();
    trains.sort();
    assert_eq!(trains, ["cached", "succeeded"]);
    let waited = runs
        .iter()
        .find(|r| step_statuses(r)["train"] == "cached")
        .unwrap();
    let said = waits(&couler, &a, waited["id"].as_str().unwrap());
    assert!(
        said.first()
            .is_some_and(|m| m.contains("computing train with the same inputs")),
        "{said:?}"
    );
    // One hit: `train`, counted when the postponed stage started.
    let (status, stats) = couler.call(reqwest::Method::GET, "/v1/cache/stats", &a, None);
    assert_eq!(status, 200, "{stats}");
    assert_eq!(stats["hits"], 1, "{said:?} {stats}");
}

#[test]
fn a_branch_whose_condition_does_not_hold_is_skipped_not_reused() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("branches");
    let (_, a) = couler.tenant("alice");
    let branch = "apiVersion: couler.dev/v1alpha1
name: branch
parameters: [{name: side, default: heads}]
steps:
  - name: flip
    cache: {policy: 'off'}
    container: {image: alpine, command: [sh, -c, 'echo {{workflow.parameters.side}}']}
  - name: heads
    depends: [flip]
    when: [{input: '{{steps.flip.outputs.result}}', operator: eq, value: heads}]
    container: {image: alpine, command: [sh, -c, 'echo it was heads']}
";
    let side = |side: &str| {
        let id = couler.submit(&a, branch, json!({"side": side}));
        let run = couler.wait(&a, &id, LIMIT);
        assert_eq!(run["status"], "succeeded", "{run:#}");
        step_statuses(&run)["heads"].clone()
    };
    assert_eq!(side("heads"), "succeeded");
    // `heads` has an entry now, and its command does not read the flip:
    // only its condition does.
    assert_eq!(side("tails"), "skipped");
    // Once the flip has run again, the branch that holds is looked up
    // with what it read, and reused.
    assert_eq!(side("heads"), "cached");
}

#[test]
fn a_step_whose_upstream_ran_again_with_the_same_outputs_is_a_hit() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("cutoff");
    let (_, a) = couler.tenant("alice");
    let first = run_to_end(&couler, &a, &pipeline("", "1"));
    assert!(
        step_statuses(&first).values().all(|s| s == "succeeded"),
        "{first:#}"
    );

    // A new cache.version runs `prepare` again; it writes the same data, so
    // `train` and `report`, looked up once the steps they read have run,
    // are hits.
    let second = run_to_end(&couler, &a, &pipeline("", "2"));
    assert_eq!(
        three(&second),
        ["succeeded", "cached", "cached"],
        "{second:#}"
    );
    let plan = plan_of(&couler, &a, &second);
    let cut: Vec<&str> = plan["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["pass"] == "cache-cut")
        .filter_map(|d| d["step"].as_str())
        .collect();
    assert_eq!(cut, ["train", "report"], "{plan:#}");
    // The stage of the two hits has nothing to run: the scheduler reports
    // it, no engine is handed it (the local engine would have made it a
    // directory beside the first stage's).
    let id = second["id"].as_str().unwrap();
    let stages: Vec<String> = std::fs::read_dir(couler.data_dir.path().join("runs").join(id))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(stages.len(), 1, "{stages:?}");

    // Different data from `prepare` misses downstream, stage or no stage.
    let changed = pipeline("", "3").replace("seq 1 50", "seq 1 60");
    let third = run_to_end(&couler, &a, &changed);
    let steps = step_statuses(&third);
    assert_eq!(
        (steps["train"].as_str(), steps["report"].as_str()),
        ("succeeded", "succeeded"),
        "{third:#}"
    );
}

#[test]
fn a_hit_in_a_staged_run_is_reported_not_run() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("staged-hit");
    let (_, a) = couler.tenant("alice");
    // `b` reads `a`, which a new parameter value runs again: the run is cut
    // into stages before `b`. `c` reads nothing and hits at planning.
    let workflow = |x: &str| {
        format!(
            "apiVersion: couler.dev/v1alpha1
name: staged
steps:
  - name: a
    container: {{image: alpine, command: [sh, -c, 'echo a {x}']}}
  - name: b
    container: {{image: alpine, command: [sh, -c, 'echo b {{{{steps.a.outputs.result}}}}']}}
  - name: c
    container: {{image: alpine, command: [sh, -c, 'date +%s%N']}}
"
        )
    };
    let first = run_to_end(&couler, &a, &workflow("1"));
    let second = run_to_end(&couler, &a, &workflow("2"));
    let plan = plan_of(&couler, &a, &second);
    assert!(!plan["parts"].as_array().unwrap().is_empty(), "{plan:#}");
    let steps = step_statuses(&second);
    assert_eq!(steps["c"], "cached", "{second:#}");
    // `b` was looked up when its stage started, once `a` had run: the
    // verdict recorded then replaces the one of planning.
    let verdict = |name: &str| step(&second, name)["cache"].clone();
    assert_eq!(verdict("c")["status"], "hit", "{second:#}");
    assert_eq!(verdict("c")["producer_run"], first["id"], "{second:#}");
    assert_eq!(verdict("b")["status"], "miss", "{second:#}");
    assert_eq!(verdict("b")["reason"], "not cached", "{second:#}");
    assert_eq!(
        step(&second, "c")["outputs"],
        step(&first, "c")["outputs"],
        "the hit's outputs, not a new run's"
    );
}

#[test]
fn a_step_whose_bytes_are_gone_is_not_run_when_everything_reading_it_is_cached() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("not-needed");
    let (_, a) = couler.tenant("alice");
    let first = run_to_end(&couler, &a, &pipeline("", "1"));
    // `prepare`'s artifact goes from the store behind the service's back:
    // its entry is a miss now, but what it produced is on record.
    let location = step(&first, "prepare")["outputs"]["artifacts"]["data"]["location"]
        .as_str()
        .unwrap();
    std::fs::remove_file(location.strip_prefix("file://").unwrap()).unwrap();

    // `train` is keyed from the record and hits, so nothing needs
    // `prepare`'s bytes and it does not run.
    let second = run_to_end(&couler, &a, &pipeline("", "1"));
    assert_eq!(
        three(&second),
        ["skipped", "cached", "cached"],
        "{second:#}"
    );
    let plan = plan_of(&couler, &a, &second);
    assert_eq!(step(&plan, "prepare")["action"], "not_needed", "{plan:#}");

    // A changed `train` needs the bytes: `prepare` runs again, and `train`
    // runs on what it wrote.
    let changed = pipeline("", "1").replace("wc -l <", "wc -c <");
    let third = run_to_end(&couler, &a, &changed);
    let steps = step_statuses(&third);
    assert_eq!(
        (steps["prepare"].as_str(), steps["train"].as_str()),
        ("succeeded", "succeeded"),
        "{third:#}"
    );
}

#[test]
fn private_steps_and_changed_inputs_are_not_reused() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("private");
    let (ta, a) = couler.tenant("alice");
    let (tb, b) = couler.tenant("bob");
    for t in [&ta, &tb] {
        couler.put_secret(t, "hub", json!({"token": "s3cr3t"}));
    }
    // A step with a secret in its env is keyed inside its tenant only.
    let secret = pipeline("env: [{name: TOKEN, secret: {name: hub, key: token}}]", "1");
    run_to_end(&couler, &a, &secret);
    let again = run_to_end(&couler, &a, &secret);
    assert_eq!(
        step_statuses(&again)["prepare"],
        "cached",
        "the same tenant reuses it: {again:#}"
    );
    let other = run_to_end(&couler, &b, &secret);
    assert_eq!(
        step_statuses(&other)["prepare"],
        "succeeded",
        "another tenant must not: {other:#}"
    );

    // An input artifact whose content changes misses downstream.
    let changing = "apiVersion: couler.dev/v1alpha1
name: changing
steps:
  - name: fetch
    cache: {policy: off}
    container: {image: alpine, command: [sh, -c, 'mkdir -p $(dirname {{outputs.artifacts.data.path}}); date +%s%N > {{outputs.artifacts.data.path}}']}
    outputs: {artifacts: [{name: data, path: /tmp/data}]}
  - name: digest
    inputs: {artifacts: [{name: data, from: '{{steps.fetch.outputs.artifacts.data}}', path: /in/data}]}
    container: {image: alpine, command: [sh, -c, 'cat {{inputs.artifacts.data.path}}']}
";
    run_to_end(&couler, &a, changing);
    let second = run_to_end(&couler, &a, changing);
    assert_eq!(step_statuses(&second)["digest"], "succeeded", "{second:#}");
}

#[test]
fn without_redis_runs_complete_uncached() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler_with(
        "no-redis",
        &[
            ("REDIS_URL", "redis://127.0.0.1:1"),
            ("COULER__REDIS__TIMEOUT_MS", "50"),
        ],
    );
    let (_, a) = couler.tenant("alice");
    run_to_end(&couler, &a, &pipeline("", "1"));
    let again = run_to_end(&couler, &a, &pipeline("", "1"));
    assert!(
        step_statuses(&again).values().all(|s| s == "succeeded"),
        "{again:#}"
    );
}

/// A Redis of the test's own, so stopping it disturbs no other test.
fn private_redis(port: u16) -> Proc {
    let redis = Proc(
        std::process::Command::new("redis-server")
            .args([
                "--bind",
                "127.0.0.1",
                "--port",
                &port.to_string(),
                "--save",
                "",
                "--appendonly",
                "no",
            ])
            .stdout(std::process::Stdio::null())
            .spawn()
            .expect("redis-server starts"),
    );
    wait_until(Duration::from_secs(10), || {
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
    });
    redis
}

#[test]
fn redis_stopped_restarted_and_emptied_behind_the_services_back() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let url = format!("redis://127.0.0.1:{port}");
    let mut redis = private_redis(port);
    let couler = Couler::start();
    let _scheduler = couler.scheduler_with(
        "flaky-redis",
        &[
            ("REDIS_URL", url.as_str()),
            ("COULER__REDIS__TIMEOUT_MS", "100"),
        ],
    );
    let (_, a) = couler.tenant("alice");
    let yaml = pipeline("", "1");
    run_to_end(&couler, &a, &yaml);
    let hit = run_to_end(&couler, &a, &yaml);
    assert!(
        step_statuses(&hit).values().all(|s| s == "cached"),
        "{hit:#}"
    );

    // Redis stops: runs still complete, uncached.
    drop(redis);
    let down = run_to_end(&couler, &a, &yaml);
    assert!(
        step_statuses(&down).values().all(|s| s == "succeeded"),
        "{down:#}"
    );

    // It comes back (empty): the scheduler reconnects by itself and caches again.
    redis = private_redis(port);
    let mut cached_again = false;
    for _ in 0..5 {
        run_to_end(&couler, &a, &yaml);
        let run = run_to_end(&couler, &a, &yaml);
        if step_statuses(&run).values().all(|s| s == "cached") {
            cached_again = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(500));
    }
    assert!(
        cached_again,
        "the cache did not recover after Redis came back"
    );

    // Keys deleted behind the service's back: a miss, and the run completes.
    let flushed = std::process::Command::new("redis-cli")
        .args(["-p", &port.to_string(), "FLUSHALL"])
        .status()
        .unwrap();
    assert!(flushed.success());
    let after = run_to_end(&couler, &a, &yaml);
    assert!(
        step_statuses(&after).values().all(|s| s == "succeeded"),
        "{after:#}"
    );
    drop(redis);
}
