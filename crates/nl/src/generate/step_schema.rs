//! The schema the LLM writes one step in: the IR's own JSON Schema
//! ([`couler_ir::schema`]) cut to what a step's author decides — what it
//! runs (`container` or `script`: image, command, args, source, env),
//! `resources`, `retry`, `timeout`, `description` — and tightened for
//! grammar-constrained decoding (llama.cpp): `$ref`s resolved, `null`
//! alternatives dropped, every string given a `pattern` or an `enum`,
//! arrays and integers bounded. The wiring (name, depends, inputs,
//! outputs, when, map) is the plan's and is not asked for.
//!
//! The answer is the step as a change of its draft (the template placed
//! for it): only `image` is required of what it runs, and what the answer
//! leaves out (a script's multi-line source, typically) is the draft's.
//! Strings are one line: a pattern constrains the encoded text for
//! llama.cpp but the decoded one for JSON Schema, so no pattern can allow
//! newlines in both; and llama.cpp cannot turn an `enum` of strings with
//! quotes or newlines into a grammar. Images are an `enum` of what the
//! image policy allows, so a disallowed image cannot be decoded at all.

use serde_json::{Map, Value, json};

/// Which of its two forms a step runs in; the template decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Runs {
    Container,
    Script,
}

impl Runs {
    pub fn key(self) -> &'static str {
        match self {
            Runs::Container => "container",
            Runs::Script => "script",
        }
    }
}

/// What the LLM writes of a step; the rest is the plan's wiring.
pub(crate) const AUTHORED: &[&str] = &[
    "description",
    "container",
    "script",
    "resources",
    "retry",
    "timeout",
];

/// Properties the LLM may write, per IR definition; definitions not listed
/// keep all of theirs.
const WRITABLE: &[(&str, &[&str])] = &[
    ("Step", AUTHORED),
    ("Container", &["image", "command", "args", "env"]),
    ("Script", &["image", "command", "source", "env"]),
    ("EnvVar", &["name", "value"]),
    ("Resources", &["cpu", "memory", "gpu"]),
    ("Retry", &["limit", "on", "backoff"]),
    ("Backoff", &["duration", "factor"]),
];

/// Printable ASCII on one line, without `"` and `\`.
pub(crate) const LINE: &str = r"^[ !#-\[\]-~]{1,200}$";
const ENV_NAME: &str = "^[A-Z][A-Z0-9_]{0,39}$";
/// Bounded forms of the IR's own patterns, short enough to decode.
const OVERRIDES: &[(&str, &str)] = &[
    ("Duration", "^[1-9][0-9]{0,3}(s|m|h)$"),
    ("Cpu", "^[1-9][0-9]{0,3}m?$"),
    ("Memory", "^[1-9][0-9]{0,4}(Mi|Gi)$"),
];
const MAX_ITEMS: u64 = 12;
const MAX_INTEGER: u64 = 64;
/// Nesting deeper than this is not followed (the IR's step is shallow).
const MAX_DEPTH: usize = 12;

/// The schema of one step's answer.
pub(crate) fn step_schema(runs: Runs, images: &[String]) -> Value {
    let ir = couler_ir::schema::schema();
    let defs = ir.get("$defs").and_then(Value::as_object);
    let empty = Map::new();
    let narrow = Narrow {
        defs: defs.unwrap_or(&empty),
    };
    let mut step = narrow.definition("Step", 0);
    let other = match runs {
        Runs::Container => Runs::Script,
        Runs::Script => Runs::Container,
    };
    if let Some(props) = step.get_mut("properties").and_then(Value::as_object_mut) {
        props.remove(other.key());
        if let Some(body) = props.get_mut(runs.key()) {
            body["required"] = json!(["image"]);
            let fields = &mut body["properties"];
            fields["image"] = json!({"type": "string", "enum": images});
            if let Some(var) = fields
                .get_mut("env")
                .and_then(|e| e.get_mut("items"))
                .and_then(|i| i.get_mut("properties"))
            {
                var["name"] = json!({"type": "string", "pattern": ENV_NAME});
            }
        }
    }
    step["required"] = json!([runs.key()]);
    step
}

struct Narrow<'a> {
    defs: &'a Map<String, Value>,
}

