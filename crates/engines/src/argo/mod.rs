//! Compiling plans into Argo Workflows manifests: one `Workflow`
//! (`argoproj.io/v1alpha1`), plus a `CronWorkflow` running the same spec
//! when the workflow has a `schedule`.
//!
//! | Couler | Argo |
//! |---|---|
//! | workflow, run | `metadata.name` `<workflow>-<run>-<attempt>[-<stage>]` (deterministic, so a resubmission finds the one it made); labels `couler.dev/tenant`, `couler.dev/run`, `couler.dev/attempt`, `couler.dev/workflow` (+ the workflow's labels); raw ids in annotations |
//! | steps, `depends`, groups, implied edges | the `main` DAG template; one task per running step, `depends: "a.Succeeded && b.Succeeded"` (a skipped or failed upstream step omits the task, as Couler skips behind a skip); outcome entries as Argo results of the same meaning (`x.failed` → `x.Failed \|\| x.Errored`, `x.skipped` → `x.Skipped \|\| x.Omitted`, `x.any` → all five), reused steps' known outcomes written in |
//! | container / script step | a `container` / `script` template named after the step (so pods carry it); the description as a pod annotation |
//! | names | step names stay template names; `main`, `exit-handler` and outer templates take `-2`, `-3` … on a clash; tasks whose step name starts with a digit get an `s` prefix (Argo refuses them with `depends`); long names are cut to 63 with a digest |
//! | training job | a `resource` template creating a `kubeflow.org/v1` PyTorchJob, TFJob or MPIJob, judged by the leading role's replica status |
//! | resources, hints | `resources.requests` (GPUs as `nvidia.com/gpu`, also a limit); `nodeSelector`, `tolerations` |
//! | env, secrets | `env` values; secrets as `valueFrom.secretKeyRef` (never values) |
//! | outputs | `outputs.parameters` (`valueFrom.path`, `default`), `outputs.artifacts` (`path`) |
//! | `{{steps.S.outputs.…}}` in text | an input parameter of the template, fed `{{tasks.S.outputs.…}}` by the task |
//! | `inputs.artifacts` | `inputs.artifacts` with `path`, fed `from: {{tasks.S.outputs.artifacts.A}}` |
//! | `{{inputs/outputs.….path}}`, parameters | written in (the declared path, the resolved value) |
//! | `when` | govaluate `when`: `'…' == 'v'`, `in` as `==` joined by `||`, `lt`…`ge` as numbers |
//! | `map.items` / `map.from` | `withItems` / `withParam`; `{{item}}` stays `{{item}}` |
//! | `map.parallelism`, `when` on a whole `map` step | the task calls a one-task DAG template (`parallelism` on it; the step's own `when` on the calling task, conditions over `{{item}}` per instance) |
//! | `while` | a `steps` template that calls itself `when` the condition holds and the iteration counter is below `maxIterations`; its outputs are the last iteration's |
//! | `retry` | `retryStrategy`: `limit`, `retryPolicy` `Always`/`OnTransientError`, `backoff` `duration`, `factor` (default 2), `cap` (Couler's `maxDuration` caps one wait, which is Argo's `cap`) |
//! | `timeout` | template `activeDeadlineSeconds` (per attempt; a job's `runPolicy` too) |
//! | `onExit`, `{{workflow.status}}` | `spec.onExit`: an `exit-handler` DAG; the status as `succeeded`/`failed` via an expression (Argo's `Error` reads as `failed`; a stopped workflow reports `Failed`, so `cancelled` never shows) |
//! | exit handlers reading main steps | global outputs (`globalName`, `{{workflow.outputs.…}}`) |
//! | `parallelism` | `spec.parallelism` |
//! | workflow `timeout` | `spec.activeDeadlineSeconds` (Argo stops the run and still runs `onExit`; the scheduler enforces it too) |
//! | `schedule` | a `CronWorkflow` file beside the `Workflow` (`schedules`, `timezone`) |
//! | reused (cached) steps | no task; their recorded outputs are written in where read (artifacts by their `s3://`, `gs://` or `http(s)://` location); a step behind one reused as skipped gets `when: "false"` |
//! | `cache` | nothing (no `memoize`): Couler's cache index decided reuse before compiling, keyed on exact inputs |
//!
//! Refused with [`EngineError::Unsupported`]: `tune` steps that would run
//! (the scheduler runs trials in stages), artifacts of `map` steps read by
//! other steps, training-job outputs, input artifacts, results and `while`,
//! and reused artifacts stored where pods cannot fetch them (`file://`).

