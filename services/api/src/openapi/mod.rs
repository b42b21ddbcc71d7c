//! The OpenAPI document, assembled from every resource router. Committed at
//! `openapi/openapi.json`; a test fails when it drifts from the code.

use std::borrow::Cow;
use std::sync::LazyLock;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::openapi::{RefOr, Schema};
use utoipa::{Modify, OpenApi, PartialSchema, ToSchema};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Couler API",
        description = "Multi-tenant control plane for machine-learning workflows: store workflows (IR), run them on your tenant's engine, follow their progress.\n\nErrors are `application/problem+json` with a stable `code`.",
        license(name = "Apache-2.0"),
    ),
    modifiers(&Security),
    security(("bearer" = []), ("api_key" = [])),
    tags(
        (name = "workflows", description = "Workflows and their immutable versions"),
        (name = "runs", description = "Runs, their steps and events"),
        (name = "schedules", description = "Schedules of workflows, fired by the control plane as ordinary runs on every engine: preview, tick history, pause, manual trigger, backfills"),
        (name = "triggers", description = "Webhook triggers of workflows: other services start runs by posting to the trigger's URL, authenticated by its own credential (GitHub-style HMAC, Standard Webhooks, or a bearer token)"),
        (name = "hooks", description = "Deliveries from other services to webhook triggers (no API key: the trigger's credential)"),
        (name = "tenants", description = "Tenants, settings and quotas"),
        (name = "api-keys", description = "Keys for services that trigger pipelines"),
        (name = "cache", description = "The shared cache index: explain, statistics, invalidation"),
        (name = "plans", description = "What the optimizer does with a workflow, and why"),
        (name = "generations", description = "Natural language → workflow drafts, user feedback, the tenant's step library and LLM token usage"),
        (name = "secrets", description = "The tenant's secrets for steps (`env[].secret`): write-only values, encrypted at rest, audited"),
        (name = "health", description = "Liveness, readiness, metrics"),
    ),
    components(schemas(crate::error::Problem, crate::error::ProblemItem))
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A JWT (claims: sub, tenant, roles) or an API key (`ck_…`) as the bearer token.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "x-api-key",
                "An API key created with POST /v1/api-keys.",
            ))),
        );
    }
}

mod rules;

pub use rules::NOT_BLANK;

/// The document as served and committed: utoipa's, with what its model
/// cannot hold written in (response descriptions, list items as
/// references, and the rules on requests it cannot state: [`rules`]).
pub fn document(mut doc: utoipa::openapi::OpenApi) -> serde_json::Value {
    describe_responses(&mut doc);
    reference_list_items(&mut doc);
    let mut value = serde_json::to_value(doc).expect("the OpenAPI document serializes");
    exact_ir(&mut value);
    rules::state(&mut value);
    value
}

/// Gives every response without a description the standard one for its
/// status: OpenAPI 3.1 requires a description on each response object, and
/// generators (`openapi-python-client`) refuse a document without them.
fn describe_responses(doc: &mut utoipa::openapi::OpenApi) {
    for item in doc.paths.paths.values_mut() {
        let operations = [
            &mut item.get,
            &mut item.put,
            &mut item.post,
            &mut item.delete,
            &mut item.options,
            &mut item.head,
            &mut item.patch,
            &mut item.trace,
            &mut item.query,
        ];
        let extra = item.additional_operations.values_mut();
        for operation in operations.into_iter().flatten().chain(extra) {
            for (status, response) in operation.responses.responses.iter_mut() {
                if let RefOr::T(response) = response
                    && response.description.is_empty()
                {
                    response.description = status_text(status).to_owned();
                }
            }
        }
    }
}

/// Points the items of each page schema (`List_X`, from the generic
/// `List<X>`, which utoipa writes out inline) at the component `X`, so
/// that clients see one `X` type, not a copy per list.
fn reference_list_items(doc: &mut utoipa::openapi::OpenApi) {
    use utoipa::openapi::schema::{ArrayBuilder, Schema};
    let Some(components) = doc.components.as_mut() else {
        return;
    };
    let names: Vec<String> = components.schemas.keys().cloned().collect();
    for (name, schema) in components.schemas.iter_mut() {
        let Some(item) = name.strip_prefix("List_") else {
            continue;
        };
        if !names.iter().any(|n| n == item) {
            continue;
        }
        if let RefOr::T(Schema::Object(page)) = schema
            && let Some(items) = page.properties.get_mut("items")
        {
            *items = ArrayBuilder::new()
                .items(RefOr::Ref(utoipa::openapi::Ref::from_schema_name(item)))
                .build()
                .into();
        }
    }
}

/// The words for a status (or a status range such as `4XX`).
fn status_text(status: &str) -> &'static str {
    match status {
        "200" => "OK",
        "201" => "Created",
        "202" => "Accepted",
        "204" => "No content",
        "304" => "Not modified",
        "4XX" => "The request was refused (a problem document says why)",
        "5XX" => "The server could not answer (a problem document says why)",
        s if s.starts_with('2') => "Success",
        s if s.starts_with('3') => "Redirection",
        s if s.starts_with('4') => "The request was refused",
        _ => "Server error",
    }
}

