//! Running plans on Tekton Pipelines through the Kubernetes API.
//!
//! `start` compiles the plan ([`objects`]) and creates the `Pipeline` and
//! then the `PipelineRun` it references (the objects `couler compile`
//! prints) in the tenant's namespace, both named from the [`RunSpec`]: a
//! second `start` of the same run attempt (a scheduler restart) gets
//! `409 AlreadyExists` and re-attaches. A tracker watches the PipelineRun
//! and its TaskRuns (label `tekton.dev/pipelineRun`) with a watch that
//! re-lists after a disconnect, and reports what changed.
//!
//! # Mapping
//!
//! - Pipeline tasks are IR steps (label `tekton.dev/pipelineTask`); an
//!   exit-handler chain compiled into one finally task (annotation
//!   `couler.dev/steps`) reports each member from its step's state. Matrix
//!   TaskRuns are `step[i]` in `childReferences` order; the step itself is
//!   reported from its instances, outputs gathered as JSON lists.
//! - TaskRun `Unknown` with a pod → running, `True` → succeeded, `False` →
//!   failed (`TaskRunTimeout`: "timed out: …"), `TaskRunCancelled` →
//!   cancelled. The attempt is `retriesStatus.len() + 1`; earlier attempts
//!   that went unseen are reported running first.
//! - `skippedTasks`: `when` false, a parent skipped, results missing or an
//!   empty matrix → skipped; stopping after a failure → cancelled
//!   ("upstream failed" when an upstream step failed); a cancel or timeout
//!   of the run → cancelled. A task with neither TaskRun nor skip when the
//!   run ends → cancelled ("never started").
//! - Outputs: output parameters from the results of the same name, the
//!   `result` from the task's standard-output result when the compiler made
//!   one, else from the pod's log, trimmed (the log interleaves standard
//!   error). Artifacts are not reported: they stay in the run's workspace,
//!   which the Kubernetes API does not expose. Terminal updates carry the
//!   log's tail.
//! - Secrets: a step's secret env var reads the Kubernetes Secret
//!   `couler-secret-<name>` of the tenant's namespace, which `start` writes
//!   first from the run's revealed secrets (see [`crate::k8s::secrets`]).
//! - `Reuse` steps are not in the pipeline and are reported once at start.
//! - Cancel sets `spec.status: CancelledRunFinally`: running TaskRuns are
//!   cancelled, the rest skipped, and `finally` (exit handlers) still runs.

mod track;

use super::{ENGINE, objects};
use crate::k8s::{KubeConfig, secrets};
use crate::track::{LOG_TAIL_BYTES, UPDATE_BUFFER, compile, instance, join_attempts};
use crate::{EngineAdapter, EngineError, RunSpec, Started, StepState};
use async_trait::async_trait;
use couler_optimizer::Plan;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, DynamicObject, ListParams, LogParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use tokio::sync::{OnceCell, mpsc};

/// The annotation naming the exit handlers a merged finally task runs.
const STEPS_ANNOTATION: &str = "couler.dev/steps";

/// Settings of a [`TektonAdapter`].
#[derive(Debug, Clone)]
pub struct TektonConfig {
    pub kube: KubeConfig,
    /// How much of a step's log terminal updates carry.
    pub log_tail_bytes: usize,
    /// How long one watch request lasts before it is made anew (proxies
    /// and load balancers cut long requests).
    pub watch_timeout_secs: u32,
}

impl TektonConfig {
    /// Log tails of 64 KiB; watches renewed every 290 s.
    pub fn new(kube: KubeConfig) -> TektonConfig {
        TektonConfig {
            kube,
            log_tail_bytes: LOG_TAIL_BYTES,
            watch_timeout_secs: 290,
        }
    }
}

/// Runs plans as Tekton PipelineRuns. See the module docs.
pub struct TektonAdapter {
    config: TektonConfig,
    client: OnceCell<kube::Client>,
}

impl TektonAdapter {
    /// The client is made on first use (it needs the async runtime).
    pub fn new(config: TektonConfig) -> Result<TektonAdapter, EngineError> {
        // kube is built with rustls but without a default provider.
        let _ = rustls::crypto::ring::default_provider().install_default();
        Ok(TektonAdapter {
            config,
            client: OnceCell::new(),
        })
    }

