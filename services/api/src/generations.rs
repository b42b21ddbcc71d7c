//! `/v1/generations` (also `POST /v1/workflows:generate`): natural language
//! → a workflow draft, revised by user feedback, every draft kept. Nothing
//! runs: a draft is IR the user saves or submits. Editors generate and give
//! feedback; viewers read.
//!
//! Tokens an LLM spends are added to the tenant's monthly account. The
//! generator is told what is left of the budget (`tokens_left`); with
//! nothing left it drafts with the offline planner, which costs nothing,
//! so an exhausted budget never refuses a request.

use crate::auth::{Auth, Principal, Role};
use crate::body::Body;
use crate::error::{ApiError, ApiResult};
use crate::state::AppState;
use crate::step_library::tenant_library;
use crate::wire::{List, PageQuery, Query, path_id};
use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use chrono::{DateTime, Utc};
use couler_ir::{Code, Problem, Problems};
use couler_nl::generate::{Author, Draft, GenerateError, Request};
use couler_nl::offline::PlanError;
use couler_nl::safety::ImagePolicy;
use couler_store::generations::{self, DraftSummary, Generation, NewDraft};
use couler_store::{GenerationId, TenantId, llm_usage, tenants};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;
use utoipa_axum::{router::OpenApiRouter, routes};

/// What to generate.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct GenerateBody {
    /// What the workflow should do, in English or Chinese.
    pub description: String,
    /// The workflow's name (a DNS label, as every workflow name); derived
    /// from the description when absent.
    #[schema(
        pattern = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$",
        min_length = 1,
        max_length = 63
    )]
    pub name: Option<String>,
}

/// How to revise the latest draft.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct FeedbackBody {
    /// E.g. "use 4 GPUs for training".
    pub text: String,
}

#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GenerationSummary {
    pub id: GenerationId,
    pub description: String,
    pub name: Option<String>,
    /// The number of the latest draft.
    pub current_draft: i32,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

impl From<Generation> for GenerationSummary {
    fn from(g: Generation) -> Self {
        GenerationSummary {
            id: g.id,
            description: g.description,
            name: g.name,
            current_draft: g.current_draft,
            created_by: g.created_by,
            created_at: g.created_at,
            updated_at: g.updated_at,
        }
    }
}

/// Tokens spent on a draft.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, ToSchema)]
pub struct UsageView {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
}

/// Who wrote a draft: `llm` (with its model) or `offline` (with why the
/// LLM was not used).
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct AuthorView {
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

impl From<&Author> for AuthorView {
    fn from(a: &Author) -> Self {
        match a {
            Author::Llm { model } => AuthorView {
                kind: "llm".into(),
                model: Some(model.clone()),
                reason: None,
            },
            Author::Offline { reason } => AuthorView {
                kind: "offline".into(),
                model: None,
                reason: reason.clone(),
            },
        }
    }
}

/// One draft: the IR and how it came about.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DraftView {
    pub n: i32,
    /// The feedback this draft answers; absent for the first.
    pub feedback: Option<String>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    /// The workflow (IR); valid, not stored.
    #[schema(value_type = crate::openapi::IrWorkflow)]
    pub workflow: Value,
    /// The typed subtasks the description was split into.
    #[schema(value_type = Object)]
    pub decomposition: Value,
    /// Each step, the template it came from, and why it is there.
    #[schema(value_type = Vec<Object>)]
    pub explanations: Vec<Value>,
    /// The critique's score (0–1); absent for offline drafts.
    pub score: Option<f64>,
    pub usage: UsageView,
    /// Things the user should know (masked injections, assumptions …).
    #[schema(value_type = Vec<Object>)]
    pub warnings: Vec<Value>,
    pub author: AuthorView,
}

/// A draft in a generation's history.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct DraftSummaryView {
    pub n: i32,
    pub feedback: Option<String>,
    /// `llm` or `offline`.
    pub author: String,
    pub score: Option<f64>,
    pub total_tokens: i64,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

impl From<DraftSummary> for DraftSummaryView {
    fn from(d: DraftSummary) -> Self {
        DraftSummaryView {
            n: d.n,
            feedback: d.feedback,
            author: d.author,
            score: d.score,
            total_tokens: d.prompt_tokens + d.completion_tokens,
            created_by: d.created_by,
            created_at: d.created_at,
        }
    }
}

/// A generation with its latest draft and the history of every draft.
#[derive(Debug, Serialize, Deserialize, ToSchema)]
pub struct GenerationDetail {
    #[serde(flatten)]
    pub generation: GenerationSummary,
    pub draft: DraftView,
    /// Every draft, oldest first.
    pub history: Vec<DraftSummaryView>,
}

pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(create_generation, list_generations))
        .routes(routes!(generate_workflow))
        .routes(routes!(get_generation))
        .routes(routes!(get_draft))
        .routes(routes!(give_feedback))
}

fn draft_view(stored: generations::Draft) -> ApiResult<DraftView> {
    let draft: Draft = serde_json::from_value(stored.draft.0)
        .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("reading a stored draft")))?;
    let values = |v: Result<Value, serde_json::Error>| v.expect("drafts serialize");
    Ok(DraftView {
        n: stored.n,
        feedback: stored.feedback,
        created_by: stored.created_by,
        created_at: stored.created_at,
        workflow: values(serde_json::to_value(&draft.workflow)),
        decomposition: values(serde_json::to_value(&draft.decomposition)),
        explanations: draft
            .explanations
            .iter()
            .map(|e| values(serde_json::to_value(e)))
            .collect(),
        score: draft.score,
        usage: UsageView {
            prompt_tokens: draft.usage.prompt_tokens,
            completion_tokens: draft.usage.completion_tokens,
            total_tokens: draft.usage.total(),
        },
        warnings: draft
            .warnings
            .iter()
            .map(|w| values(serde_json::to_value(w)))
            .collect(),
        author: (&draft.author).into(),
    })
}

/// Why nothing could be drafted, as validation problems on the request.
fn generate_error(err: GenerateError, path: &str) -> ApiError {
    let problem = |code, message: String| Problem {
        path: path.to_owned(),
        code,
        message,
    };
    let GenerateError::Plan(plan) = err;
    let problems = match &plan {
        PlanError::NotUnderstood { unknown, .. } => unknown
            .iter()
            .map(|u| problem(Code::InvalidValue, format!("could not understand {u}")))
            .collect(),
        PlanError::TooLong { .. } => vec![problem(Code::OutOfRange, plan.to_string())],
        PlanError::Empty { .. } | PlanError::Policy(_) => {
            vec![problem(Code::InvalidValue, plan.to_string())]
        }
        _ => return ApiError::Internal(anyhow::Error::new(plan).context("generating")),
    };
    ApiError::Invalid(Problems(problems))
}

fn required(text: &str, path: &str, what: &str) -> ApiResult<()> {
    if text.trim().is_empty() {
        return Err(ApiError::Invalid(Problems(vec![Problem {
            path: path.into(),
            code: Code::MissingField,
            message: format!("{what} must not be empty"),
        }])));
    }
    Ok(())
}

fn new_draft<'a>(
    draft: &'a Draft,
    document: &'a Value,
    feedback: Option<&'a str>,
    principal: &'a Principal,
) -> NewDraft<'a> {
    let (author, model) = match &draft.author {
        Author::Llm { model } => ("llm", Some(model.as_str())),
        Author::Offline { .. } => ("offline", None),
    };
    NewDraft {
        feedback,
        draft: document,
        author,
        model,
        score: draft.score,
        prompt_tokens: i64::try_from(draft.usage.prompt_tokens).unwrap_or(i64::MAX),
        completion_tokens: i64::try_from(draft.usage.completion_tokens).unwrap_or(i64::MAX),
        created_by: &principal.subject,
    }
}

