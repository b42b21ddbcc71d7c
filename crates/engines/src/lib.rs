//! The contract every engine implements, and the engines.
//!
//! The scheduler hands an engine a [`Plan`] and consumes a stream of
//! [`Update`]s; it persists them and never walks the DAG itself (engines
//! like Argo and Tekton do that natively; the local engine does it here).
//! After a scheduler restart or lease takeover, [`EngineAdapter::start`] is
//! called again with the steps' last known states and the engine
//! re-attaches instead of starting anything twice.

pub mod airflow;
pub mod argo;
pub mod compile;
pub mod failure;
pub mod import;
pub mod k8s;
pub mod kfp;
pub mod live_log;
pub use live_log::LogCursor;
pub mod local;
mod rest;
mod secrets;
pub use secrets::SecretValues;
pub mod tekton;
mod track;
pub use track::reused_state;
pub mod yaml;

use async_trait::async_trait;
use couler_optimizer::{Plan, StepOutputs};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use tokio::sync::mpsc;

/// Identifies one run to an engine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RunSpec {
    /// Public tenant id (`tnt_…`), for labels and namespaces.
    pub tenant: String,
    /// Public run id (`run_…`).
    pub run: String,
    /// 1, plus one per retry of the run.
    pub attempt: u32,
    /// For a run the scheduler hands over in stages (sub-workflows, trial
    /// batches), which stage this is: each is a run of its own to the
    /// engine. `None` for a run handed over whole.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    /// The tenant secrets the run's steps reference, with their values
    /// (never serialized): engines deliver them to those steps only.
    #[serde(skip)]
    pub secrets: SecretValues,
    /// The network the tenant's steps get where the engine decides it (the
    /// local engine); none: the engine's default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<Network>,
}

/// What network a tenant's steps have on the local engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// Only a loopback of its own.
    #[default]
    None,
    /// Outbound through the machine (NAT), never to the machine itself.
    Host,
}

impl Network {
    pub fn parse(s: &str) -> Option<Network> {
        match s {
            "none" => Some(Network::None),
            "host" => Some(Network::Host),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Network::None => "none",
            Network::Host => "host",
        }
    }
}

impl RunSpec {
    /// The run as a whole (no stage).
    pub fn new(tenant: impl Into<String>, run: impl Into<String>, attempt: u32) -> RunSpec {
        RunSpec {
            tenant: tenant.into(),
            run: run.into(),
            attempt,
            stage: None,
            secrets: SecretValues::default(),
            network: None,
        }
    }

    /// One stage of the run.
    pub fn stage(&self, id: &str) -> RunSpec {
        RunSpec {
            stage: Some(id.to_owned()),
            ..self.clone()
        }
    }
}

/// Step lifecycle as engines report it (mirrors the store's state machine).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum StepPhase {
    Pending,
    Running,
    Succeeded,
    Failed,
    Skipped,
    Cached,
    Cancelled,
}

impl StepPhase {
    pub fn is_terminal(self) -> bool {
        !matches!(self, StepPhase::Pending | StepPhase::Running)
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunOutcome {
    Succeeded,
    Failed,
    Cancelled,
}

/// What a step cost, measured by the engine.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepMetrics {
    pub wall_ms: u64,
    pub cpu_ms: u64,
    pub max_rss_kb: u64,
    pub exit_code: Option<i32>,
}

/// A step's state: reported by engines, and handed back on resume.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepState {
    /// The IR step name, or an instance name: `train[2]` for the third
    /// item of a `map`.
    pub name: String,
    pub phase: StepPhase,
    /// 0 before the first attempt, then 1, 2, … as retries happen.
    pub attempt: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    #[serde(default)]
    pub outputs: StepOutputs,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metrics: Option<StepMetrics>,
    /// Where the engine keeps this step (local: its working directory;
    /// Argo: the node id), so a new scheduler can re-attach.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub engine_ref: Option<String>,
    /// The tail of the step's logs, on terminal updates.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<String>,
}

