//! `depends`: plain names (and `.succeeded`) become `runAfter`; outcomes
//! and `||`/`!` are refused by name.

use super::*;

pub(super) const SUCCEEDED: &str = r#"
apiVersion: couler.dev/v1alpha1
name: depends-succeeded
steps:
  - {name: a, container: {image: alpine:3.20, command: ["true"]}}
  - {name: b, container: {image: alpine:3.20, command: ["true"]}}
  - {name: c, depends: ["a.succeeded && b"], container: {image: alpine:3.20, command: ["true"]}}
"#;

#[test]
fn succeeded_entries_run_after_as_plain_names_do() {
    let (pipeline, _) = compiled(&plan(SUCCEEDED));
    assert_eq!(task(&pipeline, "c")["runAfter"], json!(["a", "b"]));
}

#[test]
fn outcomes_and_alternatives_are_refused_by_name() {
    for entry in ["a.failed", "a || b", "!b.skipped", "b.any"] {
        let yaml = SUCCEEDED.replace("a.succeeded && b", entry);
        let why = unsupported(&plan(&yaml));
        assert!(
            why.contains(&format!(
                "step `c`: the `depends` entry `{entry}` asks for an outcome or uses `||`/`!`"
            )),
            "{why}"
        );
        assert!(why.contains("runAfter"), "{why}");
    }
}