pub mod adapter;
mod analysis;
mod dag;
mod job;
mod model;
mod names;
mod templates;
mod values;

pub use adapter::{ArgoAdapter, ArgoConfig};

use crate::compile::{Manifest, ManifestFile};
use crate::{EngineError, RunSpec};
use couler_optimizer::Plan;
use model::{
    API_VERSION, Arguments, CronWorkflow, CronWorkflowSpec, Metadata, ObjectMeta, Parameter,
    Workflow, WorkflowSpec,
};
use names::{MAX_CRON_NAME, MAX_NAME, dns_label, label_value};
use std::collections::BTreeMap;

const ENGINE: &str = "argo";
/// Where pods fetch reused artifacts from (`s3`, `gcs` and `http` artifact
/// sources).
pub const READS: &[&str] = &["s3://", "gs://", "http://", "https://"];
const TENANT_LABEL: &str = "couler.dev/tenant";
const RUN_LABEL: &str = "couler.dev/run";
const STEP_LABEL: &str = "couler.dev/step";

/// The file holding the `Workflow`.
pub const WORKFLOW_FILE: &str = "workflow.yaml";
/// The file holding the `CronWorkflow` of [`native_schedule`].
pub const CRON_WORKFLOW_FILE: &str = "cronworkflow.yaml";

/// The `Workflow` of one run. A workflow's `schedule:` is not in it: the
/// control plane fires schedules, and each tick is an ordinary run.
pub fn compile(plan: &Plan, run: &RunSpec) -> Result<Manifest, EngineError> {
    let workflow = build(plan, run)?;
    let templates = workflow.spec.templates.len();
    Ok(Manifest {
        files: vec![yaml_file(WORKFLOW_FILE, &workflow, templates)?],
    })
}

/// An explicit export for running a scheduled workflow on Argo without
/// Couler (`couler compile --native-schedule`): a `CronWorkflow` firing the
/// same workflow on the IR's schedule, in its time zone (UTC unless set),
/// with Argo's own (weaker) guarantees. `None` without a schedule.
pub fn native_schedule(plan: &Plan, run: &RunSpec) -> Result<Option<ManifestFile>, EngineError> {
    let Some(schedule) = &plan.workflow.schedule else {
        return Ok(None);
    };
    let workflow = build(plan, run)?;
    let templates = workflow.spec.templates.len();
    let cron = CronWorkflow {
        api_version: API_VERSION,
        kind: "CronWorkflow",
        metadata: ObjectMeta {
            name: dns_label(&[&plan.workflow.name], MAX_CRON_NAME),
            labels: workflow.metadata.labels.clone(),
            annotations: workflow.metadata.annotations.clone(),
        },
        spec: CronWorkflowSpec {
            schedules: vec![schedule.cron.clone()],
            // Argo's default is the controller's zone; Couler's is UTC.
            timezone: Some(schedule.timezone.clone().unwrap_or_else(|| "UTC".into())),
            workflow_metadata: Metadata {
                labels: workflow.metadata.labels.clone(),
                annotations: BTreeMap::new(),
            },
            workflow_spec: workflow.spec,
        },
    };
    yaml_file(CRON_WORKFLOW_FILE, &cron, templates).map(Some)
}

/// The Workflow of one run.
fn build(plan: &Plan, run: &RunSpec) -> Result<Workflow, EngineError> {
    let pod_labels = BTreeMap::from([
        (TENANT_LABEL.to_owned(), label_value(&run.tenant)),
        (RUN_LABEL.to_owned(), label_value(&run.run)),
    ]);
    let a = analysis::analyse(plan, pod_labels.clone())?;
    let wf = &plan.workflow;

    let (main, mut step_templates) = a
        .dag_template(false)?
        .ok_or_else(|| EngineError::Other("no main DAG".into()))?;
    let mut templates = vec![main];
    let on_exit = match a.dag_template(true)? {
        Some((exit, exit_templates)) => {
            templates.push(exit);
            step_templates.extend(exit_templates);
            Some(a.exit_template.clone())
        }
        None => None,
    };
    templates.extend(step_templates);

    let spec = WorkflowSpec {
        entrypoint: a.main_template.clone(),
        on_exit,
        parallelism: wf.parallelism,
        active_deadline_seconds: wf.timeout.map(|t| templates::seconds(t.as_std())),
        arguments: Arguments {
            parameters: wf
                .parameters
                .iter()
                .map(|p| Parameter {
                    value: plan.parameters.get(&p.name).cloned(),
                    description: p.description.clone(),
                    allowed: p.allowed.iter().map(|v| v.as_str().to_owned()).collect(),
                    ..Parameter::named(&p.name)
                })
                .collect(),
            artifacts: Vec::new(),
        },
        pod_metadata: Metadata {
            labels: pod_labels,
            annotations: BTreeMap::new(),
        },
        templates,
    };

    let mut name_parts = vec![wf.name.clone(), run.run.clone(), run.attempt.to_string()];
    name_parts.extend(run.stage.clone());
    let name_parts: Vec<&str> = name_parts.iter().map(String::as_str).collect();
    let (labels, annotations) = metadata(plan, run);
    let workflow = Workflow {
        api_version: API_VERSION,
        kind: "Workflow",
        metadata: ObjectMeta {
            name: dns_label(&name_parts, MAX_NAME),
            labels,
            annotations,
        },
        spec,
    };
    Ok(workflow)
}

