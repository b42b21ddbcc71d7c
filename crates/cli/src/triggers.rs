//! `couler triggers …`: a workflow's webhook triggers (list, get, create,
//! rotate the credential, delete) and a trigger's delivery log. A secret
//! or token is printed once, by `create` and `rotate`: nothing it could be
//! read back from is stored.

use crate::client::Client;
use crate::format::{self, show, text};
use crate::{Output, key_value};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use reqwest::Method;
use serde_json::{Map, Value, json};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Command {
    /// A workflow's webhook triggers.
    List {
        /// Workflow id (`wf_…`) or name.
        workflow: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// One trigger: where senders post, how they authenticate, what it maps.
    Get {
        workflow: String,
        /// Trigger id (`trg_…`) or name.
        trigger: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Create a trigger; prints its URL and, once, its secret or token.
    Create {
        workflow: String,
        /// Its name within the workflow.
        name: String,
        /// How deliveries authenticate.
        #[arg(long, value_enum)]
        auth: Auth,
        /// A workflow parameter read from the payload, by JSON pointer.
        #[arg(long = "map", value_name = "PARAM=/POINTER", value_parser = key_value)]
        map: Vec<(String, String)>,
        /// A parameter value the same for every delivery.
        #[arg(long = "param", short = 'p', value_name = "NAME=VALUE", value_parser = key_value)]
        params: Vec<(String, String)>,
        /// Only deliveries with this header value start runs.
        #[arg(long = "filter-header", value_name = "NAME=VALUE", value_parser = key_value)]
        filter_headers: Vec<(String, String)>,
        /// Only deliveries whose payload holds this value (JSON, or text) there.
        #[arg(long = "filter-payload", value_name = "/POINTER=VALUE", value_parser = key_value)]
        filter_payload: Vec<(String, String)>,
        /// Deliveries per second it takes (default 10).
        #[arg(long)]
        rate: Option<u32>,
        /// Largest delivery body, in bytes (default: the server's limit).
        #[arg(long)]
        max_body_bytes: Option<u32>,
        /// The workflow version its runs execute (default: the latest).
        #[arg(long)]
        version: Option<u32>,
        /// Create it disabled (deliveries answer 404 until enabled).
        #[arg(long)]
        disabled: bool,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Give a trigger a new secret or token; the old one works for the grace.
    Rotate {
        workflow: String,
        trigger: String,
        /// How long the replaced credential keeps working, in seconds.
        #[arg(long, default_value_t = 86_400)]
        grace: u32,
        /// Also give it a new URL (the old one works for the grace).
        #[arg(long)]
        new_url: bool,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Delete a trigger; its URL answers 404 from now on.
    Delete {
        workflow: String,
        trigger: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Authenticated deliveries, most recent first: the run each started, or
    /// why it was ignored or rejected.
    Deliveries {
        workflow: String,
        trigger: String,
        /// Most deliveries to show (1 to 200).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Auth {
    /// GitHub's `X-Hub-Signature-256` (HMAC-SHA256 of the body).
    HmacGithub,
    /// Standard Webhooks (`webhook-id`, `webhook-timestamp`, `webhook-signature`).
    StandardWebhooks,
    /// `Authorization: Bearer <token>`.
    Bearer,
}

impl Auth {
    fn as_str(self) -> &'static str {
        match self {
            Auth::HmacGithub => "hmac_github",
            Auth::StandardWebhooks => "standard_webhooks",
            Auth::Bearer => "bearer",
        }
    }
}

impl Command {
    pub fn output(&self) -> Output {
        match self {
            Command::List { output, .. }
            | Command::Get { output, .. }
            | Command::Create { output, .. }
            | Command::Rotate { output, .. }
            | Command::Delete { output, .. }
            | Command::Deliveries { output, .. } => *output,
        }
    }
}

fn path<'a>(workflow: &'a str, trigger: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut p = vec!["v1", "workflows", workflow, "triggers", trigger];
    p.extend_from_slice(rest);
    p
}

/// One trigger as text.
fn describe(t: &Value) -> String {
    let state = if t["enabled"] == json!(true) {
        "enabled"
    } else {
        "disabled"
    };
    let mut out = format!(
        "{} {} ({}, {state})\nurl: {}\n",
        text(&t["name"]),
        text(&t["id"]),
        text(&t["auth"]),
        text(&t["url"]),
    );
    let map = pairs(&t["parameter_map"]);
    if !map.is_empty() {
        out.push_str(&format!("maps: {map}\n"));
    }
    let params = pairs(&t["parameters"]);
    if !params.is_empty() {
        out.push_str(&format!("parameters: {params}\n"));
    }
    if let Some(until) = t["previous_valid_until"].as_str() {
        out.push_str(&format!("the previous credential works until {until}\n"));
    }
    out
}

fn pairs(v: &Value) -> String {
    let all: Vec<String> = (v.as_object().into_iter().flatten())
        .map(|(k, v)| format!("{k}={}", text(v)))
        .collect();
    all.join(", ")
}

/// A trigger with its new secret, which is shown only now.
fn with_secret(t: &Value) -> String {
    format!(
        "{}secret (shown only now; store it safely): {}\n",
        describe(t),
        text(&t["secret"])
    )
}

/// The body `create` sends.
fn create_body(name: &str, auth: Auth, command: &Command) -> Value {
    let Command::Create {
        map,
        params,
        filter_headers,
        filter_payload,
        rate,
        max_body_bytes,
        version,
        disabled,
        ..
    } = command
    else {
        unreachable!("only for create");
    };
    let object = |pairs: &[(String, String)]| -> Map<String, Value> {
        (pairs.iter())
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect()
    };
    // A payload value is JSON when it reads as JSON (`true`, `3`), else text.
    let payload: Map<String, Value> = (filter_payload.iter())
        .map(|(k, v)| {
            let value = serde_json::from_str(v).unwrap_or_else(|_| Value::String(v.clone()));
            (k.clone(), value)
        })
        .collect();
    let mut body = json!({
        "name": name,
        "auth": auth.as_str(),
        "parameter_map": object(map),
        "parameters": object(params),
        "filter": {"headers": object(filter_headers), "payload": payload},
        "enabled": !disabled,
    });
    for (field, value) in [
        ("rate_per_second", rate),
        ("max_body_bytes", max_body_bytes),
        ("version", version),
    ] {
        if let Some(v) = value {
            body[field] = json!(v);
        }
    }
    body
}

pub async fn run(client: &Client, command: Command) -> Result<ExitCode> {
    match command {
        Command::List { workflow, output } => {
            let list: Value = client
                .get(&["v1", "workflows", &workflow, "triggers"], &[])
                .await?;
            show(output, &list, |l| {
                let rows: Vec<Vec<String>> = (l.as_array().into_iter().flatten())
                    .map(|t| {
                        let enabled = if t["enabled"] == json!(true) {
                            "yes"
                        } else {
                            "no"
                        };
                        vec![
                            text(&t["name"]),
                            text(&t["auth"]),
                            enabled.to_owned(),
                            text(&t["url"]),
                        ]
                    })
                    .collect();
                format::table(&["NAME", "AUTH", "ENABLED", "URL"], &rows)
            })?;
        }
        Command::Get {
            workflow,
            trigger,
            output,
        } => {
            let t: Value = client.get(&path(&workflow, &trigger, &[]), &[]).await?;
            show(output, &t, describe)?;
        }
        Command::Create {
            ref workflow,
            ref name,
            auth,
            output,
            ..
        } => {
            let body = create_body(name, auth, &command);
            let (_, t): (_, Value) = client
                .post(&["v1", "workflows", workflow, "triggers"], Some(&body))
                .await?;
            show(output, &t, with_secret)?;
        }
        Command::Rotate {
            workflow,
            trigger,
            grace,
            new_url,
            output,
        } => {
            let body = json!({"grace_secs": grace, "new_public_id": new_url});
            let (_, t): (_, Value) = client
                .post(&path(&workflow, &trigger, &["rotate"]), Some(&body))
                .await?;
            show(output, &t, with_secret)?;
        }
        Command::Delete {
            workflow,
            trigger,
            output,
        } => {
            client
                .send(client.request(Method::DELETE, &path(&workflow, &trigger, &[])))
                .await?;
            let gone = json!({"deleted": trigger});
            show(output, &gone, |_| format!("trigger {trigger} deleted\n"))?;
        }
        Command::Deliveries {
            workflow,
            trigger,
            limit,
            output,
        } => {
            let query = [("limit", limit.to_string())];
            let list: Value = client
                .get(&path(&workflow, &trigger, &["deliveries"]), &query)
                .await?;
            show(output, &list, |l| {
                let rows: Vec<Vec<String>> = (l.as_array().into_iter().flatten())
                    .map(|d| {
                        vec![
                            text(&d["last_received_at"]),
                            text(&d["delivery_id"]),
                            text(&d["outcome"]),
                            d["run"].as_str().unwrap_or("").to_owned(),
                            text(&d["attempts"]),
                            d["detail"].as_str().unwrap_or("").to_owned(),
                        ]
                    })
                    .collect();
                format::table(
                    &[
                        "RECEIVED", "DELIVERY", "OUTCOME", "RUN", "ATTEMPTS", "DETAIL",
                    ],
                    &rows,
                )
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
