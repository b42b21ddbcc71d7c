//! Argo's `dependencies`, enhanced `depends` and step groups as
//! status-aware IR `depends` entries.

use super::*;

#[path = "../argo_depends/mod.rs"]
mod argo_depends;

fn run_changing(imported: &Imported) -> Vec<String> {
    (imported.unsupported.iter())
        .filter(|u| u.changes_run())
        .map(ToString::to_string)
        .collect()
}

fn depends_of<'a>(wf: &'a Workflow, name: &str) -> Vec<&'a str> {
    step(wf, name).depends.iter().map(String::as_str).collect()
}

#[test]
fn the_dag_depends_example_keeps_its_expressions() {
    let imported = import(&argo_depends::dag_depends_example());
    assert_eq!(run_changing(&imported), Vec::<String>::new());
    let wf = &imported.workflow;
    assert!(depends_of(wf, "a").is_empty());
    assert_eq!(depends_of(wf, "b"), ["a"]);
    assert_eq!(depends_of(wf, "c"), ["a"]);
    assert_eq!(
        depends_of(wf, "should-execute-1"),
        ["a && (c.succeeded || c.failed)"]
    );
    assert_eq!(depends_of(wf, "should-execute-2"), ["b || c"]);
    assert_eq!(depends_of(wf, "should-not-execute"), ["b && c"]);
    assert_eq!(
        depends_of(wf, "should-execute-3"),
        ["should-execute-2.succeeded || should-not-execute"]
    );
}

#[test]
fn the_depends_program_keeps_its_expressions() {
    let imported = import(&argo_depends::depends_py([0; 4]));
    assert_eq!(run_changing(&imported), Vec::<String>::new());
    let wf = &imported.workflow;
    assert_eq!(depends_of(wf, "task2"), ["task1.failed"]);
    assert_eq!(depends_of(wf, "task4"), ["task3.failed"]);
    assert_eq!(
        depends_of(wf, "allfail"),
        ["task1.failed && task2.failed && task3.failed && task4.failed"]
    );
    assert_eq!(
        depends_of(wf, "anysucceeded"),
        ["task1.succeeded || task2.succeeded || task3.succeeded || task4.succeeded"]
    );
}

#[test]
fn each_argo_result_becomes_its_outcomes() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  arguments: {parameters: [{name: go, value: "yes"}]}
  templates:
  - name: main
    dag:
      tasks:
      - {name: x, template: t, when: "{{workflow.parameters.go}} == yes"}
      - {name: y, depends: x, template: t}
      - {name: root, template: t}
      - {name: list, dependencies: [x, root], template: t}
      - {name: skipped, depends: y.Skipped, template: t}
      - {name: omitted, depends: "y.Omitted", template: t}
      - {name: never-omitted, depends: "root.Omitted", template: t}
      - {name: errors, depends: "y.Failed || y.Errored", template: t}
      - {name: odd, depends: "x.Daemoned || root.AnySucceeded || !y.Errored", template: t}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let wf = &imported.workflow;
    // x can be skipped by its `when`: Argo runs y after that skip too.
    assert_eq!(depends_of(wf, "y"), ["x || x.skipped"]);
    assert_eq!(depends_of(wf, "list"), ["x || x.skipped", "root"]);
    // y has no `when`: skipped, it was omitted (its entry was false).
    assert_eq!(depends_of(wf, "skipped"), ["y.skipped && (x || x.skipped)"]);
    assert_eq!(
        depends_of(wf, "omitted"),
        ["y.skipped && !(x || x.skipped)"]
    );
    assert_eq!(depends_of(wf, "never-omitted"), ["!root.any"]);
    assert_eq!(depends_of(wf, "errors"), ["y.failed"]);
    assert_eq!(depends_of(wf, "odd"), ["!x.any || !root.any || !y.failed"]);
    // `!y.Errored` alone would read a plain failure as an error.
    assert_eq!(
        reported_at(&imported, "depends Errored"),
        "/spec/templates/0/dag/tasks/8/depends"
    );
    let changing = run_changing(&imported);
    assert_eq!(changing.len(), 1, "{changing:?}");
}

