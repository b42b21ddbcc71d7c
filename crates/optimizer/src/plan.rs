//! The plan: what engines execute, and the record of why.

use couler_ir::{Dag, Problems, Workflow};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    /// The workflow as it will run (parameters resolved).
    pub workflow: Workflow,
    pub parameters: BTreeMap<String, String>,
    /// One entry per step: `workflow.steps`, then `workflow.on_exit`.
    pub steps: Vec<PlannedStep>,
    /// Why each decision was made, in pass order.
    pub decisions: Vec<Decision>,
    /// The sub-workflows of a split plan, in a topological order (empty:
    /// the plan runs as one).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parts: Vec<PlanPart>,
    /// The hyperparameter search of each `tune` step.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub tuning: BTreeMap<String, crate::tune::Search>,
    /// Resource recommendations from measured history.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub advice: Vec<Advice>,
    /// The workflow as the pipeline left it and its dependency graphs, so
    /// that engines need not validate it again (see [`Plan::dag`]).
    #[serde(skip)]
    pub(crate) validated: Option<Arc<(Workflow, Dag)>>,
}

/// One sub-workflow of a split plan.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanPart {
    pub steps: Vec<String>,
    /// Parts (indexes) holding steps this one reads; it starts once those
    /// steps have finished (see [`crate::stages`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<u32>,
    /// Estimated manifest bytes.
    pub bytes: u64,
    pub pods: u64,
}

/// A resource recommendation for one step.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Advice {
    pub step: String,
    /// Recommended CPU request (as an IR quantity, e.g. `"750m"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    /// Recommended memory request (e.g. `"320Mi"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// Whether the plan uses the recommendation (the step set none).
    pub applied: bool,
    /// How many measured runs it rests on.
    pub samples: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedStep {
    pub name: String,
    pub exit_handler: bool,
    pub action: Action,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Action {
    /// Execute the step.
    Run,
    /// Do not execute: use this result (an earlier attempt's, or the cache's).
    Reuse {
        status: ReuseStatus,
        outputs: StepOutputs,
    },
}

/// The status a reused step reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReuseStatus {
    Succeeded,
    Skipped,
    Cached,
    /// Computed before under the same key, its bytes gone, and every step
    /// that reads it is cached: it need not run (reported as skipped).
    #[serde(rename = "not_needed")]
    NotNeeded,
}

/// Outputs by name, in name order. A sorted vector: a step has a handful,
/// and a `BTreeMap` node alone takes up to a kilobyte — the cache decodes
/// thousands of these per plan.
pub type Named<V> = litemap::LiteMap<String, V>;

/// What a finished step produced.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepOutputs {
    /// Standard output, trimmed (`{{steps.S.outputs.result}}`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<String>,
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub parameters: Named<String>,
    #[serde(default, skip_serializing_if = "Named::is_empty")]
    pub artifacts: Named<ArtifactRef>,
}

/// A stored artifact, addressed by its content.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArtifactRef {
    /// BLAKE3 of the content (hex).
    pub digest: String,
    pub size: u64,
    /// Where the bytes are, e.g. `file:///var/lib/couler/cas/ab/abcd…`.
    pub location: String,
}

/// One optimizer decision, for `plan` explanations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    pub pass: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub message: String,
}

impl Plan {
    /// A plan that runs every step as written.
    pub fn new(workflow: Workflow, parameters: BTreeMap<String, String>) -> Plan {
        let steps = workflow
            .steps
            .iter()
            .map(|s| (s, false))
            .chain(workflow.on_exit.iter().map(|s| (s, true)))
            .map(|(s, exit_handler)| PlannedStep {
                name: s.name.clone(),
                exit_handler,
                action: Action::Run,
            })
            .collect();
        Plan {
            workflow,
            parameters,
            steps,
            decisions: Vec::new(),
            parts: Vec::new(),
            tuning: BTreeMap::new(),
            advice: Vec::new(),
            validated: None,
        }
    }

    /// The workflow's dependency graphs: the planner's while `workflow` is
    /// as the planner left it (comparing costs a fraction of validating),
    /// otherwise validated now.
    pub fn dag(&self) -> Result<Cow<'_, Dag>, Problems> {
        match self.validated.as_deref() {
            Some((workflow, dag)) if *workflow == self.workflow => Ok(Cow::Borrowed(dag)),
            _ => couler_ir::validate(&self.workflow, &couler_ir::Limits::default()).map(Cow::Owned),
        }
    }

    /// Validates the workflow as it is now and keeps its graphs for
    /// [`Plan::dag`].
    pub(crate) fn validate(&mut self) -> Result<(), Problems> {
        let dag = couler_ir::validate(&self.workflow, &couler_ir::Limits::default())?;
        self.validated = Some(Arc::new((self.workflow.clone(), dag)));
        Ok(())
    }

    /// Whether the scheduler runs the plan in stages (sub-workflows,
    /// hyperparameter-trial batches) rather than handing it to the engine
    /// whole.
    pub fn is_staged(&self) -> bool {
        self.parts.len() > 1 || !self.tuning.is_empty()
    }

    pub fn decide(&mut self, pass: &str, step: Option<&str>, message: impl Into<String>) {
        self.decisions.push(Decision {
            pass: pass.to_owned(),
            step: step.map(str::to_owned),
            message: message.into(),
        });
    }

    /// The IR step behind a planned step.
    pub fn ir_step(&self, index: usize) -> &couler_ir::Step {
        let main = self.workflow.steps.len();
        if index < main {
            &self.workflow.steps[index]
        } else {
            &self.workflow.on_exit[index - main]
        }
    }
}
