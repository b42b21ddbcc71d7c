//! `depends` entries: their grammar, the one parser every user of the IR
//! shares (validation, the scheduler, the compilers, the importer), the
//! typed expression it yields, and how an expression is judged once the
//! steps it names have ended.
//!
//! ```text
//! expr  := and ('||' and)*
//! and   := unary ('&&' unary)*
//! unary := '!' unary | '(' expr ')' | NAME ('.' OUTCOME)?
//! OUTCOME := succeeded | failed | skipped | any
//! ```
//!
//! A bare `NAME` asks that the step succeeded (a cache hit counts), which is
//! what a plain dependency has always meant: a skipped upstream step skips
//! the step, a failed one fails the run.

use std::fmt;

mod requirements;

pub use requirements::{Requirement, Requirements, State, run_failure};

/// How a step ended, as `depends` sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Ended {
    /// Succeeded, or reused from the cache.
    Succeeded,
    Failed,
    /// Skipped: its `when` did not hold, a `depends` entry was false, or
    /// an upstream step it needed was skipped.
    Skipped,
}

impl Ended {
    pub fn as_str(self) -> &'static str {
        match self {
            Ended::Succeeded => "succeeded",
            Ended::Failed => "failed",
            Ended::Skipped => "skipped",
        }
    }
}

/// The outcome an entry asks of a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Outcome {
    Succeeded,
    Failed,
    Skipped,
    /// Ended, whatever the outcome.
    Any,
}

impl Outcome {
    pub const ALL: [Outcome; 4] = [
        Outcome::Succeeded,
        Outcome::Failed,
        Outcome::Skipped,
        Outcome::Any,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::Skipped => "skipped",
            Outcome::Any => "any",
        }
    }

    pub fn parse(s: &str) -> Option<Outcome> {
        Outcome::ALL.into_iter().find(|o| o.as_str() == s)
    }

    /// Whether a step that ended so has this outcome.
    pub fn holds(self, ended: Ended) -> bool {
        match self {
            Outcome::Succeeded => ended == Ended::Succeeded,
            Outcome::Failed => ended == Ended::Failed,
            Outcome::Skipped => ended == Ended::Skipped,
            Outcome::Any => true,
        }
    }
}

/// A parsed `depends` entry over step names (`Expr<String>`) or, once
/// resolved by validation, over step indexes in their graph (`Expr<u32>`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr<N = String> {
    /// A step and the outcome asked of it; `None` is a bare name, which
    /// asks that it succeeded.
    Ref(N, Option<Outcome>),
    Not(Box<Expr<N>>),
    /// Two or more operands.
    And(Vec<Expr<N>>),
    /// Two or more operands.
    Or(Vec<Expr<N>>),
}

impl<N> Expr<N> {
    /// Every name the expression mentions, in order, repeats included.
    pub fn names(&self) -> Vec<&N> {
        let mut out = Vec::new();
        self.visit(&mut |n, _| out.push(n));
        out
    }

    /// Every reference, in order: the name and the outcome asked of it.
    pub fn refs(&self) -> Vec<(&N, Option<Outcome>)> {
        let mut out = Vec::new();
        self.visit(&mut |n, o| out.push((n, o)));
        out
    }

    fn visit<'a>(&'a self, f: &mut impl FnMut(&'a N, Option<Outcome>)) {
        match self {
            Expr::Ref(n, o) => f(n, *o),
            Expr::Not(e) => e.visit(f),
            Expr::And(es) | Expr::Or(es) => es.iter().for_each(|e| e.visit(f)),
        }
    }

    /// The bare name when the expression is nothing else; a plain
    /// dependency as the IR has always had it.
    pub fn as_bare(&self) -> Option<&N> {
        match self {
            Expr::Ref(n, None) => Some(n),
            _ => None,
        }
    }

    /// Whether the expression only asks that steps succeeded: bare names
    /// and `.succeeded` joined by `&&`.
    pub fn is_conjunction_of_successes(&self) -> bool {
        match self {
            Expr::Ref(_, None | Some(Outcome::Succeeded)) => true,
            Expr::And(es) => es.iter().all(Expr::is_conjunction_of_successes),
            _ => false,
        }
    }

