//! Tenant isolation through the API: another tenant's workflows and runs
//! answer 404, exactly as if they did not exist (never 403, which would
//! confirm them), lists never show them, and nothing about them changes.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

/// Two tenants, each with room for every request of a test.
async fn two_tenants(api: &TestApi) -> (String, String) {
    let roomy = json!({"quotas": {"max_concurrent_runs": 10, "max_queued_runs": 1000, "requests_per_second": 10000}});
    let a = api.tenant_with("alpha", roomy.clone()).await;
    let b = api.tenant_with("beta", roomy).await;
    (a, b)
}

async fn start_run(api: &TestApi, token: &str, workflow: &str) -> Value {
    let (status, run) = api
        .call(
            Method::POST,
            "/v1/runs",
            token,
            Some(json!({"workflow": workflow})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    run
}

/// Asserts 404 `not_found` that says nothing of `secrets` (the other
/// tenant's id and author).
#[track_caller]
fn assert_hidden(what: &str, status: StatusCode, body: &Value, secrets: &[&str]) {
    assert_eq!(status, StatusCode::NOT_FOUND, "{what}: {body}");
    assert_problem(status, body, StatusCode::NOT_FOUND, "not_found");
    let text = body.to_string();
    for secret in secrets {
        assert!(!text.contains(secret), "{what} leaks {secret}: {text}");
    }
}

fn names(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w["name"].as_str().unwrap())
        .collect()
}

fn ids(list: &Value) -> Vec<&str> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect()
}

#[tokio::test]
async fn another_tenants_workflow_is_404_by_id_and_by_name() {
    let api = TestApi::start().await;
    let (a, b) = two_tenants(&api).await;
    let editor_a = user(&a, "editor");
    let wf = create_workflow(&api, &editor_a, DIAMOND).await;
    let id = wf["id"].as_str().unwrap();
    let revised = DIAMOND.replacen("description: A", "description: B's A", 1);
    let secrets = [a.as_str(), "editor@"];

    for role in ["viewer", "editor", "admin"] {
        let token_b = user(&b, role);
        for reference in [id, "diamond"] {
            let path = format!("/v1/workflows/{reference}");
            let versions = format!("{path}/versions");
            let (status, body) = api.call(Method::GET, &path, &token_b, None).await;
            assert_hidden(&format!("{role} GET {path}"), status, &body, &secrets);
            let (status, body) = api.call(Method::GET, &versions, &token_b, None).await;
            assert_hidden(&format!("{role} GET {versions}"), status, &body, &secrets);
            if role == "viewer" {
                // Viewers are refused writes before any lookup.
                continue;
            }
            let (status, body) = api.call(Method::DELETE, &path, &token_b, None).await;
            assert_hidden(&format!("{role} DELETE {path}"), status, &body, &secrets);
            let (status, body) = send_text(
                &api,
                Method::POST,
                &versions,
                &token_b,
                "application/yaml",
                revised.clone(),
            )
            .await;
            assert_hidden(&format!("{role} POST {versions}"), status, &body, &secrets);
        }
    }

    let (status, still) = api
        .call(Method::GET, &format!("/v1/workflows/{id}"), &editor_a, None)
        .await;
    assert_eq!(status, StatusCode::OK, "B's delete reached A: {still}");
    assert_eq!(still["latest_version"], 1, "B's version reached A: {still}");
    api.stop().await;
}

