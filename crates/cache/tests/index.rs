//! The cache index against the real Redis on this machine, each test under
//! its own key prefix.

mod common;

use common::*;
use couler_cache::{
    Admission, CacheConfig, CacheIndex, CacheKey, Claim, Entry, Invalidate, SharedRedis,
};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn admitted_entries_are_found_in_one_lookup() {
    let index = index(1 << 30).await;
    assert_eq!(
        index.admit(&key(1), &entry(10, 5.0, None), "tnt_a").await,
        Admission::Admitted
    );
    assert_eq!(
        index.admit(&key(1), &entry(10, 5.0, None), "tnt_a").await,
        Admission::Exists
    );
    let found = hits(&index, &[key(1), key(2)]).await;
    assert_eq!(
        found[0].as_ref().unwrap().outputs.result.as_deref(),
        Some("done")
    );
    assert!(found[1].is_none());
    assert_eq!(index.bytes().await, Some(10));
}

#[tokio::test]
async fn eviction_follows_importance_and_never_favours_a_lesser_newcomer() {
    let index = index(100).await;
    // Two entries fill the budget: a cheap one and a costly one.
    assert_eq!(
        index.admit(&key(1), &entry(50, 1.0, None), "tnt_a").await,
        Admission::Admitted
    );
    assert_eq!(
        index.admit(&key(2), &entry(50, 600.0, None), "tnt_a").await,
        Admission::Admitted
    );
    // A newcomer scoring below both is refused, and nothing is evicted.
    assert_eq!(
        index.admit(&key(3), &entry(50, 0.0, None), "tnt_a").await,
        Admission::Rejected
    );
    assert_eq!(index.bytes().await, Some(100));
    // A middling newcomer evicts the cheap entry only.
    assert_eq!(
        index.admit(&key(4), &entry(50, 60.0, None), "tnt_a").await,
        Admission::Admitted
    );
    let found = hits(&index, &[key(1), key(2), key(4)]).await;
    assert!(found[0].is_none() && found[1].is_some() && found[2].is_some());
    assert_eq!(index.bytes().await, Some(100));
    assert_eq!(
        index
            .admit(&key(5), &entry(500, 999.0, None), "tnt_a")
            .await,
        Admission::TooBig
    );
}

#[tokio::test]
async fn concurrent_admissions_keep_the_byte_total_within_budget() {
    let index = index(1000).await;
    let offers = (0..40).map(|i| {
        let index = index.clone();
        async move {
            index
                .admit(&key(i), &entry(100, i as f64, None), "tnt_a")
                .await
        }
    });
    futures::future::join_all(offers).await;
    let bytes = index.bytes().await.unwrap();
    assert!(bytes <= 1000, "{bytes} bytes cached over a budget of 1000");
    let found = hits(&index, &(0..40).map(key).collect::<Vec<_>>()).await;
    assert_eq!(
        found.iter().filter(|f| f.is_some()).count() as u64 * 100,
        bytes
    );
}

