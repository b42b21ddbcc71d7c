//! Chaos: schedulers killed mid-run, several schedulers at once, and the
//! database dropping connections. Runs must finish, and no step that
//! succeeded may run again.

use couler_tests::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(120);

/// A chain whose steps append their name to `marker`, the middle one slowly.
fn chain(marker: &std::path::Path, nap: &str) -> String {
    let m = marker.display();
    format!(
        "apiVersion: couler.dev/v1alpha1\nname: chain\nsteps:\n  - name: first\n    container: {{image: alpine, command: [sh, -c, 'echo first >> {m}']}}\n  - name: slow\n    depends: [first]\n    container: {{image: alpine, command: [sh, -c, 'sleep {nap}; echo slow >> {m}']}}\n  - name: last\n    depends: [slow]\n    container: {{image: alpine, command: [sh, -c, 'echo last >> {m}']}}\n"
    )
}

fn counts(marker: &std::path::Path) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for line in std::fs::read_to_string(marker).unwrap_or_default().lines() {
        *counts.entry(line.to_owned()).or_default() += 1;
    }
    counts
}

#[test]
fn a_killed_scheduler_is_taken_over_without_rerunning_steps() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let scratch = couler.scratch("chaos-kill");
    let marker = scratch.path().join("marker");
    let mut first = couler.scheduler("doomed");
    let run = couler.submit(&token, &chain(&marker, "3"), json!({}));

    // Kill -9 the scheduler while `slow` runs.
    wait_until(LIMIT, || {
        step_statuses(&couler.run(&token, &run))
            .get("slow")
            .map(String::as_str)
            == Some("running")
    });
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let _second = couler.scheduler("survivor");

    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "succeeded", "{done:#}");
    let c = counts(&marker);
    assert_eq!(c.get("first"), Some(&1), "a finished step ran again: {c:?}");
    assert_eq!(
        c.get("slow"),
        Some(&1),
        "the running step was started twice: {c:?}"
    );
    assert_eq!(c.get("last"), Some(&1), "{c:?}");
}

/// `first` always runs (never cached) and says the same; `quick` and `slow`
/// read it, so a rerun looks them up in a stage of their own.
const CUT: &str = "apiVersion: couler.dev/v1alpha1
name: cut
parameters:
  - {name: marker}
steps:
  - name: first
    cache: {policy: off}
    container: {image: alpine, command: [sh, -c, 'echo ready']}
  - name: quick
    container:
      image: alpine
      command: [sh, -c, 'echo quick >> \"$M\"', '{{steps.first.outputs.result}}']
      env: [{name: M, value: '{{workflow.parameters.marker}}'}]
  - name: slow
    container:
      image: alpine
      command: [sh, -c, 'sleep 3; echo slow >> \"$M\"', '{{steps.first.outputs.result}}']
      env: [{name: M, value: '{{workflow.parameters.marker}}'}]
";

#[test]
fn a_killed_scheduler_is_taken_over_mid_stage_of_a_cut_run() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let scratch = couler.scratch("chaos-cut");
    let mut first = couler.scheduler("doomed");
    let marker = |n: u32| scratch.path().join(format!("marker-{n}"));
    let params = |n: u32| json!({"marker": marker(n).display().to_string()});
    let done = couler.wait(&token, &couler.submit(&token, CUT, params(1)), LIMIT);
    assert_eq!(done["status"], "succeeded", "{done:#}");

    // The rerun is cut after `first`; kill -9 the scheduler once `quick`
    // has finished (and was offered to the cache) while `slow` runs.
    let run = couler.submit(&token, CUT, params(2));
    wait_until(LIMIT, || {
        let steps = step_statuses(&couler.run(&token, &run));
        steps.get("quick").map(String::as_str) == Some("succeeded")
            && steps.get("slow").map(String::as_str) == Some("running")
    });
    first.0.kill().unwrap();
    first.0.wait().unwrap();
    let _second = couler.scheduler("survivor");

    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "succeeded", "{done:#}");
    let steps = step_statuses(&done);
    assert_eq!(steps["quick"], "succeeded", "{done:#}");
    assert_eq!(steps["slow"], "succeeded", "{done:#}");
    let c = counts(&marker(2));
    assert_eq!(c.get("quick"), Some(&1), "a finished step ran again: {c:?}");
    assert_eq!(
        c.get("slow"),
        Some(&1),
        "the running step started twice: {c:?}"
    );
    let (_, plan) = couler.call(
        reqwest::Method::GET,
        &format!("/v1/runs/{run}/plan"),
        &token,
        None,
    );
    assert_eq!(plan["parts"].as_array().map(Vec::len), Some(2), "{plan:#}");
    // The survivor re-attached to the stage as it was, without looking its
    // steps up again (that would count `quick`'s own fresh entry as a hit)
    // or offering `quick` again (a second miss). Both runs ran `quick` and
    // `slow`, so 4 misses; a miss counts as a step offers its result, off
    // the run's path, and the first scheduler may have died before
    // counting `quick`'s.
    let (_, stats) = couler.call(reqwest::Method::GET, "/v1/cache/stats", &token, None);
    assert_eq!(stats["hits"], 0, "{stats}");
    let misses = stats["misses"].as_u64().unwrap();
    assert!((3..=4).contains(&misses), "{stats}");
}

