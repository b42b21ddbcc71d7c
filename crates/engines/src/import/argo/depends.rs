//! Argo's task dependencies as IR `depends` entries: a dag task's
//! `dependencies` and enhanced `depends` expression, and the order of a
//! steps template's groups.
//!
//! Argo's results map onto the outcomes of an IR step `a` (imported from
//! task `A`), where `E_A` is the AND of `a`'s own entries:
//!
//! | Argo | IR |
//! |---|---|
//! | `A` (`A.Succeeded \|\| A.Skipped \|\| A.Daemoned`), a `dependencies` item, the step group before | `a`, or `a \|\| a.skipped && E_A` when `a` can be skipped by its `when` or an empty `withParam` |
//! | `A.Succeeded` | `a.succeeded` |
//! | `A.Failed`, `A.Errored` | `a.failed` (Couler does not tell errors from failures) |
//! | `A.Skipped` (its `when` was false) | `a.skipped && E_A` |
//! | `A.Omitted` (its `depends` was false) | `a.skipped && !E_A`; `!a.any` when `a` has no entries |
//! | `A.Daemoned`; `A.AnySucceeded`, `A.AllFailed` of a task that does not loop | `!a.any` |
//!
//! `!a.any` is false once `a` has ended, which is when the entry is
//! judged: it keeps the wait for `a` (and Argo's rule for the run's
//! outcome, which follows the steps an entry names) where a constant
//! would drop it. A bare name of a nested template is the bare rule for
//! each of its last steps; of a task left out, what that task waited for.
//! Any other result of those, and `AnySucceeded`/`AllFailed` of a loop,
//! have no IR form: the task is left out.
//!
//! `E_A` is written out in full, so it grows along chains of steps that
//! can be skipped; past [`MAX_NESTING`] levels or [`MAX_TEXT`] characters
//! it is left out (reported): a skip of `a` then counts as by its `when`.

use super::vars::Node;
use super::{Importer, Ptr};
use couler_ir::depends::{Expr, Outcome};
use couler_ir::{Condition, MapOver, Step};
use std::collections::HashMap;

/// Nesting of `E_A` beyond which it is not repeated (IR entries allow 64).
const MAX_NESTING: usize = 16;
/// Length of `E_A`'s text beyond which it is not repeated.
const MAX_TEXT: usize = 1024;

/// A task result an Argo `depends` operand asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TaskResult {
    Succeeded,
    Failed,
    Errored,
    Skipped,
    Omitted,
    Daemoned,
    AnySucceeded,
    AllFailed,
}

impl TaskResult {
    const ALL: [(&'static str, TaskResult); 8] = [
        ("Succeeded", TaskResult::Succeeded),
        ("Failed", TaskResult::Failed),
        ("Errored", TaskResult::Errored),
        ("Skipped", TaskResult::Skipped),
        ("Omitted", TaskResult::Omitted),
        ("Daemoned", TaskResult::Daemoned),
        ("AnySucceeded", TaskResult::AnySucceeded),
        ("AllFailed", TaskResult::AllFailed),
    ];

    fn parse(word: &str) -> Option<TaskResult> {
        Self::ALL.iter().find(|(w, _)| *w == word).map(|(_, r)| *r)
    }

    fn as_str(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, r)| *r == self)
            .map_or("?", |(w, _)| w)
    }
}

/// An Argo `depends` expression (or one `dependencies` item, bare).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Argo {
    /// A task and the result asked of it; `None` is a bare name.
    Ref(String, Option<TaskResult>),
    Not(Box<Argo>),
    And(Vec<Argo>),
    Or(Vec<Argo>),
}

impl Argo {
    /// Every task named, in order, repeats included.
    pub fn names(&self) -> Vec<&str> {
        match self {
            Argo::Ref(n, _) => vec![n.as_str()],
            Argo::Not(e) => e.names(),
            Argo::And(es) | Argo::Or(es) => es.iter().flat_map(Argo::names).collect(),
        }
    }

    /// Whether it only names tasks bare, joined by `&&` (as `dependencies`).
    pub fn is_bare(&self) -> bool {
        match self {
            Argo::Ref(_, None) => true,
            Argo::And(es) => es.iter().all(Argo::is_bare),
            _ => false,
        }
    }

