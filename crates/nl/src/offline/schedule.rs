//! Schedules: "every night", "hourly", "every Monday at 9", "每天早上8点",
//! "每周一", "每15分钟" → five-field cron.

use super::lexicon::integer_at;
use super::scan::{Token, phrase_at};

const DAYS: &[(&str, u8)] = &[
    ("sunday", 0),
    ("monday", 1),
    ("tuesday", 2),
    ("wednesday", 3),
    ("thursday", 4),
    ("friday", 5),
    ("saturday", 6),
];

const CJK_DAYS: &[(&str, u8)] = &[
    ("日", 0),
    ("天", 0),
    ("一", 1),
    ("二", 2),
    ("三", 3),
    ("四", 4),
    ("五", 5),
    ("六", 6),
];

/// A cron expression and the tokens it was read from (indexes).
pub fn read(tokens: &[Token]) -> Option<(String, Vec<usize>)> {
    let mut used = Vec::new();
    let take = |i: usize, n: usize, used: &mut Vec<usize>| used.extend(i..i + n);
    // (minute, hour, day of month, day of week) with "*" defaults.
    let mut minute = "0".to_owned();
    let mut hour: Option<String> = None;
    let mut dom = "*".to_owned();
    let mut dow = "*".to_owned();
    if let Some(found) = literal_cron(tokens) {
        return Some(found);
    }
    let mut matched = false;
    let mut evening = false;
    // Whether a clock time set the hour (else "nightly" may default it).
    let mut timed = false;
    let mut i = 0;
    while i < tokens.len() {
        let at = |p: &str| phrase_at(tokens, i, p);
        // "aggregate to hourly", "resample into daily": a grain, no schedule.
        let grain = i > 0
            && ["to", "into", "by", "per"]
                .iter()
                .any(|w| tokens[i - 1].is(w))
            && tokens[i].text.ends_with("ly");
        // "过去90天每天", "1月到12月每个月": each day or month of a range
        // runs, no schedule (`dates::chinese_calendar`).
        let calendar =
            i > 0 && tokens[i].is("每") && (tokens[i - 1].is("天") || tokens[i - 1].is("月"));
        if grain || calendar {
            i += 1;
            continue;
        }
        if let Some(n) = [
            "every night",
            "each night",
            "nightly",
            "every evening",
            "每天晚上",
            "每晚",
            "每天夜里",
            "每夜",
        ]
        .iter()
        .find_map(|p| at(p))
        {
            take(i, n, &mut used);
            matched = true;
            evening = true;
            hour.get_or_insert_with(|| "2".into());
            i += n;
            continue;
        }
        if let Some(n) = [
            "every day",
            "each day",
            "daily",
            "every morning",
            "每天",
            "每日",
        ]
        .iter()
        .find_map(|p| at(p))
        {
            take(i, n, &mut used);
            matched = true;
            i += n;
            continue;
        }
        if let Some(n) = ["hourly", "every hour", "each hour", "每小时", "每个小时"]
            .iter()
            .find_map(|p| at(p))
        {
            take(i, n, &mut used);
            matched = true;
            hour = Some("*".into());
            i += n;
            continue;
        }
        if let Some(n) = [
            "weekly",
            "every week",
            "每周",
            "每星期",
            "每个星期",
            "每礼拜",
        ]
        .iter()
        .find_map(|p| at(p))
        {
            take(i, n, &mut used);
            matched = true;
            // "每周一": the day follows.
            match tokens
                .get(i + n)
                .and_then(|t| CJK_DAYS.iter().find(|(d, _)| t.is(d)))
            {
                Some((_, d)) => {
                    take(i + n, 1, &mut used);
                    dow = d.to_string();
                    i += n + 1;
                }
                None => {
                    if dow == "*" {
                        dow = "0".into();
                    }
                    i += n;
                }
            }
            continue;
        }
        if let Some(n) = ["monthly", "every month", "每月", "每个月"]
            .iter()
            .find_map(|p| at(p))
        {
            take(i, n, &mut used);
            matched = true;
            dom = "1".into();
            i += n;
            continue;
        }
        if let Some(n) = [
            "every weekday",
            "on weekdays",
            "weekdays",
            "工作日",
            "每个工作日",
        ]
        .iter()
        .find_map(|p| at(p))
        {
            take(i, n, &mut used);
            matched = true;
            dow = "1-5".into();
            i += n;
            continue;
        }
        if (tokens[i].is("every") || tokens[i].is("each") || tokens[i].is("on"))
            && let Some((_, d)) = tokens.get(i + 1).and_then(|t| {
                DAYS.iter()
                    .find(|(d, _)| t.is(d) || t.text == format!("{d}s"))
            })
        {
            take(i, 2, &mut used);
            matched = true;
            dow = d.to_string();
            i += 2;
            continue;
        }
        // "every 15 minutes", "every 2 hours", "每15分钟", "每隔2小时"
        let gap = usize::from(tokens[i].is("每") && tokens.get(i + 1).is_some_and(|t| t.is("隔")));
        if (tokens[i].is("every") || tokens[i].is("每"))
            && let Some((v, n)) = integer_at(tokens, i + 1 + gap, true)
        {
            let n = n + gap;
            let unit = tokens.get(i + 1 + n);
            let unit2 = tokens.get(i + 2 + n);
            let is = |t: Option<&Token>, w: &[&str]| t.is_some_and(|t| w.iter().any(|x| t.is(x)));
            if is(unit, &["minutes", "minute", "mins", "min"])
                || (is(unit, &["分"]) && is(unit2, &["钟"]))
            {
                let len = if is(unit, &["分"]) { n + 3 } else { n + 2 };
                take(i, len, &mut used);
                matched = true;
                minute = format!("*/{}", v.max(1));
                hour = Some("*".into());
                i += len;
                continue;
            }
            if is(unit, &["hours", "hour"]) || (is(unit, &["小"]) && is(unit2, &["时"])) {
                let len = if is(unit, &["小"]) { n + 3 } else { n + 2 };
                take(i, len, &mut used);
                matched = true;
                hour = Some(format!("*/{}", v.max(1)));
                i += len;
                continue;
            }
        }
        // "(Sundays 02:00)", "a Monday 9:00 email", "weekly on Sunday
        // 23:00": a day named as recurring, or with a clock time.
        if let Some((_, d)) = DAYS.iter().find(|(d, _)| {
            tokens[i].text == format!("{d}s")
                || (tokens[i].is(d) && (matched || clock_at(tokens, i + 1).is_some()))
        }) {
            take(i, 1, &mut used);
            matched = true;
            dow = d.to_string();
            i += 1;
            continue;
        }
        // "每小时的第 5 分钟": the minute of an hourly run.
        if hour.as_deref() == Some("*")
            && tokens[i].is("第")
            && let Some((m, n)) = integer_at(tokens, i + 1, false)
            && tokens.get(i + 1 + n).is_some_and(|t| t.is("分"))
            && m < 60
        {
            let len = 2 + n + usize::from(tokens.get(i + 2 + n).is_some_and(|t| t.is("钟")));
            take(i, len, &mut used);
            minute = m.to_string();
            i += len;
            continue;
        }
        // A time may come before the schedule words: "at 2am every day";
        // "凌晨 1 点半" alone is a daily time.
        let daily = PARTS_OF_DAY.iter().any(|(p, _)| at(p).is_some());
        if (matched || daily || tokens[i].is("at"))
            && let Some((h, m, n)) = time_at(tokens, i, evening)
        {
            matched |= daily;
            take(i, n, &mut used);
            hour = Some(h.to_string());
            minute = m.to_string();
            timed = true;
            i += n;
            continue;
        }
        // "04:00", "6pm" with no "at", near schedule words.
        if !timed && let Some((h, m, n)) = clock_at(tokens, i) {
            take(i, n, &mut used);
            hour = Some(h.to_string());
            minute = m.to_string();
            timed = true;
            i += n;
            continue;
        }
        i += 1;
    }
    if !matched {
        return None;
    }
    let hour = hour.unwrap_or_else(|| "0".into());
    Some((format!("{minute} {hour} {dom} * {dow}"), used))
}

