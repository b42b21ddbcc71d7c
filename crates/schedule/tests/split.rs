//! Splitting time never loses or repeats a tick: enumerating `[a, c]` is
//! enumerating `[a, b)` then `[b, c]` for any `b`, and a ticker that runs
//! at any sequence of instants (restarts, slow passes, small batches) fires
//! every tick of the calendar exactly once.

use chrono::Duration;
use couler_schedule::due::{self, Catchup, Policy};
use couler_schedule::{Calendar, Instant};
use proptest::prelude::*;

const CRONS: &[&str] = &[
    "30 2 * * *",
    "30 1 * * *",
    "0 0 * * *",
    "*/30 * * * *",
    "15 * * * *",
    "0 */3 * * *",
    "45 1,2,3 * * *",
    "0 9 * * 1-5",
    "0 0 L * *",
    "@hourly",
];
const ZONES: &[&str] = &[
    "UTC",
    "America/New_York",
    "Europe/Berlin",
    "Europe/London",
    "Australia/Lord_Howe",
    "America/Santiago",
    "Asia/Kolkata",
];
/// Windows start near a DST change: New York's and Berlin's of 2026.
const STARTS: &[&str] = &[
    "2026-03-07T12:00:00Z",
    "2026-10-31T12:00:00Z",
    "2026-03-28T12:00:00Z",
    "2026-10-24T12:00:00Z",
    "2026-04-04T00:00:00Z",
    "2026-09-05T00:00:00Z",
];

fn calendar() -> impl Strategy<Value = (Calendar, Instant)> {
    (
        proptest::sample::subsequence(CRONS, 1..=2),
        proptest::sample::select(ZONES),
        proptest::sample::select(STARTS),
    )
        .prop_map(|(crons, zone, start)| {
            (Calendar::new(&crons, zone).unwrap(), start.parse().unwrap())
        })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn splitting_a_window_neither_loses_nor_repeats((cal, a) in calendar(), b_secs in 0i64..3 * 86400, c_secs in 0i64..3 * 86400) {
        let (b_secs, c_secs) = (b_secs.min(c_secs), b_secs.max(c_secs));
        let b = a + Duration::seconds(b_secs);
        let c = a + Duration::seconds(c_secs);
        let whole: Vec<Instant> = cal.between(a, c).collect();
        let mut halves: Vec<Instant> = cal.between(a, b - Duration::microseconds(1)).collect();
        halves.extend(cal.between(b, c));
        prop_assert_eq!(&whole, &halves);
        prop_assert!(whole.windows(2).all(|w| w[0] < w[1]), "not increasing: {:?}", whole);
        prop_assert!(whole.iter().all(|t| *t >= a && *t <= c));
    }

    #[test]
    fn a_ticker_at_any_instants_fires_each_tick_once(
        (cal, a) in calendar(),
        steps in proptest::collection::vec(1i64..6 * 3600, 1..40),
        batch in 1usize..5,
    ) {
        let policy = Policy {
            catchup: Catchup::All,
            window: Duration::days(30),
            max_catchup: 10_000,
            batch,
            ..Policy::default()
        };
        let mut next = due::first(&cal, &policy, a);
        let mut fired = Vec::new();
        let mut now = a;
        for step in steps {
            now += Duration::seconds(step);
            // Several passes at the same instant drain a batch-limited backlog.
            loop {
                let pass = due::due(&cal, &policy, b"sch", next, now);
                prop_assert!(pass.missed.is_none());
                let more = !pass.fire.is_empty();
                fired.extend(pass.fire);
                next = pass.next;
                if !more {
                    break;
                }
            }
        }
        let expected: Vec<Instant> = cal.between(a, now).collect();
        prop_assert_eq!(fired, expected);
    }

    #[test]
    fn latest_never_fires_twice_or_out_of_order(
        (cal, a) in calendar(),
        steps in proptest::collection::vec(1i64..12 * 3600, 1..40),
    ) {
        let policy = Policy::default();
        let mut next = due::first(&cal, &policy, a);
        let mut fired: Vec<Instant> = Vec::new();
        let mut now = a;
        for step in steps {
            now += Duration::seconds(step);
            let pass = due::due(&cal, &policy, b"sch", next, now);
            prop_assert!(pass.fire.len() <= 1);
            if let (Some(m), Some(f)) = (&pass.missed, pass.fire.first()) {
                prop_assert!(m.last < *f);
            }
            for t in &pass.fire {
                prop_assert!(fired.last().is_none_or(|l| l < t));
                prop_assert!(now - *t <= policy.window);
            }
            fired.extend(pass.fire);
            next = pass.next;
        }
    }
}
