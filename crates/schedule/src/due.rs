//! One ticker pass over one schedule, as a pure function of its calendar,
//! its policy, the first instant it has not handled yet and the database's
//! `now()`.
//!
//! Catch-up after downtime (or a slow ticker):
//! - `skip`: only a tick at most [`SKIP_GRACE`] old fires; older ones are
//!   missed;
//! - `latest` (the default): only the most recent due tick fires, if it is
//!   within the catch-up window;
//! - `all`: every due tick within the window fires, oldest first, at most
//!   `max_catchup` of them (the oldest beyond that are missed).
//!
//! Missed ticks are reported as one [`Missed`] range, never fired later. A
//! pass fires at most `batch` ticks; the rest stay due for the next pass.

use crate::{Calendar, Instant};
use chrono::Duration;

/// How old a tick may be and still fire under `skip`.
pub const SKIP_GRACE: Duration = Duration::seconds(60);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Catchup {
    Skip,
    #[default]
    Latest,
    All,
}

impl Catchup {
    pub fn as_str(self) -> &'static str {
        match self {
            Catchup::Skip => "skip",
            Catchup::Latest => "latest",
            Catchup::All => "all",
        }
    }

    pub fn parse(s: &str) -> Option<Catchup> {
        Some(match s {
            "skip" => Catchup::Skip,
            "latest" => Catchup::Latest,
            "all" => Catchup::All,
            _ => return None,
        })
    }
}

/// What decides which ticks fire, beyond the calendar.
#[derive(Debug, Clone)]
pub struct Policy {
    pub catchup: Catchup,
    /// How old a missed tick may be and still fire (`latest`, `all`).
    pub window: Duration,
    /// Most ticks `all` fires after downtime.
    pub max_catchup: usize,
    /// Most ticks one pass fires.
    pub batch: usize,
    /// Each tick is due up to this much after its nominal instant,
    /// deterministically (see [`jitter`]).
    pub jitter: Duration,
    /// No tick before this.
    pub start_at: Option<Instant>,
    /// No tick at or after this.
    pub end_at: Option<Instant>,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            catchup: Catchup::Latest,
            window: Duration::hours(1),
            max_catchup: 10,
            batch: 16,
            jitter: Duration::zero(),
            start_at: None,
            end_at: None,
        }
    }
}

/// Consecutive ticks a pass gave up on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Missed {
    pub first: Instant,
    pub last: Instant,
    /// How many, when they were counted (those older than the window are
    /// not enumerated).
    pub count: Option<usize>,
}

/// The outcome of one pass.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Pass {
    /// Nominal instants to fire, in order.
    pub fire: Vec<Instant>,
    pub missed: Option<Missed>,
    /// The first instant still to handle; `None` once the schedule ended.
    pub next: Option<Instant>,
}

/// A tick's deterministic delay, in whole seconds within `[0, max]`: every
/// replica computes the same for the same schedule and instant.
pub fn jitter(key: &[u8], nominal: Instant, max: Duration) -> Duration {
    let max = max.num_seconds();
    if max <= 0 {
        return Duration::zero();
    }
    let mut h = blake3::Hasher::new();
    h.update(key);
    h.update(&nominal.timestamp().to_le_bytes());
    let digest = h.finalize();
    let n = u64::from_le_bytes(digest.as_bytes()[..8].try_into().expect("8 bytes"));
    Duration::seconds((n % (max as u64 + 1)) as i64)
}

/// When the tick at `nominal` is due.
pub fn due_at(key: &[u8], nominal: Instant, policy: &Policy) -> Instant {
    nominal + jitter(key, nominal, policy.jitter)
}

fn ended(policy: &Policy, t: Instant) -> bool {
    policy.end_at.is_some_and(|end| t >= end)
}

/// The first instant a schedule handles when it starts (is created,
/// resumed or edited) at `from`: the first tick at or after both `from`
/// and its start, unless it has ended by then.
pub fn first(calendar: &Calendar, policy: &Policy, from: Instant) -> Option<Instant> {
    let from = policy.start_at.map_or(from, |s| s.max(from));
    calendar.at_or_after(from).filter(|t| !ended(policy, *t))
}

