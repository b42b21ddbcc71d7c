//! Importing other engines' workflows into IR: [`argo`] reads an Argo
//! `Workflow`, `WorkflowTemplate`, `ClusterWorkflowTemplate` or
//! `CronWorkflow`. The result is a valid IR workflow plus one
//! [`Unsupported`] entry, with its JSON pointer into the source document,
//! for everything that could not be carried over: nothing is dropped
//! silently.

mod argo;

pub use argo::argo;

use couler_ir::names::is_dns_label;
use serde::Serialize;
use std::collections::HashSet;
use std::fmt;

/// An imported workflow and what it had to leave behind.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// Passes [`couler_ir::validate`].
    pub workflow: couler_ir::Workflow,
    /// In document order of discovery; each (path, feature) at most once.
    pub unsupported: Vec<Unsupported>,
}

/// One thing of the source document the IR cannot express.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Unsupported {
    /// JSON pointer into the source document.
    pub path: String,
    /// A short, stable name of the feature (`volumes`, `templateRef`, …).
    pub feature: String,
    pub message: String,
}

/// Features whose loss leaves what runs, and what it computes, as it was:
/// Kubernetes settings of pods and workflow objects, metadata, retention,
/// and notes on how something was carried over. Everything else the
/// importer cannot carry over changes the run.
const KEEPS_RUN: &[&str] = &[
    "while bound",
    "startingDeadlineSeconds",
    // Couler keys cached results on exact inputs, not on a user's key.
    "memoize.key",
    "memoize.cache",
    // Training jobs: pod clean-up, the created object's metadata (a read
    // of it is reported where it is read), and the operator's own verdict.
    "cleanPodPolicy",
    "job outputs",
    "job condition",
    "annotation",
    "label",
    "workflowMetadata",
    "podMetadata",
    "metadata",
    "serviceAccountName",
    "automountServiceAccountToken",
    "executor",
    "securityContext",
    "imagePullPolicy",
    "imagePullSecrets",
    "dnsPolicy",
    "dnsConfig",
    "hostAliases",
    "tolerations",
    "affinity",
    "nodeSelector",
    "priorityClassName",
    "priority",
    "schedulerName",
    "podPriorityClassName",
    "podGC",
    "ttlStrategy",
    "ttlSecondsAfterFinished",
    "archiveLogs",
    "archiveLocation",
    "artifactRepositoryRef",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "resources.limits",
    // Engines give each step a fresh writable directory where the step
    // declares paths, which is all these volumes did (see argo/volumes.rs).
    "emptyDir volume",
    "emptyDir mount",
];

impl Unsupported {
    /// Whether leaving this out changes what runs (a step, an input, a
    /// dependency, a condition); false for Kubernetes settings only.
    pub fn changes_run(&self) -> bool {
        !KEEPS_RUN.contains(&self.feature.as_str())
    }
}

impl fmt::Display for Unsupported {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "/"
        } else {
            &self.path
        };
        write!(f, "{path}: {}: {}", self.feature, self.message)
    }
}

/// A document that is not an importable workflow at all.
#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("not valid YAML: {0}")]
    Syntax(String),
    #[error(
        "no Argo Workflow, WorkflowTemplate, ClusterWorkflowTemplate or CronWorkflow found ({0})"
    )]
    NotAWorkflow(String),
    #[error("{0}")]
    NoEntrypoint(String),
    /// Every step was unsupported; `unsupported` says why.
    #[error("no step could be imported ({} unsupported features)", unsupported.len())]
    Nothing { unsupported: Vec<Unsupported> },
    /// The importer built an invalid workflow: a bug in the importer.
    #[error("the imported workflow is invalid: {0}")]
    Invalid(couler_ir::Problems),
}

/// A JSON pointer under construction.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub(crate) struct Ptr(String);

impl Ptr {
    pub fn root() -> Ptr {
        Ptr(String::new())
    }
    pub fn key(&self, key: &str) -> Ptr {
        Ptr(format!(
            "{}/{}",
            self.0,
            key.replace('~', "~0").replace('/', "~1")
        ))
    }
    pub fn index(&self, i: usize) -> Ptr {
        Ptr(format!("{}/{i}", self.0))
    }
}

/// The unsupported features found so far, each (path, feature) once.
#[derive(Debug, Default)]
pub(crate) struct Report {
    items: Vec<Unsupported>,
    seen: HashSet<(String, String)>,
}

impl Report {
    pub fn push(&mut self, path: &Ptr, feature: impl Into<String>, message: impl Into<String>) {
        let feature = feature.into();
        if self.seen.insert((path.0.clone(), feature.clone())) {
            self.items.push(Unsupported {
                path: path.0.clone(),
                feature,
                message: message.into(),
            });
        }
    }
    pub fn into_items(self) -> Vec<Unsupported> {
        self.items
    }
}

/// Hands out unique IR step names (DNS labels), deterministically.
#[derive(Debug, Default)]
pub(crate) struct Names {
    taken: HashSet<String>,
}

impl Names {
    /// A unique valid name close to `raw`; later clashes get `-2`, `-3`, ….
    pub fn claim(&mut self, raw: &str) -> String {
        let base = dns_label(raw, 63);
        let mut candidate = base.clone();
        let mut n = 2;
        while self.taken.contains(&candidate) {
            let suffix = format!("-{n}");
            candidate = format!(
                "{}{suffix}",
                truncate(&base, 63 - suffix.len()).trim_end_matches('-')
            );
            n += 1;
        }
        self.taken.insert(candidate.clone());
        candidate
    }
}

/// `raw` as a DNS label: lowercase, other characters as `-`, at most `max`
/// characters (a long name keeps a digest of the whole so that two long
/// names stay apart).
pub(crate) fn dns_label(raw: &str, max: usize) -> String {
    let mut out = String::with_capacity(raw.len());
    for c in raw.chars() {
        let c = c.to_ascii_lowercase();
        if c.is_ascii_lowercase() || c.is_ascii_digit() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let out = out.trim_matches('-').to_owned();
    if out.is_empty() {
        return "step".to_owned();
    }
    if out.len() <= max {
        debug_assert!(is_dns_label(&out));
        return out;
    }
    let digest = blake3::hash(raw.as_bytes()).to_hex();
    let head = truncate(&out, max - 9).trim_end_matches('-').to_owned();
    format!("{head}-{}", &digest[..8])
}

fn truncate(s: &str, n: usize) -> &str {
    &s[..s.len().min(n)]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(feature: &str) -> Unsupported {
        Unsupported {
            path: "/spec".into(),
            feature: feature.into(),
            message: String::new(),
        }
    }

    #[test]
    fn kubernetes_settings_and_notes_keep_the_run_and_the_rest_change_it() {
        for keeps in [
            "serviceAccountName",
            "imagePullPolicy",
            "while bound",
            "podGC",
        ] {
            assert!(!item(keeps).changes_run(), "{keeps}");
        }
        for changes in [
            "volumes",
            "templateRef",
            "recursion",
            "depends",
            "something new",
        ] {
            assert!(item(changes).changes_run(), "{changes}");
        }
    }
}