#[tokio::test]
async fn another_tenants_run_is_404_for_every_run_endpoint() {
    let api = TestApi::start().await;
    let (a, b) = two_tenants(&api).await;
    let editor_a = user(&a, "editor");
    create_workflow(&api, &editor_a, DIAMOND).await;
    let queued = start_run(&api, &editor_a, "diamond").await;
    let queued = queued["id"].as_str().unwrap();
    // A cancelled run: retrying it would succeed for its own tenant.
    let cancelled = start_run(&api, &editor_a, "diamond").await;
    let cancelled = cancelled["id"].as_str().unwrap();
    let (status, body) = api
        .call(
            Method::POST,
            &format!("/v1/runs/{cancelled}/cancel"),
            &editor_a,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");

    let editor_b = user(&b, "editor");
    let secrets = [a.as_str(), "editor@"];
    for run in [queued, cancelled] {
        let requests = [
            (Method::GET, format!("/v1/runs/{run}")),
            (Method::GET, format!("/v1/runs/{run}/events")),
            (Method::POST, format!("/v1/runs/{run}/cancel")),
            (Method::POST, format!("/v1/runs/{run}/retry")),
        ];
        for (method, path) in requests {
            let what = format!("{method} {path}");
            let (status, body) = api.call(method, &path, &editor_b, None).await;
            assert_hidden(&what, status, &body, &secrets);
        }
        let stream = api
            .request(Method::GET, &format!("/v1/runs/{run}/events"), &editor_b)
            .header("accept", "text/event-stream")
            .send()
            .await
            .unwrap();
        let (status, body) = read(stream).await;
        assert_hidden("event stream", status, &body, &secrets);
    }

    for (run, status) in [(queued, "queued"), (cancelled, "cancelled")] {
        let (code, got) = api
            .call(Method::GET, &format!("/v1/runs/{run}"), &editor_a, None)
            .await;
        assert_eq!(code, StatusCode::OK, "{got}");
        assert_eq!(got["status"], status, "B changed A's run: {got}");
        assert_eq!(got["attempt"], 1, "B retried A's run: {got}");
        assert_eq!(got["cancel_requested"], false, "{got}");
    }
    api.stop().await;
}

#[tokio::test]
async fn lists_show_only_the_callers_tenant() {
    let api = TestApi::start().await;
    let (a, b) = two_tenants(&api).await;
    let (editor_a, editor_b) = (user(&a, "editor"), user(&b, "editor"));
    let wf_a = create_workflow(&api, &editor_a, DIAMOND).await;
    let run_a = start_run(&api, &editor_a, "diamond").await;
    let other = DIAMOND.replacen("name: diamond", "name: other", 1);
    create_workflow(&api, &editor_b, &other).await;
    let run_b = start_run(&api, &editor_b, "other").await;

    let (_, workflows) = api
        .call(Method::GET, "/v1/workflows", &editor_b, None)
        .await;
    assert_eq!(names(&workflows), ["other"], "{workflows}");
    let (_, runs) = api.call(Method::GET, "/v1/runs", &editor_b, None).await;
    assert_eq!(ids(&runs), [run_b["id"].as_str().unwrap()], "{runs}");

    // Filters naming A's things find nothing either.
    let wf_a_id = wf_a["id"].as_str().unwrap();
    let (status, by_workflow) = api
        .call(
            Method::GET,
            &format!("/v1/runs?workflow={wf_a_id}"),
            &editor_b,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{by_workflow}");
    assert_eq!(by_workflow["items"], json!([]), "{by_workflow}");
    let (_, by_name) = api
        .call(Method::GET, "/v1/workflows?name=diam", &editor_b, None)
        .await;
    assert_eq!(by_name["items"], json!([]), "{by_name}");

    // And A sees only its own.
    let (_, workflows) = api
        .call(Method::GET, "/v1/workflows", &editor_a, None)
        .await;
    assert_eq!(names(&workflows), ["diamond"], "{workflows}");
    let (_, runs) = api.call(Method::GET, "/v1/runs", &editor_a, None).await;
    assert_eq!(ids(&runs), [run_a["id"].as_str().unwrap()], "{runs}");
    api.stop().await;
}

#[tokio::test]
async fn workflow_names_are_per_tenant() {
    let api = TestApi::start().await;
    let (a, b) = two_tenants(&api).await;
    let (editor_a, editor_b) = (user(&a, "editor"), user(&b, "editor"));
    let wf_a = create_workflow(&api, &editor_a, DIAMOND).await;
    let wf_b = create_workflow(&api, &editor_b, DIAMOND).await;
    assert_ne!(wf_a["id"], wf_b["id"]);

    for (token, own) in [(&editor_a, &wf_a), (&editor_b, &wf_b)] {
        let (status, got) = api
            .call(Method::GET, "/v1/workflows/diamond", token, None)
            .await;
        assert_eq!(status, StatusCode::OK, "{got}");
        assert_eq!(got["id"], own["id"], "{got}");
    }
    let (status, body) = api
        .call(
            Method::GET,
            &format!("/v1/workflows/{}", wf_a["id"].as_str().unwrap()),
            &editor_b,
            None,
        )
        .await;
    assert_hidden("A's id, B holding the same name", status, &body, &[&a]);
    api.stop().await;
}

#[tokio::test]
async fn runs_cannot_start_from_another_tenants_workflow() {
    let api = TestApi::start().await;
    let (a, b) = two_tenants(&api).await;
    let (editor_a, editor_b) = (user(&a, "editor"), user(&b, "editor"));
    let wf_a = create_workflow(&api, &editor_a, DIAMOND).await;
    let id = wf_a["id"].as_str().unwrap();
    for reference in [id, "diamond"] {
        let (status, body) = api
            .call(
                Method::POST,
                "/v1/runs",
                &editor_b,
                Some(json!({"workflow": reference})),
            )
            .await;
        assert_hidden(&format!("run {reference}"), status, &body, &[&a]);
    }
    for token in [&editor_a, &editor_b] {
        let (_, runs) = api.call(Method::GET, "/v1/runs", token, None).await;
        assert_eq!(runs["items"], json!([]), "a run was created: {runs}");
    }
    api.stop().await;
}

#[tokio::test]
async fn an_api_key_of_one_tenant_cannot_reach_another() {
    let api = TestApi::start().await;
    let (a, b) = two_tenants(&api).await;
    let (admin_a, admin_b) = (user(&a, "admin"), user(&b, "admin"));
    let (status, key_a) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin_a,
            Some(json!({"name": "ci", "roles": ["admin"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key_a}");
    let key_a = key_a["secret"].as_str().unwrap();
    let (status, key_b) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin_b,
            Some(json!({"name": "ci", "roles": ["viewer"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key_b}");
    let wf_b = create_workflow(&api, &admin_b, DIAMOND).await;
    let run_b = start_run(&api, &admin_b, "diamond").await;

    let (status, own) = api
        .call(Method::GET, &format!("/v1/tenants/{a}"), key_a, None)
        .await;
    assert_eq!(status, StatusCode::OK, "control: {own}");
    let (status, body) = api
        .call(Method::GET, &format!("/v1/tenants/{b}"), key_a, None)
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");

    let secrets = [b.as_str(), "admin@"];
    let paths = [
        (
            Method::GET,
            format!("/v1/workflows/{}", wf_b["id"].as_str().unwrap()),
        ),
        (Method::GET, "/v1/workflows/diamond".to_owned()),
        (
            Method::GET,
            format!("/v1/runs/{}", run_b["id"].as_str().unwrap()),
        ),
        (
            Method::POST,
            format!("/v1/runs/{}/cancel", run_b["id"].as_str().unwrap()),
        ),
        (
            Method::DELETE,
            format!("/v1/api-keys/{}", key_b["id"].as_str().unwrap()),
        ),
    ];
    for (method, path) in paths {
        let what = format!("{method} {path}");
        let (status, body) = api.call(method, &path, key_a, None).await;
        assert_hidden(&what, status, &body, &secrets);
    }
    let (_, workflows) = api.call(Method::GET, "/v1/workflows", key_a, None).await;
    assert_eq!(workflows["items"], json!([]), "{workflows}");
    let (_, keys) = api.call(Method::GET, "/v1/api-keys", key_a, None).await;
    assert_eq!(keys.as_array().unwrap().len(), 1, "{keys}");

    // B's key is untouched.
    let (status, body) = api
        .call(
            Method::GET,
            "/v1/workflows",
            key_b["secret"].as_str().unwrap(),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "B's key was revoked: {body}");
    api.stop().await;
}
