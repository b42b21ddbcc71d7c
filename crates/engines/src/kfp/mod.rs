//! Compiling plans for Kubeflow Pipelines v2: one `pipeline.yaml` holding a
//! `PipelineSpec` (schema 2.1.0) as the KFP SDK's compiler writes it, and a
//! second YAML document, the Kubernetes `PlatformSpec`, for what only
//! Kubernetes knows (secrets, scheduling, timeouts, pod labels).
//!
//! | IR | KFP |
//! |---|---|
//! | step that runs | component `comp-S` + executor `exec-S` + task `S` (caching off: Couler caches) |
//! | reused (cached) step | no task; its outputs are literals in readers, its artifacts come from an `importer` task |
//! | `depends`, groups, implied edges | `dependentTasks` (edges to reused steps dropped) |
//! | `{{steps.S.outputs.parameters.P}}` | input `pipelinechannel--S-P` ← `taskOutputParameter`, `{{$.inputs.parameters['…']}}` |
//! | `{{steps.S.outputs.result}}` | output parameter `result` written by a shell wrapper that tees stdout |
//! | `{{steps.S.outputs.artifacts.A}}`, `inputs.artifacts` | `system.Artifact` input ← `taskOutputArtifact` (`.uri` / `.path`) |
//! | `{{outputs.parameters.P.path}}`, `{{outputs.artifacts.A.path}}` | `{{$.outputs.parameters['P'].output_file}}`, `{{$.outputs.artifacts['A'].path}}` |
//! | output parameter `default` | the wrapper writes it when the file is absent |
//! | script | `sh -ec` writes the source to a file and runs the interpreter on it |
//! | `workingDir`, env values with references | the wrapper (`cd`, `export` from an argument) |
//! | `when` | condition DAG with `triggerPolicy.condition` (CEL over `inputs.parameter_values`) |
//! | `map` over `items` / `from` | for-loop DAG with `parameterIterator` (`raw` / `inputParameter`); outputs collected as `LIST` |
//! | `map.parallelism` | `iteratorPolicy.parallelismLimit` |
//! | `retry` (limit, backoff) | `retryPolicy` |
//! | `timeout` | `activeDeadlineSeconds` (platform spec) |
//! | workflow `timeout` | nothing in the manifest: a `PipelineSpec` has no run deadline, so the scheduler keeps it (it terminates the run through the API, and the `on-exit` DAG still runs) |
//! | `onExit`, `{{workflow.status}}` | `exit-handler-1` DAG + `on-exit` DAG with `ALL_UPSTREAM_TASKS_COMPLETED`; the `PipelineTaskFinalStatus` input, selected to `succeeded`/`failed`/`cancelled` |
//! | env `secret` | `secretAsEnv` (platform spec; names only) |
//! | resources | `resources` requests and limits, `accelerator` `nvidia.com/gpu` |
//! | hints | `nodeSelector`, `tolerations` (platform spec) |
//! | labels, tenant, run | pod labels and annotations (`podMetadata`) |
//!
//! The wrapper is plain POSIX `sh` with `mktemp`, `mkfifo` and `tee` (as in
//! busybox and Debian images); steps that need none of it run as written.
//! `eq`/`ne`/`in` compare text (`"3.0"` is not `"3"`), `lt`…`ge` numbers.
//!
//! Refused ([`EngineError::Unsupported`]): `depends` entries with outcomes
//! or `||`/`!`, training jobs, `while`, `tune`,
//! retries limited to transient failures, a workflow `schedule` or
//! `parallelism` (a `PipelineSpec` has neither; KFP schedules with
//! recurring runs, an API object), and reading an artifact of a `map` step.

pub mod adapter;
mod analyze;
mod build;
mod cel;
mod executor;
mod spec;

pub use adapter::{KfpAdapter, KfpConfig};

use crate::compile::{Manifest, ManifestFile};
use crate::{EngineError, RunSpec};
use couler_ir::{RetryOn, Step};
use couler_optimizer::{Action, Plan};

