use clap::Parser;
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
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = couler_scheduler::config::Config::load(cli.config.as_deref())?;
    let _telemetry = couler_telemetry::init(&config.telemetry, "couler-scheduler")?;
    let shutdown = tokio_util::sync::CancellationToken::new();
    tokio::spawn(couler_telemetry::shutdown_on_signal(shutdown.clone()));
    couler_scheduler::serve(config, shutdown).await
}
