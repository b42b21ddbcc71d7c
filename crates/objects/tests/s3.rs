//! Reading an S3-compatible store for real: s3s-fs, which checks the
//! requests' signatures, over a directory.

use couler_fakes::s3::{ACCESS_KEY, S3Server, SECRET_KEY};
use couler_objects::{Mount, S3Store, S3StoreSettings, Stores};

fn store(s3: &S3Server, prefix: &str) -> S3Store {
    S3StoreSettings::new(prefix, &s3.url())
        .signed(ACCESS_KEY, SECRET_KEY)
        .try_into()
        .unwrap()
}

#[tokio::test]
async fn an_object_is_digested_as_it_streams_and_the_same_as_through_a_mount() {
    let s3 = S3Server::in_temp_dir();
    let weights: Vec<u8> = (0..3_000_000u32).map(|i| (i % 251) as u8).collect();
    s3.put("models", "runs/r1/model", &weights);
    let over_s3 = Stores::new(vec![], vec![store(&s3, "s3://models/")]);
    let mounted = Stores::new(
        vec![Mount {
            prefix: "s3://models".into(),
            path: s3.path("models", ""),
        }],
        vec![],
    );
    let expected = blake3::hash(&weights).to_hex().to_string();
    for stores in [&over_s3, &mounted] {
        let digest = stores.digest("s3://models/runs/r1/model").await.unwrap();
        let digest = digest.expect("the store is seen here");
        assert_eq!(
            (digest.hex.as_str(), digest.size),
            (expected.as_str(), 3_000_000)
        );
    }
    // A store not configured here is not read.
    assert_eq!(
        over_s3.digest("s3://other/runs/r1/model").await.unwrap(),
        None
    );
}

#[tokio::test]
async fn a_deleted_object_is_gone_and_cannot_be_digested() {
    let s3 = S3Server::in_temp_dir();
    let object = s3.put("models", "model", b"weights");
    let stores = Stores::new(vec![], vec![store(&s3, "s3://models/")]);
    let at = ["s3://models/model", "s3://elsewhere/model"];
    assert_eq!(stores.exist(&at).await, [true, true]);
    std::fs::remove_file(object).unwrap();
    assert_eq!(stores.exist(&at).await, [false, true]);
    let e = stores.digest(at[0]).await.unwrap_err();
    assert!(e.to_string().contains("s3://models/model"), "{e}");
    assert!(!e.to_string().contains("X-Amz-Signature"), "{e}");
}

#[tokio::test]
async fn a_404_from_a_store_that_does_not_show_its_bucket_is_not_trusted() {
    let s3 = S3Server::in_temp_dir();
    // Configured for a bucket the endpoint does not have (a wrong
    // endpoint, bucket or URL style answers the same): every object would
    // be missing, and the cache would empty itself.
    let stores = Stores::new(vec![], vec![store(&s3, "s3://no-such-bucket/")]);
    assert_eq!(stores.exist(&["s3://no-such-bucket/model"]).await, [true]);
    // Once the bucket is there, its 404s mean what they say.
    s3.put("no-such-bucket", "other", b"x");
    assert_eq!(stores.exist(&["s3://no-such-bucket/model"]).await, [false]);
}