    /// The same expression over other names.
    pub fn map<M>(&self, f: &mut impl FnMut(&N) -> M) -> Expr<M> {
        match self {
            Expr::Ref(n, o) => Expr::Ref(f(n), *o),
            Expr::Not(e) => Expr::Not(Box::new(e.map(f))),
            Expr::And(es) => Expr::And(es.iter().map(|e| e.map(f)).collect()),
            Expr::Or(es) => Expr::Or(es.iter().map(|e| e.map(f)).collect()),
        }
    }

    /// Replaces each reference by an expression (e.g. a group by its
    /// members); nested `&&` and `||` are flattened.
    pub fn expand<M>(&self, f: &mut impl FnMut(&N, Option<Outcome>) -> Expr<M>) -> Expr<M> {
        match self {
            Expr::Ref(n, o) => f(n, *o),
            Expr::Not(e) => Expr::Not(Box::new(e.expand(f))),
            Expr::And(es) => Expr::all(es.iter().map(|e| e.expand(f)).collect()),
            Expr::Or(es) => Expr::any(es.iter().map(|e| e.expand(f)).collect()),
        }
    }

    /// `a && b && …`, flattened; one operand stands alone.
    pub fn all(operands: Vec<Expr<N>>) -> Expr<N> {
        Self::join(operands, true)
    }

    /// `a || b || …`, flattened; one operand stands alone.
    pub fn any(operands: Vec<Expr<N>>) -> Expr<N> {
        Self::join(operands, false)
    }

    fn join(operands: Vec<Expr<N>>, and: bool) -> Expr<N> {
        let mut flat = Vec::with_capacity(operands.len());
        for e in operands {
            match (e, and) {
                (Expr::And(inner), true) | (Expr::Or(inner), false) => flat.extend(inner),
                (e, _) => flat.push(e),
            }
        }
        if flat.len() == 1 {
            return flat.pop().expect("one operand");
        }
        if and { Expr::And(flat) } else { Expr::Or(flat) }
    }

    /// Judges the expression with what is known so far (`None`: the step
    /// has not ended): `Some` once the known outcomes decide it, whatever
    /// the unknown ones turn out to be (Kleene's three-valued logic).
    pub fn judge(&self, ended: &impl Fn(&N) -> Option<Ended>) -> Option<bool> {
        match self {
            Expr::Ref(n, o) => {
                let e = ended(n)?;
                Some(o.unwrap_or(Outcome::Succeeded).holds(e))
            }
            Expr::Not(e) => e.judge(ended).map(|v| !v),
            Expr::And(es) => {
                let mut unknown = false;
                for e in es {
                    match e.judge(ended) {
                        Some(false) => return Some(false),
                        None => unknown = true,
                        Some(true) => {}
                    }
                }
                (!unknown).then_some(true)
            }
            Expr::Or(es) => {
                let mut unknown = false;
                for e in es {
                    match e.judge(ended) {
                        Some(true) => return Some(true),
                        None => unknown = true,
                        Some(false) => {}
                    }
                }
                (!unknown).then_some(false)
            }
        }
    }
}

impl<N: Clone> Expr<N> {
    /// The expression with what is known already written in: `Err` with
    /// its value when that decides it, else what is left to judge (for
    /// compilers, where reused steps' outcomes are known in advance).
    pub fn fold(&self, ended: &impl Fn(&N) -> Option<Ended>) -> Result<Expr<N>, bool> {
        match self {
            Expr::Ref(n, o) => match ended(n) {
                Some(e) => Err(o.unwrap_or(Outcome::Succeeded).holds(e)),
                None => Ok(self.clone()),
            },
            Expr::Not(e) => match e.fold(ended) {
                Ok(rest) => Ok(Expr::Not(Box::new(rest))),
                Err(v) => Err(!v),
            },
            Expr::And(es) | Expr::Or(es) => {
                let and = matches!(self, Expr::And(_));
                let mut rest = Vec::new();
                for e in es {
                    match e.fold(ended) {
                        Ok(r) => rest.push(r),
                        // `false` decides `&&`, `true` decides `||`.
                        Err(v) if v != and => return Err(v),
                        Err(_) => {}
                    }
                }
                if rest.is_empty() {
                    Err(and)
                } else if and {
                    Ok(Expr::all(rest))
                } else {
                    Ok(Expr::any(rest))
                }
            }
        }
    }
}

