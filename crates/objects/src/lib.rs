//! Where artifacts live, as seen from this host: files, objects of a store
//! mounted here as a directory, and objects of an S3-compatible store (AWS
//! S3, MinIO, Google Cloud Storage's XML API with HMAC keys) reached over
//! HTTP with requests that `rusty-s3` signs. [`Stores`] tells whether
//! artifacts are still there (the cache index, on a hit) and digests them
//! (engine adapters, for what a step stored).
//!
//! Only a definite answer makes an artifact gone: a missing file, or a
//! `404` from its store. A store that cannot be reached, is too slow or
//! refuses the question leaves the artifact taken to exist, as are those
//! of stores not configured here; such answers are logged and counted
//! (`couler_cache_artifact_checks_total{outcome="unknown"}`).

use futures::StreamExt;
use rusty_s3::{Bucket, Credentials, S3Action, UrlStyle};
use secrecy::{ExposeSecret, SecretString};
use serde::Deserialize;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How many `HEAD` requests one lookup has in flight at once.
const CONCURRENT_HEADS: usize = 32;
/// The most one batch of existence checks waits; what has not answered by
/// then is taken to exist.
const CHECKS_DEADLINE: Duration = Duration::from_secs(5);
/// How long a signed URL stays valid; it is used at once.
const SIGNED_FOR: Duration = Duration::from_secs(60);
/// How long a download may wait for its next bytes.
const READ_TIMEOUT: Duration = Duration::from_secs(30);

/// An object store prefix, such as `s3://couler-artifacts/`, whose objects
/// are files under `path` here (the Argo artifact bucket's mount, or any
/// store listed in the `cache.mounts` setting, e.g. KFP's MinIO bucket
/// through a CSI or FUSE mount).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Mount {
    pub prefix: String,
    pub path: PathBuf,
}

/// An S3-compatible store whose objects are locations under `prefix`
/// (`minio://mlpipeline/…`, `s3://bucket/…`, `gs://bucket/…`); the bucket
/// is the location's first segment after the scheme.
#[derive(Debug, Clone, Deserialize)]
#[serde(try_from = "S3StoreSettings")]
pub struct S3Store {
    prefix: String,
    bucket: Bucket,
    credentials: Option<Credentials>,
    timeout: Duration,
    /// The bucket answered here once: from then on a `404` means that the
    /// object is gone, not that the store is misconfigured.
    bucket_answered: Arc<AtomicBool>,
}

/// An [`S3Store`] as configured (`cache.s3` in the services' settings).
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct S3StoreSettings {
    /// `<scheme>://<bucket>/`, optionally with a key prefix after it.
    pub prefix: String,
    /// `http://minio-service.kubeflow:9000`, `https://s3.eu-west-1.amazonaws.com`,
    /// `https://storage.googleapis.com`.
    pub endpoint: String,
    #[serde(default = "default_region")]
    pub region: String,
    /// `endpoint/bucket/key`, as MinIO and GCS serve (the default), or
    /// AWS's virtual-hosted `bucket.endpoint/key` when false.
    #[serde(default = "yes")]
    pub path_style: bool,
    /// Without keys, requests are not signed (a public bucket).
    #[serde(default)]
    pub access_key_id: Option<String>,
    #[serde(default)]
    pub secret_access_key: Option<SecretString>,
    /// Bound on each `HEAD`; a slower store leaves the artifact taken to exist.
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
}

impl S3StoreSettings {
    /// A store at `endpoint` with the defaults: `us-east-1`, path-style
    /// URLs, unsigned requests, a 2 s bound.
    pub fn new(prefix: &str, endpoint: &str) -> S3StoreSettings {
        S3StoreSettings {
            prefix: prefix.into(),
            endpoint: endpoint.into(),
            region: default_region(),
            path_style: true,
            access_key_id: None,
            secret_access_key: None,
            timeout_ms: default_timeout_ms(),
        }
    }

