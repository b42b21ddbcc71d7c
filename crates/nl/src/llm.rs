//! OpenAI-compatible chat completions: one client that POSTs
//! `{base_url}/chat/completions`, can ask for JSON shaped by a schema,
//! retries transient failures with backoff, and never lets the API key reach
//! a log line or an error.

use std::fmt;
use std::time::Duration;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderValue, RETRY_AFTER};
use reqwest::{StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The first retry waits about this long; each further one doubles it.
const BACKOFF_BASE: Duration = Duration::from_millis(500);
/// No backoff step is longer.
const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// A `Retry-After` longer than this is not waited out: the error is returned
/// so the caller (a scheduler step) is not stalled behind a throttled server.
const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);
/// How much of an error response's body an error keeps.
const BODY_EXCERPT_CHARS: usize = 512;
const CONNECT_TIMEOUT_CAP: Duration = Duration::from_secs(10);

/// Where the LLM lives; services read it from an `[llm]` config section.
/// The defaults point at `scripts/llm-server`.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LlmConfig {
    /// The API root, e.g. `http://127.0.0.1:18001/v1`.
    pub base_url: String,
    pub model: String,
    /// Sent as a bearer token when set (an empty key counts as unset).
    pub api_key: Option<SecretString>,
    /// Bound on one HTTP exchange, response body included.
    pub timeout_secs: u64,
    /// Retries after the first attempt, on transient failures only.
    pub max_retries: u32,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            base_url: "http://127.0.0.1:18001/v1".into(),
            model: "smollm2".into(),
            api_key: None,
            timeout_secs: 60,
            max_retries: 3,
        }
    }
}

/// One question: a system prompt and a user message. With `json_schema` the
/// server is asked for a JSON object of that shape.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ChatRequest {
    pub system: String,
    pub user: String,
    pub json_schema: Option<Value>,
    pub max_tokens: Option<u32>,
    pub temperature: Option<f32>,
}

/// The first choice's text and the token usage the server reported (zero
/// when it reported none).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChatResponse {
    pub content: String,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
}

#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("invalid llm configuration: {0}")]
    Config(String),
    /// Connection refused or dropped, after the retries.
    #[error("cannot reach the llm server at {endpoint}")]
    Unreachable {
        endpoint: String,
        #[source]
        source: reqwest::Error,
    },
    /// A failure status (after the retries, for 429 and 5xx).
    #[error("llm server answered HTTP {code}{}", if body.is_empty() { String::new() } else { format!(": {body}") })]
    Status { code: u16, body: String },
    #[error("invalid llm response: {0}")]
    InvalidResponse(String),
    /// One exchange took longer than `timeout_secs`; not retried, as a
    /// second try would most likely be as slow.
    #[error("llm request timed out after {secs} s")]
    Timeout { secs: u64 },
}

pub struct LlmClient {
    http: reqwest::Client,
    endpoint: Url,
    model: String,
    /// `Bearer <key>`, marked sensitive.
    auth: Option<HeaderValue>,
    /// Kept only to scrub it from error bodies a server might echo it in.
    api_key: Option<SecretString>,
    timeout: Duration,
    max_retries: u32,
}

