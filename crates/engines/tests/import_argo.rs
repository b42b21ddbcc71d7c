//! `couler import argo`: one case per mapping, then the public corpus
//! (`../shared/corpus/argo/`, real Argo examples, and `couler-golden/`,
//! what the Couler Python SDK emits): how many import, every imported one
//! compiled back to Argo and accepted by `scripts/validate-argo` (hera's
//! models in strict mode, Argo's JSON Schema, a semantic lint), and the
//! golden files structurally equal after the round trip.

use couler_engines::RunSpec;
use couler_engines::import::{self, ImportError, Imported};
use couler_ir::{Operator, RetryOn, Step, Workflow};
use couler_optimizer::{Facts, Pipeline};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn import(yaml: &str) -> Imported {
    let imported = import::argo(yaml).unwrap_or_else(|e| panic!("import failed: {e}\n{yaml}"));
    couler_ir::validate(&imported.workflow, &couler_ir::Limits::default())
        .unwrap_or_else(|p| panic!("imported workflow is invalid: {p}"));
    imported
}

fn step<'a>(wf: &'a Workflow, name: &str) -> &'a Step {
    wf.steps
        .iter()
        .chain(&wf.on_exit)
        .find(|s| s.name == name)
        .unwrap_or_else(|| {
            let names: Vec<&str> = wf.steps.iter().map(|s| s.name.as_str()).collect();
            panic!("no step {name:?} among {names:?}")
        })
}

fn reported(imported: &Imported, feature: &str) -> bool {
    imported.unsupported.iter().any(|u| u.feature == feature)
}

fn args(s: &Step) -> &[String] {
    &s.container.as_ref().expect("a container step").args
}

const HEADER: &str =
    "apiVersion: argoproj.io/v1alpha1\nkind: Workflow\nmetadata: {generateName: t-}\n";

fn workflow(spec: &str) -> String {
    format!("{HEADER}spec:\n{spec}")
}

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
    assert_eq!(step(wf, "d").depends, ["b", "c"]);
    assert_eq!(args(step(wf, "d")), ["got {{steps.a.outputs.result}}"]);
    let out = &step(wf, "a").outputs.as_ref().unwrap().parameters[0];
    assert_eq!(
        (out.path.as_str(), out.default.as_ref().unwrap().as_str()),
        ("/tmp/out", "0")
    );
}

#[test]
fn richer_depends_expressions_are_reported() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: a, template: t}
      - {name: c, template: t}
      - {name: d, depends: "a && (c.Succeeded || c.Failed)", template: t}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let u = imported
        .unsupported
        .iter()
        .find(|u| u.feature == "depends expression")
        .unwrap();
    assert_eq!(u.path, "/spec/templates/0/dag/tasks/2/depends");
    assert_eq!(step(&imported.workflow, "d").depends, ["a", "c"]);
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
    let u = imported
        .unsupported
        .iter()
        .find(|u| u.feature == "when")
        .unwrap();
    assert_eq!(u.path, "/spec/templates/0/steps/1/3/when");
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
fn artifacts_pass_between_steps() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: make, template: make}
      - name: use
        depends: make
        template: use
        arguments: {artifacts: [{name: data, from: "{{tasks.make.outputs.artifacts.data}}"}]}
  - name: make
    container: {image: alpine, command: [sh, -c, "echo hi > {{outputs.artifacts.data.path}}"]}
    outputs: {artifacts: [{name: data, path: /tmp/data, s3: {key: x}}]}
  - name: use
    inputs: {artifacts: [{name: data, path: /in/data}, {name: other, path: /in/other, http: {url: "https://x"}}]}
    container: {image: alpine, command: [cat, "{{inputs.artifacts.data.path}}", "{{inputs.artifacts.other.path}}"]}
"#,
    ));
    let wf = &imported.workflow;
    let use_ = step(wf, "use");
    let input = &use_.inputs.as_ref().unwrap().artifacts[0];
    assert_eq!(
        (input.from.as_str(), input.path.as_str()),
        ("{{steps.make.outputs.artifacts.data}}", "/in/data")
    );
    assert_eq!(
        use_.container.as_ref().unwrap().command,
        ["cat", "{{inputs.artifacts.data.path}}", "/in/other"]
    );
    assert_eq!(
        step(wf, "make").container.as_ref().unwrap().command[2],
        "echo hi > {{outputs.artifacts.data.path}}"
    );
    assert!(reported(&imported, "artifact s3"));
    assert!(reported(&imported, "artifact http"));
}

