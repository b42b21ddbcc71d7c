//! The `couler` binary as users run it.

use std::path::PathBuf;
use std::process::{Command, Output};

fn couler(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_couler"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap()
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("couler-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn validate_accepts_the_examples() {
    let files: Vec<String> = std::fs::read_dir(root().join("examples"))
        .unwrap()
        .map(|e| e.unwrap().path().display().to_string())
        .collect();
    let mut args = vec!["validate"];
    args.extend(files.iter().map(String::as_str));
    let out = couler(&args);
    assert!(out.status.success(), "{}", stdout(&out));
    assert_eq!(
        stdout(&out)
            .lines()
            .filter(|l| l.contains(": ok ("))
            .count(),
        files.len()
    );
}

#[test]
fn validate_reports_every_problem_and_fails() {
    let bad = temp_file(
        "bad.yaml",
        "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: a, depends: [ghost], container: {image: a}}\n  - {name: a, container: {image: a}}\n",
    );
    let out = couler(&["validate", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = stdout(&out);
    assert!(text.contains("/steps/0/depends/0: unknown_step:"), "{text}");
    assert!(text.contains("/steps/1/name: duplicate_name:"), "{text}");

    let out = couler(&["validate", "--output", "json", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json[0]["valid"], false);
    assert_eq!(json[0]["problems"].as_array().unwrap().len(), 2);
    assert_eq!(json[0]["problems"][0]["code"], "unknown_step");
    assert_eq!(json[0]["problems"][0]["path"], "/steps/0/depends/0");
}

#[test]
fn validate_missing_file_is_an_error_not_a_panic() {
    let out = couler(&["validate", "no/such/file.yaml"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no/such/file.yaml"));
}

#[test]
fn fmt_prints_a_canonical_fixed_point() {
    let first = couler(&["fmt", "examples/market-trend.yaml"]);
    assert!(first.status.success());
    let again = temp_file("canonical.yaml", &stdout(&first));
    let second = couler(&["fmt", again.to_str().unwrap()]);
    assert_eq!(stdout(&first), stdout(&second));

    let json = couler(&["fmt", "--output", "json", "examples/market-trend.yaml"]);
    let value: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(value["name"], "market-trend");
}

#[test]
fn hash_is_the_same_for_yaml_and_its_json_form() {
    let yaml = couler(&["hash", "--output", "json", "examples/diamond.yaml"]);
    let json_form = couler(&["fmt", "--output", "json", "examples/diamond.yaml"]);
    let as_json = temp_file("diamond.json", &stdout(&json_form));
    let json = couler(&["hash", "--output", "json", as_json.to_str().unwrap()]);
    assert!(yaml.status.success() && json.status.success());
    assert_eq!(stdout(&yaml), stdout(&json));
    let parsed: serde_json::Value = serde_json::from_slice(&yaml.stdout).unwrap();
    assert_eq!(parsed["steps"].as_array().unwrap().len(), 4);
}

#[test]
fn schema_is_the_committed_one() {
    let out = couler(&["schema"]);
    let committed = std::fs::read_to_string(root().join("openapi/ir.schema.json")).unwrap();
    assert_eq!(stdout(&out), committed);
}
