//! Commands that work on files alone: validate, fmt, hash, schema.

use crate::Output;
use anyhow::{Context, Result};
use clap::ValueEnum;
use couler_ir::{Format, Problems, Workflow};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
pub enum Syntax {
    Yaml,
    Json,
}

#[derive(Serialize)]
struct FileReport<'a> {
    file: String,
    valid: bool,
    problems: &'a [couler_ir::Problem],
}

pub fn validate(files: &[PathBuf], output: Output) -> Result<ExitCode> {
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

pub fn fmt(file: &Path, output: Option<Syntax>) -> Result<ExitCode> {
    let (text, format) = read(file)?;
    let workflow = load_or_report(file, &text, format)?;
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

pub fn hash(file: &Path, output: Output) -> Result<ExitCode> {
    let (text, format) = read(file)?;
    let workflow = load_or_report(file, &text, format)?;
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

pub fn schema() -> ExitCode {
    print!("{}", couler_ir::schema::schema_json());
    ExitCode::SUCCESS
}

pub fn print_problems(file: &Path, problems: &Problems) {
    for p in problems.iter() {
        let path = if p.path.is_empty() { "/" } else { &p.path };
        println!("{}:{path}: {}: {}", file.display(), p.code, p.message);
    }
}

/// Reads and validates a workflow file: the workflow with its text and
/// syntax, or — its problems printed — the exit code to end with.
pub fn workflow(file: &Path) -> Result<Result<(Workflow, String, Format), ExitCode>> {
    let (text, format) = read(file)?;
    Ok(match couler_ir::load(&text, format) {
        Ok(workflow) => Ok((workflow, text, format)),
        Err(problems) => {
            print_problems(file, &problems);
            Err(ExitCode::FAILURE)
        }
    })
}

/// Loads a workflow, printing its problems and failing when it is invalid.
fn load_or_report(file: &Path, text: &str, format: Format) -> Result<Workflow> {
    couler_ir::load(text, format).map_err(|problems| {
        print_problems(file, &problems);
        anyhow::anyhow!("{} is not a valid workflow", file.display())
    })
}

/// Reads a file (or standard input for `-`) and decides its syntax.
pub fn read(file: &Path) -> Result<(String, Format)> {
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