#[test]
fn container_and_script_bodies() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  nodeSelector: {pool: cpu}
  templates:
  - name: main
    steps:
    - - {name: c, template: c}
      - {name: s, template: s}
  - name: c
    tolerations: [{key: gpu, operator: Exists}]
    container:
      image: alpine
      command: [sh, -c]
      args: ["echo $A"]
      workingDir: /work
      env:
      - {name: A, value: "1"}
      - {name: NOTHING, value: null}
      - {name: TOKEN, valueFrom: {secretKeyRef: {name: creds, key: token}}}
      - {name: CM, valueFrom: {configMapKeyRef: {name: cm, key: k}}}
      resources:
        requests: {cpu: 500m, memory: 1Gi}
        limits: {cpu: "1", nvidia.com/gpu: 1}
      volumeMounts: [{name: v, mountPath: /v}]
  - name: s
    script: {image: python:3.12, command: [python], source: "print(1)"}
"#,
    ));
    let wf = &imported.workflow;
    let c = step(wf, "c");
    let container = c.container.as_ref().unwrap();
    assert_eq!(container.working_dir.as_deref(), Some("/work"));
    let env: Vec<(&str, Option<&str>, bool)> = container
        .env
        .iter()
        .map(|e| (e.name.as_str(), e.value.as_deref(), e.secret.is_some()))
        .collect();
    assert_eq!(
        env,
        [
            ("A", Some("1"), false),
            ("NOTHING", Some(""), false),
            ("TOKEN", None, true)
        ]
    );
    let r = c.resources.as_ref().unwrap();
    assert_eq!(
        (r.cpu.unwrap().millis(), r.memory.unwrap().bytes(), r.gpu),
        (500, 1 << 30, Some(1))
    );
    let hints = c.hints.as_ref().unwrap();
    assert_eq!(hints.node_selector["pool"], "cpu");
    assert_eq!(hints.tolerations.len(), 1);
    let script = step(wf, "s").script.as_ref().unwrap();
    assert_eq!(
        (script.command.as_slice(), script.source.as_str()),
        (&["python".to_owned()][..], "print(1)")
    );
    for feature in ["env configMapKeyRef", "volumeMounts", "resources.limits"] {
        assert!(
            reported(&imported, feature),
            "{feature} not reported: {:?}",
            imported.unsupported
        );
    }
}

#[test]
fn retries_timeouts_labels_and_parameters() {
    let imported = import(
        r#"
apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: Retry_Me
  labels: {team: ml}
  annotations: {workflows.argoproj.io/description: "Retries.", other: x}
spec:
  entrypoint: main
  arguments:
    parameters:
    - {name: who, value: world, enum: [world, moon], description: Whom to greet.}
  templates:
  - name: main
    inputs: {parameters: [{name: who}, {name: extra, value: "7"}]}
    activeDeadlineSeconds: 600
    retryStrategy:
      limit: "3"
      retryPolicy: OnTransientError
      backoff: {duration: "1m30s", factor: "2", cap: "2m", maxDuration: "5m"}
    container: {image: alpine, args: ["{{inputs.parameters.who}} {{workflow.parameters.who}} {{inputs.parameters.extra}} {{workflow.name}} {{pod.name}}"]}
"#,
    );
    let wf = &imported.workflow;
    assert_eq!(
        (wf.name.as_str(), wf.description.as_deref()),
        ("retry-me", Some("Retries."))
    );
    assert_eq!(wf.labels["team"], "ml");
    let who = &wf.parameters[0];
    assert_eq!(
        (who.default.as_ref().unwrap().as_str(), who.allowed.len()),
        ("world", 2)
    );
    let main = step(wf, "main");
    assert_eq!(
        args(main),
        ["{{workflow.parameters.who}} {{workflow.parameters.who}} 7 {{workflow.name}} %pod.name%"]
    );
    let retry = main.retry.as_ref().unwrap();
    assert_eq!((retry.limit, retry.on), (3, RetryOn::Transient));
    let backoff = retry.backoff.as_ref().unwrap();
    assert_eq!(backoff.duration.as_std().as_secs(), 90);
    assert_eq!(
        (
            backoff.factor,
            backoff.max_duration.unwrap().as_std().as_secs()
        ),
        (Some(2), 120)
    );
    assert_eq!(main.timeout.unwrap().as_std().as_secs(), 600);
    for feature in ["backoff.maxDuration", "{{pod.name}}", "annotation"] {
        assert!(
            reported(&imported, feature),
            "{feature} not reported: {:?}",
            imported.unsupported
        );
    }
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
fn a_step_after_a_skippable_step_waits_for_its_upstream_instead() {
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
  - {name: t, container: {image: alpine}}
"#,
    ));
    // Argo runs `after` whichever branch ran; Couler would skip it behind
    // the skipped branch.
    assert_eq!(step(&imported.workflow, "after").depends, ["flip"]);
    let u = imported
        .unsupported
        .iter()
        .find(|u| u.feature == "skipped dependency")
        .unwrap();
    assert_eq!(u.path, "/spec/templates/0/steps/2/0");
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
    assert!(reported(&imported, "recursion"));
}

