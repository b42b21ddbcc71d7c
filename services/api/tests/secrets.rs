//! `/v1/secrets` against a real API and Postgres: roles, versions, delete,
//! the audit trail, tenant isolation (backed by row-level security), values
//! that never leave (responses, problems, logs, the table), key rotation,
//! and runs refused for secrets the tenant does not have.

mod common;
use common::*;
use couler_secrets::{Keyring, SecretsConfig, generate_key};
use couler_store::TenantId;
use reqwest::{Method, StatusCode};
use secrecy::{ExposeSecret, SecretString};
use serde_json::{Value, json};

fn keys(pairs: &[(&str, &SecretString)], active: &str) -> SecretsConfig {
    SecretsConfig {
        keys: pairs
            .iter()
            .map(|(id, k)| (id.to_string(), (*k).clone()))
            .collect(),
        active_key: Some(active.into()),
    }
}

async fn start_with_key(key: &SecretString) -> TestApi {
    let secrets = keys(&[("k1", key)], "k1");
    TestApi::start_with(move |c| c.secrets = secrets).await
}

async fn put(api: &TestApi, token: &str, name: &str, data: Value) -> (StatusCode, Value) {
    api.call(
        Method::PUT,
        &format!("/v1/secrets/{name}"),
        token,
        Some(json!({ "data": data })),
    )
    .await
}