#[test]
fn results_without_an_ir_form_leave_the_task_out() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: t}
      - {name: fan, template: t, withItems: [1, 2]}
      - {name: any, depends: fan.AnySucceeded, template: t}
      - {name: nested, depends: a, template: inner}
      - {name: inner-ok, depends: nested.Succeeded, template: t}
      - {name: after-nested, depends: nested, template: t}
      - {name: ext, depends: a, templateRef: {name: other, template: x}}
      - {name: ext-failed, depends: ext.Failed, template: t}
      - {name: after-ext, depends: "ext && fan", template: t}
  - name: inner
    steps:
    - - {name: one, template: t}
    - - {name: two, template: t, when: "{{steps.one.outputs.result}} == go"}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let wf = &imported.workflow;
    let names: BTreeSet<&str> = wf.steps.iter().map(|s| s.name.as_str()).collect();
    for left_out in ["any", "inner-ok", "ext", "ext-failed"] {
        assert!(!names.contains(left_out), "{left_out} in {names:?}");
    }
    let paths: BTreeSet<&str> = (imported.unsupported.iter())
        .filter(|u| u.feature == "depends")
        .map(|u| u.path.as_str())
        .collect();
    assert_eq!(
        paths,
        BTreeSet::from([
            "/spec/templates/0/dag/tasks/2/depends",
            "/spec/templates/0/dag/tasks/4/depends",
            "/spec/templates/0/dag/tasks/7/depends",
        ])
    );
    // A bare nested template: its last step succeeded or was skipped by
    // its `when`; a bare task left out: what it required.
    assert_eq!(
        depends_of(wf, "after-nested"),
        ["nested-two || nested-two.skipped && nested-one"]
    );
    assert_eq!(depends_of(wf, "after-ext"), ["a && fan"]);
}

#[test]
fn a_step_group_runs_after_a_step_skipped_by_its_when() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: flip, template: t}
    - - {name: heads, template: t, when: "{{steps.flip.outputs.result}} == heads"}
      - {name: tails, template: t, when: "{{steps.flip.outputs.result}} == tails"}
    - - {name: after, template: t}
    - - {name: last, template: t}
  - {name: t, container: {image: alpine}}
"#,
    ));
    assert_eq!(run_changing(&imported), Vec::<String>::new());
    let wf = &imported.workflow;
    // Argo runs `after` whichever branch ran; a failure of either (or of
    // flip, which skips both) ends the template.
    assert_eq!(
        depends_of(wf, "after"),
        [
            "heads || heads.skipped && flip",
            "tails || tails.skipped && flip"
        ]
    );
    assert_eq!(depends_of(wf, "last"), ["after"]);
}

#[test]
fn the_couler_sdks_exit_handler_runs_its_second_group_after_a_skip() {
    let imported = import(&argo_depends::exit_handler(0));
    assert_eq!(run_changing(&imported), Vec::<String>::new());
    let wf = &imported.workflow;
    assert_eq!(
        depends_of(wf, "tails-637"),
        ["heads-637 || heads-637.skipped"]
    );
    // The SDK's own golden file imports the same way.
    let Some(files) = corpus("couler-golden") else {
        return;
    };
    let golden = files
        .iter()
        .find(|f| file_name(f) == "workflow_basic_golden.yaml")
        .expect("workflow_basic_golden.yaml");
    let imported = import(&std::fs::read_to_string(golden).unwrap());
    assert_eq!(run_changing(&imported), Vec::<String>::new());
    assert_eq!(
        depends_of(&imported.workflow, "tails-637"),
        ["heads-637 || heads-637.skipped"]
    );
}

#[test]
fn long_chains_of_skippable_steps_stay_within_the_ir_limits() {
    // Twenty groups of two steps that can each be skipped: written out in
    // full, what a step requires of the group before would double per group.
    let mut spec = String::from(
        "  entrypoint: main\n  arguments: {parameters: [{name: side, value: h}]}\n  templates:\n  - {name: t, container: {image: alpine}}\n  - name: main\n    steps:\n",
    );
    for g in 0..20 {
        spec += &format!(
            "    - - {{name: h{g}, template: t, when: \"{{{{workflow.parameters.side}}}} == h\"}}\n      - {{name: t{g}, template: t, when: \"{{{{workflow.parameters.side}}}} == t\"}}\n"
        );
    }
    let imported = import(&workflow(&spec));
    let wf = &imported.workflow;
    assert_eq!(wf.steps.len(), 40);
    assert_eq!(
        depends_of(wf, "h1"),
        ["h0 || h0.skipped", "t0 || t0.skipped"]
    );
    let longest = wf
        .steps
        .iter()
        .flat_map(|s| &s.depends)
        .map(String::len)
        .max();
    assert!(longest < Some(2048), "{longest:?}");
    assert!(reported(&imported, "depends approximation"));
}
