//! A template's `memoize` as the step's `cache`: caching on, `maxAge` as
//! the entry's TTL. Couler reuses a result whose exact inputs were computed
//! before, so the user's `key` and the ConfigMap holding Argo's cache are
//! reported (informational: what runs does not change).

use super::vars::Vars;
use super::{Importer, Ptr, entries, scalar};
use couler_ir::scalar::Duration;
use couler_ir::{Cache, CachePolicy, CacheScope};
use serde_json::Value;

/// The longest TTL the IR accepts (see `couler_ir::validate`).
const MAX_TTL_SECS: u64 = 366 * 24 * 3600;

impl Importer<'_> {
    /// `memoize` of `tpl`, when it has one.
    pub(super) fn memoize(&mut self, tpl: &Value, tpl_at: &Ptr, vars: &Vars) -> Option<Cache> {
        let memoize = tpl.get("memoize")?;
        let at = tpl_at.key("memoize");
        let mut cache = Cache {
            policy: CachePolicy::Auto,
            scope: CacheScope::Shared,
            ttl: None,
            version: None,
        };
        let mut max_age = false;
        for (key, value, k_at) in entries(Some(memoize), &at) {
            match key {
                "key" => {
                    let key = scalar(value).unwrap_or_default();
                    self.report.push(
                        &k_at,
                        "memoize.key",
                        format!("informational: Couler reuses a result when the step's exact inputs (image, command, args, env, resolved inputs) were computed before, not by the key {key:?}"),
                    );
                }
                "maxAge" => {
                    max_age = true;
                    let text = self.text(&scalar(value).unwrap_or_default(), vars, &k_at).0;
                    match go_duration(&text) {
                        Some(None) => self.report.push(
                            &k_at,
                            "memoize.maxAge",
                            "informational: no maxAge; results are kept as long as the tenant's cache TTL",
                        ),
                        Some(Some(d)) if d.is_zero() => {
                            self.report.push(
                                &k_at,
                                "memoize.maxAge",
                                "a maxAge of 0 never reuses a result: caching is off",
                            );
                            cache.policy = CachePolicy::Off;
                        }
                        Some(Some(d)) if d.as_secs() > MAX_TTL_SECS => {
                            self.report.push(
                                &k_at,
                                "memoize.maxAge",
                                format!("{text:?} is longer than the IR allows (366 days); 366 days are used"),
                            );
                            cache.ttl = Some(Duration(std::time::Duration::from_secs(MAX_TTL_SECS)));
                        }
                        Some(Some(d)) => cache.ttl = Some(Duration(d)),
                        None => self.report.push(
                            &k_at,
                            "memoize.maxAge",
                            format!("{text:?} is not a Go duration; results are kept as long as the tenant's cache TTL"),
                        ),
                    }
                }
                "cache" => {
                    let name = value
                        .get("configMap")
                        .and_then(|c| c.get("name"))
                        .and_then(scalar)
                        .unwrap_or_default();
                    self.report.push(
                        &k_at,
                        "memoize.cache",
                        format!("informational: Couler keeps results in its own cache index, not in the ConfigMap {name:?}"),
                    );
                }
                other => {
                    self.report
                        .push(&k_at, format!("memoize.{other}"), "has no IR equivalent")
                }
            }
        }
        if !max_age {
            self.report.push(
                &at,
                "memoize.maxAge",
                "informational: no maxAge; results are kept as long as the tenant's cache TTL",
            );
        }
        Some(cache)
    }
}

/// A Go `time.ParseDuration` text (`"1h"`, `"1h30m"`, `"1.5h"`, `"300ms"`);
/// `Some(None)` for the empty text (no limit), `None` when it is not one.
pub(super) fn go_duration(text: &str) -> Option<Option<std::time::Duration>> {
    let text = text.trim();
    if text.is_empty() {
        return Some(None);
    }
    if text == "0" {
        return Some(Some(std::time::Duration::ZERO));
    }
    let mut rest = text.strip_prefix('+').unwrap_or(text);
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number: f64 = rest[..number_len].parse().ok()?;
        rest = &rest[number_len..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let scale = match &rest[..unit_len] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[unit_len..];
        nanos += number * scale;
    }
    nanos
        .is_finite()
        .then(|| Some(std::time::Duration::from_nanos(nanos.round() as u64)))
}

#[cfg(test)]
mod tests {
    use super::go_duration;
    use std::time::Duration;

    #[test]
    fn go_durations() {
        assert_eq!(go_duration(""), Some(None));
        assert_eq!(go_duration("60s"), Some(Some(Duration::from_secs(60))));
        assert_eq!(go_duration("1h30m"), Some(Some(Duration::from_secs(5400))));
        assert_eq!(go_duration("1.5h"), Some(Some(Duration::from_secs(5400))));
        assert_eq!(go_duration("300ms"), Some(Some(Duration::from_millis(300))));
        assert_eq!(go_duration("0"), Some(Some(Duration::ZERO)));
        assert_eq!(go_duration("10"), None);
        assert_eq!(go_duration("1d"), None);
        assert_eq!(go_duration("soon"), None);
    }
}