/// The images generated steps may use: the platform's patterns and the
/// tenant's own, read in the caller's transaction (not the auth cache, so
/// a changed policy holds from the next request on).
async fn images(
    state: &AppState,
    tx: &mut couler_store::Tx,
    tenant: TenantId,
) -> ApiResult<ImagePolicy> {
    let row = tenants::get(tx, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    Ok(ImagePolicy {
        platform: state.config.generate.allowed_images.clone(),
        tenant: row.allowed_images,
    })
}

/// Adds a draft's tokens to the tenant's month (the offline planner's
/// drafts cost nothing and are not counted).
async fn record_usage(tx: &mut couler_store::Tx, tenant: TenantId, draft: &Draft) -> ApiResult<()> {
    if draft.usage.total() > 0 {
        llm_usage::record(
            tx,
            tenant,
            i64::try_from(draft.usage.prompt_tokens).unwrap_or(i64::MAX),
            i64::try_from(draft.usage.completion_tokens).unwrap_or(i64::MAX),
        )
        .await?;
    }
    Ok(())
}

async fn generate(
    state: AppState,
    principal: Principal,
    body: Body<GenerateBody>,
) -> ApiResult<(StatusCode, Json<GenerationDetail>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let body = body.parse()?;
    required(&body.description, "/description", "the description")?;
    if let Some(name) = body
        .name
        .as_deref()
        .filter(|n| !couler_ir::names::is_dns_label(n))
    {
        return Err(ApiError::Invalid(Problems(vec![Problem {
            path: "/name".into(),
            code: Code::InvalidName,
            message: format!(
                "workflow name {name:?} must be 1-63 lowercase letters, digits or '-', starting and ending with a letter or digit"
            ),
        }])));
    }
    let mut tx = state.store.tenant(tenant).await?;
    let library = tenant_library(&mut tx, tenant).await?;
    let account = llm_usage::account(&mut tx, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    let images = images(&state, &mut tx, tenant).await?;
    tx.commit().await?;
    let request = Request {
        description: &body.description,
        library: &library,
        images: &images,
        name: body.name.as_deref(),
        tokens_left: account.left(),
    };
    // No transaction is held while the LLM thinks.
    let draft = state
        .generator
        .generate(&request)
        .await
        .map_err(|e| generate_error(e, "/description"))?;
    let document = serde_json::to_value(&draft).expect("drafts serialize");
    let new = new_draft(&draft, &document, None, &principal);
    let mut tx = state.store.tenant(tenant).await?;
    // Stored and shown as screened: secret values typed into a
    // description never reach the database or a response.
    let screened = couler_nl::safety::screen(&body.description).text;
    let (generation, stored) =
        generations::create(&mut tx, tenant, &screened, body.name.as_deref(), &new).await?;
    record_usage(&mut tx, tenant, &draft).await?;
    let history = generations::history(&mut tx, tenant, generation.id).await?;
    tx.commit().await?;
    tracing::info!(generation = %generation.id, tokens = draft.usage.total(), "generation drafted");
    let detail = GenerationDetail {
        generation: generation.into(),
        draft: draft_view(stored)?,
        history: history.into_iter().map(Into::into).collect(),
    };
    Ok((StatusCode::CREATED, Json(detail)))
}

/// Draft a workflow from a description.
///
/// Returns the generation with its first draft: valid IR, an explanation of
/// each step, the critique's score, token usage and warnings. Nothing runs.
/// Descriptions nothing can be drafted from get 422 with what was not
/// understood.
#[utoipa::path(post, path = "/v1/generations", tag = "generations", request_body = GenerateBody,
    responses((status = 201, body = GenerationDetail), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all)]
async fn create_generation(
    State(state): State<AppState>,
    Auth(principal): Auth,
    body: Body<GenerateBody>,
) -> ApiResult<(StatusCode, Json<GenerationDetail>)> {
    generate(state, principal, body).await
}

/// Draft a workflow from a description (the same as `POST /v1/generations`).
#[utoipa::path(post, path = "/v1/workflows:generate", tag = "generations", request_body = GenerateBody,
    responses((status = 201, body = GenerationDetail), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all)]
async fn generate_workflow(
    State(state): State<AppState>,
    Auth(principal): Auth,
    body: Body<GenerateBody>,
) -> ApiResult<(StatusCode, Json<GenerationDetail>)> {
    generate(state, principal, body).await
}

/// List generations, newest first.
#[utoipa::path(get, path = "/v1/generations", tag = "generations", params(PageQuery),
    responses((status = 200, body = List<GenerationSummary>), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn list_generations(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Query(page): Query<PageQuery>,
) -> ApiResult<Json<List<GenerationSummary>>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let mut tx = state.store.tenant(tenant).await?;
    let found = generations::list(&mut tx, tenant, page.cursor()?, page.limit()?).await?;
    tx.commit().await?;
    Ok(Json(List {
        items: found.items.into_iter().map(Into::into).collect(),
        next_cursor: found.next.map(|c| c.encode()),
    }))
}

/// Read a generation: its latest draft and the history of every draft.
#[utoipa::path(get, path = "/v1/generations/{id}", tag = "generations",
    params(("id" = String, Path, description = "Generation id (`gen_…`)")),
    responses((status = 200, body = GenerationDetail), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_generation(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(raw): Path<String>,
) -> ApiResult<Json<GenerationDetail>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let id: GenerationId = path_id(&raw, "generation")?;
    let mut tx = state.store.tenant(tenant).await?;
    let generation = generations::get(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("generation {raw:?}")))?;
    let latest = generations::get_draft(&mut tx, tenant, id, generation.current_draft)
        .await?
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("generation {id} lacks its draft")))?;
    let history = generations::history(&mut tx, tenant, id).await?;
    tx.commit().await?;
    Ok(Json(GenerationDetail {
        generation: generation.into(),
        draft: draft_view(latest)?,
        history: history.into_iter().map(Into::into).collect(),
    }))
}

