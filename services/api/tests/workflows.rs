//! Workflows over HTTP: create from YAML or JSON, validation with every
//! problem, versions, listing with stable pagination, soft deletion.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::HashSet;

fn small(name: &str, labels: &str) -> String {
    format!(
        "apiVersion: couler.dev/v1alpha1\nname: {name}\nlabels: {{{labels}}}\nsteps:\n  - name: only\n    container: {{image: alpine:3.20, command: [\"true\"]}}\n"
    )
}

#[tokio::test]
async fn create_from_yaml_and_json_and_read_back() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let created = create_workflow(&api, &editor, DIAMOND).await;
    assert_eq!(created["latest_version"], 1);
    assert_eq!(created["version"]["step_count"], 4);
    assert_eq!(created["version"]["hash"].as_str().unwrap().len(), 64);
    assert!(created["id"].as_str().unwrap().starts_with("wf_"));

    // The same document as JSON is accepted too.
    let ir = created["version"]["ir"].clone();
    let mut renamed = ir.clone();
    renamed["name"] = json!("diamond-json");
    let (status, body) = api
        .call(Method::POST, "/v1/workflows", &editor, Some(renamed))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["version"]["hash"].as_str().unwrap().len(), 64);

    // Read by id and by name: the stored IR is the canonical form.
    let id = created["id"].as_str().unwrap();
    let (status, by_id) = api
        .call(Method::GET, &format!("/v1/workflows/{id}"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let (_, by_name) = api
        .call(Method::GET, "/v1/workflows/diamond", &editor, None)
        .await;
    assert_eq!(by_id, by_name);
    assert_eq!(by_id["version"]["ir"], ir);
    api.stop().await;
}

#[tokio::test]
async fn invalid_documents_get_422_with_every_problem() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let bad = "apiVersion: couler.dev/v1alpha1\nname: bad\nsteps:\n  - {name: a, depends: [ghost], container: {image: x}}\n  - {name: a, container: {image: x, args: ['{{workflow.parameters.nope}}']}}\n";
    let r = api
        .request(Method::POST, "/v1/workflows", &editor)
        .header("content-type", "application/yaml")
        .body(bad)
        .send()
        .await
        .unwrap();
    assert_eq!(r.headers()["content-type"], "application/problem+json");
    let (status, body) = read(r).await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let problems = body["problems"].as_array().unwrap();
    let found: HashSet<(String, String)> = problems
        .iter()
        .map(|p| {
            (
                p["path"].as_str().unwrap().to_owned(),
                p["code"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    for expected in [
        ("/steps/0/depends/0", "unknown_step"),
        ("/steps/1/name", "duplicate_name"),
        ("/steps/1/container/args/0", "unknown_parameter"),
    ] {
        assert!(
            found.contains(&(expected.0.into(), expected.1.into())),
            "missing {expected:?} in {body}"
        );
    }
    // Syntax errors are 422 too, never 500.
    let (status, body) = send_text(
        &api,
        Method::POST,
        "/v1/workflows",
        &editor,
        "application/json",
        "{\"apiVersion\": ",
    )
    .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["problems"][0]["code"], "syntax");
    api.stop().await;
}

#[tokio::test]
async fn duplicate_names_conflict_and_versions_grow() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, &small("flow", "")).await;
    let (status, body) = post_workflow(&api, &editor, small("flow", "")).await;
    assert_problem(status, &body, StatusCode::CONFLICT, "workflow_exists");

    let post_version = |yaml: String| {
        let req = api
            .request(Method::POST, "/v1/workflows/flow/versions", &editor)
            .header("content-type", "application/yaml")
            .body(yaml);
        async move { read(req.send().await.unwrap()).await }
    };
    // Identical content: the latest version comes back, nothing new is stored.
    let (status, same) = post_version(small("flow", "")).await;
    assert_eq!(status, StatusCode::OK, "{same}");
    assert_eq!(same["version"]["version"], 1);
    let (status, v2) = post_version(small("flow", "stage: prod")).await;
    assert_eq!(status, StatusCode::CREATED, "{v2}");
    assert_eq!(v2["version"]["version"], 2);
    assert_eq!(v2["labels"]["stage"], "prod");
    // A document with another name is refused with its path.
    let (status, body) = post_version(small("other", "")).await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["problems"][0]["path"], "/name");

    let (_, versions) = api
        .call(Method::GET, "/v1/workflows/flow/versions", &editor, None)
        .await;
    let numbers: Vec<i64> = versions
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_i64().unwrap())
        .collect();
    assert_eq!(numbers, vec![2, 1]);
    let (status, v1) = api
        .call(Method::GET, "/v1/workflows/flow?version=1", &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert!(v1["version"]["ir"].get("labels").is_none());
    let (status, body) = api
        .call(Method::GET, "/v1/workflows/flow?version=9", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    api.stop().await;
}

#[tokio::test]
async fn delete_is_soft_and_runs_keep_their_version() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let (_, run) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"workflow": "diamond"})),
        )
        .await;
    let r = api
        .request(Method::DELETE, "/v1/workflows/diamond", &editor)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), StatusCode::NO_CONTENT);
    let (status, _) = api
        .call(Method::GET, "/v1/workflows/diamond", &editor, None)
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (_, list) = api.call(Method::GET, "/v1/workflows", &editor, None).await;
    assert!(list["items"].as_array().unwrap().is_empty());
    // The run still reads, and the name can be reused.
    let (status, got) = api
        .call(
            Method::GET,
            &format!("/v1/runs/{}", run["id"].as_str().unwrap()),
            &editor,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(got["workflow"]["version"], 1);
    create_workflow(&api, &editor, DIAMOND).await;
    api.stop().await;
}

