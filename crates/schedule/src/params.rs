//! `{{schedule.…}}` in a schedule's parameter values: the tick's nominal
//! instant, so that a run of a data pipeline knows which slice it is for
//! (Argo's `workflow.scheduledTime`, Airflow's `logical_date`). A fixed set,
//! no template engine.

use crate::{Calendar, Instant};

/// The instant in RFC 3339, UTC (`2026-03-08T07:00:00Z`).
pub const TIME: &str = "{{schedule.time}}";
/// The date on the schedule's wall clock (`2026-03-08`).
pub const LOCAL_DATE: &str = "{{schedule.localDate}}";
/// The time of day on the schedule's wall clock (`03:00:00`).
pub const LOCAL_TIME: &str = "{{schedule.localTime}}";

const PREFIX: &str = "{{schedule.";

/// The first `{{schedule.…}}` in `value` that is not one of the three.
pub fn unknown(value: &str) -> Option<String> {
    let mut rest = value;
    while let Some(at) = rest.find(PREFIX) {
        let tail = &rest[at..];
        let end = tail.find("}}").map_or(tail.len(), |e| e + 2);
        let reference = &tail[..end];
        if ![TIME, LOCAL_DATE, LOCAL_TIME].contains(&reference) {
            return Some(reference.to_owned());
        }
        rest = &tail[end..];
    }
    None
}

/// `value` with the tick's instant substituted.
pub fn substitute(value: &str, calendar: &Calendar, nominal: Instant) -> String {
    if !value.contains(PREFIX) {
        return value.to_owned();
    }
    let local = calendar.local(nominal);
    value
        .replace(TIME, &nominal.format("%Y-%m-%dT%H:%M:%SZ").to_string())
        .replace(LOCAL_DATE, &local.strftime("%Y-%m-%d").to_string())
        .replace(LOCAL_TIME, &local.strftime("%H:%M:%S").to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn substitutes_the_nominal_instant() {
        let c = Calendar::new(&["30 2 * * *"], "America/New_York").unwrap();
        let t: Instant = "2026-03-08T07:00:00Z".parse().unwrap();
        assert_eq!(
            substitute(
                "day={{schedule.localDate}} at {{schedule.localTime}} ({{schedule.time}})",
                &c,
                t
            ),
            "day=2026-03-08 at 03:00:00 (2026-03-08T07:00:00Z)"
        );
        assert_eq!(substitute("plain", &c, t), "plain");
    }

    #[test]
    fn names_unknown_references() {
        assert_eq!(
            unknown("{{schedule.time}}/{{schedule.date}}"),
            Some("{{schedule.date}}".into())
        );
        assert_eq!(unknown("{{schedule.localDate}}"), None);
        assert_eq!(unknown("{{workflow.name}}"), None);
    }
}
