//! Workflows the offline planner writes, run for real on the local engine:
//! the built-in templates' Python (pandas, scikit-learn) loads, checks,
//! cleans and featurises a small CSV, trains models, picks the best and
//! writes a report, and a fan-out with a `when` is judged on real scores.
//!
//! The steps run the first `python3` on PATH; `scripts/nl-steps-env` sets
//! up a venv with the templates' pinned packages, and the test puts its
//! bin directory first on PATH so nothing is installed into the machine's
//! Python. With `COULER_SKIP_NL_RUN=1` the test says it was skipped;
//! otherwise a venv that cannot be set up fails it.

use couler_engines::local::{HostMount, LocalConfig, LocalEngine};
use couler_engines::{EngineAdapter, RunOutcome, RunSpec, StepPhase, StepState, Update};
use couler_ir::Workflow;
use couler_nl::offline::{OfflinePlanner, PlanOptions};
use couler_nl::safety::ImagePolicy;
use couler_optimizer::{ArtifactRef, Facts, Pipeline};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::{Duration, Instant};

const SKIP_VAR: &str = "COULER_SKIP_NL_RUN";
/// Generous: a cold pip cache and a busy two-core machine.
const RUN_LIMIT: Duration = Duration::from_secs(600);
const TENANT: &str = "tnt_nl";
/// Rows of the generated table, before the one duplicate row.
const ROWS: usize = 200;

// One test function on purpose: the engine hands its own PATH to the steps
// (LocalConfig has no environment setting), so the test sets the process's
// PATH before the engine starts, and no other test thread may read the
// environment meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_workflows_run_on_the_local_engine() {
    if std::env::var(SKIP_VAR).as_deref() == Ok("1") {
        eprintln!("generated_workflows_run_on_the_local_engine: skipped ({SKIP_VAR}=1)");
        return;
    }
    let python = put_steps_python_first_on_path();
    let tmp = TempDir::new("nl-run-local");
    let data = tmp.0.join("data");
    std::fs::create_dir_all(&data).unwrap();
    let csv = data.join("patients.csv");
    std::fs::write(&csv, classification_csv()).unwrap();
    let mut config = LocalConfig::new(tmp.0.join("engine"));
    // Steps see the dataset and the Python installation, read only, as a
    // platform lists them in `local.mounts`; nothing else of the host's.
    let system = python.base.starts_with("/usr");
    config.sandbox.mounts = [
        Some(data),
        Some(python.venv),
        (!system).then_some(python.base),
    ]
    .into_iter()
    .flatten()
    .map(|path| HostMount {
        path,
        writable: false,
    })
    .collect();
    let engine = LocalEngine::new(config);

    three_models_in_parallel(&engine, &csv).await;
    a_fan_out_and_a_condition(&engine, &csv).await;
    literal_steps(&engine).await;
}

/// Steps whose words are their command ("print 'hello world'", "sleep for
/// 1 second") run as they are, with no template to fill in.
async fn literal_steps(engine: &LocalEngine) {
    let workflow = draft("print 'hello world', then sleep for 1 second, then print done");
    let names: Vec<&str> = workflow.steps.iter().map(|s| s.name.as_str()).collect();
    let run = run_on(engine, "run_literal", workflow.clone()).await;
    run.all_succeeded(&names);
    assert_eq!(names.len(), 3, "{names:?}");
}

/// load → quality check → clean → features → three models → evaluate →
/// keep the best → report.
async fn three_models_in_parallel(engine: &LocalEngine, csv: &Path) {
    let description = format!(
        "Load the data from {}, check data quality, clean it, engineer features, train a \
         random forest, an SVM and a logistic regression in parallel, evaluate them, keep \
         the best and write a report",
        csv.display()
    );
    let run = run_on(engine, "run_three", draft(&description)).await;
    run.all_succeeded(&[
        "load-data",
        "check-data-quality",
        "clean",
        "engineer-features",
        "train-random-forest",
        "train-svm",
        "train-logistic-regression",
        "evaluate",
        "keep-best",
        "write-report",
    ]);
    assert_eq!(run.parameter("check-data-quality", "status"), "pass");

    let cleaned = read_artifact(run.artifact("clean", "data"));
    let mut lines = cleaned.lines();
    assert_eq!(lines.next(), Some("x1,x2,x3,noise,label"), "{cleaned}");
    let rows: Vec<&str> = lines.collect();
    assert_eq!(rows.len(), ROWS, "the duplicate row is dropped");
    assert!(
        rows.iter().all(|r| !r.split(',').any(str::is_empty)),
        "{cleaned}"
    );
    let features = read_artifact(run.artifact("engineer-features", "data"));
    assert!(
        features.lines().next().unwrap().contains("x1_lag1"),
        "{features}"
    );

    let trained = [
        "train-random-forest",
        "train-svm",
        "train-logistic-regression",
    ];
    let scores: BTreeMap<String, f64> =
        serde_json::from_str(&run.parameter("evaluate", "scores")).unwrap();
    let mut expected = trained.to_vec();
    expected.sort_unstable();
    assert_eq!(
        scores.keys().map(String::as_str).collect::<Vec<_>>(),
        expected
    );
    for (model, score) in &scores {
        assert_eq!(
            *score,
            unit_score(&run.parameter(model, "score")),
            "{model}"
        );
    }
    let best = run.parameter("keep-best", "best");
    assert!(trained.contains(&best.as_str()), "best is {best:?}");
    let best_score = unit_score(&run.parameter("keep-best", "best_score"));
    assert_eq!(best_score, scores.values().copied().fold(0.0, f64::max));
    // The label is a plain threshold of two columns: learnable.
    assert!(best_score >= 0.8, "the best model scored {best_score}");

    let report = read_artifact(run.artifact("write-report", "report"));
    assert!(
        report.contains(&format!("Best model: **{best}**")),
        "{report}"
    );
    for model in trained {
        assert!(report.contains(&format!("| {model} |")), "{report}");
    }
}

