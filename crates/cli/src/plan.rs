//! `couler plan`: what the optimizer would do with a workflow file — cached
//! steps, sub-workflows, hyperparameter trials, resource changes — and why,
//! without running it.

use crate::client::Client;
use crate::runs::print_json;
use crate::{Output, key_value, local};
use anyhow::{Context, Result};
use clap::Args;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct PlanArgs {
    /// The workflow file (`-` reads standard input).
    file: PathBuf,
    /// A workflow parameter (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE", value_parser = key_value)]
    params: Vec<(String, String)>,
    #[arg(long, value_enum, default_value_t = Output::Text)]
    pub(crate) output: Output,
}

pub async fn plan(client: &Client, args: PlanArgs) -> Result<ExitCode> {
    let (workflow, _, _) = match local::workflow(&args.file)? {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let parameters: BTreeMap<String, String> = args.params.into_iter().collect();
    let request = json!({ "ir": workflow, "parameters": parameters });
    let (_, plan): (_, Value) = client
        .post(&["v1", "plans"], Some(&request))
        .await
        .context("planning the workflow")?;
    match args.output {
        Output::Json => print_json(&plan)?,
        Output::Text => print!("{}", render(&plan)),
    }
    Ok(ExitCode::SUCCESS)
}

/// The plan as a reader wants it: a summary, each step's fate, the
/// sub-workflows, the searches and the reasons.
pub fn render(plan: &Value) -> String {
    let mut out = String::new();
    let list = |key: &str| plan[key].as_array().cloned().unwrap_or_default();
    let steps = list("steps");
    let count = |action: &str| steps.iter().filter(|s| s["action"] == action).count();
    let _ = writeln!(
        out,
        "plan for {} on the {} engine: {} steps — {} run, {} cached, {} not needed, {} kept, {} skipped, {} searches",
        text(&plan["workflow"]),
        text(&plan["engine"]),
        steps.len(),
        count("run"),
        count("cached"),
        count("not_needed"),
        count("kept"),
        count("skipped"),
        count("tune"),
    );
    let _ = writeln!(out, "\nsteps:");
    for s in &steps {
        let mut line = format!("  {:<28} {:<10}", text(&s["name"]), text(&s["action"]));
        if let Some(part) = s["part"].as_u64() {
            let _ = write!(line, " part {part}");
        }
        let resources: Vec<String> = ["cpu", "memory"]
            .iter()
            .filter_map(|k| s[*k].as_str().map(|v| format!("{k} {v}")))
            .collect();
        if !resources.is_empty() {
            let _ = write!(line, "  [{}]", resources.join(", "));
        }
        if s["exit_handler"] == true {
            line.push_str("  (exit handler)");
        }
        let _ = writeln!(out, "{}", line.trim_end());
        for why in s["why"].as_array().into_iter().flatten() {
            let _ = writeln!(out, "      {}", text(why));
        }
    }
    let parts = list("parts");
    if !parts.is_empty() {
        let _ = writeln!(out, "\nsub-workflows ({}):", parts.len());
        for p in &parts {
            let after: Vec<String> = p["after"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|a| a.to_string())
                .collect();
            let names: Vec<&str> = p["steps"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let shown = if names.len() > 6 {
                format!(
                    "{} … {}",
                    names[..3].join(", "),
                    names[names.len() - 2..].join(", ")
                )
            } else {
                names.join(", ")
            };
            let _ = writeln!(
                out,
                "  part {:<4} {:>5} steps {:>8} bytes {:>5} pods  after [{}]  {}",
                p["index"],
                names.len(),
                p["bytes"],
                p["pods"],
                after.join(", "),
                shown
            );
        }
    }
    for search in list("tuning") {
        let configs = search["configurations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "\nsearch {} ({}, {} configurations):",
            text(&search["step"]),
            text(&search["strategy"]),
            configs.len()
        );
        for (i, c) in configs.iter().enumerate().take(10) {
            let _ = writeln!(out, "  t{i:<4} {c}");
        }
        if configs.len() > 10 {
            let _ = writeln!(out, "  … {} more", configs.len() - 10);
        }
        for w in search["warnings"].as_array().into_iter().flatten() {
            let _ = writeln!(out, "  warning: {}", text(w));
        }
    }
    let general: Vec<Value> = list("decisions")
        .into_iter()
        .filter(|d| d["step"].is_null())
        .collect();
    if !general.is_empty() {
        let _ = writeln!(out, "\ndecisions:");
        for d in general {
            let _ = writeln!(out, "  {}: {}", text(&d["pass"]), text(&d["message"]));
        }
    }
    out
}

/// A JSON value as text: strings without their quotes.
pub(crate) fn text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_reads_as_steps_parts_and_searches() {
        let plan = json!({
            "workflow": "w", "engine": "local",
            "steps": [
                {"name": "a", "action": "cached", "part": 0, "exit_handler": false, "why": ["use-cache-hits: cache hit"]},
                {"name": "prepare", "action": "not_needed", "part": 0, "exit_handler": false, "why": []},
                {"name": "train", "action": "tune", "part": 1, "exit_handler": false, "cpu": "500m", "why": []},
            ],
            "parts": [{"index": 0, "steps": ["a"], "after": [], "bytes": 120, "pods": 1},
                      {"index": 1, "steps": ["train"], "after": [0], "bytes": 300, "pods": 1}],
            "tuning": [{"step": "train", "strategy": "grid", "configurations": [{"lr": "0.1"}], "warnings": []}],
            "advice": [],
            "decisions": [{"pass": "split", "message": "split 2 steps into 2 sub-workflows"}],
        });
        let text = render(&plan);
        assert!(
            text.starts_with(
                "plan for w on the local engine: 3 steps — 0 run, 1 cached, 1 not needed, 0 kept, 0 skipped, 1 searches"
            ),
            "{text}"
        );
        assert!(text.contains("use-cache-hits: cache hit"));
        assert!(text.contains("[cpu 500m]"));
        assert!(text.contains("sub-workflows (2):"));
        assert!(text.contains("after [0]"));
        assert!(text.contains("search train (grid, 1 configurations):"));
        assert!(text.contains("split: split 2 steps into 2 sub-workflows"));
    }
}
