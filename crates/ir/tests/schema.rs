//! The committed JSON Schema matches the types. Regenerate with
//! `COULER_UPDATE_SNAPSHOTS=1 cargo test -p couler-ir --test schema`.

use std::path::PathBuf;

#[test]
fn committed_schema_matches_the_types() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../openapi/ir.schema.json");
    let generated = couler_ir::schema::schema_json();
    if std::env::var_os("COULER_UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "openapi/ir.schema.json is stale; run `COULER_UPDATE_SNAPSHOTS=1 cargo test -p couler-ir --test schema` and commit it"
    );
}

#[test]
fn schema_describes_every_top_level_field() {
    let schema = couler_ir::schema::schema();
    let props = schema["properties"].as_object().unwrap();
    for field in [
        "apiVersion",
        "name",
        "parameters",
        "steps",
        "groups",
        "onExit",
        "parallelism",
        "schedule",
        "labels",
    ] {
        assert!(props.contains_key(field), "missing {field}");
    }
    assert_eq!(schema["additionalProperties"], false);
    let step = &schema["$defs"]["Step"]["properties"];
    for field in [
        "container",
        "script",
        "job",
        "when",
        "map",
        "while",
        "retry",
        "timeout",
        "cache",
        "tune",
    ] {
        assert!(step.get(field).is_some(), "Step lacks {field}");
    }
}

/// Editors validate with the schema, not with our code: every example must
/// pass it, and a typo must fail it.
#[test]
fn examples_satisfy_the_schema() {
    let schema = couler_ir::schema::schema();
    let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples");
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let wf = couler_ir::load(&text, couler_ir::Format::Yaml).unwrap();
        let doc = serde_json::to_value(&wf).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(&doc)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
        let mut typo = doc.clone();
        typo["steps"][0]["timout"] = "5m".into();
        assert!(
            !validator.is_valid(&typo),
            "the schema must reject unknown fields"
        );
    }
}

/// What the validator refuses in a workflow's names, version, step list and
/// parallelism, the schema refuses too, so editors flag it as it is typed.
#[test]
fn the_schema_enforces_names_version_steps_and_parallelism() {
    let validator = jsonschema::validator_for(&couler_ir::schema::schema()).unwrap();
    let good = serde_json::json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "etl-2",
        "steps": [{"name": "a", "container": {"image": "alpine"}}],
        "groups": [{"name": "g", "steps": ["a"]}],
        "parallelism": 1,
    });
    assert!(
        validator.is_valid(&good),
        "{:?}",
        validator.validate(&good).err()
    );
    for (pointer, bad) in [
        ("/apiVersion", serde_json::json!("couler.dev/v1")),
        ("/name", serde_json::json!("ETL")),
        ("/name", serde_json::json!("-etl")),
        ("/name", serde_json::json!("a".repeat(64))),
        ("/steps", serde_json::json!([])),
        ("/steps/0/name", serde_json::json!("a_b")),
        ("/groups/0/steps", serde_json::json!([])),
        ("/parallelism", serde_json::json!(0)),
    ] {
        let mut doc = good.clone();
        *doc.pointer_mut(pointer).unwrap() = bad.clone();
        assert!(
            !validator.is_valid(&doc),
            "{pointer} = {bad} passed the schema"
        );
        let wf: couler_ir::Workflow = serde_json::from_value(doc).unwrap();
        assert!(
            couler_ir::validate(&wf, &couler_ir::Limits::default()).is_err(),
            "{pointer} = {bad} passed the validator"
        );
    }
}

/// What the parser refuses before validation, the schema refuses too: a
/// step that runs nothing (or two things), and text holding a NUL
/// character anywhere, keys and free-form values included.
#[test]
fn the_schema_states_what_the_parser_refuses() {
    let validator = jsonschema::validator_for(&couler_ir::schema::schema()).unwrap();
    let good = serde_json::json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "etl",
        "labels": {"team": "ml"},
        "steps": [{"name": "a", "container": {"image": "alpine"},
                   "hints": {"tolerations": [{"key": "gpu"}]}}],
    });
    assert!(
        validator.is_valid(&good),
        "{:?}",
        validator.validate(&good).err()
    );
    let script = serde_json::json!({"source": "print(1)"});
    for (pointer, bad) in [
        ("/steps/0/container", serde_json::Value::Null),
        ("/steps/0/script", script),
        ("/name", "e\u{0}tl".into()),
        ("/steps/0/container/image", "alp\u{0}ine".into()),
        ("/labels/team", "m\u{0}l".into()),
        ("/labels/team", "-ml".into()),
        ("/labels/a team", "ml".into()),
        ("/labels/Example.com~1team", "ml".into()),
        ("/labels/t\u{0}eam", "ml".into()),
        ("/steps/0/hints/tolerations/0/key", "g\u{0}pu".into()),
        ("/steps/0/hints/tolerations/0/k\u{0}ey", "gpu".into()),
    ] {
        let mut doc = good.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        doc.pointer_mut(parent).unwrap()[key.replace("~1", "/")] = bad.clone();
        assert!(
            !validator.is_valid(&doc),
            "{pointer} = {bad} passed the schema"
        );
        assert!(
            couler_ir::load_value(doc, &couler_ir::Limits::default()).is_err(),
            "{pointer} = {bad} passed the parser"
        );
    }
}