/// The Workflow's labels (the workflow's own, then Couler's, which win)
/// and annotations (the raw ids, the description).
fn metadata(plan: &Plan, run: &RunSpec) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let wf = &plan.workflow;
    let mut labels = wf.labels.clone();
    labels.insert(TENANT_LABEL.into(), label_value(&run.tenant));
    labels.insert(RUN_LABEL.into(), label_value(&run.run));
    labels.insert("couler.dev/attempt".into(), run.attempt.to_string());
    labels.insert("couler.dev/workflow".into(), label_value(&wf.name));
    if let Some(stage) = &run.stage {
        labels.insert("couler.dev/stage".into(), label_value(stage));
    }
    let mut annotations = BTreeMap::from([
        (TENANT_LABEL.to_owned(), run.tenant.clone()),
        (RUN_LABEL.to_owned(), run.run.clone()),
    ]);
    if let Some(d) = &wf.description {
        annotations.insert("workflows.argoproj.io/description".into(), d.clone());
    }
    (labels, annotations)
}

fn yaml_file(
    name: &str,
    value: &impl serde::Serialize,
    templates: usize,
) -> Result<ManifestFile, EngineError> {
    // Sized up front (about 900 bytes a template): big workflows would
    // otherwise copy it many times, into freshly zeroed pages each time.
    let mut content = String::with_capacity(1024 + 1024 * templates);
    crate::yaml::write(&mut content, value)
        .map_err(|e| EngineError::Other(format!("could not write {name}: {e}")))?;
    Ok(ManifestFile {
        name: name.into(),
        media_type: "application/yaml",
        content,
    })
}

/// What Argo cannot express, naming the step and the feature.
fn unsupported(step: &str, feature: String) -> EngineError {
    EngineError::Unsupported {
        engine: ENGINE,
        feature: format!("step {step:?}: {feature}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Strings YAML readers could take for something else come back as
    /// the same strings.
    #[test]
    fn yaml_round_trips() {
        let ir = r##"
apiVersion: couler.dev/v1alpha1
name: tricky
schedule: {cron: '0 2 * * *'}
steps:
  - name: a
    container:
      image: alpine
      command: ["on", "no", "yes", "1.0", "0x1F", "~", "null", "- x", "'q'", "{{steps.b.outputs.result}}", "#c", "a: b"]
      args: ["  two  spaces  inside  a  line  that  is  long  enough  to  be  folded  by  the  writer  ", "tail\n\n", "x\ty"]
      env: [{name: E, value: "2024-01-01"}]
  - name: b
    script: {image: python:3.12, command: [python3], source: "print('x')\n  indented\n\n"}
"##;
        let workflow = couler_ir::load(ir, couler_ir::Format::Yaml).unwrap();
        let plan = Plan::new(workflow, BTreeMap::new());
        let run = RunSpec::new("tnt_a", "run_b", 1);
        let workflow = build(&plan, &run).unwrap();
        let check = |value: serde_json::Value, yaml: String| {
            let back: serde_json::Value = serde_saphyr::from_str(&yaml).unwrap();
            assert_eq!(back, value, "{yaml}");
        };
        check(
            serde_json::to_value(&workflow).unwrap(),
            crate::yaml::to_string(&workflow).unwrap(),
        );
        // A run's manifest carries no schedule; the export does.
        assert_eq!(compile(&plan, &run).unwrap().files.len(), 1);
        let cron = native_schedule(&plan, &run).unwrap().unwrap();
        let back: serde_json::Value = serde_saphyr::from_str(&cron.content).unwrap();
        assert_eq!(back["kind"], "CronWorkflow");
        assert_eq!(back["spec"]["schedules"][0], "0 2 * * *");
        assert_eq!(back["spec"]["timezone"], "UTC");
        assert_eq!(back["metadata"]["name"], "tricky");
    }
}
