//! Running plans on Argo Workflows through the Kubernetes API.
//!
//! `start` compiles the plan ([`super::compile`]'s `Workflow`, submitted
//! as JSON) into the tenant's namespace under the compiler's deterministic
//! name, so a second `start` of the same run attempt (a scheduler restart)
//! gets `409 AlreadyExists` and re-attaches. A watch on that one Workflow
//! (re-listing when it breaks) turns `status.nodes` into updates.
//!
//! # Mapping
//!
//! - A step is the node of its DAG task: `<workflow>.<task>` for main
//!   steps, `<workflow>.onExit.<task>` for exit handlers, and the inner
//!   task `<…>.<task>.<task>` of a step wrapped in a one-task DAG. A
//!   `TaskGroup` (a `map` step) reports its instances `step[i]` from its
//!   children `<…>(i:item)`, and the step from all of them, with results
//!   and parameters aggregated as JSON lists like the local engine.
//! - `Running` → running, `Succeeded` → succeeded, `Skipped` → skipped,
//!   `Omitted` → skipped behind a skipped step, or cancelled ("upstream
//!   failed") behind a failed one; `Failed`/`Error` → failed, with the
//!   message of the last attempt ("timed out: …" for a deadline), or
//!   cancelled when the workflow was shut down. A step with no node when
//!   the workflow ends is cancelled. Pending pods are not reported; an
//!   attempt that started and ended between two looks is reported running
//!   first.
//! - A `Retry` node's attempts are its children: the attempt number is
//!   how many there are. `engine_ref` is the node id.
//! - Outputs: `outputs.result`, `outputs.parameters`, and output
//!   artifacts by their `s3.key`, digested once each where
//!   [`ArgoConfig::artifact_stores`] reads the bucket (its mount, or the
//!   bucket as an S3-compatible store); artifacts this host cannot read
//!   are not reported.
//!   Terminal updates carry the tail of the pod's log.
//! - Reused steps are not in the Workflow and are reported once at start.
//! - Secrets: a step's secret env var reads the Kubernetes Secret
//!   `couler-secret-<name>` of the tenant's namespace, which `start` writes
//!   first from the run's revealed secrets (see [`crate::k8s::secrets`]).
//! - Cancel merge-patches `spec.shutdown: Stop`, so exit handlers still run,
//!   and the annotation `couler-cancelled: "true"`. Argo reports a stopped
//!   workflow as `Failed`; the compiled `{{workflow.status}}` expression
//!   also reads that annotation, so exit handlers see `cancelled`.
//! - `retry.on: transient` compiles to `OnTransientError`; Argo retries
//!   OOM kills only when its controller's `TRANSIENT_ERROR_PATTERN`
//!   includes `OOMKilled`.

mod track;

use super::ENGINE;
use super::analysis::{self, Shape};
use super::values::CANCEL_ANNOTATION;
use crate::k8s::{KubeConfig, secrets};
use crate::track::{LOG_TAIL_BYTES, UPDATE_BUFFER, compile, join_attempts, reused_state};
use crate::{EngineAdapter, EngineError, RunSpec, Started, StepState};
use async_trait::async_trait;
use couler_optimizer::{Action, Plan};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, LogParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;
use tokio::sync::{OnceCell, mpsc};
use track::{Nodes, Tracker};

/// Settings of an [`ArgoAdapter`].
#[derive(Debug, Clone)]
pub struct ArgoConfig {
    pub kube: KubeConfig,
    /// The bucket of Argo's artifact repository, for artifact locations
    /// (`s3://<bucket>/<key>`).
    pub artifact_bucket: String,
    /// Where this host reads that bucket's objects, to digest output
    /// artifacts; what it cannot read is not reported.
    pub artifact_stores: couler_objects::Stores,
    /// How much of a step's log terminal updates carry.
    pub log_tail_bytes: usize,
}

impl ArgoConfig {
    /// The prefix of the bucket's locations, `s3://<bucket>/`.
    pub fn bucket_prefix(&self) -> String {
        self.location("")
    }

    /// Where the object `key` of the bucket is, `s3://<bucket>/<key>`.
    pub fn location(&self, key: &str) -> String {
        format!("s3://{}/{key}", self.artifact_bucket)
    }

    /// Artifacts in `couler-artifacts` (not digested), 64 KiB log tails.
    pub fn new(kube: KubeConfig) -> ArgoConfig {
        ArgoConfig {
            kube,
            artifact_bucket: "couler-artifacts".into(),
            artifact_stores: Default::default(),
            log_tail_bytes: LOG_TAIL_BYTES,
        }
    }
}