/// A clock time written as one: "04:00", "23:00", "6pm", "9am" (not "at
/// 9", which `time_at` reads): hour, minute, tokens used.
fn clock_at(tokens: &[Token], i: usize) -> Option<(u32, u32, usize)> {
    clock(tokens, i, false, false).and_then(|(h, m, n, marked)| marked.then_some((h, m, n)))
}

/// An hour at `i`, with ":MM" and "am"/"pm" when written ("9", "9:30",
/// "6 pm"; `words`: "nine" too): hour, minute, tokens used, and whether
/// ":" or "am"/"pm" said it is a time. `evening`: a bare 6–11 is p.m.
fn clock(
    tokens: &[Token],
    i: usize,
    words: bool,
    evening: bool,
) -> Option<(u32, u32, usize, bool)> {
    let (h, mut used) = integer_at(tokens, i, words)?;
    let mut minute = 0;
    let mut marked = false;
    if tokens.get(i + used).is_some_and(|t| t.is(":"))
        && let Some((m, k)) = integer_at(tokens, i + used + 1, false)
    {
        minute = m;
        used += 1 + k;
        marked = true;
    }
    let mut hour = h;
    match tokens.get(i + used).map(|t| t.text.as_str()) {
        Some("pm" | "p.m") if h < 12 => {
            hour += 12;
            used += 1;
            marked = true;
        }
        Some("am" | "a.m") if h < 12 => {
            used += 1;
            marked = true;
        }
        _ if evening && (6..12).contains(&h) => hour += 12,
        _ => {}
    }
    (hour < 24 && minute < 60).then_some((hour, minute, used, marked))
}

