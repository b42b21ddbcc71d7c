//! The JSON Schema of the IR, generated from the Rust types and committed
//! at `openapi/ir.schema.json` so editors can validate and autocomplete.

use crate::types::Workflow;
use serde_json::{Value, json};

/// Where the committed schema says it lives.
pub const SCHEMA_ID: &str = "https://couler.dev/schemas/ir/v1alpha1.json";

/// The schema as a JSON value.
pub fn schema() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<Workflow>();
    schema.insert("$id".into(), SCHEMA_ID.into());
    let mut schema = schema.to_value();
    let any = format!("#/$defs/{ANY_JSON}");
    if forbid_nul(&mut schema, &any) {
        schema["$defs"][ANY_JSON] = any_json(&any);
    }
    schema
}

/// Labels, as Kubernetes writes them: `prefix/name` keys (the prefix a DNS
/// subdomain, optional) and values of up to 63 letters, digits, `-`, `_`
/// and `.`, starting and ending with a letter or digit.
pub fn labels() -> Value {
    json!({
        "description": "Labels for search and grouping (Kubernetes label syntax).",
        "type": "object",
        "propertyNames": {"pattern": crate::names::LABEL_KEY_PATTERN},
        "additionalProperties": {"type": "string", "pattern": crate::names::LABEL_VALUE_PATTERN},
    })
}

pub(crate) fn labels_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::Schema::try_from(labels()).expect("labels are an object schema")
}

/// The pattern of text without the NUL character, which no name or value
/// may hold ([`crate::NUL_MESSAGE`]).
pub const NUL_FREE: &str = "^[^\\u0000]*$";

/// The name of the schema of any JSON value without NUL characters.
pub const ANY_JSON: &str = "JsonValue";

/// Any JSON value whose strings and keys hold no NUL character; `any_ref`
/// is where this schema itself lives.
pub fn any_json(any_ref: &str) -> Value {
    json!({
        "description": "Any JSON value; no string or key in it holds the NUL character.",
        "anyOf": [
            {"type": ["null", "boolean", "number"]},
            {"type": "string", "pattern": NUL_FREE},
            {"type": "array", "items": {"$ref": any_ref}},
            {"type": "object", "propertyNames": {"pattern": NUL_FREE},
             "additionalProperties": {"$ref": any_ref}},
        ]
    })
}

/// States in `schema` that text may not hold the NUL character: every
/// string without a pattern, format or fixed values gets [`NUL_FREE`],
/// every object's keys too, and a schema that allows any value points at
/// `any_ref` (the [`any_json`] schema, which the caller adds). Returns
/// whether anything points at `any_ref`.
pub fn forbid_nul(schema: &mut Value, any_ref: &str) -> bool {
    let mut used = false;
    walk(schema, any_ref, &mut used);
    used
}

/// Keywords whose value is one subschema, and those holding a list or a
/// map of them.
const ONE: &[&str] = &[
    "additionalProperties",
    "items",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "unevaluatedItems",
    "unevaluatedProperties",
];
/// Keywords that say what a schema is for, not what it allows: a schema
/// of these alone allows any value.
const ANNOTATIONS: &[&str] = &[
    "description",
    "title",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
];
const LIST: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];
const MAP: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

fn walk(schema: &mut Value, any_ref: &str, used: &mut bool) {
    let Value::Object(node) = schema else { return };
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let (string, object) = (types.contains(&"string"), types.contains(&"object"));
    let fixed = ["enum", "const", "format", "pattern"]
        .iter()
        .any(|k| node.contains_key(*k));
    if string && !fixed {
        node.insert("pattern".into(), NUL_FREE.into());
    }
    if object {
        let closed = node.get("additionalProperties") == Some(&Value::Bool(false));
        if !closed {
            let keys = node.entry("propertyNames").or_insert_with(|| json!({}));
            if let Value::Object(keys) = keys
                && !["enum", "const", "pattern"]
                    .iter()
                    .any(|k| keys.contains_key(*k))
            {
                keys.insert("pattern".into(), NUL_FREE.into());
            }
        }
        if !node.contains_key("additionalProperties") {
            node.insert("additionalProperties".into(), json!({"$ref": any_ref}));
            *used = true;
        }
    }
    let open = node.keys().all(|k| ANNOTATIONS.contains(&k.as_str()));
    if open {
        node.insert("$ref".into(), any_ref.into());
        *used = true;
    }
    for (key, child) in node.iter_mut() {
        let key = key.as_str();
        if ONE.contains(&key) {
            sub(child, any_ref, used);
        } else if LIST.contains(&key) {
            child
                .as_array_mut()
                .into_iter()
                .flatten()
                .for_each(|c| sub(c, any_ref, used));
        } else if MAP.contains(&key) {
            child
                .as_object_mut()
                .into_iter()
                .flatten()
                .for_each(|(_, c)| sub(c, any_ref, used));
        }
    }
}

/// One subschema: `true` (anything) becomes a reference to any JSON.
fn sub(schema: &mut Value, any_ref: &str, used: &mut bool) {
    if *schema == Value::Bool(true) {
        *schema = json!({"$ref": any_ref});
        *used = true;
    } else {
        walk(schema, any_ref, used);
    }
}

/// The schema as pretty JSON with a trailing newline, exactly as committed.
pub fn schema_json() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).expect("a schema always serializes");
    text.push('\n');
    text
}
