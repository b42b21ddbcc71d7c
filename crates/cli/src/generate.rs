//! `couler generate` through the API: a new generation from a description,
//! or (`--feedback GEN_ID`) the next draft of one. Prints the draft's IR;
//! the generation id, who wrote the draft, explanations and warnings go to
//! standard error. Nothing runs: save or submit the printed IR.

use crate::client::{Client, Error};
use crate::nl::GenerateArgs;
use anyhow::{Context, Result};
use serde_json::{Value, json};
use std::process::ExitCode;

pub async fn online(client: &Client, args: GenerateArgs) -> Result<ExitCode> {
    let answer = match &args.feedback {
        Some(id) => {
            let body = json!({"text": args.description});
            client
                .post::<Value>(&["v1", "generations", id, "feedback"], Some(&body))
                .await
        }
        None => {
            let mut body = json!({"description": args.description});
            if let Some(name) = &args.name {
                body["name"] = json!(name);
            }
            client
                .post::<Value>(&["v1", "generations"], Some(&body))
                .await
        }
    };
    let generation = match answer {
        Ok((_, generation)) => generation,
        // Not understood: say what, like the offline path, and exit 1.
        Err(Error::Problem(p)) if p.code == "validation_failed" => {
            eprintln!("could not generate a workflow:");
            for item in &p.problems {
                eprintln!("  - {}", item.message);
            }
            return Ok(ExitCode::FAILURE);
        }
        Err(e) => return Err(e).context("generating"),
    };
    let draft = &generation["draft"];
    report(&generation, draft);
    if args.decomposition {
        println!("{}", serde_json::to_string_pretty(&draft["decomposition"])?);
    } else {
        let workflow: couler_ir::Workflow = serde_json::from_value(draft["workflow"].clone())
            .context("the server's draft is not a workflow")?;
        print!("{}", couler_ir::hash::canonical_yaml(&workflow));
    }
    Ok(ExitCode::SUCCESS)
}

fn report(generation: &Value, draft: &Value) {
    let author = &draft["author"];
    let by = match author["kind"].as_str() {
        Some("llm") => format!("the LLM ({})", author["model"].as_str().unwrap_or("?")),
        _ => match author["reason"].as_str() {
            Some(reason) => format!("the offline planner ({reason})"),
            None => "the offline planner".to_owned(),
        },
    };
    eprintln!(
        "generation {} draft {} by {by}; {} tokens{}",
        generation["id"].as_str().unwrap_or("?"),
        draft["n"],
        draft["usage"]["total_tokens"],
        match draft["score"].as_f64() {
            Some(score) => format!(", score {score:.2}"),
            None => String::new(),
        }
    );
    for w in draft["warnings"].as_array().into_iter().flatten() {
        eprintln!("warning: {}", w["message"].as_str().unwrap_or_default());
    }
    for e in draft["explanations"].as_array().into_iter().flatten() {
        eprintln!(
            "# {} ← {}: {}",
            e["step"].as_str().unwrap_or_default(),
            e["text"],
            e["why"].as_str().unwrap_or_default()
        );
    }
}
