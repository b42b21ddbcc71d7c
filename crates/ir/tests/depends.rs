//! `depends` expressions: what validation accepts, how it resolves them,
//! and every problem it reports, each at its entry.

use couler_ir::depends::{Expr, Outcome};
use couler_ir::{Code, Format, Problems, load, validate};

const HEAD: &str = "apiVersion: couler.dev/v1alpha1\nname: w\n";

fn problems(body: &str) -> Problems {
    load(&format!("{HEAD}{body}"), Format::Yaml).expect_err("document should be invalid")
}

#[track_caller]
fn assert_problem(body: &str, path: &str, code: Code, message: &str) {
    let p = problems(body);
    assert!(
        p.iter()
            .any(|x| x.path == path && x.code == code && x.message.contains(message)),
        "expected {code} at {path} saying {message:?}, got {p}"
    );
}

const STEPS: &str = "steps:
  - {name: a, container: {image: x}}
  - {name: b, depends: [a], container: {image: x}}
  - {name: c, depends: [a], container: {image: x}}
";

#[test]
fn expressions_resolve_to_requirements() {
    let yaml = format!(
        "{HEAD}{STEPS}  - {{name: d, depends: [a, 'b || c.failed', '!g.any || g2'], container: {{image: x, args: ['{{{{steps.c.outputs.result}}}}']}}}}
  - {{name: g, container: {{image: x}}}}
  - {{name: g2, container: {{image: x}}}}
  - {{name: h, depends: [grp], container: {{image: x}}}}
groups: [{{name: grp, steps: [b, c]}}]
"
    );
    let wf = load(&yaml, Format::Yaml).unwrap();
    let dag = validate(&wf, &Default::default()).unwrap();
    let d = dag.step_requirements.of(3);
    // The three entries, then nothing implied: `c`, which d reads, is named.
    assert_eq!(d.len(), 3);
    assert_eq!(d[0].expr, Expr::Ref(0, None));
    assert_eq!(
        d[1].expr,
        Expr::Or(vec![
            Expr::Ref(1, None),
            Expr::Ref(2, Some(Outcome::Failed))
        ])
    );
    assert_eq!(d[2].entry, Some(2));
    assert_eq!(dag.steps.upstream(3), &[0, 1, 2, 4, 5]);
    assert!(!dag.step_requirements.is_plain(3));
    // A bare group is all of its members.
    let h = dag.step_requirements.of(6);
    assert_eq!(
        h[0].expr,
        Expr::And(vec![Expr::Ref(1, None), Expr::Ref(2, None)])
    );
    assert!(dag.step_requirements.is_plain(6));
    // b has one plain entry; a reads-only edge is an implied bare one.
    let yaml = format!(
        "{HEAD}steps:\n  - {{name: a, container: {{image: x}}}}\n  - {{name: b, container: {{image: x, args: ['{{{{steps.a.outputs.result}}}}']}}}}\n"
    );
    let wf = load(&yaml, Format::Yaml).unwrap();
    let dag = validate(&wf, &Default::default()).unwrap();
    let b = dag.step_requirements.of(1);
    assert_eq!((b[0].expr.clone(), b[0].entry), (Expr::Ref(0, None), None));
    assert!(dag.step_requirements.all_plain());
}

#[test]
fn unknown_steps_in_expressions_are_reported_at_their_entry() {
    assert_problem(
        &format!(
            "{STEPS}  - {{name: d, depends: [a, 'b && (ghost.failed || c)'], container: {{image: x}}}}\n"
        ),
        "/steps/3/depends/1",
        Code::UnknownStep,
        "no step or group named \"ghost\"",
    );
}

#[test]
fn bad_outcomes_and_syntax_say_what_and_where() {
    assert_problem(
        &format!("{STEPS}  - {{name: d, depends: [c.Failed], container: {{image: x}}}}\n"),
        "/steps/3/depends/0",
        Code::InvalidValue,
        "\"Failed\" is not an outcome; use one of succeeded, failed, skipped, any at position 2",
    );
    assert_problem(
        &format!("{STEPS}  - {{name: d, depends: ['a && (b || c'], container: {{image: x}}}}\n"),
        "/steps/3/depends/0",
        Code::InvalidValue,
        "`(` at position 5 is not closed at position 12",
    );
    assert_problem(
        &format!("{STEPS}  - {{name: d, depends: ['a & b'], container: {{image: x}}}}\n"),
        "/steps/3/depends/0",
        Code::InvalidValue,
        "unexpected '&'",
    );
}

#[test]
fn groups_take_plain_names_and_no_outcomes() {
    assert_problem(
        &format!(
            "{STEPS}  - {{name: d, depends: [grp.failed], container: {{image: x}}}}\ngroups: [{{name: grp, steps: [b, c]}}]\n"
        ),
        "/steps/3/depends/0",
        Code::InvalidValue,
        "\"grp\" is a group; a group can only be named bare",
    );
    assert_problem(
        &format!(
            "{STEPS}  - {{name: d, container: {{image: x}}}}\ngroups: [{{name: grp, steps: [d], depends: ['a || b']}}]\n"
        ),
        "/groups/0/depends/0",
        Code::InvalidValue,
        "a group's `depends` takes step or group names only",
    );
}

#[test]
fn cycles_through_expressions_are_reported_at_the_entry() {
    assert_problem(
        "steps:\n  - {name: a, depends: ['x || b.failed'], container: {image: x}}\n  - {name: b, depends: [a], container: {image: x}}\n  - {name: x, container: {image: x}}\n",
        "/steps/0/depends/0",
        Code::Cycle,
        "dependency cycle",
    );
    assert_problem(
        "steps:\n  - {name: a, depends: ['!a.any'], container: {image: x}}\n",
        "/steps/0/depends/0",
        Code::Cycle,
        "a → a",
    );
}

#[test]
fn exit_handlers_depend_only_on_exit_handlers() {
    assert_problem(
        "steps: [{name: a, container: {image: x}}]\nonExit:\n  - {name: e1, container: {image: x}}\n  - {name: e2, depends: ['e1.failed || a'], container: {image: x}}\n",
        "/onExit/1/depends/0",
        Code::InvalidValue,
        "exit-handler steps run after the DAG",
    );
    let ok = format!(
        "{HEAD}steps: [{{name: a, container: {{image: x}}}}]\nonExit:\n  - {{name: e1, container: {{image: x}}}}\n  - {{name: e2, depends: ['e1.failed'], container: {{image: x}}}}\n"
    );
    let wf = load(&ok, Format::Yaml).unwrap();
    let dag = validate(&wf, &Default::default()).unwrap();
    assert_eq!(
        dag.exit_requirements.of(1)[0].expr,
        Expr::Ref(0, Some(Outcome::Failed))
    );
}
