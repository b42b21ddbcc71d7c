//! Natural-language generation through the API (no LLM configured, so every
//! draft comes from the offline planner): drafts and their history, the
//! tenant's step library, isolation, LLM token budgets, and the images a
//! tenant allows.

mod common;
use common::*;
use reqwest::{Method, StatusCode};
use serde_json::{Value, json};

const DESCRIPTION: &str =
    "load the data from https://example.com/d.csv, then train an xgboost model, then evaluate it";

async fn generate(api: &TestApi, token: &str, description: &str) -> Value {
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/generations",
            token,
            Some(json!({"description": description})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

fn step<'a>(draft: &'a Value, name: &str) -> &'a Value {
    draft["workflow"]["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name} in {draft}"))
}

fn template_of<'a>(draft: &'a Value, step: &str) -> &'a str {
    draft["explanations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["step"] == step)
        .and_then(|e| e["template"].as_str())
        .unwrap_or_else(|| panic!("no explanation of {step} in {draft}"))
}

fn quokka_template(id: &str) -> Value {
    json!({
        "id": id,
        "kind": "train",
        "description": "Train a QuokkaNet model on tabular data.",
        "keywords": ["quokkanet", "quokka"],
        "needs": ["data"],
        "step": {
            "container": {"image": "python:3.12-slim", "command": ["python3", "-c", "print('quokka')"]},
            "outputs": {
                "parameters": [{"name": "score", "path": "/tmp/outputs/score"}],
                "artifacts": [{"name": "model", "path": "/tmp/outputs/model"}],
            },
        },
    })
}

