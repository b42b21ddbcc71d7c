//! The Tekton community's linter and the Tekton v1 API schema
//! (`scripts/validate-tekton`) accept every manifest and reject broken ones.

use super::*;

// The validators.

fn write(dir: &Path, name: &str, m: &Manifest) {
    let d = dir.join(name);
    std::fs::create_dir_all(&d).unwrap();
    for f in &m.files {
        std::fs::write(d.join(&f.name), &f.content).unwrap();
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join("tekton")
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs `scripts/validate-tekton`: `None` when validators are skipped,
/// otherwise whether it passed and what it printed.
fn validate(dir: &Path) -> Option<(bool, String)> {
    if std::env::var("COULER_SKIP_VALIDATORS").as_deref() == Ok("1") {
        eprintln!("COULER_SKIP_VALIDATORS=1: not running scripts/validate-tekton");
        return None;
    }
    let out = Command::new("bash")
        .arg(repo_root().join("scripts/validate-tekton"))
        .arg(dir)
        .output()
        .expect("bash runs scripts/validate-tekton");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if out.status.code() == Some(2) {
        panic!(
            "the Tekton validators could not be set up (set COULER_SKIP_VALIDATORS=1 to skip them):\n{text}"
        );
    }
    Some((out.status.success(), text))
}

#[test]
fn tekton_lint_and_the_v1_schema_accept_every_manifest() {
    let dir = fresh_dir("all");
    let mut count = 0;
    for (name, plan) in compilable() {
        write(&dir, &name, &compile(&plan).unwrap());
        count += 1;
    }
    if let Some((ok, output)) = validate(&dir) {
        println!("{output}");
        assert!(ok, "scripts/validate-tekton rejected a manifest:\n{output}");
        assert!(
            output.contains(&format!("OK ({count} manifests)")),
            "{output}"
        );
    }
}

#[test]
fn the_schema_check_rejects_a_misspelt_key() {
    let dir = fresh_dir("typo");
    let mut m = compile(&example("artifact-passing")).unwrap();
    assert!(m.files[0].content.contains("runAfter:"));
    m.files[0].content = m.files[0].content.replace("runAfter:", "runAftr:");
    write(&dir, "artifact-passing", &m);
    if let Some((ok, output)) = validate(&dir) {
        assert!(!ok, "a misspelt key passed:\n{output}");
        assert!(output.contains("'runAftr' was unexpected"), "{output}");
        assert!(output.contains("/spec/tasks/1"), "{output}");
    }
}

#[test]
fn tekton_lint_rejects_an_undefined_param() {
    let dir = fresh_dir("undefined-param");
    let mut m = compile(&example("diamond")).unwrap();
    m.files[0].content = m.files[0].content.replace(
        "echo B got: $(params.step_a_result)",
        "echo B got: $(params.step_a_rezult)",
    );
    write(&dir, "diamond", &m);
    if let Some((ok, output)) = validate(&dir) {
        assert!(!ok, "an undefined param passed:\n{output}");
        assert!(output.contains("no-undefined-param"), "{output}");
        assert!(
            output.contains("tekton v1 schema: 2 objects, 0 errors"),
            "{output}"
        );
    }
}