/// A five-field cron expression written out: "schedule 0 5 * * *",
/// "Nightly 0 3 * * *". Fields are the runs of tokens written without
/// spaces between them; at least one must hold a `*`.
fn literal_cron(tokens: &[Token]) -> Option<(String, Vec<usize>)> {
    let words = super::lexicon::joined_words(tokens);
    let field = |w: &str| {
        !w.is_empty()
            && w.split(',').all(|part| {
                let (base, step) = part.split_once('/').unwrap_or((part, "1"));
                let range_ok = base == "*"
                    || base
                        .split('-')
                        .all(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()));
                range_ok && step.chars().all(|c| c.is_ascii_digit()) && !step.is_empty()
            })
    };
    words.windows(5).find_map(|w| {
        let fields: Vec<&str> = w.iter().map(|(t, _)| t.as_str()).collect();
        (fields.iter().all(|f| field(f)) && fields.iter().any(|f| f.contains('*'))).then(|| {
            let mut used: Vec<usize> = w.iter().flat_map(|(_, idx)| idx.iter().copied()).collect();
            // "schedule: 0 5 * * *", "cron = …": the word that introduces it.
            let mut k = used[0];
            while k > 0
                && ["schedule", "scheduled", "cron", ":", "="]
                    .iter()
                    .any(|x| tokens[k - 1].is(x))
            {
                k -= 1;
                used.push(k);
            }
            (fields.join(" "), used)
        })
    })
}

/// "at 9", "at 9am", "at 9:30", "at 6 pm", "at noon", "早上8点", "晚上10点",
/// "9点30分": hour, minute, tokens used.
/// Chinese parts of the day before a time, and whether they are p.m.
const PARTS_OF_DAY: &[(&str, bool)] = &[
    ("早上", false),
    ("上午", false),
    ("凌晨", false),
    ("下午", true),
    ("晚上", true),
    ("中午", true),
];

/// A schedule read later in a description says more about the one read
/// before ("weekly … Every Sunday 3am", "每天增量训练。凌晨 4 点先拉取"):
/// `later`, when every field of `earlier` is the same or was a default.
pub fn refine(earlier: &str, later: &str) -> Option<String> {
    let e: Vec<&str> = earlier.split(' ').collect();
    let l: Vec<&str> = later.split(' ').collect();
    if e.len() != 5 || l.len() != 5 || e == l {
        return None;
    }
    let defaults = ["0", "0", "*", "*", "0"];
    let ok = (0..5).all(|k| {
        e[k] == l[k] || (e[k] == defaults[k] && (k != 4 || l[4] != "*")) || (k == 4 && e[4] == "*")
    });
    // (An hourly run stays hourly: "每小时…第 5 分钟" sets its minute.)
    let keeps_period = (e[1] == "*") == (l[1] == "*");
    (ok && keeps_period).then(|| later.to_owned())
}

