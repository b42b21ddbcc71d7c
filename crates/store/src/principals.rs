//! Users and services seen through tokens, recorded for audit.

use crate::{PrincipalId, TenantId, Tx};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    User,
    Service,
}

impl PrincipalKind {
    fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::User => "user",
            PrincipalKind::Service => "service",
        }
    }
}

/// Records that `subject` acted in `tenant`, returning its principal id.
pub async fn touch(
    tx: &mut Tx,
    tenant: TenantId,
    subject: &str,
    kind: PrincipalKind,
) -> Result<PrincipalId, sqlx::Error> {
    sqlx::query_scalar!(
        r#"INSERT INTO principals (tenant_id, id, subject, kind) VALUES ($1, $2, $3, $4)
           ON CONFLICT (tenant_id, subject) DO UPDATE SET last_seen_at = now()
           RETURNING id AS "id: PrincipalId""#,
        tenant as TenantId,
        PrincipalId::new() as PrincipalId,
        subject,
        kind.as_str(),
    )
    .fetch_one(&mut **tx)
    .await
}
