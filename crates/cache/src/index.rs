//! The cache index in Redis, shared by every scheduler and tenant.
//!
//! Layout under the configured prefix `P`:
//! `P:cache:e:<key>` the entry (positional MessagePack, see
//! [`Entry::payload`]; expiring with its TTL);
//! `P:cache:z` importance scores; `P:cache:sz` sizes; `P:cache:bytes` the
//! byte total; `P:cache:hits:<key>` an entry's reuses (`n`) and when it
//! was last reused (`last`, Unix seconds); `P:cache:fam:<family>`
//! decaying reuse events of a step family and `P:cache:famof` each entry's
//! family (a digest of workflow and step names, no tenant id);
//! `P:cache:seen:<key>` marks keys computed before, so recomputing one
//! counts as a reuse the cache missed; `P:cache:r:<key>` the record of a
//! computed step (its outputs' values and digests and its cost, no
//! artifact locations), kept for the entry's TTL whether the entry was
//! admitted, rejected or later evicted, so that a step whose bytes are gone
//! still keys its consumers and need not run when they all hit;
//! `P:cache:stats:<tenant>` a tenant's hits, misses and savings;
//! `P:cache:prodof` each entry's producer and `P:cache:produced` how many
//! entries each tenant produced are cached; `P:cache:c:<key>` an entry's
//! copies in other stores (see [`scripts::ADMIT`]); sets of keys per producing
//! tenant, per workflow step, per image and per cache version, for
//! invalidation, with `P:cache:setsof` the sets each key joined; and
//! `P:cache:exp`, when each key's record expires, so that what expired is
//! reclaimed (see [`scripts`]). Admission and eviction run as one Lua
//! script, so scores and the byte total stay consistent under concurrent
//! schedulers.
//!
//! Redis being away or slow (past the timeout) never fails a run: lookups
//! miss, writes are skipped, and a metric counts it.

mod inflight;
mod lookup;
mod scripts;
mod tenants;

use crate::SharedRedis;
use crate::importance::{self, ReuseStats, Weights};
use crate::key::CacheKey;
use couler_objects::{Mount, S3Store, Stores};
use couler_optimizer::StepOutputs;
pub use inflight::Claim;
pub use lookup::readable;
use scripts::{
    ADMIT, DROP_COPIES, FAMILY, GONE, INVALIDATE, JOIN_STEP, RECLAIM_PER_ADMISSION, SWEEP,
};
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::Duration;
pub use tenants::{Invalidate, Stats, Usage};

#[derive(Debug, Clone)]
pub struct CacheConfig {
    pub prefix: String,
    /// Bytes of artifacts the cache may hold.
    pub budget_bytes: u64,
    /// TTL when neither the step nor the tenant sets one.
    pub default_ttl: Duration,
    /// No entry lives longer.
    pub max_ttl: Duration,
    pub weights: Weights,
    /// Importance an entry loses per hour nobody reuses it.
    pub aging_per_hour: f64,
    /// Half-life of a step family's reuse events.
    pub family_half_life: Duration,
    pub timeout: Duration,
    /// How long a run's claim on a key it is computing lasts unless the
    /// run renews it (see [`Claim`]).
    pub claim_ttl: Duration,
    /// Object stores readable on this host as directories: a hit's
    /// artifacts under them are checked to exist, as `file://` ones are.
    pub mounts: Vec<Mount>,
    /// S3-compatible stores a hit's artifacts are asked about.
    pub s3: Vec<S3Store>,
}

impl Default for CacheConfig {
    fn default() -> Self {
        CacheConfig {
            prefix: "couler".into(),
            budget_bytes: 20 << 30,
            default_ttl: Duration::from_secs(7 * 24 * 3600),
            max_ttl: Duration::from_secs(90 * 24 * 3600),
            weights: Weights::default(),
            aging_per_hour: 1.0 / 24.0,
            family_half_life: Duration::from_secs(7 * 24 * 3600),
            timeout: Duration::from_millis(250),
            claim_ttl: Duration::from_secs(30),
            mounts: Vec::new(),
            s3: Vec::new(),
        }
    }
}

