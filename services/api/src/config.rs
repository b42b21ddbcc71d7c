//! Typed configuration: defaults, then an optional TOML file, then
//! `COULER__SECTION__KEY` environment variables (and `DATABASE_URL`,
//! `REDIS_URL` as the usual shorthands). Secrets are wrapped so they never
//! print.

use secrecy::SecretString;
use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub http: HttpConfig,
    pub database: couler_store::DatabaseConfig,
    pub redis: couler_cache::RedisSettings,
    pub auth: AuthConfig,
    pub quotas: QuotaCaps,
    pub telemetry: couler_telemetry::TelemetryConfig,
    pub cache: couler_cache::CacheSettings,
    /// The LLM natural-language generation asks; none: every draft comes
    /// from the offline planner.
    pub llm: Option<couler_nl::LlmConfig>,
    pub generate: GenerateSettings,
    /// Platform keys for tenant secrets; none: `/v1/secrets` writes answer
    /// 503 `secrets_not_configured`. Webhook triggers derive their HMAC
    /// secrets from the same keys.
    pub secrets: couler_secrets::SecretsConfig,
    pub hooks: HooksConfig,
}

/// Webhook triggers (`/v1/hooks/{public_id}`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HooksConfig {
    /// The largest delivery any trigger accepts; a trigger may set a lower
    /// limit of its own. At most 25 MiB (GitHub's own cap).
    pub max_body_bytes: usize,
}

impl Default for HooksConfig {
    fn default() -> Self {
        HooksConfig {
            max_body_bytes: 1 << 20,
        }
    }
}

/// Natural-language generation (`/v1/generations`).
#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct GenerateSettings {
    /// Image prefixes or globs generated steps may use; empty: any image.
    /// A tenant may narrow it with its own `allowed_images`.
    pub allowed_images: Vec<String>,
    /// Bounds of one request (rounds, baseline score, tokens, references).
    pub limits: couler_nl::generate::GenerateConfig,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    pub addr: SocketAddr,
    /// Largest accepted request body.
    pub body_limit_bytes: usize,
    pub request_timeout_secs: u64,
    /// Origins allowed to call the API from browsers (web portals); empty: none.
    pub cors_origins: Vec<String>,
}

