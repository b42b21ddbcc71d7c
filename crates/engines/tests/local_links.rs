//! A step cannot make the engine (running as root) read or write anything
//! but its own outputs: links a step leaves where its outputs are read are
//! refused, never followed, and an input artifact is only ever unpacked
//! into the try's own directory. Each case links to a file of the test's
//! own (mode 0600, outside everything the step is shown).

#[allow(dead_code)]
mod contract;
mod local_setup;

use contract::{Report, plan, run};
use couler_engines::{RunOutcome, StepPhase};
use local_setup::*;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

const SECRET: &str = "the-test's-secret";

/// A directory of the test holding `p`, which only root may read.
fn secret(tmp: &TempDir) -> PathBuf {
    let dir = tmp.join("secret");
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("p"), SECRET).unwrap();
    fs::set_permissions(dir.join("p"), fs::Permissions::from_mode(0o600)).unwrap();
    dir
}

/// Nothing the run reported carries the secret.
fn leaked_nowhere(r: &Report) {
    let text = format!("{:?}", r.steps);
    assert!(!text.contains(SECRET), "the secret leaked: {r:#?}");
}

/// `step` failed with a message naming `what`.
fn failed_naming(r: &Report, step: &str, what: &str) {
    assert_eq!(r.outcome, RunOutcome::Failed, "{r:#?}");
    let s = r.last(step);
    assert_eq!(s.phase, StepPhase::Failed, "{r:#?}");
    let message = s.message.clone().unwrap_or_default();
    assert!(message.contains(what), "{message:?} does not name {what:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_parameter_that_is_a_link_is_refused() {
    let (tmp, h) = setup("link-parameter");
    let dir = secret(&tmp);
    let yaml = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: link
steps:
  - name: leak
    container: {{image: x, command: [sh, -c, "ln -s {} /mnt/p"]}}
    outputs: {{parameters: [{{name: p, path: /mnt/p}}]}}
"#,
        dir.join("p").display()
    );
    let r = run(&*(h.engine)(), &h.run_spec("link"), plan(&yaml), vec![]).await;
    leaked_nowhere(&r);
    failed_naming(&r, "leak", "link");
    failed_naming(&r, "leak", "/mnt/p");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_on_the_way_to_an_output_that_is_a_link_is_refused() {
    let (tmp, h) = setup("link-parent");
    let dir = secret(&tmp);
    // /mnt is the declared directory (for `keep`); /mnt/a is the engine's
    // directory inside it, which the step swaps for a link.
    let yaml = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: parent
steps:
  - name: leak
    container: {{image: x, command: [sh, -c, "echo k > /mnt/keep && rmdir /mnt/a && ln -s {} /mnt/a"]}}
    outputs:
      parameters: [{{name: p, path: /mnt/a/p}}]
      artifacts: [{{name: keep, path: /mnt/keep}}]
"#,
        dir.display()
    );
    let r = run(&*(h.engine)(), &h.run_spec("parent"), plan(&yaml), vec![]).await;
    leaked_nowhere(&r);
    failed_naming(&r, "leak", "link");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_output_artifact_that_is_a_link_is_refused() {
    let (tmp, h) = setup("link-artifact");
    let dir = secret(&tmp);
    let yaml = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: artifact
steps:
  - name: leak
    container: {{image: x, command: [sh, -c, "ln -s {} /mnt/model"]}}
    outputs: {{artifacts: [{{name: model, path: /mnt/model}}]}}
  - name: use
    depends: [leak]
    inputs: {{artifacts: [{{name: m, from: "{{{{steps.leak.outputs.artifacts.model}}}}", path: /in/m}}]}}
    container: {{image: x, command: [cat, /in/m]}}
"#,
        dir.join("p").display()
    );
    let r = run(&*(h.engine)(), &h.run_spec("artifact"), plan(&yaml), vec![]).await;
    leaked_nowhere(&r);
    failed_naming(&r, "leak", "link");
    failed_naming(&r, "leak", "/mnt/model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_inside_an_artifact_directory_stay_links() {
    let (tmp, h) = setup("link-inside");
    let dir = secret(&tmp);
    let yaml = format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: inside
steps:
  - name: make
    container: {{image: x, command: [sh, -c, "mkdir /mnt/m && echo w > /mnt/m/w && ln -s {} /mnt/m/link && ln -s w /mnt/m/latest"]}}
    outputs: {{artifacts: [{{name: m, path: /mnt/m}}]}}
  - name: use
    depends: [make]
    inputs: {{artifacts: [{{name: m, from: "{{{{steps.make.outputs.artifacts.m}}}}", path: /in/m/x}}]}}
    container: {{image: x, command: [sh, -c, "cat /in/m/x/latest; readlink /in/m/x/link; cat /in/m/x/link || true"]}}
"#,
        dir.join("p").display()
    );
    let r = run(&*(h.engine)(), &h.run_spec("inside"), plan(&yaml), vec![]).await;
    leaked_nowhere(&r);
    assert_eq!(r.outcome, RunOutcome::Succeeded, "{r:#?}");
    // Only the file's own content is stored: 2 bytes.
    assert_eq!(
        r.last("make").outputs.artifacts.get("m").map(|m| m.size),
        Some(2)
    );
    assert_eq!(
        r.result("use"),
        format!("w\n{}", dir.join("p").display()),
        "{r:#?}"
    );
}

