//! The HTTP application: every resource router, the OpenAPI document and
//! the layers every request passes through.

use crate::error::{ApiError, PROBLEM_JSON, Problem, problem, problem_response};
use crate::openapi::ApiDoc;
use crate::state::AppState;
use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, MatchedPath, Request};
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use std::time::{Duration, Instant};
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::compression::{CompressionLayer, DefaultPredicate, Predicate};
use tower_http::cors::{AllowOrigin, CorsLayer};
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, SetRequestIdLayer};
use tower_http::sensitive_headers::SetSensitiveRequestHeadersLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;
use utoipa::OpenApi;
use utoipa_axum::router::OpenApiRouter;
use utoipa_swagger_ui::SwaggerUi;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");

/// Each resource's router, as [`routes`] merges them.
fn resources() -> Vec<(&'static str, OpenApiRouter<AppState>)> {
    vec![
        ("health", crate::health::router()),
        ("tenants", crate::tenants::router()),
        ("api_keys", crate::api_keys::router()),
        ("workflows", crate::workflows::router()),
        ("imports", crate::imports::router()),
        ("runs", crate::runs::router()),
        ("schedules", crate::schedules::router()),
        ("hooks", crate::hooks::router()),
        ("cache", crate::cache::router()),
        ("plans", crate::plans::router()),
        ("generations", crate::generations::router()),
        ("step_library", crate::step_library::router()),
        ("llm_usage", crate::llm_usage::router()),
        ("secrets", crate::secrets::router()),
        ("me", crate::me::router()),
        ("graph", crate::graph::router()),
    ]
}

fn routes() -> OpenApiRouter<AppState> {
    resources().into_iter().fold(
        OpenApiRouter::with_openapi(ApiDoc::openapi()),
        |all, (_, router)| all.merge(router),
    )
}

/// Component schemas that two resources register under one name with
/// different content, as `schema name: resource, resource`. Merging keeps
/// one of them silently, so the other's clients would read the wrong type.
pub fn schema_clashes() -> Vec<String> {
    let documents = std::iter::once(("document", ApiDoc::openapi()))
        .chain(
            resources()
                .into_iter()
                .map(|(name, router)| (name, router.split_for_parts().1)),
        )
        .collect::<Vec<_>>();
    clashes(&documents)
}

fn clashes(documents: &[(&str, utoipa::openapi::OpenApi)]) -> Vec<String> {
    use std::collections::BTreeMap;
    let mut seen: BTreeMap<&str, (&str, serde_json::Value)> = BTreeMap::new();
    let mut found = Vec::new();
    for (resource, doc) in documents {
        let Some(components) = &doc.components else {
            continue;
        };
        for (name, schema) in &components.schemas {
            // A reference stands in for a schema defined elsewhere (the
            // IR's parts, written over at the end: `openapi::document`).
            if matches!(schema, utoipa::openapi::RefOr::Ref(_)) {
                continue;
            }
            let schema = serde_json::to_value(schema).expect("schemas serialize");
            match seen.get(name.as_str()) {
                Some((first, earlier)) if *earlier != schema => {
                    found.push(format!("{name}: {first}, {resource}"));
                }
                Some(_) => {}
                None => {
                    seen.insert(name, (resource, schema));
                }
            }
        }
    }
    found
}

/// The OpenAPI document the code describes, as served.
pub fn openapi() -> serde_json::Value {
    crate::openapi::document(routes().split_for_parts().1)
}

/// The committed form of [`openapi`]: pretty JSON and a trailing newline.
pub fn openapi_json() -> String {
    let mut text =
        serde_json::to_string_pretty(&openapi()).expect("the OpenAPI document serializes");
    text.push('\n');
    text
}

pub fn app(state: AppState) -> Router {
    let config = &state.config.http;
    let (router, api) = routes().split_for_parts();
    let api = crate::openapi::document(api);
    let cors = if config.cors_origins.is_empty() {
        CorsLayer::new()
    } else {
        let origins: Vec<HeaderValue> = config
            .cors_origins
            .iter()
            .filter_map(|o| o.parse().ok())
            .collect();
        CorsLayer::new()
            .allow_origin(AllowOrigin::list(origins))
            .allow_methods(tower_http::cors::Any)
            .allow_headers(tower_http::cors::Any)
            .expose_headers([
                REQUEST_ID,
                header::RETRY_AFTER,
                crate::logs::LOG_OFFSET,
                crate::logs::LOG_COMPLETE,
            ])
    };
    let layers = ServiceBuilder::new()
        .layer(SetSensitiveRequestHeadersLayer::new([
            header::AUTHORIZATION,
            HeaderName::from_static("x-api-key"),
            HeaderName::from_static("x-hub-signature-256"),
            HeaderName::from_static("webhook-signature"),
        ]))
        .layer(SetRequestIdLayer::new(REQUEST_ID, MakeRequestUuid))
        .layer(TraceLayer::new_for_http().make_span_with(request_span))
        .layer(PropagateRequestIdLayer::new(REQUEST_ID))
        .layer(CompressionLayer::new().compress_when(DefaultPredicate::new().and(not_streamed)))
        .layer(middleware::from_fn(problem_details))
        .layer(CatchPanicLayer::custom(panic_response))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::SERVICE_UNAVAILABLE,
            Duration::from_secs(config.request_timeout_secs),
        ))
        .layer(cors)
        .layer(DefaultBodyLimit::max(config.body_limit_bytes));
    router
        .merge(SwaggerUi::new("/docs").external_url_unchecked("/openapi.json", api))
        .merge(crate::portal::router())
        .fallback(not_found)
        .layer(middleware::from_fn(refuse_nul_in_path))
        .layer(middleware::from_fn(record_metrics))
        .layer(layers)
        .with_state(state)
}

