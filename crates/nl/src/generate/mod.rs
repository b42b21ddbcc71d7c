//! Natural language → a workflow draft (Couler paper §III, Algorithm 1):
//! with an LLM when one is configured, the [`offline`](crate::offline)
//! planner otherwise, and the offline planner again when the LLM fails.
//! Nothing here runs anything: a draft is data the user saves or submits.
//!
//! # The LLM path
//! 1. The description is screened ([`safety::screen`]): injected
//!    instructions, download-and-run pipes and secret values are blanked
//!    before any prompt is written, so secret values never reach the LLM.
//! 2. *Decomposition*: the LLM outlines the request as stages of typed
//!    subtasks, as JSON constrained by a schema ([`wire`]).
//! 3. *Retrieval*: the top [`GenerateConfig::references`] library templates
//!    per subtask ([`Library::rank_for`]) go into the next prompt.
//! 4. *Generation*: the LLM completes the plan (models, targets, commands,
//!    fan-outs, conditions, retries, resources), again schema-constrained,
//!    and [`OfflinePlanner::build`] places each subtask on its best
//!    library template and wires the steps together (artifacts,
//!    parameters, groups, conditions). Then the LLM writes each step's IR
//!    ([`steps`]): what it runs, resources, retries and timeout, as JSON
//!    constrained by a schema cut from the IR's own JSON Schema, with the
//!    retrieved templates as references. Each step is validated with the
//!    whole workflow by `couler_ir` and checked against the image policy,
//!    unsafe commands and the named secrets; a step the LLM cannot get
//!    right keeps its template, so a draft is never worse than valid.
//! 5. *Self-calibration*: problems with an answer (unparsable JSON, unknown
//!    kinds, missing commands, templates that cannot be placed, IR problems)
//!    go back to the LLM with their JSON pointers, up to
//!    [`GenerateConfig::max_rounds`] repairs per question; then a critique
//!    scores the draft 0–1 against the description, and below
//!    [`GenerateConfig::baseline_score`] the plan is regenerated with the
//!    critique's notes (at most `max_rounds` times; the best draft wins).
//! 6. *Budget*: calls stop before the request's tokens would exceed
//!    [`GenerateConfig::max_tokens`] or the tenant's `tokens_left`.
//!
//! Any failure before a first valid draft (transport, unusable answers,
//! budget) falls back to the offline planner: the draft says why in
//! [`Author::Offline`] and a warning, and its [`Usage`] still counts the
//! tokens the LLM spent. Subtasks the LLM proposes that would pipe downloads
//! into a shell or carry secret values are dropped with a warning.

mod prompt;
mod session;
mod step_schema;
mod steps;
mod wire;

use crate::decompose::Decomposition;
use crate::library::Library;
use crate::llm::LlmClient;
use crate::offline::{OfflinePlanner, PlanError, PlanOptions, StepExplanation};
use crate::safety::{self, ImagePolicy, Warning, WarningCode};
use couler_ir::Workflow;
use serde::{Deserialize, Serialize};
use session::{Context, Failure, Meter};

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
    /// The longest answer one plan or repair call may write, in tokens.
    pub max_completion_tokens: u32,
    /// Whether the LLM writes each step's IR once the plan is placed
    /// (Algorithm 1's generation step); off, steps are the library's
    /// templates as placed, which costs one call per step less.
    pub write_steps: bool,
}

