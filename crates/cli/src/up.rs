//! `couler up`: API, scheduler and local engine in one process, for a
//! laptop. Creates the database and runs migrations, bootstraps a `dev`
//! tenant with an API key (kept in the data directory so later starts reuse
//! it), and says where everything is.

use anyhow::Context;
use clap::Args;
use couler_engines::local::{ClosedDir, closed_ancestor, tenant_uids, unreachable_message};
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
    /// Local engine working directories, artifacts and the dev API key
    /// [default: .couler]. Running as root, steps run as their tenant's
    /// own uid and must reach the engine's directory (`<data dir>/local`):
    /// when the default is below a directory other users cannot search
    /// (a clone under /root), the engine works in
    /// /var/lib/couler/<project>-<hash of that path> instead, the same one
    /// on every start from there; a given --data-dir they cannot reach is
    /// refused, saying how to fix it.
    #[arg(long)]
    data_dir: Option<PathBuf>,
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

/// `couler up`'s data directory when none is given.
const DATA_DIR: &str = ".couler";
/// Where the engine works when the default data directory is out of step
/// users' reach.
const REACHABLE_ROOT: &str = "/var/lib/couler";

/// Where the local engine works, and why not in the data directory.
#[derive(Debug, PartialEq, Eq)]
struct EngineDir {
    path: PathBuf,
    /// The directory it would have been, and what stands in the way.
    instead_of: Option<(PathBuf, ClosedDir)>,
}

/// `<data dir>/local`, unless steps run as tenant uids (`tenant_uids`)
/// that could not reach it: then, for the `default` data directory, a
/// directory of `reachable_root` named after the project and keyed by the
/// path (so restarts reuse it); for a given one, an error saying what to
/// change.
fn engine_dir(
    given: Option<&Path>,
    default: &Path,
    tenant_uids: bool,
    reachable_root: &Path,
) -> anyhow::Result<EngineDir> {
    let wanted = given.unwrap_or(default).join("local");
    let closed = tenant_uids.then(|| closed_ancestor(&wanted)).flatten();
    let Some(closed) = closed else {
        return Ok(EngineDir {
            path: wanted,
            instead_of: None,
        });
    };
    if let Some(given) = given {
        anyhow::bail!(
            "{}",
            unreachable_message(&format!("--data-dir {}", given.display()), &closed)
        );
    }
    let wanted = std::path::absolute(&wanted)?;
    let key = blake3::hash(wanted.as_os_str().as_encoded_bytes()).to_hex();
    let project =
        wanted
            .ancestors()
            .nth(2)
            .and_then(Path::file_name)
            .map_or("couler".into(), |n| {
                n.to_string_lossy()
                    .replace(|c: char| !c.is_ascii_alphanumeric() && c != '-', "_")
            });
    let path = reachable_root.join(format!("{project}-{}", &key[..16]));
    if let Some(also) = closed_ancestor(&path) {
        anyhow::bail!(
            "{}; nor can they reach {}: {also}",
            unreachable_message(&format!("{}", wanted.display()), &closed),
            path.display()
        );
    }
    Ok(EngineDir {
        path,
        instead_of: Some((wanted, closed)),
    })
}

async fn run(args: Up) -> anyhow::Result<ExitCode> {
    let mut api = couler_api::config::Config::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    api.http.addr = args.addr;
    api.database.url = SecretString::from(args.database_url.clone());
    api.redis.url = SecretString::from(args.redis_url.clone());
    let mut scheduler =
        couler_scheduler::config::Config::load(None).map_err(|e| anyhow::anyhow!("{e}"))?;
    scheduler.database.url = SecretString::from(args.database_url.clone());
    let data_dir = args
        .data_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from(DATA_DIR));
    let engine = engine_dir(
        args.data_dir.as_deref(),
        Path::new(DATA_DIR),
        tenant_uids(&scheduler.local.sandbox),
        Path::new(REACHABLE_ROOT),
    )?;
    if engine.instead_of.is_some() {
        make_reachable(&engine.path)?;
    }
    scheduler.local.data_dir = engine.path.clone();
    scheduler.redis.url = SecretString::from(args.redis_url.clone());
    if std::env::var_os("COULER__TELEMETRY__LOG_FORMAT").is_none() {
        api.telemetry.log_format = "text".into();
    }
    let _telemetry = couler_telemetry::init(&api.telemetry, "couler")?;

    std::fs::create_dir_all(&data_dir)
        .with_context(|| format!("creating {}", data_dir.display()))?;
    if !api.secrets.is_configured() {
        let secrets = dev_secrets_key(&data_dir)?;
        api.secrets = secrets.clone();
        scheduler.secrets = secrets;
    }
    let store = couler_store::Store::connect(&api.database.store_config())
        .await
        .context("opening the database (is Postgres running? `scripts/dev` starts it)")?;
    let key = dev_key(&store, &args.tenant, &data_dir).await?;
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
        if let Some((wanted, closed)) = &engine.instead_of {
            b.push_str(&format!(
                "           not in {}: {closed}, and steps run as their tenant's own user\n",
                wanted.display()
            ));
        }
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

/// Makes `dir` and its parent searchable by all users: a umask of 077
/// would otherwise close them.
fn make_reachable(dir: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for at in dir.parent().into_iter().chain([dir]) {
        std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o755))
            .with_context(|| format!("opening {} to step users", at.display()))?;
    }
    Ok(())
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
    fn an_engine_directory_step_users_cannot_reach_moves_or_is_refused() {
        let tmp = std::env::temp_dir().join(format!("couler-up-reach-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        let closed = tmp.join("closed");
        let project = closed.join("my project");
        std::fs::create_dir_all(&project).unwrap();
        std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o700)).unwrap();
        let reachable = tmp.join("var-lib-couler");
        // The default data directory, `.couler` of the current directory
        // (the crate's, which is reachable).
        let here = engine_dir(None, Path::new(".couler"), true, &reachable).unwrap();
        assert_eq!(here.path, Path::new(".couler/local"));
        assert_eq!(here.instead_of, None);
        // A default below a closed directory moves, to the same place on
        // every start, and says why.
        let default = project.join(".couler");
        let moved = engine_dir(None, &default, true, &reachable).unwrap();
        let again = engine_dir(None, &default, true, &reachable).unwrap();
        assert_eq!(moved, again);
        assert!(moved.path.starts_with(&reachable), "{moved:?}");
        let name = moved
            .path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(name.starts_with("my_project-"), "{name}");
        let (wanted, why) = moved.instead_of.unwrap();
        assert_eq!(wanted, project.join(".couler/local"));
        assert_eq!(why.path, closed);
        // A given one is refused, naming the directory and the fix.
        let given = project.join("data");
        let refused = engine_dir(Some(&given), &default, true, &reachable)
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains(&format!("chmod o+x {}", closed.display())),
            "{refused}"
        );
        // Steps running as the engine's own user reach whatever it made.
        let kept = engine_dir(Some(&given), &default, false, &reachable).unwrap();
        assert_eq!(kept.path, given.join("local"));
        std::fs::remove_dir_all(&tmp).unwrap();
    }

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
