//! `couler submit`: check a workflow file, store it (a new workflow, or a
//! new version when its name exists), start a run, and optionally follow it.

use crate::client::Client;
use crate::runs::print_json;
use crate::watch::{self, Sink};
use crate::{Output, key_value, local};
use anyhow::{Context, Result, bail};
use clap::Args;
use couler_ir::Format;
use reqwest::StatusCode;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Args)]
pub struct Submit {
    /// The workflow file (`-` reads standard input).
    file: PathBuf,
    /// A workflow parameter (repeatable).
    #[arg(long = "param", short = 'p', value_name = "NAME=VALUE", value_parser = key_value)]
    params: Vec<(String, String)>,
    /// Higher runs start first within the tenant (-1000 to 1000).
    #[arg(long, allow_negative_numbers = true)]
    priority: Option<i32>,
    /// A label on the run (repeatable).
    #[arg(long = "label", short = 'l', value_name = "KEY=VALUE", value_parser = key_value)]
    labels: Vec<(String, String)>,
    /// Follow the run; exit 0 only if it succeeds.
    #[arg(long)]
    wait: bool,
    #[arg(long, value_enum, default_value_t = Output::Text)]
    output: Output,
}

pub async fn submit(client: &Client, args: Submit) -> Result<ExitCode> {
    let (workflow, text, format) = match local::workflow(&args.file)? {
        Ok(loaded) => loaded,
        Err(code) => return Ok(code),
    };
    let parameters = unique("--param", args.params)?;
    let labels = unique("--label", args.labels)?;

    let (stored, version) = store(client, &workflow.name, &text, format).await?;
    let mut request = json!({
        "workflow": stored,
        "version": version,
        "parameters": parameters,
        "labels": labels,
    });
    if let Some(priority) = args.priority {
        request["priority"] = priority.into();
    }
    let (_, run): (_, Value) = client
        .post(&["v1", "runs"], Some(&request))
        .await
        .context("starting the run")?;
    let id = run["id"]
        .as_str()
        .context("the new run has no id")?
        .to_owned();
    match args.output {
        Output::Text => println!("{id}"),
        Output::Json if !args.wait => print_json(&run)?,
        Output::Json => {}
    }
    if !args.wait {
        return Ok(ExitCode::SUCCESS);
    }
    match args.output {
        Output::Text => watch::watch(client, &id, Sink::Stdout).await,
        Output::Json => {
            // Progress to standard error; the finished run to standard output.
            let code = watch::watch(client, &id, Sink::Stderr).await?;
            let run: Value = client.get(&["v1", "runs", &id], &[]).await?;
            print_json(&run)?;
            Ok(code)
        }
    }
}

/// Stores the document as a workflow, or as a new version of the one with
/// its name; returns the workflow id and the version the document is.
async fn store(client: &Client, name: &str, text: &str, format: Format) -> Result<(String, i32)> {
    let content_type = match format {
        Format::Json => "application/json",
        Format::Yaml => "application/yaml",
    };
    let created = client
        .post_document::<crate::wire::WorkflowDetail>(&["v1", "workflows"], text, content_type)
        .await;
    let (status, detail) = match created {
        Err(e) if e.code() == Some("workflow_exists") => client
            .post_document(&["v1", "workflows", name, "versions"], text, content_type)
            .await
            .with_context(|| format!("adding a version to workflow {name:?}"))?,
        other => other.with_context(|| format!("storing workflow {name:?}"))?,
    };
    let version = detail.version.version;
    if status == StatusCode::OK {
        eprintln!("workflow {} unchanged (version {version})", detail.name);
    } else {
        eprintln!("workflow {} version {version} stored", detail.name);
    }
    Ok((detail.id, version))
}

/// Pairs as a map; a key given twice is a mistake worth stopping for.
fn unique(flag: &str, pairs: Vec<(String, String)>) -> Result<BTreeMap<String, String>> {
    let mut map = BTreeMap::new();
    for (k, v) in pairs {
        if map.insert(k.clone(), v).is_some() {
            bail!("{flag} {k} is given more than once");
        }
    }
    Ok(map)
}