const ENGINE: &str = "kfp";
/// Where KFP's importer fetches reused artifacts from.
pub const READS: &[&str] = &["gs://", "s3://", "minio://"];

fn unsupported(feature: String) -> EngineError {
    EngineError::Unsupported {
        engine: ENGINE,
        feature,
    }
}

pub fn compile(plan: &Plan, run: &RunSpec) -> Result<Manifest, EngineError> {
    let built = build_spec(plan, run)?;
    // Sized up front (under 2 kB a step): a big pipeline would otherwise
    // be copied many times, into freshly zeroed pages each time.
    let mut content = String::with_capacity(1024 + 2048 * plan.steps.len());
    // The workflow name is a DNS label, safe in a comment; run ids go in labels.
    content.push_str("# PIPELINE DEFINITION\n# Name: ");
    content.push_str(&plan.workflow.name);
    content.push('\n');
    yaml(&mut content, &built.pipeline)?;
    content.push_str("---\n");
    yaml(&mut content, &built.platform)?;
    Ok(Manifest {
        files: vec![ManifestFile {
            name: "pipeline.yaml".to_owned(),
            media_type: "application/yaml",
            content,
        }],
    })
}

/// The pipeline and platform specs of a plan (what [`compile`] renders).
fn build_spec<'a>(plan: &'a Plan, run: &RunSpec) -> Result<build::Built<'a>, EngineError> {
    check_workflow(plan)?;
    crate::compile::plain_depends_only(
        plan,
        &*crate::compile::dag(plan)?,
        ENGINE,
        "a KFP task runs only after every task it depends on succeeded (only an exit handler runs whatever the others' outcome)",
    )?;
    for (i, planned) in plan.steps.iter().enumerate() {
        if matches!(planned.action, Action::Run) {
            check_step(plan.ir_step(i))?;
        }
    }
    if !plan.steps.iter().any(|s| matches!(s.action, Action::Run)) {
        return Err(unsupported(
            "a pipeline with no task: every step reuses an earlier result, and a KFP pipeline needs at least one task".into(),
        ));
    }
    let mut analysis = analyze::Analysis::new(plan)?;
    analysis.scan()?;
    build::build(&mut analysis, run)
}

/// One YAML document, ending in a newline (long lines are never folded;
/// multi-line strings, scripts, are literal blocks).
fn yaml<T: serde::Serialize>(out: &mut String, value: &T) -> Result<(), EngineError> {
    crate::yaml::write(out, value)
        .map_err(|e| EngineError::Other(format!("rendering the KFP pipeline: {e}")))
}

fn check_workflow(plan: &Plan) -> Result<(), EngineError> {
    let wf = &plan.workflow;
    if let Some(p) = wf.parallelism {
        return Err(unsupported(format!(
            "workflow `parallelism` ({p}): a KFP PipelineSpec limits concurrency only inside a `map` (iteratorPolicy.parallelismLimit), not across a pipeline's tasks"
        )));
    }
    Ok(())
}

fn check_step(step: &Step) -> Result<(), EngineError> {
    let name = &step.name;
    if step.tune.is_some() {
        return Err(unsupported(format!(
            "step `{name}`: `tune` — the scheduler runs hyperparameter trials in stages; hand the engine one stage at a time"
        )));
    }
    if step.job.is_some() {
        return Err(unsupported(format!(
            "step `{name}`: distributed training jobs (`job`); a KFP v2 pipeline runs containers, and launching training-operator jobs needs a launcher component of its own"
        )));
    }
    if step.repeat.is_some() {
        return Err(unsupported(format!(
            "step `{name}`: `while` loops; KFP v2 has no conditional loop (dsl.ParallelFor only fans out over a known list)"
        )));
    }
    if let Some(r) = &step.retry
        && r.on == RetryOn::Transient
    {
        return Err(unsupported(format!(
            "step `{name}`: `retry.on: transient`; KFP's retryPolicy retries every failure and cannot be limited to transient ones"
        )));
    }
    Ok(())
}
