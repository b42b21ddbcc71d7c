//! `/v1/workflows`: workflows from IR (JSON or YAML), their immutable
//! versions, listing with cursor pagination, soft deletion.

use crate::auth::{Auth, Principal, Role};
use crate::body::WorkflowDoc;
use crate::error::{ApiError, ApiResult};
use crate::openapi::IrWorkflow;
use crate::state::AppState;
use crate::wire::{List, PageQuery, Query, parse_labels};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_store::workflows::{self, Filter, NewVersion, Version, Workflow};
use couler_store::{TenantId, Tx, WorkflowId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowSummary {
    pub id: WorkflowId,
    pub name: String,
    pub description: Option<String>,
    pub labels: BTreeMap<String, String>,
    pub latest_version: i32,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Workflow> for WorkflowSummary {
    fn from(w: Workflow) -> Self {
        WorkflowSummary {
            id: w.id,
            name: w.name,
            description: w.description,
            labels: w.labels.0,
            latest_version: w.latest_version,
            created_by: w.created_by,
            created_at: w.created_at,
            updated_at: w.updated_at,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct VersionView {
    pub version: i32,
    /// BLAKE3 digest of the canonical IR.
    pub hash: String,
    pub step_count: i32,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    /// The canonical IR.
    #[schema(value_type = IrWorkflow)]
    pub ir: serde_json::Value,
}

impl From<Version> for VersionView {
    fn from(v: Version) -> Self {
        VersionView {
            version: v.version,
            hash: v.ir_hash,
            step_count: v.step_count,
            created_by: v.created_by,
            created_at: v.created_at,
            ir: v.ir.0,
        }
    }
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct WorkflowDetail {
    #[serde(flatten)]
    pub workflow: WorkflowSummary,
    /// The requested (default: latest) version.
    pub version: VersionView,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct VersionSummary {
    pub version: i32,
    pub hash: String,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct ListQuery {
    /// Only workflows whose name starts with this.
    pub name: Option<String>,
    /// Label selector `key=value[,key=value…]`; all must match.
    pub label: Option<String>,
    /// From a previous page's `next_cursor`.
    #[param(min_length = 1)]
    pub cursor: Option<String>,
    /// Page size, 1 to 200 (default 50).
    #[param(minimum = 1, maximum = 200)]
    pub limit: Option<u32>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct VersionQuery {
    /// A version number; the latest when absent.
    #[param(minimum = 1)]
    #[serde(default, deserialize_with = "crate::wire::version")]
    pub version: Option<i32>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_workflow, list_workflows))
        .routes(routes!(get_workflow, delete_workflow))
        .routes(routes!(add_version, list_versions))
}

/// A workflow by `wf_…` id or by name, in the caller's tenant.
pub async fn resolve(tx: &mut Tx, tenant: TenantId, reference: &str) -> ApiResult<Workflow> {
    let found = match reference.parse::<WorkflowId>() {
        Ok(id) => workflows::get(tx, tenant, id).await?,
        Err(_) => workflows::get_by_name(tx, tenant, reference).await?,
    };
    found.ok_or_else(|| ApiError::not_found(format!("workflow {reference:?}")))
}

/// Stores `new` as the tenant's workflow of its name: created when there is
/// none, a new version when its latest differs. True when something was
/// written.
pub(crate) async fn save(
    state: &AppState,
    tenant: TenantId,
    new: &NewVersion,
) -> ApiResult<(bool, WorkflowDetail)> {
    let mut tx = state.store.tenant(tenant).await?;
    let saved = match workflows::get_by_name(&mut tx, tenant, &new.name).await? {
        None => {
            let (workflow, version) = workflows::create(&mut tx, tenant, new).await?;
            (true, detail(workflow, version))
        }
        Some(workflow) => add_unless_unchanged(&mut tx, tenant, workflow, new).await?,
    };
    tx.commit().await?;
    Ok(saved)
}

/// Adds `new` as the workflow's next version, unless its latest version
/// has the same canonical hash: then that one, and false.
async fn add_unless_unchanged(
    tx: &mut Tx,
    tenant: TenantId,
    workflow: Workflow,
    new: &NewVersion,
) -> ApiResult<(bool, WorkflowDetail)> {
    let latest = workflows::get_version(tx, tenant, workflow.id, workflow.latest_version).await?;
    if let Some(latest) = latest.filter(|v| v.ir_hash == new.ir_hash) {
        return Ok((false, detail(workflow, latest)));
    }
    let name = workflow.name.clone();
    let (workflow, version) = workflows::add_version(tx, tenant, workflow.id, new)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("workflow {name:?}")))?;
    Ok((true, detail(workflow, version)))
}

fn detail(workflow: Workflow, version: Version) -> WorkflowDetail {
    WorkflowDetail {
        workflow: workflow.into(),
        version: version.into(),
    }
}

fn author(principal: &Principal) -> &str {
    &principal.subject
}

/// Create a workflow from IR.
///
/// The body is the workflow document, as JSON (`application/json`) or YAML
/// (`application/yaml`). Invalid documents get 422 with every problem.
#[utoipa::path(post, path = "/v1/workflows", tag = "workflows",
    request_body(description = "A workflow document (IR)", content((IrWorkflow = "application/json"), (IrWorkflow = "application/yaml"))),
    responses((status = 201, body = WorkflowDetail), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn create_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    ir: WorkflowDoc,
) -> ApiResult<(StatusCode, Json<WorkflowDetail>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let ir = ir.parse().await?;
    let new = NewVersion::from_ir(&ir, author(&principal));
    let mut tx = state.store.tenant(tenant).await?;
    let (workflow, version) = workflows::create(&mut tx, tenant, &new).await?;
    tx.commit().await?;
    tracing::info!(workflow = %workflow.id, name = %workflow.name, "workflow created");
    Ok((
        StatusCode::CREATED,
        Json(WorkflowDetail {
            workflow: workflow.into(),
            version: version.into(),
        }),
    ))
}

/// List workflows, newest first.
#[utoipa::path(get, path = "/v1/workflows", tag = "workflows", params(ListQuery),
    responses((status = 200, body = List<WorkflowSummary>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_workflows(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Query(q): Query<ListQuery>,
) -> ApiResult<Json<List<WorkflowSummary>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let page = PageQuery {
        cursor: q.cursor,
        limit: q.limit,
    };
    let filter = Filter {
        name_prefix: q.name,
        labels: parse_labels(q.label.as_deref())?,
    };
    let mut tx = state.store.tenant(tenant).await?;
    let found = workflows::list(&mut tx, tenant, &filter, page.cursor()?, page.limit()?).await?;
    tx.commit().await?;
    Ok(Json(List {
        items: found.items.into_iter().map(Into::into).collect(),
        next_cursor: found.next.map(|c| c.encode()),
    }))
}

/// Read a workflow (by id or name) with one version's IR.
#[utoipa::path(get, path = "/v1/workflows/{workflow}", tag = "workflows",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), VersionQuery),
    responses((status = 200, body = WorkflowDetail), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
    Query(q): Query<VersionQuery>,
) -> ApiResult<Json<WorkflowDetail>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = resolve(&mut tx, tenant, &reference).await?;
    let number = q.version.unwrap_or(workflow.latest_version);
    let version = workflows::get_version(&mut tx, tenant, workflow.id, number)
        .await?
        .ok_or_else(|| {
            ApiError::not_found(format!("version {number} of workflow {reference:?}"))
                .at("/version")
        })?;
    tx.commit().await?;
    Ok(Json(WorkflowDetail {
        workflow: workflow.into(),
        version: version.into(),
    }))
}

/// Delete a workflow. Its versions stay for the runs that use them.
#[utoipa::path(delete, path = "/v1/workflows/{workflow}", tag = "workflows",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    responses((status = 204), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn delete_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
) -> ApiResult<StatusCode> {
    let tenant = principal.tenant(Role::Editor)?;
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = resolve(&mut tx, tenant, &reference).await?;
    workflows::delete(&mut tx, tenant, workflow.id).await?;
    tx.commit().await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Add a version to a workflow.
///
/// The document's `name` must be the workflow's. A document identical to the
/// latest version (same canonical hash) returns that version with 200.
#[utoipa::path(post, path = "/v1/workflows/{workflow}/versions", tag = "workflows",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    request_body(description = "A workflow document (IR)", content((IrWorkflow = "application/json"), (IrWorkflow = "application/yaml"))),
    responses((status = 201, body = WorkflowDetail), (status = 200, body = WorkflowDetail),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn add_version(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
    ir: WorkflowDoc,
) -> ApiResult<(StatusCode, Json<WorkflowDetail>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let ir = ir.parse().await?;
    let new = NewVersion::from_ir(&ir, author(&principal));
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = resolve(&mut tx, tenant, &reference).await?;
    if workflow.name != new.name {
        return Err(ApiError::Invalid(couler_ir::Problems(vec![
            couler_ir::Problem {
                path: "/name".into(),
                code: couler_ir::Code::InvalidName,
                message: format!(
                    "the document is named {:?}; this workflow is {:?}",
                    new.name, workflow.name
                ),
            },
        ])));
    }
    let (added, detail) = add_unless_unchanged(&mut tx, tenant, workflow, &new).await?;
    tx.commit().await?;
    let status = if added {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(detail)))
}

/// List a workflow's versions, newest first.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/versions", tag = "workflows",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")),
    responses((status = 200, body = Vec<VersionSummary>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_versions(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(reference): Path<String>,
) -> ApiResult<Json<Vec<VersionSummary>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let workflow = resolve(&mut tx, tenant, &reference).await?;
    let versions = workflows::list_versions(&mut tx, tenant, workflow.id).await?;
    tx.commit().await?;
    Ok(Json(
        versions
            .into_iter()
            .map(|(version, hash, created_at, created_by)| VersionSummary {
                version,
                hash,
                created_by,
                created_at,
            })
            .collect(),
    ))
}