async fn all_pages(
    api: &TestApi,
    token: &str,
    query: &str,
    between: impl AsyncFn(usize),
) -> Vec<String> {
    let mut names = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0.. {
        let mut path = format!("/v1/workflows?limit=10{query}");
        if let Some(c) = &cursor {
            path.push_str(&format!("&cursor={c}"));
        }
        let (status, body) = api.call(Method::GET, &path, token, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        names.extend(
            body["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|w| w["name"].as_str().unwrap().to_owned()),
        );
        match body["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        between(page).await;
    }
    names
}

#[tokio::test]
async fn pagination_is_stable_under_concurrent_inserts() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    for i in 0..25 {
        create_workflow(
            &api,
            &editor,
            &small(
                &format!("wf-{i:02}"),
                if i % 2 == 0 { "team: a" } else { "team: b" },
            ),
        )
        .await;
    }
    let inserted = std::sync::atomic::AtomicUsize::new(0);
    let names = all_pages(&api, &editor, "", async |page| {
        // New workflows arrive while the client pages.
        for j in 0..3 {
            create_workflow(&api, &editor, &small(&format!("late-{page}-{j}"), "")).await;
            inserted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
    })
    .await;
    assert!(inserted.into_inner() > 0);
    let unique: HashSet<&String> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "a row appeared twice: {names:?}");
    let expected: Vec<String> = (0..25).rev().map(|i| format!("wf-{i:02}")).collect();
    assert_eq!(names, expected, "pages shifted under inserts");

    // Filters: name prefix and labels.
    let team_a = all_pages(&api, &editor, "&label=team=a", async |_| {}).await;
    assert_eq!(team_a.len(), 13);
    let prefixed = all_pages(&api, &editor, "&name=wf-1", async |_| {}).await;
    assert_eq!(prefixed.len(), 10);

    let (status, body) = api
        .call(Method::GET, "/v1/workflows?cursor=garbage", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_cursor");
    assert_eq!(body["path"], "/cursor");
    let (status, body) = api
        .call(Method::GET, "/v1/workflows?limit=0", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_limit");
    api.stop().await;
}

#[tokio::test]
async fn yaml_and_json_bodies_of_the_same_workflow_hash_alike() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let yaml = create_workflow(&api, &editor, &small("same", "k: v")).await;
    let json_doc: Value = json!({
        "steps": [{"container": {"command": ["true"], "image": "alpine:3.20"}, "name": "only"}],
        "labels": {"k": "v"}, "name": "same", "apiVersion": "couler.dev/v1alpha1"
    });
    let (status, again) = api
        .call(
            Method::POST,
            "/v1/workflows/same/versions",
            &editor,
            Some(json_doc),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{again}");
    assert_eq!(again["version"]["hash"], yaml["version"]["hash"]);
    api.stop().await;
}
