//! The offline planner: a deterministic reader of common English and
//! Chinese phrasing that turns a description into a [`Decomposition`] and
//! then into validated IR, or explains what it could not understand.
//!
//! Used when no LLM is configured and as the fallback when the LLM fails;
//! [`OfflinePlanner::build`] also turns a decomposition from elsewhere (an
//! LLM) into IR with the same step library.

pub(crate) mod action;
mod build;
mod clause;
mod condition;
mod context;
mod dag;
mod dates;
mod fanout;
mod fill;
mod group;
pub(crate) mod kinds;
pub(crate) mod lexicon;
mod markers;
mod order;
mod parse;
mod preread;
mod reader;
pub(crate) mod scan;
mod schedule;
mod shape;
mod templates;

use crate::decompose::{Decomposition, Span, TaskKind};
use crate::library::Library;
use crate::safety::{self, ImagePolicy, PolicyError, Warning};
use couler_ir::{Limits, Problems, Workflow};
use serde::{Deserialize, Serialize};
use std::fmt;

/// Longer descriptions are refused rather than half-read.
pub const MAX_DESCRIPTION_BYTES: usize = 16 * 1024;

/// Words the planner could not turn into anything.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unrecognized {
    pub text: String,
    /// Where in the description (absent for problems found while building).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    pub reason: String,
}

impl Unrecognized {
    pub(crate) fn new(description: &str, span: Span, reason: &str) -> Unrecognized {
        Unrecognized {
            text: span.of(description).trim().to_owned(),
            span: Some(span),
            reason: reason.to_owned(),
        }
    }
}

impl fmt::Display for Unrecognized {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.span {
            Some(s) => write!(f, "{:?} (bytes {s}): {}", self.text, self.reason),
            None => write!(f, "{:?}: {}", self.text, self.reason),
        }
    }
}

/// Why one generated step is what it is.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepExplanation {
    pub step: String,
    pub kind: TaskKind,
    /// The library template it was filled from.
    pub template: String,
    /// The template's BM25 relevance to the subtask.
    pub relevance: f64,
    /// The words that asked for it.
    pub text: String,
    pub why: String,
}

/// A draft: what was understood, the validated workflow, and notes.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub decomposition: Decomposition,
    pub workflow: Workflow,
    pub explanations: Vec<StepExplanation>,
    pub warnings: Vec<Warning>,
}

#[derive(Debug, thiserror::Error)]
pub enum PlanError {
    #[error("could not understand {}", list(.unknown))]
    NotUnderstood {
        unknown: Vec<Unrecognized>,
        warnings: Vec<Warning>,
    },
    #[error(
        "the description asks for no step the offline planner knows (loading, cleaning, feature engineering, training, evaluation, selection, registration, deployment, reports, notifications, or a `command`)"
    )]
    Empty { warnings: Vec<Warning> },
    #[error("the description is {len} bytes; the limit is {max}")]
    TooLong { len: usize, max: usize },
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The planner produced IR that does not validate: a bug, reported
    /// with every problem.
    #[error("the generated workflow is invalid: {0:?}")]
    Invalid(Problems),
}

impl PlanError {
    /// Safety warnings found before the error, if any.
    pub fn warnings(&self) -> &[Warning] {
        match self {
            PlanError::NotUnderstood { warnings, .. } | PlanError::Empty { warnings } => warnings,
            _ => &[],
        }
    }
}

fn list(unknown: &[Unrecognized]) -> String {
    unknown
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join("; ")
}

/// Options for one planning request.
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    /// The workflow name; derived from the description when absent.
    pub name: Option<String>,
    /// The tenant's allowed-image policy.
    pub images: ImagePolicy,
}

/// The offline planner with its step library.
#[derive(Debug, Clone)]
pub struct OfflinePlanner {
    library: Library,
}

impl Default for OfflinePlanner {
    fn default() -> Self {
        OfflinePlanner::new(Library::builtin())
    }
}

impl OfflinePlanner {
    pub fn new(library: Library) -> OfflinePlanner {
        OfflinePlanner { library }
    }

    pub fn library(&self) -> &Library {
        &self.library
    }

    /// Reads a description into a decomposition, with the safety warnings.
    pub fn decompose(&self, description: &str) -> Result<(Decomposition, Vec<Warning>), PlanError> {
        if description.len() > MAX_DESCRIPTION_BYTES {
            return Err(PlanError::TooLong {
                len: description.len(),
                max: MAX_DESCRIPTION_BYTES,
            });
        }
        let screened = safety::screen(description);
        let understood = parse::understand(&screened.text);
        let mut d = understood.decomposition;
        d.secrets = screened.named_secrets;
        let mut warnings = screened.warnings;
        if !understood.unknown.is_empty() {
            return Err(PlanError::NotUnderstood {
                unknown: understood.unknown,
                warnings,
            });
        }
        if d.stages.is_empty() && d.on_exit.is_empty() {
            if understood.ignored.is_empty() {
                return Err(PlanError::Empty { warnings });
            }
            return Err(PlanError::NotUnderstood {
                unknown: understood.ignored,
                warnings,
            });
        }
        for u in understood.ignored {
            warnings.push(Warning {
                code: safety::WarningCode::Assumption,
                message: format!("read past {:?}: {}", u.text, u.reason),
                span: u.span,
            });
        }
        Ok((d, warnings))
    }

    /// Description → validated IR.
    pub fn plan(&self, description: &str, options: &PlanOptions) -> Result<Plan, PlanError> {
        let (d, warnings) = self.decompose(description)?;
        let screened = safety::screen(description).text;
        let mut plan = self.build(d, &screened, options)?;
        plan.warnings.splice(0..0, warnings);
        Ok(plan)
    }

    /// Decomposition → validated IR, checked against the image policy and
    /// the secrets the decomposition names. `description` is recorded in
    /// the workflow and seeds its default name; pass it screened.
    pub fn build(
        &self,
        decomposition: Decomposition,
        description: &str,
        options: &PlanOptions,
    ) -> Result<Plan, PlanError> {
        if decomposition.stages.is_empty() && decomposition.on_exit.is_empty() {
            return Err(PlanError::Empty { warnings: vec![] });
        }
        let name = options
            .name
            .clone()
            .unwrap_or_else(|| default_name(description));
        let built =
            build::build(&decomposition, &self.library, &name, description).map_err(|unknown| {
                PlanError::NotUnderstood {
                    unknown,
                    warnings: vec![],
                }
            })?;
        let workflow = couler_ir::load_value(built.document, &Limits::default())
            .map_err(PlanError::Invalid)?;
        options.images.check(&workflow)?;
        safety::check_secrets(&workflow, &decomposition.secrets)?;
        Ok(Plan {
            decomposition,
            workflow,
            explanations: built.explanations,
            warnings: built.warnings,
        })
    }
}

/// `nl-` and a stable hash of the description, or its first English words.
fn default_name(description: &str) -> String {
    let words: Vec<String> = description
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() > 2 && !matches!(*w, "the" | "and" | "then" | "with" | "please"))
        .take(4)
        .map(str::to_ascii_lowercase)
        .collect();
    if words.len() >= 2 {
        let name = words.join("-");
        if couler_ir::names::is_dns_label(&name) {
            return name;
        }
    }
    // FNV-1a: stable across runs and platforms.
    let hash = description.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("nl-{:08x}", hash as u32)
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_clauses;
#[cfg(test)]
mod tests_shapes;
#[cfg(test)]
mod tests_sweeps;
