//! `/v1/step-library`: the tenant's own step templates, retrieved next to
//! the built-in ones when the tenant's generations look for references.
//! Viewers read them; admins manage them, since every generation in the
//! tenant is steered by them.

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::List;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_ir::{Code, Problem, Problems};
use couler_nl::library::{Library, Need, Template};
use couler_store::step_library::{self, Entry};
use couler_store::{TenantId, Tx};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::sync::LazyLock;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

static BUILTIN: LazyLock<Library> = LazyLock::new(Library::builtin);

/// A step template: an IR step without its name, and what it is for.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StepTemplate {
    /// The template's name in the tenant (a DNS label, not a built-in one).
    pub id: String,
    /// The subtask kind it serves: load, preprocess, train, evaluate …
    pub kind: String,
    /// What the step does; ranked against the user's words.
    pub description: String,
    /// Extra words to rank it by.
    #[serde(default)]
    pub keywords: Vec<String>,
    /// What the planner wires in: data, models, scores, best, source, …
    #[serde(default)]
    pub needs: Vec<String>,
    /// Workflow parameters (IR parameter declarations) the step reads.
    #[serde(default)]
    #[schema(value_type = Vec<crate::openapi::IrParameter>)]
    pub parameters: Vec<Value>,
    /// An IR step without `name` (see `openapi/ir.schema.json`).
    #[schema(value_type = Object)]
    pub step: Value,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct StepTemplateView {
    pub name: String,
    #[schema(value_type = StepTemplate)]
    pub template: Value,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Entry> for StepTemplateView {
    fn from(e: Entry) -> Self {
        StepTemplateView {
            name: e.name,
            template: e.template.0,
            created_by: e.created_by,
            created_at: e.created_at,
            updated_at: e.updated_at,
        }
    }
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(list_templates, create_template))
        .routes(routes!(get_template, update_template, delete_template))
}

/// The ids of the built-in templates (a tenant's own may not take one).
pub fn builtin_ids() -> impl Iterator<Item = &'static str> {
    BUILTIN.templates().iter().map(|t| t.id.as_str())
}

/// The built-in templates and the tenant's own. A stored template the
/// current build cannot read, or one a newer built-in shadows, is skipped.
pub async fn tenant_library(tx: &mut Tx, tenant: TenantId) -> ApiResult<Library> {
    let mut templates = BUILTIN.templates().to_vec();
    for entry in step_library::list(tx, tenant).await? {
        match serde_json::from_value::<Template>(entry.template.0) {
            Ok(t) if BUILTIN.get(&t.id).is_none() => templates.push(t),
            Ok(_) => {
                tracing::warn!(template = %entry.name, "tenant template shadowed by a built-in one")
            }
            Err(e) => {
                tracing::warn!(template = %entry.name, error = %e, "unreadable tenant template skipped")
            }
        }
    }
    Library::new(templates).map_err(|e| ApiError::Internal(anyhow::Error::new(e)))
}

fn problem(path: impl Into<String>, code: Code, message: impl Into<String>) -> Problem {
    Problem {
        path: path.into(),
        code,
        message: message.into(),
    }
}