/// A file a step writes as an output artifact that reads as a tree
/// manifest, copied into the scratch directory the step is shown.
/// `entries` (JSON) under the manifest's format, which must come first.
fn forged(h: &contract::Harness, case: &str, entries: &serde_json::Value) -> PathBuf {
    let s = h.scratch(case);
    let file = s.path("forged.json");
    let manifest = format!(r#"{{"format":"couler-tree/v1","entries":{entries}}}"#);
    fs::write(&file, manifest).unwrap();
    file
}

fn two_steps(forged: &Path, consume: &str) -> String {
    format!(
        r#"
apiVersion: couler.dev/v1alpha1
name: forged
steps:
  - name: forge
    container: {{image: x, command: [sh, -c, "cp {} /mnt/forged && echo -n payload > /mnt/payload"]}}
    outputs: {{artifacts: [{{name: forged, path: /mnt/forged}}, {{name: payload, path: /mnt/payload}}]}}
  - name: use
    depends: [forge]
    inputs: {{artifacts: [{{name: t, from: "{{{{steps.forge.outputs.artifacts.forged}}}}", path: /in/t}}]}}
    container: {{image: x, command: [sh, -c, "{consume}"]}}
"#,
        forged.display()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_tree_cannot_name_a_file_outside_the_store() {
    let (tmp, h) = setup("forged-read");
    let dir = secret(&tmp);
    let climb = "../".repeat(40);
    let manifest = serde_json::json!([{"kind": "file", "path": "leak", "size": 1,
        "executable": false, "digest": format!("{climb}{}", dir.join("p").display())}]);
    let file = forged(&h, "forged-read", &manifest);
    let yaml = two_steps(&file, "cat /in/t/leak");
    let r = run(
        &*(h.engine)(),
        &h.run_spec("forged-read"),
        plan(&yaml),
        vec![],
    )
    .await;
    leaked_nowhere(&r);
    failed_naming(&r, "use", "input artifact");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forged_tree_cannot_write_through_a_link() {
    let (tmp, h) = setup("forged-write");
    let victim = tmp.join("victim");
    fs::create_dir_all(&victim).unwrap();
    let manifest = serde_json::json!([
        {"kind": "symlink", "path": "d", "target": victim.display().to_string()},
        {"kind": "file", "path": "d/owned", "size": 7, "executable": false,
         "digest": blake3::hash(b"payload").to_hex().to_string()},
    ]);
    let file = forged(&h, "forged-write", &manifest);
    let yaml = two_steps(&file, "ls -l /in/t");
    let r = run(
        &*(h.engine)(),
        &h.run_spec("forged-write"),
        plan(&yaml),
        vec![],
    )
    .await;
    assert!(
        !victim.join("owned").exists(),
        "the engine wrote through the step's link: {r:#?}"
    );
    failed_naming(&r, "use", "input artifact");
}
