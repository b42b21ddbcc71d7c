//! The `couler` binary against a real `couler-api` started in the test: its
//! own database, its own Redis key prefix, an ephemeral port. Runs move
//! through SQL, as a scheduler would move them.

#![allow(dead_code)]

use couler_api::config::Config;
use couler_store::events::NewEvent;
use couler_store::{RunStatus, Store, StoreConfig, TenantId};
use jsonwebtoken::{EncodingKey, Header};
use secrecy::SecretString;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader, Lines};
use tokio::process::{Child, ChildStdout};
use tokio_util::sync::CancellationToken;

pub const SECRET: &str = "test-secret-that-is-long-enough-for-hs256";
pub const PG: &str = "postgres://postgres@127.0.0.1:5432";
pub const DIAMOND: &str = include_str!("../../../../examples/diamond.yaml");
/// Longest a `couler` command may take in a test.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(60);

pub struct TestApi {
    pub base: String,
    pub http: reqwest::Client,
    pub database: String,
    pub store: Store,
    shutdown: CancellationToken,
    server: tokio::task::JoinHandle<anyhow::Result<()>>,
}

impl TestApi {
    pub async fn start() -> TestApi {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let database = format!("couler_test_{}", uuid::Uuid::new_v4().simple());
        let mut config = Config::default();
        config.database.url = SecretString::from(format!("{PG}/{database}"));
        config.database.max_connections = 4;
        config.auth.jwt.hs256_secret = Some(SecretString::from(SECRET));
        config.redis.key_prefix = format!("couler-test-{}", uuid::Uuid::new_v4().simple());
        config.secrets.keys = [("test".to_owned(), couler_secrets::generate_key())].into();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let shutdown = CancellationToken::new();
        let server = tokio::spawn(couler_api::serve(config, listener, shutdown.clone()));
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        for _ in 0..300 {
            if let Ok(r) = http.get(format!("{base}/healthz")).send().await
                && r.status().is_success()
            {
                // The API has created and migrated the database by now.
                let mut store_config = StoreConfig::new(format!("{PG}/{database}"));
                store_config.max_connections = 2;
                let store = Store::connect(&store_config).await.unwrap();
                return TestApi {
                    base,
                    http,
                    database,
                    store,
                    shutdown,
                    server,
                };
            }
            assert!(!server.is_finished(), "the server exited during start-up");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("the server did not start");
    }

    /// Creates a tenant and returns its id and an editor's token.
    pub async fn tenant(&self, name: &str) -> (String, String) {
        let platform = token(json!({"sub": "platform-operator", "roles": ["platform-admin"]}));
        let (status, t) = self
            .call(
                reqwest::Method::POST,
                "/v1/tenants",
                &platform,
                Some(json!({"name": name})),
            )
            .await;
        assert_eq!(status, 201, "{t}");
        let id = t["id"].as_str().unwrap().to_owned();
        let editor = user(&id, "editor");
        (id, editor)
    }

    /// Calls the API directly (to set up and to check what the CLI did).
    pub async fn call(
        &self,
        method: reqwest::Method,
        path: &str,
        token: &str,
        body: Option<Value>,
    ) -> (u16, Value) {
        let mut req = self
            .http
            .request(method, format!("{}{path}", self.base))
            .bearer_auth(token);
        if let Some(b) = body {
            req = req.json(&b);
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let text = r.text().await.unwrap();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    pub async fn get(&self, path: &str, token: &str) -> Value {
        let (status, body) = self.call(reqwest::Method::GET, path, token, None).await;
        assert_eq!(status, 200, "{path}: {body}");
        body
    }

    /// Stores DIAMOND and queues a run of it; returns the run id.
    pub async fn queued_run(&self, token: &str) -> String {
        let r = self
            .http
            .post(format!("{}/v1/workflows", self.base))
            .bearer_auth(token)
            .header("content-type", "application/yaml")
            .body(DIAMOND)
            .send()
            .await
            .unwrap();
        assert!(r.status() == 201 || r.status() == 409, "{:?}", r.status());
        let (status, run) = self
            .call(
                reqwest::Method::POST,
                "/v1/runs",
                token,
                Some(json!({"workflow": "diamond"})),
            )
            .await;
        assert_eq!(status, 201, "{run}");
        run["id"].as_str().unwrap().to_owned()
    }

    /// Moves a run to `to` through its lifecycle, as the scheduler would.
    pub async fn advance(&self, tenant: &str, run: &str, to: RunStatus, message: Option<&str>) {
        let tenant: TenantId = tenant.parse().unwrap();
        let mut tx = self.store.tenant(tenant).await.unwrap();
        let current = couler_store::runs::get(&mut tx, tenant, run.parse().unwrap())
            .await
            .unwrap()
            .unwrap();
        current.status.transition(to).unwrap();
        couler_store::runs::set_status(&mut tx, tenant, &current, to, message)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    /// Records a step's status and its event, as the scheduler would.
    pub async fn step(
        &self,
        tenant: &str,
        run: &str,
        name: &str,
        status: &str,
        message: Option<&str>,
    ) {
        let tenant_id: TenantId = tenant.parse().unwrap();
        let run_id: couler_store::RunId = run.parse().unwrap();
        let mut tx = self.store.tenant(tenant_id).await.unwrap();
        sqlx::query(
            "INSERT INTO run_steps (tenant_id, run_id, name, status, attempt, message, started_at, finished_at)
             VALUES ($1, $2, $3, $4, 1, $5,
                     CASE WHEN $4 = 'running' THEN now() END,
                     CASE WHEN $4 NOT IN ('pending', 'running') THEN now() END)
             ON CONFLICT (tenant_id, run_id, name) DO UPDATE SET
                 status = EXCLUDED.status, message = EXCLUDED.message, updated_at = now(),
                 started_at = coalesce(run_steps.started_at, EXCLUDED.started_at),
                 finished_at = EXCLUDED.finished_at",
        )
        .bind(tenant_id.0)
        .bind(run_id.0)
        .bind(name)
        .bind(status)
        .bind(message)
        .execute(&mut *tx)
        .await
        .unwrap();
        let event = NewEvent {
            kind: format!("step.{status}"),
            step: Some(name.to_owned()),
            status: Some(status.to_owned()),
            message: message.map(str::to_owned),
            data: json!({"attempt": 1}),
        };
        couler_store::events::append(&mut tx, tenant_id, run_id, &event)
            .await
            .unwrap();
        tx.commit().await.unwrap();
    }

    /// A `couler` command pointed at this API, with `token`.
    pub fn command(&self, token: &str, args: &[&str]) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(env!("CARGO_BIN_EXE_couler"));
        command
            .args(args)
            .current_dir(root())
            .env("COULER_SERVER", &self.base)
            .env("COULER_TOKEN", token)
            .env_remove("NO_COLOR")
            .stdin(Stdio::null())
            .kill_on_drop(true);
        command
    }

    /// Runs `couler` to its end.
    pub async fn couler(&self, token: &str, args: &[&str]) -> Output {
        let output = self.command(token, args).output();
        tokio::time::timeout(COMMAND_TIMEOUT, output)
            .await
            .expect("couler finished in time")
            .unwrap()
    }

    /// Starts `couler` with its standard output readable line by line.
    pub fn spawn(&self, token: &str, args: &[&str]) -> Running {
        let mut child = self
            .command(token, args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        Running { child, stdout }
    }

    /// Stops the server and drops its database.
    pub async fn stop(self) {
        self.store.pool().close().await;
        self.shutdown.cancel();
        let finished = tokio::time::timeout(Duration::from_secs(10), self.server).await;
        assert!(
            matches!(finished, Ok(Ok(Ok(())))),
            "the server did not shut down cleanly: {finished:?}"
        );
        use sqlx::Connection;
        if let Ok(mut conn) = sqlx::PgConnection::connect(&format!("{PG}/postgres")).await {
            let ddl = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.database);
            let _ = sqlx::query(sqlx::AssertSqlSafe(ddl))
                .execute(&mut conn)
                .await;
        }
    }
}

/// A `couler` process still going.
pub struct Running {
    child: Child,
    stdout: Lines<BufReader<ChildStdout>>,
}

impl Running {
    /// The next line of standard output (None at its end).
    pub async fn line(&mut self) -> Option<String> {
        tokio::time::timeout(COMMAND_TIMEOUT, self.stdout.next_line())
            .await
            .expect("a line in time")
            .unwrap()
    }

    /// Reads lines until one contains `needle`; returns every line read.
    pub async fn until(&mut self, needle: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            match self.line().await {
                Some(l) => {
                    let found = l.contains(needle);
                    seen.push(l);
                    if found {
                        return seen;
                    }
                }
                None => panic!("no line with {needle:?} in {seen:#?}"),
            }
        }
    }

    /// Waits for the exit; returns the rest of standard output, and the output.
    pub async fn finish(mut self) -> (Vec<String>, Output) {
        let mut rest = Vec::new();
        while let Some(l) = self.line().await {
            rest.push(l);
        }
        let output = tokio::time::timeout(COMMAND_TIMEOUT, self.child.wait_with_output())
            .await
            .expect("couler exited in time")
            .unwrap();
        (rest, output)
    }
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Writes a file in a directory of its own and returns its path.
pub fn temp_file(name: &str, text: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("couler-cli-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

pub fn path_arg(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
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

/// The words after the timestamp of each plain progress line.
pub fn transitions(lines: &[String]) -> Vec<String> {
    lines
        .iter()
        .map(|l| {
            let (time, rest) = l.split_once(' ').unwrap();
            assert!(
                chrono::DateTime::parse_from_rfc3339(time).is_ok(),
                "a timestamp first: {l}"
            );
            rest.to_owned()
        })
        .collect()
}
