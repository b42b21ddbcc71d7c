//! `couler import argo`: one case per mapping, then the public corpus
//! (`../shared/corpus/argo/`, real Argo examples, and `couler-golden/`,
//! what the Couler Python SDK emits): how many import, every imported one
//! compiled back to Argo and accepted by `scripts/validate-argo` (hera's
//! models in strict mode, Argo's JSON Schema, a semantic lint), and the
//! golden files structurally equal after the round trip.

use couler_engines::RunSpec;
use couler_engines::import::{self, ImportError, Imported};
use couler_ir::{Operator, RetryOn, Step, Workflow};
use couler_optimizer::{Facts, Pipeline};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

mod bodies;
mod control_flow;
mod corpus;
mod couler_jobs;
mod depends;
mod documents;
mod golden;
mod structure;

fn import(yaml: &str) -> Imported {
    let imported = import::argo(yaml).unwrap_or_else(|e| panic!("import failed: {e}\n{yaml}"));
    couler_ir::validate(&imported.workflow, &couler_ir::Limits::default())
        .unwrap_or_else(|p| panic!("imported workflow is invalid: {p}"));
    imported
}

fn step<'a>(wf: &'a Workflow, name: &str) -> &'a Step {
    wf.steps
        .iter()
        .chain(&wf.on_exit)
        .find(|s| s.name == name)
        .unwrap_or_else(|| {
            let names: Vec<&str> = wf.steps.iter().map(|s| s.name.as_str()).collect();
            panic!("no step {name:?} among {names:?}")
        })
}

fn reported(imported: &Imported, feature: &str) -> bool {
    imported.unsupported.iter().any(|u| u.feature == feature)
}

/// Where the import reported `feature` as unsupported.
fn reported_at<'a>(imported: &'a Imported, feature: &str) -> &'a str {
    let found = imported.unsupported.iter().find(|u| u.feature == feature);
    &found
        .unwrap_or_else(|| panic!("{feature} was not reported"))
        .path
}

fn args(s: &Step) -> &[String] {
    &s.container.as_ref().expect("a container step").args
}

const HEADER: &str =
    "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: t-}\n";

fn workflow(spec: &str) -> String {
    format!("{HEADER}spec:\n{spec}")
}

// ---------------------------------------------------------------------
// The public corpus.

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus(folder: &str) -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(folder);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: the corpus folder {} is absent", dir.display());
        return None;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    Some(files)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Compiles an imported workflow to Argo (parameters without a default
/// get a placeholder value, as a run would be given one).
fn compile_back(wf: &Workflow) -> Result<couler_engines::compile::Manifest, String> {
    let parameters = wf
        .parameters
        .iter()
        .map(|p| {
            let value = p
                .default
                .as_ref()
                .or(p.allowed.first())
                .map_or("x", |v| v.as_str());
            (p.name.clone(), value.to_owned())
        })
        .collect();
    let facts = Facts {
        parameters,
        ..Facts::default()
    };
    let plan = Pipeline::default()
        .plan(wf.clone(), &facts, |_, f| f())
        .map_err(|e| format!("plan: {e}"))?;
    couler_engines::compile::compile("argo", &plan, &RunSpec::new("t", "r", 1))
        .map_err(|e| e.to_string())
}

/// Writes manifests under a fresh directory and runs scripts/validate-argo
/// on it; returns its problem lines.
fn validate_argo(dir: &Path) -> Vec<String> {
    let script = repo_root().join("scripts/validate-argo");
    assert!(
        script.exists(),
        "waiting for the Argo compiler: scripts/validate-argo does not exist yet"
    );
    let out = Command::new(&script)
        .arg(dir)
        .output()
        .expect("run scripts/validate-argo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let problems: Vec<String> = stdout
        .lines()
        .filter(|l| !l.starts_with("validate-argo:"))
        .map(str::to_owned)
        .collect();
    assert!(
        out.status.success() || !problems.is_empty(),
        "scripts/validate-argo failed: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    problems
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_manifest(dir: &Path, stem: &str, manifest: &couler_engines::compile::Manifest) {
    let sub = dir.join(stem);
    std::fs::create_dir_all(&sub).unwrap();
    for f in &manifest.files {
        std::fs::write(sub.join(&f.name), &f.content).unwrap();
    }
}

/// The placeholder the Argo compiler returned while it was being written.
fn compiler_missing(error: &str) -> bool {
    error.contains("being written")
}
