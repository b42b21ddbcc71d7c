//! Retry arithmetic of the local engine: backoff between tries, and the
//! memory limit of a retry after an out-of-memory kill.

use couler_ir::Retry;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

/// A retry after an out-of-memory kill gets this many times the memory
/// limit of the try that was killed…
const OOM_GROWTH: u64 = 2;
/// …but never more than this many times the step's planned memory, so a
/// leaking step cannot take the machine.
const OOM_MAX_FACTOR: u64 = 4;

/// The memory limit of a retry after an out-of-memory kill: [`OOM_GROWTH`]
/// × `limit`, capped at [`OOM_MAX_FACTOR`] × `planned` (never lowered).
pub(super) fn raised_limit(limit: Option<u64>, planned: Option<u64>) -> Option<u64> {
    let limit = limit?;
    // No planned memory (the plan changed since): no growth to bound.
    let cap = planned.map_or(limit, |p| p.saturating_mul(OOM_MAX_FACTOR));
    Some(limit.saturating_mul(OOM_GROWTH).min(cap).max(limit))
}

/// Bytes as mebibytes, with a decimal when they are not whole.
pub(super) fn mib(bytes: u64) -> String {
    const MIB: u64 = 1 << 20;
    if bytes.is_multiple_of(MIB) {
        format!("{} MiB", bytes / MIB)
    } else {
        format!("{:.1} MiB", bytes as f64 / MIB as f64)
    }
}

/// `duration × factor^retry`, plus up to 10% jitter, capped by `maxDuration`.
pub(super) fn backoff(policy: &Retry, retry: u32) -> Duration {
    let Some(b) = &policy.backoff else {
        return Duration::ZERO;
    };
    let factor = f64::from(b.factor.unwrap_or(2));
    let base = b.duration.as_std().as_secs_f64() * factor.powi(retry.min(64) as i32);
    let jitter = 1.0 + 0.1 * unit_random();
    let cap = b
        .max_duration
        .map(|m| m.as_std().as_secs_f64())
        .unwrap_or(30.0 * 24.0 * 3600.0);
    Duration::from_secs_f64((base * jitter).min(cap))
}

/// A number in [0, 1) from the process's random hasher keys.
fn unit_random() -> f64 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u64(0);
    (h.finish() >> 11) as f64 / (1u64 << 53) as f64
}

pub(super) fn human(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else if d < Duration::from_secs(1) {
        format!("{}ms", d.as_millis())
    } else {
        format!("{:.1}s", d.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_ir::scalar::Duration as IrDuration;
    use couler_ir::{Backoff, RetryOn};

    #[test]
    fn backoff_grows_and_is_capped() {
        let policy = Retry {
            limit: 5,
            backoff: Some(Backoff {
                duration: IrDuration(Duration::from_secs(10)),
                factor: Some(2),
                max_duration: Some(IrDuration(Duration::from_secs(30))),
            }),
            on: RetryOn::Always,
        };
        let first = backoff(&policy, 0);
        assert!(
            first >= Duration::from_secs(10) && first <= Duration::from_secs(11),
            "{first:?}"
        );
        let second = backoff(&policy, 1);
        assert!(
            second >= Duration::from_secs(20) && second <= Duration::from_secs(22),
            "{second:?}"
        );
        assert_eq!(backoff(&policy, 4), Duration::from_secs(30));
        let immediate = Retry {
            backoff: None,
            ..policy
        };
        assert_eq!(backoff(&immediate, 3), Duration::ZERO);
    }

    #[test]
    fn out_of_memory_retries_double_the_limit_up_to_four_times_the_plan() {
        let mi = |n: u64| Some(n << 20);
        assert_eq!(raised_limit(mi(64), mi(64)), mi(128));
        assert_eq!(raised_limit(mi(128), mi(64)), mi(256));
        assert_eq!(raised_limit(mi(256), mi(64)), mi(256));
        // A limit above the cap (the plan shrank since) is not lowered.
        assert_eq!(raised_limit(mi(512), mi(64)), mi(512));
        assert_eq!(raised_limit(None, mi(64)), None);
        assert_eq!(raised_limit(mi(64), None), mi(64));
        assert_eq!(mib(64 << 20), "64 MiB");
        assert_eq!(mib(150_000_000), "143.1 MiB");
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(human(Duration::from_secs(5)), "5s");
        assert_eq!(human(Duration::from_millis(250)), "250ms");
        assert_eq!(human(Duration::from_millis(1500)), "1.5s");
    }
}
