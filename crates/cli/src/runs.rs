//! `couler runs …`: list, get, watch, cancel, retry and logs.

use crate::client::Client;
use crate::format::{self, table};
use crate::wire::{Run, RunList};
use crate::{Output, key_value, watch};
use anyhow::{Context, Result};
use clap::Subcommand;
use futures::StreamExt;
use reqwest::Method;
use reqwest::header::ACCEPT;
use serde_json::Value;
use std::io::Write;
use std::process::ExitCode;

const STATUSES: [&str; 6] = [
    "queued",
    "planning",
    "running",
    "succeeded",
    "failed",
    "cancelled",
];

#[derive(Subcommand)]
pub enum Command {
    /// List runs, newest first.
    List {
        #[arg(long, value_parser = STATUSES)]
        status: Option<String>,
        /// A workflow name or `wf_…` id.
        #[arg(long)]
        workflow: Option<String>,
        /// Only runs with this label (repeatable; all must match).
        #[arg(long = "label", value_name = "KEY=VALUE", value_parser = key_value)]
        labels: Vec<(String, String)>,
        /// Page size (1 to 200; the server's default is 50).
        #[arg(long)]
        limit: Option<u32>,
        /// Continue from a previous page.
        #[arg(long)]
        cursor: Option<String>,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Show a run's status and its steps.
    Get {
        id: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Follow a run until it ends (exit 0 only if it succeeded).
    Watch { id: String },
    /// Cancel a run: a queued run ends at once, a running one is stopped.
    Cancel {
        id: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Queue a failed or cancelled run again from its failed steps.
    Retry {
        id: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Print one step's logs.
    Logs {
        id: String,
        step: String,
        /// The run attempt whose logs to print (1, and one more per
        /// retry); the latest that ran the step by default.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=i64::from(i32::MAX)))]
        attempt: Option<u32>,
        /// Keep printing a running step's log as it grows, until the step
        /// ends.
        #[arg(long, short = 'f')]
        follow: bool,
    },
}

impl Command {
    pub fn output(&self) -> Output {
        match self {
            Command::List { output, .. }
            | Command::Get { output, .. }
            | Command::Cancel { output, .. }
            | Command::Retry { output, .. } => *output,
            Command::Watch { .. } | Command::Logs { .. } => Output::Text,
        }
    }
}

pub async fn run(client: &Client, command: Command) -> Result<ExitCode> {
    match command {
        Command::List {
            status,
            workflow,
            labels,
            limit,
            cursor,
            output,
        } => {
            let mut query = Vec::new();
            query.extend(status.map(|s| ("status", s)));
            if let Some(w) = workflow {
                query.push(("workflow", workflow_id(client, &w).await?));
            }
            if !labels.is_empty() {
                let selector: Vec<String> =
                    labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
                query.push(("label", selector.join(",")));
            }
            query.extend(limit.map(|l| ("limit", l.to_string())));
            query.extend(cursor.map(|c| ("cursor", c)));
            let raw: Value = client.get(&["v1", "runs"], &query).await?;
            match output {
                Output::Json => print_json(&raw)?,
                Output::Text => print_list(&serde_json::from_value(raw)?),
            }
        }
        Command::Get { id, output } => {
            let raw: Value = client.get(&["v1", "runs", &id], &[]).await?;
            match output {
                Output::Json => print_json(&raw)?,
                Output::Text => print!("{}", describe(&serde_json::from_value(raw)?)),
            }
        }
        Command::Watch { id } => return watch::watch(client, &id, watch::Sink::Stdout).await,
        Command::Cancel { id, output } => {
            let (_, raw): (_, Value) = client.post(&["v1", "runs", &id, "cancel"], None).await?;
            let run: Run = serde_json::from_value(raw.clone())?;
            match output {
                Output::Json => print_json(&raw)?,
                Output::Text if run.status == "cancelled" => println!("{} cancelled", run.id),
                Output::Text => println!(
                    "{}: cancel requested; the run is stopping ({})",
                    run.id, run.status
                ),
            }
        }
        Command::Retry { id, output } => {
            let (_, raw): (_, Value) = client.post(&["v1", "runs", &id, "retry"], None).await?;
            let run: Run = serde_json::from_value(raw.clone())?;
            match output {
                Output::Json => print_json(&raw)?,
                Output::Text => println!("{} {} (attempt {})", run.id, run.status, run.attempt),
            }
        }
        Command::Logs {
            id,
            step,
            attempt,
            follow,
        } => logs(client, &id, &step, attempt, follow).await?,
    }
    Ok(ExitCode::SUCCESS)
}

/// The `wf_…` id the list filter wants, looking names up.
async fn workflow_id(client: &Client, reference: &str) -> Result<String> {
    if reference.starts_with("wf_") {
        return Ok(reference.to_owned());
    }
    let workflow: Value = client
        .get(&["v1", "workflows", reference], &[])
        .await
        .with_context(|| format!("looking up workflow {reference:?}"))?;
    workflow["id"]
        .as_str()
        .map(str::to_owned)
        .context("the workflow has no id")
}

pub fn print_json(value: &Value) -> Result<()> {
    println!("{}", serde_json::to_string_pretty(value)?);
    Ok(())
}

fn print_list(list: &RunList) {
    let rows: Vec<Vec<String>> = list
        .items
        .iter()
        .map(|r| {
            vec![
                r.id.clone(),
                r.status.clone(),
                r.workflow_name.clone(),
                r.attempt.to_string(),
                format::time(r.created_at),
            ]
        })
        .collect();
    if rows.is_empty() {
        eprintln!("no runs");
    } else {
        print!(
            "{}",
            table(&["RUN", "STATUS", "WORKFLOW", "ATTEMPT", "CREATED"], &rows)
        );
    }
    if let Some(cursor) = &list.next_cursor {
        eprintln!("more runs: add --cursor {cursor}");
    }
}

/// A run's header and its step table, as `runs get` prints them.
pub fn describe(run: &Run) -> String {
    let now = chrono::Utc::now();
    let mut status = format!("{} (attempt {}", run.status, run.attempt);
    if run.cancel_requested && !run.is_finished() {
        status.push_str(", cancel requested");
    }
    status.push(')');
    let workflow = match &run.workflow {
        Some(w) => format!("{} ({} version {})", run.workflow_name, w.id, w.version),
        None => format!("{} (inline)", run.workflow_name),
    };
    let mut fields = vec![
        ("run", run.id.clone()),
        ("workflow", workflow),
        ("status", status),
    ];
    if let Some(message) = &run.message {
        fields.push(("message", message.clone()));
    }
    fields.push(("created", format::time(run.created_at)));
    if let Some(started) = run.started_at {
        fields.push(("started", format::time(started)));
    }
    if let Some(finished) = run.finished_at {
        fields.push(("finished", format::time(finished)));
    }
    if let Some(took) = format::elapsed(run.started_at, run.finished_at, now) {
        fields.push(("elapsed", took));
    }
    fields.push(("parameters", format::pairs(&run.parameters)));
    fields.push(("labels", format::pairs(&run.labels)));
    if run.priority != 0 {
        fields.push(("priority", run.priority.to_string()));
    }
    let mut out: String = fields
        .iter()
        .map(|(k, v)| format!("{k:<11}{v}\n"))
        .collect();
    out.push('\n');
    if run.steps.is_empty() {
        out.push_str("no step has started yet\n");
        return out;
    }
    let rows: Vec<Vec<String>> = run
        .steps
        .iter()
        .map(|s| {
            vec![
                s.name.clone(),
                s.status.clone(),
                s.attempt.to_string(),
                format::elapsed(s.started_at, s.finished_at, now).unwrap_or_default(),
                s.message.clone().unwrap_or_default(),
            ]
        })
        .collect();
    out.push_str(&table(
        &["STEP", "STATUS", "ATTEMPT", "ELAPSED", "MESSAGE"],
        &rows,
    ));
    out
}

/// Copies a step's logs to standard output as they arrive (`follow`: and
/// as they grow, until the step ends).
async fn logs(
    client: &Client,
    id: &str,
    step: &str,
    attempt: Option<u32>,
    follow: bool,
) -> Result<()> {
    let attempt = attempt.map(|n| n.to_string());
    let mut query = vec![("step", step)];
    query.extend(attempt.as_deref().map(|n| ("attempt", n)));
    if follow {
        query.push(("follow", "true"));
    }
    let req = client
        .request_to(
            Method::GET,
            client.url_with_query(&["v1", "runs", id, "logs"], &query),
        )
        .header(ACCEPT, "text/plain");
    let response = client.send(req).await?;
    let mut body = response.bytes_stream();
    let mut stdout = std::io::stdout().lock();
    while let Some(chunk) = body.next().await {
        stdout.write_all(&chunk.context("reading the logs")?)?;
        stdout.flush()?;
    }
    stdout.flush()?;
    Ok(())
}
