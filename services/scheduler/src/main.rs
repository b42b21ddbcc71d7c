use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

/// mimalloc: compiling big workflows and serving many small requests
/// allocate heavily, and glibc's allocator spends a fifth of that time on
/// its own bookkeeping (see the compile benchmark in the README).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Couler's scheduler.
#[derive(Parser)]
#[command(name = "couler-scheduler", version)]
struct Cli {
    /// A TOML config file; `COULER__SECTION__KEY` variables override it.
    #[arg(long, env = "COULER_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Claim and drive runs (the default).
    Serve,
    /// Print every environment variable the configuration reads, one per
    /// line (`<KEY>`: a key the operator names).
    EnvVars,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Command::EnvVars) = cli.command {
        let config = couler_scheduler::config::Config::env_vars()?;
        print!(
            "{}",
            couler_telemetry::config_env::listing(config, &Cli::command())
        );
        return Ok(());
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = couler_scheduler::config::Config::load(cli.config.as_deref())?;
    let _telemetry = couler_telemetry::init(&config.telemetry, "couler-scheduler")?;
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(couler_telemetry::shutdown_on_signal(shutdown.clone()));
    couler_scheduler::serve(config, shutdown).await
}
