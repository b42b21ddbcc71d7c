//! `couler submit` against a real API: storing workflows and versions,
//! starting runs with parameters, refusing invalid files, `--wait`.

mod common;
use common::*;
use couler_store::RunStatus;
use serde_json::Value;

#[tokio::test]
async fn submit_stores_the_workflow_and_versions_it_only_when_it_changes() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    let file = temp_file("diamond.yaml", DIAMOND);

    let out = api.couler(&editor, &["submit", path_arg(&file)]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    let first = stdout(&out).trim().to_owned();
    assert!(first.starts_with("run_"), "only the run id: {first:?}");
    assert!(
        stderr(&out).contains("workflow diamond version 1 stored"),
        "{}",
        stderr(&out)
    );
    let run = api.get(&format!("/v1/runs/{first}"), &editor).await;
    assert_eq!(run["workflow_name"], "diamond");
    assert_eq!(run["status"], "queued");
    assert_eq!(run["workflow"]["version"], 1);

    // The same file again: no new version, a new run of version 1.
    let out = api.couler(&editor, &["submit", path_arg(&file)]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("workflow diamond unchanged (version 1)"),
        "{}",
        stderr(&out)
    );
    let second = stdout(&out).trim().to_owned();
    assert_ne!(second, first);
    let workflow = api.get("/v1/workflows/diamond", &editor).await;
    assert_eq!(workflow["latest_version"], 1);

    // A changed file becomes version 2, and the run uses it.
    std::fs::write(&file, DIAMOND.replace("default: hello", "default: hola")).unwrap();
    let out = api.couler(&editor, &["submit", path_arg(&file)]).await;
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("workflow diamond version 2 stored"),
        "{}",
        stderr(&out)
    );
    let third = stdout(&out).trim().to_owned();
    let run = api.get(&format!("/v1/runs/{third}"), &editor).await;
    assert_eq!(run["workflow"]["version"], 2);
    assert_eq!(run["parameters"]["message"], "hola");
    let workflow = api.get("/v1/workflows/diamond", &editor).await;
    assert_eq!(workflow["latest_version"], 2);
    let runs = api.get("/v1/runs", &editor).await;
    assert_eq!(runs["items"].as_array().unwrap().len(), 3);
    api.stop().await;
}

#[tokio::test]
async fn parameters_labels_and_priority_reach_the_run() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    // A JSON document is stored as JSON.
    let doc: Value = json_form(DIAMOND);
    let file = temp_file("diamond.json", &doc.to_string());
    let out = api
        .couler(
            &editor,
            &[
                "submit",
                path_arg(&file),
                "--param",
                "message=hi there",
                "-l",
                "team=ml",
                "--priority",
                "-5",
                "--output",
                "json",
            ],
        )
        .await;
    assert!(out.status.success(), "{}", stderr(&out));
    let printed: Value = serde_json::from_str(&stdout(&out)).expect("the run as JSON");
    let id = printed["id"].as_str().unwrap();
    let run = api.get(&format!("/v1/runs/{id}"), &editor).await;
    assert_eq!(run["parameters"]["message"], "hi there");
    assert_eq!(run["labels"]["team"], "ml");
    assert_eq!(run["priority"], -5);
    api.stop().await;
}

/// The same workflow as JSON, by `couler fmt`.
fn json_form(yaml: &str) -> Value {
    let file = temp_file("diamond.yaml", yaml);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_couler"))
        .args(["fmt", "--output", "json", path_arg(&file)])
        .output()
        .unwrap();
    assert!(out.status.success());
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test]
async fn an_invalid_file_is_reported_and_nothing_is_stored() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    let bad = temp_file(
        "bad.yaml",
        "apiVersion: couler.dev/v1alpha1\nname: w\nsteps:\n  - {name: a, depends: [ghost], container: {image: a}}\n  - {name: a, container: {image: a}}\n",
    );
    let out = api.couler(&editor, &["submit", path_arg(&bad)]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("/steps/0/depends/0: unknown_step:"), "{text}");
    assert!(text.contains("/steps/1/name: duplicate_name:"), "{text}");
    let workflows = api.get("/v1/workflows", &editor).await;
    assert_eq!(workflows["items"], Value::Array(vec![]));
    let runs = api.get("/v1/runs", &editor).await;
    assert_eq!(runs["items"], Value::Array(vec![]));
    api.stop().await;
}

