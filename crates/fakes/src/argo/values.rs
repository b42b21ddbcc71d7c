//! What flows between nodes: arguments, resolved inputs, outputs, and
//! where artifacts are.

use super::text::Scope;
use super::text_of;
use serde_json::{Value, json};
use std::collections::BTreeMap;

/// Where an artifact's bytes are.
#[derive(Debug, Clone)]
pub(super) enum Source {
    /// A key in the artifact repository.
    Key(String),
    /// Inline data (`raw.data`).
    Raw(String),
}

impl Source {
    pub fn from_json(a: &Value) -> Option<Source> {
        if let Some(key) = a["s3"]["key"].as_str() {
            return Some(Source::Key(key.to_owned()));
        }
        a["raw"]["data"].as_str().map(|d| Source::Raw(d.to_owned()))
    }

    fn to_json(&self, name: &str, path: Option<&str>) -> Value {
        let mut v = match self {
            Source::Key(key) => json!({"name": name, "s3": {"key": key}}),
            Source::Raw(data) => json!({"name": name, "raw": {"data": data}}),
        };
        if let Some(p) = path {
            v["path"] = p.into();
        }
        v
    }
}

/// An output or input artifact.
#[derive(Debug, Clone)]
pub(super) struct Art {
    pub name: String,
    pub path: Option<String>,
    pub source: Source,
}

/// A node's outputs.
#[derive(Debug, Clone, Default)]
pub(super) struct Outputs {
    pub result: Option<String>,
    pub parameters: Vec<(String, String)>,
    pub artifacts: Vec<Art>,
    pub exit_code: Option<String>,
}

impl Outputs {
    /// `outputs` as Argo writes it; `None` when there are none.
    pub fn to_json(&self) -> Option<Value> {
        let mut v = json!({});
        if let Some(r) = &self.result {
            v["result"] = r.clone().into();
        }
        if !self.parameters.is_empty() {
            v["parameters"] = self
                .parameters
                .iter()
                .map(|(n, val)| json!({"name": n, "value": val}))
                .collect();
        }
        if !self.artifacts.is_empty() {
            v["artifacts"] = self
                .artifacts
                .iter()
                .map(|a| a.source.to_json(&a.name, a.path.as_deref()))
                .collect();
        }
        if let Some(c) = &self.exit_code {
            v["exitCode"] = c.clone().into();
        }
        (v != json!({})).then_some(v)
    }
}

/// How a node ended.
#[derive(Debug, Clone)]
pub(super) struct Outcome {
    pub node: String,
    pub phase: &'static str,
    pub message: Option<String>,
    pub outputs: Outputs,
}

/// What a template is called with.
#[derive(Debug, Clone, Default)]
pub(super) struct Args {
    pub parameters: BTreeMap<String, String>,
    pub artifacts: BTreeMap<String, Source>,
}

impl Args {
    /// `spec.arguments` (parameter values, raw artifacts).
    pub fn from_json(v: &Value) -> Args {
        let mut args = Args::default();
        for p in v["parameters"].as_array().into_iter().flatten() {
            if let Some(n) = p["name"].as_str() {
                args.parameters.insert(n.to_owned(), text_of(&p["value"]));
            }
        }
        for a in v["artifacts"].as_array().into_iter().flatten() {
            if let (Some(n), Some(s)) = (a["name"].as_str(), Source::from_json(a)) {
                args.artifacts.insert(n.to_owned(), s);
            }
        }
        args
    }
}

/// A template's resolved inputs.
#[derive(Debug, Clone, Default)]
pub(super) struct Inputs {
    pub parameters: Vec<(String, String)>,
    pub artifacts: Vec<Art>,
}

impl Inputs {
    pub fn scope(&self) -> Scope {
        let mut scope = Scope::new();
        for (n, v) in &self.parameters {
            scope.insert(format!("inputs.parameters.{n}"), v.clone());
        }
        for a in &self.artifacts {
            if let Some(p) = &a.path {
                scope.insert(format!("inputs.artifacts.{}.path", a.name), p.clone());
            }
        }
        scope
    }

    pub fn to_json(&self) -> Option<Value> {
        let mut v = json!({});
        if !self.parameters.is_empty() {
            v["parameters"] = self
                .parameters
                .iter()
                .map(|(n, val)| json!({"name": n, "value": val}))
                .collect();
        }
        if !self.artifacts.is_empty() {
            v["artifacts"] = self
                .artifacts
                .iter()
                .map(|a| a.source.to_json(&a.name, a.path.as_deref()))
                .collect();
        }
        (v != json!({})).then_some(v)
    }
}