/// What a cached step produced and what it cost: the [`Cached`] part the
/// index stores and hands out on a hit, and what is kept where it is used
/// (the producer, image, version and step in the invalidation sets and
/// `P:cache:prodof`, the TTL as the key's).
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    pub cached: Cached,
    /// The producing tenant, for accounting; never shown to other tenants.
    pub producer: String,
    pub ttl_secs: u64,
    pub image: String,
    pub version: Option<String>,
    /// The workflow and step that produced it, in the producer's tenant.
    pub workflow: String,
    pub step: String,
}

/// What the index stores of an entry: the outputs to reuse, what reusing
/// them saves, what re-scoring it on reuse needs, and the producing step's
/// measured cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cached {
    #[serde(with = "stored_outputs")]
    pub outputs: StepOutputs,
    pub wall_ms: u64,
    pub cpu_ms: u64,
    pub max_rss_kb: u64,
    pub size: u64,
    /// `L(u)`, to re-score on reuse.
    pub reconstruction: f64,
    /// The successors' cost; shown, not scored (see [`importance`]).
    pub downstream: f64,
    /// Unix seconds.
    pub created_at: i64,
}

impl Entry {
    /// How the index stores an entry: its [`Cached`] part, [`stored`]. The
    /// scripts find the artifacts' store in it too (`store_in` in
    /// [`scripts`]); a change to this layout changes the keys' `CONTEXT`,
    /// so that no payload is read as another.
    fn payload(&self) -> Vec<u8> {
        stored(&self.cached)
    }
}

/// What the index writes to Redis (entries, copies, records): positional
/// MessagePack, with no field names to match when a lookup decodes
/// thousands of them.
fn stored<T: Serialize>(value: &T) -> Vec<u8> {
    rmp_serde::to_vec(value).expect("what the index stores serializes")
}

/// A value [`stored`] before; `None` for anything else.
fn load<T: serde::de::DeserializeOwned>(payload: &[u8]) -> Option<T> {
    rmp_serde::from_slice(payload).ok()
}

/// What the index remembers of a computed step after its bytes may be
/// gone: enough to key its consumers and to stand in for it when none of
/// them runs. [`stored`] as entries are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Record {
    /// The outputs, artifact locations left empty: the bytes may be gone.
    #[serde(with = "stored_outputs")]
    pub outputs: StepOutputs,
    pub wall_ms: u64,
}

impl Record {
    fn of(entry: &Entry) -> Record {
        let mut outputs = entry.cached.outputs.clone();
        for (_, artifact) in outputs.artifacts.iter_mut() {
            artifact.location.clear();
        }
        Record {
            outputs,
            wall_ms: entry.cached.wall_ms,
        }
    }
}

