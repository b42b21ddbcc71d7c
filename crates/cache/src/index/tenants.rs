//! What tenants and platform admins ask of the index: how their entries
//! were reused, their statistics (aggregates only, never another tenant's
//! entries), invalidation of what they produced, and a flush of it all.

use super::{CacheIndex, head_and_rest};
use crate::key::CacheKey;
use serde::{Deserialize, Serialize};

/// How an entry has been reused (shown only to the tenant that produced it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub hits: u64,
    /// Unix seconds of the latest hit.
    pub last_hit_at: Option<i64>,
    /// Unix seconds when the entry expires: its TTL as admitted (the step's
    /// `cache.ttl` or the tenant's default, at most the index's maximum).
    pub expires_at: Option<i64>,
}

/// What to invalidate, within the tenant's own entries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Invalidate {
    Step { workflow: String, step: String },
    Image(String),
    Version(String),
    All,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stats {
    pub hits: u64,
    pub misses: u64,
    pub bytes_saved: u64,
    pub compute_ms_saved: u64,
    /// Entries the tenant produced that are still cached.
    pub entries_produced: u64,
}

impl CacheIndex {
    /// How each of `keys`' entries was reused, for the entries `tenant`
    /// produced (`None` for the others and for keys with no entry).
    pub async fn usage(&self, tenant: &str, keys: &[CacheKey]) -> Option<Vec<Option<Usage>>> {
        if keys.is_empty() {
            return Some(Vec::new());
        }
        let prodof = self.k("prodof");
        let (producers, replies): (Vec<Option<String>>, Vec<redis::Value>) = self
            .call("usage", async |mut c| {
                let mut p = redis::pipe();
                p.cmd("HMGET").arg(&prodof).arg(keys);
                for k in keys {
                    p.cmd("HMGET")
                        .arg(self.k(&format!("hits:{k}")))
                        .arg("n")
                        .arg("last");
                }
                for k in keys {
                    p.cmd("TTL").arg(self.entry_name(k));
                }
                head_and_rest(p.query_async(&mut c).await?)
            })
            .await?;
        let (counts, ttls) = replies.split_at(keys.len().min(replies.len()));
        let now = super::unix_now();
        Some(
            producers
                .into_iter()
                .zip(counts.iter().zip(ttls))
                .map(|(producer, (counts, ttl))| {
                    let (hits, last): (Option<u64>, Option<i64>) =
                        redis::from_redis_value_ref(counts).unwrap_or_default();
                    let ttl: i64 = redis::from_redis_value_ref(ttl).unwrap_or(-2);
                    (producer.as_deref() == Some(tenant)).then_some(Usage {
                        hits: hits.unwrap_or(0),
                        last_hit_at: last,
                        // -1: no expiry, -2: gone since the lookup.
                        expires_at: (ttl >= 0).then_some(now + ttl),
                    })
                })
                .collect(),
        )
    }

    /// Counts hits in the tenant's statistics, with what they saved.
    pub async fn record_hits(&self, tenant: &str, hits: u64, bytes_saved: u64, ms_saved: u64) {
        let stats = self.k(&format!("stats:{tenant}"));
        let _: Option<()> = self
            .call("stats", async |mut c| {
                redis::pipe()
                    .hincr(&stats, "hits", hits)
                    .ignore()
                    .hincr(&stats, "bytes_saved", bytes_saved)
                    .ignore()
                    .hincr(&stats, "compute_ms_saved", ms_saved)
                    .ignore()
                    .query_async(&mut c)
                    .await
            })
            .await;
    }

    /// Counts cacheable steps that had to run in the tenant's statistics.
    pub async fn record_misses(&self, tenant: &str, misses: u64) {
        let stats = self.k(&format!("stats:{tenant}"));
        let _: Option<i64> = self
            .call("stats", async |mut c| {
                redis::cmd("HINCRBY")
                    .arg(&stats)
                    .arg("misses")
                    .arg(misses)
                    .query_async(&mut c)
                    .await
            })
            .await;
    }

    /// A tenant's statistics (aggregates only: no other tenant's entries).
    pub async fn stats(&self, tenant: &str) -> Option<Stats> {
        let stats = self.k(&format!("stats:{tenant}"));
        let produced = self.k("produced");
        let (map, entries): (std::collections::HashMap<String, u64>, Option<i64>) = self
            .call("stats", async |mut c| {
                redis::pipe()
                    .hgetall(&stats)
                    .hget(&produced, tenant)
                    .query_async(&mut c)
                    .await
            })
            .await?;
        let get = |k: &str| map.get(k).copied().unwrap_or(0);
        Some(Stats {
            hits: get("hits"),
            misses: get("misses"),
            bytes_saved: get("bytes_saved"),
            compute_ms_saved: get("compute_ms_saved"),
            entries_produced: entries.unwrap_or(0).max(0) as u64,
        })
    }

    /// Removes entries the tenant produced that match, and its copies of
    /// other tenants' entries, in one script (see
    /// [`INVALIDATE`](super::scripts::INVALIDATE)); returns how many.
    pub async fn invalidate(&self, tenant: &str, what: &Invalidate) -> Option<u64> {
        let set = match what {
            Invalidate::Step { workflow, step } => format!("step:{tenant}:{workflow}:{step}"),
            Invalidate::Image(image) => format!("image:{image}"),
            Invalidate::Version(v) => format!("version:{v}"),
            Invalidate::All => format!("tenant:{tenant}"),
        };
        let mine = format!("tenant:{tenant}");
        self.call("invalidate", async |mut c| {
            self.invalidate
                .arg(self.k(""))
                .arg(tenant)
                .arg(self.k(&mine))
                .arg(self.k(&set))
                .arg(self.k(&format!("copy:{mine}")))
                .arg(self.k(&format!("copy:{set}")))
                .invoke_async(&mut c)
                .await
        })
        .await
    }

    /// Notes the entries that `tenant`'s steps of `workflow` reused
    /// (`(step, key)`), so that [`invalidate`](Self::invalidate) by step
    /// finds them too, not only those the step itself wrote.
    pub async fn reused_by(&self, tenant: &str, workflow: &str, hits: &[(&str, &CacheKey)]) {
        if hits.is_empty() {
            return;
        }
        let _: Option<u64> = self
            .call("reused-by", async |mut c| {
                let mut inv = self.join_step.prepare_invoke();
                inv.arg(self.k(""));
                for (step, key) in hits {
                    inv.arg(*key)
                        .arg(self.k(&format!("step:{tenant}:{workflow}:{step}")));
                }
                inv.invoke_async(&mut c).await
            })
            .await;
    }

    /// Empties the whole index (platform admins).
    pub async fn flush(&self) -> Option<u64> {
        let pattern = format!("{}:cache:*", self.config.prefix);
        self.call("flush", async |mut c| {
            let mut removed = 0u64;
            let mut cursor = 0u64;
            loop {
                let (next, names): (u64, Vec<String>) = redis::cmd("SCAN")
                    .arg(cursor)
                    .arg("MATCH")
                    .arg(&pattern)
                    .arg("COUNT")
                    .arg(1000)
                    .query_async(&mut c)
                    .await?;
                if !names.is_empty() {
                    removed += names.len() as u64;
                    redis::cmd("UNLINK")
                        .arg(&names)
                        .query_async::<()>(&mut c)
                        .await?;
                }
                if next == 0 {
                    return Ok(removed);
                }
                cursor = next;
            }
        })
        .await
    }
}
