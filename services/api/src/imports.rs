//! `POST /v1/workflows:import`: another engine's workflow (an Argo
//! manifest, as an object or as YAML text) in; the IR and the importer's
//! report out, optionally stored as a workflow version and run.
//!
//! An import that would change what runs (a step left out, a dependency
//! or input that cannot be carried over) is refused with every reason,
//! unless the caller accepts them with `acceptChanges`. Settings that only
//! tune Kubernetes (service accounts, pull policies, pod metadata) are
//! dropped with a report entry and never refuse an import.

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::runs::{self, RunOptions, RunView};
use crate::state::AppState;
use crate::workflows::{self, WorkflowDetail};
use axum::Json;
use axum::extract::State;
use axum::http::StatusCode;
use couler_engines::import::{self, ImportError, Unsupported};
use couler_store::workflows::NewVersion;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// The engines Couler imports from.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum ImportFormat {
    /// An Argo `Workflow`, `WorkflowTemplate`, `ClusterWorkflowTemplate` or
    /// `CronWorkflow`.
    #[default]
    Argo,
}

/// What to import, and what to do with the result.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct ImportRequest {
    /// The manifest: a JSON object, or YAML (or JSON) text.
    #[schema(schema_with = source_schema)]
    pub source: Value,
    #[serde(default)]
    pub format: ImportFormat,
    /// Import even when something that changes what runs cannot be carried
    /// over (each such item is still reported, with `changesRun: true`).
    #[serde(default)]
    pub accept_changes: bool,
    /// Store the result as the tenant's workflow of that name (a new
    /// version when it exists and differs).
    #[serde(default)]
    pub store: bool,
    /// Run the result (the stored version when `store` is set).
    pub run: Option<RunOptions>,
}

/// One thing of the source the IR could not carry over.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct UnsupportedItem {
    /// JSON pointer into the source document.
    pub path: String,
    /// A short, stable name of the feature (`volumes`, `templateRef`, …).
    pub feature: String,
    pub message: String,
    /// Whether leaving it out changes what runs; otherwise only a
    /// Kubernetes setting is dropped.
    pub changes_run: bool,
}

impl From<Unsupported> for UnsupportedItem {
    fn from(u: Unsupported) -> Self {
        UnsupportedItem {
            changes_run: u.changes_run(),
            path: u.path,
            feature: u.feature,
            message: u.message,
        }
    }
}

/// The imported workflow, what was left behind, and what was done with it.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ImportResult {
    /// The workflow as IR (valid, canonical).
    #[schema(value_type = crate::openapi::IrWorkflow)]
    pub workflow: Value,
    pub unsupported: Vec<UnsupportedItem>,
    /// The stored workflow, with `store`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored: Option<WorkflowDetail>,
    /// The run started, with `run`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunView>,
}

/// `source`'s schema: an object, or text.
fn source_schema() -> utoipa::openapi::schema::Schema {
    use utoipa::openapi::schema::{Object, ObjectBuilder, OneOfBuilder, Type};
    OneOfBuilder::new()
        .item(Object::with_type(Type::Object))
        .item(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .pattern(Some(crate::openapi::NOT_BLANK)),
        )
        .description(Some("The manifest: a JSON object, or YAML (or JSON) text."))
        .build()
        .into()
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new().routes(routes!(import_workflow))
}

/// Import another engine's workflow.
///
/// Returns the IR and one `unsupported` entry per feature that could not be
/// carried over, each with its JSON pointer into the source. An import
/// where an entry changes what runs is refused (422 `import_changes_run`,
/// one problem per entry at `/source…`) unless `acceptChanges` is set.
/// With `store` the workflow is saved (201 when a version was added); with
/// `run` a run of it is queued (201).
#[utoipa::path(post, path = "/v1/workflows:import", tag = "workflows", request_body = ImportRequest,
    responses((status = 201, body = ImportResult, description = "Stored or run"),
              (status = 200, body = ImportResult, description = "Imported only, or stored unchanged"),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all)]
