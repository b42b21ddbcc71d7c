//! Request bodies in JSON or YAML, chosen by `Content-Type`; anything else
//! is 415. Workflow documents go to the IR parser with every problem
//! reported.

use crate::error::{ApiError, ApiResult};
use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;
use couler_ir::Format;
use serde::de::DeserializeOwned;

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

/// A JSON or YAML body deserialized into `T`.
pub struct Body<T>(pub T);

impl<S: Send + Sync, T: DeserializeOwned> FromRequest<S> for Body<T> {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> ApiResult<Self> {
        let format = format_of(&req)?;
        let bytes = bytes(req, state).await?;
        let value = match format {
            Format::Json => {
                let de = &mut serde_json::Deserializer::from_slice(&bytes);
                serde_path_to_error::deserialize(de)
                    .map_err(|e| invalid_body(e.path(), e.inner()))?
            }
            Format::Yaml => serde_saphyr::from_str::<serde_json::Value>(text(&bytes)?)
                .map_err(|e| {
                    ApiError::bad_request("invalid_body", format!("invalid YAML: {e}"), "")
                })
                .and_then(|v| {
                    serde_path_to_error::deserialize(v)
                        .map_err(|e| invalid_body(e.path(), e.inner()))
                })?,
        };
        Ok(Body(value))
    }
}

fn invalid_body(path: &serde_path_to_error::Path, e: &serde_json::Error) -> ApiError {
    let mut pointer = String::new();
    for segment in path.iter() {
        use serde_path_to_error::Segment;
        match segment {
            Segment::Seq { index } => pointer.push_str(&format!("/{index}")),
            Segment::Map { key } | Segment::Enum { variant: key } => {
                pointer.push('/');
                pointer.push_str(&key.replace('~', "~0").replace('/', "~1"));
            }
            Segment::Unknown => {}
        }
    }
    ApiError::bad_request("invalid_body", e.to_string(), pointer)
}

/// A workflow document (the IR), parsed and validated off the async runtime.
pub struct WorkflowDoc(pub couler_ir::Workflow);

impl<S: Send + Sync> FromRequest<S> for WorkflowDoc {
    type Rejection = ApiError;

    async fn from_request(req: Request, state: &S) -> ApiResult<Self> {
        let format = format_of(&req)?;
        let bytes = bytes(req, state).await?;
        text(&bytes)?;
        let workflow = tokio::task::spawn_blocking(move || {
            let text = std::str::from_utf8(&bytes).expect("checked above");
            couler_ir::load(text, format)
        })
        .await
        .map_err(|e| ApiError::Internal(anyhow::anyhow!("IR parser task failed: {e}")))?
        .map_err(ApiError::Invalid)?;
        Ok(WorkflowDoc(workflow))
    }
}

/// Validates IR given as a JSON value (inline in a run request).
pub async fn workflow_from_value(value: serde_json::Value) -> ApiResult<couler_ir::Workflow> {
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