/// One model over three settings (a `map`), and a report that only runs
/// if the best score clears a bar (a `when`).
async fn a_fan_out_and_a_condition(engine: &LocalEngine, csv: &Path) {
    let description = format!(
        "Load the data from {}, train a random forest with n_estimators 10, 50 and 100, \
         evaluate the models, keep the best, and if its accuracy is above 0.5 write a report",
        csv.display()
    );
    let workflow = draft(&description);
    let step = |name: &str| workflow.steps.iter().find(|s| s.name == name).unwrap();
    assert!(step("train-random-forest").map.is_some(), "no fan-out");
    assert!(
        !step("write-report").when.is_empty(),
        "no condition on the report"
    );
    let run = run_on(engine, "run_fan_out", workflow).await;
    run.all_succeeded(&[
        "load-data",
        "train-random-forest[0]",
        "train-random-forest[1]",
        "train-random-forest[2]",
        "train-random-forest",
        "evaluate-models",
        "keep-best",
        "write-report",
    ]);
    let scores: BTreeMap<String, f64> =
        serde_json::from_str(&run.parameter("evaluate-models", "scores")).unwrap();
    let instances: Vec<String> = (0..3)
        .map(|i| format!("train-random-forest[{i}]"))
        .collect();
    assert_eq!(
        scores.keys().collect::<Vec<_>>(),
        instances.iter().collect::<Vec<_>>()
    );
    for (instance, score) in &scores {
        assert_eq!(
            *score,
            unit_score(&run.parameter(instance, "score")),
            "{instance}"
        );
    }
    // Each instance trained with its own value.
    for (instance, trees) in instances.iter().zip([10, 50, 100]) {
        let chosen: serde_json::Value =
            serde_json::from_str(&run.parameter(instance, "hyperparameters")).unwrap();
        assert_eq!(chosen["n_estimators"], trees, "{instance}: {chosen}");
    }
    let best = run.parameter("keep-best", "best");
    assert!(instances.contains(&best), "best is {best:?}");
    let best_score = unit_score(&run.parameter("keep-best", "best_score"));
    assert!(
        best_score > 0.5,
        "the report ran with a best score of {best_score}"
    );
    let report = read_artifact(run.artifact("write-report", "report"));
    assert!(
        report.contains(&format!("Best model: **{best}**")),
        "{report}"
    );
}

/// The offline planner's workflow for `description`.
fn draft(description: &str) -> Workflow {
    let options = PlanOptions {
        name: None,
        images: ImagePolicy::default(),
    };
    OfflinePlanner::default()
        .plan(description, &options)
        .unwrap_or_else(|e| panic!("the planner refused {description:?}: {e}"))
        .workflow
}

/// Runs `workflow` on `engine`, collecting every update until the run
/// ends, which must be a success.
async fn run_on(engine: &LocalEngine, run_id: &str, workflow: Workflow) -> Report {
    let plan = Pipeline::default()
        .plan(workflow, &Facts::default(), |_, f| f())
        .expect("the optimizer plans the draft");
    let spec = RunSpec::new(TENANT, run_id, 1);
    let started = Instant::now();
    let mut running = engine
        .start(&spec, Arc::new(plan), vec![])
        .await
        .expect("the local engine starts the run");
    let mut steps = Vec::new();
    loop {
        let left = RUN_LIMIT.saturating_sub(started.elapsed());
        match tokio::time::timeout(left, running.updates.recv()).await {
            Ok(Some(Update::Step(s))) => steps.push(s),
            Ok(Some(Update::Finished { outcome, message })) => {
                eprintln!("{run_id}: {outcome:?} in {:.1?}", started.elapsed());
                let report = Report {
                    steps,
                    outcome,
                    message,
                };
                assert_eq!(report.outcome, RunOutcome::Succeeded, "{report}");
                return report;
            }
            Ok(None) => panic!("{run_id}: updates ended before the run did"),
            Err(_) => panic!("{run_id}: not finished within {RUN_LIMIT:?}"),
        }
    }
}

/// Every update of one run.
struct Report {
    steps: Vec<StepState>,
    outcome: RunOutcome,
    message: Option<String>,
}

