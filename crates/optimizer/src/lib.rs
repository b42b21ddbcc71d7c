//! The optimizer: an ordered list of pure passes that turn a validated
//! workflow and a run's facts into a [`Plan`] engines execute. Passes do no
//! I/O; what they need to know (parameter values, earlier results, later
//! cache hits and history) arrives in [`Facts`].

mod plan;
mod resolve;

pub use plan::{Action, ArtifactRef, Decision, Plan, PlannedStep, ReuseStatus, StepOutputs};
pub use resolve::{
    ResolveParameters, ReuseEarlierResults, UseCacheHits, visit_runnable_text, visit_text,
};

use couler_ir::Workflow;
use std::collections::BTreeMap;

/// What a run brings to planning.
#[derive(Debug, Clone, Default)]
pub struct Facts {
    /// Parameter values (defaults already filled in).
    pub parameters: BTreeMap<String, String>,
    /// Results of an earlier attempt of this run, by step name (retry from failure).
    pub earlier: BTreeMap<String, (ReuseStatus, StepOutputs)>,
    /// Cache hits by step name: the outputs, and why (for explanations).
    pub cache_hits: BTreeMap<String, (StepOutputs, String)>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("the workflow is invalid: {0}")]
    Invalid(#[from] couler_ir::Problems),
    #[error("parameter {0:?} has no value")]
    MissingParameter(String),
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
    /// Parameter resolution, reuse of earlier results, then cache hits.
    fn default() -> Self {
        Pipeline::new(vec![
            Box::new(ResolveParameters),
            Box::new(ReuseEarlierResults),
            Box::new(UseCacheHits),
        ])
    }
}

impl Pipeline {
    pub fn new(passes: Vec<Box<dyn Pass>>) -> Self {
        Pipeline { passes }
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Plans a run; `each` is called around every pass (for tracing spans).
    pub fn plan(
        &self,
        workflow: Workflow,
        facts: &Facts,
        mut each: impl FnMut(
            &'static str,
            &mut dyn FnMut() -> Result<(), PlanError>,
        ) -> Result<(), PlanError>,
    ) -> Result<Plan, PlanError> {
        couler_ir::validate(&workflow, &couler_ir::Limits::default())?;
        let mut plan = Plan::new(workflow, facts.parameters.clone());
        for pass in &self.passes {
            each(pass.name(), &mut || pass.apply(&mut plan, facts))?;
        }
        Ok(plan)
    }
}