    /// A task whose `Errored` is asked for other than beside its `Failed`
    /// in one `||`, where reading it as `failed` changes what runs.
    fn errored_alone(&self) -> Option<&str> {
        match self {
            Argo::Ref(n, Some(TaskResult::Errored)) => Some(n),
            Argo::Ref(..) => None,
            Argo::Not(e) => e.errored_alone(),
            Argo::And(es) => es.iter().find_map(Argo::errored_alone),
            Argo::Or(es) => es.iter().find_map(|e| match e {
                Argo::Ref(n, Some(TaskResult::Errored)) => {
                    let beside = es
                        .iter()
                        .any(|o| matches!(o, Argo::Ref(m, Some(TaskResult::Failed)) if m == n));
                    (!beside).then_some(n.as_str())
                }
                other => other.errored_alone(),
            }),
        }
    }
}

/// Parses an Argo `depends` expression: `TASK`, `TASK.Result`, `!`, `&&`,
/// `||`, parentheses.
pub(super) fn parse(text: &str) -> Result<Argo, String> {
    let mut p = Parser { text, at: 0 };
    let e = p.or(0)?;
    p.space();
    if p.at < text.len() {
        return Err(format!("unexpected {:?}", &text[p.at..]));
    }
    Ok(e)
}

struct Parser<'t> {
    text: &'t str,
    at: usize,
}

impl Parser<'_> {
    fn rest(&self) -> &str {
        &self.text[self.at..]
    }

    fn space(&mut self) {
        self.at = self.text.len() - self.rest().trim_start().len();
    }

    fn eat(&mut self, token: &str) -> bool {
        self.space();
        let found = self.rest().starts_with(token);
        if found {
            self.at += token.len();
        }
        found
    }

    fn or(&mut self, depth: usize) -> Result<Argo, String> {
        let mut operands = vec![self.and(depth)?];
        while self.eat("||") {
            operands.push(self.and(depth)?);
        }
        Ok(if operands.len() == 1 {
            operands.remove(0)
        } else {
            Argo::Or(operands)
        })
    }

    fn and(&mut self, depth: usize) -> Result<Argo, String> {
        let mut operands = vec![self.unary(depth)?];
        while self.eat("&&") {
            operands.push(self.unary(depth)?);
        }
        Ok(if operands.len() == 1 {
            operands.remove(0)
        } else {
            Argo::And(operands)
        })
    }

    fn unary(&mut self, depth: usize) -> Result<Argo, String> {
        if depth > 32 {
            return Err("nested too deeply".into());
        }
        if self.eat("!") {
            return Ok(Argo::Not(Box::new(self.unary(depth + 1)?)));
        }
        if self.eat("(") {
            let e = self.or(depth + 1)?;
            return match self.eat(")") {
                true => Ok(e),
                false => Err("a `(` is not closed".into()),
            };
        }
        self.space();
        let word = |s: &str, extra: &[u8]| {
            s.bytes()
                .take_while(|b| b.is_ascii_alphanumeric() || extra.contains(b))
                .count()
        };
        let len = word(self.rest(), b"-_");
        if len == 0 {
            return Err(match self.rest().chars().next() {
                Some(c) => format!("expected a task name, found {c:?}"),
                None => "expected a task name, found the end".into(),
            });
        }
        let name = self.rest()[..len].to_owned();
        self.at += len;
        if !self.rest().starts_with('.') {
            return Ok(Argo::Ref(name, None));
        }
        self.at += 1;
        let len = word(self.rest(), b"");
        let result = &self.rest()[..len];
        match TaskResult::parse(result) {
            Some(r) => {
                self.at += len;
                Ok(Argo::Ref(name, Some(r)))
            }
            None => Err(format!("{name}.{result}: not a task result")),
        }
    }
}

/// What the importer knows about an IR step it made, for the entries of
/// later steps that name it.
#[derive(Debug)]
pub(super) struct StepFacts {
    /// It can be skipped for a reason of its own: a `when`, or a
    /// `withParam` list that may be empty.
    skippable: bool,
    /// It fans out (`withItems`, `withSequence`, `withParam`).
    looping: bool,
    /// Its `depends` entries: `E_A`.
    entries: Vec<Expr<String>>,
}

impl StepFacts {
    fn new(when: &[Condition], map: Option<&MapOver>, entries: Vec<Expr<String>>) -> StepFacts {
        StepFacts {
            skippable: !when.is_empty() || map.is_some_and(|m| m.from.is_some()),
            looping: map.is_some(),
            entries,
        }
    }
}

/// Appends `e` unless it is there already.
fn push_new<T: PartialEq>(out: &mut Vec<T>, e: T) {
    if !out.contains(&e) {
        out.push(e);
    }
}

