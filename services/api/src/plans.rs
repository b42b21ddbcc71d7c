//! Plans: what the optimizer does with a workflow — cached steps,
//! sub-workflows of a split, hyperparameter trials, resource changes — and
//! why, without running it; and the plan a run executes.

use crate::auth::{Auth, Role, tenant_by_id};
use crate::body::{Body, Chosen};
use crate::cache::{ExplainRequest, requested_ir, workflow_ir};
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::wire::{Query, path_id};
use axum::Json;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use couler_ir::scalar::ParamValue;
use couler_optimizer::{Action, Plan, PlanError, ReuseStatus};
use couler_store::{RunId, TenantId};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use utoipa::{IntoParams, ToSchema};
use utoipa_axum::{router::OpenApiRouter, routes};

#[derive(Debug, Default, Serialize, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanOptions {
    /// The version to plan; the latest when absent.
    #[schema(minimum = 1)]
    #[serde(default, deserialize_with = "crate::wire::version")]
    pub version: Option<i32>,
    /// Values for the workflow's parameters, as for a run.
    #[serde(default)]
    #[schema(value_type = BTreeMap<String, crate::openapi::IrParamValue>)]
    pub parameters: BTreeMap<String, ParamValue>,
}

/// What happens to a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StepAction {
    /// The step runs.
    Run,
    /// Its exact inputs were computed before: the cache's result is used.
    Cached,
    /// Kept from an earlier attempt of the run.
    Kept,
    /// Skipped in an earlier attempt of the run.
    Skipped,
    /// Computed before, and every step that reads it is cached: not run.
    NotNeeded,
    /// A hyperparameter search: its trials run, and it takes the best one's outputs.
    Tune,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlannedStepView {
    pub name: String,
    pub action: StepAction,
    /// The sub-workflow (index into `parts`) that runs the step, when split.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub part: Option<u32>,
    pub exit_handler: bool,
    /// CPU and memory requests as planned (after resource advice).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<String>,
    /// The optimizer's reasons concerning this step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub why: Vec<String>,
}

/// One sub-workflow of a split plan.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PartView {
    pub index: u32,
    pub steps: Vec<String>,
    /// Parts that must succeed before this one is submitted.
    pub after: Vec<u32>,
    /// Estimated manifest bytes.
    pub bytes: u64,
    pub pods: u64,
}

/// A hyperparameter search, as planned.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct SearchView {
    pub step: String,
    /// grid, random, halving or llm (random when the LLM could not help).
    pub strategy: String,
    /// The configurations trials run, in order.
    #[schema(value_type = Vec<Object>)]
    pub configurations: Vec<BTreeMap<String, String>>,
    pub warnings: Vec<String>,
}

/// A resource recommendation from measured history.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AdviceView {
    pub step: String,
    pub cpu: Option<String>,
    pub memory: Option<String>,
    /// Whether the plan uses it (the step requested none).
    pub applied: bool,
    pub samples: u32,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DecisionView {
    /// The optimizer pass that decided.
    pub pass: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<String>,
    pub message: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct PlanView {
    pub workflow: String,
    /// The engine the tenant's runs go to.
    pub engine: String,
    /// Steps, then exit handlers, in document order.
    pub steps: Vec<PlannedStepView>,
    /// Sub-workflows, in a submission order (empty: one workflow).
    pub parts: Vec<PartView>,
    pub tuning: Vec<SearchView>,
    pub advice: Vec<AdviceView>,
    pub decisions: Vec<DecisionView>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(plan_inline))
        .routes(routes!(plan_workflow))
        .routes(routes!(run_plan))
        .routes(routes!(compile_workflow))
}

#[derive(Debug, Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(deny_unknown_fields)]
pub struct CompileQuery {
    /// argo, tekton, airflow or kfp.
    #[param(pattern = "^(argo|tekton|airflow|kfp)$")]
    pub engine: String,
    /// A version number; the latest when absent.
    #[param(minimum = 1)]
    #[serde(default, deserialize_with = "crate::wire::version")]
    pub version: Option<i32>,
}

