mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn workflow_and_run_happy_path() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let wf = create_workflow(&api, &editor, DIAMOND).await;
    assert_eq!(wf["name"], "diamond");
    assert_eq!(wf["version"]["version"], 1);
    let (status, run) = api
        .call(
            Method::POST,
            "/v1/runs",
            &editor,
            Some(json!({"workflow": "diamond", "parameters": {"message": "hi"}})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    assert_eq!(run["status"], "queued");
    assert_eq!(run["parameters"]["message"], "hi");
    let id = run["id"].as_str().unwrap();
    let (status, got) = api
        .call(Method::GET, &format!("/v1/runs/{id}"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{got}");
    let (status, events) = api
        .call(Method::GET, &format!("/v1/runs/{id}/events"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(events["items"][0]["kind"], "run.queued");
    api.stop().await;
}

#[tokio::test]
async fn token_subjects_are_recorded_as_principals() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let (status, _) = api
        .call(Method::GET, "/v1/workflows", &user(&tenant, "viewer"), None)
        .await;
    assert_eq!(status, StatusCode::OK);
    let pool = api.pool().await;
    let subjects: Vec<String> = sqlx::query_scalar("SELECT subject FROM principals")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(subjects, [format!("viewer@{tenant}")]);
    pool.close().await;
    api.stop().await;
}

#[tokio::test]
async fn tenant_admins_set_a_default_cache_ttl() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let path = format!("/v1/tenants/{tenant}");
    let (status, t) = api
        .call(
            Method::PATCH,
            &path,
            &admin,
            Some(json!({"cache_ttl_secs": 3600})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{t}");
    assert_eq!(t["cache_ttl_secs"], 3600);
    let (status, body) = api
        .call(
            Method::PATCH,
            &path,
            &admin,
            Some(json!({"cache_ttl_secs": 0})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_ttl");
    assert_eq!(body["path"], "/cache_ttl_secs");
    api.stop().await;
}