#[test]
fn several_schedulers_never_run_a_step_twice() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let scratch = couler.scratch("chaos-many");
    let _a = couler.scheduler("alpha");
    let _b = couler.scheduler("beta");
    let _c = couler.scheduler("gamma");
    let mut runs = Vec::new();
    for i in 0..SCHEDULES {
        let marker = scratch.path().join(format!("marker-{i}"));
        runs.push((
            couler.submit(&token, &chain(&marker, "0.2"), json!({})),
            marker,
        ));
    }
    for (run, marker) in &runs {
        let done = couler.wait(&token, run, LIMIT);
        assert_eq!(done["status"], "succeeded", "{done:#}");
        let c = counts(marker);
        assert!(
            c.values().all(|n| *n == 1) && c.len() == 3,
            "run {run}: {c:?}"
        );
    }
}

#[test]
fn a_dropped_database_connection_is_survived() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let scratch = couler.scratch("chaos-pg");
    let marker = scratch.path().join("marker");
    let _scheduler = couler.scheduler("steady");
    let run = couler.submit(&token, &chain(&marker, "2"), json!({}));
    wait_until(LIMIT, || {
        step_statuses(&couler.run(&token, &run))
            .get("slow")
            .map(String::as_str)
            == Some("running")
    });
    // Cut every connection to the test database, the scheduler's included.
    let status = std::process::Command::new("psql")
        .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc"])
        .arg(format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{}' AND pid <> pg_backend_pid()",
            couler.database
        ))
        .status()
        .unwrap();
    assert!(status.success());
    let done = couler.wait(&token, &run, LIMIT);
    assert_eq!(done["status"], "succeeded", "{done:#}");
    assert_eq!(counts(&marker).get("slow"), Some(&1));
}