    /// Signed with this key pair.
    pub fn signed(mut self, access_key_id: &str, secret_access_key: &str) -> S3StoreSettings {
        self.access_key_id = Some(access_key_id.into());
        self.secret_access_key = Some(secret_access_key.to_owned().into());
        self
    }
}

fn default_region() -> String {
    "us-east-1".into()
}

fn yes() -> bool {
    true
}

fn default_timeout_ms() -> u64 {
    2000
}

/// Why an [`S3StoreSettings`] cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("prefix {0:?} is not <scheme>://<bucket>/…")]
    Prefix(String),
    #[error("endpoint {endpoint:?} of {prefix:?}: {reason}")]
    Endpoint {
        prefix: String,
        endpoint: String,
        reason: String,
    },
    #[error("{0:?} has only one of access_key_id and secret_access_key")]
    Credentials(String),
}

/// Why an artifact could not be digested.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("reading {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Only the location: the request's URL carries a signature.
    #[error("downloading {location}: {message}")]
    Download { location: String, message: String },
}

/// An artifact's BLAKE3 digest (hex) and size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Digest {
    pub hex: String,
    pub size: u64,
}

impl TryFrom<S3StoreSettings> for S3Store {
    type Error = StoreError;

    fn try_from(s: S3StoreSettings) -> Result<S3Store, StoreError> {
        let prefix = with_slash(&s.prefix);
        let bucket = bucket_and_key(&prefix)
            .map(|(bucket, _)| bucket.to_owned())
            .filter(|bucket| !bucket.is_empty())
            .ok_or_else(|| StoreError::Prefix(s.prefix.clone()))?;
        let endpoint_error = |reason: String| StoreError::Endpoint {
            prefix: s.prefix.clone(),
            endpoint: s.endpoint.clone(),
            reason,
        };
        let endpoint = s
            .endpoint
            .parse::<reqwest::Url>()
            .map_err(|e| endpoint_error(e.to_string()))?;
        let style = match s.path_style {
            true => UrlStyle::Path,
            false => UrlStyle::VirtualHost,
        };
        let bucket = Bucket::new(endpoint, style, bucket, s.region)
            .map_err(|e| endpoint_error(e.to_string()))?;
        let credentials = match (s.access_key_id, s.secret_access_key) {
            (Some(key), Some(secret)) => Some(Credentials::new(key, secret.expose_secret())),
            (None, None) => None,
            _ => return Err(StoreError::Credentials(s.prefix)),
        };
        Ok(S3Store {
            prefix,
            bucket,
            credentials,
            timeout: Duration::from_millis(s.timeout_ms),
            bucket_answered: Arc::default(),
        })
    }
}

impl S3Store {
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    async fn head(&self, http: &reqwest::Client, location: &str) -> Presence {
        let Some((_, key)) = bucket_and_key(location) else {
            return Presence::Unknown;
        };
        let url = rusty_s3::actions::HeadObject::new(&self.bucket, self.credentials.as_ref(), key)
            .sign(SIGNED_FOR);
        // The URL carries a signature: only the location is ever logged.
        match http.head(url).timeout(self.timeout).send().await {
            Ok(r) if r.status().is_success() => Presence::There,
            Ok(r) if r.status() == reqwest::StatusCode::NOT_FOUND => {
                match self.bucket_answers(http).await {
                    true => Presence::Gone,
                    false => Presence::Unknown,
                }
            }
            Ok(r) => {
                tracing::warn!(location, status = %r.status(), "an object store did not say whether a cached artifact exists; taken to");
                Presence::Unknown
            }
            Err(e) => {
                tracing::warn!(location, error = %e.without_url(), "an object store did not say whether a cached artifact exists; taken to");
                Presence::Unknown
            }
        }
    }
}

