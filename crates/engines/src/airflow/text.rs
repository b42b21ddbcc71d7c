//! Quoting for the three languages a DAG file nests: Python string
//! literals, Jinja templates (Airflow renders templated fields) and POSIX
//! shell words (the step wrappers); plus label and id sanitizing.

use std::fmt::Write;

/// A Python string literal for `s`, double-quoted, with every character
/// that could end or bend the literal escaped.
pub fn py_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            // Line and paragraph separators are fine in Python literals,
            // but keep the file readable line by line.
            '\u{2028}' | '\u{2029}' | '\u{85}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A Python list of string literals.
pub fn py_list<S: AsRef<str>>(items: &[S]) -> String {
    let mut out = String::from("[");
    for (i, s) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        out.push_str(&py_str(s.as_ref()));
    }
    out.push(']');
    out
}

/// Literal text inside a Jinja template: unchanged unless it holds a `{`
/// (the only character that can open a Jinja tag), in which case it
/// becomes a Jinja string expression that renders back to the text.
pub fn jinja_text(text: &str, out: &mut String) {
    if !text.contains('{') {
        out.push_str(text);
        return;
    }
    out.push_str("{{ \"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '{' => out.push_str("\\x7b"),
            '}' => out.push_str("\\x7d"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push_str("\" }}");
}

/// `text` as a Jinja template rendering to itself.
pub fn jinja_literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    jinja_text(text, &mut out);
    out
}

/// A single-quoted POSIX shell word.
pub fn sh_word(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('\'');
    for c in s.chars() {
        if c == '\'' {
            out.push_str("'\\''");
        } else {
            out.push(c);
        }
    }
    out.push('\'');
    out
}

/// Standard base64 with padding.
pub fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for (i, shift) in [18, 12, 6, 0].into_iter().enumerate() {
            if i <= chunk.len() {
                out.push(ALPHABET[((n >> shift) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// A Kubernetes label value (also fine as a tag): at most 63 characters of
/// `[A-Za-z0-9._-]`, alphanumeric at both ends; other characters become `-`.
pub fn label_value(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .take(63)
        .collect();
    mapped
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

/// An Airflow id fragment: `[A-Za-z0-9_.-]`, other characters become `_`.
pub fn id_part(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A path component for secrets on the worker: no `/`, no `..`.
pub fn path_part(s: &str) -> String {
    let p = id_part(s);
    if p.chars().all(|c| c == '.') {
        p.replace('.', "_")
    } else {
        p
    }
}

/// Where the BashOperator finds key `key` of secret `name`: this path
/// under the run's `.secrets` directory, which the adapter writes.
pub fn secret_file(name: &str, key: &str) -> String {
    format!("{}/{}", path_part(name), path_part(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn python_literals_escape_quotes_and_controls() {
        assert_eq!(py_str(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(py_str("x\ny\0"), r#""x\ny\x00""#);
        assert_eq!(py_str("'''"), r#""'''""#);
    }

    #[test]
    fn jinja_text_hides_braces() {
        assert_eq!(jinja_literal("plain $x"), "plain $x");
        assert_eq!(
            jinja_literal("${#a} {{x}}"),
            r#"{{ "$\x7b#a\x7d \x7b\x7bx\x7d\x7d" }}"#
        );
    }

    #[test]
    fn labels_are_valid() {
        assert_eq!(label_value("tnt_ab/c"), "tnt_ab-c");
        assert_eq!(label_value("-x-"), "x");
        assert_eq!(label_value(&"a".repeat(80)).len(), 63);
    }
}
