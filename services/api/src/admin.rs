//! Operator commands that work on the database directly: bootstrap the
//! first tenant and key before anyone can call the API, and mint tokens
//! signed with the configured HS256 secret (development and benchmarks).

use crate::auth::mint_api_key;
use crate::config::Config;
use anyhow::Context;
use couler_store::Store;
use couler_store::api_keys::NewApiKey;
use couler_store::tenants::{NewTenant, Quotas};
use secrecy::ExposeSecret;

/// A tenant with an admin API key, for bootstrapping.
pub struct Bootstrapped {
    pub tenant: couler_store::tenants::Tenant,
    pub api_key: String,
}

/// Creates `name` (or finds it) and issues it a new API key with `roles`.
pub async fn bootstrap_tenant(
    store: &Store,
    name: &str,
    roles: &[&str],
) -> anyhow::Result<Bootstrapped> {
    anyhow::ensure!(
        couler_ir::names::is_dns_label(name),
        "tenant names are DNS-1123 labels"
    );
    let mut tx = store.platform().await?;
    let tenant = match couler_store::tenants::get_by_name(&mut tx, name).await? {
        Some(t) => t,
        None => {
            let new = NewTenant {
                name: name.to_owned(),
                display_name: name.to_owned(),
                engine: "local".into(),
                share_cache: true,
                quotas: Quotas::default(),
            };
            couler_store::tenants::create(&mut tx, &new).await?
        }
    };
    let minted = mint_api_key();
    let new = NewApiKey {
        name: "bootstrap".into(),
        prefix: minted.prefix,
        key_hash: minted.hash,
        roles: roles.iter().map(|r| r.to_string()).collect(),
        created_by: "couler-api bootstrap".into(),
        expires_at: None,
    };
    couler_store::api_keys::create(&mut tx, tenant.id, &new).await?;
    tx.commit().await?;
    Ok(Bootstrapped {
        tenant,
        api_key: minted.secret,
    })
}

/// Re-wraps every data key not under the active platform key (see
/// [`couler_store::secrets::rewrap_all`]).
pub async fn rewrap_secrets(
    config: &Config,
    batch: i64,
) -> anyhow::Result<couler_store::secrets::Rewrapped> {
    let keyring = couler_secrets::Keyring::from_config(&config.secrets)?
        .context("no secrets.keys configured: nothing to re-wrap with")?;
    let store = Store::connect(&config.database.store_config()).await?;
    Ok(couler_store::secrets::rewrap_all(&store, &keyring, batch).await?)
}

/// Signs a token with the configured HS256 secret.
pub fn mint_token(
    config: &Config,
    subject: &str,
    tenant: Option<&str>,
    roles: &[String],
    ttl: std::time::Duration,
) -> anyhow::Result<String> {
    let secret = config
        .auth
        .jwt
        .hs256_secret
        .as_ref()
        .context("minting needs auth.jwt.hs256_secret (COULER__AUTH__JWT__HS256_SECRET)")?;
    let now = chrono::Utc::now().timestamp();
    let mut claims = serde_json::json!({
        "sub": subject,
        "roles": roles,
        "iat": now,
        "exp": now + ttl.as_secs() as i64,
    });
    if let Some(t) = tenant {
        claims["tenant"] = t.into();
    }
    if let Some(iss) = &config.auth.jwt.issuer {
        claims["iss"] = iss.as_str().into();
    }
    if let Some(aud) = &config.auth.jwt.audience {
        claims["aud"] = aud.as_str().into();
    }
    let key = jsonwebtoken::EncodingKey::from_secret(secret.expose_secret().as_bytes())?;
    Ok(jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &key,
    )?)
}
