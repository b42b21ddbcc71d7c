//! The JSON Schema of the IR, generated from the Rust types and committed
//! at `openapi/ir.schema.json` so editors can validate and autocomplete.

use crate::types::Workflow;

/// Where the committed schema says it lives.
pub const SCHEMA_ID: &str = "https://couler.dev/schemas/ir/v1alpha1.json";

/// The schema as a JSON value.
pub fn schema() -> serde_json::Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<Workflow>();
    schema.insert("$id".into(), SCHEMA_ID.into());
    schema.to_value()
}

/// The schema as pretty JSON with a trailing newline, exactly as committed.
pub fn schema_json() -> String {
    let mut text = serde_json::to_string_pretty(&schema()).expect("a schema always serializes");
    text.push('\n');
    text
}
