//! The least role each endpoint needs, as a table: the role just below it
//! gets 403 `forbidden` and changes nothing, the role itself succeeds.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeSet;

#[path = "roles/table.rs"]
mod table;
use table::*;

/// Routes that need no credentials at all (a webhook delivery proves
/// itself with its trigger's own credential: `tests/hooks.rs`).
const PUBLIC: &[&str] = &["/healthz", "/readyz", "/metrics", "/v1/hooks/{public_id}"];
/// Routes any credential may use, whatever its roles.
const ANY_CREDENTIAL: &[&str] = &["/v1/me"];

#[test]
fn the_table_covers_every_authenticated_endpoint() {
    let fixtures = Fixtures {
        tenant: String::new(),
        run: String::new(),
        queued_run: String::new(),
        cancelled_run: String::new(),
        api_key: String::new(),
        generation: String::new(),
        backfill: String::new(),
    };
    let tested: BTreeSet<(String, String)> = cases(&fixtures)
        .iter()
        .map(|c| (c.method.to_string(), c.route.to_owned()))
        .collect();
    let doc: Value = serde_json::from_str(&couler_api::app::openapi_json()).unwrap();
    let mut documented = BTreeSet::new();
    for (route, item) in doc["paths"].as_object().unwrap() {
        if PUBLIC.contains(&route.as_str()) || ANY_CREDENTIAL.contains(&route.as_str()) {
            continue;
        }
        for method in ["get", "put", "post", "delete", "patch"] {
            if item.get(method).is_some() {
                documented.insert((method.to_uppercase(), route.clone()));
            }
        }
    }
    assert_eq!(
        tested, documented,
        "the table and the API's endpoints differ"
    );
}

fn token(api: &TestApi, tenant: &str, level: Level) -> String {
    match level {
        Level::NoRole => common::token(json!({"sub": "nobody", "tenant": tenant, "roles": []})),
        Level::Viewer => user(tenant, "viewer"),
        Level::Editor => user(tenant, "editor"),
        Level::Admin => user(tenant, "admin"),
        Level::PlatformAdmin => api.platform_token.clone(),
    }
}

async fn send(api: &TestApi, c: &Case, token: &str) -> (StatusCode, Value) {
    let mut req = api.request(c.method.clone(), &c.path, token);
    req = match &c.payload {
        Payload::Empty => req,
        Payload::Json(v) => req.json(v),
        Payload::Yaml(y) => req
            .header("content-type", "application/yaml")
            .body(y.clone()),
    };
    read(req.send().await.unwrap()).await
}

