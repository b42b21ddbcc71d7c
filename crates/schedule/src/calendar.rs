//! The public cron dialect, time zones, and the instants a schedule fires at.

use crate::Instant;
use chrono::{DateTime, Utc};
use croner::Cron;
use croner::parser::{CronParser, Seconds, Year};
use jiff::Zoned;
use std::sync::OnceLock;

pub use jiff::tz::TimeZone;

/// Most crons one schedule holds.
pub const MAX_CRONS: usize = 8;
/// The zone of a schedule that names none.
pub const UTC: &str = "UTC";

/// What a [`Problem`] is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// The cron at this index (or the list, for a count problem).
    Cron(usize),
    Crons,
    Timezone,
}

/// One thing wrong with a schedule's calendar.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Problem {
    pub field: Field,
    pub message: String,
}

/// The crons of a schedule in its time zone.
#[derive(Debug, Clone)]
pub struct Calendar {
    crons: Vec<Cron>,
    zone: TimeZone,
}

fn parser() -> CronParser {
    CronParser::builder()
        .seconds(Seconds::Disallowed)
        .year(Year::Disallowed)
        .build()
}

/// A time zone by its IANA name, exactly as the bundled database spells
/// it (`Europe/Berlin`, `UTC`).
pub fn zone(name: &str) -> Result<TimeZone, String> {
    static DB: OnceLock<jiff::tz::TimeZoneDatabase> = OnceLock::new();
    let db = DB.get_or_init(jiff::tz::TimeZoneDatabase::bundled);
    let unknown = || format!("{name:?} is not an IANA time zone (e.g. \"Europe/Berlin\", \"UTC\")");
    if name.is_empty() || name.contains('=') {
        return Err(unknown());
    }
    let tz = db.get(name).map_err(|_| unknown())?;
    match tz.iana_name() {
        Some(canonical) if canonical == name => Ok(tz),
        Some(canonical) => Err(format!(
            "{name:?} is spelled {canonical:?} in the IANA time zone database"
        )),
        None => Err(unknown()),
    }
}

/// One cron in the public dialect.
fn cron(expr: &str) -> Result<Cron, String> {
    let fields = expr.split_whitespace().count();
    if !expr.trim_start().starts_with('@') && fields != 5 {
        return Err(format!(
            "{expr:?} has {fields} fields; a cron has five (minute hour day-of-month month day-of-week) or is a macro such as @daily"
        ));
    }
    let cron = parser()
        .parse(expr)
        .map_err(|e| format!("{expr:?} is not a valid cron: {e}"))?;
    // A pattern that never matches (`0 0 30 2 *`) would make every search
    // walk to croner's year limit.
    let probe = jiff::Timestamp::UNIX_EPOCH.to_zoned(TimeZone::UTC);
    match cron.find_next_occurrence(&probe, false) {
        Ok(t) if t.year() < 2100 => Ok(cron),
        _ => Err(format!("{expr:?} never fires")),
    }
}

/// `t` as jiff's, clamped to its range (years -9999 to 9999): a request
/// may name an instant no schedule reaches.
fn to_jiff(t: Instant) -> jiff::Timestamp {
    let micros = t.timestamp_micros();
    jiff::Timestamp::from_microsecond(micros).unwrap_or(if micros < 0 {
        jiff::Timestamp::MIN
    } else {
        jiff::Timestamp::MAX
    })
}

fn to_chrono(t: jiff::Timestamp) -> Instant {
    DateTime::<Utc>::from_timestamp_micros(t.as_microsecond()).expect("a jiff instant fits chrono")
}

impl Calendar {
    /// Checks every cron and the zone; every problem at once.
    pub fn new<S: AsRef<str>>(crons: &[S], timezone: &str) -> Result<Calendar, Vec<Problem>> {
        let mut problems = Vec::new();
        if crons.is_empty() || crons.len() > MAX_CRONS {
            problems.push(Problem {
                field: Field::Crons,
                message: format!("a schedule has 1 to {MAX_CRONS} crons"),
            });
        }
        let mut parsed = Vec::with_capacity(crons.len());
        for (i, c) in crons.iter().enumerate() {
            match cron(c.as_ref()) {
                Ok(c) => parsed.push(c),
                Err(message) => problems.push(Problem {
                    field: Field::Cron(i),
                    message,
                }),
            }
        }
        let zone = zone(timezone).map_err(|message| Problem {
            field: Field::Timezone,
            message,
        });
        match zone {
            Ok(zone) if problems.is_empty() => Ok(Calendar {
                crons: parsed,
                zone,
            }),
            Ok(_) => Err(problems),
            Err(p) => {
                problems.push(p);
                Err(problems)
            }
        }
    }