fn time_at(tokens: &[Token], i: usize, evening: bool) -> Option<(u32, u32, usize)> {
    let t = tokens.get(i)?;
    if t.is("at") {
        if tokens.get(i + 1).is_some_and(|t| t.is("noon")) {
            return Some((12, 0, 2));
        }
        if tokens.get(i + 1).is_some_and(|t| t.is("midnight")) {
            return Some((0, 0, 2));
        }
        return clock(tokens, i + 1, true, evening).map(|(h, m, n, _)| (h, m, n + 1));
    }
    // Chinese: optional part of day, a number, 点 / 时, optional N分.
    let mut used = 0;
    let mut pm = evening;
    for &(p, is_pm) in PARTS_OF_DAY {
        if let Some(n) = phrase_at(tokens, i, p) {
            used = n;
            pm = is_pm;
            break;
        }
    }
    let (h, n) = integer_at(tokens, i + used, false)?;
    used += n;
    if !tokens
        .get(i + used)
        .is_some_and(|t| t.is("点") || t.is("时"))
    {
        return None;
    }
    used += 1;
    let mut minute = 0;
    if let Some((m, k)) = integer_at(tokens, i + used, false)
        && tokens.get(i + used + k).is_some_and(|t| t.is("分"))
    {
        minute = m;
        used += k + 1;
    } else if tokens.get(i + used).is_some_and(|t| t.is("半")) {
        minute = 30;
        used += 1;
    }
    let hour = if pm && h < 12 && h != 0 && !(h <= 4 && evening) {
        h + 12
    } else {
        h
    };
    (hour < 24 && minute < 60).then_some((hour, minute, used))
}

#[cfg(test)]
mod tests {
    use super::super::scan::tokenize;
    use super::*;

    fn cron(s: &str) -> Option<String> {
        read(&tokenize(s)).map(|(c, _)| c)
    }

    #[test]
    fn english_schedules() {
        assert_eq!(cron("run this every night").as_deref(), Some("0 2 * * *"));
        assert_eq!(cron("hourly").as_deref(), Some("0 * * * *"));
        assert_eq!(cron("every Monday at 9").as_deref(), Some("0 9 * * 1"));
        assert_eq!(cron("every day at 6:30 pm").as_deref(), Some("30 18 * * *"));
        assert_eq!(cron("every 15 minutes").as_deref(), Some("*/15 * * * *"));
        assert_eq!(cron("weekly").as_deref(), Some("0 0 * * 0"));
        assert_eq!(cron("monthly").as_deref(), Some("0 0 1 * *"));
        assert_eq!(cron("train a model"), None);
        assert_eq!(
            cron("Nightly 0 3 * * * : count").as_deref(),
            Some("0 3 * * *")
        );
        assert_eq!(
            cron("retries=2; schedule 0 5 * * *").as_deref(),
            Some("0 5 * * *")
        );
        assert_eq!(
            cron("Monthly (1st of the month, 04:00)").as_deref(),
            Some("0 4 1 * *")
        );
        assert_eq!(
            cron("Weekly RAG refresh (Sundays 02:00)").as_deref(),
            Some("0 2 * * 0")
        );
        assert_eq!(
            cron("a weekly job (Fridays 6pm)").as_deref(),
            Some("0 18 * * 5")
        );
        assert_eq!(cron("a Monday 9:00 email").as_deref(), Some("0 9 * * 1"));
        assert_eq!(
            cron("Every Sunday at 23:00 we pull").as_deref(),
            Some("0 23 * * 0")
        );
        assert_eq!(cron("split 80:20 into train and test"), None);
    }

    #[test]
    fn chinese_schedules() {
        assert_eq!(cron("每天晚上").as_deref(), Some("0 2 * * *"));
        assert_eq!(cron("每天早上8点").as_deref(), Some("0 8 * * *"));
        assert_eq!(cron("每天晚上10点").as_deref(), Some("0 22 * * *"));
        assert_eq!(cron("每周一上午9点").as_deref(), Some("0 9 * * 1"));
        assert_eq!(cron("每小时").as_deref(), Some("0 * * * *"));
        assert_eq!(cron("每15分钟").as_deref(), Some("*/15 * * * *"));
        assert_eq!(cron("每隔15分钟检测一下").as_deref(), Some("*/15 * * * *"));
        assert_eq!(cron("每小时的第 5 分钟跑").as_deref(), Some("5 * * * *"));
        assert_eq!(
            cron("凌晨 1 点半 backup 一下").as_deref(),
            Some("30 1 * * *")
        );
    }

    #[test]
    fn a_later_schedule_says_more() {
        assert_eq!(
            refine("0 0 * * *", "0 4 * * *").as_deref(),
            Some("0 4 * * *")
        );
        assert_eq!(
            refine("0 0 * * 0", "0 3 * * 0").as_deref(),
            Some("0 3 * * 0")
        );
        assert_eq!(
            refine("0 * * * *", "5 * * * *").as_deref(),
            Some("5 * * * *")
        );
        // A different day, a different period, or the same: no change.
        assert_eq!(refine("0 9 * * 1", "0 3 * * 0"), None);
        assert_eq!(refine("0 * * * *", "0 4 * * *"), None);
        assert_eq!(refine("0 4 * * *", "0 4 * * *"), None);
    }
}
