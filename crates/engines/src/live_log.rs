//! Reading a running step's log as it grows: a [`LogCursor`] remembers
//! what a reader took, so each read returns only what is new and the text
//! read so far only ever grows (see [`crate::EngineAdapter::logs_since`]).

/// Where a reader of one step attempt's live log stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogCursor {
    /// The step attempt read (`StepState::attempt`), for engines that keep
    /// attempts apart; 0: the latest.
    pub attempt: u32,
    /// Byte positions already taken, as the engine defines them (the
    /// default implementation: one, into [`crate::EngineAdapter::logs`];
    /// the local engine: into the try's stdout and stderr files).
    pub positions: Vec<u64>,
    /// A digest of the text taken, so that a log rewritten rather than
    /// extended is noticed (default implementation).
    pub(crate) digest: Option<[u8; 32]>,
}

impl LogCursor {
    /// Nothing taken yet of step attempt `attempt`.
    pub fn new(attempt: u32) -> LogCursor {
        LogCursor {
            attempt,
            positions: Vec::new(),
            digest: None,
        }
    }

    /// The default implementation: what of `full` (a whole log so far) is
    /// new since the cursor — its suffix when it extends the text taken,
    /// nothing otherwise (a log that was rewritten is not repeated).
    pub fn take_suffix(&mut self, full: &str) -> String {
        let taken = self.positions.first().copied().unwrap_or(0) as usize;
        let extends = full.len() > taken
            && full.is_char_boundary(taken)
            && self
                .digest
                .is_none_or(|d| d == *blake3::hash(&full.as_bytes()[..taken]).as_bytes());
        if !extends {
            return String::new();
        }
        self.positions = vec![full.len() as u64];
        self.digest = Some(*blake3::hash(full.as_bytes()).as_bytes());
        full[taken..].to_owned()
    }
}

/// The longest text `bytes` begins with, and how many bytes it took:
/// invalid sequences become U+FFFD, and a character cut at the end is left
/// for the next read.
pub(crate) fn decode_prefix(bytes: &[u8]) -> (String, usize) {
    let mut text = String::new();
    let mut rest = bytes;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => {
                text.push_str(valid);
                return (text, bytes.len());
            }
            Err(e) => {
                let (valid, after) = rest.split_at(e.valid_up_to());
                text.push_str(std::str::from_utf8(valid).unwrap_or_default());
                match e.error_len() {
                    None => return (text, bytes.len() - after.len()),
                    Some(n) => {
                        text.push(char::REPLACEMENT_CHARACTER);
                        rest = &after[n..];
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cursor_takes_only_extensions() {
        let mut c = LogCursor::new(1);
        assert_eq!(c.take_suffix(""), "");
        assert_eq!(c.take_suffix("one\n"), "one\n");
        assert_eq!(c.take_suffix("one\n"), "");
        assert_eq!(c.take_suffix("one\ntwo\n"), "two\n");
        // Rewritten (e.g. stderr placed after stdout): nothing is repeated.
        assert_eq!(c.take_suffix("ONE\ntwo\nthree\n"), "");
        assert_eq!(c.take_suffix("one\ntwo\nthree\n"), "three\n");
        // Shorter: nothing.
        assert_eq!(c.take_suffix("one\n"), "");
    }

    #[test]
    fn decoding_keeps_a_cut_character_for_later() {
        let e = "é".as_bytes();
        assert_eq!(decode_prefix(b"ab"), ("ab".to_owned(), 2));
        assert_eq!(decode_prefix(&[b'a', e[0]]), ("a".to_owned(), 1));
        assert_eq!(
            decode_prefix(&[b'a', 0xff, b'b']),
            ("a\u{fffd}b".to_owned(), 3)
        );
    }
}
