//! What the index's tests share: the local Redis, an index under a key
//! prefix of its own, entries and keys.
#![allow(dead_code)] // each test binary uses its own share of these

use couler_cache::{CacheConfig, CacheIndex, CacheKey, Cached, Entry, SharedRedis};
use couler_optimizer::{ArtifactRef, Named, StepOutputs};
use std::time::Duration;

/// A connection to the local Redis, once it is up.
pub async fn redis() -> SharedRedis {
    SharedRedis::connect_now(
        "redis://127.0.0.1:6379",
        Duration::from_millis(500),
        Duration::from_secs(2),
    )
    .await
    .expect("no Redis on 127.0.0.1:6379")
}

/// A plain connection, to look behind the index's back.
pub async fn raw() -> redis::aio::MultiplexedConnection {
    redis::Client::open("redis://127.0.0.1:6379")
        .unwrap()
        .get_multiplexed_async_connection()
        .await
        .unwrap()
}

pub async fn index(budget: u64) -> CacheIndex {
    let redis = redis().await;
    let config = CacheConfig {
        prefix: format!("couler-test-{}", uuid_like()),
        budget_bytes: budget,
        ..Default::default()
    };
    CacheIndex::new(redis, config)
}

pub use couler_fakes::uuid_like;

/// An index whose objects under `prefix` are files under `dir` here.
pub async fn index_mounting(budget: u64, prefix: &str, dir: &std::path::Path) -> CacheIndex {
    let mut config = index(budget).await.config().clone();
    config.mounts = vec![couler_objects::Mount {
        prefix: prefix.into(),
        path: dir.into(),
    }];
    CacheIndex::new(redis().await, config)
}

pub fn entry(size: u64, cost_s: f64, file: Option<&std::path::Path>) -> Entry {
    let e = entry_without_artifacts(size, cost_s);
    match file {
        Some(f) => stored_at(e, &format!("file://{}", f.display())),
        None => e,
    }
}

/// `e` with one artifact, of its size, at `location`.
pub fn stored_at(mut e: Entry, location: &str) -> Entry {
    e.cached.outputs.artifacts = Named::from_iter([(
        "model".into(),
        ArtifactRef {
            digest: "d".into(),
            size: e.cached.size,
            location: location.into(),
        },
    )]);
    e
}

pub fn entry_without_artifacts(size: u64, cost_s: f64) -> Entry {
    let outputs = StepOutputs {
        result: Some("done".into()),
        ..Default::default()
    };
    Entry {
        cached: Cached {
            outputs,
            wall_ms: (cost_s * 1000.0) as u64,
            cpu_ms: 0,
            max_rss_kb: 0,
            size,
            reconstruction: cost_s,
            downstream: 0.0,
            created_at: 0,
        },
        producer: "tnt_a".into(),
        ttl_secs: 3600,
        image: "python:3.12".into(),
        version: Some("1".into()),
        workflow: "wf".into(),
        step: "train".into(),
    }
}

/// Key `n`, named `00…0n` in hex.
pub fn key(n: u32) -> CacheKey {
    let mut key = [0; 32];
    key[28..].copy_from_slice(&n.to_be_bytes());
    CacheKey(key)
}

/// What `keys` hit, for an engine that reads files and objects in S3.
pub async fn hits(index: &CacheIndex, keys: &[CacheKey]) -> Vec<Option<couler_cache::Cached>> {
    index
        .lookup(keys, &["file://", "s3://"])
        .await
        .iter()
        .map(|found| found.entry().cloned())
        .collect()
}
