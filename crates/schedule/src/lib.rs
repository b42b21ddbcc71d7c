//! Couler's schedule calendar, with no I/O:
//!
//! - [`Calendar`]: one or more crons in the public dialect (five fields or
//!   an `@hourly`… macro; `L`, `W` and `#` allowed; no seconds, no years)
//!   in an IANA time zone from the tz database bundled into the binary
//!   (never the machine's, so every replica agrees), and the instants it
//!   fires at, in real time.
//! - [`due`]: what one ticker pass fires, skips and leaves for later, under
//!   a catch-up policy and deterministic jitter.
//! - [`params`]: the `{{schedule.…}}` substitutions in a schedule's
//!   parameters.
//!
//! DST rule (croner's, after Vixie cron and the Open Cron Pattern
//! Specification): a fixed time that falls in a spring-forward gap fires
//! once, at the first instant after the gap; a fixed time in a fall-back
//! fold fires once, at its first occurrence; a wildcard or stepped hour
//! fires at every real instant that matches, both passes of a fold
//! included. Every instant is UTC; wall time only decides which instants.

mod calendar;
pub mod due;
pub mod params;

pub use calendar::{Calendar, Field, MAX_CRONS, Problem, TimeZone, UTC, zone};
pub use due::{Catchup, Missed, Pass, Policy, due, jitter};

/// An instant, as the database stores it.
pub type Instant = chrono::DateTime<chrono::Utc>;