/// A step's outputs as the index stores them: every field, in a fixed
/// order (`StepOutputs` leaves empty ones out, which a positional encoding
/// cannot), artifacts first: `[artifacts, parameters, result]`, each
/// artifact `[digest, size, location]` under its name.
mod stored_outputs {
    use couler_optimizer::{ArtifactRef, Named, StepOutputs};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(o: &StepOutputs, s: S) -> Result<S::Ok, S::Error> {
        (&o.artifacts, &o.parameters, &o.result).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<StepOutputs, D::Error> {
        let (artifacts, parameters, result) =
            <(Named<ArtifactRef>, Named<String>, Option<String>)>::deserialize(d)?;
        Ok(StepOutputs {
            result,
            parameters,
            artifacts,
        })
    }
}

/// What the index holds under one key.
#[derive(Debug, Clone, PartialEq)]
pub enum Found {
    /// A usable entry: its artifacts are in their store.
    Entry(Box<Cached>),
    /// No usable entry, but the step was computed under this key.
    Record(Box<Record>),
    Nothing,
}

impl Found {
    /// The entry, on a hit.
    pub fn entry(&self) -> Option<&Cached> {
        match self {
            Found::Entry(entry) => Some(entry.as_ref()),
            _ => None,
        }
    }
}

/// The stored (aged) score of an entry with `requests` so far, its family
/// as `family`, at `now` (hours since the Unix epoch).
fn score(
    config: &CacheConfig,
    reconstruction: f64,
    size: u64,
    family: &ReuseStats,
    requests: u64,
    now: f64,
) -> f64 {
    let reuse = importance::reuse_value(importance::reuse_chance(family, requests));
    let score = importance::score(&config.weights, reconstruction, reuse, size);
    importance::aged(score, now, config.aging_per_hour)
}

/// A step family's id: the same step of the same workflow, whatever its
/// configuration. A digest of the names, so no tenant id is stored; two
/// tenants' steps of the same names share their reuse statistics.
pub fn family_of(workflow: &str, step: &str) -> String {
    let mut h = blake3::Hasher::new_derive_key("couler.dev 2026 cache family v1");
    h.update(&(workflow.len() as u64).to_le_bytes());
    h.update(workflow.as_bytes());
    h.update(step.as_bytes());
    h.finalize().to_hex()[..32].to_owned()
}

fn since_epoch() -> Duration {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
}

fn unix_now() -> i64 {
    since_epoch().as_secs() as i64
}

fn now_hours() -> f64 {
    since_epoch().as_secs_f64() / 3600.0
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    Admitted,
    /// Already cached in an artifact store of its own; kept as a copy for
    /// the engines that read that store and not the entry's.
    Copied,
    /// Already cached (another scheduler was first), in the same store.
    Exists,
    /// Over budget, and everything it would evict matters more.
    Rejected,
    /// Larger than the whole budget.
    TooBig,
    /// Redis was unreachable; nothing written.
    Unavailable,
}

/// What happened to a step family's output.
enum FamilyEvent<'a> {
    /// A cached output was read again.
    Reused,
    /// The step ran and produced this key: a new output, or, when the key
    /// was computed before, a reuse the cache missed.
    Computed(&'a CacheKey),
}

#[derive(Clone)]
pub struct CacheIndex {
    redis: SharedRedis,
    config: CacheConfig,
    stores: Stores,
    admit: Arc<redis::Script>,
    gone: Arc<redis::Script>,
    invalidate: Arc<redis::Script>,
    sweep: Arc<redis::Script>,
    family: Arc<redis::Script>,
    drop_copies: Arc<redis::Script>,
    join_step: Arc<redis::Script>,
    claim: Arc<redis::Script>,
    keep: Arc<redis::Script>,
}

impl CacheIndex {
    pub fn new(redis: SharedRedis, config: CacheConfig) -> CacheIndex {
        CacheIndex {
            redis,
            stores: Stores::new(config.mounts.clone(), config.s3.clone()),
            config,
            admit: Arc::new(redis::Script::new(ADMIT)),
            gone: Arc::new(redis::Script::new(GONE)),
            invalidate: Arc::new(redis::Script::new(INVALIDATE)),
            sweep: Arc::new(redis::Script::new(SWEEP)),
            family: Arc::new(redis::Script::new(FAMILY)),
            drop_copies: Arc::new(redis::Script::new(DROP_COPIES)),
            join_step: Arc::new(redis::Script::new(JOIN_STEP)),
            claim: Arc::new(redis::Script::new(inflight::CLAIM)),
            keep: Arc::new(redis::Script::new(inflight::KEEP)),
        }
    }

    /// Where artifacts live, as this host sees them.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    pub fn config(&self) -> &CacheConfig {
        &self.config
    }

    fn k(&self, rest: &str) -> String {
        format!("{}:cache:{rest}", self.config.prefix)
    }

    /// `P:cache:e:<key>`, where an entry lives.
    fn entry_name(&self, key: &CacheKey) -> String {
        format!("{}{key}", self.k("e:"))
    }

