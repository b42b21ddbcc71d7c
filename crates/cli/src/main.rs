//! `couler`: validate, format and hash workflow files; submit them to a
//! Couler API and follow their runs.

mod cache;
mod client;
mod compile;
mod format;
mod generate;
mod import;
mod local;
mod nl;
mod plan;
mod progress;
mod runs;
mod schedules;
mod secrets;
mod sse;
mod submit;
mod triggers;
mod up;
mod watch;
mod wire;

use anyhow::Result;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;
use std::process::ExitCode;

/// mimalloc: compiling big workflows and serving many small requests
/// allocate heavily, and glibc's allocator spends a fifth of that time on
/// its own bookkeeping (see the compile benchmark in the README).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "couler",
    version,
    about = "Couler: one workflow IR, every engine"
)]
struct Cli {
    #[command(flatten)]
    server: Server,
    #[command(subcommand)]
    command: Command,
}

/// Where the API is and who is asking.
#[derive(Args)]
struct Server {
    /// The Couler API's address.
    #[arg(
        long,
        global = true,
        env = "COULER_SERVER",
        default_value = "http://127.0.0.1:8080"
    )]
    server: String,
    /// A JWT or an API key (`ck_…`).
    #[arg(long, global = true, env = "COULER_TOKEN", hide_env_values = true)]
    token: Option<String>,
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
        output: Option<local::Syntax>,
    },
    /// Print the workflow digest and every step's digest.
    Hash {
        file: PathBuf,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Print the IR's JSON Schema.
    Schema,
    /// Print a workflow file as an engine's manifest.
    Compile(compile::CompileArgs),
    /// Convert another engine's workflow (Argo) into IR; what cannot be
    /// expressed is reported.
    Import(import::ImportArgs),
    /// Run API, scheduler and local engine in one process (development).
    Up(up::Up),
    /// Store a workflow file and run it; prints the run id.
    Submit(submit::Submit),
    /// Show what the optimizer would do with a workflow file, and why.
    Plan(plan::PlanArgs),
    /// Draft a workflow from a description in English or Chinese with the
    /// API (or `--offline`), or revise a draft (`--feedback GEN_ID`);
    /// prints the IR (explanations and warnings go to standard error).
    Generate(nl::GenerateArgs),
    /// Run the natural-language planner over a file of cases and print the
    /// pass rate.
    NlEval(nl::EvalArgs),
    /// List, inspect, follow, cancel and retry runs.
    Runs {
        #[command(subcommand)]
        command: runs::Command,
    },
    /// What the shared cache would reuse, its statistics, invalidation.
    Cache {
        #[command(subcommand)]
        command: cache::Command,
    },
    /// The tenant's secrets for steps: set (values from standard input or
    /// files), list, delete, audit.
    Secrets {
        #[command(subcommand)]
        command: secrets::Command,
    },
    /// A workflow's schedules: list, get, preview, pause, resume, trigger,
    /// backfill, ticks.
    Schedules {
        #[command(subcommand)]
        command: schedules::Command,
    },
    /// A workflow's webhook triggers: list, get, create, rotate, delete,
    /// deliveries.
    Triggers {
        #[command(subcommand)]
        command: triggers::Command,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Text,
    Json,
}

impl Command {
    /// What the command was asked to print: its errors are printed the
    /// same way (as JSON documents on standard error with `--output json`).
    fn output(&self) -> Output {
        match self {
            Command::Validate { output, .. } | Command::Hash { output, .. } => *output,
            Command::Plan(args) => args.output,
            Command::NlEval(args) => args.output,
            Command::Runs { command } => command.output(),
            Command::Cache { command } => command.output(),
            Command::Secrets { command } => command.output(),
            Command::Schedules { command } => command.output(),
            Command::Triggers { command } => command.output(),
            _ => Output::Text,
        }
    }
}

/// Parses `KEY=VALUE`.
fn key_value(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((k, v)) if !k.is_empty() => Ok((k.to_owned(), v.to_owned())),
        _ => Err(format!("{s:?} is not KEY=VALUE")),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let output = cli.command.output();
    match run(cli) {
        Ok(code) => code,
        Err(e) => {
            match output {
                Output::Text => eprintln!("error: {e:#}"),
                Output::Json => eprintln!("{}", client::error_document(&e)),
            }
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Validate { files, output } => local::validate(&files, output),
        Command::Fmt { file, output } => local::fmt(&file, output),
        Command::Hash { file, output } => local::hash(&file, output),
        Command::Schema => Ok(local::schema()),
        Command::Compile(args) => compile::compile(args),
        Command::Import(args) => import::import(args),
        Command::Up(args) => up::up(args),
        Command::Generate(args) if args.offline => nl::generate(args),
        Command::Generate(args) => {
            remote(
                &cli.server,
                |c| async move { generate::online(&c, args).await },
            )
        }
        Command::NlEval(args) => nl::eval(args),
        Command::Submit(args) => remote(
            &cli.server,
            |c| async move { submit::submit(&c, args).await },
        ),
        Command::Plan(args) => remote(&cli.server, |c| async move { plan::plan(&c, args).await }),
        Command::Runs { command } => {
            remote(&cli.server, |c| async move { runs::run(&c, command).await })
        }
        Command::Cache { command } => {
            remote(
                &cli.server,
                |c| async move { cache::run(&c, command).await },
            )
        }
        Command::Secrets { command } => {
            remote(
                &cli.server,
                |c| async move { secrets::run(&c, command).await },
            )
        }
        Command::Schedules { command } => {
            remote(
                &cli.server,
                |c| async move { schedules::run(&c, command).await },
            )
        }
        Command::Triggers { command } => {
            remote(
                &cli.server,
                |c| async move { triggers::run(&c, command).await },
            )
        }
    }
}

/// Runs a command that talks to the API on a single-threaded runtime.
fn remote<F, Fut>(server: &Server, command: F) -> Result<ExitCode>
where
    F: FnOnce(client::Client) -> Fut,
    Fut: Future<Output = Result<ExitCode>>,
{
    let client = client::Client::new(&server.server, server.token.clone())?;
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?
        .block_on(command(client))
}