/// Streamed responses go out as written (see `logs::Streamed`).
fn not_streamed(
    _: StatusCode,
    _: axum::http::Version,
    _: &axum::http::HeaderMap,
    extensions: &axum::http::Extensions,
) -> bool {
    extensions.get::<crate::logs::Streamed>().is_none()
}

async fn not_found() -> ApiError {
    ApiError::NotFound {
        message: "no such route".into(),
        path: None,
    }
}

fn request_span(req: &Request) -> tracing::Span {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(MatchedPath::as_str)
        .unwrap_or("unmatched");
    let span = tracing::info_span!(
        "request",
        method = %req.method(),
        route,
        request_id,
        tenant = tracing::field::Empty,
        trace_id = tracing::field::Empty,
    );
    // Continue a caller's trace (W3C traceparent) when there is one.
    let parent = opentelemetry::global::get_text_map_propagator(|p| {
        p.extract(&couler_telemetry::Headers(req.headers()))
    });
    let _ = span.set_parent(parent);
    let trace_id = span.context().span().span_context().trace_id();
    if trace_id != opentelemetry::trace::TraceId::INVALID {
        span.record("trace_id", tracing::field::display(trace_id));
    }
    span
}

/// A URL path naming something with a NUL character (`%00`) names
/// nothing that can exist: 400, before any handler reads it.
async fn refuse_nul_in_path(req: Request, next: Next) -> Response {
    if req.uri().path().contains("%00") {
        return ApiError::nul("").into_response();
    }
    next.run(req).await
}

/// Request counts and latency by route and status.
async fn record_metrics(req: Request, next: Next) -> Response {
    let route = req
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| "unmatched".into());
    let method = req.method().to_string();
    let start = Instant::now();
    let response = next.run(req).await;
    let status = response.status().as_u16().to_string();
    let labels = [("method", method), ("route", route), ("status", status)];
    metrics::counter!("http_requests_total", &labels).increment(1);
    metrics::histogram!("http_request_duration_seconds", &labels)
        .record(start.elapsed().as_secs_f64());
    response
}

/// Every error leaves as problem+json carrying the request id, including
/// the ones axum and tower produce themselves (404, 405, 413, 415, 408).
async fn problem_details(req: Request, next: Next) -> Response {
    let request_id = req
        .headers()
        .get(REQUEST_ID)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    let is_problem = response
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(PROBLEM_JSON.as_bytes()));
    let (mut parts, body) = response.into_parts();
    let bytes = axum::body::to_bytes(body, 1 << 20)
        .await
        .unwrap_or_default();
    let mut p: Problem = match is_problem
        .then(|| serde_json::from_slice(&bytes).ok())
        .flatten()
    {
        Some(p) => p,
        None => {
            let text = String::from_utf8_lossy(&bytes).trim().to_owned();
            let detail = if text.is_empty() || status.is_server_error() {
                status.canonical_reason().unwrap_or("error").to_lowercase()
            } else {
                text
            };
            problem(status, code_for(status), detail)
        }
    };
    p.request_id = request_id;
    let rebuilt = problem_response(&p);
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_TYPE, HeaderValue::from_static(PROBLEM_JSON));
    Response::from_parts(parts, rebuilt.into_body())
}

fn code_for(status: StatusCode) -> &'static str {
    match status {
        StatusCode::BAD_REQUEST => "bad_request",
        StatusCode::UNAUTHORIZED => "unauthenticated",
        StatusCode::FORBIDDEN => "forbidden",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::REQUEST_TIMEOUT => "timeout",
        StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        StatusCode::UNPROCESSABLE_ENTITY => "invalid_body",
        StatusCode::TOO_MANY_REQUESTS => "rate_limited",
        StatusCode::SERVICE_UNAVAILABLE => "unavailable",
        s if s.is_server_error() => "internal",
        _ => "error",
    }
}

fn panic_response(_: Box<dyn std::any::Any + Send + 'static>) -> Response<Body> {
    tracing::error!("handler panicked");
    let p = problem(
        StatusCode::INTERNAL_SERVER_ERROR,
        "internal",
        "an internal error occurred".into(),
    );
    problem_response(&p)
}

#[cfg(test)]
mod tests {
    use utoipa::openapi::{ComponentsBuilder, ObjectBuilder, OpenApiBuilder, Type};

    fn document(name: &str, kind: Type) -> utoipa::openapi::OpenApi {
        let schema = ObjectBuilder::new().schema_type(kind).build();
        OpenApiBuilder::new()
            .components(Some(ComponentsBuilder::new().schema(name, schema).build()))
            .build()
    }

    #[test]
    fn two_schemas_of_one_name_are_a_clash_and_the_same_one_twice_is_not() {
        let docs = [
            ("runs", document("TriggerView", Type::Object)),
            ("schedules", document("TriggerView", Type::Object)),
            ("hooks", document("TriggerView", Type::String)),
        ];
        assert_eq!(super::clashes(&docs), ["TriggerView: runs, hooks"]);
        assert!(super::clashes(&docs[..2]).is_empty());
        assert!(
            super::schema_clashes().is_empty(),
            "{:?}",
            super::schema_clashes()
        );
    }
}
