//! The rules the server enforces on requests, stated in the document where
//! utoipa's model cannot state them: text without NUL characters (Postgres
//! cannot store one), "a stored workflow or an inline one", the cache
//! invalidation's one selector, what a step template holds, and the links
//! from a created resource to the operations on it.
//!
//! What no schema can state is said in the operations' descriptions and
//! listed, with its reason, in `scripts/schemathesis.toml`: a cursor must be
//! one this API issued, an expiry must be in the future, a workflow must be
//! valid as a whole (names resolve, no cycles), a description must be one
//! the planner can read, an imported manifest must be an Argo workflow.

use couler_ir::schema::{ANY_JSON, any_json, forbid_nul};
use serde_json::{Map, Value, json};

/// Whitespace as Rust's `str::trim` sees it (Unicode `White_Space`), for
/// character classes: Python's and ECMAScript's `\s` differ from it.
macro_rules! white_space {
    () => {
        "\\t-\\r \\u0085\\u00A0\\u1680\\u2000-\\u200A\\u2028\\u2029\\u202F\\u205F\\u3000"
    };
}

/// Text with something besides whitespace in it, and no NUL character.
pub const NOT_BLANK: &str = concat!("^[^\\u0000]*[^\\u0000", white_space!(), "][^\\u0000]*$");

/// A label selector, `key=value[,key=value…]`, as [`crate::wire::parse_labels`]
/// reads it: blank entries are skipped.
const LABEL_SELECTOR: &str = concat!(
    "^([",
    white_space!(),
    "]*|[^,\\u0000]*=[^,\\u0000]*)(,([",
    white_space!(),
    "]*|[^,\\u0000]*=[^,\\u0000]*))*$"
);

const ANY_REF: &str = "#/components/schemas/JsonValue";

/// Writes the rules into `doc` (the document as JSON).
pub fn state(doc: &mut Value) {
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("the document has schemas");
    workflow_or_ir(schemas);
    invalidation_selector(schemas);
    step_templates(schemas);
    run_labels(schemas);
    not_blank(schemas);
    webhook_settings(schemas);
    schedule_creation(doc);
    webhook_creation(doc);
    label_selectors(doc);
    forbid_nul_in_requests(doc);
    links(doc);
}

/// A request naming a stored `workflow` (with an optional `version`) or
/// giving an inline one as `ir`: exactly one of them
/// ([`crate::body::choose_workflow`]).
fn workflow_or_ir(schemas: &mut Map<String, Value>) {
    for schema in schemas.values_mut() {
        let properties = &schema["properties"];
        if properties.get("workflow").is_none() || properties.get("ir").is_none() {
            continue;
        }
        schema["oneOf"] = json!([
            {"required": ["workflow"], "properties": {"workflow": {"type": "string"}, "ir": {"type": "null"}}},
            {"required": ["ir"], "properties": {"ir": {"not": {"type": "null"}}, "workflow": {"type": "null"}, "version": {"type": "null"}}},
        ]);
    }
}

/// Exactly one selector: `workflow` with `step`, `image`, `version` or
/// `all: true`, each non-blank (`cache::selector`).
fn invalidation_selector(schemas: &mut Map<String, Value>) {
    let fields = ["workflow", "step", "image", "version", "all"];
    let only = |given: &[(&str, Value)]| {
        let mut properties = Map::new();
        for field in fields {
            let rule = given
                .iter()
                .find(|(name, _)| *name == field)
                .map_or_else(|| json!({"type": "null"}), |(_, rule)| rule.clone());
            properties.insert(field.into(), rule);
        }
        let required: Vec<&str> = given.iter().map(|(name, _)| *name).collect();
        json!({"required": required, "properties": properties})
    };
    let text = || json!({"type": "string", "pattern": NOT_BLANK});
    if let Some(schema) = schemas.get_mut("InvalidateRequest") {
        schema["oneOf"] = json!([
            only(&[("workflow", text()), ("step", text())]),
            only(&[("image", text())]),
            only(&[("version", text())]),
            only(&[("all", json!({"type": "boolean", "const": true}))]),
        ]);
    }
}

/// A run's labels are checked as a workflow's are (`runs::check_labels`).
fn run_labels(schemas: &mut Map<String, Value>) {
    for schema in ["CreateRun", "RunOptions", "ScheduleSettings"] {
        let labels = &mut schemas[schema]["properties"]["labels"];
        assert!(labels.is_object(), "{schema} has no labels");
        *labels = couler_ir::schema::labels();
    }
}

