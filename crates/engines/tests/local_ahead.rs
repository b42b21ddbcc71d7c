//! Sandboxes started ahead (`local.sandbox.started_ahead`): a try handed
//! one sees exactly what a try that started its own sees, and neither
//! sees the other's.

#[allow(dead_code)]
mod contract;
mod local_setup;

use contract::{Report, plan, run};
use couler_engines::RunOutcome;
use local_setup::*;
use std::time::Duration;

/// A step that prints what its sandbox shows it, with its own work
/// directory written as WORK, and first what its sandbox's first process
/// runs as `argv[0]`.
const PROBE: &str = r#"
apiVersion: couler.dev/v1alpha1
name: probe
steps:
  - name: look
    container:
      image: x
      env: [{name: GREETING, value: "it's $HOME"}]
      command:
        - sh
        - -c
        - |
          W=$(pwd)
          tr '\0' '\n' < /proc/1/cmdline | head -1
          echo "uid $(id -u) groups $(id -G)"
          echo "root: $(touch /new 2>&1 | sed 's/.*: //')"
          echo "tmp: $(ls -A /tmp | wc -l) $(touch /tmp/x && echo writable)"
          echo "mnt: $(ls -A /mnt | wc -l) $(echo out > /mnt/out.txt && echo writable)"
          echo "work: $(ls -A | sort | tr '\n' ' ')"
          env | sort | sed "s|$COULER_RUN|RUN|g"
          awk '{print $5, $6}' /proc/self/mountinfo | sed "s|$W|WORK|g" | sort
          ls / | tr '\n' ' '
          ps -e -o comm= 2>/dev/null | sort | tr '\n' ' '
    # More than the platform's default (4 GiB), which a sandbox started
    # ahead has until it is handed out.
    resources: {memory: 8Gi, cpu: "2"}
    outputs:
      parameters:
        - {name: out, path: /mnt/out.txt}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_started_ahead_shows_a_try_what_its_own_would() {
    let (tmp, h) = setup("ahead");
    let engine = (h.engine)();
    let spec = h.run_spec("ahead");
    let cold = run(&*engine, &spec, plan(PROBE), vec![]).await;
    assert_eq!(cold.outcome, RunOutcome::Succeeded, "{cold:#?}");
    // The tenant has asked once: sandboxes are now started for it.
    let warm = warm_up(&*engine, &h).await;
    let (cold_out, warm_out) = (cold.result("look"), warm.result("look"));
    let (cold_first, cold_rest) = cold_out.split_once('\n').unwrap();
    let (_, warm_rest) = warm_out.split_once('\n').unwrap();
    assert!(cold_first.ends_with("/exit"), "{cold_first}");
    assert_eq!(
        warm_rest, cold_rest,
        "\n--- cold ---\n{cold_out}\n--- ahead ---\n{warm_out}"
    );
    assert!(
        warm_rest.contains("root: Read-only file system"),
        "{warm_out}"
    );
    assert!(warm_rest.contains("GREETING=it's $HOME"), "{warm_out}");
    assert_eq!(
        warm.last("look")
            .outputs
            .parameters
            .get("out")
            .map(String::as_str),
        Some("out")
    );
    // What bubblewrap's argv[0] named is gone once the try has ended.
    let aliases = data_dir(&tmp).join("sandboxes");
    let ended: Vec<_> = std::fs::read_dir(&aliases)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_symlink())
        .collect();
    assert!(ended.is_empty(), "{ended:?}");
}

/// Runs `PROBE` on `engine` until one of its tries is handed a sandbox
/// started ahead (the tenant has sandboxes ready from then on); its report.
async fn warm_up(engine: &dyn couler_engines::EngineAdapter, h: &contract::Harness) -> Report {
    for i in 0..50 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let r = run(
            engine,
            &h.run_spec(&format!("warm-{i}")),
            plan(PROBE),
            vec![],
        )
        .await;
        assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
        let argv0 = r.result("look").lines().next().unwrap_or("").to_owned();
        if argv0.contains("/sandboxes/") {
            return r;
        }
    }
    panic!("no try was handed a sandbox started ahead");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_engine_reattaches_a_try_running_in_a_sandbox_started_ahead() {
    let (_tmp, h) = setup("ahead-resume");
    let s = h.scratch("ahead-resume");
    let spec = h.run_spec("ahead-resume");
    let workflow = s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: resume
steps:
  - name: first
    container: {image: x, command: [sh, -c, "echo run >> @S@/first.count; tr '\\0' '\\n' < /proc/1/cmdline | head -1 > @S@/first.argv0; while [ ! -e @S@/go ]; do sleep 0.05; done; echo done-first"]}
  - name: second
    container: {image: x, command: [sh, -c, "echo second saw {{steps.first.outputs.result}}"]}
"#,
    );
    let engine = (h.engine)();
    warm_up(&*engine, &h).await;
    let mut started = engine
        .start(&spec, plan(&workflow), vec![])
        .await
        .expect("start");
    let seen = contract::watch(&mut started.updates, |st| {
        st.name == "first" && st.phase == couler_engines::StepPhase::Running
    })
    .await;
    contract::eventually("first to run", || s.path("first.argv0").exists()).await;
    let argv0 = std::fs::read_to_string(s.path("first.argv0")).unwrap();
    assert!(argv0.contains("/sandboxes/"), "{argv0}");
    drop(started);
    drop(engine);

    let resume = contract::last_states(seen);
    let engine = (h.engine)();
    let mut started = engine
        .start(&spec, plan(&workflow), resume)
        .await
        .expect("start again");
    std::fs::write(s.path("go"), b"").unwrap();
    let r = contract::finish(&mut started.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert!(
        r.of("first")
            .iter()
            .any(|st| st.message.as_deref() == Some("re-attached after a restart")),
        "{r:#?}"
    );
    assert_eq!(s.lines("first.count"), 1, "first ran twice");
    assert_eq!(r.result("second"), "second saw done-first");
}