    /// The names of the entries of `keys`, as arguments of one command.
    fn entry_names<'a>(&self, keys: &'a [CacheKey]) -> EntryNames<'a> {
        EntryNames {
            stem: self.k("e:"),
            keys,
        }
    }

    /// Runs a Redis call under the timeout; `None` when Redis is away.
    async fn call<T>(
        &self,
        what: &str,
        f: impl AsyncFnOnce(redis::aio::ConnectionManager) -> redis::RedisResult<T>,
    ) -> Option<T> {
        let Some(conn) = self.redis.get() else {
            metrics::counter!("couler_cache_degraded_total", "op" => what.to_owned()).increment(1);
            return None;
        };
        match tokio::time::timeout(self.config.timeout, f(conn)).await {
            Ok(Ok(v)) => Some(v),
            Ok(Err(e)) => {
                metrics::counter!("couler_cache_degraded_total", "op" => what.to_owned())
                    .increment(1);
                tracing::warn!(error = %e, op = what, "cache index unavailable");
                None
            }
            Err(_) => {
                metrics::counter!("couler_cache_degraded_total", "op" => what.to_owned())
                    .increment(1);
                tracing::warn!(op = what, "cache index timed out");
                None
            }
        }
    }

    /// Records one event per family and returns each family's counts after
    /// its event.
    async fn family_events(
        &self,
        events: &[(&str, FamilyEvent<'_>)],
        now: f64,
    ) -> Option<Vec<ReuseStats>> {
        if events.is_empty() {
            return Some(Vec::new());
        }
        let half_life = self.config.family_half_life.as_secs_f64() / 3600.0;
        // Events decayed to nothing are not worth keeping.
        let expiry = 8 * self.config.family_half_life.as_secs().max(1);
        // Seen marks last two half-lives: older events weigh a quarter at most.
        let remembered = 2 * self.config.family_half_life.as_secs().max(1);
        let counts: Vec<(f64, f64, f64)> = self
            .call("family", async |mut c| {
                let mut inv = self.family.prepare_invoke();
                for (family, _) in events {
                    inv.key(self.k(&format!("fam:{family}")));
                }
                for (_, event) in events {
                    if let FamilyEvent::Computed(key) = event {
                        inv.key(self.k(&format!("seen:{key}")));
                    }
                }
                inv.arg(now).arg(half_life).arg(expiry).arg(remembered);
                for (_, event) in events {
                    inv.arg(match event {
                        FamilyEvent::Reused => "reused",
                        FamilyEvent::Computed(_) => "computed",
                    });
                }
                inv.invoke_async(&mut c).await
            })
            .await?;
        Some(
            counts
                .into_iter()
                .map(|(produced, reused, at)| ReuseStats {
                    produced,
                    reused,
                    at,
                })
                .collect(),
        )
    }

    /// Counts reuses of hit entries, in their families too, and re-scores
    /// them.
    pub async fn reused(&self, hits: &[(CacheKey, Cached)]) {
        if hits.is_empty() {
            return;
        }
        let now = now_hours();
        let z = self.k("z");
        let famof = self.k("famof");
        let counters: Vec<String> = hits
            .iter()
            .map(|(k, _)| self.k(&format!("hits:{k}")))
            .collect();
        let keys: Vec<CacheKey> = hits.iter().map(|(k, _)| *k).collect();
        let counted: Option<(Vec<Option<String>>, Vec<u64>)> = self
            .call("reuse", async |mut c| {
                let mut p = redis::pipe();
                p.cmd("HMGET").arg(&famof).arg(&keys);
                let last = unix_now();
                for name in &counters {
                    p.hincr(name, "n", 1u64);
                    p.hset(name, "last", last).ignore();
                }
                // One round trip: the families, then each hit's new count.
                head_and_rest(p.query_async(&mut c).await?)
            })
            .await;
        let Some((families, counts)) = counted else {
            return;
        };
        let events: Vec<(&str, FamilyEvent)> = families
            .iter()
            .flatten()
            .map(|f| (f.as_str(), FamilyEvent::Reused))
            .collect();
        let Some(mut after) = self.family_events(&events, now).await.map(Vec::into_iter) else {
            return;
        };
        let mut p = redis::pipe();
        for (((key, entry), reuses), family) in hits.iter().zip(counts).zip(&families) {
            // Each hit's family as its reuse left it; none for an entry
            // admitted before families were kept.
            let family = match family {
                Some(_) => after.next().unwrap_or_default(),
                None => ReuseStats::default(),
            };
            let score = score(
                &self.config,
                entry.reconstruction,
                entry.size,
                &family,
                reuses + 1,
                now,
            );
            // A reuse raises a score (one more request, a later clock), so
            // of two schedulers re-scoring at once the one that counted
            // more wins, whichever writes last.
            p.cmd("ZADD")
                .arg(&z)
                .arg("XX")
                .arg("GT")
                .arg(score)
                .arg(key)
                .ignore();
        }
        let _: Option<()> = self
            .call("rescore", async |mut c| p.query_async(&mut c).await)
            .await;
    }

    /// Offers a computed step's result to the cache (Algorithm 2).
    pub async fn admit(&self, key: &CacheKey, entry: &Entry, tenant: &str) -> Admission {
        let ttl = entry.ttl_secs.clamp(1, self.config.max_ttl.as_secs());
        let now = now_hours();
        let family = family_of(&entry.workflow, &entry.step);
        let event = FamilyEvent::Computed(key);
        let Some(stats) = self.family_events(&[(family.as_str(), event)], now).await else {
            return Admission::Unavailable;
        };
        let stats = &stats[0];
        let score = score(
            &self.config,
            entry.cached.reconstruction,
            entry.cached.size,
            stats,
            1,
            now,
        );
        let payload = entry.payload();
        let record = stored(&Record::of(entry));
        let mut sets = vec![
            self.k(&format!("tenant:{tenant}")),
            self.k(&format!("image:{}", entry.image)),
        ];
        sets.push(self.k(&format!("step:{tenant}:{}:{}", entry.workflow, entry.step)));
        if let Some(v) = &entry.version {
            sets.push(self.k(&format!("version:{v}")));
        }
        let keys = [self.entry_name(key), self.k(&format!("r:{key}"))];
        let outcome: Option<String> = self
            .call("admit", async |mut c| {
                let mut inv = self.admit.prepare_invoke();
                inv.key(&keys[0])
                    .key(&keys[1])
                    .arg(self.k(""))
                    .arg(key)
                    .arg(entry.cached.size)
                    .arg(score)
                    .arg(self.config.budget_bytes)
                    .arg(ttl)
                    .arg(&payload)
                    .arg(&family)
                    .arg(&record)
                    .arg(tenant)
                    .arg(RECLAIM_PER_ADMISSION)
                    .arg(lookup::store_of(&entry.cached.outputs));
                for s in &sets {
                    inv.arg(s);
                }
                inv.invoke_async(&mut c).await
            })
            .await;
        let admission = match outcome.as_deref() {
            Some("admitted") => Admission::Admitted,
            Some("copied") => Admission::Copied,
            Some("exists") => Admission::Exists,
            Some("rejected") => Admission::Rejected,
            Some("too_big") => Admission::TooBig,
            _ => Admission::Unavailable,
        };
        metrics::counter!("couler_cache_admissions_total", "outcome" => format!("{admission:?}").to_lowercase()).increment(1);
        admission
    }

    /// Frees what expired entries and records left behind (their bytes,
    /// scores and places in the invalidation sets), up to `limit` keys;
    /// returns how many were due (`None` when Redis is away). Admissions
    /// reclaim as they go; this drains the rest.
    pub async fn sweep(&self, limit: u32) -> Option<u64> {
        self.call("sweep", async |mut c| {
            self.sweep
                .arg(self.k(""))
                .arg(limit)
                .invoke_async(&mut c)
                .await
        })
        .await
    }

    /// The stored scores of `keys` (`None` for an entry not held).
    pub async fn scores(&self, keys: &[CacheKey]) -> Option<Vec<Option<f64>>> {
        let z = self.k("z");
        self.call("scores", async |mut c| {
            let mut p = redis::pipe();
            for k in keys {
                p.zscore(&z, k);
            }
            p.query_async(&mut c).await
        })
        .await
    }

    /// Bytes the index holds.
    pub async fn bytes(&self) -> Option<u64> {
        let name = self.k("bytes");
        self.call("bytes", async |mut c| {
            redis::cmd("GET")
                .arg(&name)
                .query_async::<Option<u64>>(&mut c)
                .await
        })
        .await
        .map(|b| b.unwrap_or(0))
    }
}

/// A pipeline's first reply, then each of the others, decoded.
fn head_and_rest<A: redis::FromRedisValue, B: redis::FromRedisValue>(
    mut replies: Vec<redis::Value>,
) -> redis::RedisResult<(A, Vec<B>)> {
    let rest = replies
        .split_off(1.min(replies.len()))
        .into_iter()
        .map(|v| redis::from_redis_value(v).map_err(redis::RedisError::from))
        .collect::<redis::RedisResult<_>>()?;
    let head = redis::from_redis_value(replies.pop().unwrap_or(redis::Value::Nil))?;
    Ok((head, rest))
}

/// [`CacheIndex::entry_names`]: each name written straight into the
/// command, with no `String` per key.
struct EntryNames<'a> {
    stem: String,
    keys: &'a [CacheKey],
}

