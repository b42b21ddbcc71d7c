//! Rewriting Argo `{{…}}` tags into IR text: input parameters are
//! substituted, sibling outputs become `{{steps.…}}` references, the rest
//! of Argo's variables are reported and replaced by `%…%` text.

use super::text::{Piece, pieces};
use super::{Importer, Ptr};
use couler_ir::depends::Expr;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// What a task or step produced, as later ones may read it.
#[derive(Debug, Clone)]
pub(super) enum Node {
    /// One IR step, with its declared output parameters and artifacts.
    Leaf {
        step: String,
        parameters: BTreeSet<String>,
        artifacts: BTreeSet<String>,
    },
    /// A flattened dag or steps template: what a later step requires of
    /// it (see `Importer::after`), and its outputs as IR text.
    Composite {
        after: Vec<Expr<String>>,
        /// Some task inside depends on another's result: a last task that
        /// did not run need not mean the template failed.
        handles: bool,
        parameters: BTreeMap<String, String>,
        artifacts: BTreeMap<String, String>,
    },
    /// Not imported (reported); later steps require what it required.
    Missing { upstream: Vec<Expr<String>> },
}

impl Node {
    /// `outputs.…` of this node as IR text.
    fn output(&self, rest: &[&str]) -> Option<String> {
        match (self, rest) {
            (Node::Leaf { step, .. }, ["result"]) => {
                Some(format!("{{{{steps.{step}.outputs.result}}}}"))
            }
            (
                Node::Leaf {
                    step, parameters, ..
                },
                ["parameters", p],
            ) if parameters.contains(*p) => {
                Some(format!("{{{{steps.{step}.outputs.parameters.{p}}}}}"))
            }
            (
                Node::Leaf {
                    step, artifacts, ..
                },
                ["artifacts", a],
            ) if artifacts.contains(*a) => {
                Some(format!("{{{{steps.{step}.outputs.artifacts.{a}}}}}"))
            }
            (Node::Composite { parameters, .. }, ["parameters", p]) => parameters.get(*p).cloned(),
            (Node::Composite { artifacts, .. }, ["artifacts", a]) => artifacts.get(*a).cloned(),
            _ => None,
        }
    }
}

/// What the tags of one string may resolve to.
#[derive(Default)]
pub(super) struct Vars<'v> {
    /// `inputs.parameters.NAME` → IR text.
    pub inputs: Option<&'v BTreeMap<String, String>>,
    /// Whole tags such as `inputs.artifacts.a.path` → IR text.
    pub paths: BTreeMap<String, String>,
    /// Earlier tasks or steps of the same template, by their Argo name.
    pub siblings: Option<&'v HashMap<String, Node>>,
    /// Inside a fan-out: `{{item}}` stays.
    pub item: bool,
    /// In an exit handler: `{{workflow.status}}` stays.
    pub exit: bool,
}

impl Importer<'_> {
    /// `s` with every tag rewritten; `false` when some tag had no IR form
    /// (reported at `at`, replaced by `%tag%`).
    pub(super) fn text(&mut self, s: &str, vars: &Vars, at: &Ptr) -> (String, bool) {
        if !s.contains("{{") {
            return (s.to_owned(), true);
        }
        let mut out = String::with_capacity(s.len());
        let mut ok = true;
        for piece in pieces(s) {
            match piece {
                Piece::Text(t) => out.push_str(t),
                Piece::Tag(tag) => match self.tag(tag, vars, at) {
                    Some(resolved) => out.push_str(&resolved),
                    None => {
                        ok = false;
                        let shown = short(tag);
                        self.report.push(
                            at,
                            feature(tag),
                            format!("`{{{{{shown}}}}}` has no Couler equivalent here; replaced by the text `%{shown}%`"),
                        );
                        out.push_str(&format!("%{tag}%"));
                    }
                },
                Piece::Unterminated(rest) => {
                    ok = false;
                    self.report
                        .push(at, "{{", "an unterminated `{{` is replaced by `%{`");
                    out.push_str("%{");
                    out.push_str(rest);
                }
            }
        }
        (out, ok)
    }

    fn tag(&mut self, tag: &str, vars: &Vars, at: &Ptr) -> Option<String> {
        let parts: Vec<&str> = tag.split('.').collect();
        match parts.as_slice() {
            ["inputs", "parameters", p] => vars.inputs?.get(*p).cloned(),
            ["inputs", "artifacts", _]
            | ["inputs", "artifacts", _, "path"]
            | ["outputs", "parameters", _, "path"]
            | ["outputs", "artifacts", _, "path"] => vars.paths.get(tag).cloned(),
            ["workflow", "parameters", p] => self
                .workflow_parameter(p, at)
                .then(|| format!("{{{{workflow.parameters.{p}}}}}")),
            ["workflow", "name"] => Some("{{workflow.name}}".into()),
            ["workflow", "status"] if vars.exit => Some("{{workflow.status}}".into()),
            ["item"] if vars.item => Some("{{item}}".into()),
            ["item", k] if vars.item && !k.is_empty() => Some(format!("{{{{item.{k}}}}}")),
            ["tasks" | "steps", name, "outputs", rest @ ..] => {
                vars.siblings?.get(*name)?.output(rest)
            }
            _ => None,
        }
    }
}

/// A tag on one line, at most 60 characters, for messages.
fn short(tag: &str) -> String {
    let line = tag.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(60) {
        Some((i, _)) => format!("{}…", &line[..i]),
        None => line,
    }
}

/// A tag with its names blanked out, so that reports group by kind.
fn feature(tag: &str) -> String {
    if tag.starts_with('=') {
        return "{{=expression}}".into();
    }
    let mut parts: Vec<&str> = tag.split('.').collect();
    match parts.as_mut_slice() {
        ["tasks" | "steps", name, rest @ ..] => {
            *name = "*";
            if let [_, _, p] = rest {
                *p = "*";
            }
        }
        ["inputs" | "outputs" | "workflow", _, _, ..] => {
            // The name: the last part, or the one before `.path`.
            let n = parts.len();
            let i = if parts[n - 1] == "path" { n - 2 } else { n - 1 };
            parts[i] = "*";
        }
        _ => {}
    }
    format!("{{{{{}}}}}", parts.join("."))
}
