//! The Airflow adapter against a real `airflow standalone`
//! (`scripts/airflow-standalone`: SQLite, LocalExecutor, simple auth
//! manager): the diamond and coin-flip examples run through the REST API
//! with the BashOperator, a second start re-attaches, and cancel stops a
//! running step; then the cases of the shared contract suite that Airflow
//! can meet. Set `COULER_SKIP_AIRFLOW=1` to skip.

mod compile_support;
// Only the cases an Airflow run can meet are called (see below).
#[allow(dead_code)]
mod contract;

use contract::{Report, example, finish_within, plan, watch_within};
use couler_engines::airflow::{AirflowAdapter, AirflowConfig, Operator};
use couler_engines::{EngineAdapter, RunOutcome, RunSpec, StepPhase};
use couler_optimizer::Plan;
use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

const PASSWORD: &str = "couler-test";
/// Startup includes the one-time venv setup of `scripts/validate-airflow`.
const START_LIMIT: Duration = Duration::from_secs(240);
const RUN_LIMIT: Duration = Duration::from_secs(180);

/// A running `airflow standalone`; its whole process group dies on drop.
struct Airflow {
    child: Child,
    url: String,
    dags: PathBuf,
    dir: PathBuf,
}

impl Airflow {
    fn start() -> Airflow {
        let dir = std::env::temp_dir().join(format!("couler-airflow-run-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let dags = dir.join("dags");
        let mut child =
            Command::new(compile_support::repo_root().join("scripts/airflow-standalone"))
                .arg(dir.join("home"))
                .arg(port.to_string())
                .arg(&dags)
                .env("COULER_AIRFLOW_PASSWORD", PASSWORD)
                .env("COULER_AIRFLOW_DATA", dir.join("data"))
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .process_group(0)
                .spawn()
                .expect("scripts/airflow-standalone starts");
        let stdout = child.stdout.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if line.contains("ready on") {
                    let _ = tx.send(());
                }
            }
        });
        let airflow = Airflow {
            child,
            url: format!("http://127.0.0.1:{port}"),
            dags,
            dir,
        };
        if rx.recv_timeout(START_LIMIT).is_err() {
            let log = std::fs::read_to_string(airflow.dir.join("home/standalone.log"))
                .unwrap_or_default();
            let tail: String = log.lines().rev().take(40).collect::<Vec<_>>().join("\n");
            panic!(
                "airflow standalone did not become healthy in {START_LIMIT:?} (set COULER_SKIP_AIRFLOW=1 to skip); its log ends (newest first):\n{tail}"
            );
        }
        airflow
    }

    /// The BashOperator on this Airflow, its workers' data directory
    /// (`COULER_AIRFLOW_DATA`) seen from here too.
    fn config(&self) -> AirflowConfig {
        let mut config =
            AirflowConfig::new(&self.url, &self.dags, "couler", PASSWORD.to_owned().into());
        config.poll_ms = 300;
        config.operator = Operator::Bash;
        config.data_dir = Some(self.dir.join("data"));
        config
    }

    fn adapter(&self) -> Arc<dyn EngineAdapter> {
        Arc::new(AirflowAdapter::new(self.config()).expect("adapter"))
    }
}