impl fmt::Debug for LlmClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LlmClient")
            .field("endpoint", &self.endpoint.as_str())
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "[REDACTED]"))
            .field("timeout", &self.timeout)
            .field("max_retries", &self.max_retries)
            .finish()
    }
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<Self, LlmError> {
        // reqwest is built without a default TLS provider; pick ring once.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let endpoint = chat_endpoint(&config.base_url)?;
        if config.timeout_secs == 0 {
            return Err(LlmError::Config("timeout_secs must be at least 1".into()));
        }
        let api_key = config.api_key.filter(|key| !key.expose_secret().is_empty());
        let auth = api_key.as_ref().map(bearer).transpose()?;
        let timeout = Duration::from_secs(config.timeout_secs);
        let http = reqwest::Client::builder()
            .user_agent(concat!("couler/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(timeout.min(CONNECT_TIMEOUT_CAP))
            .build()
            .map_err(|e| LlmError::Config(format!("cannot build the http client: {e}")))?;
        Ok(LlmClient {
            http,
            endpoint,
            model: config.model,
            auth,
            api_key,
            timeout,
            max_retries: config.max_retries,
        })
    }

    /// The model every request names.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// Asks once (plus retries). When the server rejects a request carrying
    /// a schema as malformed, asks again in plain JSON mode: not every
    /// OpenAI-compatible server accepts `schema` inside `response_format`.
    #[tracing::instrument(skip_all, fields(model = %self.model, schema = request.json_schema.is_some()))]
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatResponse, LlmError> {
        let first = self
            .complete(&WireRequest::new(&self.model, request, true))
            .await;
        match first {
            Err(LlmError::Status { code, .. })
                if request.json_schema.is_some() && may_reject_schema(code) =>
            {
                tracing::warn!(
                    code,
                    "llm server rejected the request with a schema, retrying in plain json mode"
                );
                self.complete(&WireRequest::new(&self.model, request, false))
                    .await
            }
            other => other,
        }
    }

    async fn complete(&self, request: &WireRequest<'_>) -> Result<ChatResponse, LlmError> {
        let body = serde_json::to_vec(request)
            .map_err(|e| LlmError::Config(format!("cannot encode the request: {e}")))?;
        let mut retries = 0;
        loop {
            let failure = match self.attempt(body.clone()).await {
                Ok(response) => {
                    tracing::debug!(
                        prompt_tokens = response.prompt_tokens,
                        completion_tokens = response.completion_tokens,
                        "llm answered"
                    );
                    return Ok(response);
                }
                Err(failure) => failure,
            };
            let delay = match failure.retry {
                _ if retries >= self.max_retries => return Err(failure.error),
                Retry::No => return Err(failure.error),
                Retry::Backoff => backoff(retries),
                Retry::After(delay) => delay,
            };
            retries += 1;
            tracing::warn!(
                retry = retries,
                max_retries = self.max_retries,
                delay_ms = delay.as_millis() as u64,
                error = %failure.error,
                "llm request failed, retrying"
            );
            tokio::time::sleep(delay).await;
        }
    }

    async fn attempt(&self, body: Vec<u8>) -> Result<ChatResponse, Failure> {
        let mut request = self
            .http
            .post(self.endpoint.clone())
            .timeout(self.timeout)
            .header(CONTENT_TYPE, "application/json")
            .body(body);
        if let Some(auth) = &self.auth {
            request = request.header(AUTHORIZATION, auth.clone());
        }
        let response = request.send().await.map_err(|e| self.transport(e))?;
        let status = response.status();
        if !status.is_success() {
            let retry = status_retry(status, response.headers().get(RETRY_AFTER));
            // The status is the error; a body that cannot be read is just absent.
            let body = response.text().await.unwrap_or_default();
            return Err(Failure {
                error: LlmError::Status {
                    code: status.as_u16(),
                    body: self.excerpt(&body),
                },
                retry,
            });
        }
        let body = response.bytes().await.map_err(|e| self.transport(e))?;
        parse_response(&body).map_err(|error| Failure {
            error,
            retry: Retry::No,
        })
    }

    fn transport(&self, error: reqwest::Error) -> Failure {
        if error.is_timeout() {
            return Failure {
                error: LlmError::Timeout {
                    secs: self.timeout.as_secs(),
                },
                retry: Retry::No,
            };
        }
        // Refused, reset or closed mid-exchange: the server may be
        // restarting. Anything else (a redirect loop, a bad URL) will not heal.
        let retry = if error.is_connect() || error.is_request() || error.is_body() {
            Retry::Backoff
        } else {
            Retry::No
        };
        Failure {
            error: LlmError::Unreachable {
                endpoint: self.endpoint.to_string(),
                source: error,
            },
            retry,
        }
    }

    /// The start of an error body, with the API key scrubbed (some servers
    /// echo credentials back in their error messages).
    fn excerpt(&self, body: &str) -> String {
        let mut body = body.trim().to_owned();
        if let Some(key) = &self.api_key {
            body = body.replace(key.expose_secret(), "[REDACTED]");
        }
        match body.char_indices().nth(BODY_EXCERPT_CHARS) {
            Some((cut, _)) => format!("{}…", &body[..cut]),
            None => body,
        }
    }
}

fn chat_endpoint(base_url: &str) -> Result<Url, LlmError> {
    let url = format!("{}/chat/completions", base_url.trim_end_matches('/'));
    let parsed = Url::parse(&url)
        .map_err(|e| LlmError::Config(format!("base_url {base_url:?} is not a URL: {e}")))?;
    if !matches!(parsed.scheme(), "http" | "https")
        || parsed.query().is_some()
        || parsed.fragment().is_some()
    {
        return Err(LlmError::Config(format!(
            "base_url {base_url:?} must be an http:// or https:// URL without query or fragment"
        )));
    }
    Ok(parsed)
}

fn bearer(key: &SecretString) -> Result<HeaderValue, LlmError> {
    // The key must stay out of this error, so the cause is not attached.
    let mut value =
        HeaderValue::from_str(&format!("Bearer {}", key.expose_secret())).map_err(|_| {
            LlmError::Config("api_key contains characters not allowed in an HTTP header".into())
        })?;
    value.set_sensitive(true);
    Ok(value)
}

/// 400 and 422 are how servers refuse a body they do not understand; other
/// 4xx (auth, wrong path) would fail the same way without the schema.
fn may_reject_schema(code: u16) -> bool {
    matches!(code, 400 | 422)
}

struct Failure {
    error: LlmError,
    retry: Retry,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Retry {
    No,
    Backoff,
    After(Duration),
}

/// 429 and 5xx are transient; a `Retry-After` in seconds is honoured, unless
/// it asks for longer than [`MAX_RETRY_AFTER`].
fn status_retry(status: StatusCode, retry_after: Option<&HeaderValue>) -> Retry {
    if status != StatusCode::TOO_MANY_REQUESTS && !status.is_server_error() {
        return Retry::No;
    }
    match retry_after
        .and_then(|v| v.to_str().ok())
        .and_then(parse_retry_after)
    {
        Some(delay) if delay > MAX_RETRY_AFTER => Retry::No,
        Some(delay) => Retry::After(delay),
        None => Retry::Backoff,
    }
}

/// `Retry-After` as delay-seconds; the HTTP-date form is rare from API
/// servers and falls back to backoff.
fn parse_retry_after(value: &str) -> Option<Duration> {
    let value = value.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse().ok().map(Duration::from_secs)
}

/// Exponential backoff with equal jitter: half the step is fixed, half is
/// random, so clients that failed together do not retry together.
fn backoff(retry: u32) -> Duration {
    let step = BACKOFF_BASE
        .saturating_mul(1 << retry.min(16))
        .min(BACKOFF_CAP);
    let half = step / 2;
    half + half.mul_f64(rand::random::<f64>())
}

fn parse_response(body: &[u8]) -> Result<ChatResponse, LlmError> {
    let wire: WireResponse = serde_json::from_slice(body)
        .map_err(|e| LlmError::InvalidResponse(format!("not a chat completion: {e}")))?;
    let choice = wire
        .choices
        .into_iter()
        .next()
        .ok_or_else(|| LlmError::InvalidResponse("no choices".into()))?;
    let content = choice
        .message
        .content
        .ok_or_else(|| LlmError::InvalidResponse("the first choice has no content".into()))?;
    let usage = wire.usage.unwrap_or_default();
    Ok(ChatResponse {
        content,
        prompt_tokens: usage.prompt_tokens,
        completion_tokens: usage.completion_tokens,
    })
}

#[derive(Debug, Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: [WireMessage<'a>; 2],
    #[serde(skip_serializing_if = "Option::is_none")]
    response_format: Option<ResponseFormat<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

impl<'a> WireRequest<'a> {
    /// With a schema in the request, `with_schema` chooses between
    /// `{"type": "json_object", "schema": …}` (the form llama.cpp, vLLM and
    /// Ollama accept) and plain `{"type": "json_object"}`.
    fn new(model: &'a str, request: &'a ChatRequest, with_schema: bool) -> Self {
        let response_format = request.json_schema.as_ref().map(|schema| ResponseFormat {
            kind: "json_object",
            schema: with_schema.then_some(schema),
        });
        WireRequest {
            model,
            messages: [
                WireMessage {
                    role: "system",
                    content: &request.system,
                },
                WireMessage {
                    role: "user",
                    content: &request.user,
                },
            ],
            response_format,
            max_tokens: request.max_tokens,
            temperature: request.temperature,
        }
    }
}

#[derive(Debug, Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: &'a str,
}

#[derive(Debug, Serialize)]
struct ResponseFormat<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    schema: Option<&'a Value>,
}

