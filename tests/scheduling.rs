//! Scheduling behaviour through the real binaries: fair dispatch across
//! tenants, per-tenant concurrency, cancel, retries, retry from failure,
//! graceful hand-back, and the scheduler's metrics.

use couler_tests::*;
use reqwest::Method;
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(120);

fn nap(name: &str, seconds: &str) -> String {
    format!(
        // Not cached: these runs must take their time.
        "apiVersion: couler.dev/v1alpha1\nname: {name}\nsteps:\n  - name: nap\n    cache: {{policy: off}}\n    container: {{image: alpine, command: [sleep, '{seconds}']}}\n"
    )
}

fn time(run: &Value, field: &str) -> chrono::DateTime<chrono::Utc> {
    let text = run[field]
        .as_str()
        .unwrap_or_else(|| panic!("{field} missing: {run:#}"));
    text.parse().unwrap()
}

#[test]
fn a_flooding_tenant_cannot_starve_another_and_quotas_hold() {
    let couler = Couler::start();
    let (_, flood) = couler.tenant_with("flood", json!({"quotas": {"max_concurrent_runs": 2, "max_queued_runs": 1000, "requests_per_second": 1000}}));
    let (_, calm) = couler.tenant("calm");
    let flood_runs: Vec<String> = (0..12)
        .map(|_| couler.submit(&flood, &nap("flood", "0.4"), json!({})))
        .collect();
    let _scheduler = couler.scheduler("fair");
    std::thread::sleep(Duration::from_millis(300));
    let calm_run = couler.submit(&calm, &nap("calm", "0.1"), json!({}));

    let calm_done = couler.wait(&calm, &calm_run, LIMIT);
    assert_eq!(calm_done["status"], "succeeded");
    let flood_done: Vec<Value> = flood_runs
        .iter()
        .map(|r| couler.wait(&flood, r, LIMIT))
        .collect();
    // The calm tenant did not wait for the flood to drain.
    let last_flood_start = flood_done
        .iter()
        .map(|r| time(r, "started_at"))
        .max()
        .unwrap();
    assert!(
        time(&calm_done, "started_at") < last_flood_start,
        "the calm tenant waited behind the flood"
    );
    // Never more than two flood runs at once.
    let mut edges: Vec<(chrono::DateTime<chrono::Utc>, i32)> = flood_done
        .iter()
        .flat_map(|r| [(time(r, "started_at"), 1), (time(r, "finished_at"), -1)])
        .collect();
    edges.sort();
    let mut running = 0;
    for (_, delta) in edges {
        running += delta;
        assert!(running <= 2, "more than max_concurrent_runs ran at once");
    }
}

#[test]
fn cancel_stops_running_steps() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let _scheduler = couler.scheduler("canceller");
    let run = couler.submit(&token, &nap("long", "60"), json!({}));
    wait_until(LIMIT, || {
        step_statuses(&couler.run(&token, &run))
            .get("nap")
            .map(String::as_str)
            == Some("running")
    });
    let asked = Instant::now();
    let (status, body) = couler.call(
        Method::POST,
        &format!("/v1/runs/{run}/cancel"),
        &token,
        None,
    );
    assert_eq!(status, 200, "{body}");
    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "cancelled", "{done:#}");
    assert_eq!(step_statuses(&done)["nap"], "cancelled");
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "cancel took {:?}",
        asked.elapsed()
    );
}

/// The workflow's deadline: the running step fails with the reason, what
/// never started is cancelled, the exit handler runs seeing the run failed,
/// and the run fails saying why.
#[test]
fn a_run_past_its_deadline_fails_and_its_exit_handler_runs() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let _scheduler = couler.scheduler("deadline");
    let yaml = "apiVersion: couler.dev/v1alpha1\nname: late\ntimeout: 3s\nsteps:\n  - {name: nap, container: {image: alpine, command: [sleep, '60']}}\n  - {name: after, depends: [nap], container: {image: alpine, command: ['true']}}\nonExit:\n  - {name: report, when: [{input: '{{workflow.status}}', operator: eq, value: failed}], container: {image: alpine, command: ['true']}}\n";
    let run = couler.submit(&token, yaml, json!({}));
    let started = Instant::now();
    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "failed", "{done:#}");
    assert_eq!(done["message"], "deadline exceeded after 3s", "{done:#}");
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "the deadline took {:?}",
        started.elapsed()
    );
    let steps = step_statuses(&done);
    assert_eq!(steps["nap"], "failed", "{done:#}");
    assert_eq!(steps["after"], "cancelled", "{done:#}");
    assert_eq!(steps["report"], "succeeded", "{done:#}");
    let nap = (done["steps"].as_array().unwrap().iter())
        .find(|s| s["name"] == "nap")
        .unwrap();
    assert!(
        nap["message"]
            .as_str()
            .unwrap_or_default()
            .starts_with("deadline exceeded after 3s"),
        "{done:#}"
    );
}