/// A stored workflow as an engine's own manifest (Argo `Workflow`, Tekton
/// `Pipeline` + `PipelineRun`, Airflow DAG file, KFP `PipelineSpec`),
/// planned as a run with the parameters' defaults would be.
#[utoipa::path(get, path = "/v1/workflows/{workflow}/compile", tag = "plans",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name"), CompileQuery),
    responses((status = 200, description = "The manifest: YAML (one document; for Tekton a stream of the `Pipeline` and the `PipelineRun`), or for Airflow the DAG file in Python",
        content((serde_json::Value = "application/yaml"), (String = "text/x-python"))),
              (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn compile_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(workflow): Path<String>,
    Query(query): Query<CompileQuery>,
) -> ApiResult<Response> {
    let tenant = principal.tenant(Role::Viewer)?;
    if !couler_engines::compile::ENGINES.contains(&query.engine.as_str()) {
        return Err(ApiError::bad_request(
            "unknown_engine",
            format!(
                "engine {:?} is not one of {}",
                query.engine,
                couler_engines::compile::ENGINES.join(", ")
            ),
            "/engine",
        ));
    }
    let chosen = Chosen::Stored {
        reference: workflow,
        version: query.version,
    };
    let workflow = workflow_ir(&state, tenant, chosen).await?.into_workflow()?;
    let parameters = crate::runs::resolve_parameters(&workflow.parameters, &BTreeMap::new())?;
    let facts = couler_optimizer::Facts {
        parameters,
        ..Default::default()
    };
    let plan = couler_optimizer::Pipeline::default()
        .plan(workflow, &facts, |_, f| f())
        .map_err(plan_error)?;
    let run = couler_engines::RunSpec::new(tenant.to_string(), "preview", 1);
    let manifest =
        couler_engines::compile::compile(&query.engine, &plan, &run).map_err(|e| match e {
            couler_engines::EngineError::Unsupported { .. } => {
                ApiError::Invalid(couler_ir::Problems(vec![couler_ir::Problem {
                    path: String::new(),
                    code: couler_ir::Code::UnsupportedFeature,
                    message: e.to_string(),
                }]))
            }
            other => ApiError::Internal(anyhow::anyhow!("{other}")),
        })?;
    let media = match manifest.files.as_slice() {
        [one] => one.media_type,
        _ => "application/yaml",
    };
    Ok(([(axum::http::header::CONTENT_TYPE, media)], manifest.text()).into_response())
}

/// Plan a stored workflow (or an inline document) without running it.
///
/// Runs every optimizer pass as a run would — parameters, cache lookups
/// (read-only: nothing is counted), trial expansion, resource advice from
/// history, the split under the tenant's budget — and says why.
#[utoipa::path(post, path = "/v1/plans", tag = "plans", request_body = ExplainRequest,
    responses((status = 200, body = PlanView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn plan_inline(
    State(state): State<AppState>,
    Auth(principal): Auth,
    req: Body<ExplainRequest>,
) -> ApiResult<Json<PlanView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let req = req.parse()?;
    let workflow = requested_ir(&state, tenant, req.workflow, req.version, req.ir)
        .await?
        .into_workflow()?;
    plan(&state, tenant, workflow, &req.parameters)
        .await
        .map(Json)
}

/// Plan a stored workflow without running it (see `POST /v1/plans`).
#[utoipa::path(post, path = "/v1/workflows/{workflow}/plan", tag = "plans",
    params(("workflow" = String, Path, description = "Workflow id (`wf_…`) or name")), request_body = PlanOptions,
    responses((status = 200, body = PlanView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn plan_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
    options: Body<PlanOptions>,
) -> ApiResult<Json<PlanView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let options = options.parse()?;
    let chosen = Chosen::Stored {
        reference: id,
        version: options.version,
    };
    let workflow = workflow_ir(&state, tenant, chosen).await?.into_workflow()?;
    plan(&state, tenant, workflow, &options.parameters)
        .await
        .map(Json)
}

/// The plan a run executes (once the scheduler made it).
#[utoipa::path(get, path = "/v1/runs/{id}/plan", tag = "runs", params(("id" = String, Path, description = "Run id")),
    responses((status = 200, body = PlanView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn run_plan(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(id): Path<String>,
) -> ApiResult<Json<PlanView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let id: RunId = path_id(&id, "run")?;
    let mut tx = state.store.tenant(tenant).await?;
    let stored = couler_store::runs::plan(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found("run"))?;
    let run = couler_store::runs::get(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found("run"))?;
    tx.commit().await?;
    let Some(stored) = stored else {
        return Err(ApiError::Conflict {
            code: "not_planned",
            message: format!("run {id} is {} and has no plan yet", run.status),
        });
    };
    let plan: Plan = serde_json::from_value(stored).map_err(anyhow::Error::from)?;
    let engine = tenant_by_id(&state, tenant)
        .await?
        .map(|t| t.engine.clone())
        .unwrap_or_default();
    Ok(Json(view(&plan, engine)))
}

async fn plan(
    state: &AppState,
    tenant: TenantId,
    workflow: couler_ir::Workflow,
    given: &BTreeMap<String, ParamValue>,
) -> ApiResult<PlanView> {
    let settings = tenant_by_id(state, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    let parameters = crate::runs::resolve_parameters(&workflow.parameters, given)?;
    let sources = couler_planner::Sources {
        store: &state.store,
        cache: Some(&state.cache),
        llm: None,
    };
    let request = couler_planner::Request {
        tenant,
        workflow,
        parameters,
        earlier: BTreeMap::new(),
        share_cache: settings.share_cache,
        reads_artifacts: couler_engines::reads_artifacts_from(&settings.engine),
        records_artifacts: couler_engines::records_artifacts(&settings.engine),
        split_budget: couler_planner::split_budget(&settings.engine, &settings.split_budget),
    };
    // Explaining a plan counts none of its hits.
    let planned = couler_planner::plan(&sources, request)
        .await
        .map_err(plan_error)?;
    Ok(view(&planned.plan, settings.engine.clone()))
}

/// A planning failure as the client's problem.
pub fn plan_error(e: PlanError) -> ApiError {
    let problem = |path: String, code, message: String| {
        ApiError::Invalid(couler_ir::Problems(vec![couler_ir::Problem {
            path,
            code,
            message,
        }]))
    };
    let message = e.to_string();
    match e {
        PlanError::Invalid(problems) => ApiError::Invalid(problems),
        PlanError::MissingParameter(name) => problem(
            crate::error::pointer(["parameters", &name]),
            couler_ir::Code::MissingField,
            format!("parameter {name:?} is required"),
        ),
        PlanError::NotAList { path, .. } => problem(path, couler_ir::Code::InvalidValue, message),
        PlanError::Tuning(_) => problem(String::new(), couler_ir::Code::InvalidValue, message),
    }
}

fn view(plan: &Plan, engine: String) -> PlanView {
    let mut why: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for d in &plan.decisions {
        if let Some(step) = &d.step {
            why.entry(step.as_str())
                .or_default()
                .push(format!("{}: {}", d.pass, d.message));
        }
    }
    let part_of: BTreeMap<&str, u32> = plan
        .parts
        .iter()
        .enumerate()
        .flat_map(|(i, p)| p.steps.iter().map(move |s| (s.as_str(), i as u32)))
        .collect();
    let steps = plan
        .steps
        .iter()
        .enumerate()
        .map(|(i, planned)| {
            let ir = plan.ir_step(i);
            let action = match &planned.action {
                Action::Run if plan.tuning.contains_key(&planned.name) => StepAction::Tune,
                Action::Run => StepAction::Run,
                Action::Reuse { status, .. } => match status {
                    ReuseStatus::Cached => StepAction::Cached,
                    ReuseStatus::Succeeded => StepAction::Kept,
                    ReuseStatus::Skipped => StepAction::Skipped,
                    ReuseStatus::NotNeeded => StepAction::NotNeeded,
                },
            };
            let resources = ir.resources.as_ref();
            PlannedStepView {
                name: planned.name.clone(),
                action,
                part: part_of.get(planned.name.as_str()).copied(),
                exit_handler: planned.exit_handler,
                cpu: resources.and_then(|r| r.cpu).map(|c| c.to_string()),
                memory: resources.and_then(|r| r.memory).map(|m| m.to_string()),
                why: why.remove(planned.name.as_str()).unwrap_or_default(),
            }
        })
        .collect();
    PlanView {
        workflow: plan.workflow.name.clone(),
        engine,
        steps,
        parts: plan
            .parts
            .iter()
            .enumerate()
            .map(|(i, p)| PartView {
                index: i as u32,
                steps: p.steps.clone(),
                after: p.after.clone(),
                bytes: p.bytes,
                pods: p.pods,
            })
            .collect(),
        tuning: plan
            .tuning
            .iter()
            .map(|(step, s)| SearchView {
                step: step.clone(),
                strategy: format!("{:?}", s.strategy).to_lowercase(),
                configurations: s.configs.clone(),
                warnings: s.warnings.clone(),
            })
            .collect(),
        advice: plan
            .advice
            .iter()
            .map(|a| AdviceView {
                step: a.step.clone(),
                cpu: a.cpu.clone(),
                memory: a.memory.clone(),
                applied: a.applied,
                samples: a.samples,
            })
            .collect(),
        decisions: plan
            .decisions
            .iter()
            .map(|d| DecisionView {
                pass: d.pass.clone(),
                step: d.step.clone(),
                message: d.message.clone(),
            })
            .collect(),
    }
}
