//! A real `couler-api` per test: its own database (created and migrated by
//! the service itself), its own Redis key prefix, an ephemeral port.

#![allow(dead_code)]

use couler_api::config::Config;
use jsonwebtoken::{EncodingKey, Header};
use reqwest::{Method, Response, StatusCode};
use secrecy::SecretString;
use serde_json::{Value, json};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub const SECRET: &str = "test-secret-that-is-long-enough-for-hs256";
pub const PG: &str = "postgres://postgres@127.0.0.1:5432";

pub struct TestApi {
    pub base: String,
    pub client: reqwest::Client,
    pub database: String,
    pub shutdown: CancellationToken,
    pub platform_token: String,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
}

pub fn config(database: &str) -> Config {
    let mut config = Config::default();
    config.database.url = SecretString::from(format!("{PG}/{database}"));
    config.database.max_connections = 4;
    config.auth.jwt.hs256_secret = Some(SecretString::from(SECRET));
    config.redis.key_prefix = format!("couler-test-{}", uuid::Uuid::new_v4().simple());
    config.secrets.keys = [("test".to_owned(), couler_secrets::generate_key())].into();
    config
}

impl TestApi {
    pub async fn start() -> TestApi {
        Self::start_with(|_| {}).await
    }

    pub async fn start_with(tweak: impl FnOnce(&mut Config)) -> TestApi {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let database = format!("couler_test_{}", uuid::Uuid::new_v4().simple());
        let mut config = config(&database);
        tweak(&mut config);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(couler_api::serve(config, listener, shutdown.clone()));
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let api = TestApi {
            base,
            client,
            database,
            shutdown,
            platform_token: token(json!({"sub": "platform-operator", "roles": ["platform-admin"]})),
            server,
        };
        for _ in 0..300 {
            if let Ok(r) = api.client.get(api.url("/healthz")).send().await
                && r.status().is_success()
            {
                return api;
            }
            assert!(
                !api.server.is_finished(),
                "the server exited during start-up"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the server did not start");
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }

    /// A request with a bearer token.
    pub fn request(&self, method: Method, path: &str, token: &str) -> reqwest::RequestBuilder {
        self.client
            .request(method, self.url(path))
            .bearer_auth(token)
    }

    pub async fn call(
        &self,
        method: Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (StatusCode, Value) {
        let mut req = self.request(method, path, token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        read(req.send().await.unwrap()).await
    }

    /// Creates a tenant and returns its id.
    pub async fn tenant(&self, name: &str) -> String {
        self.tenant_with(name, json!({})).await
    }

    pub async fn tenant_with(&self, name: &str, extra: Value) -> String {
        let mut body = json!({"name": name});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (status, t) = self
            .call(
                Method::POST,
                "/v1/tenants",
                &self.platform_token,
                Some(body),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{t}");
        t["id"].as_str().unwrap().to_owned()
    }

    /// A pool on the service's database as its owner, for what a test
    /// checks or arranges behind the API (row-level security does not apply).
    pub async fn pool(&self) -> sqlx::PgPool {
        sqlx::PgPool::connect(&format!("{PG}/{}", self.database))
            .await
            .unwrap()
    }

    /// The store on the service's database, as the scheduler opens it.
    pub async fn store(&self) -> couler_store::Store {
        let config = couler_store::StoreConfig::new(format!("{PG}/{}", self.database));
        couler_store::Store::connect(&config).await.unwrap()
    }

    /// Moves a run through the scheduler's states, as the scheduler will,
    /// each transition with the message "moved by the test".
    pub async fn advance(&self, tenant: &str, run: &str, path: &[couler_store::RunStatus]) {
        let store = self.store().await;
        let tenant: couler_store::TenantId = tenant.parse().unwrap();
        for &to in path {
            let mut tx = store.tenant(tenant).await.unwrap();
            let current = couler_store::runs::get(&mut tx, tenant, run.parse().unwrap())
                .await
                .unwrap()
                .unwrap();
            current.status.transition(to).unwrap();
            couler_store::runs::set_status(
                &mut tx,
                tenant,
                &current,
                to,
                Some("moved by the test"),
            )
            .await
            .unwrap();
            tx.commit().await.unwrap();
        }
    }

    /// Stops the server and drops its database.
    pub async fn stop(self) {
        self.shutdown.cancel();
        // Graceful shutdown: open streams end, the server returns cleanly.
        let finished = tokio::time::timeout(Duration::from_secs(10), self.server).await;
        assert!(
            matches!(finished, Ok(Ok(Ok(())))),
            "the server did not shut down cleanly: {finished:?}"
        );
        drop_database(&self.database).await;
    }
}

pub async fn drop_database(name: &str) {
    use sqlx::Connection;
    if let Ok(mut conn) = sqlx::PgConnection::connect(&format!("{PG}/postgres")).await {
        let ddl = sqlx::AssertSqlSafe(format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"));
        let _ = sqlx::query(ddl).execute(&mut conn).await;
    }
}

/// An HS256 token with an hour to live and the given claims.
pub fn token(claims: Value) -> String {
    let mut claims = claims;
    let now = chrono::Utc::now().timestamp();
    let obj = claims.as_object_mut().unwrap();
    obj.entry("exp").or_insert(json!(now + 3600));
    obj.entry("iat").or_insert(json!(now));
    jsonwebtoken::encode(
        &Header::default(),
        &claims,
        &EncodingKey::from_secret(SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// A token for `role` in `tenant`.
pub fn user(tenant: &str, role: &str) -> String {
    token(json!({"sub": format!("{role}@{tenant}"), "tenant": tenant, "roles": [role]}))
}

pub async fn read(r: Response) -> (StatusCode, Value) {
    let status = r.status();
    let text = r.text().await.unwrap();
    let body = if text.is_empty() {
        Value::Null
    } else {
        serde_json::from_str(&text).unwrap_or(Value::String(text))
    };
    (status, body)
}

pub const DIAMOND: &str = include_str!("../../../../examples/diamond.yaml");

/// Posts a workflow document in YAML; the status and the answer.
pub async fn post_workflow(
    api: &TestApi,
    token: &str,
    yaml: impl Into<String>,
) -> (StatusCode, Value) {
    send_text(
        api,
        Method::POST,
        "/v1/workflows",
        token,
        "application/yaml",
        yaml,
    )
    .await
}

/// Stores a workflow from YAML and returns its id.
pub async fn create_workflow(api: &TestApi, token: &str, yaml: &str) -> Value {
    let (status, body) = post_workflow(api, token, yaml).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    body
}

/// Runs the stored `diamond` workflow and returns the run's id.
pub async fn run_diamond(api: &TestApi, token: &str) -> String {
    let run = json!({"workflow": "diamond"});
    let (status, run) = api.call(Method::POST, "/v1/runs", token, Some(run)).await;
    assert_eq!(status, StatusCode::CREATED, "{run}");
    run["id"].as_str().unwrap().to_owned()
}

/// Sends `body` as `content_type`; the status and the JSON answer.
pub async fn send_text(
    api: &TestApi,
    method: Method,
    path: &str,
    token: &str,
    content_type: &str,
    body: impl Into<String>,
) -> (StatusCode, Value) {
    let r = api
        .request(method, path, token)
        .header("content-type", content_type)
        .body(body.into())
        .send()
        .await
        .unwrap();
    read(r).await
}

/// Asserts a problem+json response with `code`.
#[track_caller]
pub fn assert_problem(status: StatusCode, body: &Value, expected: StatusCode, code: &str) {
    assert_eq!(status, expected, "{body}");
    assert_eq!(body["code"], code, "{body}");
    assert_eq!(body["status"], expected.as_u16(), "{body}");
    assert!(
        body["title"].is_string() && body["detail"].is_string(),
        "{body}"
    );
    assert!(
        body["request_id"].is_string(),
        "problem without request id: {body}"
    );
}