async fn post_run(api: &TestApi, editor: &str) -> String {
    let (status, run) = api
        .call(
            Method::POST,
            "/v1/runs",
            editor,
            Some(json!({"workflow": "diamond"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    run["id"].as_str().unwrap().to_owned()
}

/// A step log, as a scheduler would store it.
async fn add_step_log(api: &TestApi, tenant: &str, run: &str) {
    let pool = api.pool().await;
    let tenant: couler_store::TenantId = tenant.parse().unwrap();
    let run: couler_store::RunId = run.parse().unwrap();
    sqlx::query("INSERT INTO step_logs (tenant_id, run_id, step, attempt, content) VALUES ($1, $2, 'a', 1, 'A says hi')")
        .bind(tenant.0)
        .bind(run.0)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

/// The plan a scheduler would store for a run of the diamond.
async fn add_plan(api: &TestApi, run: &str) {
    let workflow = couler_ir::load(DIAMOND, couler_ir::Format::Yaml).unwrap();
    let plan = couler_optimizer::Pipeline::default()
        .plan(workflow, &Default::default(), |_, f| f())
        .unwrap();
    let pool = api.pool().await;
    let run: couler_store::RunId = run.parse().unwrap();
    sqlx::query("UPDATE runs SET plan = $1 WHERE id = $2")
        .bind(serde_json::to_value(&plan).unwrap())
        .bind(run.0)
        .execute(&pool)
        .await
        .unwrap();
    pool.close().await;
}

async fn fixtures(api: &TestApi) -> Fixtures {
    // Room for every request of the table in well under a second.
    let tenant = api
        .tenant_with(
            "acme",
            json!({"quotas": {"max_concurrent_runs": 10, "max_queued_runs": 1000, "requests_per_second": 10000}}),
        )
        .await;
    let editor = user(&tenant, "editor");
    let admin = user(&tenant, "admin");
    create_workflow(api, &editor, DIAMOND).await;
    create_workflow(
        api,
        &editor,
        &DIAMOND.replacen("name: diamond", "name: doomed", 1),
    )
    .await;
    let run = post_run(api, &editor).await;
    add_step_log(api, &tenant, &run).await;
    add_plan(api, &run).await;
    let queued_run = post_run(api, &editor).await;
    let cancelled_run = post_run(api, &editor).await;
    let (status, body) = api
        .call(
            Method::POST,
            &format!("/v1/runs/{cancelled_run}/cancel"),
            &editor,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, key) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin,
            Some(json!({"name": "doomed", "roles": ["viewer"]})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key}");
    let (status, created) = api
        .call(
            Method::POST,
            "/v1/generations",
            &editor,
            Some(json!({"description": GENERATE})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let generation = created["id"].as_str().unwrap().to_owned();
    for id in ["kept-step", "doomed-step"] {
        let (status, body) = api
            .call(Method::POST, "/v1/step-library", &admin, Some(template(id)))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
    }
    for slug in ["kept", "doomed"] {
        let body = json!({"slug": slug, "crons": ["@daily"]});
        let (status, made) = api.call(Method::POST, S, &editor, Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }
    for name in ["kept", "doomed"] {
        let body = json!({"name": name, "auth": "bearer"});
        let (status, made) = api.call(Method::POST, T, &editor, Some(body)).await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
    }
    let range = json!({"from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z"});
    let (status, backfill) = api
        .call(
            Method::POST,
            &format!("{S}/kept/backfills"),
            &editor,
            Some(range),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{backfill}");
    Fixtures {
        backfill: backfill["id"].as_str().unwrap().to_owned(),
        tenant,
        run,
        queued_run,
        cancelled_run,
        api_key: key["id"].as_str().unwrap().to_owned(),
        generation,
    }
}

#[tokio::test]
async fn each_endpoint_refuses_the_role_below_the_one_it_needs() {
    let api = TestApi::start().await;
    let f = fixtures(&api).await;
    let mut wrong = Vec::new();
    for c in cases(&f) {
        let below = c.needs.below();
        let (status, body) = send(&api, &c, &token(&api, &f.tenant, below)).await;
        if status != StatusCode::FORBIDDEN
            || body["code"] != "forbidden"
            || !body["request_id"].is_string()
        {
            wrong.push(format!(
                "{} {} as {below:?}: expected 403 forbidden, got {status} {body}",
                c.method, c.path
            ));
        }
        // The role is checked before the body is read: a garbled one is
        // refused for the role too, not for its syntax.
        if !matches!(c.payload, Payload::Empty) {
            let garbled = api
                .request(c.method.clone(), &c.path, &token(&api, &f.tenant, below))
                .header("content-type", "application/json")
                .body("{\"oops\": ");
            let (status, body) = read(garbled.send().await.unwrap()).await;
            if status != StatusCode::FORBIDDEN {
                wrong.push(format!(
                    "{} {} as {below:?} with a garbled body: expected 403, got {status} {body}",
                    c.method, c.path
                ));
            }
        }
        // Had the refused request done the work, this one would mostly fail
        // (the workflow gone, the name or tenant taken, the run moved on).
        let (status, body) = send(&api, &c, &token(&api, &f.tenant, c.needs)).await;
        if !status.is_success() {
            wrong.push(format!(
                "{} {} as {:?}: expected success, got {status} {body}",
                c.method, c.path, c.needs
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    api.stop().await;
}

#[tokio::test]
async fn me_needs_a_credential_and_no_role() {
    let api = TestApi::start().await;
    let f = fixtures(&api).await;
    let (status, body) = api.call(Method::GET, "/v1/me", "", None).await;
    assert_problem(status, &body, StatusCode::UNAUTHORIZED, "unauthenticated");
    for (level, role) in [
        (Level::NoRole, Value::Null),
        (Level::Viewer, json!("viewer")),
        (Level::Admin, json!("admin")),
    ] {
        let (status, body) = api
            .call(Method::GET, "/v1/me", &token(&api, &f.tenant, level), None)
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["tenant"], json!(f.tenant), "{body}");
        assert_eq!(body["role"], role, "{body}");
        assert_eq!(body["platform_admin"], false);
        assert_eq!(body["credential"], "jwt");
    }
    let (status, body) = api
        .call(Method::GET, "/v1/me", &api.platform_token, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["platform_admin"], true);
    assert_eq!(body["tenant"], Value::Null);
    api.stop().await;
}

#[tokio::test]
async fn platform_admins_without_a_tenant_cannot_use_tenant_endpoints() {
    let api = TestApi::start().await;
    let (status, body) = api
        .call(Method::GET, "/v1/workflows", &api.platform_token, None)
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = api
        .call(Method::GET, "/v1/quotas", &api.platform_token, None)
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    api.stop().await;
}