#[tokio::test]
async fn a_description_becomes_a_valid_draft_and_nothing_runs() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let created = generate(&api, &editor, DESCRIPTION).await;
    assert!(
        created["id"].as_str().unwrap().starts_with("gen_"),
        "{created}"
    );
    assert_eq!(created["current_draft"], 1);
    let draft = &created["draft"];
    assert_eq!(draft["n"], 1);
    assert_eq!(draft["author"]["kind"], "offline", "{draft}");
    assert_eq!(draft["usage"]["total_tokens"], 0);
    assert_eq!(template_of(draft, "train-xgboost"), "train-gbdt");
    assert_eq!(created["history"].as_array().unwrap().len(), 1);

    // The draft is IR the workflows API accepts as it is.
    let (status, stored) = api
        .call(
            Method::POST,
            "/v1/workflows",
            &editor,
            Some(draft["workflow"].clone()),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{stored}");
    let (_, runs) = api.call(Method::GET, "/v1/runs", &editor, None).await;
    assert_eq!(runs["items"], json!([]), "generating ran something");

    // The `:generate` spelling does the same.
    let (status, other) = api
        .call(
            Method::POST,
            "/v1/workflows:generate",
            &editor,
            Some(json!({"description": DESCRIPTION, "name": "named-by-me"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{other}");
    assert_eq!(other["draft"]["workflow"]["name"], "named-by-me");

    // Lists page newest first.
    let viewer = user(&tenant, "viewer");
    let (status, page) = api
        .call(Method::GET, "/v1/generations?limit=1", &viewer, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{page}");
    assert_eq!(page["items"][0]["id"], other["id"]);
    let cursor = page["next_cursor"].as_str().expect("a second page");
    let (_, rest) = api
        .call(
            Method::GET,
            &format!("/v1/generations?limit=1&cursor={cursor}"),
            &viewer,
            None,
        )
        .await;
    assert_eq!(rest["items"][0]["id"], created["id"]);
    assert!(rest["next_cursor"].is_null(), "{rest}");
    api.stop().await;
}

#[tokio::test]
async fn secret_values_in_descriptions_are_never_stored_or_shown() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let created = generate(
        &api,
        &editor,
        "load the data from https://example.com/d.csv with token ghp_0123456789abcdefghijklmnopqrstuvwxyzAB, then train an xgboost model, then evaluate it",
    )
    .await;
    let id = created["id"].as_str().unwrap();
    let (status, revised) = api
        .call(
            Method::POST,
            &format!("/v1/generations/{id}/feedback"),
            &editor,
            Some(
                json!({"text": "use 2 GPUs with token ghp_hunter2hunter2hunter2hunter2hunter2AB"}),
            ),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{revised}");
    let (_, read) = api
        .call(Method::GET, &format!("/v1/generations/{id}"), &editor, None)
        .await;
    for body in [&created, &revised, &read] {
        let text = body.to_string();
        assert!(!text.contains("ghp_0123456789"), "{text}");
        assert!(!text.contains("ghp_hunter2"), "{text}");
    }
    assert!(
        created["description"]
            .as_str()
            .unwrap()
            .contains("train an xgboost model")
    );
    // Nor in any row of the tables holding a generation's text.
    let pool = api.pool().await;
    for table in ["generations", "generation_drafts"] {
        let query = format!("SELECT count(*) FROM {table} t WHERE t::text LIKE '%ghp\\_%'");
        let (rows,): (i64,) = sqlx::query_as(sqlx::AssertSqlSafe(query))
            .fetch_one(&pool)
            .await
            .unwrap();
        assert_eq!(rows, 0, "{table} holds a secret");
    }
    let (rows,): (i64,) = sqlx::query_as("SELECT count(*) FROM generation_drafts")
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(rows, 2, "both drafts are stored");
    pool.close().await;
    api.stop().await;
}

#[tokio::test]
async fn descriptions_nothing_can_be_drafted_from_are_422_with_paths() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    for (body, path) in [
        (
            json!({"description": "do the thing with the stuff"}),
            "/description",
        ),
        (json!({"description": "  "}), "/description"),
        // Found by schemathesis: a name a workflow cannot have was a 500.
        (
            json!({"name": "MODEL", "description": "train LSTM/GRU/SVM"}),
            "/name",
        ),
        (json!({"name": "", "description": "train a model"}), "/name"),
    ] {
        let (status, problem) = api
            .call(Method::POST, "/v1/generations", &editor, Some(body))
            .await;
        assert_problem(
            status,
            &problem,
            StatusCode::UNPROCESSABLE_ENTITY,
            "validation_failed",
        );
        assert_eq!(problem["problems"][0]["path"], path, "{problem}");
    }
    let (_, list) = api
        .call(Method::GET, "/v1/generations", &editor, None)
        .await;
    assert_eq!(list["items"], json!([]), "a failed generation was stored");
    api.stop().await;
}

#[tokio::test]
async fn feedback_revises_the_draft_and_keeps_every_draft() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let editor = user(&tenant, "editor");
    let created = generate(&api, &editor, DESCRIPTION).await;
    let id = created["id"].as_str().unwrap();
    assert!(step(&created["draft"], "train-xgboost")["resources"]["gpu"].is_null());

    let feedback = format!("/v1/generations/{id}/feedback");
    let (status, second) = api
        .call(
            Method::POST,
            &feedback,
            &editor,
            Some(json!({"text": "use 4 GPUs for training"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{second}");
    assert_eq!(second["current_draft"], 2);
    assert_eq!(second["draft"]["n"], 2);
    assert_eq!(second["draft"]["feedback"], "use 4 GPUs for training");
    assert_eq!(
        step(&second["draft"], "train-xgboost")["resources"]["gpu"],
        4
    );

    // A second round keeps the first round's request in force.
    let (status, third) = api
        .call(
            Method::POST,
            &feedback,
            &editor,
            Some(json!({"text": "retry every step up to 5 times"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{third}");
    let train = step(&third["draft"], "train-xgboost");
    assert_eq!(train["resources"]["gpu"], 4, "{train}");
    assert_ne!(third["draft"]["workflow"], second["draft"]["workflow"]);

    let viewer = user(&tenant, "viewer");
    let (status, read) = api
        .call(Method::GET, &format!("/v1/generations/{id}"), &viewer, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{read}");
    assert_eq!(read["draft"]["n"], 3);
    let history: Vec<(i64, Value)> = read["history"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["n"].as_i64().unwrap(), d["feedback"].clone()))
        .collect();
    assert_eq!(
        history,
        [
            (1, Value::Null),
            (2, json!("use 4 GPUs for training")),
            (3, json!("retry every step up to 5 times")),
        ]
    );
    let (status, first) = api
        .call(
            Method::GET,
            &format!("/v1/generations/{id}/drafts/1"),
            &viewer,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert_eq!(first["workflow"], created["draft"]["workflow"]);
    let (status, body) = api
        .call(
            Method::GET,
            &format!("/v1/generations/{id}/drafts/4"),
            &viewer,
            None,
        )
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    let (status, body) = api
        .call(Method::POST, &feedback, &editor, Some(json!({"text": ""})))
        .await;
    assert_problem(
        status,
        &body,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(body["problems"][0]["path"], "/text");
    api.stop().await;
}

#[tokio::test]
async fn tenants_see_only_their_own_generations_and_templates() {
    let api = TestApi::start().await;
    let a = api.tenant("acme").await;
    let b = api.tenant("bravo").await;
    let created = generate(&api, &user(&a, "editor"), DESCRIPTION).await;
    let id = created["id"].as_str().unwrap();
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/step-library",
            &user(&a, "admin"),
            Some(quokka_template("quokkanet-trainer")),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let b_admin = user(&b, "admin");
    for (method, path, body) in [
        (Method::GET, format!("/v1/generations/{id}"), None),
        (Method::GET, format!("/v1/generations/{id}/drafts/1"), None),
        (
            Method::POST,
            format!("/v1/generations/{id}/feedback"),
            Some(json!({"text": "use 4 GPUs"})),
        ),
        (
            Method::GET,
            "/v1/step-library/quokkanet-trainer".into(),
            None,
        ),
        (
            Method::PUT,
            "/v1/step-library/quokkanet-trainer".into(),
            Some(quokka_template("quokkanet-trainer")),
        ),
        (
            Method::DELETE,
            "/v1/step-library/quokkanet-trainer".into(),
            None,
        ),
    ] {
        let (status, problem) = api.call(method.clone(), &path, &b_admin, body).await;
        assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    }
    for list in ["/v1/generations", "/v1/step-library"] {
        let (status, page) = api.call(Method::GET, list, &b_admin, None).await;
        assert_eq!(status, StatusCode::OK, "{page}");
        assert_eq!(page["items"], json!([]), "{list} leaks");
    }
    // A's template is still there, untouched by B's attempts.
    let (status, kept) = api
        .call(
            Method::GET,
            "/v1/step-library/quokkanet-trainer",
            &user(&a, "viewer"),
            None,
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    api.stop().await;
}

#[tokio::test]
async fn a_tenant_template_wins_for_its_words_in_that_tenant_only() {
    let api = TestApi::start().await;
    let a = api.tenant("acme").await;
    let b = api.tenant("bravo").await;
    let admin = user(&a, "admin");
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/step-library",
            &admin,
            Some(quokka_template("quokkanet-trainer")),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let description = "load the data from https://example.com/d.csv, then train a quokkanet model, then evaluate it";
    // Steps are named from the request's words.
    let train = "train-quokkanet-model";
    let in_a = generate(&api, &user(&a, "editor"), description).await;
    assert_eq!(template_of(&in_a["draft"], train), "quokkanet-trainer");
    assert_eq!(
        step(&in_a["draft"], train)["container"]["command"][2],
        "print('quokka')"
    );
    let in_b = generate(&api, &user(&b, "editor"), description).await;
    assert_ne!(template_of(&in_b["draft"], train), "quokkanet-trainer");

    let (status, _) = api
        .call(
            Method::DELETE,
            "/v1/step-library/quokkanet-trainer",
            &admin,
            None,
        )
        .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let after = generate(&api, &user(&a, "editor"), description).await;
    assert_ne!(template_of(&after["draft"], train), "quokkanet-trainer");
    api.stop().await;
}

#[tokio::test]
async fn invalid_templates_are_422_with_every_path_and_names_are_unique() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let mut bad = quokka_template("Not_A_Label");
    bad["description"] = json!("");
    bad["step"]["container"]["image"] = json!(42);
    let (status, problem) = api
        .call(Method::POST, "/v1/step-library", &admin, Some(bad))
        .await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let paths: Vec<&str> = problem["problems"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["path"].as_str().unwrap())
        .collect();
    assert!(paths.contains(&"/id"), "{problem}");
    assert!(paths.contains(&"/description"), "{problem}");
    assert!(paths.contains(&"/step/container/image"), "{problem}");

    let mut unknown_kind = quokka_template("ok-name");
    unknown_kind["kind"] = json!("juggle");
    let (status, problem) = api
        .call(Method::POST, "/v1/step-library", &admin, Some(unknown_kind))
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["problems"][0]["path"], "/kind");

    let (status, problem) = api
        .call(
            Method::POST,
            "/v1/step-library",
            &admin,
            Some(quokka_template("train-gbdt")),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["problems"][0]["path"], "/id");

    let good = quokka_template("quokkanet-trainer");
    let (status, _) = api
        .call(Method::POST, "/v1/step-library", &admin, Some(good.clone()))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, problem) = api
        .call(Method::POST, "/v1/step-library", &admin, Some(good.clone()))
        .await;
    assert_problem(
        status,
        &problem,
        StatusCode::CONFLICT,
        "step_template_exists",
    );
    let (status, problem) = api
        .call(
            Method::PUT,
            "/v1/step-library/another-name",
            &admin,
            Some(good.clone()),
        )
        .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let mut changed = good;
    changed["keywords"] = json!(["wombat"]);
    let (status, updated) = api
        .call(
            Method::PUT,
            "/v1/step-library/quokkanet-trainer",
            &admin,
            Some(changed),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{updated}");
    assert_eq!(updated["template"]["keywords"], json!(["wombat"]));
    api.stop().await;
}

/// Tokens spent this month, as the generator's LLM calls would record them.
async fn spend(api: &TestApi, tenant: &str, tokens: i64) {
    let pool = api.pool().await;
    let tenant: couler_store::TenantId = tenant.parse().unwrap();
    let mut tx = couler_store::Store::from_pool(pool.clone())
        .tenant(tenant)
        .await
        .unwrap();
    couler_store::llm_usage::record(&mut tx, tenant, tokens / 2, tokens - tokens / 2)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    pool.close().await;
}

#[tokio::test]
async fn budgets_are_set_by_the_platform_and_exhaustion_falls_back_offline() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let viewer = user(&tenant, "viewer");
    let (status, usage) = api.call(Method::GET, "/v1/llm-usage", &viewer, None).await;
    assert_eq!(status, StatusCode::OK, "{usage}");
    assert!(usage["monthly_budget"].is_null() && usage["tokens_left"].is_null());
    assert_eq!(usage["used_tokens"], 0);

    let budget = format!("/v1/tenants/{tenant}/llm-budget");
    let (status, problem) = api
        .call(
            Method::PUT,
            &budget,
            &user(&tenant, "admin"),
            Some(json!({"monthly_budget": 1_000_000})),
        )
        .await;
    assert_problem(status, &problem, StatusCode::FORBIDDEN, "forbidden");
    let (status, set) = api
        .call(
            Method::PUT,
            &budget,
            &api.platform_token,
            Some(json!({"monthly_budget": 1000})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{set}");
    assert_eq!(set["tokens_left"], 1000);

    spend(&api, &tenant, 700).await;
    spend(&api, &tenant, 600).await;
    let (_, usage) = api.call(Method::GET, "/v1/llm-usage", &viewer, None).await;
    assert_eq!(usage["used_tokens"], 1300, "{usage}");
    assert_eq!(usage["requests"], 2);
    assert_eq!(usage["tokens_left"], 0, "{usage}");

    // Over budget, generation still works, drafted offline for free.
    let created = generate(&api, &user(&tenant, "editor"), DESCRIPTION).await;
    assert_eq!(created["draft"]["author"]["kind"], "offline");
    let (_, usage) = api.call(Method::GET, "/v1/llm-usage", &viewer, None).await;
    assert_eq!(usage["used_tokens"], 1300, "an offline draft was charged");

    let (status, unlimited) = api
        .call(
            Method::PUT,
            &budget,
            &api.platform_token,
            Some(json!({"monthly_budget": null})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{unlimited}");
    assert!(unlimited["tokens_left"].is_null(), "{unlimited}");
    let (status, problem) = api
        .call(
            Method::PUT,
            "/v1/tenants/tnt_0192aaaaaaaa7aaa8aaaaaaaaaaaaaaa/llm-budget",
            &api.platform_token,
            Some(json!({"monthly_budget": 5})),
        )
        .await;
    assert_problem(status, &problem, StatusCode::NOT_FOUND, "not_found");
    api.stop().await;
}

/// Sets the tenant's allowed images as its admin; returns the tenant view.
async fn allow_images(api: &TestApi, tenant: &str, patterns: Value) -> Value {
    let (status, view) = api
        .call(
            Method::PATCH,
            &format!("/v1/tenants/{tenant}"),
            &user(tenant, "admin"),
            Some(json!({"allowed_images": patterns})),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    view
}

const LSTM: &str = "load the data from https://example.com/d.csv, then train an LSTM";

#[tokio::test]
async fn a_tenant_narrows_the_platforms_allowed_images_for_itself_only() {
    let api = TestApi::start_with(|c| {
        c.generate.allowed_images = vec!["python:".into(), "pytorch/pytorch:".into()];
    })
    .await;
    let a = api.tenant("acme").await;
    let b = api.tenant("bravo").await;
    let fresh = allow_images(&api, &b, json!([])).await;
    assert_eq!(fresh["allowed_images"], json!([]), "{fresh}");
    let view = allow_images(&api, &a, json!(["python:3.12"])).await;
    assert_eq!(view["allowed_images"], json!(["python:3.12"]), "{view}");

    // The LSTM template's image passes the platform's policy, not acme's.
    let (status, problem) = api
        .call(
            Method::POST,
            "/v1/generations",
            &user(&a, "editor"),
            Some(json!({"description": LSTM})),
        )
        .await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(problem["problems"][0]["path"], "/description", "{problem}");
    let message = problem["problems"][0]["message"].as_str().unwrap();
    assert!(message.contains("pytorch/pytorch"), "{message}");
    assert!(message.contains("python:3.12"), "{message}");
    let in_b = generate(&api, &user(&b, "editor"), LSTM).await;
    assert!(
        step(&in_b["draft"], "train-lstm")["script"]["image"]
            .as_str()
            .unwrap()
            .starts_with("pytorch/pytorch:"),
        "{in_b}"
    );
    // Within acme's patterns, acme still generates.
    let in_a = generate(&api, &user(&a, "editor"), DESCRIPTION).await;

    // Revisions follow the policy in force when they are asked for.
    allow_images(&api, &a, json!(["docker.io/acme/"])).await;
    let feedback = format!("/v1/generations/{}/feedback", in_a["id"].as_str().unwrap());
    let ask = json!({"text": "use 4 GPUs for training"});
    let (status, problem) = api
        .call(
            Method::POST,
            &feedback,
            &user(&a, "editor"),
            Some(ask.clone()),
        )
        .await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    assert_eq!(problem["problems"][0]["path"], "/text", "{problem}");
    let message = problem["problems"][0]["message"].as_str().unwrap();
    assert!(message.contains("docker.io/acme/"), "{message}");
    let cleared = allow_images(&api, &a, json!([])).await;
    assert_eq!(cleared["allowed_images"], json!([]), "{cleared}");
    let (status, revised) = api
        .call(Method::POST, &feedback, &user(&a, "editor"), Some(ask))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{revised}");
    assert_eq!(revised["current_draft"], 2);
    api.stop().await;
}

#[tokio::test]
async fn invalid_image_patterns_are_400_with_their_path_and_change_nothing() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    allow_images(&api, &tenant, json!(["python:3.12"])).await;
    let path = format!("/v1/tenants/{tenant}");
    let admin = user(&tenant, "admin");
    let too_many: Vec<String> = (0..101).map(|i| format!("registry.example/{i}/")).collect();
    for (patterns, at) in [
        (json!([""]), "/allowed_images/0"),
        (json!(["python:3.12", "python 3.12"]), "/allowed_images/1"),
        (
            json!(["python:3.12", "alpine:", "ghcr.io/\n"]),
            "/allowed_images/2",
        ),
        (json!(["x".repeat(256)]), "/allowed_images/0"),
        (json!(too_many), "/allowed_images"),
    ] {
        let (status, problem) = api
            .call(
                Method::PATCH,
                &path,
                &admin,
                Some(json!({"allowed_images": patterns})),
            )
            .await;
        assert_problem(
            status,
            &problem,
            StatusCode::BAD_REQUEST,
            "invalid_image_pattern",
        );
        assert_eq!(problem["path"], at, "{problem}");
    }
    let (_, kept) = api.call(Method::GET, &path, &admin, None).await;
    assert_eq!(kept["allowed_images"], json!(["python:3.12"]), "{kept}");
    let longest = "x".repeat(255);
    let view = allow_images(&api, &tenant, json!([longest])).await;
    assert_eq!(view["allowed_images"], json!([longest]), "{view}");
    api.stop().await;
}

#[tokio::test]
async fn only_the_tenants_admins_set_its_allowed_images() {
    let api = TestApi::start().await;
    let a = api.tenant("acme").await;
    let b = api.tenant("bravo").await;
    allow_images(&api, &a, json!(["python:3.12"])).await;
    let path = format!("/v1/tenants/{a}");
    let change = json!({"allowed_images": ["docker.io/"]});
    for token in [user(&a, "editor"), user(&a, "viewer"), user(&b, "admin")] {
        let (status, problem) = api
            .call(Method::PATCH, &path, &token, Some(change.clone()))
            .await;
        // Another tenant's admin gets 403 too, as for every `/v1/tenants/{id}`.
        assert_problem(status, &problem, StatusCode::FORBIDDEN, "forbidden");
    }
    let (status, kept) = api.call(Method::GET, &path, &user(&a, "admin"), None).await;
    assert_eq!(status, StatusCode::OK, "{kept}");
    assert_eq!(kept["allowed_images"], json!(["python:3.12"]), "{kept}");
    let (_, other) = api
        .call(
            Method::GET,
            &format!("/v1/tenants/{b}"),
            &user(&b, "admin"),
            None,
        )
        .await;
    assert_eq!(other["allowed_images"], json!([]), "{other}");
    api.stop().await;
}
