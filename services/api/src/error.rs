//! The one error type at the HTTP edge. Everything renders as
//! `application/problem+json` (RFC 9457) with a stable machine `code`;
//! internal causes are logged, never sent.

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use couler_ir::Problems;
use couler_ir::problem::Pointer;
use serde::Serialize;
use std::time::Duration;
use utoipa::ToSchema;

pub const PROBLEM_JSON: &str = "application/problem+json";

#[derive(Debug, thiserror::Error)]
pub enum ApiError {
    /// 401: no credentials, or credentials that do not prove anything.
    #[error("{message}")]
    Unauthenticated { code: &'static str, message: String },
    /// 403: authenticated but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// 404, also for resources of other tenants (never revealing they
    /// exist); `path` when the request's body named what is missing.
    #[error("{message}")]
    NotFound {
        message: String,
        path: Option<String>,
    },
    /// 400: a malformed request (bad query, header or id), with where.
    #[error("{message}")]
    BadRequest {
        code: &'static str,
        message: String,
        path: Option<String>,
    },
    /// 422: the workflow (or run request) failed validation.
    #[error("the document has {} problem(s)", .0.len())]
    Invalid(Problems),
    /// 422: a well-formed request the server will not carry out as asked
    /// (e.g. an import that would change what runs), with every reason.
    #[error("{message}")]
    Refused {
        code: &'static str,
        message: String,
        problems: Vec<ProblemItem>,
    },
    /// 409: conflicts with the current state.
    #[error("{message}")]
    Conflict { code: &'static str, message: String },
    /// 429 with `Retry-After`.
    #[error("{message}")]
    TooManyRequests {
        code: &'static str,
        message: String,
        retry_after: Duration,
    },
    /// 415: a body in a syntax we do not read.
    #[error("unsupported media type {0:?}; send application/json or application/yaml")]
    UnsupportedMediaType(String),
    /// 413: a body over the configured limit.
    #[error("the request body is larger than this server accepts")]
    PayloadTooLarge,
    /// 503: a dependency is down.
    #[error("{0}")]
    Unavailable(String),
    /// 503: the platform has not set up what this needs.
    #[error("{message}")]
    NotConfigured { code: &'static str, message: String },
    /// 500: logged with its cause chain; the client sees only the request id.
    #[error(transparent)]
    Internal(#[from] anyhow::Error),
}

/// The problem document every error response carries.
#[derive(Debug, Serialize, serde::Deserialize, ToSchema)]
pub struct Problem {
    /// A URI naming the problem type.
    #[serde(rename = "type")]
    pub kind: String,
    pub title: String,
    pub status: u16,
    pub detail: String,
    /// Stable machine code, e.g. `validation_failed`, `not_found`.
    pub code: String,
    /// The id of the request, as in the `x-request-id` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// JSON pointer into the request of what is wrong.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Every problem found, for validation failures.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<ProblemItem>,
}

/// One validation problem.
#[derive(Debug, Clone, Serialize, serde::Deserialize, ToSchema)]
pub struct ProblemItem {
    /// JSON pointer to the offending value.
    pub path: String,
    pub code: String,
    pub message: String,
}

impl ApiError {
    pub fn not_found(what: impl std::fmt::Display) -> Self {
        ApiError::NotFound {
            message: format!("{what} was not found"),
            path: None,
        }
    }

    /// Points a 404 without a path at `at`: the reference in the request
    /// that named nothing.
    pub fn at(mut self, at: &str) -> Self {
        if let ApiError::NotFound { path, .. } = &mut self
            && path.is_none()
        {
            *path = Some(at.to_owned());
        }
        self
    }

    pub fn bad_request(
        code: &'static str,
        message: impl Into<String>,
        path: impl Into<String>,
    ) -> Self {
        ApiError::BadRequest {
            code,
            message: message.into(),
            path: Some(path.into()),
        }
    }

    /// Wrong input that a deserializer found at `path`: a 400 at its JSON
    /// pointer. A missing field is pointed at, not its parent.
    pub fn at_path(code: &'static str, path: &serde_path_to_error::Path, message: String) -> Self {
        use serde_path_to_error::Segment;
        let mut at = Pointer::root();
        for segment in path.iter() {
            at = match segment {
                Segment::Seq { index } => at.index(*index),
                Segment::Map { key } | Segment::Enum { variant: key } => at.key(key),
                Segment::Unknown => at,
            };
        }
        if let Some(field) = message
            .strip_prefix("missing field `")
            .and_then(|rest| rest.strip_suffix('`'))
        {
            at = at.key(field);
        }
        ApiError::bad_request(code, message, at.to_string())
    }

    /// Text holding a NUL character, at `path`.
    pub fn nul(path: impl Into<String>) -> Self {
        ApiError::bad_request("invalid_text", couler_ir::NUL_MESSAGE, path)
    }

    pub fn status(&self) -> StatusCode {
        match self {
            ApiError::Unauthenticated { .. } => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound { .. } => StatusCode::NOT_FOUND,
            ApiError::BadRequest { .. } => StatusCode::BAD_REQUEST,
            ApiError::Invalid(_) | ApiError::Refused { .. } => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::Conflict { .. } => StatusCode::CONFLICT,
            ApiError::TooManyRequests { .. } => StatusCode::TOO_MANY_REQUESTS,
            ApiError::UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unavailable(_) | ApiError::NotConfigured { .. } => {
                StatusCode::SERVICE_UNAVAILABLE
            }
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn code(&self) -> &'static str {
        match self {
            ApiError::Unauthenticated { code, .. }
            | ApiError::BadRequest { code, .. }
            | ApiError::Conflict { code, .. }
            | ApiError::Refused { code, .. }
            | ApiError::TooManyRequests { code, .. }
            | ApiError::NotConfigured { code, .. } => code,
            ApiError::Forbidden(_) => "forbidden",
            ApiError::NotFound { .. } => "not_found",
            ApiError::Invalid(_) => "validation_failed",
            ApiError::UnsupportedMediaType(_) => "unsupported_media_type",
            ApiError::PayloadTooLarge => "payload_too_large",
            ApiError::Unavailable(_) => "unavailable",
            ApiError::Internal(_) => "internal",
        }
    }
}

/// Builds a problem document for a status and code.
pub fn problem(status: StatusCode, code: &str, detail: String) -> Problem {
    Problem {
        kind: format!("https://couler.dev/problems/{code}"),
        title: status.canonical_reason().unwrap_or("Error").to_owned(),
        status: status.as_u16(),
        detail,
        code: code.to_owned(),
        request_id: None,
        path: None,
        problems: Vec::new(),
    }
}

/// Renders a problem document as a response.
pub fn problem_response(p: &Problem) -> Response {
    let status = StatusCode::from_u16(p.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let body = serde_json::to_vec(p).expect("problems serialize");
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    response
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status();
        let detail = match &self {
            ApiError::Internal(e) => {
                tracing::error!(error = format!("{e:#}"), "internal error");
                "an internal error occurred; quote the request id when reporting it".to_owned()
            }
            other => other.to_string(),
        };
        let mut p = problem(status, self.code(), detail);
        match &self {
            ApiError::BadRequest { path, .. } | ApiError::NotFound { path, .. } => {
                p.path = path.clone()
            }
            ApiError::Invalid(problems) => {
                p.problems = problems
                    .iter()
                    .map(|x| ProblemItem {
                        path: x.path.clone(),
                        code: x.code.to_string(),
                        message: x.message.clone(),
                    })
                    .collect();
                p.path = problems.iter().next().map(|x| x.path.clone());
            }
            ApiError::Refused { problems, .. } => {
                p.problems = problems.clone();
                p.path = problems.first().map(|x| x.path.clone());
            }
            _ => {}
        }
        let mut response = problem_response(&p);
        if let ApiError::Unauthenticated { .. } = &self {
            // RFC 9110 §11.6.1: a 401 names the scheme that would work.
            response.headers_mut().insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static(r#"Bearer realm="couler""#),
            );
        }
        if let ApiError::TooManyRequests { retry_after, .. } = &self {
            let secs = retry_after.as_secs_f64().ceil().max(1.0) as u64;
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// Database errors: constraint violations become conflicts by constraint
/// name, here and only here; anything else is internal.
impl From<sqlx::Error> for ApiError {
    fn from(err: sqlx::Error) -> Self {
        match couler_store::violated_constraint(&err) {
            Some("workflows_live_name") => ApiError::Conflict {
                code: "workflow_exists",
                message: "a workflow with this name already exists; add a version to it instead"
                    .into(),
            },
            Some("tenants_name_key") => ApiError::Conflict {
                code: "tenant_exists",
                message: "a tenant with this name already exists".into(),
            },
            Some(couler_store::step_library::NAME_TAKEN) => ApiError::Conflict {
                code: "step_template_exists",
                message: "the tenant's step library already has a template with this id; replace it with PUT"
                    .into(),
            },
            Some(couler_store::schedules::SLUG_TAKEN) => ApiError::Conflict {
                code: "schedule_exists",
                message: "the workflow already has a schedule with this slug; change it with PATCH".into(),
            },
            Some(couler_store::webhooks::NAME_TAKEN) => ApiError::Conflict {
                code: "trigger_exists",
                message: "the workflow already has a trigger with this name; change it with PATCH".into(),
            },
            // Deleted while one of its deliveries was being handled.
            Some(couler_store::webhooks::TRIGGER_GONE) => ApiError::not_found("webhook trigger"),
            Some("runs_idempotency") => ApiError::Conflict {
                code: "idempotency_conflict",
                message:
                    "a concurrent request with the same Idempotency-Key is in progress; retry it"
                        .into(),
            },
            // Text Postgres cannot store (a NUL character) that got past
            // the checks at the edge: logged, as it may not be the client's.
            _ if err
                .as_database_error()
                .and_then(|e| e.code())
                .is_some_and(|code| code == "22021" || code == "22P05") =>
            {
                tracing::warn!(error = %err, "text the database cannot store");
                ApiError::nul("")
            }
            _ => ApiError::Internal(anyhow::Error::new(err).context("database")),
        }
    }
}

pub type ApiResult<T> = Result<T, ApiError>;

/// The JSON pointer (RFC 6901) of `tokens` in a request.
pub fn pointer<'a>(tokens: impl IntoIterator<Item = &'a str>) -> String {
    tokens
        .into_iter()
        .fold(Pointer::root(), |at, token| at.key(token))
        .to_string()
}
