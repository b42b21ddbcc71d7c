//! Schedule bodies and views, and the checks that turn a body into store
//! settings (every problem at once, each at its JSON pointer).

use crate::error::{ApiError, ApiResult, pointer};
use chrono::{DateTime, Utc};
use couler_ir::scalar::ParamValue;
use couler_ir::{Code, Parameter, Problem, Problems};
use couler_schedule::{Calendar, Field, params};
use couler_store::schedules::{CatchupPolicy, Overlap, Schedule, Settings};
use couler_store::{ScheduleId, WorkflowId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::ToSchema;

/// How many upcoming ticks the minimum-interval check looks at.
const GAP_SAMPLE: usize = 64;
/// Longest catch-up window: seven days.
const MAX_WINDOW_SECS: i32 = 604_800;

/// A schedule: a new one (`slug` and `crons` required), or the changes to
/// one (absent fields keep their value).
#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ScheduleSettings {
    /// Its name within the workflow, and its identity (only when
    /// creating): 1 to 63 lowercase letters, digits or '-'. `default` is
    /// the workflow's own (the IR's `schedule:`).
    #[schema(pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$")]
    pub slug: Option<String>,
    /// Five-field crons (`0 2 * * *`; `L`, `W`, `#` allowed) or macros
    /// (`@hourly`, `@daily`, `@weekly`, `@monthly`, `@yearly`); the schedule
    /// fires at every instant any of them matches.
    #[schema(min_items = 1, max_items = 8)]
    pub crons: Option<Vec<String>>,
    /// IANA time zone the crons are read in (default `UTC`, never the
    /// server's).
    pub timezone: Option<String>,
    /// The workflow version its runs execute; null or absent: the latest
    /// at each tick.
    #[serde(default, deserialize_with = "crate::wire::whole_or_null")]
    #[schema(value_type = Option<i32>, minimum = 1, nullable)]
    pub version: Option<Option<i32>>,
    /// Parameter values; `{{schedule.time}}` (RFC 3339, UTC),
    /// `{{schedule.localDate}}` and `{{schedule.localTime}}` (on the
    /// schedule's wall clock) become the tick's nominal instant.
    #[schema(value_type = Option<BTreeMap<String, crate::openapi::IrParamValue>>)]
    pub parameters: Option<BTreeMap<String, ParamValue>>,
    pub labels: Option<BTreeMap<String, String>>,
    #[schema(minimum = -1000, maximum = 1000)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub priority: Option<i32>,
    /// After downtime: `skip` missed ticks, fire the `latest` one within
    /// the window (default), or `all` within it (at most `max_catchup`).
    pub catchup: Option<CatchupPolicy>,
    /// How old a missed tick may be and still fire (default 3600).
    #[schema(minimum = 1, maximum = 604800)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub catchup_window_secs: Option<i32>,
    /// Most missed ticks `all` fires (default 10).
    #[schema(minimum = 1, maximum = 1000)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub max_catchup: Option<i32>,
    /// While its last run is active: `skip` the tick (default), `allow`
    /// another run, or `cancel_other` runs first.
    pub overlap: Option<Overlap>,
    /// Each tick is due up to this many seconds after its instant, the
    /// same on every replica (spreads top-of-the-hour load); at most half
    /// the shortest gap between ticks.
    #[schema(minimum = 0)]
    #[serde(default, deserialize_with = "couler_ir::scalar::whole::opt")]
    pub jitter_secs: Option<i32>,
    /// No tick before this.
    #[serde(default, deserialize_with = "crate::wire::double_option")]
    #[schema(value_type = Option<DateTime<Utc>>, nullable)]
    pub start_at: Option<Option<DateTime<Utc>>>,
    /// No tick at or after this.
    #[serde(default, deserialize_with = "crate::wire::double_option")]
    #[schema(value_type = Option<DateTime<Utc>>, nullable)]
    pub end_at: Option<Option<DateTime<Utc>>>,
}