    async fn client(&self) -> Result<kube::Client, EngineError> {
        self.client
            .get_or_try_init(|| self.config.kube.client(ENGINE))
            .await
            .cloned()
    }

    async fn api(&self, ns: &str, kind: Kind) -> Result<Api<DynamicObject>, EngineError> {
        Ok(Api::namespaced_with(
            self.client().await?,
            ns,
            &kind.resource(),
        ))
    }

    /// `<namespace>/<pipelinerun>`, checked against the run's tenant.
    fn split_ref<'r>(
        &self,
        run: &RunSpec,
        engine_ref: &'r str,
    ) -> Result<(&'r str, &'r str), EngineError> {
        match engine_ref.split_once('/') {
            Some((ns, name))
                if ns == self.config.kube.namespace(&run.tenant) && !name.is_empty() =>
            {
                Ok((ns, name))
            }
            _ => Err(EngineError::Other(format!(
                "{engine_ref:?} is not a PipelineRun of tenant {}",
                run.tenant
            ))),
        }
    }
}

#[derive(Clone, Copy)]
enum Kind {
    Pipeline,
    PipelineRun,
    TaskRun,
}

impl Kind {
    fn resource(self) -> ApiResource {
        let (kind, plural) = match self {
            Kind::Pipeline => ("Pipeline", "pipelines"),
            Kind::PipelineRun => ("PipelineRun", "pipelineruns"),
            Kind::TaskRun => ("TaskRun", "taskruns"),
        };
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk("tekton.dev", "v1", kind), plural)
    }
}

fn api_error(e: kube::Error) -> EngineError {
    crate::k8s::api_error(ENGINE, e)
}

/// Creates an object; `false` when it already exists.
async fn create(api: &Api<DynamicObject>, object: Value) -> Result<bool, EngineError> {
    let object: DynamicObject = serde_json::from_value(object).map_err(|e| {
        EngineError::Other(format!(
            "internal error: a compiled object is not an object: {e}"
        ))
    })?;
    match api.create(&PostParams::default(), &object).await {
        Ok(_) => Ok(true),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(false),
        Err(e) => Err(api_error(e)),
    }
}

#[async_trait]
impl EngineAdapter for TektonAdapter {
    fn name(&self) -> &'static str {
        ENGINE
    }

    #[tracing::instrument(skip_all, fields(run = %run.run, attempt = run.attempt))]
    async fn start(
        &self,
        run: &RunSpec,
        plan: Arc<Plan>,
        resume: Vec<StepState>,
    ) -> Result<Started, EngineError> {
        let (pipeline, pipeline_run) = compile(&plan, run, |plan, run| {
            let (p, r) = objects(plan, run)?;
            Ok((to_json(&p)?, to_json(&r)?))
        })
        .await?;
        let ns = self.config.kube.namespace(&run.tenant);
        secrets::sync(
            self.client().await?,
            &ns,
            secrets::Namespace::Own,
            &run.tenant,
            &run.secrets,
            ENGINE,
        )
        .await?;
        let name = pipeline_run["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        create(&self.api(&ns, Kind::Pipeline).await?, pipeline.clone()).await?;
        if !create(&self.api(&ns, Kind::PipelineRun).await?, pipeline_run).await? {
            tracing::info!(
                namespace = ns,
                pipelinerun = name,
                "re-attaching to an existing pipelinerun"
            );
        }
        let (tx, rx) = mpsc::channel(UPDATE_BUFFER);
        let tracker = track::Tracker::new(
            self.client().await?,
            &ns,
            &name,
            &plan,
            &pipeline,
            resume,
            &self.config,
            tx,
        );
        tokio::spawn(tracker.run());
        Ok(Started {
            engine_ref: format!("{ns}/{name}"),
            updates: rx,
        })
    }

    async fn cancel(&self, run: &RunSpec, engine_ref: &str) -> Result<(), EngineError> {
        let (ns, name) = self.split_ref(run, engine_ref)?;
        let api = self.api(ns, Kind::PipelineRun).await?;
        let pr = api.get(name).await.map_err(api_error)?;
        if finished(&whole(pr)).is_some() {
            return Ok(());
        }
        let patch = json!({"spec": {"status": "CancelledRunFinally"}});
        api.patch(name, &PatchParams::default(), &Patch::Merge(&patch))
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
        let (ns, name) = self.split_ref(run, engine_ref)?;
        let (task, index) = instance(step);
        let pr = self
            .api(ns, Kind::PipelineRun)
            .await?
            .get(name)
            .await
            .map_err(api_error)?;
        let trs = self
            .api(ns, Kind::TaskRun)
            .await?
            .list(&ListParams::default().labels(&format!("tekton.dev/pipelineRun={name}")))
            .await
            .map_err(api_error)?;
        let runs = Runs::new(&whole(pr), trs.items.into_iter().map(whole).collect());
        let mine = runs.of(task);
        let tr = match index {
            Some(i) => mine.get(i),
            None => mine.first(),
        };
        let tr = tr
            .copied()
            .or_else(|| runs.merged_with(step))
            .ok_or_else(|| {
                EngineError::Other(format!("no TaskRun of step {step:?} in {engine_ref}"))
            })?;
        let pods = Api::<Pod>::namespaced(self.client().await?, ns);
        let mut names: Vec<&str> = tr["status"]["retriesStatus"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["podName"].as_str())
            .collect();
        names.extend(tr["status"]["podName"].as_str());
        let mut logs = Vec::new();
        for (n, pod) in names.iter().enumerate() {
            let log = pod_log(&pods, pod, task_step(task, step))
                .await
                .map_err(api_error)?;
            logs.push((n as u32 + 1, log));
        }
        Ok(join_attempts(logs))
    }
}