#[derive(Deserialize)]
struct WireResponse {
    choices: Vec<WireChoice>,
    usage: Option<WireUsage>,
}

#[derive(Deserialize)]
struct WireChoice {
    message: WireAnswer,
}

#[derive(Deserialize)]
struct WireAnswer {
    content: Option<String>,
}

#[derive(Deserialize, Default)]
struct WireUsage {
    #[serde(default)]
    prompt_tokens: u64,
    #[serde(default)]
    completion_tokens: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const KEY: &str = "sk-secret-123";

    fn request(schema: Option<Value>) -> ChatRequest {
        ChatRequest {
            system: "You tune hyperparameters.".into(),
            user: "Suggest a learning rate.".into(),
            json_schema: schema,
            max_tokens: Some(64),
            temperature: Some(0.25),
        }
    }

    fn client_with_key() -> LlmClient {
        LlmClient::new(LlmConfig {
            api_key: Some(SecretString::from(KEY)),
            ..LlmConfig::default()
        })
        .unwrap()
    }

    #[test]
    fn request_with_schema_sends_json_object_with_the_schema() {
        let schema = json!({"type": "object", "properties": {"lr": {"type": "number"}}});
        let request = request(Some(schema.clone()));
        let body = serde_json::to_value(WireRequest::new("smollm2", &request, true)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "smollm2",
                "messages": [
                    {"role": "system", "content": "You tune hyperparameters."},
                    {"role": "user", "content": "Suggest a learning rate."},
                ],
                "response_format": {"type": "json_object", "schema": schema},
                "max_tokens": 64,
                "temperature": 0.25,
            })
        );
    }

    #[test]
    fn fallback_request_keeps_json_mode_but_drops_the_schema() {
        let request = request(Some(json!({"type": "object"})));
        let body = serde_json::to_value(WireRequest::new("m", &request, false)).unwrap();
        assert_eq!(body["response_format"], json!({"type": "json_object"}));
    }

    #[test]
    fn request_without_schema_or_options_sends_only_messages() {
        let request = ChatRequest {
            system: "s".into(),
            user: "u".into(),
            ..ChatRequest::default()
        };
        let body = serde_json::to_value(WireRequest::new("m", &request, true)).unwrap();
        assert_eq!(
            body,
            json!({
                "model": "m",
                "messages": [
                    {"role": "system", "content": "s"},
                    {"role": "user", "content": "u"},
                ],
            })
        );
    }

    #[test]
    fn endpoint_appends_chat_completions_to_the_base_url() {
        for base in ["http://127.0.0.1:18001/v1", "http://127.0.0.1:18001/v1/"] {
            assert_eq!(
                chat_endpoint(base).unwrap().as_str(),
                "http://127.0.0.1:18001/v1/chat/completions"
            );
        }
        for bad in ["127.0.0.1:18001", "ftp://host/v1", "http://host/v1?x=1", ""] {
            assert!(
                matches!(chat_endpoint(bad), Err(LlmError::Config(_))),
                "{bad:?} accepted"
            );
        }
    }

    #[test]
    fn zero_timeout_is_rejected() {
        let config = LlmConfig {
            timeout_secs: 0,
            ..LlmConfig::default()
        };
        assert!(matches!(LlmClient::new(config), Err(LlmError::Config(_))));
    }

    #[test]
    fn throttling_and_server_errors_are_retried_other_failures_are_not() {
        for code in [429, 500, 502, 503, 504] {
            let status = StatusCode::from_u16(code).unwrap();
            assert_eq!(status_retry(status, None), Retry::Backoff, "{code}");
        }
        for code in [400, 401, 403, 404, 408, 413, 422] {
            let status = StatusCode::from_u16(code).unwrap();
            assert_eq!(status_retry(status, None), Retry::No, "{code}");
        }
    }

    #[test]
    fn retry_after_is_honoured_within_bounds() {
        let after = |v: &'static str| Some(HeaderValue::from_static(v));
        let status = StatusCode::TOO_MANY_REQUESTS;
        assert_eq!(
            status_retry(status, after("7").as_ref()),
            Retry::After(Duration::from_secs(7))
        );
        assert_eq!(
            status_retry(StatusCode::SERVICE_UNAVAILABLE, after("0").as_ref()),
            Retry::After(Duration::ZERO)
        );
        // Too long to wait out: give the error back instead of stalling.
        assert_eq!(status_retry(status, after("3600").as_ref()), Retry::No);
        // Unparsable: ordinary backoff.
        let date = after("Wed, 21 Oct 2015 07:28:00 GMT");
        assert_eq!(status_retry(status, date.as_ref()), Retry::Backoff);
        // Not retryable whatever the header says.
        let status = StatusCode::BAD_REQUEST;
        assert_eq!(status_retry(status, after("1").as_ref()), Retry::No);
    }

    #[test]
    fn retry_after_parses_delay_seconds_only() {
        assert_eq!(parse_retry_after("3"), Some(Duration::from_secs(3)));
        assert_eq!(parse_retry_after(" 12 "), Some(Duration::from_secs(12)));
        for bad in [
            "",
            " ",
            "-1",
            "+1",
            "1.5",
            "1s",
            "Wed, 21 Oct 2015 07:28:00 GMT",
        ] {
            assert_eq!(parse_retry_after(bad), None, "{bad:?}");
        }
        assert_eq!(parse_retry_after("99999999999999999999999"), None);
    }

    #[test]
    fn backoff_doubles_with_jitter_and_is_capped() {
        for retry in 0..40 {
            let step = BACKOFF_BASE
                .saturating_mul(1 << retry.min(16))
                .min(BACKOFF_CAP);
            for _ in 0..20 {
                let delay = backoff(retry);
                assert!(
                    delay >= step / 2 && delay <= step,
                    "retry {retry}: {delay:?}"
                );
            }
        }
        assert!(backoff(0) <= Duration::from_millis(500));
        assert!(backoff(2) >= Duration::from_secs(1));
        assert!(backoff(30) <= BACKOFF_CAP);
    }

    #[test]
    fn only_malformed_request_statuses_trigger_the_schema_fallback() {
        assert!(may_reject_schema(400));
        assert!(may_reject_schema(422));
        for code in [401, 403, 404, 429, 500] {
            assert!(!may_reject_schema(code), "{code}");
        }
    }

    #[test]
    fn response_gives_content_and_usage() {
        let body = json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": "{\"lr\": 0.1}"}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 29, "completion_tokens": 18, "total_tokens": 47},
        });
        let response = parse_response(body.to_string().as_bytes()).unwrap();
        assert_eq!(
            response,
            ChatResponse {
                content: "{\"lr\": 0.1}".into(),
                prompt_tokens: 29,
                completion_tokens: 18,
            }
        );
        let no_usage = json!({"choices": [{"message": {"content": "hi"}}]});
        let response = parse_response(no_usage.to_string().as_bytes()).unwrap();
        assert_eq!((response.prompt_tokens, response.completion_tokens), (0, 0));
    }

    #[test]
    fn malformed_responses_are_invalid() {
        let bodies = [
            "not json".to_string(),
            json!({"choices": []}).to_string(),
            json!({"choices": [{"message": {"content": null, "tool_calls": []}}]}).to_string(),
            json!({"detail": "Not Found"}).to_string(),
        ];
        for body in bodies {
            assert!(
                matches!(
                    parse_response(body.as_bytes()),
                    Err(LlmError::InvalidResponse(_))
                ),
                "{body}"
            );
        }
    }

    #[test]
    fn config_reads_with_defaults_and_rejects_unknown_keys() {
        let config: LlmConfig = serde_json::from_value(json!({
            "base_url": "https://llm.internal/v1",
            "api_key": KEY,
        }))
        .unwrap();
        assert_eq!(config.base_url, "https://llm.internal/v1");
        assert_eq!(config.model, "smollm2");
        assert_eq!(config.api_key.as_ref().unwrap().expose_secret(), KEY);
        assert_eq!((config.timeout_secs, config.max_retries), (60, 3));
        let typo = serde_json::from_value::<LlmConfig>(json!({"max_retry": 1}));
        assert!(typo.is_err());
    }

    #[test]
    fn debug_never_shows_the_key() {
        let config = LlmConfig {
            api_key: Some(SecretString::from(KEY)),
            ..LlmConfig::default()
        };
        assert!(!format!("{config:?}").contains(KEY));
        let client = LlmClient::new(config).unwrap();
        let shown = format!("{client:?}");
        assert!(
            !shown.contains(KEY) && shown.contains("REDACTED"),
            "{shown}"
        );
        assert!(client.auth.as_ref().unwrap().is_sensitive());
    }

    #[test]
    fn errors_never_show_the_key() {
        let client = client_with_key();
        let echoed = format!(r#"{{"error": "Incorrect API key provided: {KEY}."}}"#);
        let error = LlmError::Status {
            code: 401,
            body: client.excerpt(&echoed),
        };
        assert!(!error.to_string().contains(KEY), "{error}");
        assert!(!format!("{error:?}").contains(KEY));
        assert!(error.to_string().contains("[REDACTED]"));

        // A key that cannot be a header value: the error names the problem,
        // not the key.
        let config = LlmConfig {
            api_key: Some(SecretString::from(format!("{KEY}\n"))),
            ..LlmConfig::default()
        };
        let error = LlmClient::new(config).unwrap_err();
        assert!(matches!(error, LlmError::Config(_)));
        assert!(!error.to_string().contains(KEY) && !format!("{error:?}").contains(KEY));
    }

    #[test]
    fn empty_key_means_no_auth() {
        let client = LlmClient::new(LlmConfig {
            api_key: Some(SecretString::from("")),
            ..LlmConfig::default()
        })
        .unwrap();
        assert!(client.auth.is_none());
    }

    #[test]
    fn long_error_bodies_are_cut_on_a_char_boundary() {
        let client = client_with_key();
        let body = "é".repeat(BODY_EXCERPT_CHARS + 10);
        let excerpt = client.excerpt(&body);
        assert_eq!(excerpt.chars().count(), BODY_EXCERPT_CHARS + 1);
        assert!(excerpt.ends_with('…'));
        assert_eq!(client.excerpt("  short \n"), "short");
    }
}