/// A new schedule names itself (not `default`, which is the workflow's
/// own) and its crons; an edit may leave either out (`schedules::create`).
fn schedule_creation(doc: &mut Value) {
    let body = &mut doc["paths"]["/v1/workflows/{workflow}/schedules"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"];
    assert!(body.is_object(), "schedules are created with a body");
    *body = json!({"allOf": [body.clone(), {
        "required": ["slug", "crons"],
        "properties": {
            "slug": {"type": "string", "not": {"enum": ["default"]}},
            "crons": {"type": "array", "items": {"type": "string"}},
        },
    }]});
}

/// A webhook trigger's parameter map reads JSON pointers; its filter
/// names headers (with visible ASCII values) and pointers, at most 16 of
/// each (`hooks::wire`).
fn webhook_settings(schemas: &mut Map<String, Value>) {
    use crate::hooks::{HEADER_NAME_PATTERN, POINTER_PATTERN};
    let map = &mut schemas["WebhookSettings"]["properties"]["parameter_map"];
    assert!(map.is_object(), "WebhookSettings has no parameter_map");
    *map = json!({
        "type": ["object", "null"],
        "description": map["description"],
        "additionalProperties": {"type": "string", "pattern": POINTER_PATTERN},
    });
    let filter = &mut schemas["WebhookFilter"]["properties"];
    assert!(filter.is_object(), "WebhookFilter has no properties");
    filter["headers"]["propertyNames"] = json!({"pattern": HEADER_NAME_PATTERN});
    filter["headers"]["additionalProperties"] = json!({"type": "string", "pattern": "^[\\t -~]*$"});
    filter["payload"]["propertyNames"] = json!({"pattern": POINTER_PATTERN});
    for kind in ["headers", "payload"] {
        filter[kind]["maxProperties"] = json!(crate::hooks::MAX_FILTERS);
    }
}

/// A new trigger names itself and its scheme; an edit may leave either
/// out (`hooks::create_trigger`).
fn webhook_creation(doc: &mut Value) {
    let body = &mut doc["paths"]["/v1/workflows/{workflow}/triggers"]["post"]["requestBody"]["content"]
        ["application/json"]["schema"];
    assert!(body.is_object(), "triggers are created with a body");
    *body = json!({"allOf": [body.clone(), {
        "required": ["name", "auth"],
        "properties": {"name": {"type": "string"}, "auth": {"type": "string"}},
    }]});
}

/// Text the server trims and refuses when nothing is left.
fn not_blank(schemas: &mut Map<String, Value>) {
    const FIELDS: &[(&str, &str)] = &[
        ("CreateApiKey", "name"),
        ("GenerateBody", "description"),
        ("FeedbackBody", "text"),
        ("StepTemplate", "description"),
    ];
    for (schema, field) in FIELDS {
        let property = &mut schemas[*schema]["properties"][*field];
        assert!(property.is_object(), "{schema} has no {field}");
        property["pattern"] = NOT_BLANK.into();
    }
}

/// Every `label` query parameter is a selector.
fn label_selectors(doc: &mut Value) {
    for item in doc["paths"].as_object_mut().into_iter().flatten() {
        for (_, operation) in item.1.as_object_mut().into_iter().flatten() {
            let parameters = operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut);
            for parameter in parameters.into_iter().flatten() {
                if parameter["name"] == "label" && parameter["in"] == "query" {
                    parameter["schema"]["pattern"] = LABEL_SELECTOR.into();
                }
            }
        }
    }
}

/// A step template's kind and needs are the planner's, its id is not a
/// built-in one, and its step is an IR step without a name
/// (`step_library::validate`).
fn step_templates(schemas: &mut Map<String, Value>) {
    use couler_nl::decompose::TaskKind;
    use couler_nl::library::Need;
    let kinds: Vec<&str> = TaskKind::ALL.iter().map(|k| k.as_str()).collect();
    let needs: Vec<Value> = Need::ALL
        .iter()
        .map(|n| serde_json::to_value(n).expect("needs serialize"))
        .collect();
    let builtin: Vec<&str> = crate::step_library::builtin_ids().collect();
    let mut step = schemas["Step"].clone();
    step["properties"]
        .as_object_mut()
        .expect("a step has properties")
        .remove("name");
    if let Some(required) = step["required"].as_array_mut() {
        required.retain(|r| r != "name");
    }
    step["description"] =
        "An IR step without its `name` (the planner names each step it places).".into();
    schemas.insert("TemplateStep".into(), step);
    let Some(template) = schemas.get_mut("StepTemplate") else {
        return;
    };
    let properties = &mut template["properties"];
    properties["kind"]["enum"] = json!(kinds);
    properties["needs"]["items"] = json!({"enum": needs});
    properties["id"]["pattern"] = couler_ir::names::DNS_LABEL_PATTERN.into();
    properties["id"]["not"] = json!({"enum": builtin});
    properties["step"] = json!({"$ref": "#/components/schemas/TemplateStep"});
}

