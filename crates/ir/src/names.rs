//! Naming rules, chosen so that every engine accepts our names unchanged:
//! Kubernetes (Argo, Tekton, KFP) wants DNS-1123 labels, Airflow task ids
//! accept a superset.

/// [`is_dns_label`] as a JSON Schema pattern, for the IR's schema.
pub const DNS_LABEL_PATTERN: &str = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";

/// DNS-1123 label: `[a-z0-9]([-a-z0-9]*[a-z0-9])?`, at most 63 characters.
pub fn is_dns_label(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && b.iter()
            .all(|&c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// DNS-1123 subdomain (Kubernetes object names such as secrets).
pub fn is_dns_subdomain(s: &str) -> bool {
    s.len() <= 253 && s.split('.').all(is_dns_label)
}

/// Parameter and output names: `[A-Za-z_][A-Za-z0-9_-]*`, at most 63
/// characters (Tekton params and results, KFP inputs, Python kwargs once
/// `-` is mapped).
pub fn is_identifier(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= 63
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
}

/// Environment variable names: C identifiers.
pub fn is_env_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && (b[0].is_ascii_alphabetic() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || c == b'_')
}

/// Kubernetes label value (also the name part of a key): at most 63
/// characters of `[A-Za-z0-9._-]`, starting and ending alphanumeric; may be empty.
pub fn is_label_value(s: &str) -> bool {
    let b = s.as_bytes();
    b.is_empty()
        || (b.len() <= 63
            && b.iter()
                .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
            && b[0].is_ascii_alphanumeric()
            && b[b.len() - 1].is_ascii_alphanumeric())
}

/// [`is_label_value`] as a pattern.
pub const LABEL_VALUE_PATTERN: &str = "^([A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?)?$";

/// [`is_label_key`] as a pattern (the lookahead bounds the prefix at 253).
pub const LABEL_KEY_PATTERN: &str = "^((?=[^/]{1,253}/)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*/)?[A-Za-z0-9]([-_.A-Za-z0-9]{0,61}[A-Za-z0-9])?$";

/// Kubernetes label key: optional `prefix/` (a DNS subdomain) and a name.
pub fn is_label_key(s: &str) -> bool {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    !name.is_empty() && is_label_value(name) && prefix.is_none_or(is_dns_subdomain)
}

/// Secret keys: `[-._a-zA-Z0-9]+`.
pub fn is_secret_key(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dns_labels() {
        assert!(is_dns_label("train-model-2"));
        for bad in ["", "-a", "a-", "Train", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad}");
        }
    }

    #[test]
    fn label_keys() {
        assert!(is_label_key("team"));
        assert!(is_label_key("couler.dev/tenant"));
        assert!(!is_label_key("/x"));
        assert!(!is_label_key("Bad Key"));
    }

    #[test]
    fn identifiers() {
        assert!(is_identifier("learning_rate"));
        assert!(is_identifier("batch-size"));
        assert!(!is_identifier("1st"));
        assert!(!is_identifier("a.b"));
    }
}
