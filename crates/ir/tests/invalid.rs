//! Invalid documents: each problem is reported with its path and code, all
//! of them at once.

use couler_ir::{Code, Format, Problems, load};

fn problems(yaml: &str) -> Problems {
    load(yaml, Format::Yaml).expect_err("document should be invalid")
}

fn has(problems: &Problems, path: &str, code: Code) -> bool {
    problems.iter().any(|p| p.path == path && p.code == code)
}

#[track_caller]
fn assert_problem(yaml: &str, path: &str, code: Code) {
    let p = problems(yaml);
    assert!(has(&p, path, code), "expected {code} at {path}, got {p}");
}

const HEAD: &str = "apiVersion: couler.dev/v1alpha1\nname: w\n";

fn doc(body: &str) -> String {
    format!("{HEAD}{body}")
}

#[test]
fn syntax_errors_are_reported_not_panicked() {
    let p = problems("steps: [\n");
    assert_eq!(p.0[0].code, Code::Syntax);
    let p = load("{\"apiVersion\": ", Format::Json).unwrap_err();
    assert_eq!(p.0[0].code, Code::Syntax);
    assert!(p.0[0].message.contains("line"), "{}", p.0[0].message);
}

#[test]
fn non_mapping_documents() {
    assert_problem("- a\n- b\n", "", Code::InvalidType);
    assert_problem("42", "", Code::InvalidType);
}

#[test]
fn missing_required_fields_name_the_field() {
    assert_problem("name: w\nsteps: []\n", "/apiVersion", Code::MissingField);
    assert_problem(
        &doc("steps:\n  - container: {image: a}\n"),
        "/steps/0/name",
        Code::MissingField,
    );
}

#[test]
fn every_broken_step_is_reported() {
    let p = problems(&doc(
        "steps:\n  - name: a\n    container: {image: 7}\n    retry: {limit: x}\n  - name: b\n    timeout: soon\n  - name: c\n    container: {image: a}\n    resources: {memory: lots}\n",
    ));
    assert!(has(&p, "/steps/1/timeout", Code::InvalidValue), "{p}");
    assert!(
        has(&p, "/steps/2/resources/memory", Code::InvalidValue),
        "{p}"
    );
    assert!(p.iter().any(|x| x.path.starts_with("/steps/0/")), "{p}");
}

#[test]
fn every_wrong_field_of_a_step_is_reported() {
    let p = problems(&doc(
        "steps:\n  - name: a\n    colour: red\n    container: {image: 7, command: echo, args: a}\n  - name: 7\n    container: {command: [a]}\n",
    ));
    let paths: Vec<(&str, Code)> = p.iter().map(|x| (x.path.as_str(), x.code)).collect();
    // A required field that is wrong (`name`) is reported once, not also
    // as missing; one that is really missing (`image`) still is.
    assert_eq!(
        paths,
        [
            ("/steps/0/colour", Code::UnknownField),
            ("/steps/0/container/args", Code::InvalidType),
            ("/steps/0/container/command", Code::InvalidType),
            ("/steps/0/container/image", Code::InvalidType),
            ("/steps/1/container/image", Code::MissingField),
            ("/steps/1/name", Code::InvalidType),
        ],
        "{p}"
    );
}

#[test]
fn unknown_fields_anywhere() {
    let p = problems(&doc(
        "colour: red\nsteps:\n  - name: a\n    contianer: {}\n    container: {image: a, entrypoint: x}\n",
    ));
    assert!(has(&p, "/colour", Code::UnknownField), "{p}");
    assert!(has(&p, "/steps/0/contianer", Code::UnknownField), "{p}");
    assert!(
        has(&p, "/steps/0/container/entrypoint", Code::UnknownField),
        "{p}"
    );
}

#[test]
fn unsupported_api_version() {
    assert_problem(
        "apiVersion: argoproj.io/v1alpha1\nname: w\nsteps: [{name: a, container: {image: a}}]\n",
        "/apiVersion",
        Code::UnsupportedApiVersion,
    );
}

#[test]
fn empty_workflow() {
    assert_problem(&doc("steps: []\n"), "/steps", Code::EmptyWorkflow);
}