impl<N: fmt::Display> fmt::Display for Expr<N> {
    /// The canonical text: `&&` and `||` with one space around them,
    /// parentheses only where they are needed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn operand<N: fmt::Display>(
            f: &mut fmt::Formatter<'_>,
            e: &Expr<N>,
            parens: bool,
        ) -> fmt::Result {
            if parens {
                write!(f, "({e})")
            } else {
                write!(f, "{e}")
            }
        }
        match self {
            Expr::Ref(n, None) => write!(f, "{n}"),
            Expr::Ref(n, Some(o)) => write!(f, "{n}.{}", o.as_str()),
            Expr::Not(e) => {
                f.write_str("!")?;
                operand(f, e, matches!(**e, Expr::And(_) | Expr::Or(_)))
            }
            Expr::And(es) => {
                for (i, e) in es.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" && ")?;
                    }
                    operand(f, e, matches!(e, Expr::Or(_) | Expr::And(_)))?;
                }
                Ok(())
            }
            Expr::Or(es) => {
                for (i, e) in es.iter().enumerate() {
                    if i > 0 {
                        f.write_str(" || ")?;
                    }
                    operand(f, e, matches!(e, Expr::Or(_)))?;
                }
                Ok(())
            }
        }
    }
}

/// Why an entry does not parse; `position` is a byte offset into it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} at position {position}")]
pub struct SyntaxError {
    pub position: usize,
    pub message: String,
}

/// Entries deeper than this are refused rather than risking the stack.
const MAX_DEPTH: usize = 64;

/// Parses one `depends` entry.
pub fn parse(text: &str) -> Result<Expr<String>, SyntaxError> {
    let mut p = Parser {
        text,
        at: 0,
        depth: 0,
    };
    p.space();
    if p.at == text.len() {
        return Err(p.error("empty entry: expected a step name"));
    }
    let e = p.or()?;
    p.space();
    if p.at < text.len() {
        return Err(p.error(match p.rest().chars().next() {
            Some(')') => "unmatched `)`".to_owned(),
            Some(c) => format!("unexpected {c:?}: expected `&&`, `||` or the end"),
            None => unreachable!("not at the end"),
        }));
    }
    Ok(e)
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
    depth: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn error(&self, message: impl Into<String>) -> SyntaxError {
        SyntaxError {
            position: self.at,
            message: message.into(),
        }
    }

    fn space(&mut self) {
        let trimmed = self.rest().trim_start();
        self.at = self.text.len() - trimmed.len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.space();
        if self.rest().starts_with(token) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Result<Expr<String>, SyntaxError> {
        let mut operands = vec![self.and()?];
        while self.eat("||") {
            operands.push(self.and()?);
        }
        Ok(Expr::any(operands))
    }

    fn and(&mut self) -> Result<Expr<String>, SyntaxError> {
        let mut operands = vec![self.unary()?];
        while self.eat("&&") {
            operands.push(self.unary()?);
        }
        Ok(Expr::all(operands))
    }

    fn unary(&mut self) -> Result<Expr<String>, SyntaxError> {
        self.space();
        if self.depth >= MAX_DEPTH {
            return Err(self.error(format!("nested more than {MAX_DEPTH} levels deep")));
        }
        if self.eat("!") {
            self.depth += 1;
            let e = self.unary()?;
            self.depth -= 1;
            return Ok(Expr::Not(Box::new(e)));
        }
        if self.eat("(") {
            let open = self.at - 1;
            self.depth += 1;
            let e = self.or()?;
            self.depth -= 1;
            if !self.eat(")") {
                self.space();
                return Err(SyntaxError {
                    position: self.at,
                    message: format!("`(` at position {open} is not closed"),
                });
            }
            return Ok(e);
        }
        self.reference()
    }

    fn reference(&mut self) -> Result<Expr<String>, SyntaxError> {
        let name_len = self
            .rest()
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'_')
            .count();
        if name_len == 0 {
            return Err(self.error(match self.rest().chars().next() {
                None => "expected a step name, found the end".to_owned(),
                Some(c) => format!("expected a step name, found {c:?}"),
            }));
        }
        let name = self.rest()[..name_len].to_owned();
        self.at += name_len;
        if !self.rest().starts_with('.') {
            return Ok(Expr::Ref(name, None));
        }
        self.at += 1;
        let word_len = self
            .rest()
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
            .count();
        let word = &self.rest()[..word_len];
        match Outcome::parse(word) {
            Some(o) => {
                self.at += word_len;
                Ok(Expr::Ref(name, Some(o)))
            }
            None => Err(self.error(format!(
                "{word:?} is not an outcome; use one of succeeded, failed, skipped, any"
            ))),
        }
    }
}

#[cfg(test)]
mod tests;