#[test]
fn transient_failures_are_retried_and_retry_from_failure_keeps_finished_steps_and_instances() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let _scheduler = couler.scheduler("retrier");
    let scratch = couler.scratch("retry");
    let dir = scratch.path().display().to_string();

    // A step killed (as by the OOM killer) on its first attempt, retried with backoff.
    let flaky = format!(
        "apiVersion: couler.dev/v1alpha1\nname: flaky\nsteps:\n  - name: shaky\n    retry: {{limit: 3, on: transient, backoff: {{duration: 1s}}}}\n    container: {{image: alpine, command: [sh, -c, 'if [ ! -e {dir}/tried ]; then touch {dir}/tried; kill -9 $$; fi; echo ok']}}\n"
    );
    let run = couler.submit(&token, &flaky, json!({}));
    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "succeeded", "{done:#}");
    assert_eq!(done["steps"][0]["attempt"], 2, "{done:#}");

    // A user error fails the run; once fixed (its gate file written), retry
    // reruns only what failed.
    let fail_then_retry = |yaml: &str, gate: &str| {
        let run = couler.submit(&token, yaml, json!({}));
        let failed = couler.wait(&token, &run, LIMIT);
        assert_eq!(failed["status"], "failed", "{failed:#}");
        std::fs::write(scratch.path().join(gate), "").unwrap();
        let (status, body) =
            couler.call(Method::POST, &format!("/v1/runs/{run}/retry"), &token, None);
        assert_eq!(status, 200, "{body}");
        let done = couler.wait(&token, &run, LIMIT);
        assert_eq!(done["status"], "succeeded", "{done:#}");
        assert_eq!(done["attempt"], 2);
        for step in done["steps"].as_array().unwrap() {
            if step["status"] == "succeeded" {
                assert!(step["started_at"].is_string(), "{done:#}");
            }
        }
        (run, done)
    };
    let lines = |file: &str| -> Vec<String> {
        let text = std::fs::read_to_string(scratch.path().join(file)).unwrap();
        text.lines().map(str::to_owned).collect()
    };
    let gated = format!(
        "apiVersion: couler.dev/v1alpha1\nname: gated\nsteps:\n  - name: prepare\n    container: {{image: alpine, command: [sh, -c, 'echo prepare >> {dir}/log']}}\n  - name: gate\n    depends: [prepare]\n    container: {{image: alpine, command: [sh, -c, 'echo gate >> {dir}/log; if [ -e {dir}/open ]; then echo open; else echo closed; exit 1; fi']}}\n  - name: finish\n    depends: [gate]\n    container: {{image: alpine, command: [sh, -c, 'echo finish >> {dir}/log']}}\n"
    );
    let (run, _) = fail_then_retry(&gated, "open");
    assert_eq!(lines("log"), ["prepare", "gate", "gate", "finish"]);
    // The retry's logs do not replace those of the attempt that failed.
    let logs = |query: &str| {
        let (status, text) = couler.call(
            Method::GET,
            &format!("/v1/runs/{run}/logs?step=gate{query}"),
            &token,
            None,
        );
        assert_eq!(status, 200, "{text}");
        text.as_str().unwrap().trim().to_owned()
    };
    assert_eq!(logs(""), "open");
    assert_eq!(logs("&attempt=2"), "open");
    assert_eq!(logs("&attempt=1"), "closed");

    // A map whose instance `b` failed: `a`, finished, is kept.
    let fan = format!(
        "apiVersion: couler.dev/v1alpha1\nname: fan\nsteps:\n  - name: fan\n    cache: {{policy: 'off'}}\n    map: {{items: [a, b]}}\n    container: {{image: alpine, command: [sh, -c, 'echo {{{{item}}}} >> {dir}/fan; echo ran {{{{item}}}}; [ {{{{item}}}} = a ] || test -e {dir}/open-fan']}}\n"
    );
    let (_, done) = fail_then_retry(&fan, "open-fan");
    let mut ran = lines("fan");
    ran.sort();
    assert_eq!(ran, ["a", "b", "b"], "only the failed instance runs again");
    assert_eq!(
        step(&done, "fan")["outputs"]["result"],
        json!(["ran a", "ran b"]).to_string(),
        "{done:#}"
    );
    // The map step's logs are its instances'.
    let run = done["id"].as_str().unwrap();
    let (status, body) = couler.call(
        Method::GET,
        &format!("/v1/runs/{run}/logs?step=fan"),
        &token,
        None,
    );
    assert_eq!(status, 404, "{body}");
    assert!(
        body["detail"]
            .as_str()
            .unwrap()
            .contains("its instances have them, e.g. \"fan["),
        "{body}"
    );
    let (status, text) = couler.call(
        Method::GET,
        &format!("/v1/runs/{run}/logs?step=fan[0]"),
        &token,
        None,
    );
    assert_eq!(status, 200, "{text}");
}

