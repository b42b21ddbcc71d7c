//! A hit's artifacts in an S3-compatible store are asked about with a
//! signed `HEAD`, against a real S3 server (s3s-fs, which checks
//! signatures) over a directory.

mod common;

use common::*;
use couler_cache::CacheIndex;
use couler_fakes::s3::{ACCESS_KEY, S3Server, SECRET_KEY};
use couler_objects::{S3Store, S3StoreSettings};
use std::net::TcpListener;

fn store(s3: &S3Server, prefix: &str, secret: &str) -> S3Store {
    settings(prefix, &s3.url(), secret).try_into().unwrap()
}

fn settings(prefix: &str, endpoint: &str, secret: &str) -> S3StoreSettings {
    S3StoreSettings::new(prefix, endpoint).signed(ACCESS_KEY, secret)
}

/// An index asking `stores`, under `shared`'s key prefix when given.
async fn index_asking(stores: Vec<S3Store>, shared: Option<&CacheIndex>) -> CacheIndex {
    let mut config = match shared {
        Some(index) => index.config().clone(),
        None => index(1 << 30).await.config().clone(),
    };
    config.s3 = stores;
    CacheIndex::new(redis().await, config)
}

async fn found(index: &CacheIndex, keys: &[u32]) -> Vec<bool> {
    let keys: Vec<_> = keys.iter().map(|&k| key(k)).collect();
    hits(index, &keys)
        .await
        .iter()
        .map(Option::is_some)
        .collect()
}

#[tokio::test]
async fn a_hit_on_an_object_deleted_from_its_store_is_a_miss_and_the_entry_goes() {
    let s3 = S3Server::in_temp_dir();
    let object = s3.put("artifacts", "runs/r1/model", b"weights");
    s3.put("artifacts", "runs/r2/model", b"weights");
    let index = index_asking(vec![store(&s3, "s3://artifacts", SECRET_KEY)], None).await;
    let at = |location: &str| stored_at(entry(7, 5.0, None), location);
    index
        .admit(&key(1), &at("s3://artifacts/runs/r1/model"), "tnt_a")
        .await;
    index
        .admit(&key(2), &at("s3://artifacts/runs/r2/model"), "tnt_a")
        .await;
    // A store not configured here is taken to have its objects.
    index
        .admit(&key(3), &at("s3://elsewhere/runs/r1/model"), "tnt_a")
        .await;
    assert_eq!(found(&index, &[1, 2, 3]).await, [true, true, true]);

    std::fs::remove_file(&object).unwrap();
    assert_eq!(found(&index, &[1, 2, 3]).await, [false, true, true]);
    assert_eq!(index.bytes().await, Some(14), "the stale entry was removed");
    // Its record stays, to key its consumers.
    assert!(matches!(
        index.lookup(&[key(1)], &["s3://"]).await[0],
        couler_cache::Found::Record(_)
    ));
}

#[tokio::test]
async fn a_store_that_cannot_answer_leaves_the_hit() {
    let s3 = S3Server::in_temp_dir();
    let object = s3.put("artifacts", "runs/r1/model", b"weights");
    let signed_wrongly =
        index_asking(vec![store(&s3, "s3://artifacts/", "not-the-secret")], None).await;
    // A store that never answers: connections wait in the backlog.
    let silent = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = silent.local_addr().unwrap();
    let mut unreachable = settings("s3://artifacts/", &format!("http://{at}"), SECRET_KEY);
    unreachable.timeout_ms = 300;
    let unreachable =
        index_asking(vec![unreachable.try_into().unwrap()], Some(&signed_wrongly)).await;
    let entry = stored_at(entry(7, 5.0, None), "s3://artifacts/runs/r1/model");
    signed_wrongly.admit(&key(1), &entry, "tnt_a").await;
    std::fs::remove_file(&object).unwrap();
    // The server refuses a bad signature (403): not an answer, so the
    // entry stays, as it does when the store is silent.
    assert_eq!(found(&signed_wrongly, &[1]).await, [true]);
    assert_eq!(found(&unreachable, &[1]).await, [true]);
    // Asked properly, the store says the object is gone.
    let asked = index_asking(
        vec![store(&s3, "s3://artifacts/", SECRET_KEY)],
        Some(&signed_wrongly),
    )
    .await;
    assert_eq!(found(&asked, &[1]).await, [false]);
}
