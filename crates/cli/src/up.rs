//! `couler up`: API, scheduler and local engine in one process, for a
//! laptop. Creates the database and runs migrations, bootstraps a `dev`
//! tenant with an API key (kept in the data directory so later starts reuse
//! it), and says where everything is.

use anyhow::Context;
use clap::Args;
use secrecy::{ExposeSecret, SecretString};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Args)]
pub struct Up {
    /// Where the API listens.
    #[arg(long, default_value = "127.0.0.1:8080")]
    addr: SocketAddr,
    /// Postgres; the database is created if missing.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "postgres://postgres@127.0.0.1:5432/couler",
        hide_env_values = true
    )]
    database_url: String,
    /// Redis for the shared cache index and rate limits; optional.
    #[arg(
        long,
        env = "REDIS_URL",
        default_value = "redis://127.0.0.1:6379",
        hide_env_values = true
    )]
    redis_url: String,
    /// Local engine working directories, artifacts and the dev API key.
    #[arg(long, default_value = ".couler")]
    data_dir: PathBuf,
    /// The development tenant.
    #[arg(long, default_value = "dev")]
    tenant: String,
}

pub fn up(args: Up) -> anyhow::Result<ExitCode> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(run(args))
}

async fn run(args: Up) -> anyhow::Result<ExitCode> {
    let mut api = couler_api::config::Config::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    api.http.addr = args.addr;
    api.database.url = SecretString::from(args.database_url.clone());
    api.redis.url = SecretString::from(args.redis_url.clone());
    let mut scheduler =
        couler_scheduler::config::Config::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    scheduler.database.url = SecretString::from(args.database_url.clone());
    scheduler.local.data_dir = args.data_dir.join("local");
    scheduler.redis.url = SecretString::from(args.redis_url.clone());
    if std::env::var_os("COULER__TELEMETRY__LOG_FORMAT").is_none() {
        api.telemetry.log_format = "text".into();
    }
    let _telemetry = couler_telemetry::init(&api.telemetry, "couler")?;

    std::fs::create_dir_all(&args.data_dir)
        .with_context(|| format!("creating {}", args.data_dir.display()))?;
    if !api.secrets.is_configured() {
        let secrets = dev_secrets_key(&args.data_dir)?;
        api.secrets = secrets.clone();
        scheduler.secrets = secrets;
    }
    let store = couler_store::Store::connect(&api.database.store_config())
        .await
        .context("opening the database (is Postgres running? `scripts/dev` starts it)")?;
    let key = dev_key(&store, &args.tenant, &args.data_dir).await?;
    let redis = redis_reachable(api.redis.url.expose_secret()).await;

    let shutdown = CancellationToken::new();
    tokio::spawn(couler_telemetry::shutdown_on_signal(shutdown.clone()));
    let listener = tokio::net::TcpListener::bind(args.addr)
        .await
        .with_context(|| format!("listening on {}", args.addr))?;
    let base = format!("http://{}", listener.local_addr()?);
    // The banner is best effort: a closed stdout must not stop the service.
    let banner = {
        let mut b = String::new();
        b.push_str("Couler is up.\n");
        b.push_str(&format!("  API      {base}   (reference: {base}/docs)\n"));
        b.push_str(&format!("  tenant   {}\n", args.tenant));
        b.push_str(&format!("  API key  {key}\n"));
        b.push_str(&format!(
            "  engine   local, working in {}\n",
            scheduler.local.data_dir.display()
        ));
        if !redis {
            b.push_str(&format!(
                "  cache    disabled: Redis is not reachable at {} (runs still work)\n",
                args.redis_url
            ));
        }
        b.push_str(&format!("\nTry:  export COULER_TOKEN={key}\n"));
        b.push_str("      couler submit examples/diamond.yaml --wait\n");
        b.push_str("Stop with Ctrl-C.\n");
        b
    };
    {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
    }

    let api_task = tokio::spawn(couler_api::serve(api, listener, shutdown.clone()));
    let scheduler_task = tokio::spawn(couler_scheduler::serve(scheduler, shutdown.clone()));
    let (a, s) = tokio::join!(api_task, scheduler_task);
    a??;
    s??;
    Ok(ExitCode::SUCCESS)
}

/// The dev tenant's API key: reused from the data directory, or minted.
async fn dev_key(
    store: &couler_store::Store,
    tenant: &str,
    data_dir: &Path,
) -> anyhow::Result<String> {
    let file = data_dir.join(format!("{tenant}.api-key"));
    if let Ok(key) = std::fs::read_to_string(&file) {
        let key = key.trim().to_owned();
        let hash = blake3::hash(key.as_bytes());
        let prefix = key
            .strip_prefix("ck_")
            .and_then(|k| k.split('_').next())
            .unwrap_or_default();
        let mut tx = store.platform().await?;
        let found = couler_store::api_keys::find_by_prefix(&mut tx, prefix).await?;
        tx.commit().await?;
        if let Some((k, stored)) = found
            && stored.as_slice() == hash.as_bytes()
            && k.revoked_at.is_none()
        {
            return Ok(key);
        }
    }
    let made = couler_api::admin::bootstrap_tenant(store, tenant, &["admin"]).await?;
    write_private(&file, &made.api_key)?;
    Ok(made.api_key)
}

/// A platform key for tenant secrets when none is configured: made once and
/// kept in the data directory (only its owner may read it), so secrets
/// written in one session open in the next.
fn dev_secrets_key(data_dir: &Path) -> anyhow::Result<couler_secrets::SecretsConfig> {
    let file = data_dir.join("secrets.key");
    let key = match std::fs::read_to_string(&file) {
        Ok(key) => SecretString::from(key.trim().to_owned()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = couler_secrets::generate_key();
            write_private(&file, key.expose_secret())?;
            key
        }
        Err(e) => return Err(e).with_context(|| format!("reading {}", file.display())),
    };
    Ok(couler_secrets::SecretsConfig {
        keys: [("dev".to_owned(), key)].into_iter().collect(),
        active_key: Some("dev".into()),
    })
}

fn write_private(file: &Path, secret: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(file)
        .with_context(|| format!("writing {}", file.display()))?;
    f.write_all(secret.as_bytes())?;
    Ok(())
}

async fn redis_reachable(url: &str) -> bool {
    let Ok(client) = redis::Client::open(url) else {
        return false;
    };
    let ping = async {
        let mut conn = client.get_multiplexed_async_connection().await.ok()?;
        redis::cmd("PING")
            .query_async::<String>(&mut conn)
            .await
            .ok()
    };
    matches!(
        tokio::time::timeout(Duration::from_secs(1), ping).await,
        Ok(Some(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_dev_secrets_key_is_made_once_and_private() {
        let dir = std::env::temp_dir().join(format!("couler-up-key-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let first = dev_secrets_key(&dir).unwrap();
        let file = dir.join("secrets.key");
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let keyring = couler_secrets::Keyring::from_config(&first)
            .unwrap()
            .unwrap();
        assert_eq!(keyring.active_id(), "dev");
        let again = dev_secrets_key(&dir).unwrap();
        assert_eq!(
            again.keys["dev"].expose_secret(),
            first.keys["dev"].expose_secret()
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