/// A schedule and where it stands.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct ScheduleView {
    pub id: ScheduleId,
    pub workflow: WorkflowId,
    pub slug: String,
    /// `workflow`: the IR's `schedule:` (edit the workflow to change its
    /// calendar); `api`: made through this API.
    pub source: String,
    pub crons: Vec<String>,
    pub timezone: String,
    pub version: Option<i32>,
    pub parameters: BTreeMap<String, String>,
    pub labels: BTreeMap<String, String>,
    pub priority: i32,
    pub catchup: CatchupPolicy,
    pub catchup_window_secs: i32,
    pub max_catchup: i32,
    pub overlap: Overlap,
    pub jitter_secs: i32,
    pub start_at: Option<DateTime<Utc>>,
    pub end_at: Option<DateTime<Utc>>,
    pub paused: bool,
    pub paused_at: Option<DateTime<Utc>>,
    pub paused_by: Option<String>,
    pub paused_reason: Option<String>,
    /// The nominal instant of the last tick handled (fired or skipped).
    pub last_tick: Option<DateTime<Utc>>,
    /// The nominal instant of the next tick; null when paused or ended.
    pub next_tick: Option<DateTime<Utc>>,
    /// Bumped by every change of what decides the ticks.
    pub generation: i64,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Schedule> for ScheduleView {
    fn from(s: Schedule) -> Self {
        let paused = s.paused_at.is_some();
        ScheduleView {
            id: s.id,
            workflow: s.workflow_id,
            slug: s.slug,
            source: s.source,
            crons: s.crons,
            timezone: s.timezone,
            version: s.workflow_version,
            parameters: s.parameters.0,
            labels: s.labels.0,
            priority: s.priority,
            catchup: s.catchup,
            catchup_window_secs: s.catchup_window_secs,
            max_catchup: s.max_catchup,
            overlap: s.overlap,
            jitter_secs: s.jitter_secs,
            start_at: s.start_at,
            end_at: s.end_at,
            paused,
            paused_at: s.paused_at,
            paused_by: s.paused_by,
            paused_reason: s.paused_reason,
            last_tick: s.last_tick,
            next_tick: s.next_tick.filter(|_| !paused),
            generation: s.generation,
            created_by: s.created_by,
            created_at: s.created_at,
            updated_at: s.updated_at,
        }
    }
}

impl ScheduleSettings {
    /// Whether the body changes the calendar (crons or time zone).
    pub fn touches_calendar(&self) -> bool {
        self.crons.is_some() || self.timezone.is_some()
    }