impl Default for HttpConfig {
    fn default() -> Self {
        HttpConfig {
            addr: SocketAddr::from(([127, 0, 0, 1], 8080)),
            body_limit_bytes: 4 << 20,
            request_timeout_secs: 30,
            cors_origins: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct AuthConfig {
    pub jwt: JwtConfig,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct JwtConfig {
    /// Shared secret for HS256 tokens.
    pub hs256_secret: Option<SecretString>,
    /// PEM files with RSA (RS256) or EC P-256 (ES256) public keys.
    pub public_key_files: Vec<PathBuf>,
    /// A JWKS file; keys are chosen by the token's `kid`.
    pub jwks_file: Option<PathBuf>,
    pub issuer: Option<String>,
    pub audience: Option<String>,
    /// Clock skew tolerated on `exp` and `nbf`.
    pub leeway_secs: u64,
}

impl Default for JwtConfig {
    fn default() -> Self {
        JwtConfig {
            hs256_secret: None,
            public_key_files: Vec::new(),
            jwks_file: None,
            issuer: None,
            audience: None,
            leeway_secs: 30,
        }
    }
}

/// The most a tenant admin may raise their own quotas to.
#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct QuotaCaps {
    pub max_concurrent_runs: i32,
    pub max_queued_runs: i32,
    pub requests_per_second: i32,
}

impl Default for QuotaCaps {
    fn default() -> Self {
        QuotaCaps {
            max_concurrent_runs: 1_000,
            max_queued_runs: 1_000_000,
            requests_per_second: 10_000,
        }
    }
}

const SECTIONS: &[&str] = &[
    "http",
    "database",
    "redis",
    "auth",
    "quotas",
    "telemetry",
    "cache",
    "llm",
    "generate",
    "secrets",
    "hooks",
];

impl Config {
    /// Layers defaults, the file (if given) and the environment.
    pub fn load(file: Option<&Path>) -> Result<Config, Box<figment::Error>> {
        couler_telemetry::load_config(file, SECTIONS)
    }

    /// Every environment variable [`Config::load`] reads, from these types.
    pub fn env_vars() -> Result<Vec<String>, couler_telemetry::config_env::TraceError> {
        couler_telemetry::config_env::env_vars::<Config>(SECTIONS)
    }
}

#[cfg(test)]
#[allow(clippy::result_large_err)] // figment's test jail returns its own error type
mod tests {
    use super::*;
    use secrecy::ExposeSecret;

    #[test]
    fn secrets_never_print() {
        let mut config = Config::default();
        config.auth.jwt.hs256_secret = Some(SecretString::from("super-secret-value"));
        config.database.url = SecretString::from("postgres://u:hunter2@db/couler");
        let printed = format!("{config:?}");
        assert!(!printed.contains("super-secret-value"), "{printed}");
        assert!(!printed.contains("hunter2"), "{printed}");
    }

    #[test]
    fn environment_overrides_file_and_defaults() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "couler.toml",
                "[http]\naddr = \"0.0.0.0:9000\"\nbody_limit_bytes = 1024\n",
            )?;
            jail.set_env("COULER__HTTP__BODY_LIMIT_BYTES", "2048");
            jail.set_env("REDIS_URL", "redis://cache:6379");
            let config = Config::load(Some(Path::new("couler.toml"))).expect("config loads");
            assert_eq!(config.http.addr.port(), 9000);
            assert_eq!(config.http.body_limit_bytes, 2048);
            assert_eq!(config.redis.url.expose_secret(), "redis://cache:6379");
            assert_eq!(config.http.request_timeout_secs, 30);
            Ok(())
        });
    }

    #[test]
    fn llm_and_generate_sections_load() {
        figment::Jail::expect_with(|jail| {
            jail.create_file(
                "couler.toml",
                "[llm]\nbase_url = \"http://127.0.0.1:9/v1\"\nmodel = \"m\"\n\n[generate]\nallowed_images = [\"python:3.12\"]\n\n[generate.limits]\nmax_rounds = 1\n",
            )?;
            jail.set_env("COULER__GENERATE__LIMITS__MAX_TOKENS", "500");
            let config = Config::load(Some(Path::new("couler.toml"))).expect("config loads");
            assert_eq!(config.llm.expect("llm section").model, "m");
            assert_eq!(config.generate.allowed_images, ["python:3.12"]);
            assert_eq!(config.generate.limits.max_rounds, 1);
            assert_eq!(config.generate.limits.max_tokens, 500);
            Ok(())
        });
    }

    #[test]
    fn secrets_keys_load_from_file_and_environment() {
        figment::Jail::expect_with(|jail| {
            let (k1, k2) = (
                couler_secrets::generate_key(),
                couler_secrets::generate_key(),
            );
            jail.create_file(
                "couler.toml",
                &format!("[secrets]\nkeys = {{ k1 = \"{}\" }}\n", k1.expose_secret()),
            )?;
            jail.set_env("COULER__SECRETS__KEYS__K2", k2.expose_secret());
            jail.set_env("COULER__SECRETS__ACTIVE_KEY", "k2");
            let config = Config::load(Some(Path::new("couler.toml"))).expect("config loads");
            let keyring = couler_secrets::Keyring::from_config(&config.secrets)
                .expect("valid keys")
                .expect("keys configured");
            assert_eq!(keyring.active_id(), "k2");
            assert!(keyring.has_key("k1"));
            let printed = format!("{config:?}");
            assert!(!printed.contains(k1.expose_secret()), "{printed}");
            assert!(!printed.contains(k2.expose_secret()), "{printed}");
            Ok(())
        });
    }

    #[test]
    fn env_vars_reach_into_every_section() {
        let names = Config::env_vars().expect("the config types trace");
        for section in SECTIONS {
            let prefix = format!("COULER__{}__", section.to_ascii_uppercase());
            assert!(
                names.iter().any(|n| n.starts_with(&prefix)),
                "{section}: {names:?}"
            );
        }
        for name in [
            "COULER__HTTP__ADDR",
            "COULER__AUTH__JWT__HS256_SECRET",
            "COULER__AUTH__JWT__JWKS_FILE",
            "COULER__SECRETS__KEYS__<KEY>",
            "COULER__LLM__API_KEY",
            "COULER__GENERATE__LIMITS__MAX_TOKENS",
            "DATABASE_URL",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
        }
        // Each name set in the environment loads (a wrong type would fail).
        figment::Jail::expect_with(|jail| {
            jail.set_env("COULER__HTTP__ADDR", "0.0.0.0:8080");
            jail.set_env("COULER__SECRETS__KEYS__LAPTOP", "x");
            Config::load(None).expect("config loads");
            Ok(())
        });
    }

    #[test]
    fn unknown_keys_are_errors() {
        figment::Jail::expect_with(|jail| {
            jail.create_file("couler.toml", "[http]\nadress = \"0.0.0.0:9000\"\n")?;
            assert!(Config::load(Some(Path::new("couler.toml"))).is_err());
            Ok(())
        });
    }
}
