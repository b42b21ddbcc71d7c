//! The local engine: the shared contract, and what only an engine on this
//! machine can show (metrics, logs, files,
//! restarts, scheduling overhead).

#[macro_use]
mod contract;
mod local_setup;

use contract::{Harness, eventually, finish, plan, process_alive, run, watch};
use couler_engines::local::{LocalConfig, LocalEngine};
use couler_engines::{RunOutcome, StepPhase, Update};
use couler_optimizer::Plan;
use local_setup::*;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

contract_cases!(contract_setup);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_whole_contract_runs_on_one_engine() {
    let (_tmp, h) = setup("all");
    contract::run_all(&h).await;
}

// ---- examples ------------------------------------------------------------

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_report_metrics_and_logs() {
    let (_tmp, h) = setup("metrics");
    let engine = (h.engine)();
    let spec = h.run_spec("metrics");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: metrics
steps:
  - name: talk
    container: {image: x, command: [sh, -c, "echo out; echo err >&2; i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done"]}
  - name: fail
    depends: [talk]
    container: {image: x, command: [sh, -c, "echo bad >&2; exit 3"]}
"#,
    );
    let mut started = engine.start(&spec, plan, vec![]).await.unwrap();
    let r = finish(&mut started.updates, Vec::new()).await;
    let talk = r.last("talk");
    let metrics = talk.metrics.expect("metrics");
    assert_eq!(metrics.exit_code, Some(0));
    assert!(metrics.max_rss_kb > 0 && metrics.cpu_ms > 0, "{metrics:?}");
    assert!(metrics.wall_ms >= metrics.cpu_ms / 2, "{metrics:?}");
    assert_eq!(talk.logs.as_deref(), Some("out\n--- stderr ---\nerr\n"));
    assert_eq!(
        engine
            .logs(&spec, &started.engine_ref, "talk")
            .await
            .unwrap(),
        "out\n--- stderr ---\nerr\n"
    );
    let fail = r.last("fail");
    assert_eq!(fail.metrics.unwrap().exit_code, Some(3));
    assert_eq!(fail.message.as_deref(), Some("exit code 3: bad"));
    assert!(
        engine
            .logs(&spec, &started.engine_ref, "../x")
            .await
            .is_err()
    );
    assert!(engine.logs(&spec, "/etc", "talk").await.is_err());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn log_tails_are_bounded_but_results_are_not() {
    let (_tmp, h) = setup_with("tail", |c| c.log_tail_bytes = 10);
    let r = run(
        &*(h.engine)(),
        &h.run_spec("tail"),
        plan("apiVersion: couler.dev/v1alpha1\nname: t\nsteps:\n  - name: s\n    container: {image: x, command: [echo, 0123456789abcdefghij]}\n"),
        vec![],
    )
    .await;
    assert_eq!(r.last("s").logs.as_deref(), Some("bcdefghij\n"));
    assert_eq!(r.result("s"), "0123456789abcdefghij");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_loops_rerun_until_the_condition_fails() {
    let (_tmp, h) = setup("while");
    let s = h.scratch("while");
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: loop
steps:
  - name: count
    while: {condition: [{input: "{{steps.count.outputs.result}}", operator: lt, value: 3}], maxIterations: 10}
    container: {image: x, command: [sh, -c, "n=$(cat @S@/n 2>/dev/null || echo 0); n=$((n+1)); echo $n > @S@/n; echo $n"]}
  - name: capped
    while: {condition: [{input: "{{steps.capped.outputs.result}}", operator: lt, value: 100}], maxIterations: 2}
    container: {image: x, command: [echo, "1"]}
"#,
    ));
    let r = run(&*(h.engine)(), &h.run_spec("while"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    let count = r.last("count");
    assert_eq!((count.phase, count.attempt), (StepPhase::Succeeded, 3));
    assert_eq!(r.result("count"), "3");
    assert_eq!(count.message.as_deref(), Some("3 iterations"));
    let capped = r.last("capped");
    assert_eq!(capped.attempt, 2);
    assert!(
        capped.message.as_deref().unwrap().contains("maxIterations"),
        "{capped:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn training_jobs_run_once_as_rank_zero() {
    let (_tmp, h) = setup("job");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: job
steps:
  - name: train
    job:
      framework: pytorch
      image: pytorch
      command: [sh, -c, "echo $WORLD_SIZE $RANK"]
      replicas: {master: {count: 1}, worker: {count: 3}}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("job"), plan, vec![]).await;
    assert_eq!(r.result("train"), "1 0");
    let message = r.last("train").message.clone().unwrap_or_default();
    assert!(message.contains("collapsed to one process"), "{message}");
    assert!(message.contains("worker ×3"), "{message}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directory_artifacts_round_trip() {
    let (_tmp, h) = setup("dir-artifact");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: dirs
steps:
  - name: produce
    container: {image: x, command: [sh, -c, "d={{outputs.artifacts.model.path}}; mkdir -p $d/sub; echo A > $d/a.txt; echo B > $d/sub/b.txt"]}
    outputs: {artifacts: [{name: model, path: /model}]}
  - name: consume
    inputs: {artifacts: [{name: model, from: "{{steps.produce.outputs.artifacts.model}}", path: /model}]}
    container: {image: x, command: [sh, -c, "cat {{inputs.artifacts.model.path}}/a.txt {{inputs.artifacts.model.path}}/sub/b.txt"]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("dirs"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(
        r.last("produce")
            .outputs
            .artifacts
            .get("model")
            .unwrap()
            .size,
        4
    );
    assert_eq!(r.result("consume"), "A\nB");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parallelism_limits_hold() {
    let (_tmp, h) = setup("parallelism");
    let s = h.scratch("parallelism");
    // Two steps inside the critical section at once would fail on mkdir.
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: one-at-a-time
parallelism: 1
steps:
  - {name: a, container: {image: x, command: [sh, -c, "mkdir @S@/wf && sleep 0.1 && rmdir @S@/wf"]}}
  - {name: b, container: {image: x, command: [sh, -c, "mkdir @S@/wf && sleep 0.1 && rmdir @S@/wf"]}}
  - {name: c, container: {image: x, command: [sh, -c, "mkdir @S@/wf && sleep 0.1 && rmdir @S@/wf"]}}
"#,
    ));
    let r = run(&*(h.engine)(), &h.run_spec("wf-par"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");

    let plan = contract::plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: map-one-at-a-time
steps:
  - name: m
    map: {items: [1, 2, 3], parallelism: 1}
    container: {image: x, command: [sh, -c, "mkdir @S@/map && sleep 0.1 && rmdir @S@/map"]}
"#,
    ));
    let r = run(&*(h.engine)(), &h.run_spec("map-par"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");

    // And the engine-wide limit, across runs.
    let (_tmp, h) = setup_with("engine-slots", |c| c.max_parallel_steps = 1);
    let engine = (h.engine)();
    let plan = plan_two_racers(&h);
    let (one, two) = (h.run_spec("slots"), h.run_spec("slots"));
    let (a, b) = tokio::join!(
        run(&*engine, &one, plan.clone(), vec![]),
        run(&*engine, &two, plan, vec![]),
    );
    assert_eq!(
        (a.outcome, b.outcome),
        (RunOutcome::Succeeded, RunOutcome::Succeeded)
    );
}

fn plan_two_racers(h: &Harness) -> Arc<Plan> {
    plan(&h.scratch("racers").yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: racers
steps:
  - {name: a, container: {image: x, command: [sh, -c, "mkdir @S@/slot && sleep 0.1 && rmdir @S@/slot"]}}
  - {name: b, container: {image: x, command: [sh, -c, "mkdir @S@/slot && sleep 0.1 && rmdir @S@/slot"]}}
"#,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn conditions_compare_numbers_and_lists() {
    let (_tmp, h) = setup("conditions");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: conditions
steps:
  - {name: n, container: {image: x, command: [echo, "7"]}}
  - name: big
    depends: [n]
    when: [{input: "{{steps.n.outputs.result}}", operator: gt, value: 5}]
    container: {image: x, command: ["true"]}
  - name: small
    depends: [n]
    when: [{input: "{{steps.n.outputs.result}}", operator: lt, value: 5}]
    container: {image: x, command: ["true"]}
  - name: listed
    depends: [n]
    when: [{input: "{{steps.n.outputs.result}}", operator: in, values: [6, 7]}]
    container: {image: x, command: ["true"]}
  - name: unlisted
    depends: [n]
    when: [{input: "{{steps.n.outputs.result}}", operator: notin, values: [7]}]
    container: {image: x, command: ["true"]}
  - name: picky
    map: {items: [{name: a, keep: "yes"}, {name: b, keep: "no"}]}
    when: [{input: "{{item.keep}}", operator: eq, value: "yes"}]
    container: {image: x, command: [echo, "{{item.name}}"]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("cond"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    r.expect(&[
        ("big", StepPhase::Succeeded),
        ("small", StepPhase::Skipped),
        ("listed", StepPhase::Succeeded),
        ("unlisted", StepPhase::Skipped),
        ("picky[0]", StepPhase::Succeeded),
        ("picky[1]", StepPhase::Skipped),
        ("picky", StepPhase::Succeeded),
    ]);
    assert_eq!(
        r.last("small").message.as_deref(),
        Some(r#"condition not met: "7" lt "5""#)
    );
    assert_eq!(r.result("picky"), r#"["a"]"#);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_instance_fails_its_map_step() {
    let (_tmp, h) = setup("map-fail");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: map-fail
steps:
  - name: m
    map: {items: [1, 2]}
    container: {image: x, command: [sh, -c, "[ {{item}} -eq 2 ] && exit 1; echo ok"]}
  - {name: after, depends: [m], container: {image: x, command: ["true"]}}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("map-fail"), plan, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    r.expect(&[
        ("m[0]", StepPhase::Succeeded),
        ("m[1]", StepPhase::Failed),
        ("m", StepPhase::Failed),
        ("after", StepPhase::Cancelled),
    ]);
    assert_eq!(
        r.last("m").message.as_deref(),
        Some("instance `m[1]` failed: exit code 1")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_parameters_fall_back_to_their_default() {
    let (_tmp, h) = setup("defaults");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: defaults
steps:
  - name: lazy
    container: {image: x, command: ["true"]}
    outputs: {parameters: [{name: p, path: /p, default: fallback}]}
  - name: forgetful
    container: {image: x, command: ["true"]}
    outputs: {parameters: [{name: p, path: /p}]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("defaults"), plan, vec![]).await;
    assert_eq!(
        r.last("lazy").outputs.parameters.get("p").unwrap(),
        "fallback"
    );
    let forgetful = r.last("forgetful");
    assert_eq!(forgetful.phase, StepPhase::Failed);
    assert!(
        forgetful
            .message
            .as_deref()
            .unwrap()
            .contains("was not written"),
        "{forgetful:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steps_do_not_inherit_the_engine_environment() {
    let (_tmp, h) = setup("env");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: env
steps:
  - name: show-env
    container: {image: x, command: [env], env: [{name: GREETING, value: hi}]}
"#,
    );
    let r = run(&*(h.engine)(), &h.run_spec("env"), plan, vec![]).await;
    let env = r.result("show-env");
    assert!(
        env.contains("GREETING=hi") && env.contains("COULER_STEP=show-env"),
        "{env}"
    );
    assert!(env.contains("PATH="), "{env}");
    // cargo runs tests with CARGO_* set; none of it reaches the step.
    assert!(!env.contains("CARGO_"), "{env}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_engine_can_cancel_a_run_it_did_not_start() {
    let (_tmp, h) = setup("orphan-cancel");
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: orphan
steps:
  - {name: long, container: {image: x, command: [sleep, "60"]}}
  - {name: next, depends: [long], container: {image: x, command: ["true"]}}
"#,
    );
    let spec = h.run_spec("orphan");
    let engine = (h.engine)();
    let mut started = engine.start(&spec, plan.clone(), vec![]).await.unwrap();
    let seen = watch(&mut started.updates, |s| s.phase == StepPhase::Running).await;
    let try_dir = PathBuf::from(seen[0].engine_ref.clone().unwrap());
    let state: serde_json::Value =
        serde_json::from_slice(&fs::read(try_dir.join("state.json")).unwrap()).unwrap();
    let pid = state["pid"].as_i64().unwrap() as i32;
    drop(started);
    drop(engine);
    assert!(
        process_alive(pid),
        "dropping the engine leaves steps running"
    );

    let engine = (h.engine)();
    let run_ref = data_dir_of(&try_dir);
    engine.cancel(&spec, &run_ref).await.unwrap();
    eventually("the orphaned step to stop", || !process_alive(pid)).await;
    let r = run(&*engine, &spec, plan, seen).await;
    assert_eq!(r.outcome, RunOutcome::Cancelled, "{r:#?}");
    r.expect(&[
        ("long", StepPhase::Cancelled),
        ("next", StepPhase::Cancelled),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_handlers_can_fail_the_run_and_be_cancelled() {
    let (_tmp, h) = setup("exit-handlers");
    let engine = (h.engine)();
    let failing = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: failing-handler
steps:
  - {name: work, container: {image: x, command: ["true"]}}
onExit:
  - {name: notify, container: {image: x, command: [sh, -c, "exit 2"]}}
"#,
    );
    let r = run(&*engine, &h.run_spec("handler-fails"), failing, vec![]).await;
    assert_eq!(r.outcome, RunOutcome::Failed);
    assert_eq!(
        r.message.as_deref(),
        Some("exit handler step `notify` failed: exit code 2")
    );

    let slow = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: slow-handler
steps:
  - {name: work, container: {image: x, command: ["true"]}}
onExit:
  - {name: notify, container: {image: x, command: [sleep, "60"]}}
"#,
    );
    let spec = h.run_spec("handler-cancelled");
    let mut started = engine.start(&spec, slow, vec![]).await.unwrap();
    let seen = watch(&mut started.updates, |s| {
        s.name == "notify" && s.phase == StepPhase::Running
    })
    .await;
    engine.cancel(&spec, &started.engine_ref).await.unwrap();
    let r = finish(&mut started.updates, seen).await;
    assert_eq!(r.outcome, RunOutcome::Cancelled);
    r.expect(&[
        ("work", StepPhase::Succeeded),
        ("notify", StepPhase::Cancelled),
    ]);
}

/// The run directory of a try directory (`<run>/<step>/<try>`).
fn data_dir_of(try_dir: &Path) -> String {
    try_dir
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn starting_a_run_again_in_the_same_engine_takes_it_over() {
    let (_tmp, h) = setup("takeover");
    let s = h.scratch("takeover");
    let plan = plan(&s.yaml(
        r#"
apiVersion: couler.dev/v1alpha1
name: takeover
steps:
  - name: first
    container: {image: x, command: [sh, -c, "echo run >> @S@/count; while [ ! -e @S@/go ]; do sleep 0.05; done; echo done"]}
  - {name: second, container: {image: x, command: [echo, "{{steps.first.outputs.result}}"]}}
"#,
    ));
    let spec = h.run_spec("takeover");
    let engine = (h.engine)();
    let mut first = engine.start(&spec, plan.clone(), vec![]).await.unwrap();
    let seen = watch(&mut first.updates, |s| s.phase == StepPhase::Running).await;
    let mut second = engine.start(&spec, plan, seen).await.unwrap();
    fs::write(s.path("go"), b"").unwrap();
    let r = finish(&mut second.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.result("second"), "done");
    assert_eq!(s.lines("count"), 1);
    // The first driver stopped without reporting anything more.
    assert!(matches!(
        first.updates.recv().await,
        None | Some(Update::Step(_))
    ));
}

/// A try stopped by a driver that went away before its report was kept
/// (its run taken over in between) ends for the reason it was stopped,
/// not as a process lost while nobody watched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_outlives_the_driver_that_made_it() {
    let (_tmp, h) = setup("stopped");
    let plan = plan(
        "apiVersion: couler.dev/v1alpha1\nname: stopped\nsteps:\n  - name: nap\n    timeout: 1s\n    container: {image: x, command: [sleep, '30']}\n",
    );
    let spec = h.run_spec("stopped");
    let engine = (h.engine)();
    let mut first = engine.start(&spec, plan.clone(), vec![]).await.unwrap();
    let running = watch(&mut first.updates, |s| s.phase == StepPhase::Running).await;
    // The first driver stops the step for its timeout; that report is lost.
    watch(&mut first.updates, |s| s.phase == StepPhase::Failed).await;
    let mut second = engine.start(&spec, plan, running).await.unwrap();
    let r = finish(&mut second.updates, Vec::new()).await;
    assert_eq!(r.outcome, RunOutcome::Failed, "{r:#?}");
    let nap = r.last("nap");
    assert_eq!(nap.phase, StepPhase::Failed, "{r:#?}");
    assert_eq!(nap.message.as_deref(), Some("timed out after 1s"), "{r:#?}");
}

// ---- performance (printed, not asserted) ---------------------------------

fn chain(n: usize) -> String {
    let mut yaml = String::from("apiVersion: couler.dev/v1alpha1\nname: chain\nsteps:\n");
    for i in 0..n {
        yaml.push_str(&format!(
            "  - name: s{i}\n    container: {{image: x, command: [\"true\"]}}\n"
        ));
        if i > 0 {
            yaml.push_str(&format!("    depends: [s{}]\n", i - 1));
        }
    }
    yaml
}

/// The same wrapper the engine runs, spawned and awaited directly.
fn baseline(dir: &Path, n: usize) -> Duration {
    use std::os::unix::process::CommandExt;
    let exit = dir.join("exit");
    let t0 = Instant::now();
    for _ in 0..n {
        let status = std::process::Command::new("/bin/sh")
            .args([
                "-c",
                r#"f=$1; shift; "$@"; c=$?; echo $c >"$f"; exit $c"#,
                "couler-step",
            ])
            .arg(&exit)
            .arg("true")
            .env_clear()
            .process_group(0)
            .stdin(std::process::Stdio::null())
            .stdout(fs::File::create(dir.join("out")).unwrap())
            .stderr(fs::File::create(dir.join("err")).unwrap())
            .status()
            .unwrap();
        assert!(status.success());
    }
    t0.elapsed()
}

/// Prints the scheduling overhead: a run's wall time against the same
/// processes spawned and awaited directly, measured around it. With the
/// data directory on disk and, where there is one, on tmpfs: each step
/// creates a handful of files (directories, logs, state, exit status), so
/// a slow disk shows up here and not in the direct spawns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scheduling_overhead_per_step() {
    let (tmp, _) = setup("overhead");
    let shm = Path::new("/dev/shm");
    let mut places = vec![("disk", tmp.0.join("data"))];
    let ram = shm.is_dir().then(|| TempDir::under(shm, "overhead"));
    if let Some(ram) = &ram {
        places.push(("tmpfs", ram.0.clone()));
    }
    for (place, data) in places {
        let engine = LocalEngine::new(LocalConfig::new(&data));
        let dir = data.join("baseline");
        fs::create_dir_all(&dir).unwrap();
        for n in [10, 1000] {
            let plan = plan(&chain(n));
            let before = direct(&dir, n).await;
            let t0 = Instant::now();
            let spec = couler_engines::RunSpec::new(TENANT, format!("run_chain_{n}"), 1);
            let r = run(&engine, &spec, plan, vec![]).await;
            let total = t0.elapsed();
            let after = direct(&dir, n).await;
            assert_eq!(r.outcome, RunOutcome::Succeeded);
            let base = (before + after) / 2;
            let per_step = |d: Duration| d.as_secs_f64() * 1e6 / n as f64;
            println!(
                "{place}: chain of {n} `true` steps: run {:.1} ms; the same processes spawned directly {:.1} ms; scheduling overhead {:.0} µs/step",
                total.as_secs_f64() * 1e3,
                base.as_secs_f64() * 1e3,
                per_step(total.saturating_sub(base)),
            );
        }
    }
}

async fn direct(dir: &Path, n: usize) -> Duration {
    let dir = dir.to_owned();
    tokio::task::spawn_blocking(move || baseline(&dir, n))
        .await
        .unwrap()
}