impl Drop for Airflow {
    fn drop(&mut self) {
        let group = -(self.child.id() as i32);
        // SAFETY: signals to the process group we started.
        unsafe { libc::kill(group, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                break;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        // SAFETY: as above; stragglers of the group.
        unsafe { libc::kill(group, libc::SIGKILL) };
        let _ = self.child.wait();
        if std::thread::panicking() {
            eprintln!("kept {} for a look at Airflow's logs", self.dir.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

async fn run(engine: &dyn EngineAdapter, spec: &RunSpec, plan: Arc<Plan>) -> (String, Report) {
    let mut started = engine.start(spec, plan, vec![]).await.expect("start");
    let report = finish_within(RUN_LIMIT, &mut started.updates, Vec::new()).await;
    (started.engine_ref, report)
}

async fn diamond(engine: Arc<dyn EngineAdapter>) {
    let began = Instant::now();
    let spec = RunSpec::new("tnt_acme", "run_diamond", 1);
    let (engine_ref, r) = run(&*engine, &spec, example("diamond")).await;
    eprintln!("diamond finished in {:?}", began.elapsed());
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    for step in ["a", "b", "c", "d"] {
        assert_eq!(r.phase(step), StepPhase::Succeeded, "{:#?}", r.last(step));
        assert_eq!(
            r.of(step).len(),
            2,
            "{step}: running, then succeeded: {:#?}",
            r.steps
        );
    }
    // a, b and c are read downstream, so their results travel as XCom.
    assert_eq!(r.result("a"), "A says hello");
    assert_eq!(r.result("b"), "B got: A says hello");
    assert_eq!(r.result("c"), "C got: A says hello");
    let joined = "D joins: B got: A says hello / C got: A says hello";
    let tail = r.last("d").logs.as_deref().unwrap_or_default();
    assert!(tail.contains(joined), "d's log tail: {tail}");
    let logs = engine.logs(&spec, &engine_ref, "d").await.expect("logs");
    assert!(logs.contains(joined), "d's logs: {logs}");
    let position = |name: &str, phase| {
        r.steps
            .iter()
            .position(|s| s.name == name && s.phase == phase)
            .unwrap()
    };
    assert!(position("d", StepPhase::Running) > position("b", StepPhase::Succeeded));

    // A second start of the same attempt re-attaches to the finished run.
    let again = Instant::now();
    let (same_ref, r2) = run(&*engine, &spec, example("diamond")).await;
    eprintln!("diamond re-attached in {:?}", again.elapsed());
    assert_eq!(same_ref, engine_ref);
    assert_eq!(r2.outcome, RunOutcome::Succeeded, "{r2:#?}");
    assert_eq!(r2.result("b"), "B got: A says hello");
}

async fn coin_flip(engine: Arc<dyn EngineAdapter>) {
    let began = Instant::now();
    let spec = RunSpec::new("tnt_acme", "run_coin", 1);
    let (_, r) = run(&*engine, &spec, example("coin-flip")).await;
    eprintln!("coin-flip finished in {:?}", began.elapsed());
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    assert_eq!(r.phase("flip"), StepPhase::Succeeded);
    let side = r.result("flip").to_owned();
    let (ran, skipped) = match side.as_str() {
        "heads" => ("heads", "tails"),
        "tails" => ("tails", "heads"),
        other => panic!("flip said {other:?}: {r:#?}"),
    };
    assert_eq!(r.phase(ran), StepPhase::Succeeded, "{r:#?}");
    assert_eq!(r.phase(skipped), StepPhase::Skipped, "{r:#?}");
    assert_eq!(r.of(skipped).len(), 1, "a skipped step is reported once");
    let tail = r.last(ran).logs.as_deref().unwrap_or_default();
    assert!(tail.contains(&format!("it was {side}")), "{tail}");
    // Helper tasks are not steps.
    assert!(r.steps.iter().all(|s| !s.name.contains("__")), "{r:#?}");
}

async fn cancel(engine: Arc<dyn EngineAdapter>) {
    let plan = plan(
        r#"
apiVersion: couler.dev/v1alpha1
name: cancel-me
steps:
  - name: long
    container: {image: alpine, command: [sleep, "120"]}
  - name: next
    depends: [long]
    container: {image: alpine, command: ["true"]}
"#,
    );
    let spec = RunSpec::new("tnt_acme", "run_cancel", 1);
    let mut started = engine.start(&spec, plan, vec![]).await.expect("start");
    let seen = watch_within(RUN_LIMIT, &mut started.updates, |s| {
        s.name == "long" && s.phase == StepPhase::Running
    })
    .await;
    let asked = Instant::now();
    engine
        .cancel(&spec, &started.engine_ref)
        .await
        .expect("cancel");
    let r = finish_within(RUN_LIMIT, &mut started.updates, seen).await;
    eprintln!("cancel took effect in {:?}", asked.elapsed());
    assert!(
        asked.elapsed() < Duration::from_secs(30),
        "{:?}",
        asked.elapsed()
    );
    assert_eq!(r.outcome, RunOutcome::Cancelled, "{r:#?}");
    assert_eq!(r.message.as_deref(), Some("cancelled"));
    assert_eq!(r.phase("long"), StepPhase::Cancelled, "{r:#?}");
    assert_eq!(r.phase("next"), StepPhase::Cancelled, "{r:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn examples_run_on_a_real_airflow() {
    if std::env::var("COULER_SKIP_AIRFLOW").as_deref() == Ok("1") {
        eprintln!("COULER_SKIP_AIRFLOW=1: not starting airflow standalone");
        return;
    }
    let began = Instant::now();
    let airflow = tokio::task::spawn_blocking(Airflow::start).await.unwrap();
    eprintln!("airflow standalone healthy in {:?}", began.elapsed());
    let engine = airflow.adapter();
    assert_eq!(engine.name(), "airflow");
    let runs = Instant::now();
    tokio::join!(
        diamond(engine.clone()),
        coin_flip(engine.clone()),
        cancel(engine.clone())
    );
    eprintln!("all runs done in {:?}", runs.elapsed());

    // The contract, minus what Airflow cannot do: artifacts are files on
    // the worker without digests, exit handlers do not run after a cancel,
    // and `retry.on: transient` retries only OS errors of the BashOperator.
    let config = airflow.config();
    let h = contract::Harness {
        engine: Box::new(move || {
            Arc::new(AirflowAdapter::new(config.clone()).expect("adapter"))
                as Arc<dyn EngineAdapter>
        }),
        scratch_root: airflow.dir.join("scratch"),
        tenant: "tnt_contract".into(),
    };
    // One at a time: SQLite serializes Airflow's writes, and a scheduler
    // that meets a locked database for 5 s exits.
    let cases = Instant::now();
    contract::diamond_passes_outputs_along_edges(&h).await;
    contract::coin_flip_skips_exactly_one_branch(&h).await;
    contract::map_fans_out_and_aggregates(&h).await;
    contract::a_failing_step_fails_the_run(&h).await;
    contract::exit_handler_sees_the_workflow_status(&h).await;
    contract::timeout_kills_the_process_group(&h).await;
    contract::user_errors_are_not_retried_on_transient(&h).await;
    contract::reused_steps_are_not_executed(&h).await;
    contract::resume_reattaches_a_running_step(&h).await;
    contract::resume_finishes_a_step_that_ended_unwatched(&h).await;
    contract::secrets_reach_the_steps_that_read_them(&h).await;
    contract::a_running_steps_log_is_read_as_it_grows(&h).await;
    eprintln!("contract cases done in {:?}", cases.elapsed());
    // A finished run's secret files are gone from the workers' directory.
    let left = std::process::Command::new("find")
        .arg(airflow.dir.join("data"))
        .args(["-name", ".secrets"])
        .output()
        .expect("find runs");
    assert!(
        left.stdout.is_empty(),
        "secret files outlived their run: {}",
        String::from_utf8_lossy(&left.stdout)
    );
    drop(airflow);
}
