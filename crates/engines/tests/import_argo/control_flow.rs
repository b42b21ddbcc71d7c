//! Conditions, loops, skips, recursion and exit handlers.

use super::*;

#[test]
fn when_expressions_become_conditions() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: flip, template: t}
    - - {name: heads, template: t, when: "'{{steps.flip.outputs.result}}' == heads"}
      - {name: either, template: t, when: "{{steps.flip.outputs.result}} == heads || {{steps.flip.outputs.result}} == tails"}
      - {name: big, template: t, when: "{{steps.flip.outputs.result}} > 5 && {{steps.flip.outputs.result}} != 9"}
      - {name: regex, template: t, when: "{{steps.flip.outputs.result}} =~ hea"}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let wf = &imported.workflow;
    let heads = &step(wf, "heads").when[0];
    assert_eq!(heads.input, "{{steps.flip.outputs.result}}");
    assert_eq!(
        (heads.operator, heads.value.as_ref().unwrap().as_str()),
        (Operator::Eq, "heads")
    );
    let either = &step(wf, "either").when[0];
    assert_eq!((either.operator, either.values.len()), (Operator::In, 2));
    let big: Vec<Operator> = step(wf, "big").when.iter().map(|c| c.operator).collect();
    assert_eq!(big, [Operator::Gt, Operator::Ne]);
    // Without its condition it could run where Argo would not.
    assert!(!wf.steps.iter().any(|s| s.name == "regex"));
    assert_eq!(
        reported_at(&imported, "when"),
        "/spec/templates/0/steps/1/3/when"
    );
}

#[test]
fn loops_become_maps() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  arguments: {parameters: [{name: list, value: '["a","b"]'}]}
  templates:
  - name: main
    parallelism: 3
    steps:
    - - {name: gen, template: t}
    - - name: items
        template: echo
        arguments: {parameters: [{name: m, value: "{{item.x}}"}]}
        withItems: [{x: 1}, {x: 2}]
      - {name: param, template: echo, arguments: {parameters: [{name: m, value: "{{item}}"}]}, withParam: "{{steps.gen.outputs.result}}"}
      - {name: wfparam, template: echo, arguments: {parameters: [{name: m, value: "{{item}}"}]}, withParam: "{{workflow.parameters.list}}"}
      - {name: seq, template: echo, arguments: {parameters: [{name: m, value: "{{item}}"}]}, withSequence: {start: "5", end: "3"}}
      - {name: huge, template: echo, arguments: {parameters: [{name: m, value: "{{item}}"}]}, withSequence: {count: "100000000000"}}
  - {name: t, container: {image: alpine}}
  - {name: echo, inputs: {parameters: [{name: m}]}, container: {image: alpine, args: ["{{inputs.parameters.m}}"]}}
"#,
    ));
    let wf = &imported.workflow;
    let items = step(wf, "items");
    assert_eq!(items.map.as_ref().unwrap().items.as_ref().unwrap().len(), 2);
    assert_eq!(args(items), ["{{item.x}}"]);
    assert_eq!(
        step(wf, "param").map.as_ref().unwrap().from.as_deref(),
        Some("{{steps.gen.outputs.result}}")
    );
    assert_eq!(
        step(wf, "wfparam").map.as_ref().unwrap().from.as_deref(),
        Some("{{workflow.parameters.list}}")
    );
    let seq = step(wf, "seq").map.as_ref().unwrap().items.clone().unwrap();
    assert_eq!(seq, [Value::from("5"), Value::from("4"), Value::from("3")]);
    assert!(!wf.steps.iter().any(|s| s.name == "huge"));
    assert!(reported(&imported, "withSequence"));
    // A template's parallelism over several steps is the workflow's.
    assert_eq!(wf.parallelism, Some(3));
}

#[test]
fn template_parallelism_over_one_loop_is_the_maps() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  parallelism: 10
  templates:
  - name: main
    parallelism: 2
    steps:
    - - {name: sleep, template: t, withItems: [1, 2, 3]}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let wf = &imported.workflow;
    assert_eq!(wf.parallelism, Some(10));
    assert_eq!(step(wf, "sleep").map.as_ref().unwrap().parallelism, Some(2));
}

#[test]
fn exit_handlers_and_workflow_status() {
    let imported = import(&workflow(
        r#"
  entrypoint: hello
  onExit: bye
  templates:
  - {name: hello, container: {image: alpine}}
  - name: bye
    steps:
    - - {name: ok, template: say, when: "{{workflow.status}} == Succeeded", arguments: {parameters: [{name: m, value: "{{workflow.status}}"}]}}
      - {name: bad, template: say, when: "{{workflow.status}} != Succeeded", arguments: {parameters: [{name: m, value: failed}]}}
  - {name: say, inputs: {parameters: [{name: m}]}, container: {image: alpine, args: ["{{inputs.parameters.m}}"]}}
"#,
    ));
    let wf = &imported.workflow;
    assert_eq!(wf.steps.len(), 1);
    let exits: Vec<&str> = wf.on_exit.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(exits, ["ok", "bad"]);
    let ok = step(wf, "ok");
    assert_eq!(ok.when[0].value.as_ref().unwrap().as_str(), "succeeded");
    assert_eq!(args(ok), ["{{workflow.status}}"]);
}

#[test]
fn a_self_calling_steps_template_is_a_while_loop() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {name: loop, template: again}
  - name: again
    steps:
    - - {name: flip, template: flip}
    - - {name: again, template: again, when: "{{steps.flip.outputs.result}} == tails"}
  - {name: flip, script: {image: python:3.12, command: [python], source: "print('tails')"}}
"#,
    ));
    let wf = &imported.workflow;
    assert_eq!(wf.steps.len(), 1);
    let repeat = step(wf, "loop").repeat.as_ref().unwrap();
    assert_eq!(repeat.condition[0].input, "{{steps.loop.outputs.result}}");
    assert_eq!(repeat.max_iterations, 1000);
    assert!(reported(&imported, "while bound"));
}