#[tokio::test]
async fn a_deleted_artifact_is_a_miss_and_the_entry_goes() {
    let index = index(1 << 30).await;
    let dir = std::env::temp_dir().join(format!("couler-cache-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("model.bin");
    std::fs::write(&file, b"weights").unwrap();
    index
        .admit(&key(7), &entry(7, 5.0, Some(&file)), "tnt_a")
        .await;
    assert!(hits(&index, &[key(7)]).await[0].is_some());
    std::fs::remove_file(&file).unwrap();
    assert!(hits(&index, &[key(7)]).await[0].is_none());
    assert_eq!(index.bytes().await, Some(0), "the entry was removed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn tenants_invalidate_only_their_own_entries_and_see_only_their_stats() {
    let index = index(1 << 30).await;
    index.admit(&key(1), &entry(1, 5.0, None), "tnt_a").await;
    let mut other = entry(1, 5.0, None);
    other.image = "python:3.12".into();
    index.admit(&key(2), &other, "tnt_b").await;
    assert_eq!(
        index
            .invalidate("tnt_a", &Invalidate::Image("python:3.12".into()))
            .await,
        Some(1)
    );
    let found = hits(&index, &[key(1), key(2)]).await;
    assert!(
        found[0].is_none() && found[1].is_some(),
        "tenant b's entry survives"
    );
    index.admit(&key(3), &entry(1, 5.0, None), "tnt_a").await;
    assert_eq!(
        index
            .invalidate(
                "tnt_a",
                &Invalidate::Step {
                    workflow: "wf".into(),
                    step: "train".into()
                }
            )
            .await,
        Some(1)
    );
    index.record_hits("tnt_a", 3, 100, 5000).await;
    index.record_misses("tnt_a", 1).await;
    let stats = index.stats("tnt_a").await.unwrap();
    assert_eq!(
        (
            stats.hits,
            stats.misses,
            stats.bytes_saved,
            stats.compute_ms_saved
        ),
        (3, 1, 100, 5000)
    );
    assert_eq!(index.stats("tnt_b").await.unwrap().hits, 0);
    assert!(index.flush().await.unwrap() > 0);
    assert!(hits(&index, &[key(2)]).await[0].is_none());
}

#[tokio::test]
async fn invalidating_a_step_removes_what_it_reused_from_another_workflow_of_the_tenant() {
    let index = index(1 << 30).await;
    // `wf`'s step `train` computed both; another workflow's `train` and
    // another tenant's reused them.
    index.admit(&key(1), &entry(1, 5.0, None), "tnt_a").await;
    index.admit(&key(2), &entry(1, 5.0, None), "tnt_a").await;
    index
        .reused_by("tnt_a", "other-wf", &[("train", &key(1))])
        .await;
    index
        .reused_by("tnt_b", "b-wf", &[("train", &key(2))])
        .await;
    let step = |workflow: &str| Invalidate::Step {
        workflow: workflow.into(),
        step: "train".into(),
    };
    assert_eq!(index.invalidate("tnt_a", &step("other-wf")).await, Some(1));
    let found = hits(&index, &[key(1), key(2)]).await;
    assert!(found[0].is_none() && found[1].is_some(), "{found:?}");
    // Another tenant's step cannot remove what it did not produce.
    assert_eq!(index.invalidate("tnt_b", &step("b-wf")).await, Some(0));
    assert!(hits(&index, &[key(2)]).await[0].is_some());
}

#[tokio::test]
async fn without_redis_everything_misses_and_nothing_fails() {
    let redis = SharedRedis::connect(
        "redis://127.0.0.1:1",
        Duration::from_millis(50),
        CancellationToken::new(),
    );
    let index = CacheIndex::new(redis, CacheConfig::default());
    assert_eq!(hits(&index, &[key(1)]).await, vec![None]);
    assert_eq!(
        index.admit(&key(1), &entry(1, 1.0, None), "tnt_a").await,
        Admission::Unavailable
    );
    assert_eq!(index.stats("tnt_a").await, None);
}

#[tokio::test]
async fn a_newcomer_from_a_reused_family_outscores_one_from_an_unreused_family() {
    let index = index(1 << 30).await;
    let in_family = |step: &str| {
        let mut e = entry(10, 60.0, None);
        e.step = step.into();
        e
    };
    // Family "train": one output, reused three times (hits) and recomputed
    // once after being dropped. Family "report": three outputs, none reused.
    index.admit(&key(1), &in_family("train"), "tnt_a").await;
    for _ in 0..3 {
        let hits: Vec<(CacheKey, couler_cache::Cached)> = hits(&index, &[key(1)])
            .await
            .into_iter()
            .map(|c| (key(1), c.unwrap()))
            .collect();
        index.reused(&hits).await;
    }
    for n in 10..13 {
        index.admit(&key(n), &in_family("report"), "tnt_a").await;
    }
    index.admit(&key(20), &in_family("train"), "tnt_a").await;
    index.admit(&key(21), &in_family("report"), "tnt_a").await;
    let scores = index.scores(&[key(20), key(21), key(1)]).await.unwrap();
    assert!(scores[0] > scores[1], "{scores:?}");
    assert!(
        scores[2] > scores[0],
        "the reused entry itself scores highest"
    );
}

/// The (decayed) outputs and reuses recorded for the step `train` of `wf`.
async fn train_family(index: &CacheIndex) -> (f64, f64) {
    let family = couler_cache::index::family_of("wf", "train");
    let name = format!("{}:cache:fam:{family}", index.config().prefix);
    let mut c = redis().await.get().expect("connected");
    redis::cmd("HMGET")
        .arg(&name)
        .arg("produced")
        .arg("reused")
        .query_async(&mut c)
        .await
        .unwrap()
}

#[tokio::test]
async fn concurrent_schedulers_lose_no_family_event() {
    let first = index(1 << 40).await;
    // A second scheduler: its own connection, the same index.
    let second = CacheIndex::new(redis().await, first.config().clone());
    let offers = (0..40u32).map(|n| {
        let index = if n % 2 == 0 { &first } else { &second };
        async move { index.admit(&key(n), &entry(10, 1.0, None), "tnt_a").await }
    });
    for outcome in futures::future::join_all(offers).await {
        assert_eq!(outcome, Admission::Admitted);
    }
    let (produced, reused) = train_family(&first).await;
    // Forty outputs within a second of a week's half-life: no decay to speak of.
    assert!((produced - 40.0).abs() < 1e-3, "{produced}");
    assert_eq!(reused, 0.0);
}

#[tokio::test]
async fn a_key_computed_again_counts_as_a_reuse_its_family_missed() {
    let index = index(1 << 30).await;
    assert_eq!(
        index.admit(&key(1), &entry(10, 1.0, None), "tnt_a").await,
        Admission::Admitted
    );
    // Computed again (say after its entry was evicted): no new output.
    assert_eq!(
        index.admit(&key(1), &entry(10, 1.0, None), "tnt_b").await,
        Admission::Exists
    );
    index.admit(&key(2), &entry(10, 1.0, None), "tnt_a").await;
    let (produced, reused) = train_family(&index).await;
    assert!((produced - 2.0).abs() < 1e-3, "{produced}");
    assert!((reused - 1.0).abs() < 1e-3, "{reused}");
}

#[tokio::test]
async fn a_step_keeps_its_record_when_its_bytes_go_and_invalidation_removes_it() {
    use couler_cache::Found;
    let dir = std::env::temp_dir().join(format!("couler-cache-{}", uuid_like()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("model");
    std::fs::write(&file, b"weights").unwrap();
    let index = index(100).await;
    let find = async |keys: &[CacheKey]| index.lookup(keys, &["file://"]).await;
    // Larger than the whole budget: not admitted, but recorded, with the
    // artifact's digest and no location.
    assert_eq!(
        index
            .admit(&key(1), &entry(500, 5.0, Some(&file)), "tnt_a")
            .await,
        Admission::TooBig
    );
    let found = find(&[key(1), key(2)]).await;
    let Found::Record(record) = &found[0] else {
        panic!("{found:?}")
    };
    assert_eq!(record.wall_ms, 5000);
    assert_eq!(record.outputs.result.as_deref(), Some("done"));
    let model = &record.outputs.artifacts.get("model").unwrap();
    assert_eq!((model.digest.as_str(), model.location.as_str()), ("d", ""));
    assert_eq!(found[1], Found::Nothing);
    assert_eq!(index.bytes().await, Some(0));

    // An entry whose artifact was deleted is a miss; what it produced is
    // still on record.
    assert_eq!(
        index
            .admit(&key(3), &entry(10, 5.0, Some(&file)), "tnt_a")
            .await,
        Admission::Admitted
    );
    assert!(matches!(find(&[key(3)]).await[0], Found::Entry(_)));
    std::fs::remove_file(&file).unwrap();
    assert!(matches!(find(&[key(3)]).await[0], Found::Record(_)));

    // Another tenant computing the same keys later neither replaces the
    // records nor can invalidate them; the producer's invalidation removes
    // records as well as entries.
    let mut again = entry(500, 9.0, Some(&file));
    again.producer = "tnt_b".into();
    assert_eq!(
        index.admit(&key(1), &again, "tnt_b").await,
        Admission::TooBig
    );
    assert!(matches!(&find(&[key(1)]).await[0], Found::Record(r) if r.wall_ms == 5000));
    assert_eq!(index.invalidate("tnt_b", &Invalidate::All).await, Some(0));
    assert!(matches!(find(&[key(1)]).await[0], Found::Record(_)));
    index.invalidate("tnt_a", &Invalidate::All).await.unwrap();
    assert_eq!(find(&[key(1), key(3)]).await, vec![Found::Nothing; 2]);
    let _ = std::fs::remove_dir_all(&dir);
}

fn expiring(size: u64, cost_s: f64) -> Entry {
    Entry {
        ttl_secs: 1,
        ..entry(size, cost_s, None)
    }
}

/// Past a one-second TTL, whatever Redis's clock says.
async fn until_expired() {
    tokio::time::sleep(Duration::from_millis(2200)).await;
}

#[tokio::test]
async fn expired_bytes_never_crowd_out_a_newcomer() {
    let index = index(100).await;
    assert_eq!(
        index.admit(&key(1), &entry(30, 60.0, None), "tnt_a").await,
        Admission::Admitted
    );
    // The costliest entry, soon expired: Redis drops it, not its bytes.
    assert_eq!(
        index.admit(&key(2), &expiring(60, 600.0), "tnt_a").await,
        Admission::Admitted
    );
    until_expired().await;
    assert!(hits(&index, &[key(2)]).await[0].is_none());
    // Scoring below the live entry, the newcomer fits only in the expired
    // entry's bytes, which admission reclaims first.
    assert_eq!(
        index.admit(&key(3), &entry(60, 5.0, None), "tnt_a").await,
        Admission::Admitted
    );
    assert_eq!(index.bytes().await, Some(90));
    assert_eq!(index.stats("tnt_a").await.unwrap().entries_produced, 2);
}

#[tokio::test]
async fn a_sweep_leaves_nothing_of_what_expired() {
    let index = index(1000).await;
    index.admit(&key(1), &entry(30, 60.0, None), "tnt_a").await;
    index.admit(&key(2), &expiring(60, 600.0), "tnt_b").await;
    // Too big for the budget: a record only.
    index.admit(&key(3), &expiring(5000, 600.0), "tnt_b").await;
    let hit = hits(&index, &[key(2)]).await.remove(0).unwrap();
    index.reused(&[(key(2), hit)]).await;
    assert_eq!(index.stats("tnt_b").await.unwrap().entries_produced, 1);
    until_expired().await;
    assert_eq!(index.sweep(100).await, Some(2));
    assert_eq!(index.sweep(100).await, Some(0), "nothing is due again");
    assert_eq!(index.bytes().await, Some(30));
    assert_eq!(index.stats("tnt_b").await.unwrap().entries_produced, 0);

    // Nothing under the prefix names the expired keys but their seen marks
    // (kept on purpose, with a TTL of their own), and tenant b's
    // invalidation sets are gone.
    let prefix = format!("{}:cache:", index.config().prefix);
    let mut c = raw().await;
    let names: Vec<String> = redis::cmd("KEYS")
        .arg(format!("{prefix}*"))
        .query_async(&mut c)
        .await
        .unwrap();
    for gone in [key(2), key(3)] {
        let (hex, seen) = (gone.to_string(), format!("{prefix}seen:{gone}"));
        let left: Vec<_> = names.iter().filter(|n| n.contains(&hex)).collect();
        assert_eq!(left, [&seen]);
        for hash in ["sz", "famof", "prodof", "setsof"] {
            let held: bool = redis::cmd("HEXISTS")
                .arg(format!("{prefix}{hash}"))
                .arg(&gone.0)
                .query_async(&mut c)
                .await
                .unwrap();
            assert!(!held, "{hash} still holds {gone:?}");
        }
        for zset in ["z", "exp"] {
            let score: Option<f64> = redis::cmd("ZSCORE")
                .arg(format!("{prefix}{zset}"))
                .arg(&gone.0)
                .query_async(&mut c)
                .await
                .unwrap();
            assert_eq!(score, None, "{zset} still holds {gone:?}");
        }
    }
    assert!(!names.iter().any(|n| n.contains("tnt_b")), "{names:?}");
    assert!(hits(&index, &[key(1)]).await[0].is_some());
}

#[tokio::test]
async fn entries_produced_counts_the_tenants_cached_entries_only() {
    let index = index(100).await;
    let produced = async |tenant: &str| index.stats(tenant).await.unwrap().entries_produced;
    index.admit(&key(1), &entry(60, 5.0, None), "tnt_a").await;
    // A record of an offer too big to cache is not an entry.
    index.admit(&key(2), &entry(500, 5.0, None), "tnt_a").await;
    // Nor is an offer another tenant was first to.
    index.admit(&key(1), &entry(60, 5.0, None), "tnt_b").await;
    assert_eq!((produced("tnt_a").await, produced("tnt_b").await), (1, 0));
    // Evicted by another tenant's costlier newcomer: no longer counted.
    assert_eq!(
        index.admit(&key(3), &entry(60, 600.0, None), "tnt_b").await,
        Admission::Admitted
    );
    assert_eq!((produced("tnt_a").await, produced("tnt_b").await), (0, 1));
    assert_eq!(index.invalidate("tnt_b", &Invalidate::All).await, Some(1));
    assert_eq!(produced("tnt_b").await, 0);
}

#[tokio::test]
async fn the_byte_total_survives_bookkeeping_deleted_behind_its_back() {
    let index = index(1000).await;
    index.admit(&key(1), &expiring(10, 5.0), "tnt_a").await;
    // Behind the service's back: what reclaiming goes by is gone.
    let mut c = raw().await;
    let exp = format!("{}:cache:exp", index.config().prefix);
    let _: () = redis::cmd("DEL")
        .arg(&exp)
        .query_async(&mut c)
        .await
        .unwrap();
    until_expired().await;
    assert_eq!(
        index.admit(&key(1), &entry(10, 5.0, None), "tnt_a").await,
        Admission::Admitted
    );
    assert_eq!(index.bytes().await, Some(10));
    assert_eq!(index.stats("tnt_a").await.unwrap().entries_produced, 1);

    // The byte total itself deleted: counted again from the sizes held.
    let bytes = format!("{}:cache:bytes", index.config().prefix);
    let _: () = redis::cmd("DEL")
        .arg(&bytes)
        .query_async(&mut c)
        .await
        .unwrap();
    index.admit(&key(2), &entry(20, 5.0, None), "tnt_a").await;
    assert_eq!(index.bytes().await, Some(30));
    let _: () = redis::cmd("DEL")
        .arg(&bytes)
        .query_async(&mut c)
        .await
        .unwrap();
    assert_eq!(index.invalidate("tnt_a", &Invalidate::All).await, Some(2));
    assert_eq!(index.bytes().await, Some(0));
}

#[tokio::test]
async fn reuses_are_counted_and_shown_to_the_producer_only() {
    let index = index(1 << 30).await;
    index.admit(&key(1), &entry(10, 5.0, None), "tnt_a").await;
    let usage = async |tenant: &str| index.usage(tenant, &[key(1), key(2)]).await.unwrap();
    assert_eq!(
        usage("tnt_a").await,
        [
            Some(couler_cache::Usage {
                hits: 0,
                last_hit_at: None,
                expires_at: usage("tnt_a").await[0].and_then(|u| u.expires_at),
            }),
            None
        ]
    );
    for _ in 0..3 {
        let hit = hits(&index, &[key(1)]).await.remove(0).unwrap();
        index.reused(&[(key(1), hit)]).await;
    }
    let [Some(mine), None] = usage("tnt_a").await[..] else {
        panic!("{:?}", usage("tnt_a").await)
    };
    assert_eq!(mine.hits, 3);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs() as i64;
    assert!(mine.last_hit_at.is_some_and(|t| (now - t).abs() < 60));
    let ttl = entry(10, 5.0, None).ttl_secs as i64;
    let left = mine.expires_at.map(|t| t - now);
    assert!(
        left.is_some_and(|left| (ttl - 60..=ttl).contains(&left)),
        "{left:?}"
    );
    assert_eq!(usage("tnt_b").await, [None, None]);

    // A TTL beyond the index's maximum is cut to it, and shown so.
    let mut long = entry(10, 5.0, None);
    long.ttl_secs = 1_000 * 24 * 3600;
    index.admit(&key(3), &long, "tnt_a").await;
    let max = CacheConfig::default().max_ttl.as_secs() as i64;
    let shown = index.usage("tnt_a", &[key(3)]).await.unwrap()[0].and_then(|u| u.expires_at);
    let left = shown.map(|t| t - now);
    assert!(
        left.is_some_and(|left| (max - 60..=max).contains(&left)),
        "{left:?}"
    );
}

#[tokio::test]
async fn a_deleted_object_in_a_mounted_store_is_a_miss() {
    let dir = std::env::temp_dir().join(format!("couler-mount-{}", uuid_like()));
    std::fs::create_dir_all(dir.join("runs/r1")).unwrap();
    let object = dir.join("runs/r1/model");
    std::fs::write(&object, b"weights").unwrap();
    let index = index_mounting(1 << 30, "s3://bkt/", &dir).await;
    let at = |location: &str| stored_at(entry(7, 5.0, None), location);
    index
        .admit(&key(1), &at("s3://bkt/runs/r1/model"), "tnt_a")
        .await;
    // Another bucket is not visible here: taken to exist.
    index
        .admit(&key(2), &at("s3://other/runs/r1/model"), "tnt_a")
        .await;
    // A key that climbs out of the mount is not looked for.
    index
        .admit(&key(3), &at("s3://bkt/../outside"), "tnt_a")
        .await;
    let found = |index: CacheIndex| async move {
        hits(&index, &[key(1), key(2), key(3)])
            .await
            .iter()
            .map(Option::is_some)
            .collect::<Vec<_>>()
    };
    assert_eq!(found(index.clone()).await, [true, true, true]);
    std::fs::remove_file(&object).unwrap();
    assert_eq!(found(index.clone()).await, [false, true, true]);
    assert_eq!(index.bytes().await, Some(14), "the stale entry was removed");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_run_computing_keys_holds_them_until_it_lets_go_or_its_claim_lapses() {
    let mut config = index(1 << 30).await.config().clone();
    config.claim_ttl = Duration::from_millis(400);
    let index = CacheIndex::new(redis().await, config);
    let (a, b) = ("run_a", "run_b");
    assert_eq!(index.claim(&[key(1), key(2)], a).await, Some(Claim::Held));
    assert_eq!(index.claim(&[key(1)], a).await, Some(Claim::Held));
    // All or none: another run claims nothing while one key is taken.
    assert_eq!(
        index.claim(&[key(3), key(2), key(2)], b).await,
        Some(Claim::Computing(vec![key(2)]))
    );
    assert_eq!(index.any_claimed(&[key(3)]).await, Some(false));
    // Only the holder lets go.
    index.release_claims(&[key(2)], b).await.unwrap();
    assert_eq!(index.any_claimed(&[key(2)]).await, Some(true));
    index.release_claims(&[key(2)], a).await.unwrap();
    assert_eq!(index.claim(&[key(3), key(2)], b).await, Some(Claim::Held));
    // Renewed claims outlive their TTL; the others lapse.
    for _ in 0..4 {
        tokio::time::sleep(Duration::from_millis(150)).await;
        index.renew_claims(&[key(1)], a).await.unwrap();
    }
    assert_eq!(index.any_claimed(&[key(1)]).await, Some(true));
    assert_eq!(index.any_claimed(&[key(2), key(3)]).await, Some(false));
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(index.any_claimed(&[key(1)]).await, Some(false));
    assert_eq!(index.claim(&[key(1)], b).await, Some(Claim::Held));
    // Claiming what is free leaves the rest to its holder.
    assert_eq!(
        index.claim_free(&[key(1), key(4)], a).await,
        Some(vec![false, true])
    );
    assert_eq!(
        index.claim(&[key(4)], b).await,
        Some(Claim::Computing(vec![key(4)]))
    );

    // Without Redis nothing is claimed nor waited for.
    let away = CacheIndex::new(SharedRedis::default(), CacheConfig::default());
    assert_eq!(away.claim(&[key(1)], a).await, None);
    assert_eq!(away.any_claimed(&[key(1)]).await, None);
}