/// What a ticker pass at `now` does with a schedule whose first unhandled
/// instant is `next`; `key` seeds its jitter.
pub fn due(
    calendar: &Calendar,
    policy: &Policy,
    key: &[u8],
    next: Option<Instant>,
    now: Instant,
) -> Pass {
    let Some(next) = next.filter(|t| !ended(policy, *t)) else {
        return Pass::default();
    };
    let is_due = |t: Instant| !ended(policy, t) && due_at(key, t, policy) <= now;
    if !is_due(next) {
        return Pass {
            next: Some(next),
            ..Pass::default()
        };
    }
    let window = match policy.catchup {
        Catchup::Skip => policy.window.min(SKIP_GRACE),
        Catchup::Latest | Catchup::All => policy.window,
    };
    let window_start = now - window;
    // Ticks older than the window are missed without being enumerated.
    let (mut missed, first_in) = if next < window_start {
        let first_in = calendar.at_or_after(window_start);
        let last = first_in
            .and_then(|t| calendar.previous_before(t))
            .filter(|t| *t >= next)
            .unwrap_or(next);
        let missed = Missed {
            first: next,
            last,
            count: None,
        };
        (Some(missed), first_in)
    } else {
        (None, Some(next))
    };
    let mut candidates = Vec::new();
    let mut after = first_in;
    while let Some(t) = after.filter(|t| is_due(*t)) {
        candidates.push(t);
        after = calendar.next_after(t);
    }
    let keep = match policy.catchup {
        Catchup::Skip | Catchup::Latest => 1,
        Catchup::All => policy.max_catchup.max(1),
    };
    let give_up = candidates.len().saturating_sub(keep);
    if give_up > 0 {
        let dropped = &candidates[..give_up];
        missed = Some(match missed {
            Some(m) => Missed {
                first: m.first,
                last: dropped[give_up - 1],
                count: None,
            },
            None => Missed {
                first: dropped[0],
                last: dropped[give_up - 1],
                count: Some(give_up),
            },
        });
    }
    let mut fire: Vec<Instant> = candidates.split_off(give_up);
    let next = if fire.len() > policy.batch.max(1) {
        fire.truncate(policy.batch.max(1));
        calendar.next_after(*fire.last().expect("a non-empty batch"))
    } else {
        after
    };
    Pass {
        fire,
        missed,
        next: next.filter(|t| !ended(policy, *t)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::UTC;

    fn at(s: &str) -> Instant {
        s.parse().unwrap()
    }

    fn hourly() -> Calendar {
        Calendar::new(&["0 * * * *"], UTC).unwrap()
    }

    fn policy(catchup: Catchup) -> Policy {
        Policy {
            catchup,
            ..Policy::default()
        }
    }

    #[test]
    fn nothing_before_the_tick_is_due() {
        let pass = due(
            &hourly(),
            &Policy::default(),
            b"s",
            Some(at("2026-01-01T10:00:00Z")),
            at("2026-01-01T09:59:59Z"),
        );
        assert!(pass.fire.is_empty());
        assert_eq!(pass.next, Some(at("2026-01-01T10:00:00Z")));
    }

    #[test]
    fn an_on_time_tick_fires_and_the_next_follows() {
        for catchup in [Catchup::Skip, Catchup::Latest, Catchup::All] {
            let pass = due(
                &hourly(),
                &policy(catchup),
                b"s",
                Some(at("2026-01-01T10:00:00Z")),
                at("2026-01-01T10:00:01Z"),
            );
            assert_eq!(pass.fire, [at("2026-01-01T10:00:00Z")], "{catchup:?}");
            assert_eq!(pass.missed, None);
            assert_eq!(pass.next, Some(at("2026-01-01T11:00:00Z")));
        }
    }

    #[test]
    fn downtime_catch_up_follows_the_policy() {
        // Down from 10:00 to 15:30: ticks 10:00 … 15:00 are due.
        let next = Some(at("2026-01-01T10:00:00Z"));
        let now = at("2026-01-01T15:30:00Z");
        let skip = due(&hourly(), &policy(Catchup::Skip), b"s", next, now);
        assert!(skip.fire.is_empty());
        assert_eq!(
            skip.missed.as_ref().map(|m| (m.first, m.last)),
            Some((at("2026-01-01T10:00:00Z"), at("2026-01-01T15:00:00Z")))
        );
        assert_eq!(skip.next, Some(at("2026-01-01T16:00:00Z")));

        let latest = due(&hourly(), &policy(Catchup::Latest), b"s", next, now);
        assert_eq!(latest.fire, [at("2026-01-01T15:00:00Z")]);
        assert_eq!(
            latest.missed.as_ref().map(|m| (m.first, m.last)),
            Some((at("2026-01-01T10:00:00Z"), at("2026-01-01T14:00:00Z")))
        );
        assert_eq!(latest.next, Some(at("2026-01-01T16:00:00Z")));

        // Out of the window, latest fires nothing.
        let late = due(
            &hourly(),
            &policy(Catchup::Latest),
            b"s",
            next,
            at("2026-01-01T16:59:00Z"),
        );
        assert_eq!(late.fire, [at("2026-01-01T16:00:00Z")]);
        let stale = Policy {
            window: Duration::minutes(30),
            ..policy(Catchup::Latest)
        };
        let late = due(&hourly(), &stale, b"s", next, at("2026-01-01T16:59:00Z"));
        assert!(late.fire.is_empty());
        assert_eq!(late.next, Some(at("2026-01-01T17:00:00Z")));

        let all = Policy {
            window: Duration::hours(4),
            max_catchup: 3,
            ..policy(Catchup::All)
        };
        let pass = due(&hourly(), &all, b"s", next, now);
        // 12:00 … 15:00 are in the window; the cap keeps the newest three.
        assert_eq!(
            pass.fire,
            [
                at("2026-01-01T13:00:00Z"),
                at("2026-01-01T14:00:00Z"),
                at("2026-01-01T15:00:00Z")
            ]
        );
        assert_eq!(
            pass.missed,
            Some(Missed {
                first: at("2026-01-01T10:00:00Z"),
                last: at("2026-01-01T12:00:00Z"),
                count: None
            })
        );
    }

    #[test]
    fn a_batch_leaves_the_rest_due() {
        let all = Policy {
            window: Duration::days(1),
            max_catchup: 100,
            batch: 2,
            ..policy(Catchup::All)
        };
        let pass = due(
            &hourly(),
            &all,
            b"s",
            Some(at("2026-01-01T10:00:00Z")),
            at("2026-01-01T14:10:00Z"),
        );
        assert_eq!(
            pass.fire,
            [at("2026-01-01T10:00:00Z"), at("2026-01-01T11:00:00Z")]
        );
        assert_eq!(pass.next, Some(at("2026-01-01T12:00:00Z")));
        assert_eq!(pass.missed, None);
    }

    #[test]
    fn start_and_end_bound_the_ticks() {
        let p = Policy {
            start_at: Some(at("2026-01-01T10:30:00Z")),
            end_at: Some(at("2026-01-01T12:00:00Z")),
            ..Policy::default()
        };
        assert_eq!(
            first(&hourly(), &p, at("2026-01-01T09:00:00Z")),
            Some(at("2026-01-01T11:00:00Z"))
        );
        let pass = due(
            &hourly(),
            &p,
            b"s",
            Some(at("2026-01-01T11:00:00Z")),
            at("2026-01-01T11:00:00Z"),
        );
        assert_eq!(pass.fire, [at("2026-01-01T11:00:00Z")]);
        assert_eq!(pass.next, None, "12:00 is the end, excluded");
        assert_eq!(first(&hourly(), &p, at("2026-01-01T11:30:00Z")), None);
    }

    #[test]
    fn jitter_is_deterministic_and_bounded() {
        let t = at("2026-01-01T10:00:00Z");
        let max = Duration::seconds(30);
        assert_eq!(jitter(b"a", t, max), jitter(b"a", t, max));
        let spread: std::collections::BTreeSet<i64> = (0..50)
            .map(|i| jitter(format!("s{i}").as_bytes(), t, max).num_seconds())
            .collect();
        assert!(
            spread.len() > 5 && spread.iter().all(|s| (0..=30).contains(s)),
            "{spread:?}"
        );
        assert_eq!(jitter(b"a", t, Duration::zero()), Duration::zero());
        // A jittered tick is not due at its nominal instant.
        let p = Policy {
            jitter: max,
            ..Policy::default()
        };
        let key = (0..)
            .map(|i: u32| i.to_le_bytes())
            .find(|k| jitter(k, t, max) > Duration::zero())
            .unwrap();
        assert!(due(&hourly(), &p, &key, Some(t), t).fire.is_empty());
        assert_eq!(
            due(&hourly(), &p, &key, Some(t), due_at(&key, t, &p)).fire,
            [t]
        );
    }
}