impl Importer<'_> {
    /// Remembers a new step for the entries of later steps.
    pub(super) fn record(&mut self, step: &Step) {
        let entries = (step.depends.iter())
            .filter_map(|d| couler_ir::depends::parse(d).ok())
            .collect();
        let facts = StepFacts::new(&step.when, step.map.as_ref(), entries);
        self.facts.insert(step.name.clone(), facts);
    }

    /// The `depends` of a new step: its entries as text, each once.
    pub(super) fn depends(&self, upstream: &[Expr<String>]) -> Vec<String> {
        let mut out = Vec::new();
        for e in upstream {
            push_new(&mut out, e.to_string());
        }
        out
    }

    /// What a later step requires of `node` where Argo names it bare or
    /// runs the next step group: that it succeeded or was skipped by its
    /// own `when`. Approximations are reported at `at`.
    pub(super) fn after(&mut self, node: &Node, at: &Ptr) -> Vec<Expr<String>> {
        match node {
            Node::Leaf { step, .. } => vec![self.bare(step, at)],
            Node::Composite { after, .. } => after.clone(),
            Node::Missing { upstream } => upstream.clone(),
        }
    }

    fn bare(&mut self, step: &str, at: &Ptr) -> Expr<String> {
        let me = Expr::Ref(step.to_owned(), None);
        match self.facts.get(step) {
            Some(f) if f.skippable => Expr::any(vec![me, self.skipped(step, at)]),
            _ => me,
        }
    }

    /// `E_A`: the AND of the step's entries; `None` when it has none, or
    /// (reported) when they are too large to repeat.
    fn own(&mut self, step: &str, at: &Ptr) -> Option<Expr<String>> {
        let entries = self.facts.get(step)?.entries.clone();
        if entries.is_empty() {
            return None;
        }
        let e = Expr::all(entries);
        if nesting(&e) > MAX_NESTING || e.to_string().len() > MAX_TEXT {
            self.report.push(
                at,
                "depends approximation",
                format!("what {step:?} requires is too large to repeat here: a skip of {step:?} counts as by its `when`, even where its own depends were false"),
            );
            return None;
        }
        Some(e)
    }

    /// `a.skipped && E_A`: skipped with its entries true, by its `when`.
    fn skipped(&mut self, step: &str, at: &Ptr) -> Expr<String> {
        let mut all = vec![Expr::Ref(step.to_owned(), Some(Outcome::Skipped))];
        all.extend(self.own(step, at));
        Expr::all(all)
    }

    /// `a.skipped && !E_A`: skipped because an entry was false; never
    /// (`!a.any`) for a step without entries.
    fn omitted(&mut self, step: &str, at: &Ptr) -> Expr<String> {
        match self.own(step, at) {
            Some(e) => Expr::all(vec![
                Expr::Ref(step.to_owned(), Some(Outcome::Skipped)),
                Expr::Not(Box::new(e)),
            ]),
            None => never(step),
        }
    }

    /// A task's entries (`dependencies` items and its `depends`) as IR
    /// entries over the IR steps of its siblings; `Err` says why they have
    /// no IR form. Notes that do not stop the import are reported at `at`.
    pub(super) fn entries(
        &mut self,
        argo: &[Argo],
        siblings: &HashMap<String, Node>,
        at: &Ptr,
    ) -> Result<Vec<Expr<String>>, String> {
        let mut out = Vec::new();
        for e in argo {
            if let Some(task) = e.errored_alone() {
                self.report.push(
                    at,
                    "depends Errored",
                    format!("Couler does not tell errors from failures: `{task}.Errored` is read as `{task}.Failed || {task}.Errored`"),
                );
            }
            for name in e.names() {
                if let Some(Node::Composite { handles: true, .. }) = siblings.get(name) {
                    self.report.push(
                        at,
                        "depends nested outcome",
                        format!("{name:?} runs a template whose tasks depend on other tasks' results: a last task of it that did not run counts as its failure, where Argo may count the template as succeeded"),
                    );
                }
            }
            if let Some(expr) = self.expr(e, siblings, at)? {
                push_new(&mut out, expr);
            }
        }
        Ok(out)
    }

    /// `None` when the expression asks nothing (a task left out that
    /// waited for nothing).
    fn expr(
        &mut self,
        e: &Argo,
        siblings: &HashMap<String, Node>,
        at: &Ptr,
    ) -> Result<Option<Expr<String>>, String> {
        Ok(match e {
            Argo::Ref(task, result) => self.reference(task, *result, siblings, at)?,
            Argo::Not(inner) => match self.expr(inner, siblings, at)? {
                Some(x) => Some(Expr::Not(Box::new(x))),
                None => return Err("a `!` negates a task left out that waited for nothing".into()),
            },
            Argo::And(es) => {
                let mut all = Vec::new();
                for x in es {
                    if let Some(x) = self.expr(x, siblings, at)? {
                        push_new(&mut all, x);
                    }
                }
                (!all.is_empty()).then(|| Expr::all(all))
            }
            Argo::Or(es) => {
                let mut any = Vec::new();
                for x in es {
                    match self.expr(x, siblings, at)? {
                        Some(x) => push_new(&mut any, x),
                        // One alternative asks nothing: neither does the `||`.
                        None => return Ok(None),
                    }
                }
                Some(Expr::any(any))
            }
        })
    }

    fn reference(
        &mut self,
        task: &str,
        result: Option<TaskResult>,
        siblings: &HashMap<String, Node>,
        at: &Ptr,
    ) -> Result<Option<Expr<String>>, String> {
        let step = match (siblings.get(task), result) {
            (None, _) => return Err(format!("no task named {task:?}")),
            (Some(node), None) => {
                let after = self.after(node, at);
                return Ok((!after.is_empty()).then(|| Expr::all(after)));
            }
            (Some(Node::Leaf { step, .. }), Some(_)) => step,
            (Some(Node::Composite { .. }), Some(r)) => {
                return Err(format!(
                    "`{task}.{}` asks for the result of a nested template",
                    r.as_str()
                ));
            }
            (Some(Node::Missing { .. }), Some(r)) => {
                return Err(format!(
                    "`{task}.{}` asks for the result of a task that is left out",
                    r.as_str()
                ));
            }
        };
        let looping = self.facts.get(step.as_str()).is_some_and(|f| f.looping);
        let step = step.clone();
        let of = |o| Expr::Ref(step.clone(), Some(o));
        Ok(Some(match result.expect("bare names returned above") {
            TaskResult::Succeeded => of(Outcome::Succeeded),
            TaskResult::Failed | TaskResult::Errored => of(Outcome::Failed),
            TaskResult::Skipped => self.skipped(&step, at),
            TaskResult::Omitted => self.omitted(&step, at),
            TaskResult::Daemoned => never(&step),
            r @ (TaskResult::AnySucceeded | TaskResult::AllFailed) if looping => {
                return Err(format!(
                    "`{task}.{}` asks about the loop's instances, which IR outcomes do not tell apart",
                    r.as_str()
                ));
            }
            TaskResult::AnySucceeded | TaskResult::AllFailed => never(&step),
        }))
    }
}

