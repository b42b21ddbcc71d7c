//! Request bodies in JSON or YAML, chosen by `Content-Type`; anything else
//! is 415. Workflow documents go to the IR parser with every problem
//! reported.

use crate::error::{ApiError, ApiResult};
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use couler_ir::Format;
use serde::de::DeserializeOwned;
use std::marker::PhantomData;

fn format_of(req: &Request) -> ApiResult<Format> {
    let media = req
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("application/json");
    Format::from_media_type(media).ok_or_else(|| ApiError::UnsupportedMediaType(media.to_owned()))
}

async fn bytes<S: Send + Sync>(req: Request, state: &S) -> ApiResult<Bytes> {
    Bytes::from_request(req, state).await.map_err(|rejection| {
        if rejection.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            ApiError::PayloadTooLarge
        } else {
            ApiError::bad_request("unreadable_body", rejection.body_text(), "")
        }
    })
}

fn text(bytes: &Bytes) -> ApiResult<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        ApiError::bad_request(
            "invalid_encoding",
            format!("the body is not UTF-8: {e}"),
            "",
        )
    })
}

/// A request body read but not yet parsed: a handler authorizes the caller
/// first and then parses it, so a caller without the role gets 403, not the
/// body's problems (nor its media type's, its size's or a read's that
/// failed), and costs no parsing.
struct Raw {
    /// The body, or why it could not be read.
    read: ApiResult<(Format, Bytes)>,
}

impl<S: Send + Sync> FromRequest<S> for Raw {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let read = match format_of(&req) {
            Ok(format) => bytes(req, state).await.map(|bytes| (format, bytes)),
            Err(e) => Err(e),
        };
        Ok(Raw { read })
    }
}

/// A JSON or YAML body to deserialize into `T` (see [`Raw`]).
pub struct Body<T> {
    raw: Raw,
    of: PhantomData<fn() -> T>,
}

impl<S: Send + Sync, T> FromRequest<S> for Body<T> {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let raw = Raw::from_request(req, state).await?;
        Ok(Body {
            raw,
            of: PhantomData,
        })
    }
}

impl<T: DeserializeOwned> Body<T> {
    /// The body as `T`, or 400 at the pointer of what is wrong.
    pub fn parse(self) -> ApiResult<T> {
        let (format, bytes) = self.raw.read?;
        let tree: serde_json::Value = match format {
            // No body is an empty object: all-optional requests need none,
            // and others say which field is missing.
            _ if bytes.trim_ascii().is_empty() => serde_json::Value::Object(Default::default()),
            // Every request body is an object (serde would also read a
            // struct from an array, by position).
            Format::Json if !bytes.trim_ascii_start().starts_with(b"{") => {
                return Err(not_an_object());
            }
            // Read as a tree only when it may hold a NUL, to find it.
            Format::Json if !couler_ir::json_may_hold_nul(&bytes) => return from_json(&bytes),
            Format::Json => serde_json::from_slice(&bytes).map_err(|e| invalid_json(&e))?,
            Format::Yaml => serde_saphyr::from_str(text(&bytes)?).map_err(|e| {
                ApiError::bad_request("invalid_body", format!("invalid YAML: {e}"), "")
            })?,
        };
        if !tree.is_object() {
            return Err(not_an_object());
        }
        if let Some(at) = couler_ir::nul_in(&tree) {
            return Err(ApiError::nul(at.to_string()));
        }
        serde_path_to_error::deserialize(tree)
            .map_err(|e| ApiError::at_path("invalid_body", e.path(), e.inner().to_string()))
    }
}

impl<T: DeserializeOwned> Body<T> {
    /// [`parse`](Self::parse) for bodies that hold secret values: a problem
    /// keeps its code and pointer, but not serde's message, which may quote
    /// the value it could not read.
    pub fn parse_quiet(self) -> ApiResult<T> {
        self.parse().map_err(|e| match e {
            ApiError::BadRequest { code, path, .. } if code != "invalid_text" => {
                ApiError::BadRequest {
                    code,
                    message: "the body does not have the documented shape here (details are withheld, as they could quote a secret value)".into(),
                    path,
                }
            }
            other => other,
        })
    }
}

