//! Per-tenant request rate limits: a token bucket shared by every API
//! replica through Redis (one Lua call per request, using Redis' clock),
//! degrading to a per-replica bucket while Redis is unreachable or slow.

use crate::error::ApiError;
use couler_cache::SharedRedis;
use couler_store::TenantId;
use governor::{DefaultDirectRateLimiter, Quota, RateLimiter as Governor};
use std::collections::HashMap;
use std::num::NonZeroU32;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// Tokens refill at `rate` per second up to a burst of `rate` (at least 1);
/// returns `{allowed, retry_after_ms}`.
const BUCKET: &str = r#"
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local t = redis.call('TIME')
local now = t[1] * 1000 + math.floor(t[2] / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(state[1]) or burst
local at = tonumber(state[2]) or now
tokens = math.min(burst, tokens + math.max(0, now - at) * rate / 1000)
local allowed = 0
local wait = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  wait = math.ceil((1 - tokens) * 1000 / rate)
end
redis.call('HSET', KEYS[1], 'tokens', tokens, 'at', now)
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, wait}
"#;

pub struct RateLimiter {
    redis: SharedRedis,
    script: redis::Script,
    timeout: Duration,
    prefix: String,
    local: Mutex<HashMap<TenantId, (u32, DefaultDirectRateLimiter)>>,
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
            local: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the last decision fell back to the per-replica bucket.
    pub fn degraded(&self) -> bool {
        self.degraded.load(Ordering::Relaxed)
    }

    /// Takes one token from the tenant's bucket, or says how long to wait.
    pub async fn acquire(&self, tenant: TenantId, per_second: i32) -> Result<(), ApiError> {
        let rate = per_second.max(1) as u32;
        let wait = match self.shared(tenant, rate).await {
            Some(wait) => {
                self.degraded.store(false, Ordering::Relaxed);
                wait
            }
            None => {
                if !self.degraded.swap(true, Ordering::Relaxed) {
                    tracing::warn!(
                        "redis unavailable; rate limits are per replica until it returns"
                    );
                }
                metrics::counter!("couler_ratelimit_degraded_total").increment(1);
                self.local_bucket(tenant, rate)
            }
        };
        match wait {
            None => Ok(()),
            Some(retry_after) => {
                metrics::counter!("couler_ratelimit_rejected_total").increment(1);
                Err(ApiError::TooManyRequests {
                    code: "rate_limited",
                    message: format!("the tenant's limit of {rate} requests per second is used up"),
                    retry_after,
                })
            }
        }
    }

    /// `Some(None)`: allowed; `Some(Some(wait))`: refused; `None`: Redis unusable.
    async fn shared(&self, tenant: TenantId, rate: u32) -> Option<Option<Duration>> {
        let mut conn = self.redis.get()?;
        let key = format!("{}:ratelimit:{tenant}", self.prefix);
        let mut invocation = self.script.key(key);
        invocation.arg(rate).arg(rate);
        let call = invocation.invoke_async::<(i64, i64)>(&mut conn);
        match tokio::time::timeout(self.timeout, call).await {
            Ok(Ok((1, _))) => Some(None),
            Ok(Ok((_, wait_ms))) => Some(Some(Duration::from_millis(wait_ms.max(1) as u64))),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "rate limit call failed");
                None
            }
            Err(_) => None,
        }
    }

    fn local_bucket(&self, tenant: TenantId, rate: u32) -> Option<Duration> {
        let mut buckets = self.local.lock().expect("limiter lock");
        let entry = buckets
            .entry(tenant)
            .or_insert_with(|| (rate, bucket(rate)));
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
