//! The OpenAPI document, assembled from every resource router. Committed at
//! `openapi/openapi.json`; a test fails when it drifts from the code.

use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Couler API",
        description = "Multi-tenant control plane for machine-learning workflows: store workflows (IR), run them on your tenant's engine, follow their progress.\n\nErrors are `application/problem+json` with a stable `code`.",
        license(name = "Apache-2.0"),
    ),
    modifiers(&Security),
    security(("bearer" = []), ("api_key" = [])),
    tags(
        (name = "workflows", description = "Workflows and their immutable versions"),
        (name = "runs", description = "Runs, their steps and events"),
        (name = "tenants", description = "Tenants, settings and quotas"),
        (name = "api-keys", description = "Keys for services that trigger pipelines"),
        (name = "cache", description = "The shared cache index: explain, statistics, invalidation"),
        (name = "plans", description = "What the optimizer does with a workflow, and why"),
        (name = "generations", description = "Natural language → workflow drafts, user feedback, the tenant's step library and LLM token usage"),
        (name = "health", description = "Liveness, readiness, metrics"),
    ),
    components(schemas(crate::error::Problem, crate::error::ProblemItem))
)]
pub struct ApiDoc;

struct Security;

impl Modify for Security {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .bearer_format("JWT")
                    .description(Some(
                        "A JWT (claims: sub, tenant, roles) or an API key (`ck_…`) as the bearer token.",
                    ))
                    .build(),
            ),
        );
        components.add_security_scheme(
            "api_key",
            SecurityScheme::ApiKey(ApiKey::Header(ApiKeyValue::with_description(
                "x-api-key",
                "An API key created with POST /v1/api-keys.",
            ))),
        );
    }
}