/// `T` straight from JSON text: a syntax error says where in the text, a
/// shape error at the pointer of what is wrong.
fn from_json<T: DeserializeOwned>(bytes: &[u8]) -> ApiResult<T> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = serde_path_to_error::deserialize(&mut de).map_err(|e| {
        let inner = e.inner();
        if inner.is_syntax() || inner.is_eof() {
            return invalid_json(inner);
        }
        let full = inner.to_string();
        let place = format!(" at line {} column {}", inner.line(), inner.column());
        let message = full.strip_suffix(&place).unwrap_or(&full).to_owned();
        ApiError::at_path("invalid_body", e.path(), message)
    })?;
    de.end().map_err(|e| invalid_json(&e))?;
    Ok(value)
}

fn not_an_object() -> ApiError {
    ApiError::bad_request("invalid_body", "the body must be an object", "")
}

fn invalid_json(e: &serde_json::Error) -> ApiError {
    ApiError::bad_request("invalid_body", format!("invalid JSON: {e}"), "")
}

/// A workflow document (the IR), read but not yet parsed (see [`Raw`]).
pub struct WorkflowDoc(Raw);

impl<S: Send + Sync> FromRequest<S> for WorkflowDoc {
    type Rejection = std::convert::Infallible;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        Raw::from_request(req, state).await.map(WorkflowDoc)
    }
}

impl WorkflowDoc {
    /// The workflow, parsed and validated off the async runtime; 422 with
    /// every problem.
    pub async fn parse(self) -> ApiResult<couler_ir::Workflow> {
        let (format, bytes) = self.0.read?;
        text(&bytes)?;
        tokio::task::spawn_blocking(move || {
            let text = std::str::from_utf8(&bytes).expect("checked above");
            couler_ir::load(text, format)
        })
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("IR parser task failed: {e}")))?
        .map_err(ApiError::Invalid)
    }
}

/// The workflow a request runs, explains or plans.
pub enum Chosen {
    /// A stored workflow: its `wf_…` id or its name, at `version` or the
    /// latest.
    Stored {
        reference: String,
        version: Option<i32>,
    },
    /// An inline document, validated.
    Inline(Box<couler_ir::Workflow>),
}

/// Exactly one of `workflow` (with an optional `version`) and `ir`.
pub async fn choose_workflow(
    workflow: Option<String>,
    version: Option<i32>,
    ir: Option<serde_json::Value>,
) -> ApiResult<Chosen> {
    match (workflow, ir) {
        (Some(reference), None) => Ok(Chosen::Stored { reference, version }),
        (None, Some(_)) if version.is_some() => Err(ApiError::bad_request(
            "conflicting_fields",
            "`version` applies only to a stored workflow",
            "/version",
        )),
        (None, Some(ir)) => Ok(Chosen::Inline(Box::new(workflow_from_value(ir).await?))),
        (Some(_), Some(_)) => Err(ApiError::bad_request(
            "conflicting_fields",
            "give either `workflow` (a stored workflow) or `ir` (an inline workflow document), not both",
            "/ir",
        )),
        (None, None) => Err(ApiError::bad_request(
            "missing_workflow",
            "give `workflow` (id or name) or `ir` (an inline workflow document)",
            "/workflow",
        )),
    }
}

/// Validates IR given as a JSON value (inline in a request).
async fn workflow_from_value(value: serde_json::Value) -> ApiResult<couler_ir::Workflow> {
    tokio::task::spawn_blocking(move || couler_ir::load_value(value, &couler_ir::Limits::default()))
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("IR parser task failed: {e}")))?
        .map_err(|problems| {
            // Paths are within the inline document.
            let problems = problems
                .into_iter()
                .map(|mut p| {
                    p.path = format!("/ir{}", p.path);
                    p
                })
                .collect();
            ApiError::Invalid(couler_ir::Problems(problems))
        })
}