/// The workflow document in request and response schemas: the IR's own
/// JSON Schema ([`couler_ir::schema`]), so the document is `Workflow` and
/// its parts (`Step`, `Parameter`, …) are components under their IR names.
/// utoipa's model cannot hold all of it (`oneOf` beside `properties`, for
/// one), so [`document`] writes the exact schemas over what it kept.
pub struct IrWorkflow;

impl PartialSchema for IrWorkflow {
    fn schema() -> RefOr<Schema> {
        modelled(&IR.root)
    }
}

impl ToSchema for IrWorkflow {
    fn name() -> Cow<'static, str> {
        "Workflow".into()
    }

    fn schemas(schemas: &mut Vec<(String, RefOr<Schema>)>) {
        schemas.extend(
            IR.parts
                .iter()
                .map(|(name, part)| (name.clone(), modelled(part))),
        );
    }
}

/// An IR part by name in request and response schemas (`ParamValue`,
/// `Parameter`), for fields that hold one.
macro_rules! ir_part {
    ($($type:ident = $name:literal),*) => {$(
        #[doc = concat!("The IR's `", $name, "` (see [`IrWorkflow`]).")]
        pub struct $type;

        impl PartialSchema for $type {
            fn schema() -> RefOr<Schema> {
                RefOr::Ref(utoipa::openapi::Ref::from_schema_name($name))
            }
        }

        impl ToSchema for $type {
            fn name() -> Cow<'static, str> {
                $name.into()
            }
        }
    )*};
}
ir_part!(IrParamValue = "ParamValue", IrParameter = "Parameter");

/// The IR's schemas in OpenAPI's terms: the root and its named parts.
struct IrSchemas {
    root: serde_json::Value,
    parts: Vec<(String, serde_json::Value)>,
}

static IR: LazyLock<IrSchemas> = LazyLock::new(|| {
    let mut root = couler_ir::schema::schema();
    let defs = root
        .as_object_mut()
        .and_then(|o| {
            o.remove("$schema");
            o.remove("$id");
            o.remove("$defs")
        })
        .and_then(|d| match d {
            serde_json::Value::Object(defs) => Some(defs),
            _ => None,
        })
        .unwrap_or_default();
    to_openapi(&mut root);
    let parts = defs
        .into_iter()
        .map(|(name, mut def)| {
            to_openapi(&mut def);
            (name, def)
        })
        .collect();
    IrSchemas { root, parts }
});

/// What utoipa's model keeps of an IR schema, enough to register it: a
/// schema the model cannot read at all (`oneOf` beside `properties`)
/// is registered as any object until [`exact_ir`] writes it.
fn modelled(schema: &serde_json::Value) -> RefOr<Schema> {
    serde_json::from_value(schema.clone())
        .unwrap_or_else(|_| Schema::Object(utoipa::openapi::Object::new()).into())
}

/// Writes the IR's schemas, exactly, over what utoipa's model kept.
fn exact_ir(doc: &mut serde_json::Value) {
    let schemas = &mut doc["components"]["schemas"];
    schemas["Workflow"] = IR.root.clone();
    for (name, part) in &IR.parts {
        schemas[name] = part.clone();
    }
}

/// Points references into `#/components/schemas` and writes `const` as a
/// one-value `enum` (OpenAPI 3.0 readers know only the latter). Walks
/// subschemas only: property names and values (`enum`, `default`) are
/// left as they are.
fn to_openapi(schema: &mut serde_json::Value) {
    use serde_json::Value;
    let Value::Object(o) = schema else { return };
    if let Some(Value::String(r)) = o.get_mut("$ref")
        && let Some(name) = r.strip_prefix("#/$defs/")
    {
        *r = format!("#/components/schemas/{name}");
    }
    if let Some(value) = o.remove("const") {
        o.insert("enum".into(), Value::Array(vec![value]));
    }
    for (keyword, sub) in o.iter_mut() {
        match (keyword.as_str(), sub) {
            ("properties" | "$defs", Value::Object(named)) => {
                named.values_mut().for_each(to_openapi);
            }
            ("anyOf" | "oneOf" | "allOf", Value::Array(list)) => {
                list.iter_mut().for_each(to_openapi);
            }
            ("items" | "additionalProperties" | "not" | "propertyNames", sub) => to_openapi(sub),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each IR component in the document is the IR's schema, whole: what
    /// editors validate with (`openapi/ir.schema.json`) is what the API
    /// states.
    #[test]
    fn the_ir_schema_becomes_components_unchanged() {
        let mut expected = couler_ir::schema::schema();
        let defs = expected.as_object_mut().unwrap().remove("$defs").unwrap();
        let doc = crate::app::openapi();
        let schemas = &doc["components"]["schemas"];
        for (name, mut def) in defs.as_object().unwrap().clone() {
            to_openapi(&mut def);
            assert_eq!(schemas[&name], def, "{name}");
        }
        for k in ["$schema", "$id"] {
            expected.as_object_mut().unwrap().remove(k);
        }
        to_openapi(&mut expected);
        assert_eq!(schemas["Workflow"], expected);
    }
}
