//! The parts of the API's responses the CLI reads. Statuses stay strings so
//! a newer server's statuses still print.

use chrono::{DateTime, Utc};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Debug, Clone, Deserialize)]
pub struct Run {
    pub id: String,
    #[serde(default)]
    pub workflow: Option<WorkflowRef>,
    pub workflow_name: String,
    pub status: String,
    #[serde(default)]
    pub parameters: BTreeMap<String, String>,
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    #[serde(default)]
    pub priority: i32,
    #[serde(default = "one")]
    pub attempt: i32,
    #[serde(default)]
    pub message: Option<String>,
    pub created_at: DateTime<Utc>,
    #[serde(default)]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub cancel_requested: bool,
    #[serde(default)]
    pub steps: Vec<Step>,
}

fn one() -> i32 {
    1
}

impl Run {
    pub fn is_finished(&self) -> bool {
        is_final_status(&self.status)
    }
}

/// Whether a run status is one the run never leaves on its own.
pub fn is_final_status(status: &str) -> bool {
    matches!(status, "succeeded" | "failed" | "cancelled")
}

#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowRef {
    pub id: String,
    pub version: i32,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Step {
    pub name: String,
    pub status: String,
    #[serde(default)]
    pub attempt: i32,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub started_at: Option<DateTime<Utc>>,
    #[serde(default)]
    pub finished_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, Deserialize)]
pub struct RunList {
    pub items: Vec<Run>,
    #[serde(default)]
    pub next_cursor: Option<String>,
}

/// One run event, as in the SSE `data:` field.
#[derive(Debug, Clone, Deserialize)]
pub struct Event {
    pub id: i64,
    pub kind: String,
    #[serde(default)]
    pub step: Option<String>,
    #[serde(default)]
    pub status: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub data: serde_json::Value,
    pub created_at: DateTime<Utc>,
}

impl Event {
    /// What happened, without the `run.`/`step.` prefix (`running`, `retried`).
    pub fn action(&self) -> &str {
        self.kind
            .split_once('.')
            .map_or(self.kind.as_str(), |(_, action)| action)
    }

    /// The status the event reports: its `status`, else its action.
    pub fn reported_status(&self) -> &str {
        self.status.as_deref().unwrap_or_else(|| self.action())
    }

    /// The attempt number the event carries in `data`, if any.
    pub fn attempt(&self) -> Option<i32> {
        self.data
            .get("attempt")
            .and_then(serde_json::Value::as_i64)
            .and_then(|a| i32::try_from(a).ok())
    }

    /// Whether the event ends the run (as the server ends its stream on it).
    pub fn ends_run(&self) -> bool {
        self.step.is_none()
            && self.kind.starts_with("run.")
            && self.status.as_deref().is_some_and(is_final_status)
    }
}

/// `POST /v1/workflows` and `…/versions` answer with the workflow and the
/// version the document became.
#[derive(Debug, Clone, Deserialize)]
pub struct WorkflowDetail {
    pub id: String,
    pub name: String,
    pub version: VersionView,
}

#[derive(Debug, Clone, Deserialize)]
pub struct VersionView {
    pub version: i32,
}