#[tokio::test]
async fn roles_versions_delete_and_audit() {
    let api = start_with_key(&generate_key()).await;
    let tenant = api.tenant("acme").await;
    let (admin, editor, viewer) = (
        user(&tenant, "admin"),
        user(&tenant, "editor"),
        user(&tenant, "viewer"),
    );

    let (status, v1) = put(&api, &admin, "db", json!({"user": "u", "password": "p1"})).await;
    assert_eq!(status, StatusCode::OK, "{v1}");
    assert_eq!(v1["version"], 1);
    assert_eq!(v1["keys"], json!(["password", "user"]));
    assert_eq!(v1["updated_by"], format!("admin@{tenant}"));
    assert!(v1.get("data").is_none(), "{v1}");
    let (_, v2) = put(&api, &admin, "db", json!({"password": "p2"})).await;
    assert_eq!(v2["version"], 2);
    assert_eq!(v2["keys"], json!(["password"]));

    // Viewers see nothing; editors list and read metadata but never write.
    let (status, body) = api.call(Method::GET, "/v1/secrets", &viewer, None).await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = api.call(Method::GET, "/v1/secrets/db", &viewer, None).await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, list) = api.call(Method::GET, "/v1/secrets", &editor, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["items"][0]["name"], "db");
    assert_eq!(list["items"][0]["version"], 2);
    assert!(list["items"][0]["updated_at"].is_string());
    let (status, body) = put(&api, &editor, "db", json!({"x": "y"})).await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = api
        .call(Method::DELETE, "/v1/secrets/db", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");
    let (status, body) = api
        .call(Method::GET, "/v1/secrets:audit", &editor, None)
        .await;
    assert_problem(status, &body, StatusCode::FORBIDDEN, "forbidden");

    let (status, gone) = api
        .call(Method::DELETE, "/v1/secrets/db", &admin, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{gone}");
    assert_eq!(gone["version"], 2);
    let (status, body) = api.call(Method::GET, "/v1/secrets/db", &admin, None).await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(body["path"], "/name");
    let (status, body) = api
        .call(Method::DELETE, "/v1/secrets/db", &admin, None)
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    // Versions count on after a delete.
    let (_, v3) = put(&api, &admin, "db", json!({"password": "p3"})).await;
    assert_eq!(v3["version"], 3);
    let (_, other) = put(&api, &admin, "other", json!({"k": "v"})).await;
    assert_eq!(other["version"], 1);

    let (status, audit) = api
        .call(Method::GET, "/v1/secrets:audit?name=db", &admin, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{audit}");
    let entries: Vec<(String, i64)> = audit["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            assert_eq!(e["actor"], format!("admin@{tenant}"), "{e}");
            assert!(e["at"].is_string(), "{e}");
            (
                e["action"].as_str().unwrap().to_owned(),
                e["version"].as_i64().unwrap(),
            )
        })
        .collect();
    let expected = [("put", 3), ("delete", 2), ("put", 2), ("put", 1)];
    assert_eq!(
        entries,
        expected.map(|(a, v)| (a.to_owned(), v)).to_vec(),
        "{audit}"
    );
    assert!(!audit.to_string().contains("p1") && !audit.to_string().contains("p3"));
    // Paged, newest first.
    let (_, page) = api
        .call(Method::GET, "/v1/secrets:audit?limit=2", &admin, None)
        .await;
    assert_eq!(page["items"][0]["name"], "other");
    let cursor = page["next_cursor"].as_str().unwrap().to_owned();
    let (_, rest) = api
        .call(
            Method::GET,
            &format!("/v1/secrets:audit?limit=10&cursor={cursor}"),
            &admin,
            None,
        )
        .await;
    assert_eq!(rest["items"].as_array().unwrap().len(), 3, "{rest}");
    assert!(rest.get("next_cursor").is_none(), "{rest}");
    api.stop().await;
}

#[tokio::test]
async fn bad_requests_are_problems_at_their_place() {
    let api = start_with_key(&generate_key()).await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let cases: Vec<(String, Value, &str, String)> = vec![
        (
            "Bad_Name".into(),
            json!({"data": {"k": "v"}}),
            "invalid_secret_name",
            "/name".into(),
        ),
        (
            "a".repeat(254),
            json!({"data": {"k": "v"}}),
            "invalid_secret_name",
            "/name".into(),
        ),
        (
            "db".into(),
            json!({"data": {"bad key": "v"}}),
            "invalid_secret_key",
            "/data/bad key".into(),
        ),
        (
            "db".into(),
            json!({"data": {}}),
            "empty_secret",
            "/data".into(),
        ),
        (
            "db".into(),
            json!({"data": (0..65).map(|i| (format!("k{i}"), json!("v"))).collect::<serde_json::Map<_, _>>()}),
            "secret_too_large",
            "/data".into(),
        ),
        (
            "db".into(),
            json!({"data": {"big": "x".repeat(64 * 1024)}}),
            "secret_too_large",
            "/data".into(),
        ),
        (
            "db".into(),
            json!({"value": {"k": "v"}}),
            "invalid_body",
            "/value".into(),
        ),
    ];
    for (name, body, code, path) in cases {
        let (status, problem) = api
            .call(
                Method::PUT,
                &format!("/v1/secrets/{name}"),
                &admin,
                Some(body),
            )
            .await;
        assert_problem(status, &problem, StatusCode::BAD_REQUEST, code);
        assert_eq!(problem["path"], path, "{problem}");
    }
    // Exactly at the limit is fine.
    let (status, body) = put(
        &api,
        &admin,
        "db",
        json!({"big": "x".repeat(64 * 1024 - 3)}),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = api
        .call(Method::GET, "/v1/secrets/missing", &admin, None)
        .await;
    assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    assert_eq!(body["path"], "/name");
    api.stop().await;
}

#[tokio::test]
async fn without_keys_writes_are_refused_and_the_service_runs() {
    let api = TestApi::start_with(|c| c.secrets = SecretsConfig::default()).await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let (status, body) = put(&api, &admin, "db", json!({"k": "v"})).await;
    assert_problem(
        status,
        &body,
        StatusCode::SERVICE_UNAVAILABLE,
        "secrets_not_configured",
    );
    let (status, list) = api.call(Method::GET, "/v1/secrets", &admin, None).await;
    assert_eq!(status, StatusCode::OK, "{list}");
    assert_eq!(list["items"], json!([]));
    api.stop().await;
}

#[tokio::test]
async fn tenants_never_see_or_touch_each_others_secrets() {
    let api = start_with_key(&generate_key()).await;
    let a = api.tenant("alpha").await;
    let b = api.tenant("beta").await;
    let (admin_a, admin_b) = (user(&a, "admin"), user(&b, "admin"));
    let (status, _) = put(&api, &admin_a, "db", json!({"password": "alpha-pw"})).await;
    assert_eq!(status, StatusCode::OK);

    let (_, list) = api.call(Method::GET, "/v1/secrets", &admin_b, None).await;
    assert_eq!(list["items"], json!([]));
    for method in [Method::GET, Method::DELETE] {
        let (status, body) = api.call(method, "/v1/secrets/db", &admin_b, None).await;
        assert_problem(status, &body, StatusCode::NOT_FOUND, "not_found");
    }
    let (_, audit) = api
        .call(Method::GET, "/v1/secrets:audit", &admin_b, None)
        .await;
    assert_eq!(audit["items"], json!([]));
    // B's `db` is its own: A's stays as it was.
    let (_, theirs) = put(&api, &admin_b, "db", json!({"other": "beta-pw"})).await;
    assert_eq!(theirs["version"], 1);
    let (_, ours) = api
        .call(Method::GET, "/v1/secrets/db", &admin_a, None)
        .await;
    assert_eq!(ours["version"], 1);
    assert_eq!(ours["keys"], json!(["password"]));
    assert_eq!(ours["updated_by"], format!("admin@{a}"));

    // Row-level security backs the filters: as `couler_app` with B set,
    // A's rows do not exist, even unfiltered, and cannot be changed.
    let pool = api.pool().await;
    let a_id: TenantId = a.parse().unwrap();
    let b_id: TenantId = b.parse().unwrap();
    let mut tx = pool.begin().await.unwrap();
    sqlx::query(
        "SELECT set_config('role', 'couler_app', true), set_config('couler.tenant_id', $1, true)",
    )
    .bind(b_id.0.to_string())
    .execute(&mut *tx)
    .await
    .unwrap();
    let seen: Vec<(uuid::Uuid,)> = sqlx::query_as("SELECT tenant_id FROM secrets")
        .fetch_all(&mut *tx)
        .await
        .unwrap();
    assert_eq!(seen, [(b_id.0,)]);
    let audit_seen: i64 =
        sqlx::query_scalar("SELECT count(*) FROM secret_audit WHERE tenant_id = $1")
            .bind(a_id.0)
            .fetch_one(&mut *tx)
            .await
            .unwrap();
    assert_eq!(audit_seen, 0);
    let changed = sqlx::query("UPDATE secrets SET updated_by = 'mallory' WHERE tenant_id = $1")
        .bind(a_id.0)
        .execute(&mut *tx)
        .await
        .unwrap();
    assert_eq!(changed.rows_affected(), 0);
    let deleted = sqlx::query("DELETE FROM secrets WHERE tenant_id = $1")
        .bind(a_id.0)
        .execute(&mut *tx)
        .await
        .unwrap();
    assert_eq!(deleted.rows_affected(), 0);
    // Nor can B write a row in A's name.
    let forged = sqlx::query(
        "INSERT INTO secrets (tenant_id, name, version, keys, key_id, dek_nonce, wrapped_dek, nonce, ciphertext, updated_by)
         VALUES ($1, 'forged', 1, '{}', 'k1', '', '', '', '', 'mallory')",
    )
    .bind(a_id.0)
    .execute(&mut *tx)
    .await;
    assert!(forged.is_err(), "row-level security let B write A's row");
    drop(tx);
    pool.close().await;
    api.stop().await;
}

/// Captures everything the service logs (at trace level) in this process.
fn captured_logs() -> &'static std::sync::Mutex<Vec<u8>> {
    static LOGS: std::sync::OnceLock<&'static std::sync::Mutex<Vec<u8>>> =
        std::sync::OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer: &'static std::sync::Mutex<Vec<u8>> =
            Box::leak(Box::new(std::sync::Mutex::new(Vec::new())));
        let subscriber = tracing_subscriber::fmt()
            .json()
            .with_max_level(tracing::Level::TRACE)
            .with_writer(move || Writer(buffer))
            .finish();
        tracing::subscriber::set_global_default(subscriber).unwrap();
        buffer
    })
}