/// States that no text in a request may hold a NUL character: in the
/// schemas requests use (and what they refer to), and in parameters.
fn forbid_nul_in_requests(doc: &mut Value) {
    let mut used = false;
    let mut names = Vec::new();
    for item in doc["paths"].as_object_mut().into_iter().flatten() {
        for (_, operation) in item.1.as_object_mut().into_iter().flatten() {
            let Some(operation) = operation.as_object_mut() else {
                continue;
            };
            for parameter in operation
                .get_mut("parameters")
                .and_then(Value::as_array_mut)
                .into_iter()
                .flatten()
            {
                referred(&parameter["schema"], &mut names);
                used |= forbid_nul(&mut parameter["schema"], ANY_REF);
            }
            if let Some(body) = operation.get_mut("requestBody") {
                for (_, media) in body["content"].as_object_mut().into_iter().flatten() {
                    referred(&media["schema"], &mut names);
                    used |= forbid_nul(&mut media["schema"], ANY_REF);
                }
            }
        }
    }
    let schemas = doc["components"]["schemas"]
        .as_object_mut()
        .expect("schemas");
    let mut seen = std::collections::BTreeSet::new();
    while let Some(name) = names.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(schema) = schemas.get_mut(&name) {
            referred(schema, &mut names);
            used |= forbid_nul(schema, ANY_REF);
        }
    }
    if used {
        schemas.insert(ANY_JSON.into(), any_json(ANY_REF));
    }
}

/// The components `schema` refers to, directly.
fn referred(schema: &Value, names: &mut Vec<String>) {
    match schema {
        Value::Object(o) => {
            if let Some(Value::String(r)) = o.get("$ref")
                && let Some(name) = r.strip_prefix("#/components/schemas/")
            {
                names.push(name.to_owned());
            }
            o.values().for_each(|v| referred(v, names));
        }
        Value::Array(items) => items.iter().for_each(|v| referred(v, names)),
        _ => {}
    }
}

