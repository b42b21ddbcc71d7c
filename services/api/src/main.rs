use clap::{Parser, Subcommand};
use std::path::PathBuf;

/// Couler's HTTP API.
#[derive(Parser)]
#[command(name = "couler-api", version)]
struct Cli {
    /// A TOML config file; `COULER__SECTION__KEY` variables override it.
    #[arg(long, env = "COULER_CONFIG")]
    config: Option<PathBuf>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Serve the API (the default).
    Serve,
    /// Print the OpenAPI document.
    Openapi,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    if let Some(Command::Openapi) = cli.command {
        print!("{}", couler_api::app::openapi_json());
        return Ok(());
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let config = couler_api::config::Config::load(cli.config.as_deref())?;
    let _telemetry = couler_api::telemetry::init(&config.telemetry, "couler-api")?;
    couler_api::run(config).await
}
