//! Text output helpers: aligned tables, durations and timestamps.

use chrono::{DateTime, SecondsFormat, Utc};
use std::fmt::Write;

/// Columns padded to their widest cell; the last column is not padded.
pub fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    for row in std::iter::once(&header).chain(rows) {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            if i + 1 == row.len() {
                line.push_str(cell);
            } else {
                let _ = write!(line, "{cell:<width$}  ", width = widths[i]);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// `12s`, `3m05s`, `2h04m`.
pub fn duration(d: chrono::TimeDelta) -> String {
    let secs = d.num_seconds().max(0);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// How long something ran: until it finished, or until `now`.
pub fn elapsed(
    started: Option<DateTime<Utc>>,
    finished: Option<DateTime<Utc>>,
    now: DateTime<Utc>,
) -> Option<String> {
    started.map(|s| duration(finished.unwrap_or(now) - s))
}

/// An RFC 3339 timestamp to the second, in UTC.
pub fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// `k=v, k2=v2` (or `-` when empty).
pub fn pairs<'a>(map: impl IntoIterator<Item = (&'a String, &'a String)>) -> String {
    let joined: Vec<String> = map.into_iter().map(|(k, v)| format!("{k}={v}")).collect();
    if joined.is_empty() {
        "-".to_owned()
    } else {
        joined.join(", ")
    }
}

/// Prints `value` as JSON, or as the text `render` makes of it.
pub fn show(
    output: crate::Output,
    value: &serde_json::Value,
    render: impl Fn(&serde_json::Value) -> String,
) -> anyhow::Result<()> {
    match output {
        crate::Output::Json => crate::runs::print_json(value),
        crate::Output::Text => {
            print!("{}", render(value));
            Ok(())
        }
    }
}

/// A JSON value as text: a string as is, anything else as JSON.
pub fn text(v: &serde_json::Value) -> String {
    v.as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| v.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_at_a_glance() {
        let d = chrono::TimeDelta::seconds;
        assert_eq!(duration(d(0)), "0s");
        assert_eq!(duration(d(59)), "59s");
        assert_eq!(duration(d(65)), "1m05s");
        assert_eq!(duration(d(7440)), "2h04m");
        assert_eq!(duration(d(-3)), "0s");
    }

    #[test]
    fn tables_align_columns() {
        let rows = vec![
            vec!["a".into(), "succeeded".into(), "".into()],
            vec!["long-name".into(), "failed".into(), "exit 1".into()],
        ];
        assert_eq!(
            table(&["STEP", "STATUS", "MESSAGE"], &rows),
            "STEP       STATUS     MESSAGE\na          succeeded\nlong-name  failed     exit 1\n"
        );
    }
}