/// Runs plans as Argo Workflows. See the module docs.
pub struct ArgoAdapter {
    config: Arc<ArgoConfig>,
    client: OnceCell<kube::Client>,
}

impl ArgoAdapter {
    /// Connects on first use.
    pub fn new(config: ArgoConfig) -> Result<ArgoAdapter, EngineError> {
        if config.kube.namespace.is_empty() {
            return Err(EngineError::Other(
                "the Argo adapter needs a namespace".into(),
            ));
        }
        Ok(ArgoAdapter {
            config: Arc::new(config),
            client: OnceCell::new(),
        })
    }

    async fn client(&self) -> Result<kube::Client, EngineError> {
        self.client
            .get_or_try_init(|| self.config.kube.client(ENGINE))
            .await
            .cloned()
    }

    async fn workflows(&self, run: &RunSpec) -> Result<Api<DynamicObject>, EngineError> {
        let ns = self.config.kube.namespace(&run.tenant);
        Ok(Api::namespaced_with(
            self.client().await?,
            &ns,
            &workflow_resource(),
        ))
    }

    /// The run's Workflow, checked against the run.
    async fn workflow(
        &self,
        run: &RunSpec,
        engine_ref: &str,
    ) -> Result<DynamicObject, EngineError> {
        let wf = self
            .workflows(run)
            .await?
            .get(engine_ref)
            .await
            .map_err(api_error)?;
        let labels = wf.metadata.labels.clone().unwrap_or_default();
        let annotations = wf.metadata.annotations.clone().unwrap_or_default();
        let attempt = labels.get("couler.dev/attempt").map(String::as_str);
        if annotations.get("couler.dev/run") != Some(&run.run)
            || attempt != Some(&run.attempt.to_string())
        {
            return Err(EngineError::Other(format!(
                "{engine_ref:?} is not the Argo Workflow of run {} attempt {}",
                run.run, run.attempt
            )));
        }
        Ok(wf)
    }
}

fn workflow_resource() -> ApiResource {
    let gvk = GroupVersionKind::gvk("argoproj.io", "v1alpha1", "Workflow");
    ApiResource::from_gvk_with_plural(&gvk, "workflows")
}

fn api_error(e: kube::Error) -> EngineError {
    crate::k8s::api_error(ENGINE, e)
}

#[async_trait]
impl EngineAdapter for ArgoAdapter {
    fn name(&self) -> &'static str {
        ENGINE
    }

    /// Only where this host reads the artifact bucket.
    fn records_artifacts(&self) -> bool {
        let config = &self.config;
        config.artifact_stores.sees(&config.bucket_prefix())
    }

    #[tracing::instrument(skip_all, fields(run = %run.run, attempt = run.attempt))]
    async fn start(
        &self,
        run: &RunSpec,
        plan: Arc<Plan>,
        resume: Vec<StepState>,
    ) -> Result<Started, EngineError> {
        let (name, mut manifest, steps, reused) = compile(&plan, run, |plan, run| {
            let workflow = super::build(plan, run)?;
            let name = workflow.metadata.name.clone();
            let manifest = serde_json::to_value(&workflow)
                .map_err(|e| EngineError::Other(format!("cannot encode the Workflow: {e}")))?;
            let (steps, reused) = tracked(plan, &name)?;
            Ok((name, manifest, steps, reused))
        })
        .await?;
        manifest["metadata"]["namespace"] = self.config.kube.namespace(&run.tenant).into();
        let object: DynamicObject = serde_json::from_value(manifest)
            .map_err(|e| EngineError::Other(format!("cannot encode the Workflow: {e}")))?;
        let namespace = self.config.kube.namespace(&run.tenant);
        secrets::sync(
            self.client().await?,
            &namespace,
            secrets::Namespace::Own,
            &run.tenant,
            &run.secrets,
            ENGINE,
        )
        .await?;
        let api = self.workflows(run).await?;
        match api.create(&PostParams::default(), &object).await {
            Ok(_) => tracing::info!(workflow = %name, "submitted the workflow"),
            Err(kube::Error::Api(s)) if s.code == 409 => {
                tracing::info!(workflow = %name, "re-attaching to an existing workflow");
            }
            Err(e) => return Err(api_error(e)),
        }
        let (tx, rx) = mpsc::channel(UPDATE_BUFFER);
        let pods = Api::namespaced(
            self.client().await?,
            &self.config.kube.namespace(&run.tenant),
        );
        let tracker = Tracker::new(
            name.clone(),
            steps,
            reused,
            resume,
            pods,
            self.config.clone(),
            tx,
        );
        tokio::spawn(tracker.run(api));
        Ok(Started {
            engine_ref: name,
            updates: rx,
        })
    }

    async fn cancel(&self, run: &RunSpec, engine_ref: &str) -> Result<(), EngineError> {
        let wf = self.workflow(run, engine_ref).await?;
        // A workflow that already ended keeps its outcome.
        if !wf.data["status"]["finishedAt"].is_null() {
            return Ok(());
        }
        let patch = json!({
            "metadata": {"annotations": {CANCEL_ANNOTATION: "true"}},
            "spec": {"shutdown": "Stop"},
        });
        self.workflows(run)
            .await?
            .patch(engine_ref, &PatchParams::default(), &Patch::Merge(&patch))
            .await
            .map_err(api_error)?;
        Ok(())
    }

    async fn logs(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        step: &str,
    ) -> Result<String, EngineError> {
        let wf = self.workflow(run, engine_ref).await?;
        let nodes = Nodes::of(&wf.data);
        let attempts = nodes.attempts_of_step(step).ok_or_else(|| {
            EngineError::Other(format!("step {step:?} has no pod in workflow {engine_ref}"))
        })?;
        let pods: Api<Pod> = Api::namespaced(
            self.client().await?,
            &self.config.kube.namespace(&run.tenant),
        );
        let mut logs = Vec::new();
        for (n, node) in attempts.iter().enumerate() {
            let log = pods
                .logs(&pod_name(engine_ref, node), &LogParams::default())
                .await
                .map_err(api_error)?;
            logs.push((n as u32 + 1, log));
        }
        Ok(join_attempts(logs))
    }
}

