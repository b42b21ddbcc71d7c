//! `couler compile`: a workflow file as an engine's own manifest (Argo
//! `Workflow`, Tekton `Pipeline` + `PipelineRun`, Airflow DAG file, KFP
//! `PipelineSpec`), planned as a run would be (without the cache).

use crate::{key_value, local};
use anyhow::{Result, bail};
use clap::{Args, ValueEnum};
use couler_engines::RunSpec;
use couler_optimizer::{Facts, Pipeline};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum)]
pub enum Engine {
    Argo,
    Tekton,
    Airflow,
    Kfp,
}

impl Engine {
    fn name(self) -> &'static str {
        match self {
            Engine::Argo => "argo",
            Engine::Tekton => "tekton",
            Engine::Airflow => "airflow",
            Engine::Kfp => "kfp",
        }
    }
}

#[derive(Args)]
pub struct CompileArgs {
    /// The workflow file (`-` reads standard input).
    file: PathBuf,
    #[arg(long, value_enum)]
    engine: Engine,
    /// A workflow parameter (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE", value_parser = key_value)]
    params: Vec<(String, String)>,
    /// Argo only: also print a `CronWorkflow` firing the workflow on its
    /// `schedule:` inside Argo, without Couler (Couler itself fires
    /// schedules as ordinary runs; this is an export).
    #[arg(long)]
    native_schedule: bool,
}

pub fn compile(args: CompileArgs) -> Result<ExitCode> {
    let (workflow, _, _) = match local::workflow(&args.file)? {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let facts = Facts {
        parameters: args.params.into_iter().collect(),
        ..Default::default()
    };
    let plan = match Pipeline::default().plan(workflow, &facts, |_, f| f()) {
        Ok(plan) => plan,
        Err(e) => bail!("{}: {e}", args.file.display()),
    };
    let preview = RunSpec::new("preview", "preview", 1);
    let mut compiled = couler_engines::compile::compile(args.engine.name(), &plan, &preview);
    if args.native_schedule {
        if !matches!(args.engine, Engine::Argo) {
            bail!("--native-schedule exports an Argo CronWorkflow: use it with --engine argo");
        }
        if let Ok(manifest) = &mut compiled {
            match couler_engines::argo::native_schedule(&plan, &preview) {
                Ok(Some(cron)) => manifest.files.push(cron),
                Ok(None) => bail!(
                    "{}: --native-schedule needs a workflow with `schedule:`",
                    args.file.display()
                ),
                Err(e) => compiled = Err(e),
            }
        }
    }
    match compiled {
        Ok(manifest) => {
            print!("{}", manifest.text());
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("{}: {e}", args.file.display());
            Ok(ExitCode::FAILURE)
        }
    }
}
