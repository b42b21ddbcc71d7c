//! Argo workflows in the shapes the Couler Python SDK emits for its
//! `depends` programs (`integration_tests/dag_depends_example.py`,
//! `examples/depends.py`, the exit handler of
//! `tests/test_data/workflow_basic_golden.yaml`), with each step's exit
//! code chosen by the test. Shared by the importer's tests and the local
//! engine's import-then-run tests.

#![allow(dead_code)]

fn container(name: &str, code: u8) -> String {
    format!(
        "  - name: {name}\n    container:\n      image: alpine:3.6\n      command: [sh, -c, \"exit {code}\"]\n"
    )
}

fn dag(name: &str, tasks: &[(&str, Option<&str>, u8)]) -> String {
    let mut yaml = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata:\n  generateName: {name}-\nspec:\n  entrypoint: {name}\n  templates:\n  - name: {name}\n    dag:\n      tasks:\n"
    );
    for (task, depends, _) in tasks {
        yaml += &format!("      - name: {task}\n        template: {task}\n");
        if let Some(d) = depends {
            yaml += &format!("        depends: \"{d}\"\n");
        }
    }
    for (task, _, code) in tasks {
        yaml += &container(task, *code);
    }
    yaml
}

/// `dag_depends_example.py`: C fails, the rest pass.
pub fn dag_depends_example() -> String {
    dag(
        "dag-depends",
        &[
            ("A", None, 0),
            ("B", Some("A"), 0),
            ("C", Some("A"), 1),
            (
                "should-execute-1",
                Some("A && (C.Succeeded || C.Failed)"),
                0,
            ),
            ("should-execute-2", Some("B || C"), 0),
            ("should-not-execute", Some("B && C"), 0),
            (
                "should-execute-3",
                Some("should-execute-2.Succeeded || should-not-execute"),
                0,
            ),
        ],
    )
}

/// `depends.py` with the coin flips fixed: `codes[i]` is task i+1's exit
/// code; each task runs only if the one before failed.
pub fn depends_py(codes: [u8; 4]) -> String {
    dag(
        "depends",
        &[
            ("task1", None, codes[0]),
            ("task2", Some("task1.Failed"), codes[1]),
            ("task3", Some("task2.Failed"), codes[2]),
            ("task4", Some("task3.Failed"), codes[3]),
            (
                "allfail",
                Some("task1.Failed && task2.Failed && task3.Failed && task4.Failed"),
                0,
            ),
            (
                "anysucceeded",
                Some("task1.Succeeded || task2.Succeeded || task3.Succeeded || task4.Succeeded"),
                0,
            ),
        ],
    )
}

/// `workflow_basic_golden.yaml`'s shape: one main step exiting with `code`
/// and an exit handler of two sequential step groups, `heads-637` when the
/// workflow succeeded, then `tails-637` when it failed.
pub fn exit_handler(code: u8) -> String {
    format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: pytest-
spec:
  entrypoint: pytest
  onExit: exit-handler
  templates:
  - name: pytest
    steps:
    - - name: flip-coin-167
        template: flip-coin
{flip}{heads}{tails}  - name: exit-handler
    steps:
    - - name: heads-637
        template: heads
        when: '{{{{workflow.status}}}} == Succeeded'
    - - name: tails-637
        template: tails
        when: '{{{{workflow.status}}}} == Failed'
"#,
        flip = container("flip-coin", code),
        heads = container("heads", 0),
        tails = container("tails", 0),
    )
}

/// A steps template: `flip`, then `heads` (skipped: its `when` is false)
/// beside `tails` exiting with `code`, then `after`.
pub fn steps_after_a_skip(code: u8) -> String {
    format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  generateName: steps-
spec:
  entrypoint: main
  arguments:
    parameters:
    - name: side
      value: tails
  templates:
  - name: main
    steps:
    - - name: flip
        template: pass
    - - name: heads
        template: pass
        when: '{{{{workflow.parameters.side}}}} == heads'
      - name: tails
        template: tails
    - - name: after
        template: pass
{pass}{tails}"#,
        pass = container("pass", 0),
        tails = container("tails", code),
    )
}
