//! `couler cache …`: what a workflow file would hit, the tenant's
//! statistics, invalidation of the tenant's entries, and (platform admins)
//! flushing the whole index.

use crate::client::Client;
use crate::plan::text;
use crate::runs::print_json;
use crate::{Output, format, key_value, local};
use anyhow::{Context, Result};
use clap::{ArgGroup, Subcommand};
use reqwest::Method;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Subcommand)]
pub enum Command {
    /// Which steps of a workflow file would come from the cache, and why
    /// the others would not.
    Explain {
        /// The workflow file (`-` reads standard input).
        file: PathBuf,
        /// A workflow parameter (repeatable).
        #[arg(long = "param", short = 'p', value_name = "NAME=VALUE", value_parser = key_value)]
        params: Vec<(String, String)>,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// The tenant's hits, misses and what the hits saved.
    Stats {
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Remove entries the tenant's runs produced: one step's, an image's,
    /// a `cache.version`'s, or all of them.
    #[command(group(ArgGroup::new("selector").required(true).args(["workflow", "image", "version", "all"])))]
    Invalidate {
        /// A workflow (name or `wf_…` id) whose `--step` wrote the entries
        /// or reused them.
        #[arg(long, requires = "step")]
        workflow: Option<String>,
        /// The step of `--workflow`.
        #[arg(long, requires = "workflow", conflicts_with_all = ["image", "version", "all"])]
        step: Option<String>,
        /// Every entry produced by this image, e.g. `python:3.12`.
        #[arg(long)]
        image: Option<String>,
        /// Every entry of steps with this `cache.version`.
        #[arg(long)]
        version: Option<String>,
        /// Every entry the tenant produced.
        #[arg(long)]
        all: bool,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
    /// Empty the whole index, every tenant's entries (platform admins).
    Flush {
        /// Confirms that every tenant's cached results are to go.
        #[arg(long)]
        yes: bool,
        #[arg(long, value_enum, default_value_t = Output::Text)]
        output: Output,
    },
}

impl Command {
    pub fn output(&self) -> Output {
        match self {
            Command::Explain { output, .. }
            | Command::Stats { output }
            | Command::Invalidate { output, .. }
            | Command::Flush { output, .. } => *output,
        }
    }
}

pub async fn run(client: &Client, command: Command) -> Result<ExitCode> {
    match command {
        Command::Explain {
            file,
            params,
            output,
        } => {
            let (workflow, _, _) = match local::workflow(&file)? {
                Ok(loaded) => loaded,
                Err(code) => return Ok(code),
            };
            let parameters: BTreeMap<String, String> = params.into_iter().collect();
            let request = json!({ "ir": workflow, "parameters": parameters });
            let (_, explained): (_, Value) = client
                .post(&["v1", "cache", "explain"], Some(&request))
                .await
                .context("explaining the workflow")?;
            show(output, &explained, explain_text)?;
        }
        Command::Stats { output } => {
            let stats: Value = client.get(&["v1", "cache", "stats"], &[]).await?;
            show(output, &stats, stats_text)?;
        }
        Command::Invalidate {
            workflow,
            step,
            image,
            version,
            all,
            output,
        } => {
            let mut request =
                json!({ "workflow": workflow, "step": step, "image": image, "version": version });
            if all {
                request["all"] = json!(true);
            }
            if let Value::Object(fields) = &mut request {
                fields.retain(|_, v| !v.is_null());
            }
            let (_, removed): (_, Value) = client
                .post(&["v1", "cache", "invalidate"], Some(&request))
                .await?;
            show(output, &removed, |r| {
                format!("removed {}\n", count(&r["removed"], "cached result"))
            })?;
        }
        Command::Flush { yes, output } => {
            if !yes {
                eprintln!(
                    "error: flushing removes every tenant's cached results; add --yes to confirm"
                );
                return Ok(ExitCode::from(2));
            }
            let (_, removed): (_, Value) = client
                .json(client.request(Method::DELETE, &["v1", "cache"]))
                .await?;
            show(output, &removed, |r| {
                format!("flushed the cache index ({} keys)\n", r["removed"])
            })?;
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn show(output: Output, value: &Value, text: impl Fn(&Value) -> String) -> Result<()> {
    match output {
        Output::Json => print_json(value),
        Output::Text => {
            print!("{}", text(value));
            Ok(())
        }
    }
}

/// An explanation as a reader wants it: totals, then one line per step.
fn explain_text(explained: &Value) -> String {
    let totals = &explained["totals"];
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{}: {} — {} hit, {} not needed, {} miss, {} known at run time, {} not cacheable; hits save {} of compute and {}",
        text(&explained["workflow"]),
        count(&totals["steps"], "step"),
        totals["hits"],
        totals["not_needed"],
        totals["misses"],
        totals["pending"],
        totals["not_cacheable"],
        millis(&totals["saved_ms"]),
        bytes(&totals["bytes"]),
    );
    if explained["degraded"] == true {
        out.push_str("the cache index is unavailable: steps that could hit show as misses\n");
    }
    let rows: Vec<Vec<String>> = explained["steps"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| {
            let mut note = match s["reason"].as_str() {
                Some(reason) => reason.to_owned(),
                None if s["status"] == "hit" => {
                    format!("saves {}, {}", millis(&s["saved_ms"]), bytes(&s["size"]))
                }
                None => String::new(),
            };
            if let Some(entry) = s["entry"].as_object() {
                let _ = write!(
                    note,
                    "; yours: computed {}, reused by {}",
                    text(&entry["created_at"]),
                    count(&entry["hits"], "run")
                );
                if let Some(expires) = entry.get("expires_at").and_then(Value::as_str) {
                    let _ = write!(note, ", expires {expires}");
                }
            }
            vec![
                text(&s["step"]),
                match text(&s["status"]).as_str() {
                    "pending" => "at run time".to_owned(),
                    status => status.replace('_', " "),
                },
                text(&s["scope"]),
                note,
            ]
        })
        .collect();
    out.push('\n');
    out.push_str(&format::table(&["STEP", "CACHE", "SCOPE", "WHY"], &rows));
    out
}

fn stats_text(stats: &Value) -> String {
    let (hits, misses) = (
        stats["hits"].as_u64().unwrap_or(0),
        stats["misses"].as_u64().unwrap_or(0),
    );
    let ratio = if hits + misses == 0 {
        "-".to_owned()
    } else {
        format!("{:.1}%", 100.0 * hits as f64 / (hits + misses) as f64)
    };
    let mut out = String::new();
    if stats["degraded"] == true {
        out.push_str("the cache index is unavailable: the numbers are zero\n");
    }
    for (name, value) in [
        ("hits", hits.to_string()),
        ("misses", misses.to_string()),
        ("hit ratio", ratio),
        ("compute saved", millis(&stats["compute_ms_saved"])),
        ("bytes saved", bytes(&stats["bytes_saved"])),
        ("entries produced", stats["entries_produced"].to_string()),
    ] {
        let _ = writeln!(out, "{name:<18}{value}");
    }
    out
}

/// `1 run`, `2 runs`.
fn count(n: &Value, noun: &str) -> String {
    match n.as_u64().unwrap_or(0) {
        1 => format!("1 {noun}"),
        n => format!("{n} {noun}s"),
    }
}

/// Milliseconds as a duration a reader takes in at a glance.
fn millis(v: &Value) -> String {
    let ms = v.as_u64().unwrap_or(0);
    if ms < 60_000 {
        format!("{:.1}s", ms as f64 / 1000.0)
    } else {
        format::duration(chrono::TimeDelta::milliseconds(ms as i64))
    }
}

/// Bytes in decimal units.
fn bytes(v: &Value) -> String {
    let n = v.as_u64().unwrap_or(0) as f64;
    match n {
        n if n < 1e3 => format!("{n} B"),
        n if n < 1e6 => format!("{:.1} kB", n / 1e3),
        n if n < 1e9 => format!("{:.1} MB", n / 1e6),
        n => format!("{:.1} GB", n / 1e9),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_explanation_reads_as_totals_then_steps() {
        let explained = json!({
            "workflow": "w",
            "steps": [
                {"step": "prepare", "status": "hit", "scope": "shared", "saved_ms": 1500, "size": 2048,
                 "entry": {"created_at": "2026-12-03T10:00:00Z", "hits": 2, "expires_at": "2026-12-10T10:00:00Z"}},
                {"step": "train", "status": "not_needed", "scope": "shared", "reason": "every step reading it is a hit"},
                {"step": "report", "status": "miss", "scope": "tenant", "reason": "cache unavailable"},
            ],
            "totals": {"steps": 3, "hits": 1, "misses": 1, "pending": 0, "not_cacheable": 0, "not_needed": 1, "saved_ms": 61500, "bytes": 2048},
            "degraded": true,
        });
        let text = explain_text(&explained);
        assert!(
            text.starts_with(
                "w: 3 steps — 1 hit, 1 not needed, 1 miss, 0 known at run time, 0 not cacheable; hits save 1m01s of compute and 2.0 kB\n"
            ),
            "{text}"
        );
        assert!(text.contains("the cache index is unavailable"), "{text}");
        assert!(
            text.contains(
                "prepare  hit         shared  saves 1.5s, 2.0 kB; yours: computed 2026-12-03T10:00:00Z, reused by 2 runs, expires 2026-12-10T10:00:00Z"
            ),
            "{text}"
        );
        assert!(
            text.contains("train    not needed  shared  every step reading it is a hit"),
            "{text}"
        );
    }

    #[test]
    fn statistics_read_with_a_hit_ratio() {
        let stats = json!({"hits": 3, "misses": 1, "bytes_saved": 1_500_000, "compute_ms_saved": 4500,
                           "entries_produced": 2, "degraded": false});
        assert_eq!(
            stats_text(&stats),
            "hits              3\nmisses            1\nhit ratio         75.0%\ncompute saved     4.5s\nbytes saved       1.5 MB\nentries produced  2\n"
        );
        let empty = json!({"hits": 0, "misses": 0, "bytes_saved": 0, "compute_ms_saved": 0,
                           "entries_produced": 0, "degraded": true});
        let text = stats_text(&empty);
        assert!(text.starts_with("the cache index is unavailable"), "{text}");
        assert!(text.contains("hit ratio         -\n"), "{text}");
    }
}