/// An object as JSON, `metadata` included (`DynamicObject::data` has
/// only the rest).
fn whole(object: DynamicObject) -> Value {
    serde_json::to_value(object).unwrap_or_default()
}

fn to_json<T: serde::Serialize>(object: &T) -> Result<Value, EngineError> {
    serde_json::to_value(object).map_err(|e| EngineError::Other(format!("internal error: {e}")))
}

/// The step container of `step` in its task's pod.
fn task_step<'s>(task: &'s str, step: &'s str) -> &'s str {
    if instance(step).1.is_some() {
        task
    } else {
        step
    }
}

async fn pod_log(pods: &Api<Pod>, pod: &str, step: &str) -> Result<String, kube::Error> {
    let params = LogParams {
        container: Some(format!("step-{step}")),
        ..LogParams::default()
    };
    pods.logs(pod, &params).await
}

/// The `Succeeded` condition's status and reason once the object is done.
fn finished(object: &Value) -> Option<(bool, String)> {
    let c = object["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Succeeded")?;
    match c["status"].as_str()? {
        "True" => Some((true, c["reason"].as_str().unwrap_or_default().to_owned())),
        "False" => Some((false, c["reason"].as_str().unwrap_or_default().to_owned())),
        _ => None,
    }
}

/// A PipelineRun's TaskRuns, by pipeline task, in `childReferences` order.
struct Runs {
    by_task: BTreeMap<String, Vec<Value>>,
}

impl Runs {
    fn new(pr: &Value, trs: Vec<Value>) -> Runs {
        let order: HashMap<&str, usize> = pr["status"]["childReferences"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .filter_map(|(i, c)| Some((c["name"].as_str()?, i)))
            .collect();
        let mut trs = trs;
        trs.sort_by_key(|t| {
            let name = t["metadata"]["name"].as_str().unwrap_or_default();
            (
                order.get(name).copied().unwrap_or(usize::MAX),
                name.to_owned(),
            )
        });
        let mut by_task: BTreeMap<String, Vec<Value>> = BTreeMap::new();
        for t in trs {
            let task = t["metadata"]["labels"]["tekton.dev/pipelineTask"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            by_task.entry(task).or_default().push(t);
        }
        Runs { by_task }
    }

    fn of(&self, task: &str) -> Vec<&Value> {
        self.by_task
            .get(task)
            .map(|v| v.iter().collect())
            .unwrap_or_default()
    }

    /// The TaskRun of a finally task that runs `step` among others.
    fn merged_with(&self, step: &str) -> Option<&Value> {
        self.by_task.values().flatten().find(|t| {
            t["metadata"]["annotations"][STEPS_ANNOTATION]
                .as_str()
                .is_some_and(|s| s.split(',').any(|m| m == step))
        })
    }
}