    pub fn zone(&self) -> &TimeZone {
        &self.zone
    }

    /// `t` on the schedule's wall clock.
    pub fn local(&self, t: Instant) -> Zoned {
        to_jiff(t).to_zoned(self.zone.clone())
    }

    /// The first instant strictly after `t` that any cron fires at.
    pub fn next_after(&self, t: Instant) -> Option<Instant> {
        // croner counts whole seconds: start from the second `t` is in, so
        // an exclusive search lands strictly after `t`.
        let second = jiff::Timestamp::from_second(to_jiff(t).as_second()).ok()?;
        let start = second.to_zoned(self.zone.clone());
        self.crons
            .iter()
            .filter_map(|c| c.find_next_occurrence(&start, false).ok())
            .map(|z| z.timestamp())
            .min()
            .map(to_chrono)
    }

    /// The first instant at or after `t` that any cron fires at.
    pub fn at_or_after(&self, t: Instant) -> Option<Instant> {
        self.next_after(t - chrono::Duration::microseconds(1))
    }

    /// The last instant strictly before `t` that any cron fires at.
    pub fn previous_before(&self, t: Instant) -> Option<Instant> {
        let mut second = to_jiff(t).as_second();
        if t.timestamp_subsec_micros() > 0 {
            second += 1;
        }
        let start = jiff::Timestamp::from_second(second)
            .ok()?
            .to_zoned(self.zone.clone());
        self.crons
            .iter()
            .filter_map(|c| c.find_previous_occurrence(&start, false).ok())
            .map(|z| z.timestamp())
            .max()
            .map(to_chrono)
    }

    /// Every instant in `[from, to]`, in order.
    pub fn between(&self, from: Instant, to: Instant) -> impl Iterator<Item = Instant> + '_ {
        std::iter::successors(self.at_or_after(from), |t| self.next_after(*t))
            .take_while(move |t| *t <= to)
    }

    /// The shortest gap between consecutive instants among the next
    /// `count` after `t` (`None` with fewer than two).
    pub fn min_gap(&self, t: Instant, count: usize) -> Option<chrono::Duration> {
        let ticks: Vec<Instant> =
            std::iter::successors(self.next_after(t), |t| self.next_after(*t))
                .take(count)
                .collect();
        ticks.windows(2).map(|w| w[1] - w[0]).min()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_dialect_is_five_fields_or_a_macro() {
        for ok in [
            "0 2 * * *",
            "@hourly",
            "@daily",
            "@weekly",
            "@monthly",
            "@yearly",
            "0 0 L * *",
            "0 9 15W * *",
            "0 9 * * 5#2",
            "0 9 * * 5L",
            "*/15 9-17 * * MON-FRI",
        ] {
            assert!(cron(ok).is_ok(), "{ok}: {:?}", cron(ok).err());
        }
        for bad in [
            "0 0 2 * * *",
            "0 0 2 * * * 2030",
            "* * * *",
            "",
            "61 * * * *",
            "0 0 30 2 *",
            "CRON_TZ=UTC 0 2 * * *",
        ] {
            assert!(cron(bad).is_err(), "{bad} passed");
        }
    }

    #[test]
    fn zones_come_from_the_bundled_database() {
        assert!(zone("Europe/Berlin").is_ok());
        assert!(zone("UTC").is_ok());
        assert!(zone("Australia/Lord_Howe").is_ok());
        for bad in [
            "Mars/Olympus",
            "",
            "TZ=Europe/Berlin",
            "europe/berlin",
            "Local",
        ] {
            assert!(zone(bad).is_err(), "{bad} passed");
        }
    }

    #[test]
    fn instants_beyond_the_calendar_are_no_ticks() {
        let c = Calendar::new(&["@daily"], "Europe/Berlin").unwrap();
        let far: Instant = "+200000-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(c.next_after(far), None);
        assert_eq!(c.local(far).year(), 9999);
        let early: Instant = "-200000-01-01T00:00:00Z".parse().unwrap();
        assert!(c.next_after(early).is_some());
    }

    #[test]
    fn problems_name_each_field() {
        let problems = Calendar::new(&["0 2 * * *", "0 0 2 * * *"], "Mars/Olympus").unwrap_err();
        let fields: Vec<Field> = problems.iter().map(|p| p.field).collect();
        assert_eq!(fields, [Field::Cron(1), Field::Timezone]);
        let none: [&str; 0] = [];
        assert_eq!(
            Calendar::new(&none, UTC).unwrap_err()[0].field,
            Field::Crons
        );
    }
}