    /// `base` with these settings applied, checked.
    pub fn apply(self, mut base: Settings, check: &Check<'_>) -> ApiResult<Settings> {
        let mut problems = Vec::new();
        let mut problem = |path: String, code, message: String| {
            problems.push(Problem {
                path,
                code,
                message,
            })
        };
        if let Some(c) = self.crons {
            base.crons = c;
        }
        if let Some(tz) = self.timezone {
            base.timezone = tz;
        }
        if let Some(v) = self.version {
            base.workflow_version = v;
        }
        if let Some(p) = self.parameters {
            base.parameters = p.into_iter().map(|(k, v)| (k, v.0)).collect();
        }
        if let Some(l) = self.labels {
            base.labels = l;
        }
        if let Some(p) = self.priority {
            base.priority = p;
        }
        if let Some(c) = self.catchup {
            base.catchup = c;
        }
        if let Some(w) = self.catchup_window_secs {
            base.catchup_window_secs = w;
        }
        if let Some(m) = self.max_catchup {
            base.max_catchup = m;
        }
        if let Some(o) = self.overlap {
            base.overlap = o;
        }
        if let Some(j) = self.jitter_secs {
            base.jitter_secs = j;
        }
        if let Some(s) = self.start_at {
            base.start_at = s;
        }
        if let Some(e) = self.end_at {
            base.end_at = e;
        }
        let calendar = match Calendar::new(&base.crons, &base.timezone) {
            Ok(c) => Some(c),
            Err(found) => {
                for p in found {
                    let path = match p.field {
                        Field::Cron(i) => pointer(["crons", &i.to_string()]),
                        Field::Crons => pointer(["crons"]),
                        Field::Timezone => pointer(["timezone"]),
                    };
                    problem(path, Code::InvalidValue, p.message);
                }
                None
            }
        };
        let range = |v: i32, min: i32, max: i32| (min..=max).contains(&v);
        if !range(base.priority, -1000, 1000) {
            problem(
                pointer(["priority"]),
                Code::OutOfRange,
                "priority must be between -1000 and 1000".into(),
            );
        }
        if !range(base.catchup_window_secs, 1, MAX_WINDOW_SECS) {
            let text = format!("the catch-up window is 1 to {MAX_WINDOW_SECS} seconds");
            problem(pointer(["catchup_window_secs"]), Code::OutOfRange, text);
        }
        if !range(base.max_catchup, 1, 1000) {
            problem(
                pointer(["max_catchup"]),
                Code::OutOfRange,
                "max_catchup is 1 to 1000".into(),
            );
        }
        if base.jitter_secs < 0 {
            problem(
                pointer(["jitter_secs"]),
                Code::OutOfRange,
                "jitter cannot be negative".into(),
            );
        }
        if let (Some(s), Some(e)) = (base.start_at, base.end_at)
            && e <= s
        {
            problem(
                pointer(["end_at"]),
                Code::OutOfRange,
                "end_at must be after start_at".into(),
            );
        }
        if base.workflow_version.is_some_and(|v| v < 1) {
            problem(
                pointer(["version"]),
                Code::OutOfRange,
                "versions count from 1".into(),
            );
        }
        for (k, v) in &base.labels {
            if !couler_ir::names::is_label_key(k) || !couler_ir::names::is_label_value(v) {
                problem(
                    pointer(["labels", k]),
                    Code::InvalidValue,
                    format!("{k:?}={v:?} is not a valid label"),
                );
            }
        }
        for (k, v) in &base.parameters {
            if let Some(reference) = params::unknown(v) {
                let text = format!(
                    "{reference} is not one of {{{{schedule.time}}}}, {{{{schedule.localDate}}}}, {{{{schedule.localTime}}}}"
                );
                problem(pointer(["parameters", k]), Code::InvalidReference, text);
            }
        }
        if let Some(calendar) = &calendar {
            let gap = calendar.min_gap(check.now, GAP_SAMPLE);
            let min = chrono::Duration::seconds(check.min_interval_secs.into());
            if let Some(gap) = gap.filter(|g| *g < min) {
                let text = format!(
                    "ticks {} s apart; this tenant's schedules tick at most every {} s",
                    gap.num_seconds(),
                    min.num_seconds()
                );
                problem(pointer(["crons"]), Code::OutOfRange, text);
            }
            let limit = gap.map_or(i64::MAX, |g| g.num_seconds() / 2);
            if i64::from(base.jitter_secs) > limit {
                let text =
                    format!("jitter is at most half the shortest gap between ticks ({limit} s)");
                problem(pointer(["jitter_secs"]), Code::OutOfRange, text);
            }
            // The parameters as a tick would give them, against the
            // workflow's declarations (unknown, missing, not allowed).
            if let Some(declared) = check.declared {
                let sample: BTreeMap<String, ParamValue> = base
                    .parameters
                    .iter()
                    .map(|(k, v)| {
                        (
                            k.clone(),
                            ParamValue(params::substitute(v, calendar, check.now)),
                        )
                    })
                    .collect();
                if let Err(found) = couler_ir::params::resolve(declared, &sample) {
                    problems.extend(found.0);
                }
            }
        }
        if problems.is_empty() {
            Ok(base)
        } else {
            Err(ApiError::Invalid(Problems(problems)))
        }
    }
}

/// What a schedule is checked against.
pub struct Check<'a> {
    pub now: DateTime<Utc>,
    pub min_interval_secs: i32,
    /// The parameters the workflow version it runs declares.
    pub declared: Option<&'a [Parameter]>,
}
