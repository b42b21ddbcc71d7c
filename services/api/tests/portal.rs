//! What the web portal needs from the API server: the app under `/ui/`
//! with a strict CSP and cache headers (never shadowing the API), and the
//! DAG endpoints it draws from.

mod common;
use common::*;
use reqwest::{Method, StatusCode, header};
use serde_json::{Value, json};

fn built_index() -> Option<String> {
    let dist =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../portal/dist/index.html");
    std::fs::read_to_string(dist).ok()
}

async fn get(api: &TestApi, path: &str) -> reqwest::Response {
    api.client.get(api.url(path)).send().await.unwrap()
}

#[tokio::test]
async fn the_portal_is_served_under_ui_with_a_strict_policy() {
    let api = TestApi::start().await;
    let client = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let root = client.get(api.url("/")).send().await.unwrap();
    assert_eq!(root.status(), StatusCode::TEMPORARY_REDIRECT);
    assert_eq!(root.headers()[header::LOCATION], "/ui/");

    let index = get(&api, "/ui/").await;
    assert_eq!(index.status(), StatusCode::OK);
    let csp = index.headers()[header::CONTENT_SECURITY_POLICY]
        .to_str()
        .unwrap()
        .to_owned();
    for rule in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(rule), "{csp}");
    }
    assert!(
        !csp.contains("unsafe-inline") && !csp.contains("unsafe-eval"),
        "{csp}"
    );
    assert_eq!(index.headers()[header::X_CONTENT_TYPE_OPTIONS], "nosniff");
    assert_eq!(index.headers()[header::CACHE_CONTROL], "no-cache");
    let body = index.text().await.unwrap();
    match built_index() {
        Some(built) => assert_eq!(body, built),
        None => assert!(body.contains("The portal is not built"), "{body}"),
    }

    // The app's own routes get the app; missing files do not.
    let deep = get(&api, "/ui/runs/run_0193").await;
    assert_eq!(deep.status(), StatusCode::OK);
    assert_eq!(deep.text().await.unwrap(), body);
    let missing = get(&api, "/ui/assets/index-00000000.js").await;
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);

    // A built asset is immutable, with its type.
    if let Some(built) = built_index() {
        let asset = built
            .split('"')
            .find(|s| s.starts_with("/ui/assets/") && s.ends_with(".js"))
            .expect("index.html loads a script");
        let js = get(&api, asset).await;
        assert_eq!(js.status(), StatusCode::OK);
        assert_eq!(
            js.headers()[header::CACHE_CONTROL],
            "public, max-age=31536000, immutable"
        );
        assert!(
            js.headers()[header::CONTENT_TYPE]
                .to_str()
                .unwrap()
                .contains("javascript")
        );
    }

    // The API is not shadowed.
    let (status, body) = api.call(Method::GET, "/v1/runs", "", None).await;
    assert_problem(status, &body, StatusCode::UNAUTHORIZED, "unauthenticated");
    assert_eq!(get(&api, "/healthz").await.status(), StatusCode::OK);
    assert_eq!(get(&api, "/openapi.json").await.status(), StatusCode::OK);
    let (status, body) = read(get(&api, "/v2/nothing").await).await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    api.stop().await;
}

