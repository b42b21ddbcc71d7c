//! Natural language → a workflow draft (Couler paper §III, Algorithm 1):
//! with an LLM when one is configured, the [`offline`](crate::offline)
//! planner otherwise, and the offline planner again when the LLM fails.
//! Nothing here runs anything: a draft is data the user saves or submits.

use crate::decompose::Decomposition;
use crate::library::Library;
use crate::llm::LlmClient;
use crate::offline::{OfflinePlanner, PlanError, PlanOptions, StepExplanation};
use crate::safety::{ImagePolicy, Warning};
use couler_ir::Workflow;
use serde::{Deserialize, Serialize};

/// Bounds of one generation request.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct GenerateConfig {
    /// Repair rounds after validation problems, and regeneration rounds
    /// after a low critique score, each at most this many.
    pub max_rounds: u32,
    /// Drafts the critique scores below this are regenerated (0–1).
    pub baseline_score: f64,
    /// Tokens (prompt + completion) one request may spend in all.
    pub max_tokens: u64,
    /// Library templates given to the LLM per subtask.
    pub references: usize,
}

impl Default for GenerateConfig {
    fn default() -> Self {
        GenerateConfig {
            max_rounds: 3,
            baseline_score: 0.6,
            max_tokens: 32_000,
            references: 3,
        }
    }
}

/// What to generate, for whom.
#[derive(Debug, Clone, Copy)]
pub struct Request<'a> {
    pub description: &'a str,
    /// Built-in templates plus the tenant's own.
    pub library: &'a Library,
    pub images: &'a ImagePolicy,
    /// The workflow's name; derived from the description when absent.
    pub name: Option<&'a str>,
    /// What is left of the tenant's token budget; `None`: unlimited.
    pub tokens_left: Option<u64>,
}

/// Tokens an LLM spent on a request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.prompt_tokens + self.completion_tokens
    }
}

/// Who wrote a draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Author {
    Llm {
        model: String,
    },
    /// The offline planner; `reason` says why the LLM was not used (none
    /// configured, it failed, the budget ran out).
    Offline {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        reason: Option<String>,
    },
}

/// A generated, validated workflow and how it came about.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Draft {
    pub workflow: Workflow,
    pub decomposition: Decomposition,
    /// Each step, and why it is there.
    pub explanations: Vec<StepExplanation>,
    /// The critique's score against the description (0–1); none for the
    /// offline planner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    pub usage: Usage,
    pub warnings: Vec<Warning>,
    pub author: Author,
}

#[derive(Debug, thiserror::Error)]
pub enum GenerateError {
    /// Neither the LLM nor the offline planner produced a valid workflow;
    /// the offline planner's explanation.
    #[error(transparent)]
    Plan(#[from] PlanError),
}

/// Generates drafts; share it behind an `Arc`.
#[derive(Debug)]
pub struct Generator {
    llm: Option<LlmClient>,
    config: GenerateConfig,
}

impl Generator {
    /// With `llm` none, every draft comes from the offline planner.
    pub fn new(llm: Option<LlmClient>, config: GenerateConfig) -> Generator {
        Generator { llm, config }
    }

    pub fn config(&self) -> &GenerateConfig {
        &self.config
    }

    /// A first draft of `request.description`.
    pub async fn generate(&self, request: &Request<'_>) -> Result<Draft, GenerateError> {
        let reason = match &self.llm {
            None => "no LLM is configured",
            Some(_) => "the LLM path is not built yet",
        };
        self.offline(request, request.description, reason)
    }

    /// The draft revised by the user's `feedback` ("use 4 GPUs for
    /// training"); `previous` is the draft it revises.
    pub async fn revise(
        &self,
        request: &Request<'_>,
        previous: &Draft,
        feedback: &str,
    ) -> Result<Draft, GenerateError> {
        let _ = previous;
        let text = format!("{}. {}", request.description.trim_end_matches('.'), feedback);
        let reason = match &self.llm {
            None => "no LLM is configured",
            Some(_) => "the LLM path is not built yet",
        };
        self.offline(request, &text, reason)
    }

    fn offline(
        &self,
        request: &Request<'_>,
        description: &str,
        reason: &str,
    ) -> Result<Draft, GenerateError> {
        let planner = OfflinePlanner::new(request.library.clone());
        let options = PlanOptions {
            name: request.name.map(str::to_owned),
            images: request.images.clone(),
        };
        let plan = planner.plan(description, &options)?;
        Ok(Draft {
            workflow: plan.workflow,
            decomposition: plan.decomposition,
            explanations: plan.explanations,
            score: None,
            usage: Usage::default(),
            warnings: plan.warnings,
            author: Author::Offline {
                reason: Some(reason.to_owned()),
            },
        })
    }
}