#[test]
fn unsupported_tasks_are_left_out_and_bridged() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  volumes: [{name: v, emptyDir: {}}]
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
    assert_eq!(paths["volumes"], "/spec/volumes");
    assert_eq!(paths["suspend template"], "/spec/templates/1/suspend");
    assert_eq!(
        paths["templateRef"],
        "/spec/templates/0/dag/tasks/2/templateRef"
    );
    assert_eq!(paths["sidecars"], "/spec/templates/2/sidecars");
}

#[test]
fn cron_workflows_keep_their_schedule() {
    let imported = import(
        r#"
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: nightly}
spec:
  schedule: "0 2 * * *"
  timezone: Europe/Berlin
  concurrencyPolicy: Replace
  workflowSpec:
    entrypoint: main
    templates:
    - {name: main, container: {image: alpine}}
"#,
    );
    let schedule = imported.workflow.schedule.as_ref().unwrap();
    assert_eq!(
        (schedule.cron.as_str(), schedule.timezone.as_deref()),
        ("0 2 * * *", Some("Europe/Berlin"))
    );
    assert_eq!(imported.unsupported[0].path, "/spec/concurrencyPolicy");
}

#[test]
fn a_schedule_the_ir_rejects_is_reported() {
    let imported = import(
        r#"
apiVersion: argoproj.io/v1alpha1
kind: CronWorkflow
metadata: {name: odd}
spec:
  schedules: ["every now and then"]
  workflowSpec:
    entrypoint: main
    templates:
    - {name: main, container: {image: alpine}}
"#,
    );
    assert!(imported.workflow.schedule.is_none());
    assert_eq!(imported.unsupported[0].path, "/spec/schedules/0");
}

#[test]
fn names_are_normalised_and_unique() {
    let imported = import(&workflow(
        r#"
  entrypoint: main
  templates:
  - name: main
    dag:
      tasks:
      - {name: Step_One, template: t}
      - {name: step-one, template: t}
      - {name: "step.one", template: t}
  - {name: t, container: {image: alpine}}
"#,
    ));
    let names: Vec<&str> = imported
        .workflow
        .steps
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert_eq!(names, ["step-one", "step-one-2", "step-one-3"]);
}