#[tokio::test]
async fn problems_from_the_server_are_printed_with_their_codes() {
    let api = TestApi::start().await;
    let (_, editor) = api.tenant("acme").await;
    let file = temp_file("diamond.yaml", DIAMOND);
    let out = api
        .couler(&editor, &["submit", path_arg(&file), "-p", "nope=1"])
        .await;
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("validation_failed"), "{err}");
    assert!(
        err.contains("/parameters/nope: unknown_parameter:"),
        "{err}"
    );
    assert!(err.contains("HTTP 422"), "{err}");

    let viewer = user(&api.tenant("other").await.0, "viewer");
    let out = api.couler(&viewer, &["submit", path_arg(&file)]).await;
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("forbidden"), "{}", stderr(&out));
    api.stop().await;
}

#[tokio::test]
async fn wait_fails_with_the_failed_steps() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let file = temp_file("diamond.yaml", DIAMOND);
    let mut running = api.spawn(&editor, &["submit", "--wait", path_arg(&file)]);
    let id = running.line().await.expect("the run id first");
    assert!(id.starts_with("run_"), "{id}");

    api.advance(&tenant, &id, RunStatus::Planning, None).await;
    api.advance(&tenant, &id, RunStatus::Running, None).await;
    api.step(&tenant, &id, "a", "running", None).await;
    api.step(&tenant, &id, "a", "succeeded", None).await;
    api.step(&tenant, &id, "b", "running", None).await;
    api.step(&tenant, &id, "c", "running", None).await;
    api.step(&tenant, &id, "c", "succeeded", None).await;
    api.step(&tenant, &id, "b", "failed", Some("exit status 3"))
        .await;
    api.advance(&tenant, &id, RunStatus::Failed, Some("step b failed"))
        .await;

    let (lines, out) = running.finish().await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let seen = transitions(&lines);
    assert_eq!(seen.first().map(String::as_str), Some("run queued"));
    assert_eq!(
        seen.last().map(String::as_str),
        Some("run failed: step b failed")
    );
    assert!(
        seen.contains(&"step b failed: exit status 3".to_owned()),
        "{seen:#?}"
    );
    let err = stderr(&out);
    assert!(
        err.contains(&format!("run {id} failed: step b failed")),
        "{err}"
    );
    assert!(err.contains("failed steps:\n  b: exit status 3\n"), "{err}");
    assert!(!err.contains("  c"), "only failed steps are listed: {err}");
    api.stop().await;
}

#[tokio::test]
async fn wait_with_json_output_prints_the_finished_run() {
    let api = TestApi::start().await;
    let (tenant, editor) = api.tenant("acme").await;
    let file = temp_file("diamond.yaml", DIAMOND);
    let running = api.spawn(
        &editor,
        &["submit", "--wait", "--output", "json", path_arg(&file)],
    );
    // Standard output stays quiet until the end: poll for the new run.
    let mut id = None;
    for _ in 0..1500 {
        let runs = api.get("/v1/runs", &editor).await;
        if let Some(found) = runs["items"][0]["id"].as_str() {
            id = Some(found.to_owned());
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let id = id.expect("the command created a run");
    api.advance(&tenant, &id, RunStatus::Planning, None).await;
    api.advance(&tenant, &id, RunStatus::Running, None).await;
    api.advance(&tenant, &id, RunStatus::Succeeded, None).await;
    let (lines, out) = running.finish().await;
    assert!(out.status.success(), "{}", stderr(&out));
    let run: Value = serde_json::from_str(&lines.join("\n")).expect("only JSON on stdout");
    assert_eq!(run["id"], id.as_str());
    assert_eq!(run["status"], "succeeded");
    assert!(
        stderr(&out).contains("run succeeded"),
        "progress on stderr: {}",
        stderr(&out)
    );
    api.stop().await;
}
