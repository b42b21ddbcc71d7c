//! Whole documents: cron schedules, names, odd text and what is no workflow.

use super::*;

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
