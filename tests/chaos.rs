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
    let scratch = tempdir::Dir::new("chaos-kill");
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

#[test]
fn several_schedulers_never_run_a_step_twice() {
    let couler = Couler::start();
    let (_, token) = couler.tenant("acme");
    let scratch = tempdir::Dir::new("chaos-many");
    let _a = couler.scheduler("alpha");
    let _b = couler.scheduler("beta");
    let _c = couler.scheduler("gamma");
    let mut runs = Vec::new();
    for i in 0..12 {
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
    let scratch = tempdir::Dir::new("chaos-pg");
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