#[test]
fn names_follow_dns_1123() {
    assert_problem(
        "apiVersion: couler.dev/v1alpha1\nname: My_Flow\nsteps: [{name: a, container: {image: a}}]\n",
        "/name",
        Code::InvalidName,
    );
    assert_problem(
        &doc("steps: [{name: Train, container: {image: a}}]\n"),
        "/steps/0/name",
        Code::InvalidName,
    );
    assert_problem(
        &doc("parameters: [{name: 1lr}]\nsteps: [{name: a, container: {image: a}}]\n"),
        "/parameters/0/name",
        Code::InvalidName,
    );
    assert_problem(
        &doc("labels: {\"bad key\": x}\nsteps: [{name: a, container: {image: a}}]\n"),
        "/labels/bad key",
        Code::InvalidName,
    );
}

#[test]
fn duplicate_names() {
    assert_problem(
        &doc("steps: [{name: a, container: {image: a}}, {name: a, container: {image: b}}]\n"),
        "/steps/1/name",
        Code::DuplicateName,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a}}]\ngroups: [{name: a, steps: [a]}]\n"),
        "/groups/0/name",
        Code::DuplicateName,
    );
    assert_problem(
        &doc("parameters: [{name: p}, {name: p}]\nsteps: [{name: a, container: {image: a}}]\n"),
        "/parameters/1/name",
        Code::DuplicateName,
    );
}

#[test]
fn step_kind_is_exactly_one() {
    assert_problem(
        &doc("steps: [{name: a}]\n"),
        "/steps/0",
        Code::InvalidStepKind,
    );
    assert_problem(
        &doc(
            "steps: [{name: a, container: {image: a}, script: {image: a, command: [sh], source: x}}]\n",
        ),
        "/steps/0",
        Code::InvalidStepKind,
    );
}

#[test]
fn unknown_steps_parameters_and_outputs() {
    assert_problem(
        &doc("steps: [{name: a, depends: [ghost], container: {image: a}}]\n"),
        "/steps/0/depends/0",
        Code::UnknownStep,
    );
    assert_problem(
        &doc(
            "steps: [{name: a, container: {image: a, args: ['{{steps.ghost.outputs.result}}']}}]\n",
        ),
        "/steps/0/container/args/0",
        Code::UnknownStep,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a, args: ['{{workflow.parameters.lr}}']}}]\n"),
        "/steps/0/container/args/0",
        Code::UnknownParameter,
    );
    assert_problem(
        &doc(
            "steps:\n  - {name: a, container: {image: a}}\n  - {name: b, container: {image: a, env: [{name: X, value: '{{steps.a.outputs.parameters.acc}}'}]}}\n",
        ),
        "/steps/1/container/env/0/value",
        Code::UnknownOutput,
    );
}

#[test]
fn malformed_references() {
    assert_problem(
        &doc("steps: [{name: a, container: {image: a, args: ['{{steps.a']}}]\n"),
        "/steps/0/container/args/0",
        Code::InvalidReference,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a, args: ['{{inputs.parameters.x}}']}}]\n"),
        "/steps/0/container/args/0",
        Code::InvalidReference,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a, args: ['{{item}}']}}]\n"),
        "/steps/0/container/args/0",
        Code::InvalidReference,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a, args: ['{{workflow.status}}']}}]\n"),
        "/steps/0/container/args/0",
        Code::InvalidReference,
    );
}

