//! KFP's own SDK and protos (`scripts/validate-kfp`) accept every manifest
//! and reject a broken one.

use super::*;

fn repo_root() -> PathBuf {
    compile_support::repo_root()
}

fn skip_validators() -> bool {
    std::env::var("COULER_SKIP_VALIDATORS").is_ok_and(|v| v == "1")
}

/// Installs the validator once (flock'ed, idempotent); false when
/// `COULER_SKIP_VALIDATORS=1` says to skip it.
fn validator_ready() -> bool {
    if skip_validators() {
        eprintln!("COULER_SKIP_VALIDATORS=1: skipping the KFP validator");
        return false;
    }
    let out = Command::new(repo_root().join("scripts/validate-kfp"))
        .arg("--setup")
        .output()
        .expect("scripts/validate-kfp runs");
    assert!(
        out.status.success(),
        "setting up the KFP validator (scripts/validate-kfp --setup: a virtualenv with kfp from PyPI under .tools/) failed; set COULER_SKIP_VALIDATORS=1 to skip it\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

fn validate(dir: &Path) -> std::process::Output {
    Command::new(repo_root().join("scripts/validate-kfp"))
        .arg(dir)
        .output()
        .expect("scripts/validate-kfp runs")
}

/// Everything that compiles, plus the variants above, as KFP reads it.
#[test]
fn kfp_sdk_and_protos_accept_every_manifest() {
    if !validator_ready() {
        return;
    }
    let dir = fresh_dir("kfp-manifests");
    let mut plans: Vec<(String, Plan)> = compile_support::examples()
        .into_iter()
        .chain(features())
        .collect();
    let mut market = example("market-trend");
    market.workflow.schedule = None;
    market.workflow.parallelism = None;
    for s in &mut market.workflow.steps {
        if let Some(r) = &mut s.retry {
            r.on = couler_ir::RetryOn::Always;
        }
    }
    plans.push(("market-trend-runnable".into(), market));
    let mut cached = feature("script-outputs");
    let stored = ArtifactRef {
        digest: "cd".repeat(32),
        size: 1,
        location: "s3://cas/cd".into(),
    };
    reuse(
        &mut cached,
        "produce",
        ReuseStatus::Cached,
        StepOutputs {
            result: Some("x".into()),
            parameters: Named::from_iter([("n".into(), "1".into())]),
            artifacts: Named::from_iter([("data".into(), stored)]),
        },
    );
    plans.push(("script-outputs-cached".into(), cached));
    plans.push(("chain".into(), chain(50)));
    plans.push(("kitchen-sink".into(), compile_support::plan(KITCHEN_SINK)));
    plans.push(("kitchen-sink-reused".into(), kitchen_sink_with_gen_reused()));
    let mut written = Vec::new();
    for (name, plan) in plans {
        if let Ok(m) = kfp(&plan) {
            let path = dir.join(format!("{name}.yaml"));
            std::fs::write(&path, &m.files[0].content).unwrap();
            written.push((path, m));
        }
    }
    assert_eq!(written.len(), 17);
    let out = validate(&dir);
    assert!(
        out.status.success(),
        "KFP rejected compiled manifests:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // PyYAML (YAML 1.1, what KFP reads with) sees what we meant.
    let python = repo_root().join(".tools/venv-kfp/bin/python");
    for (path, m) in written {
        let out = Command::new(&python)
            .args([
                "-c",
                "import json, sys, yaml; print(json.dumps(list(yaml.safe_load_all(open(sys.argv[1])))))",
            ])
            .arg(&path)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let pyyaml: Value = serde_json::from_slice(&out.stdout).unwrap();
        let (spec, platform) = docs(&m);
        assert_eq!(pyyaml, json!([spec, platform]), "{}", path.display());
    }
}

/// The validator is not a rubber stamp: a misspelled field fails it.
#[test]
fn the_validator_rejects_a_misspelled_field() {
    if !validator_ready() {
        return;
    }
    let dir = fresh_dir("kfp-misspelled");
    let m = kfp(&feature("depends-groups")).unwrap();
    let bad = m.files[0]
        .content
        .replace("dependentTasks:", "dependentTask:");
    assert_ne!(bad, m.files[0].content);
    std::fs::write(dir.join("typo.yaml"), bad).unwrap();
    let out = validate(&dir);
    let report = String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "a typo passed: {report}");
    assert!(
        report.contains("has no field named \"dependentTask\""),
        "{report}"
    );
}
