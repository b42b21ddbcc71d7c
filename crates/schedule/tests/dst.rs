//! The DST rule, zone by zone: a fixed time in a spring-forward gap fires
//! once just after it; a fixed time in a fall-back fold fires once (the
//! first pass); wildcard hours fire at every real instant.

use couler_schedule::{Calendar, Instant};

fn at(s: &str) -> Instant {
    s.parse().unwrap()
}

/// The instants `cron` fires at in `zone` within `[from, to]`, in UTC.
fn ticks(cron: &str, zone: &str, from: &str, to: &str) -> Vec<String> {
    let c = Calendar::new(&[cron], zone).unwrap();
    c.between(at(from), at(to))
        .map(|t| t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .collect()
}

#[test]
fn new_york_spring_forward() {
    // 2026-03-08 02:00 EST → 03:00 EDT: 02:30 does not exist that day.
    assert_eq!(
        ticks(
            "30 2 * * *",
            "America/New_York",
            "2026-03-07T00:00:00Z",
            "2026-03-10T00:00:00Z"
        ),
        [
            "2026-03-07T07:30:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-09T06:30:00Z"
        ],
        "once, at 03:00 EDT, on the gap day"
    );
    // Hourly: the missing hour is simply not there.
    assert_eq!(
        ticks(
            "0 * * * *",
            "America/New_York",
            "2026-03-08T05:00:00Z",
            "2026-03-08T08:00:00Z"
        ),
        [
            "2026-03-08T05:00:00Z",
            "2026-03-08T06:00:00Z",
            "2026-03-08T07:00:00Z",
            "2026-03-08T08:00:00Z"
        ],
    );
}

#[test]
fn new_york_fall_back() {
    // 2026-11-01 02:00 EDT → 01:00 EST: 01:30 happens twice.
    assert_eq!(
        ticks(
            "30 1 * * *",
            "America/New_York",
            "2026-10-31T00:00:00Z",
            "2026-11-03T00:00:00Z"
        ),
        [
            "2026-10-31T05:30:00Z",
            "2026-11-01T05:30:00Z",
            "2026-11-02T06:30:00Z"
        ],
        "once, at the first 01:30 (EDT)"
    );
    // Every half hour: four ticks in the repeated hour, one every 30 real minutes.
    assert_eq!(
        ticks(
            "*/30 * * * *",
            "America/New_York",
            "2026-11-01T05:00:00Z",
            "2026-11-01T07:00:00Z"
        ),
        [
            "2026-11-01T05:00:00Z",
            "2026-11-01T05:30:00Z",
            "2026-11-01T06:00:00Z",
            "2026-11-01T06:30:00Z",
            "2026-11-01T07:00:00Z"
        ],
    );
}

#[test]
fn berlin_both_transitions() {
    // 2026-03-29 02:00 CET → 03:00 CEST; 2026-10-25 03:00 CEST → 02:00 CET.
    assert_eq!(
        ticks(
            "30 2 * * *",
            "Europe/Berlin",
            "2026-03-28T00:00:00Z",
            "2026-03-31T00:00:00Z"
        ),
        [
            "2026-03-28T01:30:00Z",
            "2026-03-29T01:00:00Z",
            "2026-03-30T00:30:00Z"
        ],
    );
    assert_eq!(
        ticks(
            "30 2 * * *",
            "Europe/Berlin",
            "2026-10-24T00:00:00Z",
            "2026-10-27T00:00:00Z"
        ),
        [
            "2026-10-24T00:30:00Z",
            "2026-10-25T00:30:00Z",
            "2026-10-26T01:30:00Z"
        ],
    );
    assert_eq!(
        ticks(
            "15 * * * *",
            "Europe/Berlin",
            "2026-10-24T23:00:00Z",
            "2026-10-25T02:00:00Z"
        ),
        [
            "2026-10-24T23:15:00Z",
            "2026-10-25T00:15:00Z",
            "2026-10-25T01:15:00Z"
        ],
        "02:15 CEST and 02:15 CET both fire"
    );
}

#[test]
fn london_midnight_fires_once_on_spring_forward() {
    // croner-rust#67: 0 0 * * * ran at 00:00 and 02:00 on 2026-03-29 (01:00 → 02:00).
    assert_eq!(
        ticks(
            "0 0 * * *",
            "Europe/London",
            "2026-03-28T00:00:00Z",
            "2026-03-31T00:00:00Z"
        ),
        [
            "2026-03-28T00:00:00Z",
            "2026-03-29T00:00:00Z",
            "2026-03-29T23:00:00Z",
            "2026-03-30T23:00:00Z"
        ],
    );
}

#[test]
fn lord_howe_half_hour_shifts() {
    // 2026-10-04 02:00 (+10:30) → 02:30 (+11); 2026-04-05 02:00 (+11) → 01:30 (+10:30).
    assert_eq!(
        ticks(
            "15 2 * * *",
            "Australia/Lord_Howe",
            "2026-10-02T00:00:00Z",
            "2026-10-05T00:00:00Z"
        ),
        [
            "2026-10-02T15:45:00Z",
            "2026-10-03T15:30:00Z",
            "2026-10-04T15:15:00Z"
        ],
        "02:15 is in the gap on 10-04: once, at 02:30 (+11)"
    );
    assert_eq!(
        ticks(
            "45 1 * * *",
            "Australia/Lord_Howe",
            "2026-04-03T00:00:00Z",
            "2026-04-06T00:00:00Z"
        ),
        [
            "2026-04-03T14:45:00Z",
            "2026-04-04T14:45:00Z",
            "2026-04-05T15:15:00Z"
        ],
        "01:45 (+11) on 04-05, not again at 01:45 (+10:30)"
    );
}

#[test]
fn santiago_midnight_transition() {
    // Chile moves at 24:00 local: 2026-09-06 00:00 (-04) → 01:00 (-03).
    let got = ticks(
        "0 0 * * *",
        "America/Santiago",
        "2026-09-04T12:00:00Z",
        "2026-09-08T12:00:00Z",
    );
    assert_eq!(got.len(), 4, "one tick a day: {got:?}");
    assert_eq!(
        got[1], "2026-09-06T04:00:00Z",
        "00:00 is missing: 01:00 (-03) fires"
    );
}

#[test]
fn a_search_from_inside_the_second_pass_of_a_fold_does_not_fire_a_fixed_time_again() {
    // 06:15Z is 01:15 EST, after the first 01:30 (05:30Z) and before the second (06:30Z).
    let c = Calendar::new(&["30 1 * * *"], "America/New_York").unwrap();
    assert_eq!(
        c.next_after(at("2026-11-01T06:15:00Z")),
        Some(at("2026-11-02T06:30:00Z"))
    );
    let c = Calendar::new(&["30 1 * * *", "*/30 * * * *"], "America/New_York").unwrap();
    assert_eq!(
        c.next_after(at("2026-11-01T06:15:00Z")),
        Some(at("2026-11-01T06:30:00Z")),
        "the wildcard one does"
    );
}
