//! `depends`: plain names (and `.succeeded`) become task dependencies;
//! outcomes and `||`/`!` are refused by name.

use super::*;

const SUCCEEDED: &str = r#"
apiVersion: couler.dev/v1alpha1
name: depends-succeeded
steps:
  - {name: a, container: {image: alpine:3.20, command: ["true"]}}
  - {name: b, container: {image: alpine:3.20, command: ["true"]}}
  - {name: c, depends: ["a.succeeded && b"], container: {image: alpine:3.20, command: ["true"]}}
"#;

#[test]
fn succeeded_entries_are_dependencies_as_plain_names_are() {
    let (spec, _) = compiled(&compile_support::plan(SUCCEEDED));
    assert_eq!(deps(task(&spec["root"], "c")), ["a", "b"]);
}

#[test]
fn outcomes_and_alternatives_are_refused_by_name() {
    for entry in ["a.failed", "a || b", "!b.skipped"] {
        let yaml = SUCCEEDED.replace("a.succeeded && b", entry);
        let why = unsupported(&compile_support::plan(&yaml));
        assert!(
            why.contains(&format!(
                "step `c`: the `depends` entry `{entry}` asks for an outcome"
            )),
            "{why}"
        );
    }
}
