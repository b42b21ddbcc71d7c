//! A small client of Airflow's REST API (`/api/v2`): token handling,
//! retries, and reading task logs and outputs.

use super::ENGINE;
use crate::EngineError;
use crate::rest::ApiError;
use couler_optimizer::StepOutputs;
use reqwest::{Method, StatusCode, Url};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};
use tokio::sync::Mutex;

#[derive(Clone)]
pub(super) enum Auth {
    /// Exchanged for a token at `POST /auth/token` (simple auth manager),
    /// again when the token expires.
    Password {
        username: String,
        password: SecretString,
    },
    /// A bearer token obtained elsewhere.
    Token(SecretString),
}

/// What a failed Airflow API call means for the run.
pub(super) fn engine_error(e: ApiError) -> EngineError {
    e.for_engine(ENGINE, "Airflow")
}

/// A small client of the REST API with token handling.
pub(super) struct Api {
    http: reqwest::Client,
    base: Url,
    auth: Auth,
    token: Mutex<Option<SecretString>>,
}

impl Api {
    pub(super) fn new(base_url: &str, auth: Auth) -> Result<Api, EngineError> {
        let http = crate::rest::http_client()?;
        let base = Url::parse(base_url)
            .map_err(|e| EngineError::Other(format!("bad Airflow base url {base_url:?}: {e}")))?;
        let token = match &auth {
            Auth::Token(t) => Some(t.clone()),
            Auth::Password { .. } => None,
        };
        Ok(Api {
            http,
            base,
            auth,
            token: Mutex::new(token),
        })
    }

