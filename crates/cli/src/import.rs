//! `couler import argo FILE`: another engine's workflow as IR. The IR goes
//! to standard output in canonical form; every feature that could not be
//! carried over is a warning line on standard error. Exits 1 when nothing
//! could be imported.

use crate::local::{self, Syntax};
use anyhow::Result;
use clap::{Args, ValueEnum};
use couler_engines::import::{ImportError, Unsupported};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// The engines Couler imports from.
#[derive(Clone, Copy, ValueEnum)]
pub enum Source {
    Argo,
}

#[derive(Args)]
pub struct ImportArgs {
    /// The engine the file was written for.
    #[arg(value_enum)]
    engine: Source,
    /// The workflow file (`-` reads standard input).
    file: PathBuf,
    #[arg(long, value_enum, default_value_t = Syntax::Yaml)]
    output: Syntax,
}

pub fn import(args: ImportArgs) -> Result<ExitCode> {
    let (text, _) = local::read(&args.file)?;
    let result = match args.engine {
        Source::Argo => couler_engines::import::argo(&text),
    };
    match result {
        Ok(imported) => {
            warn(&args.file, &imported.unsupported);
            match args.output {
                Syntax::Yaml => print!("{}", couler_ir::hash::canonical_yaml(&imported.workflow)),
                Syntax::Json => println!("{}", serde_json::to_string_pretty(&imported.workflow)?),
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            if let ImportError::Nothing { unsupported } = &e {
                warn(&args.file, unsupported);
            }
            eprintln!("error: {}: {e}", args.file.display());
            Ok(ExitCode::FAILURE)
        }
    }
}

fn warn(file: &Path, unsupported: &[Unsupported]) {
    for u in unsupported {
        eprintln!("warning: {}:{u}", file.display());
    }
}
