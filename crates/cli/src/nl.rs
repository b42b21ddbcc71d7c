//! `couler generate` (a workflow draft from a description) and
//! `couler nl-eval` (the planner against a file of expected structures).
//! Only the offline planner is wired here; the API's LLM path comes later.

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
    /// What the workflow should do.
    description: String,
    /// Use the deterministic offline planner (required until the LLM path
    /// is available from the CLI).
    #[arg(long)]
    offline: bool,
    /// The workflow name (default: derived from the description).
    #[arg(long)]
    name: Option<String>,
    /// An allowed image prefix or glob (repeatable; default: any image).
    #[arg(long = "allow-image", value_name = "PATTERN")]
    allow_images: Vec<String>,
    /// Print the decomposition as JSON instead of the IR.
    #[arg(long)]
    decomposition: bool,
}

#[derive(Args)]
pub struct EvalArgs {
    /// A YAML list of cases (see tests/nl/cases.yaml).
    file: PathBuf,
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
    /// Exit 1 when the pass rate is below this fraction.
    #[arg(long, default_value_t = 0.9)]
    min_pass_rate: f64,
}

pub fn generate(args: GenerateArgs) -> Result<ExitCode> {
    if !args.offline {
        bail!("only the offline planner is available from the CLI for now; pass --offline");
    }
    let options = PlanOptions {
        name: args.name,
        images: ImagePolicy {
            allowed: args.allow_images,
        },
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
