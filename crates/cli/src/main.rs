//! `couler`: validate, format and hash workflow files.

use anyhow::{Context, Result};
use clap::{Parser, Subcommand, ValueEnum};
use couler_ir::{Format, Problems, Workflow};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "couler",
    version,
    about = "Couler: one workflow IR, every engine"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check workflow files and print every problem (exit 1 on any).
    Validate {
        /// Files to check (`-` reads standard input).
        #[arg(required = true)]
        files: Vec<PathBuf>,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Print a workflow in canonical form.
    Fmt {
        file: PathBuf,
        /// Output syntax (default: the input's).
        #[arg(long, value_enum)]
        output: Option<Syntax>,
    },
    /// Print the workflow digest and every step's digest.
    Hash {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Print the IR's JSON Schema.
    Schema,
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Text,
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum Syntax {
    Yaml,
    Json,
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Validate { files, output } => validate(&files, output),
        Command::Fmt { file, output } => {
            let (text, format) = read(&file)?;
            let workflow = load_or_report(&file, &text, format)?;
            let syntax = output.unwrap_or(match format {
                Format::Json => Syntax::Json,
                Format::Yaml => Syntax::Yaml,
            });
            match syntax {
                Syntax::Json => println!("{}", serde_json::to_string_pretty(&workflow)?),
                Syntax::Yaml => print!("{}", couler_ir::hash::canonical_yaml(&workflow)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Hash { file, output } => {
            let (text, format) = read(&file)?;
            let workflow = load_or_report(&file, &text, format)?;
            let hashes = couler_ir::hash::hashes(&workflow);
            match output {
                Output::Json => println!("{}", serde_json::to_string_pretty(&hashes)?),
                Output::Text => {
                    println!("workflow  {}", hashes.workflow);
                    for (name, digest) in &hashes.steps {
                        println!("step      {digest}  {name}");
                    }
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Schema => {
            print!("{}", couler_ir::schema::schema_json());
            Ok(ExitCode::SUCCESS)
        }
    }
}

#[derive(Serialize)]
struct FileReport<'a> {
    file: String,
    valid: bool,
    problems: &'a [couler_ir::Problem],
}

fn validate(files: &[PathBuf], output: Output) -> Result<ExitCode> {
    let mut results = Vec::with_capacity(files.len());
    for file in files {
        let (text, format) = read(file)?;
        results.push((file, couler_ir::load(&text, format)));
    }
    let failed = results.iter().filter(|(_, r)| r.is_err()).count();
    match output {
        Output::Json => {
            let reports: Vec<FileReport> = results
                .iter()
                .map(|(file, r)| FileReport {
                    file: file.display().to_string(),
                    valid: r.is_ok(),
                    problems: r.as_ref().err().map_or(&[][..], |p| &p.0[..]),
                })
                .collect();
            println!("{}", serde_json::to_string_pretty(&reports)?);
        }
        Output::Text => {
            for (file, result) in &results {
                match result {
                    Ok(w) => println!(
                        "{}: ok ({} steps)",
                        file.display(),
                        w.steps.len() + w.on_exit.len()
                    ),
                    Err(problems) => print_problems(file, problems),
                }
            }
        }
    }
    Ok(if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn print_problems(file: &Path, problems: &Problems) {
    for p in problems.iter() {
        let path = if p.path.is_empty() { "/" } else { &p.path };
        println!("{}:{path}: {}: {}", file.display(), p.code, p.message);
    }
}

/// Loads a workflow, printing its problems and failing when it is invalid.
fn load_or_report(file: &Path, text: &str, format: Format) -> Result<Workflow> {
    couler_ir::load(text, format).map_err(|problems| {
        print_problems(file, &problems);
        anyhow::anyhow!("{} is not a valid workflow", file.display())
    })
}

/// Reads a file (or standard input for `-`) and decides its syntax.
fn read(file: &Path) -> Result<(String, Format)> {
    let text = if file == Path::new("-") {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .context("reading standard input")?;
        text
    } else {
        std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?
    };
    let format = Format::from_path(file).unwrap_or_else(|| Format::detect(&text));
    Ok((text, format))
}
