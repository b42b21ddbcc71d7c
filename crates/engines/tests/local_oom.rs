//! The local engine's memory limits: a step over its `resources.memory` is
//! killed as OOMKilled, and retried with more memory (up to a bound) when
//! its retry policy allows, across a scheduler restart too.

#[allow(dead_code)]
mod contract;
mod local_setup;

use contract::{finish, plan, run, watch};
use couler_engines::{RunOutcome, StepPhase, StepState};
use local_setup::*;
use std::collections::BTreeMap;

/// A Python step that fills and touches `mib` MiB, holds them for half a
/// second (several memory samples) and prints how many it held. `spec`
/// goes into the step: resources and retry policy.
fn hog(spec: &str, mib: u32) -> String {
    format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: oom
steps:
  - name: hog
{spec}
    script:
      image: python
      command: [python3]
      source: |
        import time
        block = b"x" * ({mib} << 20)
        time.sleep(0.5)
        print(len(block) >> 20)
"#
    )
}

/// The retry notes ("attempt N failed (…); retrying …") of a step.
fn retry_notes<'a>(steps: &[&'a StepState]) -> Vec<&'a str> {
    steps
        .iter()
        .filter_map(|s| s.message.as_deref())
        .filter(|m| m.starts_with("attempt "))
        .collect()
}

/// Asserts a retry note after an out-of-memory kill at `limit`, naming
/// the next try's memory.
fn assert_oom_retry(note: &str, attempt: u32, limit: &str, next: &str) {
    let prefix = format!("attempt {attempt} failed (OOMKilled: the step used ");
    let suffix =
        format!(", over its memory limit of {limit}); retrying in 0s with {next} of memory");
    assert!(
        note.starts_with(&prefix) && note.ends_with(&suffix),
        "{note:?} is not {prefix:?}…{suffix:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oom_killed_step_is_retried_with_twice_the_memory_until_it_fits() {
    let (_tmp, h) = setup("oom-retry");
    let spec = "    resources: {memory: 64Mi}\n    retry: {limit: 3}";
    let r = run(
        &*(h.engine)(),
        &h.run_spec("oom-retry"),
        plan(&hog(spec, 150)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let last = r.last("hog");
    assert_eq!((last.phase, last.attempt), (StepPhase::Succeeded, 3));
    assert_eq!(r.result("hog"), "150");
    let notes = retry_notes(&r.of("hog"));
    assert_eq!(notes.len(), 2, "{notes:#?}");
    assert_oom_retry(notes[0], 1, "64 MiB", "128 MiB");
    assert_oom_retry(notes[1], 2, "128 MiB", "256 MiB");
    let raised: Vec<_> = r
        .of("hog")
        .iter()
        .filter(|s| s.phase == StepPhase::Running)
        .filter_map(|s| Some((s.attempt, s.message.as_deref()?)))
        .filter(|(_, m)| m.contains("memory limit raised"))
        .collect();
    assert_eq!(
        raised,
        [
            (2, "retry 1; memory limit raised to 128 MiB"),
            (3, "retry 2; memory limit raised to 256 MiB"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oom_killed_step_without_retries_fails_naming_its_limit() {
    let (_tmp, h) = setup("oom-fail");
    let spec = "    resources: {memory: 64Mi}";
    let r = run(
        &*(h.engine)(),
        &h.run_spec("oom-fail"),
        plan(&hog(spec, 150)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Failed, "{r:#?}");
    let last = r.last("hog");
    assert_eq!((last.phase, last.attempt), (StepPhase::Failed, 1));
    let message = last.message.as_deref().unwrap_or_default();
    assert!(
        message.starts_with("OOMKilled: the step used ")
            && message.ends_with(", over its memory limit of 64 MiB"),
        "{message}"
    );
    assert_eq!(last.metrics.expect("metrics").exit_code, None);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_under_their_limit_or_without_one_are_left_alone() {
    let (_tmp, h) = setup("oom-none");
    let engine = (h.engine)();
    let under = "    resources: {memory: 256Mi}\n    retry: {limit: 3}";
    let r = run(
        &*engine,
        &h.run_spec("oom-under"),
        plan(&hog(under, 50)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.last("hog").attempt, 1, "{r:#?}");
    assert_eq!(r.result("hog"), "50");

    // No request: no limit, and the peak is still measured.
    let unlimited = "    retry: {limit: 3}";
    let r = run(
        &*engine,
        &h.run_spec("oom-unlimited"),
        plan(&hog(unlimited, 150)),
        vec![],
    )
    .await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let last = r.last("hog");
    assert_eq!(last.attempt, 1, "{r:#?}");
    let peak_kb = last.metrics.expect("metrics").max_rss_kb;
    assert!(peak_kb >= 150 * 1024, "peak {peak_kb} KiB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raised_limit_survives_a_scheduler_restart() {
    let (_tmp, h) = setup("oom-restart");
    let s = h.scratch("oom-restart");
    let spec = h.run_spec("oom-restart");
    // The second run waits for `go`, so that it is running when the
    // scheduler goes away; every run then fills 150 MiB.
    let yaml = s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: oom-restart
steps:
  - name: hog
    resources: {memory: 64Mi}
    retry: {limit: 3, on: transient}
    script:
      image: python
      command: [python3]
      source: |
        import os, time
        with open("@S@/runs", "a") as f:
            f.write("run\n")
        runs = len(open("@S@/runs").read().splitlines())
        while runs == 2 and not os.path.exists("@S@/go"):
            time.sleep(0.02)
        block = b"x" * (150 << 20)
        time.sleep(0.5)
        print(runs)
"#,
    );
    let engine = (h.engine)();
    let mut started = engine
        .start(&spec, plan(&yaml), vec![])
        .await
        .expect("start");
    let seen = watch(&mut started.updates, |s| {
        s.phase == StepPhase::Running && s.attempt == 2
    })
    .await;
    drop(started);
    drop(engine);
    let mut last = BTreeMap::new();
    for state in seen {
        last.insert(state.name.clone(), state);
    }

    let engine = (h.engine)();
    let mut started = engine
        .start(&spec, plan(&yaml), last.into_values().collect())
        .await
        .expect("start again");
    std::fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut started.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let hog = r.of("hog");
    assert!(
        hog.iter()
            .any(|s| s.attempt == 2 && s.message.as_deref() == Some("re-attached after a restart")),
        "{hog:#?}"
    );
    // The re-attached try kept its 128 MiB, and the next one doubled it.
    let notes = retry_notes(&hog);
    assert_eq!(notes.len(), 1, "{notes:#?}");
    assert_oom_retry(notes[0], 2, "128 MiB", "256 MiB");
    let last = r.last("hog");
    assert_eq!((last.phase, last.attempt), (StepPhase::Succeeded, 3));
    assert_eq!(r.result("hog"), "3");
    assert_eq!(s.lines("runs"), 3);
}
