//! Names, label values, durations and shell quoting as Tekton and
//! Kubernetes accept them.

use std::fmt::Write;

/// Tekton refuses object names over 63 characters.
const MAX_NAME: usize = 63;

/// A DNS-1123 label built from `parts` joined by `-`: lowercased, other
/// characters turned into `-`, and, when too long, cut and suffixed with a
/// digest of the whole so that distinct inputs keep distinct names.
pub fn object_name(parts: &[&str]) -> String {
    let joined = parts.join("-");
    let mut name: String = joined
        .chars()
        .map(|c| match c.to_ascii_lowercase() {
            c @ ('a'..='z' | '0'..='9' | '-') => c,
            _ => '-',
        })
        .collect();
    if name.len() > MAX_NAME {
        let digest = blake3::hash(joined.as_bytes()).to_hex();
        name.truncate(MAX_NAME - 9);
        let cut = name.trim_end_matches('-').len();
        name.truncate(cut);
        name.push('-');
        name.push_str(&digest[..8]);
    }
    let name = name.trim_matches('-');
    if name.is_empty() {
        "couler".to_owned()
    } else {
        name.to_owned()
    }
}

/// A valid label value: at most 63 of `[A-Za-z0-9._-]`, starting and ending
/// alphanumeric (other characters become `-`).
pub fn label_value(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .take(MAX_NAME)
        .collect();
    mapped
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

/// A duration as Go's `time.Duration` prints it (`30m0s`, `1h0m0s`,
/// `1.5s`), which is what `metav1.Duration` reads.
pub fn go_duration(d: std::time::Duration) -> String {
    let millis = d.as_millis();
    if millis == 0 {
        return "0s".to_owned();
    }
    let (hours, rest) = (millis / 3_600_000, millis % 3_600_000);
    let (minutes, rest) = (rest / 60_000, rest % 60_000);
    let (seconds, fraction) = (rest / 1000, rest % 1000);
    let mut out = String::new();
    if hours > 0 {
        let _ = write!(out, "{hours}h");
    }
    if hours > 0 || minutes > 0 {
        let _ = write!(out, "{minutes}m");
    }
    let _ = write!(out, "{seconds}");
    if fraction > 0 {
        let digits = format!("{fraction:03}");
        let _ = write!(out, ".{}", digits.trim_end_matches('0'));
    }
    out.push('s');
    out
}

/// `s` as one POSIX shell word.
pub fn sh_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b))
    {
        return s.to_owned();
    }
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn object_names_are_dns_labels() {
        assert_eq!(
            object_name(&["diamond", "run_01ABC", "a1"]),
            "diamond-run-01abc-a1"
        );
        let long = object_name(&[&"x".repeat(60), "run_1"]);
        assert_eq!(long.len(), 63);
        assert_ne!(long, object_name(&[&"x".repeat(60), "run_2"]));
        assert_eq!(object_name(&["__"]), "couler");
    }

    #[test]
    fn label_values_are_sanitized() {
        assert_eq!(label_value("tnt_abc"), "tnt_abc");
        assert_eq!(label_value("a b/c"), "a-b-c");
        assert_eq!(label_value("-x-"), "x");
        assert_eq!(label_value(&"a".repeat(80)).len(), 63);
    }

    #[test]
    fn durations_print_like_go() {
        assert_eq!(go_duration(Duration::from_secs(1800)), "30m0s");
        assert_eq!(go_duration(Duration::from_secs(10)), "10s");
        assert_eq!(go_duration(Duration::from_secs(7 * 86400)), "168h0m0s");
        assert_eq!(go_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(go_duration(Duration::ZERO), "0s");
    }

    #[test]
    fn shell_words() {
        assert_eq!(sh_quote("/tmp/a.csv"), "/tmp/a.csv");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote(""), "''");
        assert_eq!(sh_quote("$(params.x)"), "'$(params.x)'");
    }
}
