use clap::{CommandFactory, Parser, Subcommand};
use std::path::PathBuf;

/// mimalloc: compiling big workflows and serving many small requests
/// allocate heavily, and glibc's allocator spends a fifth of that time on
/// its own bookkeeping (see the compile benchmark in the README).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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
    /// Print every environment variable the configuration reads, one per
    /// line (`<KEY>`: a key the operator names).
    EnvVars,
    /// Create a tenant if needed and print a new admin API key for it.
    Bootstrap { tenant: String },
    /// Re-wrap every secret's data key under `secrets.active_key`, in
    /// batches, while the service runs; then the old keys may be removed
    /// from the configuration.
    RewrapSecrets {
        /// Secrets per transaction.
        #[arg(long, default_value_t = 500)]
        batch: i64,
    },
    /// Print a JWT signed with the configured HS256 secret.
    MintToken {
        #[arg(long)]
        sub: String,
        #[arg(long)]
        tenant: Option<String>,
        /// viewer, editor, admin or platform-admin (repeatable).
        #[arg(long = "role", required = true)]
        roles: Vec<String>,
        /// Lifetime in seconds.
        #[arg(long, default_value_t = 3600)]
        ttl: u64,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let _ = rustls::crypto::ring::default_provider().install_default();
    let load = || couler_api::config::Config::load(cli.config.as_deref());
    match cli.command.unwrap_or(Command::Serve) {
        Command::Openapi => print!("{}", couler_api::app::openapi_json()),
        Command::EnvVars => {
            let config = couler_api::config::Config::env_vars()?;
            print!(
                "{}",
                couler_telemetry::config_env::listing(config, &Cli::command())
            );
        }
        Command::MintToken {
            sub,
            tenant,
            roles,
            ttl,
        } => {
            let config = load()?;
            let ttl = std::time::Duration::from_secs(ttl);
            println!(
                "{}",
                couler_api::admin::mint_token(&config, &sub, tenant.as_deref(), &roles, ttl)?
            );
        }
        Command::Bootstrap { tenant } => {
            let config = load()?;
            let store = couler_store::Store::connect(&config.database.store_config()).await?;
            let done = couler_api::admin::bootstrap_tenant(&store, &tenant, &["admin"]).await?;
            println!("tenant  {} ({})", done.tenant.name, done.tenant.id);
            println!("api key {}", done.api_key);
        }
        Command::RewrapSecrets { batch } => {
            let config = load()?;
            let done = couler_api::admin::rewrap_secrets(&config, batch).await?;
            println!(
                "re-wrapped {} secret(s) under key {:?} in {} batch(es)",
                done.rewrapped,
                config
                    .secrets
                    .active_key
                    .as_deref()
                    .unwrap_or("(the only key)"),
                done.batches
            );
        }
        Command::Serve => {
            let config = load()?;
            let _telemetry = couler_telemetry::init(&config.telemetry, "couler-api")?;
            couler_api::run(config).await?;
        }
    }
    Ok(())
}
