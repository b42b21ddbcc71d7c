//! `couler generate` (a workflow draft from a description) and
//! `couler nl-eval` (the planner against a file of expected structures).
//! `--offline` plans here with the deterministic planner; otherwise the
//! API generates (see [`crate::generate`]).

use crate::Output;
use anyhow::{Context, Result, bail};
use clap::Args;
use couler_nl::eval;
use couler_nl::offline::{OfflinePlanner, PlanError, PlanOptions};
use couler_nl::safety::ImagePolicy;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct GenerateArgs {
    /// What the workflow should do (with `--feedback`: how to revise it).
    pub(crate) description: String,
    /// Plan locally with the deterministic offline planner instead of
    /// asking the API.
    #[arg(long, conflicts_with = "feedback")]
    pub(crate) offline: bool,
    /// Revise generation GEN_ID's latest draft with the text as feedback.
    #[arg(long, value_name = "GEN_ID")]
    pub(crate) feedback: Option<String>,
    /// The workflow name (default: derived from the description).
    #[arg(long, conflicts_with = "feedback")]
    pub(crate) name: Option<String>,
    /// An allowed image prefix or glob (repeatable; default: any image).
    /// Offline only: the API applies its own policy.
    #[arg(long = "allow-image", value_name = "PATTERN", requires = "offline")]
    pub(crate) allow_images: Vec<String>,
    /// Print the decomposition as JSON instead of the IR.
    #[arg(long)]
    pub(crate) decomposition: bool,
}

#[derive(Args)]
pub struct EvalArgs {
    /// A YAML list of cases (see tests/nl/cases.yaml).
    file: PathBuf,
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
    /// Exit 1 when the pass rate is below this fraction.
    #[arg(long, default_value_t = 0.9)]
    min_pass_rate: f64,
}

pub fn generate(args: GenerateArgs) -> Result<ExitCode> {
    if !args.offline {
        bail!("the offline planner runs only with --offline");
    }
    let options = PlanOptions {
        name: args.name,
        images: ImagePolicy::platform(args.allow_images),
    };
    match OfflinePlanner::default().plan(&args.description, &options) {
        Ok(plan) => {
            for w in &plan.warnings {
                eprintln!("warning: {}", w.message);
            }
            for e in &plan.explanations {
                eprintln!("# {} ← {:?}: {}", e.step, e.text, e.why);
            }
            if args.decomposition {
                println!("{}", serde_json::to_string_pretty(&plan.decomposition)?);
            } else {
                print!("{}", couler_ir::hash::canonical_yaml(&plan.workflow));
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            for w in e.warnings() {
                eprintln!("warning: {}", w.message);
            }
            if let PlanError::NotUnderstood { unknown, .. } = &e {
                eprintln!("could not understand:");
                for u in unknown {
                    eprintln!("  - {u}");
                }
            } else {
                eprintln!("error: {e}");
            }
            Ok(ExitCode::FAILURE)
        }
    }
}

pub fn eval(args: EvalArgs) -> Result<ExitCode> {
    let text = std::fs::read_to_string(&args.file)
        .with_context(|| format!("reading {}", args.file.display()))?;
    let cases = eval::load_cases(&text).with_context(|| args.file.display().to_string())?;
    let report = eval::run(&OfflinePlanner::default(), &cases);
    match args.output {
        Output::Json => println!("{}", serde_json::to_string_pretty(&report)?),
        Output::Text => {
            for r in &report.results {
                let verdict = if r.passed { "pass" } else { "FAIL" };
                println!("{verdict} {} ({} steps)", r.name, r.steps);
                for f in &r.failures {
                    println!("     {f}");
                }
            }
            println!(
                "pass rate: {}/{} = {:.1}%",
                report.passed(),
                report.results.len(),
                report.pass_rate() * 100.0
            );
        }
    }
    Ok(if report.pass_rate() >= args.min_pass_rate {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
