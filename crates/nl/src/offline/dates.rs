//! Fan-outs over calendars: one run per day of a range of dates
//! ("for every date from 2024-01-01 to 2024-01-31") or per month ("for each
//! month from January to June").

use super::lexicon::joined_words;
use super::reader::Reader;
use super::scan::{Class, find_any, phrase_at};
use crate::decompose::{FanOut, FanOutValues};

/// "2024-01-31" as days since 1970-01-01.
fn day_number(date: &str) -> Option<i64> {
    let mut parts = date.split('-');
    let (y, m, d): (i64, i64, i64) = (
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
        parts.next()?.parse().ok()?,
    );
    if parts.next().is_some()
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
        || date.len() != 10
    {
        return None;
    }
    // Howard Hinnant's days_from_civil.
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (m + if m > 2 { -3 } else { 9 }) + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    Some(era * 146_097 + doe - 719_468)
}

/// Days since 1970-01-01 as "2024-01-31".
fn date_of(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// "for every date from 2024-01-01 to 2024-01-31": one run per day.
pub(super) fn date_range(r: &mut Reader) -> Option<FanOut> {
    let w = joined_words(r.t);
    let (a, b, from, to) = (0..w.len().saturating_sub(2)).find_map(|k| {
        let start = day_number(&w[k].0)?;
        if !["to", "through", "thru", "until", "~", "到", "至"].contains(&w[k + 1].0.as_str()) {
            return None;
        }
        let end = day_number(&w[k + 2].0)?;
        Some((start, end, w[k].1[0], *w[k + 2].1.last()?))
    })?;
    if b < a || b - a > 3660 {
        return None;
    }
    let from = lead_in(r, from);
    r.mark(from, to + 1 - from);
    Some(FanOut {
        parameter: "date".to_owned(),
        values: FanOutValues::List((a..=b).map(date_of).collect()),
    })
}

/// Where the words that introduce a range start: "for every date from …".
fn lead_in(r: &Reader, mut from: usize) -> usize {
    while from > 0
        && r.is(
            from - 1,
            &[
                "from", "从", "for", "each", "every", "date", "dates", "day", "days", "month",
                "months", "of", "the",
            ],
        )
    {
        from -= 1;
    }
    from
}

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

/// "for each month from January to June 2023": one run per month.
pub(super) fn month_range(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    let month = |i: usize| t.get(i).and_then(|x| MONTHS.iter().position(|m| x.is(m)));
    let (i, a, b) = (0..t.len()).find_map(|i| {
        let a = month(i)?;
        if !r.is(i + 1, &["to", "through", "thru", "until"]) {
            return None;
        }
        Some((i, a, month(i + 2)?))
    })?;
    if b <= a
        || find_any(
            t,
            &[
                "each month",
                "every month",
                "per month",
                "for each",
                "for every",
            ],
        )
        .is_none()
    {
        return None;
    }
    let from = lead_in(r, i);
    // ("… to June 2023": the year belongs to the range.)
    let end = i + 3 + usize::from(t.get(i + 3).is_some_and(|x| x.class == Class::Number));
    r.mark(from, end - from);
    Some(FanOut {
        parameter: "month".to_owned(),
        values: FanOutValues::List(MONTHS[a..=b].iter().map(|m| (*m).to_owned()).collect()),
    })
}

/// "for each day of March 2024 (31 days)": one run per day of the month;
/// without a year, as many runs as it has days.
pub(super) fn month_days(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    let (i, m) = (3..t.len()).find_map(|i| {
        let m = MONTHS.iter().position(|m| t[i].is(m))?;
        (r.is(i - 1, &["of", "in"]) && r.is(i - 2, &["day"]) && r.is(i - 3, &["each", "every"]))
            .then_some((i, m))
    })?;
    let year = t
        .get(i + 1)
        .filter(|x| x.class == Class::Number)
        .and_then(|x| x.text.parse::<i64>().ok())
        .filter(|y| (1900..=2200).contains(y));
    let values = match year {
        Some(y) => {
            let first = day_number(&format!("{y:04}-{:02}-01", m + 1))?;
            let (ny, nm) = if m == 11 { (y + 1, 1) } else { (y, m + 2) };
            let next = day_number(&format!("{ny:04}-{nm:02}-01"))?;
            FanOutValues::List((first..next).map(date_of).collect())
        }
        None => FanOutValues::Count([31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m]),
    };
    let from = lead_in(r, i - 1);
    let mut end = i + 1 + usize::from(year.is_some());
    // ("(31 days)": the count it already has.)
    if r.is(end, &["("])
        && t.get(end + 1).is_some_and(|x| x.class == Class::Number)
        && r.is(end + 2, &["days"])
        && r.is(end + 3, &[")"])
    {
        end += 4;
    }
    r.mark(from, end - from);
    Some(FanOut {
        parameter: "date".to_owned(),
        values,
    })
}

/// "2023年1月到12月每个月": one run per month of the year;
/// "过去90天每天": one per day of the last ones.
pub(super) fn chinese_calendar(r: &mut Reader) -> Option<FanOut> {
    let t = r.t;
    let number = |i: usize| {
        t.get(i)
            .filter(|x| x.class == Class::Number)
            .and_then(|x| x.text.parse::<u32>().ok())
    };
    if find_any(t, &["每个月", "每月", "逐月", "每一个月"]).is_some() {
        let found = (0..t.len()).find_map(|i| {
            let year = number(i).filter(|y| (1900..=2200).contains(y) && r.is(i + 1, &["年"]))?;
            let a = number(i + 2).filter(|_| r.is(i + 3, &["月"]))?;
            if !r.is(i + 4, &["到", "至", "-", "~"]) {
                return None;
            }
            // ("到2023年12月": the year again.)
            let k = if r.is(i + 6, &["年"]) { i + 7 } else { i + 5 };
            let b = number(k).filter(|_| r.is(k + 1, &["月"]))?;
            ((1..=b).contains(&a) && b <= 12).then_some((i, year, a, b, k + 2))
        });
        if let Some((i, year, a, b, end)) = found {
            r.mark(i, end - i);
            return Some(FanOut {
                parameter: "month".to_owned(),
                values: FanOutValues::List((a..=b).map(|m| format!("{year:04}-{m:02}")).collect()),
            });
        }
    }
    let (i, n, end) = (0..t.len()).find_map(|i| {
        let k = ["过去", "最近", "近"]
            .iter()
            .find_map(|p| phrase_at(t, i, p))?;
        let n = number(i + k).filter(|n| *n >= 2 && r.is(i + k + 1, &["天"]))?;
        let each = ["每一天", "每天", "每日", "逐天", "逐日"]
            .iter()
            .find_map(|p| phrase_at(t, i + k + 2, p))?;
        Some((i, n, i + k + 2 + each))
    })?;
    r.mark(i, end - i);
    Some(FanOut {
        parameter: "day".to_owned(),
        values: FanOutValues::Count(n),
    })
}
