//! The optimizer: an ordered list of pure passes that turn a validated
//! workflow and a run's facts into a [`Plan`] engines execute. Passes do no
//! I/O; what they need to know (parameter values, earlier results, later
//! cache hits and history) arrives in [`Facts`].

mod cut;
mod plan;
mod resolve;
pub mod split;
pub mod stages;
pub mod tune;

mod passes;

pub use cut::CutForCache;
pub use passes::{AdviseResources, ExpandTuning, SplitPlan, Usage, recommend};
pub use plan::{
    Action, Advice, ArtifactRef, Decision, Named, Plan, PlanPart, PlannedStep, ReuseStatus,
    StepOutputs,
};
pub use resolve::{
    ResolveParameters, ReuseEarlierResults, UseCacheHits, visit_runnable_text, visit_text,
};

use couler_ir::Workflow;
use std::collections::{BTreeMap, BTreeSet};

/// What a run brings to planning.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Parameter values (defaults already filled in).
    pub parameters: BTreeMap<String, String>,
    /// Results of an earlier attempt of this run, by step name (retry from failure).
    pub earlier: BTreeMap<String, (ReuseStatus, StepOutputs)>,
    /// Cache hits by step name: the outputs, and why (for explanations).
    pub cache_hits: BTreeMap<String, (StepOutputs, String)>,
    /// Steps computed before that nothing that runs reads (every consumer
    /// is a hit): their recorded outputs, and why. They are not run.
    pub cache_not_needed: BTreeMap<String, (StepOutputs, String)>,
    /// Steps with no cache key before the run only because a step they
    /// read runs: a lookup once it has could hit ([`CutForCache`]).
    pub cache_pending: BTreeSet<String>,
    /// The LLM's answer to each `llm`-strategy `tune` step's request
    /// ([`tune::llm_request`]), by step name; absent when none is configured.
    pub tune_answers: BTreeMap<String, String>,
    /// Measured executions of each step's family, by step name.
    pub history: BTreeMap<String, Vec<Usage>>,
    /// The engine's and tenant's limits of one sub-workflow.
    pub split_budget: split::Budget,
    /// The engine does not report where steps stored their artifacts
    /// (Tekton; Argo where the scheduler cannot read its bucket): no stage
    /// is cut where a step reads an artifact of one that runs before it.
    pub engine_loses_artifacts: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the workflow is invalid: {0}")]
    Invalid(#[from] couler_ir::Problems),
    #[error("parameter {0:?} has no value")]
    MissingParameter(String),
    #[error("{0}")]
    Tuning(String),
    #[error("step `{step}` maps over {value:?}, which is not a JSON list")]
    NotAList {
        /// JSON pointer of the step's `map.from`.
        path: String,
        step: String,
        value: String,
    },
}

/// One optimizer pass.
pub trait Pass: Send + Sync {
    fn name(&self) -> &'static str;
    fn apply(&self, plan: &mut Plan, facts: &Facts) -> Result<(), PlanError>;
}

/// The passes, in order.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

impl Default for Pipeline {
    /// Every pass, in order, with cache hits taken from [`Facts`].
    fn default() -> Self {
        let mut passes = Pipeline::before_lookup().passes;
        passes.extend(Pipeline::after_lookup().passes);
        Pipeline::new(passes)
    }
}

impl Pipeline {
    pub fn new(passes: Vec<Box<dyn Pass>>) -> Self {
        Pipeline { passes }
    }

    /// What comes before the cache index is asked (keys need resolved
    /// parameters): parameters, earlier results, trial expansion.
    pub fn before_lookup() -> Self {
        Pipeline::new(vec![
            Box::new(ResolveParameters),
            Box::new(ReuseEarlierResults),
            Box::new(ExpandTuning),
        ])
    }

    /// What comes after: cache hits, resource advice, the split, and the
    /// cuts that let later lookups see the outputs of steps that run.
    pub fn after_lookup() -> Self {
        Pipeline::new(vec![
            Box::new(UseCacheHits),
            Box::new(AdviseResources),
            Box::new(SplitPlan),
            Box::new(CutForCache),
        ])
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Plans a run; `each` is called around every pass (for tracing spans).
    pub fn plan(
        &self,
        workflow: Workflow,
        facts: &Facts,
        each: impl FnMut(
            &'static str,
            &mut dyn FnMut() -> Result<(), PlanError>,
        ) -> Result<(), PlanError>,
    ) -> Result<Plan, PlanError> {
        couler_ir::validate(&workflow, &couler_ir::Limits::default())?;
        let mut plan = Plan::new(workflow, facts.parameters.clone());
        self.apply(&mut plan, facts, each)?;
        Ok(plan)
    }

    /// Runs the passes over an existing plan.
    pub fn apply(
        &self,
        plan: &mut Plan,
        facts: &Facts,
        mut each: impl FnMut(
            &'static str,
            &mut dyn FnMut() -> Result<(), PlanError>,
        ) -> Result<(), PlanError>,
    ) -> Result<(), PlanError> {
        for pass in &self.passes {
            each(pass.name(), &mut || pass.apply(plan, facts))?;
        }
        // Passes rewrite the workflow: the graphs engines use are taken last.
        plan.validate()?;
        Ok(())
    }
}

#[cfg(test)]
pub(crate) mod fixtures {
    /// `train` writes a model; `tune` reads its result; `evaluate` reads
    /// the model and `tune`'s result.
    pub const TRAIN_TUNE_EVALUATE: &str = r#"
apiVersion: couler.dev/v1alpha1
name: w
steps:
  - {name: train, container: {image: x, command: [sh, -c, 'echo 1 > /tmp/m']}, outputs: {artifacts: [{name: model, path: /tmp/m}]}}
  - {name: tune, container: {image: x, command: [echo, '{{steps.train.outputs.result}}']}}
  - {name: evaluate, inputs: {artifacts: [{name: model, from: '{{steps.train.outputs.artifacts.model}}', path: /tmp/m}]}, container: {image: x, command: [echo, '{{steps.tune.outputs.result}}']}}
"#;
}
