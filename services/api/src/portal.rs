//! The web portal (`portal/`, a Preact single-page app), served under
//! `/ui/` from assets embedded at build time (`rust-embed`; debug builds
//! read `portal/dist` at request time, so `npm run build` needs no Rust
//! rebuild). `/` redirects to `/ui/`. Paths under `/ui/` that are not a
//! built file are the app's own routes and get `index.html`; a missing
//! build answers a page saying how to make one.
//!
//! Every answer carries a strict Content-Security-Policy (no inline
//! scripts or styles, nothing from other origins, no framing); hashed
//! assets are cached for a year, `index.html` never.

use axum::Router;
use axum::extract::Path;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;

#[derive(rust_embed::Embed)]
#[folder = "../../portal/dist"]
#[allow_missing = true]
struct Assets;

/// What the portal's pages may load: only this origin, no inline code.
pub const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
    connect-src 'self'; worker-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; \
    form-action 'self'; frame-ancestors 'none'";

const NOT_BUILT: &str = "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>Couler</title></head>\
<body><h1>The portal is not built</h1><p>This couler-api was built without the portal's assets. \
Build them with <code>scripts/portal-build</code> (that is <code>npm ci &amp;&amp; npm run build</code> in \
<code>portal/</code>), then rebuild couler-api (release builds embed them; debug builds read them from \
<code>portal/dist</code>).</p><p>The API is at <a href=\"/docs\">/docs</a>.</p></body></html>";

pub fn router<S: Clone + Send + Sync + 'static>() -> Router<S> {
    Router::new()
        .route("/", get(|| async { Redirect::temporary("/ui/") }))
        .route("/ui", get(|| async { Redirect::temporary("/ui/") }))
        .route("/ui/", get(|| async { serve("") }))
        .route(
            "/ui/{*path}",
            get(|path: Path<String>| async move { serve(&path) }),
        )
}

fn serve(path: &str) -> Response {
    if let Some(file) = Assets::get(path).filter(|_| !path.is_empty()) {
        let immutable = path.starts_with("assets/");
        return respond(
            StatusCode::OK,
            file.metadata.mimetype(),
            if immutable {
                "public, max-age=31536000, immutable"
            } else {
                "no-cache"
            },
            file.data.into_owned(),
        );
    }
    // A file that is not there is a 404, not the app: a stale page asking
    // for an old asset must not get HTML back as JavaScript.
    let last = path.rsplit('/').next().unwrap_or_default();
    if path.starts_with("assets/") || last.contains('.') {
        return respond(
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            "no-cache",
            b"not found\n".to_vec(),
        );
    }
    match Assets::get("index.html") {
        Some(index) => respond(
            StatusCode::OK,
            "text/html; charset=utf-8",
            "no-cache",
            index.data.into_owned(),
        ),
        None => respond(
            StatusCode::OK,
            "text/html; charset=utf-8",
            "no-cache",
            NOT_BUILT.as_bytes().to_vec(),
        ),
    }
}

fn respond(status: StatusCode, mime: &str, cache: &'static str, body: Vec<u8>) -> Response {
    let mut response = (status, body).into_response();
    let headers = response.headers_mut();
    if let Ok(v) = HeaderValue::from_str(mime) {
        headers.insert(header::CONTENT_TYPE, v);
    }
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
