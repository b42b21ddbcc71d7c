//! How one string is written: plain when no YAML 1.1 or 1.2 reader could
//! take it for anything else, single-quoted otherwise, double-quoted with
//! escapes when it holds control characters, and as a literal block (`|`)
//! when it is multi-line text a block keeps exactly.

use super::indent;
use std::fmt::Write;

pub(super) fn write_key(out: &mut String, key: &str) {
    if is_plain(key) {
        out.push_str(key);
    } else if any_needs_escape(key) || key.contains('\n') {
        double_quoted(out, key);
    } else {
        single_quoted(out, key);
    }
}

/// Quotes the key written as it is from `start` to the end of `out`, if it
/// must be (see [`write_key`]).
pub(super) fn quote_key_written(out: &mut String, start: usize) {
    if !is_plain(&out[start..]) {
        let key = out.split_off(start);
        write_key(out, &key);
    }
}

/// Characters only a double-quoted scalar can hold as they are (YAML 1.1
/// also breaks lines at U+2028 and U+2029).
fn needs_escape(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}')
}

/// Whether any character of `s` [needs an escape](needs_escape); ASCII
/// text is checked byte by byte.
fn any_needs_escape(s: &str) -> bool {
    if s.is_ascii() {
        s.bytes().any(|b| b < 0x20 || b == 0x7f)
    } else {
        s.chars().any(needs_escape)
    }
}

fn single_quoted(out: &mut String, s: &str) {
    out.push('\'');
    if !s.contains('\'') {
        out.push_str(s);
        out.push('\'');
        return;
    }
    for (i, part) in s.split('\'').enumerate() {
        if i > 0 {
            out.push_str("''");
        }
        out.push_str(part);
    }
    out.push('\'');
}

/// A string scalar; `block_indent` is where a literal block's lines go.
pub(super) fn write_string(out: &mut String, s: &str, block_indent: usize) {
    if is_plain(s) {
        out.push_str(s);
    } else if s.contains('\n') && literal_ok(s) {
        literal(out, s, block_indent);
    } else if !any_needs_escape(s) {
        single_quoted(out, s);
    } else {
        double_quoted(out, s);
    }
}

fn double_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if needs_escape(c) => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Multi-line text a literal block keeps exactly: no control characters
/// but newlines and tabs, and no carriage returns or line-ending spaces
/// that some readers trim.
fn literal_ok(s: &str) -> bool {
    let mut previous = b'\n';
    for &b in s.as_bytes() {
        let control = (b < 0x20 && b != b'\n' && b != b'\t') || b == 0x7f;
        if control || (b == b'\n' && previous == b' ') {
            return false;
        }
        previous = b;
    }
    previous != b' '
        && (s.is_ascii() || !s.chars().any(|c| c != '\n' && c != '\t' && needs_escape(c)))
}

fn literal(out: &mut String, s: &str, block_indent: usize) {
    out.push('|');
    // The first line with text fixes the indentation unless told.
    let first = s.lines().find(|l| !l.is_empty()).unwrap_or_default();
    if first.starts_with(' ') || first.starts_with('\t') {
        out.push('2');
    }
    let body = s.trim_end_matches('\n');
    let trailing = s.len() - body.len();
    match trailing {
        0 => out.push('-'),
        1 => {}
        _ => out.push('+'),
    }
    for line in body.split('\n') {
        out.push('\n');
        if !line.is_empty() {
            indent(out, block_indent.max(2));
            out.push_str(line);
        }
    }
    for _ in 1..trailing {
        out.push('\n');
    }
}

/// Whether a string can be written plain and read back as the same string
/// by YAML 1.1 and 1.2 readers alike.
fn is_plain(s: &str) -> bool {
    let bytes = s.as_bytes();
    let Some(&first) = bytes.first() else {
        return false;
    };
    let last = bytes[bytes.len() - 1];
    if first == b' ' || last == b' ' || last == b':' {
        return false;
    }
    // Indicators, and what could start a number (`.5`, `-1`, `+1`, `0x1`).
    if matches!(
        first,
        b'-' | b'?'
            | b':'
            | b','
            | b'['
            | b']'
            | b'{'
            | b'}'
            | b'#'
            | b'&'
            | b'*'
            | b'!'
            | b'|'
            | b'>'
            | b'\''
            | b'"'
            | b'%'
            | b'@'
            | b'`'
            | b'.'
            | b'+'
            | b'0'..=b'9'
    ) {
        return false;
    }
    let mut ascii = true;
    for (i, &b) in bytes.iter().enumerate() {
        if !NOTABLE[b as usize] {
            continue;
        }
        match b {
            // Flow indicators are harmless in block context, but some
            // readers choke on them; control characters need escapes.
            0..=0x1f | 0x7f | b'{' | b'}' | b'[' | b']' | b',' => return false,
            b'#' if bytes[i - 1] == b' ' => return false,
            b':' if bytes.get(i + 1).is_none_or(|n| *n == b' ') => return false,
            0x80.. => ascii = false,
            _ => {}
        }
    }
    if !ascii && s.chars().any(needs_escape) {
        return false;
    }
    !is_special_word(s)
}

/// Bytes that may keep a string from being plain (control characters and
/// indicators) or start a non-ASCII character; [`is_plain`] skips the
/// others with one lookup.
const NOTABLE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 256 {
        table[b] = b < 0x20
            || b >= 0x7f
            || matches!(b as u8, b'#' | b':' | b'{' | b'}' | b'[' | b']' | b',');
        b += 1;
    }
    table
};

/// Words YAML 1.1 or 1.2 reads as booleans or null.
fn is_special_word(s: &str) -> bool {
    const WORDS: [&str; 12] = [
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~", "=", "<<",
    ];
    let Some(first) = s.bytes().next() else {
        return false;
    };
    s.len() <= 5
        && matches!(
            first.to_ascii_lowercase(),
            b'y' | b'n' | b'o' | b't' | b'f' | b'~' | b'=' | b'<'
        )
        && WORDS.iter().any(|w| w.eq_ignore_ascii_case(s))
}
