//! LLM token accounting: tokens a tenant's requests spent per calendar
//! month (UTC), against the tenant's monthly budget (none: unlimited).

use crate::{TenantId, Tx};
use chrono::NaiveDate;

/// A tenant's budget and this month's spending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Account {
    pub month: NaiveDate,
    /// Tokens per month; `None`: unlimited.
    pub budget: Option<i64>,
    pub prompt_tokens: i64,
    pub completion_tokens: i64,
    /// Generation requests this month.
    pub requests: i64,
}

impl Account {
    pub fn used(&self) -> i64 {
        self.prompt_tokens + self.completion_tokens
    }

    /// Tokens left this month; `None`: unlimited.
    pub fn left(&self) -> Option<u64> {
        self.budget
            .map(|b| u64::try_from(b.saturating_sub(self.used())).unwrap_or(0))
    }
}

/// The tenant's account for the current month; `None` when the tenant does
/// not exist (or is not visible to the transaction).
pub async fn account(tx: &mut Tx, tenant: TenantId) -> Result<Option<Account>, sqlx::Error> {
    sqlx::query_as!(
        Account,
        r#"SELECT date_trunc('month', now() AT TIME ZONE 'UTC')::date AS "month!",
                  t.llm_token_budget AS budget,
                  coalesce(u.prompt_tokens, 0) AS "prompt_tokens!",
                  coalesce(u.completion_tokens, 0) AS "completion_tokens!",
                  coalesce(u.requests, 0) AS "requests!"
           FROM tenants t
           LEFT JOIN llm_usage u
             ON u.tenant_id = t.id AND u.month = date_trunc('month', now() AT TIME ZONE 'UTC')::date
           WHERE t.id = $1"#,
        tenant as TenantId,
    )
    .fetch_optional(&mut **tx)
    .await
}

/// Adds one request's tokens to the current month.
pub async fn record(
    tx: &mut Tx,
    tenant: TenantId,
    prompt_tokens: i64,
    completion_tokens: i64,
) -> Result<(), sqlx::Error> {
    sqlx::query!(
        r#"INSERT INTO llm_usage (tenant_id, month, prompt_tokens, completion_tokens, requests)
           VALUES ($1, date_trunc('month', now() AT TIME ZONE 'UTC')::date, $2, $3, 1)
           ON CONFLICT (tenant_id, month) DO UPDATE SET
               prompt_tokens = llm_usage.prompt_tokens + EXCLUDED.prompt_tokens,
               completion_tokens = llm_usage.completion_tokens + EXCLUDED.completion_tokens,
               requests = llm_usage.requests + 1"#,
        tenant as TenantId,
        prompt_tokens,
        completion_tokens,
    )
    .execute(&mut **tx)
    .await
    .map(|_| ())
}

/// Sets a tenant's monthly budget (platform transaction); `false` when there
/// is no such tenant.
pub async fn set_budget(
    tx: &mut Tx,
    tenant: TenantId,
    budget: Option<i64>,
) -> Result<bool, sqlx::Error> {
    let done = sqlx::query!(
        "UPDATE tenants SET llm_token_budget = $2, updated_at = now() WHERE id = $1",
        tenant as TenantId,
        budget,
    )
    .execute(&mut **tx)
    .await?;
    Ok(done.rows_affected() == 1)
}