/// Read one draft of a generation (numbered from 1).
#[utoipa::path(get, path = "/v1/generations/{id}/drafts/{n}", tag = "generations",
    params(("id" = String, Path, description = "Generation id (`gen_…`)"), ("n" = i32, Path, description = "Draft number")),
    responses((status = 200, body = DraftView), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
async fn get_draft(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path((raw, n)): Path<(String, String)>,
) -> ApiResult<Json<DraftView>> {
    let tenant = principal.tenant(Role::Viewer)?;
    let id: GenerationId = path_id(&raw, "generation")?;
    let n: i32 = path_id(&n, "draft")?;
    let mut tx = state.store.tenant(tenant).await?;
    let draft = generations::get_draft(&mut tx, tenant, id, n).await?;
    tx.commit().await?;
    let draft = draft.ok_or_else(|| ApiError::not_found(format!("draft {n} of {raw:?}")))?;
    Ok(Json(draft_view(draft)?))
}

/// Revise the latest draft with feedback ("use 4 GPUs for training").
///
/// The new draft becomes the latest; earlier ones stay in the history.
/// Earlier feedback stays in force: the generator sees the description
/// amended by every earlier round. 409 `draft_superseded` when another
/// revision landed first.
#[utoipa::path(post, path = "/v1/generations/{id}/feedback", tag = "generations",
    params(("id" = String, Path, description = "Generation id (`gen_…`)")), request_body = FeedbackBody,
    responses((status = 201, body = GenerationDetail), (status = "4XX", body = crate::error::Problem, content_type = "application/problem+json")))]
#[tracing::instrument(skip_all, fields(generation = %raw))]
async fn give_feedback(
    State(state): State<AppState>,
    Auth(principal): Auth,
    Path(raw): Path<String>,
    body: Body<FeedbackBody>,
) -> ApiResult<(StatusCode, Json<GenerationDetail>)> {
    let tenant = principal.tenant(Role::Editor)?;
    let body = body.parse()?;
    let id: GenerationId = path_id(&raw, "generation")?;
    required(&body.text, "/text", "the feedback")?;
    let mut tx = state.store.tenant(tenant).await?;
    let generation = generations::get(&mut tx, tenant, id)
        .await?
        .ok_or_else(|| ApiError::not_found(format!("generation {raw:?}")))?;
    let previous = generations::get_draft(&mut tx, tenant, id, generation.current_draft)
        .await?
        .ok_or_else(|| ApiError::Internal(anyhow::anyhow!("generation {id} lacks its draft")))?;
    let history = generations::history(&mut tx, tenant, id).await?;
    let library = tenant_library(&mut tx, tenant).await?;
    let account = llm_usage::account(&mut tx, tenant)
        .await?
        .ok_or_else(|| ApiError::not_found("tenant"))?;
    let images = images(&state, &mut tx, tenant).await?;
    tx.commit().await?;
    let previous: Draft = serde_json::from_value(previous.draft.0)
        .map_err(|e| ApiError::Internal(anyhow::Error::new(e).context("reading a stored draft")))?;
    let description = amended(&generation.description, &history);
    let request = Request {
        description: &description,
        library: &library,
        images: &images,
        name: generation.name.as_deref(),
        tokens_left: account.left(),
    };
    let draft = state
        .generator
        .revise(&request, &previous, &body.text)
        .await
        .map_err(|e| generate_error(e, "/text"))?;
    let document = serde_json::to_value(&draft).expect("drafts serialize");
    let feedback = couler_nl::safety::screen(&body.text).text;
    let new = new_draft(&draft, &document, Some(&feedback), &principal);
    let mut tx = state.store.tenant(tenant).await?;
    let (generation, stored) =
        generations::add_draft(&mut tx, tenant, id, generation.current_draft, &new)
            .await?
            .ok_or_else(|| ApiError::Conflict {
                code: "draft_superseded",
                message: "another revision of this generation landed first; read it and retry"
                    .into(),
            })?;
    record_usage(&mut tx, tenant, &draft).await?;
    let history = generations::history(&mut tx, tenant, id).await?;
    tx.commit().await?;
    tracing::info!(
        draft = stored.n,
        tokens = draft.usage.total(),
        "generation revised"
    );
    let detail = GenerationDetail {
        generation: generation.into(),
        draft: draft_view(stored)?,
        history: history.into_iter().map(Into::into).collect(),
    };
    Ok((StatusCode::CREATED, Json(detail)))
}

/// The description with every earlier round of feedback appended.
fn amended(description: &str, history: &[DraftSummary]) -> String {
    let mut text = description.trim_end().to_owned();
    for feedback in history.iter().filter_map(|d| d.feedback.as_deref()) {
        if !text.ends_with(['.', '。', '!', '?']) {
            text.push('.');
        }
        text.push(' ');
        text.push_str(feedback.trim());
    }
    text
}