impl Narrow<'_> {
    fn definition(&self, name: &str, depth: usize) -> Value {
        if let Some((_, pattern)) = OVERRIDES.iter().find(|(n, _)| *n == name) {
            return json!({"type": "string", "pattern": pattern});
        }
        let Some(def) = self.defs.get(name) else {
            return json!({"type": "string", "pattern": LINE});
        };
        let mut out = self.node(def, depth);
        let keep = WRITABLE.iter().find(|(n, _)| *n == name).map(|(_, k)| *k);
        if let (Some(keep), Some(obj)) = (keep, out.as_object_mut()) {
            if let Some(props) = obj.get_mut("properties").and_then(Value::as_object_mut) {
                props.retain(|k, _| keep.contains(&k.as_str()));
            }
            if let Some(required) = obj.get_mut("required").and_then(Value::as_array_mut) {
                required.retain(|r| r.as_str().is_some_and(|r| keep.contains(&r)));
            }
        }
        out
    }

    fn node(&self, node: &Value, depth: usize) -> Value {
        let Some(obj) = node.as_object() else {
            return node.clone();
        };
        if depth > MAX_DEPTH {
            return json!({"type": "string", "pattern": LINE});
        }
        if let Some(name) = obj
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            return self.definition(name, depth + 1);
        }
        // `anyOf: [X, null]` is an optional X.
        if let Some(options) = obj.get("anyOf").and_then(Value::as_array) {
            let present: Vec<&Value> = options.iter().filter(|o| !is_null(o)).collect();
            if let [only] = present.as_slice() {
                return self.node(only, depth + 1);
            }
        }
        // A `oneOf` of constants is an enum.
        if let Some(options) = obj.get("oneOf").and_then(Value::as_array) {
            let consts: Option<Vec<&Value>> = options.iter().map(|o| o.get("const")).collect();
            if let Some(consts) = consts {
                return json!({"type": "string", "enum": consts});
            }
        }
        let mut out = Map::new();
        for (key, value) in obj {
            match key.as_str() {
                "properties" => {
                    let props: Map<String, Value> = value
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, v)| (k.clone(), self.node(v, depth + 1)))
                        .collect();
                    out.insert(key.clone(), Value::Object(props));
                }
                "items" => {
                    out.insert(key.clone(), self.node(value, depth + 1));
                }
                "type" => {
                    out.insert(key.clone(), single_type(value));
                }
                "format" | "description" | "minimum" => {}
                // Rules on keys and on which fields go together: the step's
                // own `required` says what it runs, and keys are the schema's.
                "propertyNames" | "oneOf" => {}
                // Text without NUL: every one-line pattern below says more.
                "pattern" if value == couler_ir::schema::NUL_FREE => {}
                _ => {
                    out.insert(key.clone(), value.clone());
                }
            }
        }
        match out.get("type").and_then(Value::as_str) {
            Some("string") if !out.contains_key("pattern") && !out.contains_key("enum") => {
                out.insert("pattern".into(), json!(LINE));
            }
            Some("integer") => {
                out.insert("minimum".into(), json!(0));
                out.entry("maximum").or_insert(json!(MAX_INTEGER));
            }
            Some("array") => {
                out.entry("maxItems").or_insert(json!(MAX_ITEMS));
            }
            _ => {}
        }
        Value::Object(out)
    }
}

fn is_null(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("null")
}

/// `["string", "null"]` → `"string"`; `["string", "number"]` (a quantity
/// written either way) → `"string"`.
fn single_type(types: &Value) -> Value {
    match types.as_array() {
        Some(list) => {
            let kept: Vec<&str> = list
                .iter()
                .filter_map(Value::as_str)
                .filter(|t| *t != "null")
                .collect();
            if kept.contains(&"string") {
                json!("string")
            } else {
                kept.first().map_or(json!("string"), |t| json!(t))
            }
        }
        None => types.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings_without_pattern(schema: &Value, path: &str, out: &mut Vec<String>) {
        match schema {
            Value::Object(obj) => {
                if obj.get("type").and_then(Value::as_str) == Some("string")
                    && !obj.contains_key("pattern")
                    && !obj.contains_key("enum")
                {
                    out.push(path.to_owned());
                }
                for (k, v) in obj {
                    strings_without_pattern(v, &format!("{path}/{k}"), out);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    strings_without_pattern(v, &format!("{path}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    #[test]
    fn every_string_is_constrained_and_no_reference_is_left() {
        for runs in [Runs::Container, Runs::Script] {
            let schema = step_schema(runs, &["python:3.12-slim".into()]);
            let mut loose = Vec::new();
            strings_without_pattern(&schema, "", &mut loose);
            assert!(
                loose.is_empty(),
                "{runs:?}: unconstrained strings at {loose:?}"
            );
            let text = schema.to_string();
            assert!(!text.contains("$ref"), "{text}");
            assert!(!text.contains("\"null\""), "{text}");
        }
    }

    #[test]
    fn only_the_authors_fields_are_asked_for() {
        let schema = step_schema(Runs::Script, &["python:3.12-slim".into()]);
        let props: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(
            props,
            ["description", "resources", "retry", "script", "timeout"]
        );
        assert_eq!(schema["required"], json!(["script"]));
        assert_eq!(schema["properties"]["script"]["required"], json!(["image"]));
        assert_eq!(schema["additionalProperties"], json!(false));
        let script = &schema["properties"]["script"];
        assert_eq!(
            script["properties"]["image"]["enum"],
            json!(["python:3.12-slim"])
        );
        let env = &script["properties"]["env"]["items"]["properties"];
        assert!(env.get("secret").is_none(), "{env}");
        let retry_on = &schema["properties"]["retry"]["properties"]["on"];
        assert_eq!(retry_on["enum"], json!(["always", "transient"]));
    }

    /// What the narrowed schema accepts, the IR's full schema accepts too.
    #[test]
    fn answers_of_the_narrowed_schema_fit_the_irs() {
        let answer = json!({
            "name": "train",
            "description": "Train an LSTM",
            "container": {
                "image": "python:3.12-slim",
                "command": ["python3", "-c"],
                "args": ["print('trained')"],
                "env": [{"name": "EPOCHS", "value": "10"}],
            },
            "resources": {"cpu": "2", "memory": "4Gi", "gpu": 1},
            "retry": {"limit": 2, "on": "transient", "backoff": {"duration": "10s", "factor": 2}},
            "timeout": "30m",
        });
        let narrowed = step_schema(Runs::Container, &["python:3.12-slim".into()]);
        let mut step = answer.clone();
        step.as_object_mut().unwrap().remove("name");
        let validator = jsonschema::validator_for(&narrowed).unwrap();
        let problems: Vec<String> = validator
            .iter_errors(&step)
            .map(|e| e.to_string())
            .collect();
        assert!(problems.is_empty(), "{problems:?}");
        let doc = json!({"apiVersion": couler_ir::API_VERSION, "name": "w", "steps": [answer]});
        let ir = jsonschema::validator_for(&couler_ir::schema::schema()).unwrap();
        let problems: Vec<String> = ir.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(problems.is_empty(), "{problems:?}");
    }
}
