//! Names Argo accepts: object names, label values, template, task and
//! parameter names, all deterministic and collision-free.

use std::collections::HashSet;

/// Argo's limit on template, task and Workflow names (the Workflow name is
/// also a pod label value).
pub(super) const MAX_NAME: usize = 63;

/// A CronWorkflow appends `-<unix time>` (11 characters) to its name for
/// each Workflow it starts, which must stay within [`MAX_NAME`].
pub(super) const MAX_CRON_NAME: usize = 52;

/// Hands out unique names within one namespace (the templates of a
/// Workflow, the tasks of a DAG, the parameters of a template).
#[derive(Debug, Default)]
pub(super) struct Names {
    taken: HashSet<String>,
    /// Parameter and artifact names may hold `_`; template and task names
    /// may not.
    underscores: bool,
}

impl Names {
    /// For template and task names: `[a-zA-Z0-9-]`.
    pub fn objects() -> Names {
        Names::default()
    }

    /// For parameter, artifact and global output names: `[a-zA-Z0-9_-]`.
    pub fn parameters() -> Names {
        Names {
            underscores: true,
            ..Names::default()
        }
    }

    /// Takes `name` as it is; false when it was already taken.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.taken.insert(name.to_owned())
    }

    /// `wanted` (made valid by `clean`) if free, else `wanted-2`,
    /// `wanted-3`, …, each at most `max` characters.
    pub fn take(&mut self, wanted: &str, max: usize) -> String {
        let base = fit(&clean(wanted, self.underscores), max);
        if self.taken.insert(base.clone()) {
            return base;
        }
        for n in 2u32.. {
            let suffix = format!("-{n}");
            let candidate = format!("{}{suffix}", trim_end(&fit(&base, max - suffix.len())));
            if self.taken.insert(candidate.clone()) {
                return candidate;
            }
        }
        unreachable!("some suffix is free")
    }
}

/// Keeps `[A-Za-z0-9-]` (and `_` when allowed), turns anything else into
/// `-` and starts with an alphanumeric character: Argo's rule for
/// parameter, template and task names (tasks also may not start with a
/// digit once they use `depends`, which callers handle).
fn clean(s: &str, underscores: bool) -> String {
    let mut out: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || (underscores && c == '_') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let start = out
        .find(|c: char| c.is_ascii_alphanumeric())
        .unwrap_or(out.len());
    out.drain(..start);
    if out.is_empty() {
        out.push('x');
    }
    out
}

/// At most `max` characters; a longer name keeps its head and gets a short
/// digest of the whole, so distinct long names stay distinct.
fn fit(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_owned();
    }
    let digest = &blake3::hash(s.as_bytes()).to_hex()[..8];
    let head = trim_end(&s[..max - digest.len() - 1]);
    format!("{head}-{digest}")
}

fn trim_end(s: &str) -> &str {
    s.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
}

/// A DNS-1123 label from `parts` joined by `-`: lowercase, `[a-z0-9-]`,
/// alphanumeric at both ends, at most `max` characters.
pub(super) fn dns_label(parts: &[&str], max: usize) -> String {
    let joined = parts.join("-").to_ascii_lowercase();
    let mut out = String::with_capacity(joined.len());
    for c in joined.chars() {
        let c = if c.is_ascii_lowercase() || c.is_ascii_digit() {
            c
        } else {
            '-'
        };
        if !(c == '-' && (out.is_empty() || out.ends_with('-'))) {
            out.push(c);
        }
    }
    let out = trim_end(&out).to_owned();
    let out = if out.is_empty() { "couler".into() } else { out };
    fit(&out, max)
}

/// A Kubernetes label value: at most 63 of `[A-Za-z0-9._-]`, alphanumeric
/// at both ends (the raw value goes into an annotation beside it).
pub(super) fn label_value(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = mapped.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if trimmed.len() <= MAX_NAME {
        return trimmed.to_owned();
    }
    fit(trimmed, MAX_NAME)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn taken_names_get_suffixes_within_the_limit() {
        let mut names = Names::parameters();
        assert!(names.reserve("main"));
        assert_eq!(names.take("main", 63), "main-2");
        assert_eq!(names.take("main", 63), "main-3");
        let long = "a".repeat(70);
        let first = names.take(&long, 63);
        let second = names.take(&long, 63);
        assert_eq!(first.len(), 63);
        assert!(second.len() <= 63 && second != first, "{second}");
        assert_eq!(names.take("steps.a b", 63), "steps-a-b");
        assert_eq!(names.take("_x", 63), "x");
        assert_eq!(names.take("a_b", 63), "a_b");
        assert_eq!(Names::objects().take("a_b", 63), "a-b");
    }

    #[test]
    fn dns_labels_and_label_values() {
        assert_eq!(
            dns_label(&["market-trend", "run_01HX", "1"], 63),
            "market-trend-run-01hx-1"
        );
        let long = dns_label(&[&"w".repeat(60), "run_1"], 52);
        assert_eq!(long.len(), 52);
        assert!(couler_ir::names::is_dns_label(&long));
        assert_eq!(label_value("tnt_Acme Corp!"), "tnt_Acme-Corp");
        assert_eq!(label_value("__"), "");
        let v = label_value(&"x".repeat(80));
        assert!(couler_ir::names::is_label_value(&v) && v.len() == 63);
    }
}