async fn import_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    body: Body<ImportRequest>,
) -> ApiResult<(StatusCode, Json<ImportResult>)> {
    // Viewers may import to look; storing or running takes an editor.
    let tenant = principal.tenant(Role::Viewer)?;
    let req = body.parse()?;
    if req.store || req.run.is_some() {
        principal.tenant(Role::Editor)?;
    }
    if let Some(run) = &req.run {
        run.check()?;
    }
    let text = source_text(&req.source)?;
    let ImportFormat::Argo = req.format;
    let imported = tokio::task::spawn_blocking(move || import::argo(&text))
        .await
        .map_err(anyhow::Error::from)?
        .map_err(refused)?;
    let changing: Vec<&Unsupported> = imported
        .unsupported
        .iter()
        .filter(|u| u.changes_run())
        .collect();
    if !req.accept_changes && !changing.is_empty() {
        return Err(ApiError::Refused {
            code: "import_changes_run",
            message: format!(
                "{} thing(s) of the source cannot be carried over and would change what runs; \
                 set acceptChanges to import anyway",
                changing.len()
            ),
            problems: changing.iter().map(|u| problem(u)).collect(),
        });
    }
    let workflow = imported.workflow;
    let mut status = StatusCode::OK;
    let stored = if req.store {
        let new = NewVersion::from_ir(&workflow, &principal.subject);
        let (created, detail) = workflows::save(&state, tenant, &new).await?;
        if created {
            status = StatusCode::CREATED;
        }
        Some(detail)
    } else {
        None
    };
    let run = match req.run {
        None => None,
        Some(options) => {
            let target = match &stored {
                Some(detail) => crate::batch::Target::Stored {
                    reference: detail.workflow.id.to_string(),
                    version: Some(detail.version.version),
                },
                None => runs::inline_target(workflow.clone())?,
            };
            let start = runs::Start {
                created_by: principal.subject.clone(),
                target,
                options,
                idempotency: None,
                trigger: Default::default(),
                delivery: None,
            };
            let (_, run) = start.queue(&state, tenant).await?;
            status = StatusCode::CREATED;
            Some(run)
        }
    };
    Ok((
        status,
        Json(ImportResult {
            workflow: serde_json::to_value(&workflow).map_err(anyhow::Error::from)?,
            unsupported: imported.unsupported.into_iter().map(Into::into).collect(),
            stored,
            run,
        }),
    ))
}

/// The source as text for the importer: YAML text as given, an object as
/// JSON (which YAML reads as is).
fn source_text(source: &Value) -> ApiResult<String> {
    match source {
        Value::String(text) if !text.trim().is_empty() => Ok(text.clone()),
        Value::Object(_) => Ok(source.to_string()),
        _ => Err(ApiError::bad_request(
            "invalid_source",
            "source must be a manifest: an object, or YAML text",
            "/source",
        )),
    }
}

/// A pointer into the source as one into the request.
fn at_source(path: &str) -> String {
    format!("/source{path}")
}

fn problem(u: &Unsupported) -> crate::error::ProblemItem {
    crate::error::ProblemItem {
        path: at_source(&u.path),
        code: u.feature.clone(),
        message: u.message.clone(),
    }
}

fn refused(e: ImportError) -> ApiError {
    match e {
        ImportError::Syntax(message) => ApiError::bad_request(
            "invalid_source",
            format!("not valid YAML: {message}"),
            "/source",
        ),
        ImportError::NotAWorkflow(_) | ImportError::NoEntrypoint(_) => ApiError::Refused {
            code: "not_a_workflow",
            message: e.to_string(),
            problems: vec![crate::error::ProblemItem {
                path: "/source".into(),
                code: "not_a_workflow".into(),
                message: e.to_string(),
            }],
        },
        ImportError::Nothing { ref unsupported } => ApiError::Refused {
            code: "nothing_imported",
            message: e.to_string(),
            problems: unsupported.iter().map(problem).collect(),
        },
        ImportError::Invalid(problems) => ApiError::Internal(anyhow::anyhow!(
            "the importer built an invalid workflow: {problems}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pointer_into_the_source_is_one_into_the_request() {
        assert_eq!(at_source("/spec/templates/0"), "/source/spec/templates/0");
        assert_eq!(at_source(""), "/source");
    }

    #[test]
    fn only_objects_and_text_are_sources() {
        assert!(source_text(&serde_json::json!({"kind": "Workflow"})).is_ok());
        assert!(source_text(&serde_json::json!("kind: Workflow")).is_ok());
        for bad in [
            serde_json::json!(1),
            serde_json::json!([]),
            serde_json::json!("  "),
        ] {
            let e = source_text(&bad).unwrap_err();
            assert!(matches!(
                e,
                ApiError::BadRequest {
                    code: "invalid_source",
                    ..
                }
            ));
        }
    }
}
