//! Copies of cache entries in other stores, against the real Redis: kept
//! for the engines that cannot read an entry's store, admitted by
//! importance, put in the entry's place when its artifacts go, and
//! invalidated only by their producer.

mod common;

use common::*;
use couler_cache::{Admission, CacheIndex, CacheKey, Entry, Invalidate};

/// Where a copy test keeps its artifacts: a file for the local engine and
/// an object in a mounted bucket for Argo.
struct Stores {
    dir: std::path::PathBuf,
    index: CacheIndex,
}

impl Stores {
    async fn new(budget: u64) -> Stores {
        let dir = std::env::temp_dir().join(format!("couler-copies-{}", uuid_like()));
        std::fs::create_dir_all(&dir).unwrap();
        let index = index_mounting(budget, "s3://bkt/", &dir).await;
        Stores { dir, index }
    }

    /// An entry of `size` bytes and `cost_s` seconds whose artifact is the
    /// file `name` (`file://`) or, with `s3`, the bucket's object `name`.
    fn entry(&self, size: u64, cost_s: f64, name: &str, s3: bool) -> Entry {
        std::fs::write(self.dir.join(name), b"weights").unwrap();
        let location = if s3 {
            format!("s3://bkt/{name}")
        } else {
            format!("file://{}", self.dir.join(name).display())
        };
        stored_at(entry(size, cost_s, None), &location)
    }

    /// tnt_a's entry of `key(1)` in a file (`host` bytes, `a-host`), with
    /// tnt_b's copy in the bucket (`bucket` bytes, `a-bucket`).
    async fn with_copy(budget: u64, host: u64, bucket: u64) -> Stores {
        let stores = Stores::new(budget).await;
        let on_host = stores.entry(host, 5.0, "a-host", false);
        let in_bucket = stores.entry(bucket, 5.0, "a-bucket", true);
        let index = &stores.index;
        assert_eq!(
            index.admit(&key(1), &on_host, "tnt_a").await,
            Admission::Admitted
        );
        // tnt_b's Argo pods could not read the file, so its step ran and
        // its result is kept beside the entry.
        assert_eq!(
            index.admit(&key(1), &in_bucket, "tnt_b").await,
            Admission::Copied
        );
        stores
    }

    /// Where `key`'s hit is read from by an engine reading `reads`.
    async fn read_from(&self, key: &CacheKey, reads: &[&str]) -> Option<String> {
        match self
            .index
            .lookup(std::slice::from_ref(key), reads)
            .await
            .remove(0)
        {
            couler_cache::Found::Entry(e) => {
                Some(e.outputs.artifacts.get("model").unwrap().location.clone())
            }
            _ => None,
        }
    }
}

impl Drop for Stores {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test]
async fn an_entry_gets_a_copy_in_the_store_of_an_engine_that_cannot_read_it() {
    let stores = Stores::with_copy(1 << 30, 10, 10).await;
    let index = &stores.index;
    let on_host = stores.entry(10, 5.0, "a-host", false);
    let in_bucket = stores.entry(10, 5.0, "a-bucket", true);
    // The copy counts in the budget.
    assert_eq!(index.bytes().await, Some(20));
    // One copy per store.
    assert_eq!(
        index.admit(&key(1), &in_bucket, "tnt_c").await,
        Admission::Exists
    );
    assert_eq!(
        index.admit(&key(1), &on_host, "tnt_c").await,
        Admission::Exists
    );
    let host = on_host
        .cached
        .outputs
        .artifacts
        .get("model")
        .unwrap()
        .location
        .clone();
    let bucket = "s3://bkt/a-bucket".to_owned();
    assert_eq!(
        stores.read_from(&key(1), &["s3://", "gs://"]).await,
        Some(bucket.clone())
    );
    assert_eq!(
        stores.read_from(&key(1), &["file://"]).await,
        Some(host.clone())
    );
    // No copy where this engine reads: the entry, for the plan to weigh.
    assert_eq!(
        stores.read_from(&key(1), &["gs://"]).await,
        Some(host.clone())
    );

    // A copy whose object was deleted goes alone.
    std::fs::remove_file(stores.dir.join("a-bucket")).unwrap();
    assert_eq!(
        stores.read_from(&key(1), &["s3://"]).await,
        Some(host.clone())
    );
    assert_eq!(index.bytes().await, Some(10));
    let in_bucket = stores.entry(10, 5.0, "a-bucket", true);
    assert_eq!(
        index.admit(&key(1), &in_bucket, "tnt_b").await,
        Admission::Copied
    );

    // Its producer invalidates the copy, not the entry it copies.
    assert_eq!(index.invalidate("tnt_b", &Invalidate::All).await, Some(1));
    assert_eq!(index.bytes().await, Some(10));
    assert_eq!(
        stores.read_from(&key(1), &["s3://"]).await,
        Some(host.clone())
    );
    assert_eq!(
        index.admit(&key(1), &in_bucket, "tnt_b").await,
        Admission::Copied
    );
    // The entry's producer invalidates it, and its copies go with it.
    assert_eq!(index.invalidate("tnt_a", &Invalidate::All).await, Some(1));
    assert_eq!(index.bytes().await, Some(0));
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, None);
    let mut raw = raw().await;
    let left: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{}:cache:c:*", index.config().prefix))
        .query_async(&mut raw)
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
}

