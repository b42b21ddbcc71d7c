//! `couler generate` (a workflow draft from a description) and
//! `couler nl-eval` (the planner against a file of expected structures).
//! `--offline` plans here with the deterministic planner; otherwise the
//! API generates (see [`crate::generate`]).

use crate::Output;
use anyhow::{Context, Result, bail};
use clap::Args;
use couler_nl::eval;
use couler_nl::generate::{GenerateConfig, Generator};
use couler_nl::library::Library;
use couler_nl::offline::{OfflinePlanner, PlanError, PlanOptions};
use couler_nl::safety::ImagePolicy;
use couler_nl::{LlmClient, LlmConfig};
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
    /// YAML lists of cases, or directories of them (every `*.yaml` inside,
    /// e.g. tests/nl/ for the dev and holdout sets); each file gets its
    /// own pass rate.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
    /// Exit 1 when any file's pass rate is below this fraction.
    #[arg(long, default_value_t = 0.9)]
    min_pass_rate: f64,
    /// Print only each file's summary (pass rate, invented steps, failures
    /// by category), not its cases.
    #[arg(long)]
    summary: bool,
    /// Score the LLM path instead of the offline planner: one draft per
    /// case (pass@1), with repair rounds, calls and tokens.
    #[arg(long, requires = "llm_url")]
    llm: bool,
    /// The OpenAI-compatible endpoint (e.g. http://127.0.0.1:8080/v1).
    #[arg(long, env = "COULER_LLM_URL")]
    llm_url: Option<String>,
    #[arg(long, env = "COULER_LLM_MODEL", default_value = "default")]
    llm_model: String,
    /// Repair and regeneration rounds per question on the LLM path.
    #[arg(long, default_value_t = 1)]
    llm_rounds: u32,
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
    let mut files = Vec::new();
    for path in &args.files {
        if path.is_dir() {
            let mut inside: Vec<PathBuf> = std::fs::read_dir(path)
                .with_context(|| format!("reading {}", path.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "yaml" || x == "yml"))
                .collect();
            inside.sort();
            files.extend(inside);
        } else {
            files.push(path.clone());
        }
    }
    let compile = |w: &couler_ir::Workflow| compile_everywhere(w);
    let checks = eval::Checks {
        compile: Some(&compile),
    };
    let generator = args
        .llm
        .then(|| -> Result<Generator> {
            let llm = LlmClient::new(LlmConfig {
                base_url: args.llm_url.clone().unwrap_or_default(),
                model: args.llm_model.clone(),
                api_key: std::env::var("COULER_LLM_API_KEY").ok().map(Into::into),
                timeout_secs: 300,
                max_retries: 2,
            })?;
            Ok(Generator::new(
                Some(llm),
                GenerateConfig {
                    max_rounds: args.llm_rounds,
                    ..GenerateConfig::default()
                },
            ))
        })
        .transpose()?;
    let mut ok = true;
    let mut json = Vec::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let cases = eval::load_cases(&text).with_context(|| file.display().to_string())?;
        let (report, llm) = match &generator {
            Some(g) => {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()?;
                let library = Library::builtin();
                let llm = runtime.block_on(eval::llm::run(g, &library, &cases, checks));
                (llm.served(), Some(llm))
            }
            None => (eval::run(&OfflinePlanner::default(), &cases, checks), None),
        };
        ok &= report.pass_rate() >= args.min_pass_rate;
        match args.output {
            Output::Json => json.push(serde_json::json!({
                "file": file.display().to_string(),
                "pass_rate": report.pass_rate(),
                "invented": report.invented(),
                "by_category": report.by_category().iter().map(|(c, n)| (c.as_str(), *n)).collect::<std::collections::BTreeMap<_, _>>(),
                "report": report,
                "llm": llm,
            })),
            Output::Text => {
                if !args.summary {
                    for r in &report.results {
                        let verdict = if r.passed { "pass" } else { "FAIL" };
                        println!("{verdict} {} ({} steps)", r.name, r.steps);
                        for f in &r.failures {
                            println!("     {f}");
                        }
                    }
                }
                println!("{}: {}", file.display(), report.summary());
                if let Some(llm) = &llm {
                    println!("{}: {}", file.display(), llm.table());
                }
            }
        }
    }
    if let Output::Json = args.output {
        println!("{}", serde_json::to_string_pretty(&json)?);
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

/// Every engine's verdict on a draft: compiled, refused by name, or failed.
fn compile_everywhere(workflow: &couler_ir::Workflow) -> Vec<(String, eval::Verdict)> {
    match couler_engines::compile::preview_all(workflow) {
        Ok(all) => all
            .into_iter()
            .map(|(engine, result)| {
                let verdict = match result {
                    Ok(()) => eval::Verdict::Compiled,
                    Err(e @ couler_engines::EngineError::Unsupported { .. }) => {
                        eval::Verdict::Refused(e.to_string())
                    }
                    Err(e) => eval::Verdict::Failed(e.to_string()),
                };
                (engine.to_owned(), verdict)
            })
            .collect(),
        Err(e) => vec![("planning".to_owned(), eval::Verdict::Failed(e))],
    }
}
