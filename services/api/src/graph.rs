//! The DAG of a workflow as portals draw it: nodes and edges computed by
//! `couler-ir` (the same dependency rules the scheduler runs by: `depends`,
//! references to outputs, groups), so no client re-implements them.
//! `GET /v1/runs/{id}/graph` for a run, `POST /v1/graph` for a stored
//! workflow version or inline IR. The `ETag` is the IR's hash: a client
//! keeps its layout while the hash stays the same.

use crate::auth::{Auth, Role};
use crate::body::Body;
use crate::cache::requested_ir;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::path_id;
use axum::Json;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use couler_ir::Workflow;
use couler_store::RunId;
use serde::{Deserialize, Serialize};
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(run_graph))
        .routes(routes!(graph))
}

/// What kind of node a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum NodeKind {
    /// Runs once.
    Step,
    /// Fans out over items (`map`): its instances are `name[i]`.
    Map,
    /// Runs again while its condition holds (`repeat`).
    While,
    /// A hyperparameter search (`tune`): its trials run under it.
    Tune,
    /// An exit handler: runs after the workflow, whatever its outcome.
    Exit,
}

#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GraphNode {
    /// The step's name (an exit handler's, for `exit`).
    pub name: String,
    pub kind: NodeKind,
}

/// Nodes in IR order (steps, then exit handlers) and edges between them.
#[derive(Debug, Clone, Serialize, Deserialize, ToSchema)]
pub struct GraphView {
    /// The workflow digest, also the `ETag`.
    pub ir_hash: String,
    pub nodes: Vec<GraphNode>,
    /// `[from, to]` node indexes: `to` runs after `from`. Exit handlers
    /// that depend on no other exit handler follow every last step of
    /// the workflow.
    #[schema(value_type = Vec<Vec<u32>>)]
    pub edges: Vec<[u32; 2]>,
}

/// The graph of a valid workflow.
pub fn of(workflow: &Workflow) -> Result<GraphView, couler_ir::Problems> {
    let dag = couler_ir::validate(workflow, &couler_ir::Limits::default())?;
    let kind = |s: &couler_ir::Step| {
        if s.map.is_some() {
            NodeKind::Map
        } else if s.repeat.is_some() {
            NodeKind::While
        } else if s.tune.is_some() {
            NodeKind::Tune
        } else {
            NodeKind::Step
        }
    };
    let mut nodes: Vec<GraphNode> = workflow
        .steps
        .iter()
        .map(|s| GraphNode {
            name: s.name.clone(),
            kind: kind(s),
        })
        .collect();
    nodes.extend(workflow.on_exit.iter().map(|s| GraphNode {
        name: s.name.clone(),
        kind: NodeKind::Exit,
    }));
    let main = workflow.steps.len() as u32;
    let mut edges = Vec::new();
    for to in 0..main {
        edges.extend(dag.steps.upstream(to).iter().map(|&from| [from, to]));
    }
    let sinks: Vec<u32> = (0..main)
        .filter(|&s| dag.steps.downstream(s).is_empty())
        .collect();
    for to in 0..workflow.on_exit.len() as u32 {
        let upstream = dag.on_exit.upstream(to);
        if upstream.is_empty() {
            edges.extend(sinks.iter().map(|&from| [from, main + to]));
        }
        edges.extend(upstream.iter().map(|&from| [main + from, main + to]));
    }
    Ok(GraphView {
        ir_hash: couler_ir::hash::workflow_digest(workflow).to_hex(),
        nodes,
        edges,
    })
}

/// The graph, or 304 when the client's copy (`If-None-Match`) is current.
fn answer(headers: &HeaderMap, view: GraphView) -> Response {
    let etag = format!("\"{}\"", view.ir_hash);
    let current = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag || t.trim() == "*"));
    let mut response = if current {
        StatusCode::NOT_MODIFIED.into_response()
    } else {
        Json(view).into_response()
    };
    if let Ok(v) = HeaderValue::from_str(&etag) {
        response.headers_mut().insert(header::ETAG, v);
    }
    response
}

async fn graph_of(workflow: Workflow) -> ApiResult<GraphView> {
    tokio::task::spawn_blocking(move || of(&workflow))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("graph task failed: {e}")))?
        .map_err(|p| ApiError::Internal(anyhow::anyhow!("a stored workflow is invalid: {p}")))
}

/// The DAG a run executes.
#[utoipa::path(get, path = "/v1/runs/{id}/graph", tag = "runs", params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = GraphView, headers(("ETag" = String, description = "The IR's hash"))),
        (status = 304, description = "The client's copy (If-None-Match) is current"),
        (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn run_graph(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
    headers: HeaderMap,
) -> ApiResult<Response> {
    let tenant = principal.tenant(Role::Viewer)?;
    let id: RunId = path_id(&id, "run")?;
    let mut tx = state.store.tenant(tenant).await?;
    let ir = couler_store::runs::ir(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found("run"))?;
    tx.commit().await?;
    let workflow: Workflow = serde_json::from_value(ir).map_err(anyhow::Error::from)?;
    Ok(answer(&headers, graph_of(workflow).await?))
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GraphRequest {
    /// A stored workflow: its `wf_…` id or its name. Omit when giving `ir`.
    pub workflow: Option<String>,
    /// The version to draw; the latest when absent.
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "crate::wire::version")]
    pub version: Option<i32>,
    /// A workflow document to draw as is, instead of a stored workflow.
    #[schema(value_type = Option<crate::openapi::IrWorkflow>)]
    pub ir: Option<serde_json::Value>,
}

/// The DAG of a stored workflow version or of inline IR.
#[utoipa::path(post, path = "/v1/graph", tag = "workflows", request_body = GraphRequest,
    responses((status = 200, body = GraphView, headers(("ETag" = String, description = "The IR's hash"))),
        (status = 304, description = "The client's copy (If-None-Match) is current"),
        (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn graph(
    State(state): State<AppState>,
    Auth(principal): Auth,
    headers: HeaderMap,
    req: Body<GraphRequest>,
) -> ApiResult<Response> {
    let tenant = principal.tenant(Role::Viewer)?;
    let req = req.parse()?;
    let workflow = requested_ir(&state, tenant, req.workflow, req.version, req.ir)
        .await?
        .into_workflow()?;
    Ok(answer(&headers, graph_of(workflow).await?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_come_from_depends_references_and_exit_handlers() {
        let workflow: Workflow = serde_json::from_value(serde_json::json!({
            "apiVersion": "couler.dev/v1alpha1",
            "name": "g",
            "steps": [
                {"name": "a", "container": {"image": "alpine", "command": ["echo", "a"]}},
                {"name": "b", "container": {"image": "alpine", "command": ["echo", "{{steps.a.outputs.result}}"]}},
                {"name": "c", "depends": ["a"], "map": {"items": [1, 2]},
                 "container": {"image": "alpine", "command": ["echo", "{{item}}"]}},
            ],
            "onExit": [{"name": "report", "container": {"image": "alpine", "command": ["true"]}}],
        }))
        .unwrap();
        let g = of(&workflow).unwrap();
        let kinds: Vec<NodeKind> = g.nodes.iter().map(|n| n.kind).collect();
        assert_eq!(
            kinds,
            [
                NodeKind::Step,
                NodeKind::Step,
                NodeKind::Map,
                NodeKind::Exit
            ]
        );
        let mut edges = g.edges.clone();
        edges.sort();
        // a→b by reference, a→c by depends, the sinks b and c → report.
        assert_eq!(edges, [[0, 1], [0, 2], [1, 3], [2, 3]]);
        assert_eq!(g.ir_hash.len(), 64);
    }
}
