//! What a lookup tells a user about each step: hit or not, why, and what
//! the hit saves. The API's `explain` shows it before a run; the scheduler
//! records it for the steps of a run it plans (one wording for both).

use crate::index::CacheIndex;
use crate::key::CacheKey;
use crate::plan::{Lookup, NotCacheable, Outcome};

/// The five answers a step's lookup gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VerdictStatus {
    /// A result with exactly these inputs is cached: the step does not run.
    Hit,
    /// The step has a key but nothing is cached under it (or the cache is
    /// unavailable).
    Miss,
    /// Known only during the run: its key needs outputs of steps that run
    /// first, or it is a search, looked up trial by trial.
    Pending,
    /// The step is never looked up.
    NotCacheable,
    /// Computed before (its cached bytes are gone), and every step that
    /// reads it is a hit: the step does not run.
    NotNeeded,
}

impl VerdictStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictStatus::Hit => "hit",
            VerdictStatus::Miss => "miss",
            VerdictStatus::Pending => "pending",
            VerdictStatus::NotCacheable => "not_cacheable",
            VerdictStatus::NotNeeded => "not_needed",
        }
    }
}

/// One step's verdict.
#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub status: VerdictStatus,
    /// Why the step is not a hit (`policy off`, `not cached`, …).
    pub reason: Option<String>,
    /// The step's key, when it has one.
    pub key: Option<CacheKey>,
    /// Compute time the step does not spend (hits and steps not needed).
    pub saved_ms: Option<u64>,
    /// Bytes of the cached outputs (hits).
    pub size: Option<u64>,
}

impl Verdict {
    fn new(status: VerdictStatus, reason: Option<String>, key: Option<CacheKey>) -> Verdict {
        Verdict {
            status,
            reason,
            key,
            saved_ms: None,
            size: None,
        }
    }
}

impl Lookup {
    /// The verdict on this step; `degraded` (see [`degraded`]) turns what
    /// could have hit into misses saying the cache was unavailable.
    pub fn verdict(&self, degraded: bool) -> Verdict {
        use VerdictStatus as V;
        match &self.outcome {
            Outcome::Hit { key, entry } => Verdict {
                saved_ms: Some(entry.wall_ms),
                size: Some(entry.size),
                ..Verdict::new(V::Hit, None, Some(*key))
            },
            Outcome::Miss { key } if degraded => {
                Verdict::new(V::Miss, Some("cache unavailable".into()), Some(*key))
            }
            Outcome::NotCacheable(NotCacheable::Pending { step: Some(_), .. }) if degraded => {
                Verdict::new(V::Miss, Some("cache unavailable".into()), None)
            }
            Outcome::Miss { key } => Verdict::new(V::Miss, Some("not cached".into()), Some(*key)),
            Outcome::Elsewhere { key } => Verdict::new(V::Miss,
                Some(
                    "cached where the tenant's engine cannot read its artifacts, and a step that runs reads them"
                        .into(),
                ),
                Some(*key),
            ),
            Outcome::NotNeeded { key, record } => Verdict {
                saved_ms: Some(record.wall_ms),
                ..Verdict::new(V::NotNeeded,
                    Some("computed before; every step that reads it is a hit".into()),
                    Some(*key),
                )
            },
            Outcome::NotCacheable(why) if why.known_at_run_time() => {
                Verdict::new(V::Pending, Some(why.to_string()), None)
            }
            Outcome::NotCacheable(why) => Verdict::new(V::NotCacheable, Some(why.to_string()), None),
            Outcome::Kept => Verdict::new(
                V::NotCacheable,
                Some("kept from an earlier attempt".into()),
                None,
            ),
        }
    }
}

/// Whether the index was away during `lookups`: a lookup cannot tell
/// "nothing cached" from "Redis away", so when every keyed step missed,
/// ask once.
pub async fn degraded(lookups: &[Lookup], index: &CacheIndex) -> bool {
    let missed = (lookups.iter()).any(|l| matches!(l.outcome, Outcome::Miss { .. }));
    let hit = (lookups.iter()).any(|l| matches!(l.outcome, Outcome::Hit { .. }));
    missed && !hit && index.bytes().await.is_none()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::Scope;

    fn lookup(outcome: Outcome) -> Lookup {
        Lookup {
            scope: Scope::Shared,
            outcome,
        }
    }

    #[test]
    fn a_miss_says_why_and_degraded_lookups_blame_the_cache() {
        let key = CacheKey([7; 32]);
        let miss = lookup(Outcome::Miss { key });
        assert_eq!(miss.verdict(false).reason.as_deref(), Some("not cached"));
        assert_eq!(miss.verdict(false).key, Some(key));
        let away = miss.verdict(true);
        assert_eq!(away.status, VerdictStatus::Miss);
        assert_eq!(away.reason.as_deref(), Some("cache unavailable"));
        let pending = lookup(Outcome::NotCacheable(NotCacheable::Pending {
            step: Some("a".into()),
            reference: "{{steps.a.outputs.result}}".into(),
        }));
        assert_eq!(pending.verdict(false).status, VerdictStatus::Pending);
        assert_eq!(
            pending.verdict(false).reason.as_deref(),
            Some("reads outputs of a, known once it has run")
        );
        assert_eq!(pending.verdict(true).status, VerdictStatus::Miss);
        let off = lookup(Outcome::NotCacheable(NotCacheable::PolicyOff));
        assert_eq!(off.verdict(true).status, VerdictStatus::NotCacheable);
    }
}
