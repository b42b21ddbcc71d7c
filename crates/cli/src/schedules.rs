//! `couler schedules …`: a workflow's schedules (list, get, preview of the
//! next instants, pause, resume, trigger a run now, backfill a past range,
//! the tick history). Creating and editing them takes a body: use the API
//! (or the workflow's own `schedule:`).

use crate::Output;
use crate::client::Client;
use crate::format::{self, show, text};
use anyhow::Result;
use clap::{Subcommand, ValueEnum};
use serde_json::{Value, json};
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Command {
    /// A workflow's schedules.
    List {
        /// Workflow id (`wf_…`) or name.
        workflow: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// One schedule, with its next tick.
    Get {
        workflow: String,
        /// The schedule's slug (`default` is the workflow's own).
        slug: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// The next instants it fires at, with their UTC offsets.
    Preview {
        workflow: String,
        slug: String,
        /// How many (1 to 100).
        #[arg(long, default_value_t = 10)]
        count: u32,
        /// From this instant (RFC 3339) instead of now.
        #[arg(long)]
        from: Option<String>,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Stop firing until resumed.
    Pause {
        workflow: String,
        slug: String,
        #[arg(long)]
        reason: Option<String>,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Fire again from now on (the paused time is not caught up).
    Resume {
        workflow: String,
        slug: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Start a run now, as a tick would; prints the run id.
    Trigger {
        workflow: String,
        slug: String,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Run the schedule's instants of a past range `[FROM, TO)`.
    Backfill {
        workflow: String,
        slug: String,
        /// First instant (RFC 3339), inclusive.
        #[arg(long)]
        from: String,
        /// End (RFC 3339), exclusive; at most now.
        #[arg(long)]
        to: String,
        #[arg(long, value_enum, default_value_t = Reprocess::Missing)]
        reprocess: Reprocess,
        /// Runs of the backfill at once.
        #[arg(long, default_value_t = 1)]
        max_active_runs: u32,
        /// Only list the instants it would run.
        #[arg(long)]
        dry_run: bool,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// The ticks, newest first: fired, or skipped and why.
    Ticks {
        workflow: String,
        slug: String,
        /// Most ticks to show (1 to 200).
        #[arg(long, default_value_t = 50)]
        limit: u32,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

#[derive(Clone, Copy, ValueEnum)]
pub enum Reprocess {
    /// Instants without a run.
    Missing,
    /// Those, and instants whose latest run failed or was cancelled.
    Failed,
    /// Every instant.
    All,
}

impl Command {
    pub fn output(&self) -> Output {
        match self {
            Command::List { output, .. }
            | Command::Get { output, .. }
            | Command::Preview { output, .. }
            | Command::Pause { output, .. }
            | Command::Resume { output, .. }
            | Command::Trigger { output, .. }
            | Command::Backfill { output, .. }
            | Command::Ticks { output, .. } => *output,
        }
    }
}

fn path<'a>(workflow: &'a str, slug: &'a str, rest: &[&'a str]) -> Vec<&'a str> {
    let mut p = vec!["v1", "workflows", workflow, "schedules", slug];
    p.extend_from_slice(rest);
    p
}

/// One schedule as text.
fn describe(s: &Value) -> String {
    let state = if s["paused"] == json!(true) {
        format!("paused ({})", text(&s["paused_reason"]))
    } else {
        format!("next {}", text(&s["next_tick"]))
    };
    format!(
        "{} {} [{}] in {}: {}\n",
        text(&s["slug"]),
        text(&s["id"]),
        crons(s),
        text(&s["timezone"]),
        state
    )
}

fn crons(s: &Value) -> String {
    let all: Vec<String> = s["crons"]
        .as_array()
        .into_iter()
        .flatten()
        .map(text)
        .collect();
    all.join(" | ")
}

pub async fn run(client: &Client, command: Command) -> Result<ExitCode> {
    match command {
        Command::List { workflow, output } => {
            let list: Value = client
                .get(&["v1", "workflows", &workflow, "schedules"], &[])
                .await?;
            show(output, &list, |l| {
                let rows: Vec<Vec<String>> = (l.as_array().into_iter().flatten())
                    .map(|s| {
                        let paused = if s["paused"] == json!(true) {
                            "paused"
                        } else {
                            ""
                        };
                        vec![
                            text(&s["slug"]),
                            crons(s),
                            text(&s["timezone"]),
                            text(&s["next_tick"]),
                            paused.to_owned(),
                            text(&s["source"]),
                        ]
                    })
                    .collect();
                format::table(
                    &["SLUG", "CRONS", "ZONE", "NEXT", "PAUSED", "SOURCE"],
                    &rows,
                )
            })?;
        }
        Command::Get {
            workflow,
            slug,
            output,
        } => {
            let s: Value = client.get(&path(&workflow, &slug, &[]), &[]).await?;
            show(output, &s, describe)?;
        }
        Command::Preview {
            workflow,
            slug,
            count,
            from,
            output,
        } => {
            let mut query = vec![("count", count.to_string())];
            query.extend(from.map(|f| ("from", f)));
            let p: Value = client
                .get(&path(&workflow, &slug, &["preview"]), &query)
                .await?;
            show(output, &p, |p| {
                let rows: Vec<Vec<String>> = (p["ticks"].as_array().into_iter().flatten())
                    .map(|t| vec![text(&t["at"]), text(&t["local"]), text(&t["utc_offset"])])
                    .collect();
                format::table(&["UTC", "LOCAL", "OFFSET"], &rows)
            })?;
        }
        Command::Pause {
            workflow,
            slug,
            reason,
            output,
        } => {
            let body = json!({ "reason": reason });
            let (_, s): (_, Value) = client
                .post(&path(&workflow, &slug, &["pause"]), Some(&body))
                .await?;
            show(output, &s, describe)?;
        }
        Command::Resume {
            workflow,
            slug,
            output,
        } => {
            let (_, s): (_, Value) = client
                .post(&path(&workflow, &slug, &["resume"]), None)
                .await?;
            show(output, &s, describe)?;
        }
        Command::Trigger {
            workflow,
            slug,
            output,
        } => {
            let (_, run): (_, Value) = client
                .post(&path(&workflow, &slug, &["trigger"]), None)
                .await?;
            show(output, &run, |r| format!("{}\n", text(&r["id"])))?;
        }
        Command::Backfill {
            workflow,
            slug,
            from,
            to,
            reprocess,
            max_active_runs,
            dry_run,
            output,
        } => {
            let reprocess = match reprocess {
                Reprocess::Missing => "missing",
                Reprocess::Failed => "failed",
                Reprocess::All => "all",
            };
            let body = json!({
                "from": from, "to": to, "reprocess": reprocess,
                "max_active_runs": max_active_runs, "dry_run": dry_run,
            });
            let (_, b): (_, Value) = client
                .post(&path(&workflow, &slug, &["backfills"]), Some(&body))
                .await?;
            show(output, &b, |b| {
                if b["dry_run"] == json!(true) {
                    let all: Vec<String> = b["instants"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .map(text)
                        .collect();
                    format!("{} instant(s) would run:\n{}\n", all.len(), all.join("\n"))
                } else {
                    format!(
                        "backfill {}: {} instant(s), {} at a time\n",
                        text(&b["id"]),
                        b["counts"]["items"],
                        b["max_active_runs"]
                    )
                }
            })?;
        }
        Command::Ticks {
            workflow,
            slug,
            limit,
            output,
        } => {
            let query = [("limit", limit.to_string())];
            let ticks: Value = client
                .get(&path(&workflow, &slug, &["ticks"]), &query)
                .await?;
            show(output, &ticks, |l| {
                let rows: Vec<Vec<String>> = (l.as_array().into_iter().flatten())
                    .map(|t| {
                        vec![
                            text(&t["nominal_at"]),
                            text(&t["outcome"]),
                            t["run"].as_str().unwrap_or("").to_owned(),
                            t["detail"].as_str().unwrap_or("").to_owned(),
                        ]
                    })
                    .collect();
                format::table(&["INSTANT", "OUTCOME", "RUN", "DETAIL"], &rows)
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}