/// Parses and checks a template, reporting every problem with its path:
/// the shape, the name, and the step as IR (wrapped in a one-step
/// workflow with the template's parameters).
pub fn validate(body: Value) -> Result<Template, Problems> {
    let de = serde_path_to_error::deserialize::<_, Template>(body);
    let template = de.map_err(|e| {
        let path = pointer(e.path());
        Problems(vec![problem(
            path,
            Code::InvalidType,
            e.inner().to_string(),
        )])
    })?;
    let mut problems = Vec::new();
    if !couler_ir::names::is_dns_label(&template.id) {
        problems.push(problem(
            "/id",
            Code::InvalidName,
            "template ids are 1-63 lowercase letters, digits or '-'",
        ));
    } else if BUILTIN.get(&template.id).is_some() {
        problems.push(problem(
            "/id",
            Code::DuplicateName,
            format!(
                "{:?} is a built-in template; choose another id",
                template.id
            ),
        ));
    }
    if template.description.trim().is_empty() {
        problems.push(problem(
            "/description",
            Code::MissingField,
            "describe what the step does",
        ));
    }
    match template.step.as_object() {
        None => problems.push(problem(
            "/step",
            Code::InvalidType,
            "the step must be an object",
        )),
        Some(step) if step.contains_key("name") => problems.push(problem(
            "/step/name",
            Code::UnknownField,
            "templates have no name; the planner names each step it places",
        )),
        Some(step) => {
            let workflow = as_workflow(&template, step.clone());
            if let Err(found) = couler_ir::load_value(workflow, &couler_ir::Limits::default()) {
                problems.extend(found.into_iter().map(|mut p| {
                    p.path = match p.path.strip_prefix("/steps/1") {
                        Some(rest) => format!("/step{rest}"),
                        None if p.path.starts_with("/parameters") => p.path,
                        None => "/step".into(),
                    };
                    p
                }));
            }
        }
    }
    if problems.is_empty() {
        Ok(template)
    } else {
        Err(Problems(problems))
    }
}

/// The template placed as the planner places it: named, after a step whose
/// `data` and `model` artifacts it reads when it needs them.
fn as_workflow(template: &Template, mut step: serde_json::Map<String, Value>) -> Value {
    step.insert("name".into(), json!("step"));
    let mut inputs = Vec::new();
    if template.needs.contains(&Need::Data) {
        inputs.push(json!({"name": "data", "from": "{{steps.upstream.outputs.artifacts.data}}", "path": "/tmp/inputs/data.csv"}));
    }
    if template.needs.contains(&Need::Models) {
        inputs.push(json!({"name": "model-upstream", "from": "{{steps.upstream.outputs.artifacts.model}}", "path": "/tmp/inputs/models/upstream"}));
    }
    if !inputs.is_empty() {
        let declared = step.entry("inputs").or_insert_with(|| json!({}));
        if let Some(list) = declared
            .as_object_mut()
            .map(|o| o.entry("artifacts").or_insert_with(|| json!([])))
            .and_then(Value::as_array_mut)
        {
            list.extend(inputs);
        }
    }
    let upstream = json!({
        "name": "upstream",
        "container": {"image": "alpine:3.20", "command": ["true"]},
        "outputs": {"artifacts": [
            {"name": "data", "path": "/tmp/outputs/data.csv"},
            {"name": "model", "path": "/tmp/outputs/model"},
        ]},
    });
    json!({
        "apiVersion": "couler.dev/v1alpha1",
        "name": "template-check",
        "parameters": template.parameters,
        "steps": [upstream, step],
    })
}

fn pointer(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut out = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => out.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                out.push('/');
                out.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => {}
        }
    }
    out
}

fn checked(body: Value) -> ApiResult<(Template, Value)> {
    let template = validate(body).map_err(ApiError::Invalid)?;
    let value = serde_json::to_value(&template).expect("templates serialize");
    Ok((template, value))
}