/// From a created resource to the operations on it: clients (and
/// schemathesis's stateful phase) follow these instead of guessing ids.
fn links(doc: &mut Value) {
    const FROM_BODY: &[(&str, &str, &str, &[&str])] = &[
        (
            "create_workflow",
            "workflow",
            "/name",
            &[
                "get_workflow",
                "list_versions",
                "add_version",
                "compile_workflow",
                "plan_workflow",
                "delete_workflow",
            ],
        ),
        (
            "create_run",
            "id",
            "/id",
            &[
                "get_run",
                "run_events",
                "run_graph",
                "step_logs",
                "run_plan",
                "cancel_run",
                "retry_run",
            ],
        ),
        (
            "create_generation",
            "id",
            "/id",
            &["get_generation", "give_feedback"],
        ),
        (
            "generate_workflow",
            "id",
            "/id",
            &["get_generation", "give_feedback"],
        ),
        (
            "create_template",
            "name",
            "/name",
            &["get_template", "update_template", "delete_template"],
        ),
        (
            "create_tenant",
            "id",
            "/id",
            &["get_tenant", "update_tenant", "set_budget"],
        ),
        ("create_key", "id", "/id", &["revoke_key"]),
        (
            "put_secret",
            "name",
            "/name",
            &["get_secret", "delete_secret"],
        ),
    ];
    let mut operations = Vec::new();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        for (method, operation) in item.as_object().into_iter().flatten() {
            if let Some(id) = operation["operationId"].as_str() {
                operations.push((id.to_owned(), path.clone(), method.clone()));
            }
        }
    }
    let find = |id: &str| {
        operations
            .iter()
            .find(|(o, ..)| o == id)
            .unwrap_or_else(|| panic!("no operation {id}"))
    };
    for (from, parameter, pointer, targets) in FROM_BODY {
        let (_, path, method) = find(from);
        let mut links = Map::new();
        for target in *targets {
            links.insert(
                target.to_string(),
                json!({
                    "operationId": target,
                    "parameters": {*parameter: format!("$response.body#{pointer}")},
                }),
            );
        }
        let responses = doc["paths"][path][method]["responses"]
            .as_object_mut()
            .expect("responses");
        for (status, response) in responses.iter_mut() {
            if status.starts_with('2') {
                response["links"] = Value::Object(links.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    /// Whether `body` satisfies the named request schema of the document.
    fn valid(schema: &str, body: &Value) -> bool {
        let doc = crate::app::openapi();
        let root = json!({
            "$ref": format!("#/components/schemas/{schema}"),
            "components": doc["components"],
        });
        jsonschema::options()
            .should_validate_formats(true)
            .build(&root)
            .expect("the document's schemas compile")
            .is_valid(body)
    }

    #[test]
    fn a_request_names_a_stored_workflow_or_gives_one() {
        let ir = json!({"apiVersion": "couler.dev/v1alpha1", "name": "a",
                        "steps": [{"name": "s", "container": {"image": "alpine"}}]});
        assert!(valid(
            "CreateRun",
            &json!({"workflow": "etl", "version": 2})
        ));
        assert!(valid("CreateRun", &json!({"ir": ir, "workflow": null})));
        for bad in [
            json!({}),
            json!({"workflow": null, "ir": null}),
            json!({"workflow": "etl", "ir": ir}),
            json!({"ir": ir, "version": 1}),
        ] {
            assert!(!valid("CreateRun", &bad), "{bad}");
            assert!(!valid("GraphRequest", &bad), "{bad}");
        }
    }

    #[test]
    fn an_invalidation_has_exactly_one_selector() {
        for good in [
            json!({"workflow": "etl", "step": "train"}),
            json!({"image": "python:3.12", "all": null}),
            json!({"version": "2"}),
            json!({"all": true}),
        ] {
            assert!(valid("InvalidateRequest", &good), "{good}");
        }
        for bad in [
            json!({}),
            json!({"workflow": "etl"}),
            json!({"step": "train"}),
            json!({"image": "a", "version": "2"}),
            json!({"all": false}),
            json!({"image": " \t"}),
        ] {
            assert!(!valid("InvalidateRequest", &bad), "{bad}");
        }
    }

    #[test]
    fn no_text_in_a_request_holds_a_nul_character() {
        let run = |body: Value| valid("CreateRun", &body);
        assert!(run(
            json!({"workflow": "etl", "parameters": {"lr": "0.1", "epochs": 3}})
        ));
        assert!(!run(json!({"workflow": "e\u{0}tl"})));
        assert!(!run(
            json!({"workflow": "etl", "parameters": {"l\u{0}r": "0.1"}})
        ));
        assert!(!run(
            json!({"workflow": "etl", "parameters": {"lr": "0\u{0}"}})
        ));
        assert!(!run(
            json!({"workflow": "etl", "labels": {"team": "m\u{0}l"}})
        ));
        let template = json!({"id": "my-step", "kind": "train", "description": "Trains",
            "step": {"container": {"image": "alpine", "args": ["x"]}}});
        assert!(valid("StepTemplate", &template));
        let mut bad = template.clone();
        bad["step"]["hints"] = json!({"tolerations": [{"k\u{0}": 1}]});
        assert!(!valid("StepTemplate", &bad));
    }

    #[test]
    fn step_templates_state_kinds_ids_and_steps() {
        let template = json!({"id": "my-step", "kind": "train", "description": "Trains",
            "step": {"container": {"image": "alpine"}}});
        for (field, value) in [
            ("kind", json!("")),
            ("id", json!("My_Step")),
            (
                "id",
                json!(crate::step_library::builtin_ids().next().unwrap()),
            ),
            ("description", json!("  ")),
            (
                "step",
                json!({"name": "x", "container": {"image": "alpine"}}),
            ),
            ("step", json!({})),
        ] {
            let mut bad = template.clone();
            bad[field] = value.clone();
            assert!(!valid("StepTemplate", &bad), "{field} = {value}");
        }
    }

    #[test]
    fn label_selectors_are_stated_as_the_server_reads_them() {
        let doc = crate::app::openapi();
        let parameters = doc["paths"]["/v1/runs"]["get"]["parameters"]
            .as_array()
            .unwrap();
        let label = parameters.iter().find(|p| p["name"] == "label").unwrap();
        let schema = jsonschema::validator_for(&label["schema"]).unwrap();
        for selector in ["team=ml", "team=ml, env=prod", "", " , team=ml", "a=b=c"] {
            assert!(schema.is_valid(&json!(selector)), "{selector:?}");
            assert!(
                crate::wire::parse_labels(Some(selector)).is_ok(),
                "{selector:?}"
            );
        }
        for selector in ["team", "team=ml,env", "a=\u{0}"] {
            assert!(!schema.is_valid(&json!(selector)), "{selector:?}");
        }
    }
}
