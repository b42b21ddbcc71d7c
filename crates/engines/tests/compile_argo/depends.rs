//! `depends` expressions as Argo enhanced `depends` of the same meaning.

use super::*;

pub(super) const DEPENDS_EXAMPLE: &str = r#"
apiVersion: couler.dev/v1alpha1
name: dag-depends
steps:
  - {name: a, container: {image: alpine, command: ["true"]}}
  - {name: b, depends: [a], container: {image: alpine, command: ["true"]}}
  - {name: c, depends: [a], container: {image: alpine, command: ["false"]}}
  - {name: should-execute-1, depends: ["a && (c.succeeded || c.failed)"], container: {image: alpine, command: ["true"]}}
  - {name: should-execute-2, depends: ["b || c"], container: {image: alpine, command: ["true"]}}
  - {name: should-not-execute, depends: ["b && c"], container: {image: alpine, command: ["true"]}}
  - {name: should-execute-3, depends: ["should-execute-2.succeeded || should-not-execute"], container: {image: alpine, command: ["true"]}}
  - {name: tidy, depends: ["!c.skipped", "b.any"], container: {image: alpine, command: ["true"]}}
onExit:
  - {name: bye, container: {image: alpine, command: ["true"]}}
  - {name: alarm, depends: [bye.failed], container: {image: alpine, command: ["true"]}}
"#;

#[test]
fn outcomes_and_or_keep_their_meaning() {
    let wf = Wf::of(&plan(DEPENDS_EXAMPLE));
    let depends = |task: &str| {
        wf.task("main", task)["depends"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(
        depends("should-execute-1"),
        "a.Succeeded && (c.Succeeded || (c.Failed || c.Errored))"
    );
    // Argo's bare `b` would also accept a skipped `b`: IR's bare name is
    // `.Succeeded`.
    assert_eq!(depends("should-execute-2"), "b.Succeeded || c.Succeeded");
    assert_eq!(depends("should-not-execute"), "b.Succeeded && c.Succeeded");
    assert_eq!(
        depends("should-execute-3"),
        "should-execute-2.Succeeded || should-not-execute.Succeeded"
    );
    assert_eq!(
        depends("tidy"),
        "!(c.Skipped || c.Omitted) && (b.Succeeded || b.Failed || b.Errored || b.Skipped || b.Omitted)"
    );
    assert_eq!(
        wf.task("exit-handler", "alarm")["depends"],
        "bye.Failed || bye.Errored"
    );
}

#[test]
fn reused_steps_outcomes_are_written_in() {
    let yaml = r#"
apiVersion: couler.dev/v1alpha1
name: reused-depends
steps:
  - {name: a, container: {image: alpine, command: [echo, a]}}
  - {name: b, container: {image: alpine, command: ["true"]}}
  - {name: either, depends: ["a.failed || b"], container: {image: alpine, command: ["true"]}}
  - {name: only-on-failure, depends: [a.failed], container: {image: alpine, command: ["true"]}}
"#;
    let facts = Facts {
        cache_hits: BTreeMap::from([("a".to_owned(), (StepOutputs::default(), "hit".to_owned()))]),
        ..Facts::default()
    };
    let wf = Wf::of(&planned(yaml, &facts));
    // `a` is a cache hit: it succeeded, so only `b` is left to judge.
    assert_eq!(wf.task("main", "either")["depends"], "b.Succeeded");
    let never = wf.task("main", "only-on-failure");
    assert!(never.get("depends").is_none(), "{never:#}");
    assert_eq!(never["when"], "false");
}

pub(super) fn reused_depends_plan() -> Plan {
    let yaml = "apiVersion: couler.dev/v1alpha1\nname: reused-depends\nsteps:\n  - {name: a, container: {image: alpine, command: [echo, a]}}\n  - {name: b, container: {image: alpine, command: ['true']}}\n  - {name: either, depends: ['a.failed || b'], container: {image: alpine, command: ['true']}}\n";
    let facts = Facts {
        cache_hits: BTreeMap::from([("a".to_owned(), (StepOutputs::default(), "hit".to_owned()))]),
        ..Facts::default()
    };
    planned(yaml, &facts)
}
