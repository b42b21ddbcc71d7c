//! Natural-language generations and their drafts: the first draft and one
//! per round of user feedback, all kept, numbered from 1.

use crate::page::{Cursor, Page};
use crate::{GenerationId, TenantId, Tx};
use chrono::{DateTime, Utc};
use sqlx::types::Json;

#[derive(Debug, Clone, PartialEq)]
pub struct Generation {
    pub id: GenerationId,
    pub description: String,
    /// The workflow name the user asked for.
    pub name: Option<String>,
    /// The number of the latest draft.
    pub current_draft: i32,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

/// One stored draft.
#[derive(Debug, Clone, PartialEq)]
pub struct Draft {
    pub n: i32,
    pub feedback: Option<String>,
    /// A serialized `couler_nl::generate::Draft`.
    pub draft: Json<serde_json::Value>,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// A draft without its document, for histories.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftSummary {
    pub n: i32,
    pub feedback: Option<String>,
    /// `llm` or `offline`.
    pub author: String,
    pub model: Option<String>,
    pub score: Option<f64>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// A draft to store.
#[derive(Debug, Clone)]
pub struct NewDraft<'a> {
    pub feedback: Option<&'a str>,
    pub draft: &'a serde_json::Value,
    /// `llm` or `offline`.
    pub author: &'a str,
    pub model: Option<&'a str>,
    pub score: Option<f64>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    pub created_by: &'a str,
}

/// Creates a generation with its first draft.
pub async fn create(
    tx: &mut Tx,
    tenant: TenantId,
    description: &str,
    name: Option<&str>,
    first: &NewDraft<'_>,
) -> Result<(Generation, Draft), sqlx::Error> {
    let generation = sqlx::query_as!(
        Generation,
        r#"INSERT INTO generations (tenant_id, id, description, name, current_draft, created_by)
           VALUES ($1, $2, $3, $4, 1, $5)
           RETURNING id AS "id: GenerationId", description, name, current_draft, created_by, created_at, updated_at"#,
        tenant as TenantId,
        GenerationId::new() as GenerationId,
        description,
        name,
        first.created_by,
    )
    .fetch_one(&mut **tx)
    .await?;
    let draft = insert_draft(tx, tenant, generation.id, 1, first).await?;
    Ok((generation, draft))
}

/// Adds the draft after `previous`; `None` when the generation is gone or
/// another draft was added since `previous` was read.
pub async fn add_draft(
    tx: &mut Tx,
    tenant: TenantId,
    id: GenerationId,
    previous: i32,
    new: &NewDraft<'_>,
) -> Result<Option<(Generation, Draft)>, sqlx::Error> {
    let generation = sqlx::query_as!(
        Generation,
        r#"UPDATE generations SET current_draft = current_draft + 1, updated_at = now()
           WHERE tenant_id = $1 AND id = $2 AND current_draft = $3
           RETURNING id AS "id: GenerationId", description, name, current_draft, created_by, created_at, updated_at"#,
        tenant as TenantId,
        id as GenerationId,
        previous,
    )
    .fetch_optional(&mut **tx)
    .await?;
    let Some(generation) = generation else {
        return Ok(None);
    };
    let draft = insert_draft(tx, tenant, id, generation.current_draft, new).await?;
    Ok(Some((generation, draft)))
}

async fn insert_draft(
    tx: &mut Tx,
    tenant: TenantId,
    id: GenerationId,
    n: i32,
    new: &NewDraft<'_>,
) -> Result<Draft, sqlx::Error> {
    sqlx::query_as!(
        Draft,
        r#"INSERT INTO generation_drafts (tenant_id, generation_id, n, feedback, draft, author, model, score,
                                          prompt_tokens, completion_tokens, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
           RETURNING n, feedback, draft AS "draft: Json<serde_json::Value>", created_by, created_at"#,
        tenant as TenantId,
        id as GenerationId,
        n,
        new.feedback,
        Json(new.draft) as _,
        new.author,
        new.model,
        new.score,
        new.prompt_tokens,
        new.completion_tokens,
        new.created_by,
    )
    .fetch_one(&mut **tx)
    .await
}

pub async fn get(
    tx: &mut Tx,
    tenant: TenantId,
    id: GenerationId,
) -> Result<Option<Generation>, sqlx::Error> {
    sqlx::query_as!(
        Generation,
        r#"SELECT id AS "id: GenerationId", description, name, current_draft, created_by, created_at, updated_at
           FROM generations WHERE tenant_id = $1 AND id = $2"#,
        tenant as TenantId,
        id as GenerationId,
    )
    .fetch_optional(&mut **tx)
    .await
}

pub async fn get_draft(
    tx: &mut Tx,
    tenant: TenantId,
    id: GenerationId,
    n: i32,
) -> Result<Option<Draft>, sqlx::Error> {
    sqlx::query_as!(
        Draft,
        r#"SELECT n, feedback, draft AS "draft: Json<serde_json::Value>", created_by, created_at
           FROM generation_drafts WHERE tenant_id = $1 AND generation_id = $2 AND n = $3"#,
        tenant as TenantId,
        id as GenerationId,
        n,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Every draft of a generation, oldest first, without the documents.
pub async fn history(
    tx: &mut Tx,
    tenant: TenantId,
    id: GenerationId,
) -> Result<Vec<DraftSummary>, sqlx::Error> {
    sqlx::query_as!(
        DraftSummary,
        r#"SELECT n, feedback, author, model, score, prompt_tokens, completion_tokens, created_by, created_at
           FROM generation_drafts WHERE tenant_id = $1 AND generation_id = $2 ORDER BY n"#,
        tenant as TenantId,
        id as GenerationId,
    )
    .fetch_all(&mut **tx)
    .await
}

/// Generations, newest first.
pub async fn list(
    tx: &mut Tx,
    tenant: TenantId,
    after: Option<Cursor>,
    limit: usize,
) -> Result<Page<Generation>, sqlx::Error> {
    let rows = sqlx::query_as!(
        Generation,
        r#"SELECT id AS "id: GenerationId", description, name, current_draft, created_by, created_at, updated_at
           FROM generations
           WHERE tenant_id = $1
             AND ($2::timestamptz IS NULL OR (created_at, id) < ($2, $3))
           ORDER BY created_at DESC, id DESC
           LIMIT $4"#,
        tenant as TenantId,
        after.map(|c| c.created_at),
        after.map(|c| c.id).unwrap_or_default(),
        limit as i64 + 1,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(Page::from_rows(rows, limit, |g| Cursor {
        created_at: g.created_at,
        id: g.id.0,
    }))
}