impl S3Store {
    /// Whether the bucket itself is found at the endpoint, asked once it
    /// has answered: a wrong endpoint, bucket or URL style answers every
    /// question with `404` too, and must not empty the cache.
    async fn bucket_answers(&self, http: &reqwest::Client) -> bool {
        if self.bucket_answered.load(Ordering::Relaxed) {
            return true;
        }
        let url = rusty_s3::actions::HeadBucket::new(&self.bucket, self.credentials.as_ref())
            .sign(SIGNED_FOR);
        match http.head(url).timeout(self.timeout).send().await {
            Ok(r) if r.status().is_success() => {
                self.bucket_answered.store(true, Ordering::Relaxed);
                true
            }
            answer => {
                let answer = match answer {
                    Ok(r) => r.status().to_string(),
                    Err(e) => e.without_url().to_string(),
                };
                tracing::warn!(store = %self.prefix, answer, "an object store does not show its bucket (check cache.s3): its objects are taken to exist");
                false
            }
        }
    }

    /// Downloads the object at `location`, hashing it as it streams.
    async fn digest(&self, http: &reqwest::Client, location: &str) -> Result<Digest, ReadError> {
        let failed = |message: String| ReadError::Download {
            location: location.to_owned(),
            message,
        };
        let (_, key) = bucket_and_key(location).ok_or_else(|| failed("no key".into()))?;
        let url = rusty_s3::actions::GetObject::new(&self.bucket, self.credentials.as_ref(), key)
            .sign(SIGNED_FOR);
        let response = http
            .get(url)
            .send()
            .await
            .and_then(reqwest::Response::error_for_status)
            .map_err(|e| failed(e.without_url().to_string()))?;
        let mut hasher = blake3::Hasher::new();
        let mut size = 0;
        let mut body = response.bytes_stream();
        while let Some(chunk) = body.next().await {
            let chunk = chunk.map_err(|e| failed(e.without_url().to_string()))?;
            size += chunk.len() as u64;
            hasher.update(&chunk);
        }
        Ok(Digest {
            hex: hasher.finalize().to_hex().to_string(),
            size,
        })
    }
}

