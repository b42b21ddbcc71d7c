//! Request rate limits, per tenant (API calls) and per webhook trigger
//! (deliveries): a token bucket shared by every API replica through Redis
//! (a Lua script, using Redis' clock), degrading to a per-replica bucket
//! while Redis is unreachable or slow.
//!
//! A replica takes tokens in leases of a twentieth of the bucket's rate
//! (one token below 40 requests per second), so a busy bucket costs one
//! Redis call per lease rather than per request. A lease not used up
//! within [`LEASE_FOR`] lapses: idle replicas make the shared limit
//! stricter by at most a lease each, never looser.

use crate::error::ApiError;
use couler_cache::SharedRedis;
use couler_store::{TenantId, TriggerId};
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter as Governor};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Tokens refill at `rate` per second up to a burst of `rate` (at least 1);
/// takes up to `want` of them and returns `{granted, retry_after_ms}`.
const BUCKET: &str = r#"
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local want = tonumber(ARGV[3])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local granted = math.min(want, math.floor(tokens))
local wait = 0
if granted >= 1 then
  tokens = tokens - granted
else
  granted = 0
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {granted, wait}
"#;

/// How long leased tokens stay usable.
pub const LEASE_FOR: Duration = Duration::from_millis(100);

/// After a failed or slow Redis call, a bucket's requests use the local
/// one for this long before Redis is tried again.
const RETRY_REDIS_AFTER: Duration = Duration::from_secs(1);

/// Tokens taken from the shared bucket at once.
fn lease_size(rate: u32) -> u32 {
    (rate / 20).max(1)
}

/// Whose requests a bucket counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Bucket {
    Tenant(TenantId),
    Hook(TriggerId),
}

impl Bucket {
    fn key(self, prefix: &str) -> String {
        match self {
            Bucket::Tenant(tenant) => format!("{prefix}:ratelimit:{tenant}"),
            Bucket::Hook(trigger) => format!("{prefix}:ratelimit:{trigger}"),
        }
    }

    fn used_up(self, rate: u32) -> String {
        match self {
            Bucket::Tenant(_) => {
                format!("the tenant's limit of {rate} requests per second is used up")
            }
            Bucket::Hook(_) => {
                format!("the trigger's limit of {rate} deliveries per second is used up")
            }
        }
    }
}

/// What this replica holds of a shared bucket.
#[derive(Default)]
struct Lease {
    tokens: u32,
    until: Option<Instant>,
    /// Redis failed: the local bucket decides until then.
    local_until: Option<Instant>,
}

pub struct RateLimiter {
    redis: SharedRedis,
    script: redis::Script,
    timeout: Duration,
    prefix: String,
    /// One lease per bucket; its lock makes one request at a time refill it.
    leases: Mutex<HashMap<Bucket, Arc<tokio::sync::Mutex<Lease>>>>,
    local: Mutex<HashMap<Bucket, (u32, DefaultDirectRateLimiter)>>,
    degraded: AtomicBool,
}

impl RateLimiter {
    pub fn new(redis: SharedRedis, timeout: Duration, prefix: &str) -> Self {
        RateLimiter {
            degraded: AtomicBool::new(false),
            redis,
            script: redis::Script::new(BUCKET),
            timeout,
            prefix: prefix.to_owned(),
            leases: Mutex::new(HashMap::new()),
            local: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the last decision fell back to the per-replica bucket.
    pub fn degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    /// Takes one token from the tenant's bucket, or says how long to wait.
    pub async fn acquire(&self, tenant: TenantId, per_second: i32) -> Result<(), ApiError> {
        self.take(Bucket::Tenant(tenant), per_second).await
    }

    /// Takes one token from a webhook trigger's bucket (its deliveries
    /// count there, not against the tenant's API rate), or says how long
    /// to wait.
    pub async fn acquire_hook(&self, trigger: TriggerId, per_second: i32) -> Result<(), ApiError> {
        self.take(Bucket::Hook(trigger), per_second).await
    }

    async fn take(&self, bucket: Bucket, per_second: i32) -> Result<(), ApiError> {
        let rate = per_second.max(1) as u32;
        let lease = self
            .leases
            .lock()
            .expect("limiter lock")
            .entry(bucket)
            .or_default()
            .clone();
        let mut lease = lease.lock().await;
        let now = Instant::now();
        let wait = if lease.tokens > 0 && lease.until.is_some_and(|t| t > now) {
            lease.tokens -= 1;
            None
        } else if lease.local_until.is_some_and(|t| t > now) {
            self.local_bucket(bucket, rate)
        } else {
            match self.shared(bucket, rate, lease_size(rate)).await {
                Some(granted) => {
                    self.degraded.store(false, Ordering::Relaxed);
                    lease.local_until = None;
                    match granted {
                        Ok(n) => {
                            lease.tokens = n - 1;
                            lease.until = Some(now + LEASE_FOR);
                            None
                        }
                        Err(wait) => Some(wait),
                    }
                }
                None => {
                    if !self.degraded.swap(true, Ordering::Relaxed) {
                        tracing::warn!(
                            "redis unavailable; rate limits are per replica until it returns"
                        );
                    }
                    metrics::counter!("couler_ratelimit_degraded_total").increment(1);
                    lease.local_until = Some(now + RETRY_REDIS_AFTER);
                    self.local_bucket(bucket, rate)
                }
            }
        };
        match wait {
            None => Ok(()),
            Some(retry_after) => {
                metrics::counter!("couler_ratelimit_rejected_total").increment(1);
                Err(ApiError::TooManyRequests {
                    code: "rate_limited",
                    message: bucket.used_up(rate),
                    retry_after,
                })
            }
        }
    }

    /// Takes up to `want` tokens from the shared bucket: `Some(Ok(n))`, n ≥ 1
    /// granted; `Some(Err(wait))`: none left; `None`: Redis unusable.
    async fn shared(&self, bucket: Bucket, rate: u32, want: u32) -> Option<Result<u32, Duration>> {
        let mut conn = self.redis.get()?;
        let key = bucket.key(&self.prefix);
        let mut invocation = self.script.key(key);
        invocation.arg(rate).arg(rate).arg(want);
        let call = invocation.invoke_async::<(i64, i64)>(&mut conn);
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok((granted, _))) if granted >= 1 => Some(Ok(granted as u32)),
            Ok(Ok((_, wait_ms))) => Some(Err(Duration::from_millis(wait_ms.max(1) as u64))),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "rate limit call failed");
                None
            }
            Err(_) => None,
        }
    }

    fn local_bucket(&self, key: Bucket, rate: u32) -> Option<Duration> {
        let mut buckets = self.local.lock().expect("limiter lock");
        let entry = buckets.entry(key).or_insert_with(|| (rate, bucket(rate)));
        if entry.0 != rate {
            *entry = (rate, bucket(rate));
        }
        entry.1.check().err().map(|not_until| {
            not_until.wait_time_from(governor::clock::Clock::now(
                &governor::clock::DefaultClock::default(),
            ))
        })
    }
}

fn bucket(rate: u32) -> DefaultDirectRateLimiter {
    let rate = NonZeroU32::new(rate).unwrap_or(NonZeroU32::MIN);
    Governor::direct(Quota::per_second(rate).allow_burst(rate))
}