struct Writer(&'static std::sync::Mutex<Vec<u8>>);

impl std::io::Write for Writer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn values_never_leave_and_are_encrypted_at_rest() {
    let logs = captured_logs();
    let key = generate_key();
    let api = start_with_key(&key).await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let value = format!("value-{}", uuid::Uuid::new_v4().simple());
    let mut bodies = Vec::new();

    let (status, body) = put(&api, &admin, "db", json!({"password": value})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    bodies.push(body);
    // Bodies serde cannot read quote nothing of what they hold.
    for bad in [
        json!({"data": value}),
        json!({"data": {"password": [value]}}),
        json!({"data": {"n": 5, "password": value}}),
        json!({"data": {"bad key": value}}),
        json!({"data": {"password": value}, "extra": value}),
    ] {
        let (status, problem) = api
            .call(Method::PUT, "/v1/secrets/db", &admin, Some(bad))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
        bodies.push(problem);
    }
    let (status, problem) = send_text(
        &api,
        Method::PUT,
        "/v1/secrets/db",
        &admin,
        "application/yaml",
        format!("data: [{value}\n  password: {value}\n"),
    )
    .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{problem}");
    bodies.push(problem);
    for path in ["/v1/secrets", "/v1/secrets/db", "/v1/secrets:audit"] {
        let (status, body) = api.call(Method::GET, path, &admin, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        bodies.push(body);
    }
    for body in &bodies {
        assert!(!body.to_string().contains(&value), "leaked: {body}");
    }

    // At rest: nothing of the value, in any column of either table.
    let pool = api.pool().await;
    let rows: Vec<(String, Vec<u8>, Vec<u8>)> = sqlx::query_as(
        "SELECT s::text, ciphertext, wrapped_dek FROM secrets s UNION ALL SELECT a::text, '', '' FROM secret_audit a",
    )
    .fetch_all(&pool)
    .await
    .unwrap();
    assert_eq!(rows.len(), 2);
    for (text, ciphertext, wrapped) in &rows {
        assert!(!text.contains(&value), "{text}");
        for bytes in [ciphertext, wrapped] {
            assert!(!bytes.windows(value.len()).any(|w| w == value.as_bytes()));
        }
    }
    // The scheduler's door opens it.
    let store = api.store().await;
    let tenant_id: TenantId = tenant.parse().unwrap();
    let keyring = Keyring::from_config(&keys(&[("k1", &key)], "k1"))
        .unwrap()
        .unwrap();
    let mut tx = store.tenant(tenant_id).await.unwrap();
    let revealed = couler_store::secrets::reveal(
        &mut tx,
        &keyring,
        tenant_id,
        &["db".to_owned(), "nope".to_owned()],
    )
    .await
    .unwrap();
    tx.commit().await.unwrap();
    assert_eq!(
        revealed.secrets["db"]["password"].expose_secret(),
        value.as_str()
    );
    assert_eq!(
        revealed.missing.into_iter().collect::<Vec<_>>(),
        ["nope".to_owned()]
    );

    let logged = String::from_utf8_lossy(&logs.lock().unwrap()).into_owned();
    assert!(
        logged.contains("secret written"),
        "the capture saw the service's logs"
    );
    assert!(!logged.contains(&value), "a secret value reached the logs");
    pool.close().await;
    api.stop().await;
}

#[tokio::test]
async fn rotation_rewraps_every_data_key_and_old_rows_still_open() {
    let (k1, k2) = (generate_key(), generate_key());
    let api = start_with_key(&k1).await;
    let a = api.tenant("alpha").await;
    let b = api.tenant("beta").await;
    for (tenant, value) in [(&a, "alpha-value"), (&b, "beta-value")] {
        let (status, body) = put(&api, &user(tenant, "admin"), "db", json!({"v": value})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let store = api.store().await;
    let reveal = |ring: Keyring, tenant: String| {
        let store = store.clone();
        async move {
            let tenant: TenantId = tenant.parse().unwrap();
            let mut tx = store.tenant(tenant).await.unwrap();
            couler_store::secrets::reveal(&mut tx, &ring, tenant, &["db".to_owned()]).await
        }
    };
    let ring = |pairs: &[(&str, &SecretString)], active: &str| {
        Keyring::from_config(&keys(pairs, active)).unwrap().unwrap()
    };
    // With k2 active and k1 still configured, rows under k1 open.
    let opened = reveal(ring(&[("k1", &k1), ("k2", &k2)], "k2"), a.clone())
        .await
        .unwrap();
    assert_eq!(opened.secrets["db"]["v"].expose_secret(), "alpha-value");

    let mut config = config(&api.database);
    config.secrets = keys(&[("k1", &k1), ("k2", &k2)], "k2");
    let done = couler_api::admin::rewrap_secrets(&config, 1).await.unwrap();
    assert_eq!((done.rewrapped, done.batches), (2, 2));
    let again = couler_api::admin::rewrap_secrets(&config, 1).await.unwrap();
    assert_eq!(again.rewrapped, 0);
    let pool = api.pool().await;
    let ids: Vec<String> = sqlx::query_scalar("SELECT key_id FROM secrets")
        .fetch_all(&pool)
        .await
        .unwrap();
    assert_eq!(ids, ["k2", "k2"]);
    // k1 may go now; without k2 nothing opens, and the error says which key.
    for (tenant, value) in [(&a, "alpha-value"), (&b, "beta-value")] {
        let opened = reveal(ring(&[("k2", &k2)], "k2"), tenant.clone())
            .await
            .unwrap();
        assert_eq!(opened.secrets["db"]["v"].expose_secret(), value);
    }
    let err = reveal(ring(&[("k1", &k1)], "k1"), a.clone())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("\"k2\""), "{err}");
    pool.close().await;
    api.stop().await;
}

const READS_SECRET: &str = r#"
apiVersion: couler.dev/v1alpha1
name: reads-secret
steps:
  - name: fetch
    container:
      image: alpine:3.20
      command: [sh, -c, "echo ok"]
      env:
        - {name: PLAIN, value: "x"}
        - name: DB_USER
          secret: {name: db, key: user}
  - name: train
    depends: [fetch]
    container:
      image: alpine:3.20
      env:
        - name: TOKEN
          secret: {name: hub, key: token}
"#;

#[tokio::test]
async fn runs_are_refused_for_secrets_the_tenant_does_not_have() {
    let api = start_with_key(&generate_key()).await;
    let tenant = api.tenant("acme").await;
    let (admin, editor) = (user(&tenant, "admin"), user(&tenant, "editor"));
    create_workflow(&api, &editor, READS_SECRET).await;
    let ir: Value = serde_saphyr::from_str(READS_SECRET).unwrap();
    let run = |body: Value| {
        let api = &api;
        let editor = editor.clone();
        async move {
            api.call(Method::POST, "/v1/runs", &editor, Some(body))
                .await
        }
    };

    // Neither secret: both steps named, each at its reference.
    let (status, problem) = run(json!({"ir": ir})).await;
    assert_problem(
        status,
        &problem,
        StatusCode::UNPROCESSABLE_ENTITY,
        "validation_failed",
    );
    let items = problem["problems"].as_array().unwrap();
    assert_eq!(items.len(), 2, "{problem}");
    assert_eq!(items[0]["code"], "unknown_secret");
    assert_eq!(items[0]["path"], "/ir/steps/0/container/env/1/secret/name");
    assert!(
        items[0]["message"].as_str().unwrap().contains("\"fetch\"")
            && items[0]["message"].as_str().unwrap().contains("\"db\""),
        "{problem}"
    );
    assert_eq!(items[1]["path"], "/ir/steps/1/container/env/0/secret/name");
    assert_eq!(problem["path"], "/ir/steps/0/container/env/1/secret/name");

    // `db` without the key `user`, `hub` with its key.
    put(&api, &admin, "db", json!({"password": "p"})).await;
    put(&api, &admin, "hub", json!({"token": "t"})).await;
    let (status, problem) = run(json!({"workflow": "reads-secret"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    let items = problem["problems"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{problem}");
    assert_eq!(items[0]["code"], "unknown_secret_key");
    assert_eq!(items[0]["path"], "/workflow");
    let message = items[0]["message"].as_str().unwrap();
    assert!(
        message.contains("\"fetch\"")
            && message.contains("\"user\"")
            && message.contains("/steps/0/container/env/1/secret/key"),
        "{message}"
    );

    put(&api, &admin, "db", json!({"user": "u", "password": "p"})).await;
    let (status, body) = run(json!({"workflow": "reads-secret"})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = run(json!({"ir": ir})).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // Workflows without secrets are untouched by all this.
    create_workflow(&api, &editor, DIAMOND).await;
    run_diamond(&api, &editor).await;

    api.call(Method::DELETE, "/v1/secrets/hub", &admin, None)
        .await;
    let (status, problem) = run(json!({"workflow": "reads-secret"})).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{problem}");
    assert_eq!(problem["problems"][0]["code"], "unknown_secret");
    assert!(
        problem["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("\"train\""),
        "{problem}"
    );
    api.stop().await;
}