/// List the tenant's templates, by name (built-in ones are not listed).
#[utoipa::path(get, path = "/v1/step-library", tag = "generations",
    responses((status = 200, body = List<StepTemplateView>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_templates(
    State(state): State<AppState>,
    Auth(principal): Auth,
) -> ApiResult<Json<List<StepTemplateView>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let entries = step_library::list(&mut tx, tenant).await?;
    tx.commit().await?;
    Ok(Json(List {
        items: entries.into_iter().map(Into::into).collect(),
        next_cursor: None,
    }))
}

/// Add a template (admins). Invalid templates get 422 with every problem.
#[utoipa::path(post, path = "/v1/step-library", tag = "generations", request_body = StepTemplate,
    responses((status = 201, body = StepTemplateView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_template(
    State(state): State<AppState>,
    Auth(principal): Auth,
    body: Body<Value>,
) -> ApiResult<(StatusCode, Json<StepTemplateView>)> {
    let tenant = principal.tenant(Role::Admin)?;
    let body = body.parse()?;
    let (template, value) = checked(body)?;
    let mut tx = state.store.tenant(tenant).await?;
    let entry =
        step_library::create(&mut tx, tenant, &template.id, &value, &principal.subject).await?;
    tx.commit().await?;
    tracing::info!(template = %entry.name, "step template created");
    Ok((StatusCode::CREATED, Json(entry.into())))
}

/// Read one of the tenant's templates.
#[utoipa::path(get, path = "/v1/step-library/{name}", tag = "generations",
    params(("name" = String, Path, description = "Template id")),
    responses((status = 200, body = StepTemplateView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_template(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(name): Path<String>,
) -> ApiResult<Json<StepTemplateView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let entry = step_library::get(&mut tx, tenant, &name).await?;
    tx.commit().await?;
    entry
        .map(|e| Json(e.into()))
        .ok_or_else(|| ApiError::not_found(format!("step template {name:?}")))
}

/// Replace a template (admins); its `id` must be the name in the path.
#[utoipa::path(put, path = "/v1/step-library/{name}", tag = "generations",
    params(("name" = String, Path, description = "Template id")), request_body = StepTemplate,
    responses((status = 200, body = StepTemplateView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn update_template(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(name): Path<String>,
    body: Body<Value>,
) -> ApiResult<Json<StepTemplateView>> {
    let tenant = principal.tenant(Role::Admin)?;
    let body = body.parse()?;
    let (template, value) = checked(body)?;
    if template.id != name {
        return Err(ApiError::Invalid(Problems(vec![problem(
            "/id",
            Code::InvalidName,
            format!(
                "the template is {:?}; the path names {name:?} (templates cannot be renamed)",
                template.id
            ),
        )])));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let entry = step_library::update(&mut tx, tenant, &name, &value).await?;
    tx.commit().await?;
    entry
        .map(|e| Json(e.into()))
        .ok_or_else(|| ApiError::not_found(format!("step template {name:?}")))
}

/// Delete a template (admins). Drafts made with it keep their steps.
#[utoipa::path(delete, path = "/v1/step-library/{name}", tag = "generations",
    params(("name" = String, Path, description = "Template id")),
    responses((status = 204), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn delete_template(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(name): Path<String>,
) -> ApiResult<StatusCode> {
    let tenant = principal.tenant(Role::Admin)?;
    let mut tx = state.store.tenant(tenant).await?;
    let deleted = step_library::delete(&mut tx, tenant, &name).await?;
    tx.commit().await?;
    if deleted {
        Ok(StatusCode::NO_CONTENT)
    } else {
        Err(ApiError::not_found(format!("step template {name:?}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_template_passes_the_checks_but_its_id() {
        for t in BUILTIN.templates() {
            let mut value = serde_json::to_value(t).unwrap();
            value["id"] = json!(format!("my-{}", t.id));
            if let Err(problems) = validate(value) {
                panic!("{}: {problems:?}", t.id);
            }
        }
    }

    #[test]
    fn bad_templates_get_every_problem_with_its_path() {
        let value = json!({
            "id": "Bad_Name",
            "kind": "train",
            "description": "",
            "step": {"container": {"image": "python:3.12"}, "retry": {"limit": -1}},
        });
        let problems = validate(value).unwrap_err();
        let paths: Vec<&str> = problems.iter().map(|p| p.path.as_str()).collect();
        assert!(paths.contains(&"/id"), "{paths:?}");
        assert!(paths.contains(&"/description"), "{paths:?}");
        assert!(paths.iter().any(|p| p.starts_with("/step/")), "{paths:?}");
        let unknown_kind = json!({"id": "x", "kind": "dance", "description": "d", "step": {}});
        let problems = validate(unknown_kind).unwrap_err();
        assert_eq!(problems.iter().next().unwrap().path, "/kind");
    }
}
