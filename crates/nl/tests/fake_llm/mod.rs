//! A scripted fake of an OpenAI-compatible server (axum on loopback) that
//! answers a fixed sequence and records every request, and the scenario
//! the generator tests share.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Json;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use couler_nl::generate::{Author, Draft, GenerateConfig, Request};
use couler_nl::library::Library;
use couler_nl::safety::ImagePolicy;
use couler_nl::{LlmClient, LlmConfig};
use serde_json::{Value, json};

pub const MODEL: &str = "fake-model";
pub const DESCRIPTION: &str = "Load the data from https://example.com/sales.csv, then train an xgboost model, then evaluate it.";
/// Tokens the fake reports per answer unless a reply says otherwise.
pub const PROMPT_TOKENS: u64 = 100;
pub const COMPLETION_TOKENS: u64 = 20;

pub enum Reply {
    /// A chat completion whose content is this text.
    Answer(String),
    /// The same, reporting this usage.
    Costly(String, u64, u64),
    /// A failure status with `Retry-After: 0`, so retries do not wait.
    Status(u16),
    /// 200 with a body that is no chat completion.
    Garbage,
}

#[derive(Clone)]
pub struct Script {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Value>>>,
}

pub struct Fake {
    pub base_url: String,
    script: Script,
}

impl Fake {
    pub async fn start(replies: Vec<Reply>) -> Fake {
        let script = Script {
            replies: Arc::new(Mutex::new(replies.into())),
            requests: Arc::default(),
        };
        let app = axum::Router::new()
            .route("/v1/chat/completions", post(answer))
            .with_state(script.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind loopback");
        let addr = listener.local_addr().expect("local address");
        tokio::spawn(async move { axum::serve(listener, app).await });
        Fake {
            base_url: format!("http://{addr}/v1"),
            script,
        }
    }

    pub fn client(&self, max_retries: u32) -> LlmClient {
        client(&self.base_url, max_retries)
    }

    pub fn requests(&self) -> Vec<Value> {
        self.script.requests.lock().unwrap().clone()
    }

    /// The user message of request `i`.
    pub fn user(&self, i: usize) -> String {
        self.requests()[i]["messages"][1]["content"]
            .as_str()
            .expect("a user message")
            .to_owned()
    }

    pub fn left(&self) -> usize {
        self.script.replies.lock().unwrap().len()
    }
}

async fn answer(State(script): State<Script>, Json(body): Json<Value>) -> Response {
    script.requests.lock().unwrap().push(body);
    let reply = script.replies.lock().unwrap().pop_front();
    let completion = |content: String, prompt: u64, completion: u64| {
        Json(json!({
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": MODEL,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        }))
        .into_response()
    };
    match reply {
        Some(Reply::Answer(content)) => completion(content, PROMPT_TOKENS, COMPLETION_TOKENS),
        Some(Reply::Costly(content, p, c)) => completion(content, p, c),
        Some(Reply::Status(code)) => {
            let mut headers = HeaderMap::new();
            headers.insert("retry-after", HeaderValue::from_static("0"));
            let status = StatusCode::from_u16(code).expect("a status code");
            (status, headers, "scripted failure").into_response()
        }
        Some(Reply::Garbage) => "<html>upstream hiccup</html>".into_response(),
        // Not retried by the client, so an unexpected call shows at once.
        None => (StatusCode::IM_A_TEAPOT, "the script is exhausted").into_response(),
    }
}

pub fn client(base_url: &str, max_retries: u32) -> LlmClient {
    LlmClient::new(LlmConfig {
        base_url: base_url.into(),
        model: MODEL.into(),
        api_key: None,
        timeout_secs: 10,
        max_retries,
    })
    .expect("valid config")
}

/// Step writing is off: these scripts answer the plan's calls only
/// (`generate_steps.rs` scripts the step calls).
pub fn config(max_rounds: u32) -> GenerateConfig {
    GenerateConfig {
        max_rounds,
        write_steps: false,
        ..GenerateConfig::default()
    }
}

pub fn request<'a>(
    library: &'a Library,
    images: &'a ImagePolicy,
    description: &'a str,
) -> Request<'a> {
    Request {
        description,
        library,
        images,
        name: None,
        tokens_left: None,
    }
}

pub fn answer_json(v: Value) -> Reply {
    Reply::Answer(v.to_string())
}

pub fn outline() -> Reply {
    answer_json(json!({"stages": [
        {"tasks": [{"kind": "load", "text": "load the data from https://example.com/sales.csv"}]},
        {"tasks": [{"kind": "train", "text": "train an xgboost model"}]},
        {"tasks": [{"kind": "evaluate", "text": "evaluate it"}]},
    ]}))
}

pub fn good_plan() -> Value {
    json!({"stages": [
        {"tasks": [{"kind": "load", "text": "load the data", "target": "https://example.com/sales.csv"}]},
        {"tasks": [{"kind": "train", "text": "train an xgboost model", "model": "xgboost"}]},
        {"tasks": [{"kind": "evaluate", "text": "evaluate it"}]},
    ]})
}

pub fn plan_without_evaluation() -> Reply {
    answer_json(json!({"stages": [
        {"tasks": [{"kind": "load", "text": "load the data", "target": "https://example.com/sales.csv"}]},
        {"tasks": [{"kind": "train", "text": "train an xgboost model", "model": "xgboost"}]},
    ]}))
}

/// An unknown kind and a shell task without its command.
pub fn bad_plan() -> Reply {
    answer_json(json!({"stages": [
        {"tasks": [{"kind": "load", "text": "load the data", "target": "https://example.com/sales.csv"}]},
        {"tasks": [{"kind": "dance", "text": "train an xgboost model"}, {"kind": "shell", "text": "run it"}]},
    ]}))
}

pub fn critique(score: f64, issues: &[&str]) -> Reply {
    answer_json(json!({"score": score, "issues": issues}))
}

pub fn kinds(draft: &Draft) -> Vec<String> {
    draft
        .explanations
        .iter()
        .map(|e| e.kind.to_string())
        .collect()
}

pub fn offline_reason(draft: &Draft) -> &str {
    match &draft.author {
        Author::Offline { reason } => reason.as_deref().expect("a fallback names its reason"),
        other => panic!("expected the offline planner, got {other:?}"),
    }
}

pub fn tokens(answers: u64) -> u64 {
    answers * (PROMPT_TOKENS + COMPLETION_TOKENS)
}