/// One value (or rows, `|`-separated) of a query on the test's database.
fn sql(couler: &Couler, query: &str) -> String {
    let out = std::process::Command::new("psql")
        .args([
            "-h",
            "127.0.0.1",
            "-U",
            "postgres",
            "-d",
            &couler.database,
            "-tAqc",
            query,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{query}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

const SCHEDULES: usize = 20;

/// Schedules firing every minute, hours behind (as after an outage),
/// caught up (`all`) by three schedulers that are killed with SIGKILL and
/// restarted again and again, after one that dies right before committing
/// its first pass: every instant runs exactly once, none is lost.
#[test]
fn killed_tickers_neither_lose_nor_double_a_tick() {
    let couler = Couler::start();
    // One run at a time executes: the point is creating them, not running them.
    let (_, token) = couler.tenant_with(
        "acme",
        json!({"quotas": {"max_concurrent_runs": 1, "max_queued_runs": 100000, "requests_per_second": 10000}}),
    );
    let ir = json!({"apiVersion": "couler.dev/v1alpha1", "name": "tick",
                    "steps": [{"name": "a", "container": {"image": "alpine", "command": ["true"]}}]});
    let (status, body) = couler.call(reqwest::Method::POST, "/v1/workflows", &token, Some(ir));
    assert_eq!(status, 201, "{body}");
    for i in 0..SCHEDULES {
        let schedule = json!({"slug": format!("s{i}"), "crons": ["* * * * *"], "catchup": "all",
                              "catchup_window_secs": 14400, "max_catchup": 1000, "overlap": "allow"});
        let (status, body) = couler.call(
            reqwest::Method::POST,
            "/v1/workflows/tick/schedules",
            &token,
            Some(schedule),
        );
        assert_eq!(status, 201, "{body}");
    }
    // Two hours behind: 121 due ticks each, at most 16 per schedule a
    // pass, so the catch-up takes many passes for the kills to land in.
    sql(
        &couler,
        "UPDATE schedules SET next_tick = date_trunc('minute', now()) - interval '120 minutes',
                              due_at = date_trunc('minute', now()) - interval '120 minutes'",
    );

    // Dies right before committing the runs it made: none of them exist.
    let mut doomed =
        couler.scheduler_with("doomed", &[("COULER_FAILPOINT", "ticker_before_commit")]);
    let exit = doomed.0.wait().unwrap();
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        exit.signal(),
        Some(libc::SIGABRT),
        "the failpoint did not fire: {exit:?}"
    );
    assert_eq!(
        sql(&couler, "SELECT count(*) FROM runs"),
        "0",
        "a rolled-back pass left runs"
    );
    assert_eq!(sql(&couler, "SELECT count(*) FROM schedule_ticks"), "0");

    let names = ["alpha", "beta", "gamma"];
    let mut schedulers: Vec<Proc> = names.iter().map(|n| couler.scheduler(n)).collect();
    let start = std::time::Instant::now();
    let behind = || {
        sql(
            &couler,
            "SELECT count(*) FROM schedules WHERE due_at <= now() - interval '5 seconds'",
        )
    };
    let (mut kills, mut mid_catch_up) = (0, 0);
    while start.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(300 + (kills % 4) * 300));
        let victim = (kills as usize * 7 + 1) % schedulers.len();
        schedulers[victim].0.kill().unwrap();
        schedulers[victim].0.wait().unwrap();
        kills += 1;
        schedulers[victim] = couler.scheduler(names[victim]);
        if behind() == "0" {
            if kills >= 6 {
                break;
            }
        } else {
            mid_catch_up += 1;
        }
    }
    assert!(kills >= 6, "too few kills: {kills}");
    assert!(
        mid_catch_up >= 2,
        "the kills came after the catch-up: {mid_catch_up} of {kills}"
    );
    wait_until(LIMIT, || {
        sql(
            &couler,
            "SELECT count(*) FROM schedules WHERE due_at <= now() - interval '5 seconds'",
        ) == "0"
    });
    drop(schedulers);

    let doubled = sql(
        &couler,
        "SELECT count(*) FROM (SELECT 1 FROM runs WHERE trigger_id IS NOT NULL
                               GROUP BY trigger_id, scheduled_for HAVING count(*) > 1) d",
    );
    assert_eq!(doubled, "0", "an instant ran twice");
    // Per schedule: its runs are exactly the minutes from the outage's
    // start up to its next tick, each recorded once as fired.
    let report = sql(
        &couler,
        "SELECT s.slug,
                (SELECT count(*) FROM runs r WHERE r.trigger_id = s.id),
                (SELECT count(*) FROM schedule_ticks t WHERE t.slug = s.slug AND t.outcome = 'fired'),
                (SELECT count(*) FROM schedule_ticks t WHERE t.slug = s.slug AND t.outcome <> 'fired'),
                extract(epoch FROM s.next_tick - (SELECT min(r.scheduled_for) FROM runs r WHERE r.trigger_id = s.id))::bigint / 60,
                (SELECT count(DISTINCT r.scheduled_for) FROM runs r WHERE r.trigger_id = s.id
                  AND extract(second FROM r.scheduled_for) = 0)
         FROM schedules s ORDER BY s.slug",
    );
    for line in report.lines() {
        let f: Vec<i64> = line
            .split('|')
            .skip(1)
            .map(|x| x.parse().unwrap())
            .collect();
        let (runs, fired, other, minutes, whole) = (f[0], f[1], f[2], f[3], f[4]);
        assert!(runs >= 121, "{line}: ticks lost");
        assert_eq!(
            (runs, fired, other),
            (minutes, minutes, 0),
            "{line}: lost or extra ticks"
        );
        assert_eq!(whole, runs, "{line}");
    }
    assert_eq!(report.lines().count(), SCHEDULES);
}
