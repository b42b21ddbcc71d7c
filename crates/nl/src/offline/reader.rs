//! A clause's tokens and which of them a reader has used: the readers of
//! conditions, fan-outs and dates mark what they took, and what no reader
//! took is reported as not understood.

use super::scan::Token;

/// The tokens of one clause and the ones already read.
pub(super) struct Reader<'a> {
    pub t: &'a [Token],
    pub used: Vec<bool>,
}

impl Reader<'_> {
    pub fn mark(&mut self, i: usize, n: usize) {
        for u in &mut self.used[i..(i + n).min(self.t.len())] {
            *u = true;
        }
    }
    pub fn is(&self, i: usize, words: &[&str]) -> bool {
        self.t.get(i).is_some_and(|t| words.iter().any(|w| t.is(w)))
    }
}