#[test]
fn cycles_are_named() {
    let p = problems(&doc(
        "steps:\n  - {name: a, depends: [c], container: {image: a}}\n  - {name: b, depends: [a], container: {image: a}}\n  - {name: c, container: {image: a, args: ['{{steps.b.outputs.result}}']}}\n",
    ));
    let cycle = p
        .iter()
        .find(|x| x.code == Code::Cycle)
        .expect("a cycle problem");
    assert_eq!(cycle.message, "dependency cycle: a → b → c → a");
    assert_eq!(cycle.path, "/steps/0/depends/0");
    // Formed by references alone: at the step, not at a `depends` it lacks.
    let p = problems(&doc("steps:
  - {name: a, container: {image: a, args: ['{{steps.b.outputs.result}}']}}
  - {name: b, container: {image: a, args: ['{{steps.a.outputs.result}}']}}
"));
    let cycle = p
        .iter()
        .find(|x| x.code == Code::Cycle)
        .expect("a cycle problem");
    assert_eq!(cycle.path, "/steps/0");
    assert_problem(
        &doc("steps: [{name: a, depends: [a], container: {image: a}}]\n"),
        "/steps/0/depends/0",
        Code::Cycle,
    );
}

#[test]
fn when_must_read_upstream_steps() {
    let yaml = doc(
        "steps:\n  - {name: a, container: {image: a}}\n  - name: b\n    when: [{input: '{{steps.a.outputs.result}}', operator: eq, value: x}]\n    container: {image: a}\n",
    );
    assert_problem(&yaml, "/steps/1/when/0/input", Code::WhenNotUpstream);
    let fixed = yaml.replace("  - name: b\n", "  - name: b\n    depends: [a]\n");
    load(&fixed, Format::Yaml).unwrap();
}

#[test]
fn condition_operands() {
    assert_problem(
        &doc(
            "steps:\n  - {name: a, container: {image: a}}\n  - {name: b, depends: [a], when: [{input: '{{steps.a.outputs.result}}', operator: in, value: x}], container: {image: a}}\n",
        ),
        "/steps/1/when/0/values",
        Code::MissingField,
    );
    assert_problem(
        &doc(
            "steps:\n  - {name: a, container: {image: a}}\n  - {name: b, depends: [a], when: [{input: '{{steps.a.outputs.result}}', operator: like, value: x}], container: {image: a}}\n",
        ),
        "/steps/1/when/0/operator",
        Code::InvalidValue,
    );
}

#[test]
fn out_of_range_values() {
    assert_problem(
        &doc("parallelism: 0\nsteps: [{name: a, container: {image: a}}]\n"),
        "/parallelism",
        Code::OutOfRange,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a}, retry: {limit: 101}}]\n"),
        "/steps/0/retry/limit",
        Code::OutOfRange,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a}, resources: {gpu: 1000}}]\n"),
        "/steps/0/resources/gpu",
        Code::OutOfRange,
    );
    assert_problem(
        &doc(
            "steps: [{name: a, container: {image: a}, while: {condition: [{input: '{{steps.a.outputs.result}}', operator: eq, value: x}], maxIterations: 0}}]\n",
        ),
        "/steps/0/while/maxIterations",
        Code::OutOfRange,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a}, map: {items: []}}]\n"),
        "/steps/0/map/items",
        Code::OutOfRange,
    );
}

#[test]
fn schedule_must_be_cron() {
    assert_problem(
        &doc("schedule: {cron: 'every tuesday'}\nsteps: [{name: a, container: {image: a}}]\n"),
        "/schedule/cron",
        Code::InvalidValue,
    );
    // Five fields or a macro: no seconds, no years.
    for cron in ["0 0 2 * * *", "0 0 2 * * * 2030"] {
        assert_problem(
            &doc(&format!(
                "schedule: {{cron: '{cron}'}}\nsteps: [{{name: a, container: {{image: a}}}}]\n"
            )),
            "/schedule/cron",
            Code::InvalidValue,
        );
    }
    // Zones come from the tz database, not from their shape.
    assert_problem(
        &doc(
            "schedule: {cron: '@daily', timezone: Mars/Olympus}\nsteps: [{name: a, container: {image: a}}]\n",
        ),
        "/schedule/timezone",
        Code::InvalidValue,
    );
    for ok in [
        "{cron: '@daily'}",
        "{cron: '0 9 * * 5#2', timezone: Australia/Lord_Howe}",
        "{cron: '0 0 L * *'}",
    ] {
        load(
            &doc(&format!(
                "schedule: {ok}\nsteps: [{{name: a, container: {{image: a}}}}]\n"
            )),
            Format::Yaml,
        )
        .unwrap();
    }
}

#[test]
fn secrets_are_references_only() {
    assert_problem(
        &doc(
            "steps: [{name: a, container: {image: a, env: [{name: TOKEN, value: x, secret: {name: s, key: k}}]}}]\n",
        ),
        "/steps/0/container/env/0",
        Code::ConflictingFields,
    );
    assert_problem(
        &doc(
            "steps: [{name: a, container: {image: a, env: [{name: TOKEN, secret: {name: Bad_Secret, key: k}}]}}]\n",
        ),
        "/steps/0/container/env/0/secret/name",
        Code::InvalidName,
    );
}

