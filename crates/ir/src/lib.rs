//! The Couler workflow IR: the contract between users, the optimizer and
//! every engine.
//!
//! - [`load`] reads YAML or JSON, validates it and returns the typed
//!   [`Workflow`] or every [`Problem`] at once, each with a JSON pointer.
//! - [`validate`] checks a workflow built in code and returns its [`Dag`].
//! - [`depends`] parses `depends` entries and holds the rule that decides
//!   which steps run and whether a run failed.
//! - [`hash`] gives the canonical form and content digests.
//! - [`schema`] is the JSON Schema editors autocomplete from.
//!
//! No I/O happens here.

pub mod depends;
pub mod graph;
pub mod hash;
mod job;
pub mod names;
pub mod params;
mod parse;
pub mod problem;
pub mod refs;
pub mod scalar;
pub mod schema;
mod types;
mod validate;

pub use graph::Graph;
pub use hash::{Digest, Hashes};
pub use parse::{Format, Limits, NUL_MESSAGE, json_may_hold_nul, nul_in};
pub use problem::{Code, Problem, Problems};
pub use types::*;
pub use validate::Dag;

use problem::Report;

/// Parses and validates a document with the default [`Limits`].
pub fn load(text: &str, format: Format) -> Result<Workflow, Problems> {
    load_with(text, format, &Limits::default())
}

/// Parses and validates a document.
pub fn load_with(text: &str, format: Format, limits: &Limits) -> Result<Workflow, Problems> {
    let (workflow, problems) = parse::parse(text, format, limits);
    finish(workflow, problems, limits)
}

/// Validates an already-parsed tree (for example a JSON request body).
pub fn load_value(value: serde_json::Value, limits: &Limits) -> Result<Workflow, Problems> {
    let (workflow, problems) = parse::from_value(value);
    finish(workflow, problems, limits)
}

fn finish(
    workflow: Option<Workflow>,
    problems: Vec<Problem>,
    limits: &Limits,
) -> Result<Workflow, Problems> {
    let mut report = Report::default();
    report.extend(problems);
    let Some(workflow) = workflow else {
        return Err(report
            .finish()
            .expect_err("a document that did not parse has problems"));
    };
    let (_, report) = validate::validate(&workflow, limits, report);
    report.finish().map(|()| workflow)
}

/// Validates a workflow and returns its dependency graphs.
pub fn validate(workflow: &Workflow, limits: &Limits) -> Result<Dag, Problems> {
    let (dag, report) = validate::validate(workflow, limits, Report::default());
    report.finish()?;
    Ok(dag.expect("a workflow without problems has a DAG"))
}