#[tokio::test]
async fn a_copy_is_admitted_by_importance_and_never_evicts_its_own_entry() {
    let stores = Stores::new(100).await;
    let index = &stores.index;
    let costly = |size, name, s3| stores.entry(size, 600.0, name, s3);
    assert_eq!(
        index.admit(&key(1), &costly(60, "a", false), "tnt_a").await,
        Admission::Admitted
    );
    // Beside its entry, the copy would not fit in the budget.
    assert_eq!(
        index.admit(&key(1), &costly(60, "a", true), "tnt_b").await,
        Admission::TooBig
    );
    assert_eq!(
        index
            .admit(&key(2), &stores.entry(30, 1.0, "b", false), "tnt_a")
            .await,
        Admission::Admitted
    );
    // A copy that matters more than a cheap entry takes its place.
    assert_eq!(
        index.admit(&key(1), &costly(40, "a", true), "tnt_b").await,
        Admission::Copied
    );
    assert_eq!(stores.read_from(&key(2), &["file://"]).await, None);
    assert_eq!(index.bytes().await, Some(100));
    // A newcomer that matters less than the entry and its copy is refused.
    assert_eq!(
        index
            .admit(&key(3), &stores.entry(30, 0.0, "c", false), "tnt_a")
            .await,
        Admission::Rejected
    );
    // Evicting the entry frees its copy's bytes too.
    assert_eq!(
        index
            .admit(&key(4), &stores.entry(100, 1e6, "d", false), "tnt_a")
            .await,
        Admission::Admitted
    );
    assert_eq!(index.bytes().await, Some(100));
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, None);
}

#[tokio::test]
async fn a_copy_takes_the_place_of_an_entry_whose_artifacts_are_gone() {
    let stores = Stores::with_copy(1 << 30, 10, 6).await;
    let index = &stores.index;
    std::fs::remove_file(stores.dir.join("a-host")).unwrap();
    // Argo reads the copy, which is still there, and the entry whose file
    // is gone gives its place to it: the copy is the entry, now tnt_b's.
    let bucket = Some("s3://bkt/a-bucket".to_owned());
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, bucket);
    assert_eq!(index.bytes().await, Some(6));
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, bucket);
    // The local engine is handed it as stored elsewhere, for its plan to
    // weigh.
    assert_eq!(stores.read_from(&key(1), &["file://"]).await, bucket);
    let produced = async |tenant| index.stats(tenant).await.unwrap().entries_produced;
    assert_eq!((produced("tnt_a").await, produced("tnt_b").await), (0, 1));
    // The local engine's result can be kept beside it again.
    let on_host = stores.entry(10, 5.0, "a-host", false);
    assert_eq!(
        index.admit(&key(1), &on_host, "tnt_a").await,
        Admission::Copied
    );
    assert_eq!(index.bytes().await, Some(16));
    // Once the promoted entry is gone too, and its copy with it, nothing
    // is left but the record.
    std::fs::remove_file(stores.dir.join("a-bucket")).unwrap();
    std::fs::remove_file(stores.dir.join("a-host")).unwrap();
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, None);
    assert_eq!(stores.read_from(&key(1), &["file://"]).await, None);
    assert_eq!(index.bytes().await, Some(0));
}

#[tokio::test]
async fn an_entry_seen_gone_twice_is_replaced_by_its_copy_once() {
    let stores = Stores::with_copy(1 << 30, 10, 6).await;
    let index = &stores.index;
    std::fs::remove_file(stores.dir.join("a-host")).unwrap();
    // Two steps with one key in one lookup, then a lookup that saw the
    // entry before the copy took its place: the copy stays the entry.
    let found = index.lookup(&[key(1), key(1)], &["file://"]).await;
    assert!(found.iter().all(|f| f.entry().is_none()), "{found:?}");
    let bucket = Some("s3://bkt/a-bucket".to_owned());
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, bucket);
    assert_eq!(index.bytes().await, Some(6));
}

#[tokio::test]
async fn a_copys_producer_never_invalidates_what_it_did_not_produce() {
    let stores = Stores::with_copy(100, 10, 10).await;
    let index = &stores.index;
    // tnt_a's entry (and with it tnt_b's copy) is evicted for a weightier
    // one; tnt_a's record of what the step produced stays.
    assert_eq!(
        index
            .admit(&key(2), &stores.entry(90, 1e6, "b", false), "tnt_a")
            .await,
        Admission::Admitted
    );
    let record = async || index.lookup(&[key(1)], &["file://"]).await.remove(0);
    assert!(matches!(record().await, couler_cache::Found::Record(_)));
    assert_eq!(index.invalidate("tnt_b", &Invalidate::All).await, Some(0));
    assert!(matches!(record().await, couler_cache::Found::Record(_)));
    assert_eq!(index.invalidate("tnt_a", &Invalidate::All).await, Some(1));
    assert_eq!(record().await, couler_cache::Found::Nothing);
}

#[tokio::test]
async fn an_engine_reading_both_stores_is_served_the_copy_once_the_entry_is_gone() {
    let stores = Stores::with_copy(1 << 30, 10, 6).await;
    std::fs::remove_file(stores.dir.join("a-host")).unwrap();
    let bucket = Some("s3://bkt/a-bucket".to_owned());
    assert_eq!(
        stores.read_from(&key(1), &["file://", "s3://"]).await,
        bucket
    );
    // The copy took the entry's place.
    assert_eq!(stores.index.bytes().await, Some(6));
    assert_eq!(stores.read_from(&key(1), &["s3://"]).await, bucket);
}