#[test]
fn retry_runs_a_kept_producer_again_when_its_artifact_is_gone() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let _scheduler = couler.scheduler("regrow");
    let scratch = couler.scratch("regrow");
    let dir = scratch.path().display().to_string();
    let yaml = format!(
        "apiVersion: couler.dev/v1alpha1\nname: regrow\nsteps:\n  - name: produce\n    container: {{image: alpine, command: [sh, -c, 'echo produce >> {dir}/log; mkdir -p $(dirname {{{{outputs.artifacts.d.path}}}}); wc -l < {dir}/log > {{{{outputs.artifacts.d.path}}}}']}}\n    outputs: {{artifacts: [{{name: d, path: /tmp/o/d}}]}}\n  - name: consume\n    inputs: {{artifacts: [{{name: d, from: '{{{{steps.produce.outputs.artifacts.d}}}}', path: /tmp/i/d}}]}}\n    container: {{image: alpine, command: [sh, -c, 'test -e {dir}/open && cat {{{{inputs.artifacts.d.path}}}}']}}\n"
    );
    let run = couler.submit(&token, &yaml, json!({}));
    let failed = couler.wait(&token, &run, LIMIT);
    assert_eq!(failed["status"], "failed", "{failed:#}");
    // The kept step's artifact goes from the store behind the service's back.
    let location = step(&failed, "produce")["outputs"]["artifacts"]["d"]["location"]
        .as_str()
        .unwrap()
        .to_owned();
    std::fs::remove_file(location.strip_prefix("file://").unwrap()).unwrap();
    std::fs::write(scratch.path().join("open"), "").unwrap();
    let (status, body) = couler.call(Method::POST, &format!("/v1/runs/{run}/retry"), &token, None);
    assert_eq!(status, 200, "{body}");
    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "succeeded", "{done:#}");
    let log = std::fs::read_to_string(scratch.path().join("log")).unwrap();
    assert_eq!(log.lines().count(), 2, "produce ran again: {log}");
    // Its new result replaced the one whose artifact was gone.
    let produce = step(&done, "produce");
    assert_eq!(produce["status"], "succeeded", "{done:#}");
    let location = produce["outputs"]["artifacts"]["d"]["location"]
        .as_str()
        .unwrap();
    assert!(
        std::path::Path::new(location.strip_prefix("file://").unwrap()).exists(),
        "{done:#}"
    );
}

#[test]
fn a_stopping_scheduler_hands_its_runs_back_at_once() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let scratch = couler.scratch("handback");
    let marker = scratch.path().join("marker");
    let mut leaving = couler.scheduler_with("leaving", &[("COULER__SCHEDULER__LEASE_SECS", "600")]);
    let yaml = format!(
        "apiVersion: couler.dev/v1alpha1\nname: handback\nsteps:\n  - name: slow\n    container: {{image: alpine, command: [sh, -c, 'sleep 2; echo slow >> {}']}}\n",
        marker.display()
    );
    let run = couler.submit(&token, &yaml, json!({}));
    wait_until(LIMIT, || {
        step_statuses(&couler.run(&token, &run))
            .get("slow")
            .map(String::as_str)
            == Some("running")
    });
    // SIGTERM: stop claiming, hand the lease back, exit.
    let pid = leaving.0.id() as i32;
    assert!(signal(pid, "TERM"));
    let status = leaving.0.wait().unwrap();
    assert!(status.success(), "the scheduler exited with {status}");
    // With a 600 s lease, only a hand-back lets the next scheduler in this soon.
    let _next = couler.scheduler("next");
    let done = couler.wait(&token, &run, Duration::from_secs(30));
    assert_eq!(done["status"], "succeeded", "{done:#}");
    assert_eq!(std::fs::read_to_string(&marker).unwrap().lines().count(), 1);
}

fn signal(pid: i32, name: &str) -> bool {
    std::process::Command::new("kill")
        .arg(format!("-{name}"))
        .arg(pid.to_string())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_scheduler_reports_metrics() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let _scheduler = couler.scheduler_with(
        "measured",
        &[("COULER__SCHEDULER__METRICS_ADDR", addr.as_str())],
    );
    let run = couler.submit(&token, &nap("quick", "0"), json!({}));
    assert_eq!(couler.wait(&token, &run, LIMIT)["status"], "succeeded");
    let metrics = [
        "couler_runs_finished_total",
        "couler_steps_finished_total",
        "couler_claim_duration_seconds",
        "couler_queue_depth",
        // The cache sweep reports these once it reaches Redis, which it
        // retries each second from the scheduler's start.
        "couler_cache_bytes",
        "couler_cache_budget_bytes",
    ];
    // Well under the minute between sweeps that reached Redis.
    wait_until(Duration::from_secs(30), || {
        let text = couler
            .http
            .get(format!("http://{addr}/metrics"))
            .send()
            .unwrap()
            .text()
            .unwrap();
        let missing: Vec<_> = metrics.iter().filter(|m| !text.contains(**m)).collect();
        if !missing.is_empty() {
            eprintln!("{missing:?} not yet in /metrics");
        }
        missing.is_empty()
    });
}
