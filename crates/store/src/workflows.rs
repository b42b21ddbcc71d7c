//! Workflows and their immutable versions.

use crate::page::{Cursor, Page};
use crate::{TenantId, Tx, WorkflowId};
use chrono::{DateTime, Utc};
use sqlx::types::Json;
use std::collections::BTreeMap;

pub type Labels = BTreeMap<String, String>;

#[derive(Debug, Clone, PartialEq)]
pub struct Workflow {
    pub tenant_id: TenantId,
    pub id: WorkflowId,
    pub name: String,
    pub description: Option<String>,
    pub labels: Json<Labels>,
    pub latest_version: i32,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Version {
    pub workflow_id: WorkflowId,
    pub version: i32,
    /// The canonical IR.
    pub ir: Json<serde_json::Value>,
    pub ir_hash: String,
    pub step_count: i32,
    pub created_by: String,
    pub created_at: DateTime<Utc>,
}

/// A validated workflow document ready to store.
#[derive(Debug, Clone)]
pub struct NewVersion {
    pub name: String,
    pub description: Option<String>,
    pub labels: Labels,
    pub ir: serde_json::Value,
    pub ir_hash: String,
    pub step_count: i32,
    pub created_by: String,
    /// The IR's `schedule:`: the workflow's `default` schedule.
    pub schedule: Option<couler_ir::Schedule>,
}

impl NewVersion {
    /// From a validated IR workflow: canonical form, hash and metadata.
    pub fn from_ir(workflow: &couler_ir::Workflow, created_by: &str) -> NewVersion {
        NewVersion {
            name: workflow.name.clone(),
            description: workflow.description.clone(),
            labels: workflow.labels.clone(),
            ir: serde_json::to_value(workflow).expect("IR types always serialize"),
            ir_hash: couler_ir::hash::workflow_digest(workflow).to_hex(),
            step_count: (workflow.steps.len() + workflow.on_exit.len()) as i32,
            created_by: created_by.to_owned(),
            schedule: workflow.schedule.clone(),
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct Filter {
    /// Names starting with this.
    pub name_prefix: Option<String>,
    /// Every one of these labels must match.
    pub labels: Labels,
}

/// Creates a workflow with its first version (and its `default`
/// schedule, when the IR declares one).
pub async fn create(
    tx: &mut Tx,
    tenant: TenantId,
    new: &NewVersion,
) -> Result<(Workflow, Version), sqlx::Error> {
    let workflow = sqlx::query_as!(
        Workflow,
        r#"INSERT INTO workflows (tenant_id, id, name, description, labels, latest_version, created_by)
           VALUES ($1, $2, $3, $4, $5, 1, $6)
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: WorkflowId", name, description,
                     labels AS "labels: Json<Labels>", latest_version, created_by, created_at, updated_at"#,
        tenant as TenantId,
        WorkflowId::new() as WorkflowId,
        new.name,
        new.description,
        Json(&new.labels) as _,
        new.created_by,
    )
    .fetch_one(&mut **tx)
    .await?;
    let version = insert_version(tx, tenant, workflow.id, 1, new).await?;
    crate::schedules::sync_default(
        tx,
        tenant,
        workflow.id,
        new.schedule.as_ref(),
        &new.created_by,
    )
    .await?;
    Ok((workflow, version))
}

/// Adds the next version to a live workflow, keeping its `default`
/// schedule in step; `None` when there is no such workflow.
pub async fn add_version(
    tx: &mut Tx,
    tenant: TenantId,
    id: WorkflowId,
    new: &NewVersion,
) -> Result<Option<(Workflow, Version)>, sqlx::Error> {
    let workflow = sqlx::query_as!(
        Workflow,
        r#"UPDATE workflows SET latest_version = latest_version + 1, description = $3, labels = $4, updated_at = now()
           WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL
           RETURNING tenant_id AS "tenant_id: TenantId", id AS "id: WorkflowId", name, description,
                     labels AS "labels: Json<Labels>", latest_version, created_by, created_at, updated_at"#,
        tenant as TenantId,
        id as WorkflowId,
        new.description,
        Json(&new.labels) as _,
    )
    .fetch_optional(&mut **tx)
    .await?;
    let Some(workflow) = workflow else {
        return Ok(None);
    };
    let version = insert_version(tx, tenant, workflow.id, workflow.latest_version, new).await?;
    crate::schedules::sync_default(
        tx,
        tenant,
        workflow.id,
        new.schedule.as_ref(),
        &new.created_by,
    )
    .await?;
    Ok(Some((workflow, version)))
}

async fn insert_version(
    tx: &mut Tx,
    tenant: TenantId,
    id: WorkflowId,
    version: i32,
    new: &NewVersion,
) -> Result<Version, sqlx::Error> {
    sqlx::query_as!(
        Version,
        r#"INSERT INTO workflow_versions (tenant_id, workflow_id, version, ir, ir_hash, step_count, created_by)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           RETURNING workflow_id AS "workflow_id: WorkflowId", version, ir AS "ir: Json<serde_json::Value>",
                     ir_hash, step_count, created_by, created_at"#,
        tenant as TenantId,
        id as WorkflowId,
        version,
        Json(&new.ir) as _,
        new.ir_hash,
        new.step_count,
        new.created_by,
    )
    .fetch_one(&mut **tx)
    .await
}

/// A live workflow by id.
pub async fn get(
    tx: &mut Tx,
    tenant: TenantId,
    id: WorkflowId,
) -> Result<Option<Workflow>, sqlx::Error> {
    sqlx::query_as!(
        Workflow,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: WorkflowId", name, description,
                  labels AS "labels: Json<Labels>", latest_version, created_by, created_at, updated_at
           FROM workflows WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL"#,
        tenant as TenantId,
        id as WorkflowId,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// A live workflow by name.
pub async fn get_by_name(
    tx: &mut Tx,
    tenant: TenantId,
    name: &str,
) -> Result<Option<Workflow>, sqlx::Error> {
    sqlx::query_as!(
        Workflow,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: WorkflowId", name, description,
                  labels AS "labels: Json<Labels>", latest_version, created_by, created_at, updated_at
           FROM workflows WHERE tenant_id = $1 AND name = $2 AND deleted_at IS NULL"#,
        tenant as TenantId,
        name,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// One version of a workflow, deleted or not: runs keep their versions.
pub async fn get_version(
    tx: &mut Tx,
    tenant: TenantId,
    id: WorkflowId,
    version: i32,
) -> Result<Option<Version>, sqlx::Error> {
    sqlx::query_as!(
        Version,
        r#"SELECT workflow_id AS "workflow_id: WorkflowId", version, ir AS "ir: Json<serde_json::Value>",
                  ir_hash, step_count, created_by, created_at
           FROM workflow_versions WHERE tenant_id = $1 AND workflow_id = $2 AND version = $3"#,
        tenant as TenantId,
        id as WorkflowId,
        version,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Version numbers and hashes of a workflow, newest first.
pub async fn list_versions(
    tx: &mut Tx,
    tenant: TenantId,
    id: WorkflowId,
) -> Result<Vec<(i32, String, DateTime<Utc>, String)>, sqlx::Error> {
    let rows = sqlx::query!(
        r#"SELECT version, ir_hash, created_at, created_by FROM workflow_versions
           WHERE tenant_id = $1 AND workflow_id = $2 ORDER BY version DESC"#,
        tenant as TenantId,
        id as WorkflowId,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| (r.version, r.ir_hash, r.created_at, r.created_by))
        .collect())
}

pub async fn list(
    tx: &mut Tx,
    tenant: TenantId,
    filter: &Filter,
    after: Option<Cursor>,
    limit: usize,
) -> Result<Page<Workflow>, sqlx::Error> {
    let rows = sqlx::query_as!(
        Workflow,
        r#"SELECT tenant_id AS "tenant_id: TenantId", id AS "id: WorkflowId", name, description,
                  labels AS "labels: Json<Labels>", latest_version, created_by, created_at, updated_at
           FROM workflows
           WHERE tenant_id = $1 AND deleted_at IS NULL
             AND ($2::text IS NULL OR starts_with(name, $2))
             AND labels @> $3
             AND ($4::timestamptz IS NULL OR (created_at, id) < ($4, $5))
           ORDER BY created_at DESC, id DESC
           LIMIT $6"#,
        tenant as TenantId,
        filter.name_prefix,
        Json(&filter.labels) as _,
        after.map(|c| c.created_at),
        after.map(|c| c.id).unwrap_or_default(),
        limit as i64 + 1,
    )
    .fetch_all(&mut **tx)
    .await?;
    Ok(Page::from_rows(rows, limit, |w| Cursor {
        created_at: w.created_at,
        id: w.id.0,
    }))
}

/// Soft-deletes a workflow; its versions stay for the runs that use them,
/// its schedules go.
pub async fn delete(tx: &mut Tx, tenant: TenantId, id: WorkflowId) -> Result<bool, sqlx::Error> {
    crate::schedules::delete_all(tx, tenant, id).await?;
    crate::webhooks::delete_all(tx, tenant, id).await?;
    let done = sqlx::query!(
        "UPDATE workflows SET deleted_at = now() WHERE tenant_id = $1 AND id = $2 AND deleted_at IS NULL",
        tenant as TenantId,
        id as WorkflowId,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}

/// What a run of a stored workflow needs, in one round trip: the workflow
/// (by id or name), the version (latest when `None`), its declared
/// parameters, its hash and the secrets its steps read. `None` when either
/// is missing.
pub async fn for_run(
    tx: &mut Tx,
    tenant: TenantId,
    reference: &str,
    version: Option<i32>,
) -> Result<Option<RunTarget>, sqlx::Error> {
    // Exactly one of id and name is set; a generic plan still reaches
    // either through a BitmapOr of the primary key and `workflows_live_name`.
    let (id, name) = match reference.parse::<WorkflowId>() {
        Ok(id) => (Some(id), None),
        Err(_) => (None, Some(reference)),
    };
    sqlx::query_as!(
        RunTarget,
        r#"SELECT w.id AS "workflow_id: WorkflowId", w.name, v.version,
                  coalesce(v.ir->'parameters', '[]'::jsonb) AS "parameters!: Json<serde_json::Value>", v.ir_hash,
                  -- Only a document that reads a secret pays for the walk.
                  CASE WHEN v.ir @? 'lax $.steps[*].*.env[*].secret' OR v.ir @? 'lax $.onExit[*].*.env[*].secret'
                  THEN coalesce((SELECT jsonb_agg(jsonb_build_object(
                                   'list', l.list, 'step', s.n - 1, 'step_name', s.step->>'name',
                                   'kind', k.kind, 'env', e.n - 1,
                                   'name', e.var->'secret'->>'name', 'key', e.var->'secret'->>'key')
                               ORDER BY l.ord, s.n, k.ord, e.n)
                        FROM (VALUES (1, 'steps'), (2, 'onExit')) AS l(ord, list)
                        CROSS JOIN LATERAL jsonb_array_elements(coalesce(v.ir->l.list, '[]')) WITH ORDINALITY AS s(step, n)
                        CROSS JOIN LATERAL (VALUES (1, 'container'), (2, 'script'), (3, 'job')) AS k(ord, kind)
                        CROSS JOIN LATERAL jsonb_array_elements(coalesce(s.step->k.kind->'env', '[]')) WITH ORDINALITY AS e(var, n)
                        WHERE e.var ? 'secret'), '[]')
                  ELSE '[]'::jsonb END AS "secrets!: Json<Vec<SecretUse>>"
           FROM workflows w
           JOIN workflow_versions v
             ON v.tenant_id = w.tenant_id AND v.workflow_id = w.id AND v.version = coalesce($4, w.latest_version)
           WHERE w.tenant_id = $1 AND (w.id = $2 OR w.name = $3) AND w.deleted_at IS NULL"#,
        tenant as TenantId,
        id as Option<WorkflowId>,
        name,
        version,
    )
    .fetch_optional(&mut **tx)
    .await
}

#[derive(Debug, Clone)]
pub struct RunTarget {
    pub workflow_id: WorkflowId,
    pub name: String,
    pub version: i32,
    pub parameters: Json<serde_json::Value>,
    pub ir_hash: String,
    /// Every secret the version's steps read, in document order.
    pub secrets: Json<Vec<SecretUse>>,
}

/// A step's environment variable that reads a secret, and where.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct SecretUse {
    /// `steps` or `onExit`.
    pub list: String,
    /// Index of the step in `list`.
    pub step: usize,
    pub step_name: String,
    /// `container`, `script` or `job`.
    pub kind: String,
    /// Index of the variable in the step's `env`.
    pub env: usize,
    pub name: String,
    pub key: String,
}