#[test]
fn tune_blocks() {
    let base = "steps:\n  - name: t\n    container: {image: a, args: ['{{trial.parameters.lr}}']}\n    outputs: {parameters: [{name: loss, path: /tmp/loss}]}\n    tune:\n";
    assert_problem(
        &doc(&format!(
            "{base}      space: {{lr: {{type: double, min: 1, max: 0}}}}\n      objective: {{metric: loss, goal: minimize}}\n      maxTrials: 4\n"
        )),
        "/steps/0/tune/space/lr/max",
        Code::OutOfRange,
    );
    assert_problem(
        &doc(&format!(
            "{base}      space: {{lr: {{type: double, min: 0.1, max: 1}}}}\n      objective: {{metric: acc, goal: maximize}}\n      maxTrials: 4\n"
        )),
        "/steps/0/tune/objective/metric",
        Code::UnknownOutput,
    );
    assert_problem(
        &doc(&format!(
            "{base}      space: {{lr: {{type: double, min: 0.1, max: 1}}}}\n      objective: {{metric: loss, goal: minimize}}\n      strategy: grid\n      maxTrials: 4\n"
        )),
        "/steps/0/tune/space/lr/step",
        Code::MissingField,
    );
    assert_problem(
        &doc(&format!(
            "{base}      space: {{lr: {{type: double, min: 0.1, max: 1}}}}\n      objective: {{metric: loss, goal: minimize}}\n      strategy: halving\n      maxTrials: 4\n"
        )),
        "/steps/0/tune/halving",
        Code::MissingField,
    );
}

#[test]
fn groups_run_side_by_side() {
    assert_problem(
        &doc(
            "steps:\n  - {name: a, container: {image: a}}\n  - {name: b, depends: [a], container: {image: a}}\ngroups: [{name: g, steps: [a, b]}]\n",
        ),
        "/steps/1/depends/0",
        Code::ConflictingFields,
    );
    assert_problem(
        &doc("steps: [{name: a, container: {image: a}}]\ngroups: [{name: g, steps: [ghost]}]\n"),
        "/groups/0/steps/0",
        Code::UnknownStep,
    );
}

#[test]
fn exit_handlers_stay_apart() {
    assert_problem(
        &doc(
            "steps: [{name: a, depends: [bye], container: {image: a}}]\nonExit: [{name: bye, container: {image: a}}]\n",
        ),
        "/steps/0/depends/0",
        Code::InvalidValue,
    );
    load(
        &doc("steps: [{name: a, container: {image: a}}]\nonExit: [{name: bye, container: {image: a, args: ['{{workflow.status}} {{steps.a.outputs.result}}']}}]\n"),
        Format::Yaml,
    )
    .unwrap();
}

#[test]
fn problems_come_in_document_order() {
    let p = problems(&doc(
        "steps:\n  - {name: B, container: {image: a}}\n  - {name: a, container: {image: a}}\n  - {name: a, container: {image: a}}\n  - {name: c, depends: [x], container: {image: a}}\n",
    ));
    let paths: Vec<&str> = p.iter().map(|x| x.path.as_str()).collect();
    assert_eq!(
        paths,
        vec!["/steps/0/name", "/steps/2/name", "/steps/3/depends/0"]
    );
}

#[test]
fn document_size_is_bounded() {
    let limits = couler_ir::Limits {
        max_document_bytes: 100,
        ..Default::default()
    };
    let p = couler_ir::load_with(&"#".repeat(101), Format::Yaml, &limits).unwrap_err();
    assert_eq!(p.0[0].code, Code::DocumentTooLarge);
}

#[test]
fn step_count_is_bounded() {
    let limits = couler_ir::Limits {
        max_steps: 2,
        ..Default::default()
    };
    let yaml = doc(
        "steps: [{name: a, container: {image: a}}, {name: b, container: {image: a}}, {name: c, container: {image: a}}]\n",
    );
    let p = couler_ir::load_with(&yaml, Format::Yaml, &limits).unwrap_err();
    assert!(p.has(Code::TooManySteps), "{p}");
}

#[test]
fn whole_numbers_may_have_a_zero_fraction_but_no_other() {
    let step = "steps:\n  - name: a\n    container: {image: a}\n    retry: {limit: ";
    for (format, text) in [
        (Format::Yaml, doc(&format!("{step}3.0}}\n"))),
        (
            Format::Json,
            r#"{"apiVersion": "couler.dev/v1alpha1", "name": "w", "steps": [{"name": "a", "container": {"image": "a"}, "retry": {"limit": 3.0}}]}"#.to_owned(),
        ),
    ] {
        let workflow = load(&text, format).unwrap();
        assert_eq!(workflow.steps[0].retry.as_ref().unwrap().limit, 3);
    }
    assert_problem(
        &doc(&format!("{step}2.5}}\n")),
        "/steps/0/retry/limit",
        Code::InvalidValue,
    );
    assert_problem(
        &doc(&format!("{step}-1}}\n")),
        "/steps/0/retry/limit",
        Code::InvalidValue,
    );
}
