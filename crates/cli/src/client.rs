//! The HTTP client for the Couler API: the server address, bearer auth, and
//! `application/problem+json` errors turned into readable ones.

use reqwest::header::{ACCEPT, CONTENT_TYPE};
use reqwest::{Method, RequestBuilder, Response, StatusCode, Url};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use std::fmt;
use std::time::Duration;

/// How long an ordinary (non-streaming) request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// An error document from the API (RFC 9457 with Couler's `code`).
#[derive(Debug, Clone, Deserialize)]
pub struct Problem {
    pub code: String,
    #[serde(default)]
    pub title: String,
    pub status: u16,
    #[serde(default)]
    pub detail: String,
    #[serde(default)]
    pub request_id: Option<String>,
    /// JSON pointer into the request of what is wrong.
    #[serde(default)]
    pub path: Option<String>,
    #[serde(default)]
    pub problems: Vec<ProblemItem>,
    /// The document as the server sent it, for `--output json`.
    #[serde(skip)]
    pub document: serde_json::Value,
}

#[derive(Debug, Clone, Deserialize)]
pub struct ProblemItem {
    pub path: String,
    pub code: String,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let detail = if self.detail.is_empty() {
            &self.title
        } else {
            &self.detail
        };
        write!(f, "{}: {detail} (", self.code)?;
        // Items carry their own paths; otherwise say what the path names.
        if let Some(path) = self.path.as_deref().filter(|_| self.problems.is_empty()) {
            let path = if path.is_empty() { "/" } else { path };
            write!(f, "at {path}, ")?;
        }
        write!(f, "HTTP {}", self.status)?;
        if let Some(id) = &self.request_id {
            write!(f, ", request {id}")?;
        }
        f.write_str(")")?;
        for p in &self.problems {
            let path = if p.path.is_empty() { "/" } else { &p.path };
            write!(f, "\n  {path}: {}: {}", p.code, p.message)?;
        }
        Ok(())
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Problem(Problem),
    /// A failure status without a problem document (a proxy, an old server).
    #[error("{method} {url}: HTTP {status}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status {
        method: Method,
        url: Url,
        status: StatusCode,
        body: String,
    },
    #[error("cannot reach the server")]
    Transport(#[source] reqwest::Error),
    #[error("{url}: unexpected response body")]
    Decode {
        url: Url,
        #[source]
        source: serde_json::Error,
    },
}

impl Error {
    /// The problem's machine code, when the server sent one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Problem(p) => Some(&p.code),
            _ => None,
        }
    }
}

/// A command's failure as a JSON document, for `--output json`: the
/// server's problem document as it was sent, else one of the same shape
/// with a code saying what failed here (`unreachable`,
/// `unexpected_status`, `unexpected_response`, or `failed` for anything
/// outside the API: a file that cannot be read, a bad argument).
pub fn error_document(e: &anyhow::Error) -> serde_json::Value {
    let detail = format!("{e:#}");
    match e.chain().find_map(|cause| cause.downcast_ref::<Error>()) {
        Some(Error::Problem(p)) => p.document.clone(),
        Some(Error::Status { status, .. }) => serde_json::json!({
            "code": "unexpected_status", "status": status.as_u16(), "detail": detail,
        }),
        Some(Error::Transport(_)) => serde_json::json!({"code": "unreachable", "detail": detail}),
        Some(Error::Decode { .. }) => {
            serde_json::json!({"code": "unexpected_response", "detail": detail})
        }
        None => serde_json::json!({"code": "failed", "detail": detail}),
    }
}

#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    base: Url,
    token: Option<String>,
}

impl Client {
    pub fn new(server: &str, token: Option<String>) -> anyhow::Result<Client> {
        // reqwest is built without a default TLS provider; pick ring once.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let base = Url::parse(server)
            .map_err(|e| anyhow::anyhow!("--server {server:?} is not a URL: {e}"))?;
        anyhow::ensure!(
            matches!(base.scheme(), "http" | "https") && !base.cannot_be_a_base(),
            "--server {server:?} must be an http:// or https:// URL"
        );
        let http = reqwest::Client::builder()
            .user_agent(concat!("couler/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(Duration::from_secs(10))
            .build()?;
        Ok(Client {
            http,
            base,
            token: token.filter(|t| !t.is_empty()),
        })
    }

    /// The server URL with `segments` appended (each one escaped).
    pub fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        url.path_segments_mut()
            .expect("checked in new")
            .pop_if_empty()
            .extend(segments);
        url
    }

    /// [`Client::url`] with query parameters.
    pub fn url_with_query<K: AsRef<str>, V: AsRef<str>>(
        &self,
        segments: &[&str],
        query: &[(K, V)],
    ) -> Url {
        let mut url = self.url(segments);
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    /// A request with credentials and no deadline (for streams).
    pub fn request(&self, method: Method, segments: &[&str]) -> RequestBuilder {
        self.request_to(method, self.url(segments))
    }

    pub fn request_to(&self, method: Method, url: Url) -> RequestBuilder {
        let req = self.http.request(method, url);
        match &self.token {
            Some(token) => req.bearer_auth(token),
            None => req,
        }
    }

    /// Sends a request; failure statuses become [`Error::Problem`] (or
    /// [`Error::Status`] when the body is not a problem document).
    pub async fn send(&self, req: RequestBuilder) -> Result<Response, Error> {
        let request = req.build().map_err(Error::Transport)?;
        let (method, url) = (request.method().clone(), request.url().clone());
        let response = self.http.execute(request).await.map_err(Error::Transport)?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.text().await.unwrap_or_default();
        // Read once as a tree: the problem's fields come from it, and it is
        // kept as it was sent.
        let problem = serde_json::from_str::<serde_json::Value>(&body)
            .ok()
            .and_then(|document| {
                let problem = Problem::deserialize(&document).ok()?;
                Some(Problem {
                    document,
                    ..problem
                })
            });
        match problem {
            Some(problem) => Err(Error::Problem(problem)),
            None => Err(Error::Status {
                method,
                url,
                status,
                body: body.trim().chars().take(500).collect(),
            }),
        }
    }

    /// Sends a request with a deadline and reads a JSON answer.
    pub async fn json<T: DeserializeOwned>(
        &self,
        req: RequestBuilder,
    ) -> Result<(StatusCode, T), Error> {
        let req = req
            .timeout(REQUEST_TIMEOUT)
            .header(ACCEPT, "application/json");
        let response = self.send(req).await?;
        let status = response.status();
        let url = response.url().clone();
        let bytes = response.bytes().await.map_err(Error::Transport)?;
        let value =
            serde_json::from_slice(&bytes).map_err(|source| Error::Decode { url, source })?;
        Ok((status, value))
    }

    pub async fn get<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        query: &[(&str, String)],
    ) -> Result<T, Error> {
        let req = self.request_to(Method::GET, self.url_with_query(segments, query));
        Ok(self.json(req).await?.1)
    }

    /// POSTs a JSON body (or none).
    pub async fn post<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        body: Option<&serde_json::Value>,
    ) -> Result<(StatusCode, T), Error> {
        let mut req = self.request(Method::POST, segments);
        if let Some(body) = body {
            req = req.json(body);
        }
        self.json(req).await
    }

    /// POSTs a document as is, with its content type.
    pub async fn post_document<T: DeserializeOwned>(
        &self,
        segments: &[&str],
        text: &str,
        content_type: &str,
    ) -> Result<(StatusCode, T), Error> {
        let req = self
            .request(Method::POST, segments)
            .header(CONTENT_TYPE, content_type)
            .body(text.to_owned());
        self.json(req).await
    }
}