impl Report {
    fn last(&self, step: &str) -> &StepState {
        self.steps
            .iter()
            .rev()
            .find(|s| s.name == step)
            .unwrap_or_else(|| panic!("no update about {step}:\n{self}"))
    }

    fn all_succeeded(&self, steps: &[&str]) {
        for step in steps {
            assert_eq!(
                self.last(step).phase,
                StepPhase::Succeeded,
                "{step}:\n{self}"
            );
        }
    }

    fn parameter(&self, step: &str, name: &str) -> String {
        let outputs = &self.last(step).outputs;
        outputs
            .parameters
            .get(name)
            .unwrap_or_else(|| panic!("{step} has no output parameter {name}: {outputs:?}"))
            .trim()
            .to_owned()
    }

    fn artifact(&self, step: &str, name: &str) -> &ArtifactRef {
        let outputs = &self.last(step).outputs;
        outputs
            .artifacts
            .get(name)
            .unwrap_or_else(|| panic!("{step} has no output artifact {name}: {outputs:?}"))
    }
}

/// The outcome, then each step's last state with the logs of those that
/// did not succeed.
impl std::fmt::Display for Report {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "run {:?}: {}",
            self.outcome,
            self.message.as_deref().unwrap_or("")
        )?;
        let mut last: BTreeMap<&str, &StepState> = BTreeMap::new();
        for s in &self.steps {
            last.insert(&s.name, s);
        }
        for (name, s) in last {
            let message = s.message.as_deref().unwrap_or("");
            writeln!(f, "  {name}: {:?} {message}", s.phase)?;
            if s.phase != StepPhase::Succeeded {
                writeln!(f, "{}", s.logs.as_deref().unwrap_or("(no logs)"))?;
            }
        }
        Ok(())
    }
}

/// Sets up the venv and puts its bin directory first on this process's
/// PATH, which the engine passes on to its steps.
/// Where the steps' Python lives: the venv and the installation it was
/// made from.
struct Python {
    venv: PathBuf,
    base: PathBuf,
}

fn put_steps_python_first_on_path() -> Python {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let out = Command::new(root.join("scripts/nl-steps-env"))
        .output()
        .expect("run scripts/nl-steps-env");
    assert!(
        out.status.success(),
        "scripts/nl-steps-env failed (needs python3 and PyPI; set {SKIP_VAR}=1 to skip):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bin = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert!(
        bin.join("python3").is_file(),
        "no python3 in {}",
        bin.display()
    );
    let path = std::env::var_os("PATH").unwrap_or_default();
    let path =
        std::env::join_paths(std::iter::once(bin.clone()).chain(std::env::split_paths(&path)))
            .expect("PATH entries join");
    // SAFETY: this binary's only test, before any engine or step starts;
    // no other thread reads the environment yet.
    unsafe { std::env::set_var("PATH", path) };
    let base = Command::new(bin.join("python3"))
        .args(["-c", "import sys; print(sys.base_prefix)"])
        .output()
        .expect("the venv's python runs");
    Python {
        venv: bin.parent().expect("venv/bin").to_owned(),
        base: PathBuf::from(String::from_utf8(base.stdout).unwrap().trim()),
    }
}

/// `ROWS` rows of three features and a noise column, the label (last)
/// 1 when x1 + x2 > 10; one cell missing and one row repeated, for the
/// cleaning step to mend.
fn classification_csv() -> String {
    let mut csv = String::from("x1,x2,x3,noise,label\n");
    for i in 0..ROWS {
        let x1 = (i * 37 % 100) as f64 / 10.0;
        let x2 = (i * 53 % 101) as f64 / 10.0;
        let x3 = (i * 71 % 97) as f64 / 10.0;
        let noise = (i * 13 % 7) as f64;
        let label = u8::from(x1 + x2 > 10.0);
        let x3 = if i == 7 {
            String::new()
        } else {
            x3.to_string()
        };
        csv.push_str(&format!("{x1},{x2},{x3},{noise},{label}\n"));
        if i == 3 {
            csv.push_str(&format!("{x1},{x2},{x3},{noise},{label}\n"));
        }
    }
    csv
}

/// A stored artifact's bytes, as text (a `file://` location).
fn read_artifact(artifact: &ArtifactRef) -> String {
    let path = artifact
        .location
        .strip_prefix("file://")
        .unwrap_or_else(|| panic!("not a local artifact: {artifact:?}"));
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("cannot read {path}: {e}"))
}

/// A score parameter, checked to be a fraction.
fn unit_score(text: &str) -> f64 {
    let score: f64 = text
        .parse()
        .unwrap_or_else(|_| panic!("{text:?} is not a score"));
    assert!(
        (0.0..=1.0).contains(&score),
        "score {score} is not in 0..=1"
    );
    score
}

/// A fresh directory under Cargo's scratch space, removed when the test
/// passes and kept for a look when it fails.
struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> TempDir {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("couler-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("test directory");
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("kept {} for a look", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}
