//! End to end: the real `couler-api` and `couler-scheduler` binaries on a
//! real Postgres (and Redis), running workflows on the local engine.

use couler_tests::*;
use reqwest::Method;
use serde_json::json;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

#[test]
fn the_examples_run_to_completion() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("e2e-examples");
    let (tenant, token) = couler.tenant("acme");
    // The market-trend example reads a secret: the tenant has one.
    couler.secret(&tenant, "market-data", &[("api-key", "not-a-real-key")]);

    let diamond = couler.submit(&token, &example("diamond.yaml"), json!({"message": "ping"}));
    let coin = couler.submit(&token, &example("coin-flip.yaml"), json!({}));
    let artifacts = couler.submit(&token, &example("artifact-passing.yaml"), json!({}));
    let map = couler.submit(&token, &example("map-batch-sizes.yaml"), json!({}));
    let automl = couler.submit(&token, &example("automl.yaml"), json!({}));
    let market = couler.submit(&token, &example("market-trend.yaml"), json!({"days": 30}));

    let run = couler.wait(&token, &diamond, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let steps = step_statuses(&run);
    for s in ["a", "b", "c", "d"] {
        assert_eq!(steps[s], "succeeded", "{run:#}");
    }
    let d = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "d")
        .unwrap();
    assert_eq!(
        d["outputs"]["result"],
        "D joins: B got: A says ping / C got: A says ping"
    );

    let run = couler.wait(&token, &coin, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let steps = step_statuses(&run);
    let skipped = ["heads", "tails"]
        .iter()
        .filter(|s| steps[**s] == "skipped")
        .count();
    let ran = ["heads", "tails"]
        .iter()
        .filter(|s| steps[**s] == "succeeded")
        .count();
    assert_eq!((skipped, ran), (1, 1), "{run:#}");

    let run = couler.wait(&token, &artifacts, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let produce = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "produce")
        .unwrap();
    assert_eq!(
        produce["outputs"]["artifacts"]["dataset"]["digest"]
            .as_str()
            .unwrap()
            .len(),
        64
    );
    let consume = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "consume")
        .unwrap();
    assert_eq!(consume["outputs"]["result"].as_str().unwrap().trim(), "100");

    let run = couler.wait(&token, &map, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let steps = step_statuses(&run);
    for s in [
        "train[0]",
        "train[1]",
        "train[2]",
        "evaluate[0]",
        "evaluate[1]",
        "evaluate[2]",
    ] {
        assert_eq!(
            steps.get(s).map(String::as_str),
            Some("succeeded"),
            "{s}: {run:#}"
        );
    }

    let run = couler.wait(&token, &automl, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let best = run["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "select-best")
        .unwrap();
    assert_eq!(best["outputs"]["result"], "lightgbm");

    // The market-trend example reads a secret: give it one, as an operator would.
    let run = couler.wait(&token, &market, LIMIT);
    assert_ne!(run["status"], "running");
    let steps = step_statuses(&run);
    assert!(
        steps.contains_key("notify"),
        "the exit handler ran: {run:#}"
    );
}

#[test]
fn step_failures_timeouts_and_missing_engines_end_runs_clearly() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("e2e-failures");
    let (_, token) = couler.tenant("acme");
    let failing = "apiVersion: couler.dev/v1alpha1\nname: failing\nsteps:\n  - name: ok\n    container: {image: alpine, command: [\"true\"]}\n  - name: boom\n    depends: [ok]\n    container: {image: alpine, command: [sh, -c, 'echo broken >&2; exit 3']}\n  - name: after\n    depends: [boom]\n    container: {image: alpine, command: [\"true\"]}\n";
    let slow = "apiVersion: couler.dev/v1alpha1\nname: slow\nsteps:\n  - name: nap\n    timeout: 1s\n    container: {image: alpine, command: [sleep, '30']}\n";
    let f = couler.submit(&token, failing, json!({}));
    let s = couler.submit(&token, slow, json!({}));

    let run = couler.wait(&token, &f, LIMIT);
    assert_eq!(run["status"], "failed", "{run:#}");
    assert!(
        run["message"].as_str().unwrap_or_default().contains("boom"),
        "{run:#}"
    );
    let steps = step_statuses(&run);
    assert_eq!(
        (steps["ok"].as_str(), steps["boom"].as_str()),
        ("succeeded", "failed")
    );
    assert_ne!(steps.get("after").map(String::as_str), Some("succeeded"));
    let (status, logs) = couler.call(
        Method::GET,
        &format!("/v1/runs/{f}/logs?step=boom"),
        &token,
        None,
    );
    assert_eq!(status, 200);
    assert!(logs.as_str().unwrap().contains("broken"), "{logs}");

    let run = couler.wait(&token, &s, Duration::from_secs(30));
    assert_eq!(run["status"], "failed", "{run:#}");
    let nap = &run["steps"].as_array().unwrap()[0];
    assert!(
        nap["message"]
            .as_str()
            .unwrap_or_default()
            .contains("timed out"),
        "{run:#}"
    );

    // A tenant on an engine this scheduler does not have: a clear failure, not a stuck run.
    let (_, argo) = couler.tenant_with("argo-user", json!({"engine": "argo"}));
    let a = couler.submit(&argo, failing, json!({}));
    let run = couler.wait(&argo, &a, LIMIT);
    assert_eq!(run["status"], "failed");
    assert!(run["message"].as_str().unwrap().contains("argo"), "{run:#}");
}

/// The README's first flow: `couler up`, then `couler submit … --wait`.
#[test]
fn couler_up_serves_the_readme_flow() {
    use std::io::BufRead;
    let _ = rustls::crypto::ring::default_provider().install_default();
    let database = format!("couler_test_{}", tempdir::uuid_like());
    let data = tempdir::Dir::new("up");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mut up = Proc(
        std::process::Command::new(binary("couler"))
            .args(["up", "--addr", &format!("127.0.0.1:{port}"), "--data-dir"])
            .arg(data.path())
            .env("DATABASE_URL", format!("{PG}/{database}"))
            .env("COULER__TELEMETRY__LOG_FILTER", "warn")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    // Read the banner, then keep draining stdout so `couler up` never
    // writes into a closed pipe.
    let (tx, rx) = std::sync::mpsc::channel();
    let stdout = std::io::BufReader::new(up.0.stdout.take().unwrap());
    std::thread::spawn(move || {
        for line in stdout.lines().map_while(Result::ok) {
            if let Some(k) = line.trim().strip_prefix("API key") {
                let _ = tx.send(k.trim().to_owned());
            }
        }
    });
    let key = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("couler up prints an API key");
    let submit = std::process::Command::new(binary("couler"))
        .args([
            "submit",
            "examples/diamond.yaml",
            "--wait",
            "--param",
            "message=readme",
        ])
        .current_dir(repo_root())
        .env("COULER_SERVER", format!("http://127.0.0.1:{port}"))
        .env("COULER_TOKEN", &key)
        .output()
        .unwrap();
    assert!(
        submit.status.success(),
        "{}{}",
        String::from_utf8_lossy(&submit.stdout),
        String::from_utf8_lossy(&submit.stderr)
    );
    let out = String::from_utf8_lossy(&submit.stdout);
    assert!(out.lines().any(|l| l.trim().starts_with("run_")), "{out}");
    // A second start reuses the key kept in the data directory.
    drop(up);
    let kept = std::fs::read_to_string(data.path().join("dev.api-key")).unwrap();
    assert_eq!(kept.trim(), key);
    let _ = std::process::Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc"])
        .arg(format!(
            "DROP DATABASE IF EXISTS \"{database}\" WITH (FORCE)"
        ))
        .status();
}