/// BLAKE3 and size of a file, or of a directory's files concatenated in
/// path order, read in blocks.
fn digest_path(path: &Path) -> Result<Digest, ReadError> {
    fn add(path: &Path, hasher: &mut blake3::Hasher, size: &mut u64) -> std::io::Result<()> {
        if path.is_dir() {
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)?
                .map(|e| e.map(|e| e.path()))
                .collect::<Result<_, _>>()?;
            entries.sort();
            for e in entries {
                add(&e, hasher, size)?;
            }
            return Ok(());
        }
        let mut file = std::fs::File::open(path)?;
        let mut block = vec![0; 256 * 1024];
        loop {
            match file.read(&mut block) {
                Ok(0) => return Ok(()),
                Ok(n) => {
                    hasher.update(&block[..n]);
                    *size += n as u64;
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
    let mut hasher = blake3::Hasher::new();
    let mut size = 0;
    add(path, &mut hasher, &mut size).map_err(|source| ReadError::Io {
        path: path.to_owned(),
        source,
    })?;
    Ok(Digest {
        hex: hasher.finalize().to_hex().to_string(),
        size,
    })
}

/// A prefix that ends where a path segment does: `s3://bkt` must not match
/// `s3://bkt2/…`.
pub fn with_slash(prefix: &str) -> String {
    match prefix.ends_with('/') {
        true => prefix.to_owned(),
        false => format!("{prefix}/"),
    }
}

/// `scheme://bucket/key` as its bucket and key.
fn bucket_and_key(location: &str) -> Option<(&str, &str)> {
    let (_, rest) = location.split_once("://")?;
    rest.split_once('/')
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Presence {
    There,
    Gone,
    Unknown,
}

impl Presence {
    fn label(self) -> &'static str {
        match self {
            Presence::There => "present",
            Presence::Gone => "gone",
            Presence::Unknown => "unknown",
        }
    }
}

/// Every store whose artifacts this host can see.
#[derive(Debug, Clone, Default)]
pub struct Stores {
    mounts: Vec<Mount>,
    s3: Vec<S3Store>,
    /// Only when an S3 store is configured.
    http: Option<reqwest::Client>,
}

/// Where an artifact can be read from here.
enum Place<'a> {
    File(PathBuf),
    Object(&'a S3Store),
    /// A store not configured here.
    Elsewhere,
}

impl Stores {
    /// `mounts`' prefixes end with a slash, so that `s3://bkt` never
    /// matches `s3://bkt2/…`.
    pub fn new(mut mounts: Vec<Mount>, s3: Vec<S3Store>) -> Stores {
        for m in &mut mounts {
            m.prefix = with_slash(&m.prefix);
        }
        let http = match s3.is_empty() {
            true => None,
            // reqwest is built without a default TLS provider; pick ring once.
            false => {
                let _ = rustls::crypto::ring::default_provider().install_default();
                reqwest::Client::builder()
                    .user_agent(concat!("couler/", env!("CARGO_PKG_VERSION")))
                    .connect_timeout(Duration::from_secs(2))
                    .read_timeout(READ_TIMEOUT)
                    .build()
                    .inspect_err(|e| {
                        tracing::error!(error = %e, "no HTTP client: objects in S3-compatible stores are neither checked nor read");
                    })
                    .ok()
            }
        };
        Stores { mounts, s3, http }
    }

    fn place<'a>(&'a self, location: &str) -> Place<'a> {
        if let Some(path) = location.strip_prefix("file://") {
            return Place::File(PathBuf::from(path));
        }
        let mounted = self.mounts.iter().find_map(|m| {
            let key = Path::new(location.strip_prefix(&m.prefix)?);
            // Only a plain key names a file under the mount: not the
            // mount itself, nor anything outside it.
            let mut parts = key.components().peekable();
            let plain = parts.peek().is_some() && parts.all(|c| matches!(c, Component::Normal(_)));
            plain.then(|| m.path.join(key))
        });
        if let Some(path) = mounted {
            return Place::File(path);
        }
        self.s3
            .iter()
            .find(|s| location.starts_with(&s.prefix) && location.len() > s.prefix.len())
            .map_or(Place::Elsewhere, Place::Object)
    }

    /// Whether this host reads the store of `location` (a mount or an
    /// S3-compatible store configured here).
    pub fn sees(&self, location: &str) -> bool {
        location.starts_with("file://")
            || self.mounts.iter().any(|m| location.starts_with(&m.prefix))
            || (self.http.is_some() && self.s3.iter().any(|s| location.starts_with(&s.prefix)))
    }

    /// For each location, whether it is still in its store, as far as
    /// this host can tell; objects are asked about concurrently.
    pub async fn exist(&self, locations: &[&str]) -> Vec<bool> {
        let mut exist = vec![true; locations.len()];
        let mut asks = Vec::new();
        for (i, location) in locations.iter().enumerate() {
            match self.place(location) {
                Place::File(path) => exist[i] = path.exists(),
                Place::Object(store) => asks.push((i, store, *location)),
                Place::Elsewhere => {}
            }
        }
        let Some(http) = self.http.as_ref().filter(|_| !asks.is_empty()) else {
            return exist;
        };
        // Built before they are streamed: a stream's own closures would
        // keep a caller's future from being sent to a task.
        let heads: Vec<_> = asks
            .into_iter()
            .map(|(i, store, location)| async move { (i, store.head(http, location).await) })
            .collect();
        let asked = heads.len();
        let answers: Vec<(usize, Presence)> = futures::stream::iter(heads)
            .buffer_unordered(CONCURRENT_HEADS)
            .take_until(tokio::time::sleep(CHECKS_DEADLINE))
            .collect()
            .await;
        if answers.len() < asked {
            let late = (asked - answers.len()) as u64;
            tracing::warn!(
                late,
                "object stores did not answer in time; those artifacts are taken to exist"
            );
            metrics::counter!("couler_cache_artifact_checks_total", "outcome" => Presence::Unknown.label())
                .increment(late);
        }
        for (i, answer) in answers {
            metrics::counter!("couler_cache_artifact_checks_total", "outcome" => answer.label())
                .increment(1);
            exist[i] = answer != Presence::Gone;
        }
        exist
    }

    /// The digest and size of what is at `location`, read where this host
    /// sees it; `None` when it sees no store there.
    pub async fn digest(&self, location: &str) -> Result<Option<Digest>, ReadError> {
        match self.place(location) {
            Place::File(path) => tokio::task::spawn_blocking(move || digest_path(&path))
                .await
                .map_err(|e| ReadError::Download {
                    location: location.to_owned(),
                    message: e.to_string(),
                })?
                .map(Some),
            Place::Object(store) => match &self.http {
                Some(http) => store.digest(http, location).await.map(Some),
                None => Ok(None),
            },
            Place::Elsewhere => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(prefix: &str, endpoint: &str) -> S3StoreSettings {
        S3StoreSettings::new(prefix, endpoint)
    }

    #[test]
    fn a_store_names_its_bucket_and_ends_its_prefix_with_a_slash() {
        let store = S3Store::try_from(settings("minio://mlpipeline", "http://minio:9000")).unwrap();
        assert_eq!(store.prefix(), "minio://mlpipeline/");
        assert_eq!(store.bucket.name(), "mlpipeline");
        let stores = Stores::new(vec![], vec![store]);
        assert!(matches!(
            stores.place("minio://mlpipeline/v2/artifacts/model"),
            Place::Object(_)
        ));
        assert!(matches!(
            stores.place("minio://mlpipeline2/model"),
            Place::Elsewhere
        ));
        let mount = Mount {
            prefix: "s3://bkt".into(),
            path: "/mnt/bkt".into(),
        };
        let stores = Stores::new(vec![mount], vec![]);
        assert!(
            matches!(stores.place("s3://bkt/a/b"), Place::File(p) if p == Path::new("/mnt/bkt/a/b"))
        );
        assert!(matches!(stores.place("s3://bkt2/a"), Place::Elsewhere));
        // A key that climbs out of the mount is not looked for.
        assert!(matches!(stores.place("s3://bkt/../etc"), Place::Elsewhere));
        assert!(stores.sees("s3://bkt/"));
        assert!(!stores.sees("s3://bkt2/"));
        // Nor is the mount itself an object.
        assert!(matches!(stores.place("s3://bkt/"), Place::Elsewhere));
    }

    #[test]
    fn unusable_settings_say_what_is_wrong() {
        for (prefix, endpoint, wrong) in [
            ("s3://", "http://minio:9000", "is not <scheme>://<bucket>/"),
            (
                "mlpipeline",
                "http://minio:9000",
                "is not <scheme>://<bucket>/",
            ),
            ("s3://b/", "minio:9000", "endpoint"),
            ("s3://b/", "ftp://minio", "endpoint"),
        ] {
            let e = S3Store::try_from(settings(prefix, endpoint)).unwrap_err();
            assert!(e.to_string().contains(wrong), "{prefix} {endpoint}: {e}");
        }
        let mut half = settings("s3://b/", "http://minio:9000");
        half.access_key_id = Some("key".into());
        let e = S3Store::try_from(half).unwrap_err();
        assert!(e.to_string().contains("only one of"), "{e}");
    }

    #[test]
    fn secrets_never_print() {
        let mut s = settings("s3://b/", "http://minio:9000");
        s.access_key_id = Some("AKIA".into());
        s.secret_access_key = Some(SecretString::from("hunter2-secret"));
        let store = S3Store::try_from(s).unwrap();
        assert!(!format!("{store:?}").contains("hunter2"));
        let url =
            rusty_s3::actions::HeadObject::new(&store.bucket, store.credentials.as_ref(), "k")
                .sign(SIGNED_FOR);
        assert!(
            !url.as_str().contains("hunter2"),
            "only a signature is sent"
        );
    }
}