#[tokio::test]
async fn run_graphs_come_from_the_ir_with_the_ir_hash_as_etag() {
    let api = TestApi::start().await;
    let tenant = api.tenant("graphs").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let run = run_diamond(&api, &editor).await;

    let response = api
        .request(Method::GET, &format!("/v1/runs/{run}/graph"), &editor)
        .send()
        .await
        .unwrap();
    let etag = response.headers()[header::ETAG]
        .to_str()
        .unwrap()
        .to_owned();
    let (status, graph) = read(response).await;
    assert_eq!(status, StatusCode::OK, "{graph}");
    let names: Vec<&str> = graph["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a", "b", "c", "d"]);
    assert!(
        graph["nodes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|n| n["kind"] == "step")
    );
    let mut edges: Vec<Value> = graph["edges"].as_array().unwrap().clone();
    edges.sort_by_key(|e| e.to_string());
    assert_eq!(
        edges,
        [json!([0, 1]), json!([0, 2]), json!([1, 3]), json!([2, 3])]
    );
    let (_, run_view) = api
        .call(Method::GET, &format!("/v1/runs/{run}"), &editor, None)
        .await;
    assert_eq!(
        etag,
        format!("\"{}\"", run_view["ir_hash"].as_str().unwrap())
    );
    assert_eq!(graph["ir_hash"], run_view["ir_hash"]);

    let again = api
        .request(Method::GET, &format!("/v1/runs/{run}/graph"), &editor)
        .header(header::IF_NONE_MATCH, &etag)
        .send()
        .await
        .unwrap();
    assert_eq!(again.status(), StatusCode::NOT_MODIFIED);

    // The same graph for the stored workflow; inline IR too.
    let (status, stored) = api
        .call(
            Method::POST,
            "/v1/graph",
            &editor,
            Some(json!({"workflow": "diamond"})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{stored}");
    assert_eq!(stored["edges"].as_array().unwrap().len(), 4);
    let inline = json!({"ir": {
        "apiVersion": "couler.dev/v1alpha1", "name": "fan",
        "steps": [
            {"name": "items", "container": {"image": "alpine", "command": ["echo", "[1,2]"]}},
            {"name": "each", "map": {"from": "{{steps.items.outputs.result}}"},
             "container": {"image": "alpine", "command": ["echo", "{{item}}"]}}
        ],
        "onExit": [{"name": "bye", "container": {"image": "alpine", "command": ["true"]}}]
    }});
    let (status, fan) = api
        .call(Method::POST, "/v1/graph", &editor, Some(inline))
        .await;
    assert_eq!(status, StatusCode::OK, "{fan}");
    assert_eq!(fan["nodes"][1]["kind"], "map");
    assert_eq!(fan["nodes"][2]["kind"], "exit");
    assert_eq!(fan["edges"], json!([[0, 1], [1, 2]]));

    // Bad input is a problem at its place; another tenant sees no run.
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/graph",
            &editor,
            Some(json!({"ir": {"name": "x"}})),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    let other = user(&api.tenant("elsewhere").await, "admin");
    let (status, body) = api
        .call(Method::GET, &format!("/v1/runs/{run}/graph"), &other, None)
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    api.stop().await;
}

#[tokio::test]
async fn runs_carry_step_measurements_counts_and_the_last_event_id() {
    use couler_store::{RunStatus, TenantId};
    let api = TestApi::start().await;
    let tenant = api.tenant("measured").await;
    let editor = user(&tenant, "editor");
    create_workflow(&api, &editor, DIAMOND).await;
    let run = run_diamond(&api, &editor).await;
    api.advance(&tenant, &run, &[RunStatus::Planning, RunStatus::Running])
        .await;
    let store = api.store().await;
    let t: TenantId = tenant.parse().unwrap();
    let run_uuid = run.parse::<couler_store::RunId>().unwrap().0;
    let mut tx = store.platform().await.unwrap();
    sqlx::query(
        "INSERT INTO run_steps (tenant_id, run_id, name, status, attempt, started_at, finished_at,
                                engine_ref, wall_ms, cpu_ms, max_rss_kb, exit_code)
         VALUES ($1, $2, 'a', 'succeeded', 1, now(), now(), 'a/try-1', 1200, 900, 20480, 0),
                ($1, $2, 'b', 'running', 1, now(), NULL, 'b/try-1', NULL, NULL, NULL, NULL)",
    )
    .bind(t.0)
    .bind(run_uuid)
    .execute(&mut *tx)
    .await
    .unwrap();
    let last: Option<i64> =
        sqlx::query_scalar("SELECT max(id) FROM run_events WHERE tenant_id = $1 AND run_id = $2")
            .bind(t.0)
            .bind(run_uuid)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
    tx.commit().await.unwrap();
    assert!(last.is_some(), "advancing the run recorded events");

    let (status, view) = api
        .call(Method::GET, &format!("/v1/runs/{run}"), &editor, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    assert_eq!(view["last_event_id"], json!(last));
    let a = view["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "a")
        .unwrap();
    assert_eq!(
        (
            &a["engine_ref"],
            &a["wall_ms"],
            &a["cpu_ms"],
            &a["max_rss_kb"],
            &a["exit_code"]
        ),
        (
            &json!("a/try-1"),
            &json!(1200),
            &json!(900),
            &json!(20480),
            &json!(0)
        )
    );
    let b = view["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "b")
        .unwrap();
    assert!(
        b.get("wall_ms").is_none() && b.get("exit_code").is_none(),
        "{b}"
    );

    let (status, list) = api.call(Method::GET, "/v1/runs", &editor, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(
        list["items"][0]["step_counts"],
        json!({"succeeded": 1, "running": 1})
    );
    assert!(list["items"][0].get("last_event_id").is_none());
    api.stop().await;
}
