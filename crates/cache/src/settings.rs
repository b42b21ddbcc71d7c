//! Redis and cache settings as services read them from configuration;
//! the API and the schedulers share them (`couler up` reads one
//! environment for both), so their keys always agree.

use secrecy::SecretString;
use serde::Deserialize;
use std::time::Duration;

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RedisSettings {
    pub url: SecretString,
    /// Bound on every Redis call; slower counts as unavailable.
    pub timeout_ms: u64,
    /// Prefix of every key this service writes (tests use one per test).
    pub key_prefix: String,
}

impl Default for RedisSettings {
    fn default() -> Self {
        RedisSettings {
            url: SecretString::from("redis://127.0.0.1:6379"),
            timeout_ms: 250,
            key_prefix: "couler".into(),
        }
    }
}

/// The cache index's budget and TTLs; the defaults are [`crate::CacheConfig`]'s.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CacheSettings {
    /// Bytes of artifacts the cache may hold.
    pub budget_bytes: u64,
    /// TTL of an entry when neither the step nor the tenant sets one.
    pub default_ttl_secs: u64,
    /// No entry lives longer.
    pub max_ttl_secs: u64,
    /// Object stores mounted here as directories (`{prefix = "minio://mlpipeline/",
    /// path = "/mnt/mlpipeline"}`): a hit's artifacts there are checked to
    /// exist, as files are.
    pub mounts: Vec<couler_objects::Mount>,
    /// S3-compatible stores (`{prefix = "minio://mlpipeline/", endpoint =
    /// "http://minio-service.kubeflow:9000", access_key_id = …,
    /// secret_access_key = …}`): a hit's artifacts there are checked with a
    /// signed `HEAD`. Objects of stores neither mounted nor listed are
    /// taken to exist.
    pub s3: Vec<couler_objects::S3Store>,
}

impl Default for CacheSettings {
    fn default() -> Self {
        let d = crate::CacheConfig::default();
        CacheSettings {
            budget_bytes: d.budget_bytes,
            default_ttl_secs: d.default_ttl.as_secs(),
            max_ttl_secs: d.max_ttl.as_secs(),
            mounts: d.mounts,
            s3: d.s3,
        }
    }
}

impl RedisSettings {
    pub fn timeout(&self) -> Duration {
        Duration::from_millis(self.timeout_ms)
    }

    /// The cache index's configuration: its budget and TTLs under this
    /// Redis' key prefix and timeout.
    pub fn cache_config(&self, cache: &CacheSettings) -> crate::CacheConfig {
        crate::CacheConfig {
            prefix: self.key_prefix.clone(),
            budget_bytes: cache.budget_bytes,
            default_ttl: Duration::from_secs(cache.default_ttl_secs),
            max_ttl: Duration::from_secs(cache.max_ttl_secs),
            timeout: self.timeout(),
            mounts: cache.mounts.clone(),
            s3: cache.s3.clone(),
            ..Default::default()
        }
    }
}