#[test]
fn odd_text_is_reported_where_it_stands() {
    let long = "x".repeat(80);
    let imported = import(&format!(
        r#"apiVersion: argoproj.io/v1alpha1
kind: Workflow
metadata:
  name: odd
  labels: {{"example.com/Bad Key": x}}
spec:
  entrypoint: main
  templates:
  - name: main
    steps:
    - - {{name: a, template: t}}
    - - {{name: {long}, template: t, when: "5 < {{{{steps.a.outputs.result}}}}"}}
      - {{name: never, template: t, when: "false"}}
      - {{name: status, template: t, when: "{{{{steps.a.status}}}} == Failed"}}
  - {{name: t, container: {{image: alpine, args: ["{{{{oops"]}}}}
"#
    ));
    let wf = &imported.workflow;
    let long_step = wf.steps.iter().find(|s| s.name.starts_with("xxx")).unwrap();
    assert_eq!(long_step.name.len(), 63);
    assert_eq!(long_step.when[0].operator, Operator::Gt);
    let never = &step(wf, "never").when[0];
    assert_eq!(
        (never.input.as_str(), never.value.as_ref().unwrap().as_str()),
        ("false", "true")
    );
    assert!(!wf.steps.iter().any(|s| s.name == "status"));
    assert_eq!(args(step(wf, "a")), ["%{oops"]);
    let paths: BTreeMap<&str, &str> = imported
        .unsupported
        .iter()
        .map(|u| (u.feature.as_str(), u.path.as_str()))
        .collect();
    assert_eq!(paths["label"], "/metadata/labels/example.com~1Bad Key");
    assert_eq!(paths["{{"], "/spec/templates/1/container/args/0");
    assert_eq!(
        paths["{{steps.*.status}}"],
        "/spec/templates/0/steps/1/2/when"
    );
}

#[test]
fn documents_that_are_no_workflow_are_errors() {
    let err = |yaml: &str| import::argo(yaml).expect_err("an error");
    assert!(matches!(err("a: [b"), ImportError::Syntax(_)));
    assert!(matches!(
        err("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n"),
        ImportError::NotAWorkflow(_)
    ));
    assert!(matches!(
        err(&workflow("  workflowTemplateRef: {name: x}\n")),
        ImportError::NoEntrypoint(_)
    ));
    assert!(matches!(
        err(&workflow("  entrypoint: nope\n  templates: []\n")),
        ImportError::NoEntrypoint(_)
    ));
    match err(&workflow(
        "  entrypoint: main\n  templates:\n  - {name: main, resource: {action: create, manifest: x}}\n",
    )) {
        ImportError::Nothing { unsupported } => {
            assert_eq!(unsupported[0].path, "/spec/templates/0/resource")
        }
        other => panic!("{other}"),
    }
}