/// One report from an engine about a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Update {
    Step(StepState),
    /// The run ended; nothing follows.
    Finished {
        outcome: RunOutcome,
        message: Option<String>,
    },
}

/// A started (or re-attached) run.
pub struct Started {
    /// The engine's name for the run (local: its directory; Argo: the
    /// Workflow name); stored so cancel and logs can find it later.
    pub engine_ref: String,
    pub updates: mpsc::Receiver<Update>,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    /// The plan uses something this engine cannot express.
    #[error("the {engine} engine cannot run this workflow: {feature}")]
    Unsupported {
        engine: &'static str,
        feature: String,
    },
    /// The engine is unreachable or refused; worth retrying later.
    #[error("the {engine} engine is unavailable: {message}")]
    Unavailable {
        engine: &'static str,
        message: String,
    },
    #[error("{0}")]
    Other(String),
}

/// The artifact locations (by prefix) steps on `engine` can read a reused
/// step's artifacts from. A cache hit stored anywhere else is read from
/// its copy in one of these stores, or used only where no step that runs
/// reads it (see `couler_cache::plan`).
pub fn reads_artifacts_from(engine: &str) -> &'static [&'static str] {
    match engine {
        "local" => local::READS,
        "airflow" => airflow::READS,
        "argo" => argo::READS,
        "kfp" => kfp::READS,
        "tekton" => tekton::READS,
        _ => &[],
    }
}

/// Whether `engine` reports where steps stored their artifacts, by
/// default: Tekton's stay in the run's volume. A later stage of a run, or
/// a later attempt, can only read artifacts whose location was reported.
pub fn records_artifacts(engine: &str) -> bool {
    engine != "tekton"
}

#[async_trait]
pub trait EngineAdapter: Send + Sync {
    fn name(&self) -> &'static str;

    /// Whether the outputs it reports carry where steps stored their
    /// artifacts (see [`records_artifacts`]).
    fn records_artifacts(&self) -> bool {
        records_artifacts(self.name())
    }

    /// Starts a run of `plan`. `resume` holds the last known state of steps
    /// from an earlier start of the same run attempt (empty for a fresh
    /// start): finished steps are not run again and running ones are
    /// re-attached where the engine can. A retry from failure hands over
    /// the finished map instances (`step[i]`) of the steps it runs again,
    /// which an engine that can does not run again.
    async fn start(
        &self,
        run: &RunSpec,
        plan: Arc<Plan>,
        resume: Vec<StepState>,
    ) -> Result<Started, EngineError>;

    /// Stops a run's running steps; the update stream then reports the
    /// cancelled steps and `Finished { Cancelled }`.
    async fn cancel(&self, run: &RunSpec, engine_ref: &str) -> Result<(), EngineError>;

    /// Stops a run whose deadline (the workflow's `timeout`) passed, as
    /// `cancel` does: running steps stop, nothing new starts, exit handlers
    /// still run. The scheduler fails the run with `message` whatever the
    /// engine reports; an engine that can tells its exit handlers that the
    /// run failed (by default they see what a cancel shows them).
    async fn expire(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        message: &str,
    ) -> Result<(), EngineError> {
        let _ = message;
        self.cancel(run, engine_ref).await
    }

    /// The full logs of one step (instance) so far.
    async fn logs(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        step: &str,
    ) -> Result<String, EngineError>;

    /// What is new in a running step's log since `cursor`, which it
    /// advances: the text taken through one cursor only ever grows. By
    /// default, from [`EngineAdapter::logs`]: its suffix when it extends
    /// what was taken, nothing when it was rewritten. Engines whose logs
    /// are not append-only while a step runs override it.
    async fn logs_since(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        step: &str,
        cursor: &mut LogCursor,
    ) -> Result<String, EngineError> {
        let full = self.logs(run, engine_ref, step).await?;
        Ok(cursor.take_suffix(&full))
    }
}
