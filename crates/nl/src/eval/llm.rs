//! The LLM path under the same cases and checks: one draft per case
//! (pass@1), with the repair rounds, regenerations, calls and tokens each
//! took, as the Couler paper's Table II reports them. A draft the offline
//! planner wrote because the LLM failed is served, but is no LLM pass.

use super::{Case, CaseResult, Checks, Produced, Report, judge};
use crate::generate::{Author, Generator, Request, Stats, Usage};
use crate::library::Library;
use crate::safety::ImagePolicy;
use serde::Serialize;
use std::time::Instant;

/// One case on the LLM path.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmCase {
    /// The checks on the draft as served (the fallback's, if the LLM failed).
    pub result: CaseResult,
    /// Whether the LLM wrote the draft.
    pub by_llm: bool,
    pub stats: Stats,
    pub usage: Usage,
    pub seconds: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LlmReport {
    pub cases: Vec<LlmCase>,
}

impl LlmReport {
    /// The drafts as served, checked like the offline planner's.
    pub fn served(&self) -> Report {
        Report {
            results: self.cases.iter().map(|c| c.result.clone()).collect(),
        }
    }

    /// Cases whose one draft the LLM wrote and that pass.
    pub fn passed_at_1(&self) -> usize {
        self.cases
            .iter()
            .filter(|c| c.by_llm && c.result.passed)
            .count()
    }

    /// Table II's row: pass@1, the mean repair rounds, regenerations,
    /// calls and tokens per case, and how often the LLM wrote the draft.
    pub fn table(&self) -> String {
        let n = self.cases.len().max(1) as f64;
        let mean = |f: &dyn Fn(&LlmCase) -> f64| self.cases.iter().map(f).sum::<f64>() / n;
        format!(
            "pass@1: {}/{} = {:.1}% (drafts written by the LLM: {}; served with the offline fallback: {:.1}%)\n\
             per case: {:.2} repair rounds, {:.2} regenerations, {:.1} LLM calls, {:.0} prompt + {:.0} completion tokens, {:.1} s",
            self.passed_at_1(),
            self.cases.len(),
            self.passed_at_1() as f64 / n * 100.0,
            self.cases.iter().filter(|c| c.by_llm).count(),
            self.served().pass_rate() * 100.0,
            mean(&|c| f64::from(c.stats.repairs)),
            mean(&|c| f64::from(c.stats.regenerations)),
            mean(&|c| f64::from(c.stats.calls)),
            mean(&|c| c.usage.prompt_tokens as f64),
            mean(&|c| c.usage.completion_tokens as f64),
            mean(&|c| c.seconds),
        )
    }
}

/// Generates one draft per case with `generator` and checks it.
pub async fn run(
    generator: &Generator,
    library: &Library,
    cases: &[Case],
    checks: Checks<'_>,
) -> LlmReport {
    let images = ImagePolicy::default();
    let mut out = Vec::with_capacity(cases.len());
    for case in cases {
        let request = Request {
            description: &case.description,
            library,
            images: &images,
            name: None,
            tokens_left: None,
        };
        let started = Instant::now();
        let drafted = generator.generate(&request).await;
        let seconds = started.elapsed().as_secs_f64();
        let (result, by_llm, stats, usage) = match &drafted {
            Ok(draft) => {
                let produced = Produced {
                    decomposition: &draft.decomposition,
                    workflow: &draft.workflow,
                    explanations: &draft.explanations,
                    warnings: &draft.warnings,
                };
                (
                    judge(case, Ok(produced), checks),
                    matches!(draft.author, Author::Llm { .. }),
                    draft.stats,
                    draft.usage,
                )
            }
            Err(crate::generate::GenerateError::Plan(e)) => (
                judge(case, Err(e), checks),
                false,
                Stats::default(),
                Usage::default(),
            ),
        };
        tracing::debug!(case = %case.name, passed = result.passed, by_llm, "llm eval case");
        out.push(LlmCase {
            result,
            by_llm,
            stats,
            usage,
            seconds,
        });
    }
    LlmReport { cases: out }
}