/// FNV-1a, 32 bits, as Argo hashes node names.
fn fnv32a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |h: u32, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// A pod node's pod: `<workflow>-<template>-<fnv32a(node name)>` (v2).
fn pod_name(workflow: &str, node: &Value) -> String {
    let name = node["name"].as_str().unwrap_or_default();
    let template = node["templateName"].as_str().unwrap_or_default();
    let mut prefix = format!("{workflow}-{template}");
    let max = 253 - 10 - 1;
    if prefix.len() > max {
        let mut cut = max;
        while !prefix.is_char_boundary(cut) {
            cut -= 1;
        }
        prefix.truncate(cut);
    }
    format!("{prefix}-{}", fnv32a(name))
}

/// One step the tracker reports on.
#[derive(Debug, Clone)]
struct Tracked {
    pub name: String,
    /// The node of its DAG task.
    pub node: String,
    /// The inner task's node, for a step wrapped in a one-task DAG.
    pub inner: Option<String>,
    /// Upstream steps (reused ones included).
    pub upstream: Vec<String>,
}

/// The steps of the Workflow `workflow`, and reports of reused steps.
fn tracked(plan: &Plan, workflow: &str) -> Result<(Vec<Tracked>, Vec<StepState>), EngineError> {
    let a = analysis::analyse(plan, BTreeMap::new())?;
    let mut steps = Vec::new();
    let mut reused = Vec::new();
    for s in &a.steps {
        let (graph, offset) = if s.exit {
            (&a.dag.on_exit, plan.workflow.steps.len())
        } else {
            (&a.dag.steps, 0)
        };
        let upstream = graph
            .upstream(s.node)
            .iter()
            .map(|&u| a.steps[offset + u as usize].ir.name.clone())
            .collect();
        match s.action {
            Action::Run => {
                let node = if s.exit {
                    format!("{workflow}.onExit.{}", s.task)
                } else {
                    format!("{workflow}.{}", s.task)
                };
                let inner =
                    (s.wrapped && s.shape != Shape::Loop).then(|| format!("{node}.{}", s.task));
                steps.push(Tracked {
                    name: s.ir.name.clone(),
                    node,
                    inner,
                    upstream,
                });
            }
            Action::Reuse { status, outputs } => {
                reused.push(reused_state(&s.ir.name, *status, outputs))
            }
        }
    }
    Ok((steps, reused))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_names_are_argos_v2() {
        assert_eq!(fnv32a("hello"), 1_335_831_723);
        let node = json!({"name": "wf.a", "templateName": "a"});
        assert_eq!(pod_name("wf", &node), format!("wf-a-{}", fnv32a("wf.a")));
    }
}