impl Default for GenerateConfig {
    fn default() -> Self {
        GenerateConfig {
            max_rounds: 3,
            baseline_score: 0.6,
            max_tokens: 32_000,
            references: 3,
            max_completion_tokens: 768,
            write_steps: true,
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

/// How a draft came about (the Couler paper's Table II counts these):
/// LLM calls, repair rounds after validation problems, and regenerations
/// after a low critique score.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stats {
    pub calls: u32,
    pub repairs: u32,
    pub regenerations: u32,
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
    /// Calls and rounds of the LLM path; zero for the offline planner.
    #[serde(default)]
    pub stats: Stats,
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
        let Some(llm) = self.llm_for(request) else {
            return self.offline(request, request.description, "no LLM is configured");
        };
        let cx = self.context(llm, request, request.description);
        let mut meter = Meter::new(&self.config, request.tokens_left);
        let outcome = session::generate(&cx, &mut meter).await;
        self.finish(&cx, meter, outcome, request.description)
    }

    /// The draft revised by the user's `feedback` ("use 4 GPUs for
    /// training"); `previous` is the draft it revises. The LLM sees the
    /// previous IR and plan; the offline planner re-reads the description
    /// with the feedback appended.
    pub async fn revise(
        &self,
        request: &Request<'_>,
        previous: &Draft,
        feedback: &str,
    ) -> Result<Draft, GenerateError> {
        let text = format!(
            "{}. {}",
            request.description.trim_end_matches('.'),
            feedback
        );
        let Some(llm) = self.llm_for(request) else {
            return self.offline(request, &text, "no LLM is configured");
        };
        let cx = self.context(llm, request, request.description);
        let feedback = safety::screen(feedback);
        let mut meter = Meter::new(&self.config, request.tokens_left);
        let mut outcome = session::revise(&cx, &mut meter, previous, &feedback.text).await;
        if let Ok(candidate) = &mut outcome {
            candidate.plan.warnings.splice(0..0, feedback.warnings);
        }
        self.finish(&cx, meter, outcome, &text)
    }

    /// The LLM, unless the description is too long for any planner (the
    /// offline planner then says so).
    fn llm_for(&self, request: &Request<'_>) -> Option<&LlmClient> {
        self.llm
            .as_ref()
            .filter(|_| request.description.len() <= crate::offline::MAX_DESCRIPTION_BYTES)
    }

    fn context<'a>(
        &'a self,
        llm: &'a LlmClient,
        request: &'a Request<'a>,
        description: &str,
    ) -> Context<'a> {
        let screened = safety::screen(description);
        Context {
            llm,
            config: &self.config,
            request,
            planner: OfflinePlanner::new(request.library.clone()),
            options: PlanOptions {
                name: request.name.map(str::to_owned),
                images: request.images.clone(),
            },
            description: screened.text,
            named_secrets: screened.named_secrets,
            screen_warnings: screened.warnings,
        }
    }

    /// The LLM's draft, or the offline planner's on `text` with the reason.
    fn finish(
        &self,
        cx: &Context<'_>,
        meter: Meter,
        outcome: Result<session::Candidate, Failure>,
        text: &str,
    ) -> Result<Draft, GenerateError> {
        match outcome {
            Ok(candidate) => {
                let plan = candidate.plan;
                let mut warnings = cx.screen_warnings.clone();
                warnings.extend(candidate.dropped);
                warnings.extend(plan.warnings);
                Ok(Draft {
                    workflow: plan.workflow,
                    decomposition: plan.decomposition,
                    explanations: plan.explanations,
                    score: candidate.score,
                    usage: meter.usage,
                    stats: meter.stats,
                    warnings,
                    author: Author::Llm {
                        model: cx.llm.model().to_owned(),
                    },
                })
            }
            Err(failure) => {
                let reason = failure.to_string();
                tracing::warn!(%reason, "llm generation failed, using the offline planner");
                let mut draft = self.offline(cx.request, text, &reason)?;
                draft.usage = meter.usage;
                draft.stats = meter.stats;
                draft.warnings.push(Warning {
                    code: WarningCode::Assumption,
                    message: format!("drafted by the offline planner because {reason}"),
                    span: None,
                });
                Ok(draft)
            }
        }
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
            stats: Stats::default(),
            warnings: plan.warnings,
            author: Author::Offline {
                reason: Some(reason.to_owned()),
            },
        })
    }
}