impl redis::ToRedisArgs for EntryNames<'_> {
    fn write_redis_args<W: ?Sized + redis::RedisWrite>(&self, out: &mut W) {
        use std::io::Write as _;
        for key in self.keys {
            let mut name = out.writer_for_next_arg();
            // Writing to a command's buffer cannot fail.
            let _ = name.write_all(self.stem.as_bytes());
            let _ = name.write_all(key.hex().as_bytes());
        }
    }

    fn num_of_args(&self) -> usize {
        self.keys.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_optimizer::{ArtifactRef, Named};

    fn entry(outputs: StepOutputs) -> Entry {
        Entry {
            cached: Cached {
                outputs,
                wall_ms: 1500,
                cpu_ms: 1200,
                max_rss_kb: 4096,
                size: 10,
                reconstruction: 1.5,
                downstream: 0.5,
                created_at: 1_700_000_000,
            },
            producer: "tnt_a".into(),
            ttl_secs: 60,
            image: "python:3.12".into(),
            version: Some("2".into()),
            workflow: "wf".into(),
            step: "train".into(),
        }
    }

    #[test]
    fn payloads_decode_to_what_was_stored_whatever_outputs_are_empty() {
        let full = StepOutputs {
            result: Some("ok".into()),
            parameters: Named::from_iter([("b".into(), "2".into()), ("a".into(), "1".into())]),
            artifacts: Named::from_iter([(
                "model".into(),
                ArtifactRef {
                    digest: "d".repeat(64),
                    size: 10,
                    location: "s3://bucket/model".into(),
                },
            )]),
        };
        for outputs in [full, StepOutputs::default()] {
            let e = entry(outputs);
            let cached: Cached = load(&e.payload()).expect("the payload decodes");
            assert_eq!(cached, e.cached);
            assert_eq!(
                (
                    cached.wall_ms,
                    cached.cpu_ms,
                    cached.max_rss_kb,
                    cached.size
                ),
                (1500, 1200, 4096, 10)
            );
            assert_eq!((cached.reconstruction, cached.downstream), (1.5, 0.5));
            assert_eq!(cached.created_at, 1_700_000_000);
            let record = Record::of(&e);
            assert_eq!(load(&stored(&record)), Some(record));
        }
        // Nothing else passes for a payload: not a record, not garbage.
        assert_eq!(
            load::<Cached>(&stored(&Record::of(&entry(StepOutputs::default())))),
            None
        );
        assert_eq!(load::<Cached>(b"\x92\x01"), None);
    }
}