// ---------------------------------------------------------------------
// The public corpus.

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn corpus(folder: &str) -> Option<Vec<PathBuf>> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/corpus")
        .join(folder);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        eprintln!("skipping: the corpus folder {} is absent", dir.display());
        return None;
    };
    let mut files: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yaml"))
        .collect();
    files.sort();
    Some(files)
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Compiles an imported workflow to Argo (parameters without a default
/// get a placeholder value, as a run would be given one).
fn compile_back(wf: &Workflow) -> Result<couler_engines::compile::Manifest, String> {
    let parameters = wf
        .parameters
        .iter()
        .map(|p| {
            let value = p
                .default
                .as_ref()
                .or(p.allowed.first())
                .map_or("x", |v| v.as_str());
            (p.name.clone(), value.to_owned())
        })
        .collect();
    let facts = Facts {
        parameters,
        ..Facts::default()
    };
    let plan = Pipeline::default()
        .plan(wf.clone(), &facts, |_, f| f())
        .map_err(|e| format!("plan: {e}"))?;
    couler_engines::compile::compile("argo", &plan, &RunSpec::new("t", "r", 1))
        .map_err(|e| e.to_string())
}

/// Writes manifests under a fresh directory and runs scripts/validate-argo
/// on it; returns its problem lines.
fn validate_argo(dir: &Path) -> Vec<String> {
    let script = repo_root().join("scripts/validate-argo");
    assert!(
        script.exists(),
        "waiting for the Argo compiler: scripts/validate-argo does not exist yet"
    );
    let out = Command::new(&script)
        .arg(dir)
        .output()
        .expect("run scripts/validate-argo");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let problems: Vec<String> = stdout
        .lines()
        .filter(|l| !l.starts_with("validate-argo:"))
        .map(str::to_owned)
        .collect();
    assert!(
        out.status.success() || !problems.is_empty(),
        "scripts/validate-argo failed: {}{}",
        stdout,
        String::from_utf8_lossy(&out.stderr)
    );
    problems
}

fn fresh_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_manifest(dir: &Path, stem: &str, manifest: &couler_engines::compile::Manifest) {
    let sub = dir.join(stem);
    std::fs::create_dir_all(&sub).unwrap();
    for f in &manifest.files {
        std::fs::write(sub.join(&f.name), &f.content).unwrap();
    }
}

/// The placeholder the Argo compiler returned while it was being written.
fn compiler_missing(error: &str) -> bool {
    error.contains("being written")
}

#[test]
fn argo_corpus_imports_and_round_trips() {
    let Some(files) = corpus("argo") else { return };
    let out_dir = fresh_dir("import-argo-corpus");
    let mut rows = Vec::new();
    let (mut clean, mut warned, mut failed) = (0, 0, 0);
    let mut features: BTreeMap<String, usize> = BTreeMap::new();
    let mut failures: BTreeMap<&str, usize> = BTreeMap::new();
    let mut compile_errors = Vec::new();
    let mut compiled = 0;
    for path in &files {
        let name = file_name(path);
        let yaml = std::fs::read_to_string(path).unwrap();
        match import::argo(&yaml) {
            Ok(imported) => {
                couler_ir::validate(&imported.workflow, &couler_ir::Limits::default())
                    .unwrap_or_else(|p| panic!("{name}: the imported workflow is invalid: {p}"));
                let wf = &imported.workflow;
                let n = imported.unsupported.len();
                if n == 0 {
                    clean += 1;
                } else {
                    warned += 1;
                }
                for u in &imported.unsupported {
                    *features.entry(u.feature.clone()).or_default() += 1;
                }
                rows.push(format!(
                    "{name:<70} {:<8} {:>5} {:>5}",
                    "yes",
                    wf.steps.len() + wf.on_exit.len(),
                    n
                ));
                match compile_back(wf) {
                    Ok(manifest) => {
                        write_manifest(&out_dir, name.trim_end_matches(".yaml"), &manifest);
                        compiled += 1;
                    }
                    Err(e) if compiler_missing(&e) => {
                        panic!("waiting for the Argo compiler: compile still answers {e:?}")
                    }
                    Err(e) => compile_errors.push(format!("{name}: {e}")),
                }
            }
            Err(e) => {
                failed += 1;
                let kind = match &e {
                    ImportError::Syntax(_) => "not YAML",
                    ImportError::NotAWorkflow(_) => "not a workflow",
                    ImportError::NoEntrypoint(_) => "no entrypoint of their own",
                    ImportError::Nothing { .. } => "nothing importable",
                    ImportError::Invalid(_) => "INVALID IR",
                };
                *failures.entry(kind).or_default() += 1;
                let why = match &e {
                    ImportError::Nothing { unsupported } => {
                        let features: BTreeSet<&str> =
                            unsupported.iter().map(|u| u.feature.as_str()).collect();
                        format!(
                            "nothing importable: {}",
                            features.into_iter().collect::<Vec<_>>().join(", ")
                        )
                    }
                    other => other.to_string(),
                };
                rows.push(format!(
                    "{name:<70} {:<8} {:>5} {:>5}  {}",
                    "no",
                    "-",
                    "-",
                    why.chars().take(90).collect::<String>()
                ));
            }
        }
    }
    let mut report = String::new();
    report.push_str(&format!(
        "{:<70} {:<8} {:>5} {:>5}\n",
        "file", "imported", "steps", "unsup"
    ));
    for row in &rows {
        report.push_str(row);
        report.push('\n');
    }
    let why: Vec<String> = failures.iter().map(|(k, n)| format!("{n} {k}")).collect();
    report.push_str(&format!(
        "\nargo corpus: {} files: {clean} import cleanly, {warned} import with warnings, {failed} fail ({})\n",
        files.len(),
        why.join(", ")
    ));
    let mut by_count: Vec<(&String, &usize)> = features.iter().collect();
    by_count.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    report.push_str("most reported (feature: places):\n");
    for (f, n) in by_count.iter().take(15) {
        report.push_str(&format!("  {n:>4}  {f}\n"));
    }
    let problems = validate_argo(&out_dir);
    report.push_str(&format!(
        "round trip: {compiled} of {} imported compile back to Argo ({} compile errors); validate-argo (hera strict) on the {compiled}: {} problems\n",
        clean + warned,
        compile_errors.len(),
        problems.len()
    ));
    for e in &compile_errors {
        report.push_str(&format!("  compile: {e}\n"));
    }
    for p in &problems {
        report.push_str(&format!("  validate: {p}\n"));
    }
    println!("{report}");
    assert!(
        !failures.contains_key("INVALID IR"),
        "the importer built invalid IR:\n{report}"
    );
    assert!(
        compile_errors.is_empty() && problems.is_empty(),
        "round trip failed:\n{report}"
    );
    // Measured floor: what imports today must keep importing.
    assert!(
        clean >= 26 && clean + warned >= 115,
        "fewer imports than measured:\n{report}"
    );
}

// ---------------------------------------------------------------------
// Structure of an Argo workflow: its steps flattened as the importer
// names them, and the dependency edges between them.

type Structure = (BTreeSet<String>, BTreeSet<(String, String)>);

fn norm(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars().map(|c| c.to_ascii_lowercase()) {
        if c.is_ascii_alphanumeric() {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    out.trim_matches('-').to_owned()
}

struct Walker<'a> {
    templates: BTreeMap<&'a str, &'a Value>,
    nodes: BTreeSet<String>,
    edges: BTreeSet<(String, String)>,
}

impl<'a> Walker<'a> {
    fn new(spec: &'a Value) -> Self {
        let templates = spec["templates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| Some((t["name"].as_str()?, t)))
            .collect();
        Walker {
            templates,
            nodes: BTreeSet::new(),
            edges: BTreeSet::new(),
        }
    }

    fn calls_itself(t: &Value, name: &str) -> bool {
        let calls = t["steps"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_array)
            .flatten();
        let tasks = t["dag"]["tasks"].as_array().into_iter().flatten();
        calls
            .chain(tasks)
            .any(|c| c["template"].as_str() == Some(name))
    }

    /// Walks a call of `template` named `name`; returns its last steps.
    fn call(&mut self, template: &str, name: &str, upstream: &[String]) -> Vec<String> {
        let t = self.templates[template];
        let composite = t.get("dag").is_some() || t.get("steps").is_some();
        if !composite || Self::calls_itself(t, template) {
            let node = norm(name);
            for u in upstream {
                self.edges.insert((u.clone(), node.clone()));
            }
            self.nodes.insert(node.clone());
            return vec![node];
        }
        let join = |n: &str| {
            if name.is_empty() {
                n.to_owned()
            } else {
                format!("{name}-{n}")
            }
        };
        if let Some(groups) = t["steps"].as_array() {
            let mut previous = upstream.to_vec();
            for group in groups.iter().filter_map(Value::as_array) {
                let mut exits = Vec::new();
                for s in group {
                    exits.extend(self.call(
                        s["template"].as_str().unwrap(),
                        &join(s["name"].as_str().unwrap()),
                        &previous,
                    ));
                }
                previous = exits;
            }
            return previous;
        }
        let tasks = t["dag"]["tasks"].as_array().unwrap();
        let deps = |task: &Value| -> Vec<String> {
            let mut d: Vec<String> = task["dependencies"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|x| x.as_str().map(str::to_owned))
                .collect();
            if let Some(e) = task["depends"].as_str() {
                d.extend(
                    e.split(|c: char| {
                        !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
                    })
                    .filter(|w| !w.is_empty())
                    .map(|w| w.split('.').next().unwrap().to_owned()),
                );
            }
            d
        };
        let mut exits_of: BTreeMap<String, Vec<String>> = BTreeMap::new();
        let mut waited = BTreeSet::new();
        while exits_of.len() < tasks.len() {
            let before = exits_of.len();
            for task in tasks {
                let n = task["name"].as_str().unwrap().to_owned();
                let d = deps(task);
                if exits_of.contains_key(&n) || !d.iter().all(|x| exits_of.contains_key(x)) {
                    continue;
                }
                let up: Vec<String> = if d.is_empty() {
                    upstream.to_vec()
                } else {
                    d.iter().flat_map(|x| exits_of[x].clone()).collect()
                };
                waited.extend(d);
                let exits = self.call(task["template"].as_str().unwrap(), &join(&n), &up);
                exits_of.insert(n, exits);
            }
            assert!(exits_of.len() > before, "a dependency cycle");
        }
        exits_of
            .into_iter()
            .filter(|(n, _)| !waited.contains(n))
            .flat_map(|(_, e)| e)
            .collect()
    }
}

/// The main DAG's and the exit handler's structure of an Argo document.
fn structure(doc: &Value) -> (Structure, Structure) {
    let spec = if doc["kind"] == "CronWorkflow" {
        &doc["spec"]["workflowSpec"]
    } else {
        &doc["spec"]
    };
    let part = |entry: Option<&str>| {
        let mut w = Walker::new(spec);
        if let Some(entry) = entry {
            let t = w.templates[entry];
            let name = if t.get("dag").is_some() || t.get("steps").is_some() {
                ""
            } else {
                entry
            };
            w.call(entry, name, &[]);
        }
        (w.nodes, w.edges)
    };
    (
        part(spec["entrypoint"].as_str()),
        part(spec["onExit"].as_str()),
    )
}

fn yaml_value(text: &str) -> Value {
    serde_saphyr::from_str(text).expect("YAML")
}

#[test]
fn couler_golden_files_round_trip_with_the_same_structure() {
    let Some(files) = corpus("couler-golden") else {
        return;
    };
    let out_dir = fresh_dir("import-argo-golden");
    let mut report = String::new();
    let (mut imported_n, mut equal) = (0, 0);
    let mut different = Vec::new();
    for path in &files {
        let name = file_name(path);
        let yaml = std::fs::read_to_string(path).unwrap();
        let imported = match import::argo(&yaml) {
            Ok(i) => i,
            Err(e) => {
                report.push_str(&format!("{name:<36} import failed: {e}\n"));
                continue;
            }
        };
        imported_n += 1;
        let manifest = match compile_back(&imported.workflow) {
            Ok(m) => m,
            Err(e) if compiler_missing(&e) => {
                panic!("waiting for the Argo compiler: compile still answers {e:?}")
            }
            Err(e) => panic!("{name}: does not compile back to Argo: {e}"),
        };
        write_manifest(&out_dir, name.trim_end_matches(".yaml"), &manifest);
        let workflow_file = manifest
            .files
            .iter()
            .find(|f| f.name == "workflow.yaml")
            .expect("a Workflow");
        let original = structure(&yaml_value(&yaml));
        let compiled = structure(&yaml_value(&workflow_file.content));
        let same = original == compiled;
        if same {
            equal += 1;
        } else {
            different.push(name.clone());
        }
        report.push_str(&format!(
            "{name:<36} steps {:>2}  edges {:>2}  unsupported {:>2}  {}\n",
            original.0.0.len() + original.1.0.len(),
            original.0.1.len() + original.1.1.len(),
            imported.unsupported.len(),
            if same {
                "equal".to_owned()
            } else {
                format!("DIFFERENT\n    original {original:?}\n    compiled {compiled:?}")
            }
        ));
    }
    let problems = validate_argo(&out_dir);
    report.push_str(&format!(
        "\ncouler-golden: {} files, {imported_n} import, {equal} structurally equal after import → compile; validate-argo: {} problems\n",
        files.len(),
        problems.len()
    ));
    for p in &problems {
        report.push_str(&format!("  validate: {p}\n"));
    }
    println!("{report}");
    assert!(problems.is_empty(), "{report}");
    assert_eq!(imported_n, files.len(), "{report}");
    // Measured: every golden file keeps its structure, except where Argo
    // runs a step after a skipped one (Couler would skip it): there the
    // importer waits for the skipped step's upstream instead, dropping
    // that edge (reported as `skipped dependency`).
    let known: &[&str] = &["workflow_basic_golden.yaml"];
    let unexpected: Vec<&String> = different
        .iter()
        .filter(|d| !known.contains(&d.as_str()))
        .collect();
    assert!(
        unexpected.is_empty(),
        "structure changed in {unexpected:?}:\n{report}"
    );
}