    pub(super) fn url(&self, segments: &[&str]) -> Url {
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["api", "v2"]).extend(segments);
        }
        url
    }

    pub(super) async fn token(&self, renew: bool) -> Result<SecretString, ApiError> {
        let mut token = self.token.lock().await;
        if let (Some(t), false) = (token.as_ref(), renew) {
            return Ok(t.clone());
        }
        let Auth::Password { username, password } = &self.auth else {
            return token
                .clone()
                .ok_or_else(|| ApiError::Transport("no token".into()));
        };
        let mut url = self.base.clone();
        if let Ok(mut path) = url.path_segments_mut() {
            path.pop_if_empty().extend(["auth", "token"]);
        }
        let body = json!({"username": username, "password": password.expose_secret()});
        let response = self
            .http
            .post(url)
            .json(&body)
            .send()
            .await
            .map_err(|e| ApiError::Transport(format!("cannot reach Airflow: {e}")))?;
        let status = response.status();
        let text = response.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(ApiError::Status(
                status,
                format!("login as {username}: {text}"),
            ));
        }
        let access: Value = serde_json::from_str(&text)
            .map_err(|e| ApiError::Transport(format!("unreadable token response: {e}")))?;
        let access = access["access_token"]
            .as_str()
            .ok_or_else(|| ApiError::Transport("the token response has no access_token".into()))?;
        let fresh = SecretString::from(access.to_owned());
        *token = Some(fresh.clone());
        Ok(fresh)
    }

    /// One request; a `401` renews the token once.
    pub(super) async fn send(
        &self,
        method: Method,
        url: Url,
        body: Option<&Value>,
        accept: &str,
    ) -> Result<String, ApiError> {
        let mut renew = false;
        loop {
            let token = self.token(renew).await?;
            let mut request = self
                .http
                .request(method.clone(), url.clone())
                .bearer_auth(token.expose_secret())
                .header(reqwest::header::ACCEPT, accept);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request
                .send()
                .await
                .map_err(|e| ApiError::Transport(format!("cannot reach Airflow: {e}")))?;
            let status = response.status();
            if status == StatusCode::UNAUTHORIZED
                && !renew
                && matches!(self.auth, Auth::Password { .. })
            {
                renew = true;
                continue;
            }
            let text = response
                .text()
                .await
                .map_err(|e| ApiError::Transport(format!("cannot read Airflow's answer: {e}")))?;
            if !status.is_success() {
                let detail = serde_json::from_str::<Value>(&text)
                    .ok()
                    .and_then(|v| v.get("detail").map(|d| d.to_string()))
                    .unwrap_or(text);
                return Err(ApiError::Status(status, detail));
            }
            return Ok(text);
        }
    }

    pub(super) async fn json(
        &self,
        method: Method,
        segments: &[&str],
        query: &[(&str, String)],
        body: Option<Value>,
    ) -> Result<Value, ApiError> {
        let mut url = self.url(segments);
        if !query.is_empty() {
            url.query_pairs_mut()
                .extend_pairs(query.iter().map(|(k, v)| (*k, v.as_str())));
        }
        // Every call is safe to repeat (a repeated trigger finds its run);
        // SQLite-backed servers answer 500 while the database is locked.
        let text = crate::rest::retrying(
            || {
                self.send(
                    method.clone(),
                    url.clone(),
                    body.as_ref(),
                    "application/json",
                )
            },
            ApiError::transient,
        )
        .await?;
        if text.is_empty() {
            return Ok(Value::Null);
        }
        serde_json::from_str(&text)
            .map_err(|e| ApiError::Transport(format!("unreadable answer from Airflow: {e}")))
    }

    /// One try's structured log lines.
    pub(super) async fn log_events(
        &self,
        dag_id: &str,
        run_id: &str,
        task: &str,
        index: i64,
        try_number: u64,
    ) -> Result<Vec<Value>, ApiError> {
        let n = try_number.to_string();
        let path = [
            "dags",
            dag_id,
            "dagRuns",
            run_id,
            "taskInstances",
            task,
            "logs",
            n.as_str(),
        ];
        let query = [
            ("full_content", "true".to_owned()),
            ("map_index", index.to_string()),
        ];
        let mut log = self.json(Method::GET, &path, &query, None).await?;
        Ok(match log["content"].take() {
            Value::Array(lines) => lines,
            _ => Vec::new(),
        })
    }

    /// One try's log as text.
    pub(super) async fn log(
        &self,
        dag_id: &str,
        run_id: &str,
        task: &str,
        index: i64,
        try_number: u64,
    ) -> Result<String, ApiError> {
        let events = self
            .log_events(dag_id, run_id, task, index, try_number)
            .await?;
        Ok(render_log(&events))
    }

    /// The outputs a step's wrapper pushed, if it pushed any.
    pub(super) async fn outputs(
        &self,
        dag_id: &str,
        run_id: &str,
        task: &str,
        index: i64,
    ) -> Result<Option<StepOutputs>, ApiError> {
        let path = [
            "dags",
            dag_id,
            "dagRuns",
            run_id,
            "taskInstances",
            task,
            "xcomEntries",
            "return_value",
        ];
        let query = [("map_index", index.to_string())];
        match self.json(Method::GET, &path, &query, None).await {
            Ok(entry) => Ok(decode_outputs(&entry["value"])),
            Err(ApiError::Status(StatusCode::NOT_FOUND, _)) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

/// `{"result": B64, "parameters": {P: B64}}`, possibly as JSON text.
pub(super) fn decode_outputs(value: &Value) -> Option<StepOutputs> {
    use base64::Engine as _;
    let parsed;
    let value = match value {
        Value::String(s) => {
            parsed = serde_json::from_str::<Value>(s).ok()?;
            &parsed
        }
        v => v,
    };
    let value = value.get("__data__").unwrap_or(value);
    let decode = |v: &Value| -> Option<String> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(v.as_str()?)
            .ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    };
    let result = decode(value.get("result")?)?;
    let mut outputs = StepOutputs {
        result: Some(result.trim().to_owned()),
        ..Default::default()
    };
    if let Some(params) = value.get("parameters").and_then(Value::as_object) {
        for (k, v) in params {
            // Trimmed at the end, as the local engine reads parameter files.
            outputs
                .parameters
                .insert(k.clone(), decode(v)?.trim_end().to_owned());
        }
    }
    Some(outputs)
}

/// Log lines as text: the event of each structured line.
/// A task's log as text, one line per event, without Airflow's "Log
/// message source details" group: it names where the log was read from
/// (the worker's log server while the task runs, a file after), so
/// dropping it keeps the log of a running task a prefix of its final log.
pub(super) fn render_log(events: &[Value]) -> String {
    let mut text = String::new();
    let mut in_sources = false;
    for line in events {
        let event = line.get("event").and_then(Value::as_str);
        if event.is_some_and(|e| e.starts_with("::group::Log message source details")) {
            in_sources = true;
            continue;
        }
        if in_sources {
            in_sources = event != Some("::endgroup::");
            continue;
        }
        match line.get("event") {
            Some(Value::String(e)) => text.push_str(e),
            Some(other) => text.push_str(&other.to_string()),
            None => match line {
                Value::String(s) => text.push_str(s),
                other => text.push_str(&other.to_string()),
            },
        }
        text.push('\n');
    }
    text
}

/// What a BashOperator's command printed (standard output and error, as
/// its subprocess hook logs them between `Output:` and the exit line),
/// trimmed: the `result` of a step whose outputs travel in no XCom.
pub(super) fn bash_output(events: &[Value]) -> Option<String> {
    let hook = |e: &Value| {
        e["logger"]
            .as_str()
            .is_some_and(|l| l.ends_with("SubprocessHook"))
    };
    let start = events
        .iter()
        .rposition(|e| hook(e) && e["event"].as_str() == Some("Output:"))?;
    let mut lines = Vec::new();
    for e in &events[start + 1..] {
        if !hook(e) {
            continue;
        }
        let text = e["event"].as_str().unwrap_or_default();
        if text.starts_with("Command exited with return code") {
            return Some(lines.join("\n").trim().to_owned());
        }
        lines.push(text);
    }
    None
}

/// Why a try failed, from the task runner's last error line: its
/// exception, with timeouts called so.
pub(super) fn failure(events: &[Value]) -> Option<String> {
    let error = events.iter().rev().find(|e| e["level"] == "error")?;
    let detail = error["error_detail"]
        .as_array()
        .and_then(|d| d.last())
        .map(|d| {
            let kind = d["exc_type"].as_str().unwrap_or_default();
            let value = d["exc_value"].as_str().unwrap_or_default();
            (kind.to_owned(), value.to_owned())
        });
    let event = error["event"].as_str().unwrap_or("failed");
    Some(match detail {
        Some((kind, value)) if kind.contains("Timeout") => format!("timed out: {value}"),
        Some((kind, value)) if !kind.is_empty() => format!("{event}: {kind}: {value}"),
        _ => event.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_running_tasks_log_is_a_prefix_of_its_final_log() {
        let sources = |s: &[&str]| {
            let mut events = vec![json!({"event": "::group::Log message source details"})];
            events.extend(s.iter().map(|s| json!(s)));
            events.push(json!({"event": "::endgroup::"}));
            events
        };
        let running = [
            sources(&["/logs/attempt=1.log", "http://vm:8793/log/attempt=1.log"]),
            vec![json!({"event": "Output:"}), json!({"event": "first"})],
        ]
        .concat();
        let ended = [
            sources(&["/logs/attempt=1.log"]),
            vec![
                json!({"event": "Output:"}),
                json!({"event": "first"}),
                json!({"event": "second"}),
            ],
        ]
        .concat();
        assert_eq!(render_log(&running), "Output:\nfirst\n");
        assert!(render_log(&ended).starts_with(&render_log(&running)));
        assert_eq!(render_log(&ended), "Output:\nfirst\nsecond\n");
    }
}
