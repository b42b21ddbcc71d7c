//! Computations in flight. A run about to compute steps claims their keys,
//! so that another run about to compute the same keys waits for the
//! results instead of computing them again (what Flyte calls cache
//! serialisation; here it spans tenants, as entries do).
//!
//! A claim names its holder (a run) and lapses after
//! [`CacheConfig::claim_ttl`](crate::CacheConfig) unless the holder renews
//! it, so a holder that dies holds nobody up for long. A run claims all of
//! its keys or none (one script), so two runs never wait for each other.

use super::CacheIndex;
use crate::key::CacheKey;

/// Claims the keys for holder `ARGV[1]` (`ARGV[2]` milliseconds): with
/// `ARGV[3]` = `all`, every key or none; otherwise each key no other holder
/// claimed. Returns the positions (from 1) of the keys other holders
/// claimed; a key the holder held already is renewed. Keys may repeat.
pub(super) const CLAIM: &str = r#"
local held, taken = {}, {}
for i, k in ipairs(KEYS) do
  local v = redis.call('GET', k)
  if v and v ~= ARGV[1] then
    held[#held + 1] = i
    taken[i] = true
  end
end
if #held == 0 or ARGV[3] ~= 'all' then
  for i, k in ipairs(KEYS) do
    if not taken[i] then redis.call('SET', k, ARGV[1], 'PX', ARGV[2]) end
  end
end
return held
"#;

/// Renews (`ARGV[2]` milliseconds) or, with `ARGV[2]` 0, releases the keys
/// `ARGV[1]` holds; leaves others' alone.
pub(super) const KEEP: &str = r#"
for _, k in ipairs(KEYS) do
  if redis.call('GET', k) == ARGV[1] then
    if ARGV[2] == '0' then redis.call('DEL', k) else redis.call('PEXPIRE', k, ARGV[2]) end
  end
end
return 0
"#;

/// What a claim found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Claim {
    /// The holder holds every key now.
    Held,
    /// Other holders are computing these keys; nothing was claimed.
    Computing(Vec<CacheKey>),
}

impl CacheIndex {
    /// `P:cache:claim:<key>`, the claim on a key.
    fn claim_name(&self, key: &CacheKey) -> String {
        self.k(&format!("claim:{key}"))
    }

    /// Claims all of `keys` for `holder`, or none (see [`Claim`]); `None`
    /// when Redis is away, when nothing can be claimed nor waited for.
    pub async fn claim(&self, keys: &[CacheKey], holder: &str) -> Option<Claim> {
        let taken = self.claim_with(keys, holder, true).await?;
        if taken.is_empty() {
            return Some(Claim::Held);
        }
        let mut computing: Vec<CacheKey> = taken.into_iter().map(|i| keys[i]).collect();
        computing.sort();
        computing.dedup();
        Some(Claim::Computing(computing))
    }

    /// Claims those of `keys` no other holder claimed: whether `holder`
    /// holds each now (`None` when Redis is away).
    pub async fn claim_free(&self, keys: &[CacheKey], holder: &str) -> Option<Vec<bool>> {
        let taken = self.claim_with(keys, holder, false).await?;
        let mut held = vec![true; keys.len()];
        for i in taken {
            held[i] = false;
        }
        Some(held)
    }

    /// The positions of the keys other holders claimed.
    async fn claim_with(&self, keys: &[CacheKey], holder: &str, all: bool) -> Option<Vec<usize>> {
        if keys.is_empty() {
            return Some(Vec::new());
        }
        let ttl = (self.config.claim_ttl.as_millis() as u64).max(1);
        let taken: Vec<usize> = self
            .call("claim", async |mut c| {
                let mut inv = self.claim.prepare_invoke();
                for key in keys {
                    inv.key(self.claim_name(key));
                }
                let mode = if all { "all" } else { "free" };
                inv.arg(holder)
                    .arg(ttl)
                    .arg(mode)
                    .invoke_async(&mut c)
                    .await
            })
            .await?;
        Some(
            taken
                .into_iter()
                .filter_map(|i| i.checked_sub(1).filter(|&i| i < keys.len()))
                .collect(),
        )
    }

    /// Keeps `holder`'s claims on `keys` for another claim TTL.
    pub async fn renew_claims(&self, keys: &[CacheKey], holder: &str) -> Option<()> {
        let ttl = (self.config.claim_ttl.as_millis() as u64).max(1);
        self.keep(keys, holder, ttl, "renew_claims").await
    }

    /// Lets go of `holder`'s claims on `keys`.
    pub async fn release_claims(&self, keys: &[CacheKey], holder: &str) -> Option<()> {
        self.keep(keys, holder, 0, "release_claims").await
    }

    async fn keep(&self, keys: &[CacheKey], holder: &str, ttl_ms: u64, what: &str) -> Option<()> {
        if keys.is_empty() {
            return Some(());
        }
        let _: i64 = self
            .call(what, async |mut c| {
                let mut inv = self.keep.prepare_invoke();
                for key in keys {
                    inv.key(self.claim_name(key));
                }
                inv.arg(holder).arg(ttl_ms).invoke_async(&mut c).await
            })
            .await?;
        Some(())
    }

    /// Whether any of `keys` is still claimed; `None` when Redis is away.
    pub async fn any_claimed(&self, keys: &[CacheKey]) -> Option<bool> {
        if keys.is_empty() {
            return Some(false);
        }
        let names: Vec<String> = keys.iter().map(|k| self.claim_name(k)).collect();
        let claimed: u64 = self
            .call("claimed", async |mut c| {
                redis::cmd("EXISTS").arg(&names).query_async(&mut c).await
            })
            .await?;
        Some(claimed > 0)
    }
}
