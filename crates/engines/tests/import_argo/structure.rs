//! DAG tasks, steps groups, nested templates and unsupported tasks: how
//! Argo's graph becomes the IR's steps and dependencies.

use super::*;

#[test]
fn dag_tasks_arguments_and_dependencies() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: A, template: produce}
      - name: B
        dependencies: [A]
        template: echo
        arguments: {parameters: [{name: msg, value: "{{tasks.A.outputs.parameters.out}}"}]}
      - {name: C, depends: A, template: echo, arguments: {parameters: [{name: msg, value: c}]}}
      - {name: D, depends: "B && C.Succeeded", template: echo, arguments: {parameters: [{name: msg, value: "{{tasks.A.outputs.result}}"}]}}
  - name: produce
    container:
      image: alpine
      command: [sh, -c, "echo 1 > /tmp/out"]
    outputs: {parameters: [{name: out, valueFrom: {path: /tmp/out, default: "0"}}]}
  - name: echo
    inputs: {parameters: [{name: msg}]}
    container: {image: alpine, command: [echo], args: ["got {{inputs.parameters.msg}}"]}
"#,
    ));
    assert!(
        imported.unsupported.is_empty(),
        "{:?}",
        imported.unsupported
    );
    let wf = &imported.workflow;
    assert_eq!(wf.name, "t");
    let names: Vec<&str> = wf.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert_eq!(
        args(step(wf, "b")),
        ["got {{steps.a.outputs.parameters.out}}"]
    );
    assert_eq!(step(wf, "b").depends, ["a"]);
    assert_eq!(step(wf, "c").depends, ["a"]);
    assert_eq!(step(wf, "d").depends, ["b && c.succeeded"]);
    assert_eq!(args(step(wf, "d")), ["got {{steps.a.outputs.result}}"]);
    let out = &step(wf, "a").outputs.as_ref().unwrap().parameters[0];
    assert_eq!(
        (out.path.as_str(), out.default.as_ref().unwrap().as_str()),
        ("/tmp/out", "0")
    );
}

#[test]
fn steps_groups_run_in_sequence() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: one, template: t}
    - - {name: two-a, template: t}
      - {name: two-b, template: t}
    - - {name: three, template: t}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let wf = &imported.workflow;
    assert!(step(wf, "one").depends.is_empty());
    assert_eq!(step(wf, "two-a").depends, ["one"]);
    assert_eq!(step(wf, "two-b").depends, ["one"]);
    assert_eq!(step(wf, "three").depends, ["two-a", "two-b"]);
}

#[test]
fn nested_templates_are_flattened() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: first, template: t}
    - - {name: Inner_Work, template: inner, arguments: {parameters: [{name: m, value: "{{steps.first.outputs.result}}"}]}}
    - - {name: last, template: echo, arguments: {parameters: [{name: m, value: "{{steps.Inner_Work.outputs.parameters.out}}"}]}}
  - name: inner
    inputs: {parameters: [{name: m}]}
    outputs: {parameters: [{name: out, valueFrom: {parameter: "{{tasks.b.outputs.result}}"}}]}
    dag:
      tasks:
      - {name: a, template: echo, arguments: {parameters: [{name: m, value: "{{inputs.parameters.m}}"}]}}
      - {name: b, depends: a, template: t}
      - {name: first, template: t}
  - {name: t, container: {image: alpine}}
  - {name: echo, inputs: {parameters: [{name: m}]}, container: {image: alpine, args: ["{{inputs.parameters.m}}"]}}
"#,
    ));
    let wf = &imported.workflow;
    let names: Vec<&str> = wf.steps.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "first",
            "inner-work-a",
            "inner-work-b",
            "inner-work-first",
            "last"
        ]
    );
    assert_eq!(
        args(step(wf, "inner-work-a")),
        ["{{steps.first.outputs.result}}"]
    );
    assert_eq!(step(wf, "inner-work-first").depends, ["first"]);
    assert_eq!(
        step(wf, "last").depends,
        ["inner-work-b", "inner-work-first"]
    );
    assert_eq!(
        args(step(wf, "last")),
        ["{{steps.inner-work-b.outputs.result}}"]
    );
}

#[test]
fn unsupported_tasks_are_left_out_and_bridged() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  volumes: [{name: v, persistentVolumeClaim: {claimName: data}}]
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: t}
      - {name: approve, depends: a, template: wait}
      - {name: ext, depends: approve, templateRef: {name: other, template: x}}
      - {name: b, depends: ext, template: t}
  - {name: wait, suspend: {}}
  - name: t
    sidecars: [{name: s, image: nginx}]
    container: {image: alpine}
"#,
    ));
    let wf = &imported.workflow;
    assert_eq!(wf.steps.len(), 2);
    assert_eq!(step(wf, "b").depends, ["a"]);
    let paths: BTreeMap<&str, &str> = imported
        .unsupported
        .iter()
        .map(|u| (u.feature.as_str(), u.path.as_str()))
        .collect();
    assert_eq!(paths["volumes"], "/spec/volumes/0");
    assert_eq!(paths["suspend template"], "/spec/templates/1/suspend");
    assert_eq!(
        paths["templateRef"],
        "/spec/templates/0/dag/tasks/2/templateRef"
    );
    assert_eq!(paths["sidecars"], "/spec/templates/2/sidecars");
}
