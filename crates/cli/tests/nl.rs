//! `couler generate --offline` and `couler nl-eval`.

use std::path::PathBuf;
use std::process::{Command, Output};

fn couler(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_couler"))
        .args(args)
        .current_dir(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../.."))
        .output()
        .unwrap()
}

#[test]
fn generate_offline_prints_valid_ir() {
    let out = couler(&[
        "generate",
        "--offline",
        "load the market data, preprocess it, train an LSTM, a GRU and an SVM in parallel, evaluate them, keep the best and write a report",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let yaml = String::from_utf8(out.stdout).unwrap();
    let workflow = couler_ir::load(&yaml, couler_ir::Format::Yaml).expect("valid IR");
    assert_eq!(workflow.steps.len(), 8);
    assert_eq!(workflow.groups[0].steps.len(), 3);
}

#[test]
fn generate_explains_what_it_did_not_understand() {
    let out = couler(&["generate", "--offline", "load the data, then bake a cake"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("bake a cake"), "{err}");
    assert!(err.contains("bytes 20..31"), "{err}");
}

#[test]
fn generate_drafts_a_generic_step_and_says_what_to_fill_in() {
    let out = couler(&[
        "generate",
        "--offline",
        "load the data, frobnicate the widgets",
    ]);
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(out.status.success(), "{err}");
    assert!(err.contains("frobnicate-widgets"), "{err}");
    assert!(err.contains("image and command"), "{err}");
}

#[test]
fn generate_enforces_the_image_policy() {
    let out = couler(&[
        "generate",
        "--offline",
        "--allow-image",
        "python:",
        "load the data and train an LSTM",
    ]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("allowed-image policy"));
}

#[test]
fn nl_eval_prints_the_pass_rate() {
    let out = couler(&["nl-eval", "tests/nl/dev.yaml"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(out.status.success(), "{text}");
    assert!(
        text.lines().any(|l| l.starts_with("pass issue-example")),
        "{text}"
    );
    assert!(text.contains("tests/nl/dev.yaml: pass rate: "), "{text}");
    assert!(text.contains("; invented steps: "), "{text}");
    let out = couler(&["nl-eval", "--summary", "tests/nl/"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains("pass issue-example"), "{text}");
    assert!(text.contains("failures by category"), "{text}");
}