/// Levels of `!`, `&&` and `||` in `e`.
fn nesting(e: &Expr<String>) -> usize {
    match e {
        Expr::Ref(..) => 0,
        Expr::Not(x) => 1 + nesting(x),
        Expr::And(xs) | Expr::Or(xs) => 1 + xs.iter().map(nesting).max().unwrap_or(0),
    }
}

/// False once `step` has ended, which is when an entry naming it is judged.
fn never(step: &str) -> Expr<String> {
    Expr::Not(Box::new(Expr::Ref(step.to_owned(), Some(Outcome::Any))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(n: &str, res: Option<TaskResult>) -> Argo {
        Argo::Ref(n.into(), res)
    }

    #[test]
    fn parses_argo_expressions_with_precedence_and_dashes() {
        let e = parse("A && (C-1.Succeeded || C-1.Failed) || !B.Omitted").unwrap();
        assert_eq!(
            e,
            Argo::Or(vec![
                Argo::And(vec![
                    r("A", None),
                    Argo::Or(vec![
                        r("C-1", Some(TaskResult::Succeeded)),
                        r("C-1", Some(TaskResult::Failed)),
                    ]),
                ]),
                Argo::Not(Box::new(r("B", Some(TaskResult::Omitted)))),
            ])
        );
        assert_eq!(e.names(), ["A", "C-1", "C-1", "B"]);
        assert!(!e.is_bare());
        assert!(parse("A && B").unwrap().is_bare());
        assert!(parse("A.Done").unwrap_err().contains("not a task result"));
        assert!(parse("(A || B").unwrap_err().contains("not closed"));
        assert!(parse("A B").unwrap_err().contains("unexpected"));
    }

    #[test]
    fn errored_is_only_exact_beside_failed() {
        let beside = parse("A.Failed || A.Errored").unwrap();
        assert_eq!(beside.errored_alone(), None);
        let alone = parse("B && A.Errored").unwrap();
        assert_eq!(alone.errored_alone(), Some("A"));
        let other_task = parse("B.Failed || A.Errored").unwrap();
        assert_eq!(other_task.errored_alone(), Some("A"));
    }
}
