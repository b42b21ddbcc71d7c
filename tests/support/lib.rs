//! Helpers shared by the end-to-end tests: build and start the real
//! binaries against a fresh database, talk to the API, wait for runs.

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

pub const PG: &str = "postgres://postgres@127.0.0.1:5432";
pub const SECRET: &str = "e2e-secret-that-is-long-enough-for-hs256";
/// The platform key tenant secrets are sealed with, for the API and every
/// scheduler (base64 of 32 bytes).
const SECRETS_KEY: (&str, &str) = (
    "COULER__SECRETS__KEYS__E2E",
    "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
);

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository root")
        .to_path_buf()
}

/// Reads a YAML file of the repository as a JSON tree.
pub fn read_yaml(relative: &str) -> Value {
    let text = std::fs::read_to_string(repo_root().join(relative)).expect("file exists");
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{relative} is not valid YAML: {e}"))
}

/// The path of a workspace binary, built once per test process.
pub fn binary(name: &str) -> PathBuf {
    static BUILT: OnceLock<()> = OnceLock::new();
    BUILT.get_or_init(|| {
        let status = Command::new(env!("CARGO"))
            .args([
                "build",
                "-q",
                "-p",
                "couler-api",
                "-p",
                "couler-scheduler",
                "-p",
                "couler-cli",
            ])
            .env("SQLX_OFFLINE", "true")
            .current_dir(repo_root())
            .status()
            .expect("cargo runs");
        assert!(status.success(), "building the binaries failed");
    });
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    target.join("debug").join(name)
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A child process killed when dropped.
pub struct Proc(pub Child);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A Couler installation for one test: its own database and data dir.
pub struct Couler {
    pub database: String,
    pub redis_prefix: String,
    pub data_dir: tempdir::Dir,
    /// Where tests and steps share files: the only host path (besides the
    /// system's) the local engine's sandbox shows steps, writable by any
    /// tenant's uid.
    pub scratch: tempdir::Dir,
    pub base: String,
    pub api: Proc,
    pub http: reqwest::blocking::Client,
    pub platform: String,
}

/// A service's standard output, kept in the data directory for
/// [`Couler::service_logs`].
fn log_file(data_dir: &tempdir::Dir, name: &str) -> std::fs::File {
    std::fs::File::create(data_dir.path().join(format!("{name}.log"))).unwrap()
}

/// Lets steps (another uid than the test's) write in `dir`.
fn open_to_all(dir: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o777)).unwrap();
}

pub mod tempdir {
    /// A directory removed when dropped.
    pub struct Dir(pub std::path::PathBuf);
    impl Dir {
        pub fn new(tag: &str) -> Dir {
            let p = std::env::temp_dir().join(format!("couler-{tag}-{}", uuid_like()));
            std::fs::create_dir_all(&p).unwrap();
            Dir(p)
        }
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    pub use couler_fakes::uuid_like;
}

impl Couler {
    /// Waits for `/readyz`; a failure says whether the API exited and what
    /// it logged, and what the last probe got.
    fn wait_ready(&mut self) {
        let limit = Duration::from_secs(60);
        let start = Instant::now();
        loop {
            let last = match self.http.get(format!("{}/readyz", self.base)).send() {
                Ok(r) if r.status().is_success() => return,
                Ok(r) => format!("{}: {}", r.status(), r.text().unwrap_or_default()),
                Err(e) => e.to_string(),
            };
            let exited = self.api.0.try_wait().ok().flatten();
            if exited.is_some() || start.elapsed() >= limit {
                let log = std::fs::read_to_string(self.data_dir.path().join("api.log"));
                panic!(
                    "couler-api was not ready within {limit:?} (exited: {exited:?}; last probe: {last})\n{}",
                    log.unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Starts `couler-api` on a fresh database.
    pub fn start() -> Couler {
        Couler::start_with(&[])
    }

    /// [`Couler::start`] with more environment for `couler-api`.
    pub fn start_with(env: &[(&str, &str)]) -> Couler {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let database = format!("couler_test_{}", tempdir::uuid_like());
        let data_dir = tempdir::Dir::new("e2e");
        let scratch = tempdir::Dir::new("e2e-scratch");
        open_to_all(scratch.path());
        let port = free_port();
        let base = format!("http://127.0.0.1:{port}");
        // One Redis key prefix per test: the API and its schedulers share it.
        let prefix = format!("couler-e2e-{}", tempdir::uuid_like());
        let api = Proc(
            Command::new(binary("couler-api"))
                .env("DATABASE_URL", format!("{PG}/{database}"))
                .env("COULER__HTTP__ADDR", format!("127.0.0.1:{port}"))
                // Tests run side by side: keep each service's pool small.
                .env("COULER__DATABASE__MAX_CONNECTIONS", "6")
                .env("COULER__AUTH__JWT__HS256_SECRET", SECRET)
                .env("COULER__REDIS__KEY_PREFIX", &prefix)
                .env("COULER__TELEMETRY__LOG_FILTER", "warn")
                .env(SECRETS_KEY.0, SECRETS_KEY.1)
                .envs(env.iter().copied())
                .stdout(log_file(&data_dir, "api"))
                .spawn()
                .expect("couler-api starts"),
        );
        let http = reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(30))
            .build()
            .unwrap();
        let mut couler = Couler {
            platform: token(json!({"sub": "ops", "roles": ["platform-admin"]})),
            redis_prefix: prefix,
            database,
            data_dir,
            scratch,
            base,
            api,
            http,
        };
        couler.wait_ready();
        couler
    }

    /// Starts a `couler-scheduler` process with its own lease owner name.
    pub fn scheduler(&self, id: &str) -> Proc {
        self.scheduler_with(id, &[])
    }

    /// A fresh directory steps can read and write, for one test's files.
    pub fn scratch(&self, tag: &str) -> tempdir::Dir {
        let dir = tempdir::Dir(self.scratch.path().join(tag));
        std::fs::create_dir_all(dir.path()).unwrap();
        open_to_all(dir.path());
        dir
    }

    pub fn scheduler_with(&self, id: &str, env: &[(&str, &str)]) -> Proc {
        let mounts = format!(
            "[{{path = \"{}\", writable = true}}]",
            self.scratch.path().display()
        );
        let mut cmd = Command::new(binary("couler-scheduler"));
        cmd.env("DATABASE_URL", format!("{PG}/{}", self.database))
            .env("COULER__SCHEDULER__ID", id)
            .env("COULER__SCHEDULER__LEASE_SECS", "3")
            .env("COULER__SCHEDULER__HEARTBEAT_MS", "300")
            .env("COULER__SCHEDULER__POLL_MS", "200")
            .env("COULER__LOCAL__DATA_DIR", self.data_dir.path())
            .env("COULER__LOCAL__SANDBOX__MOUNTS", mounts)
            .env(SECRETS_KEY.0, SECRETS_KEY.1)
            .env("COULER__DATABASE__MAX_CONNECTIONS", "6")
            .env("COULER__REDIS__KEY_PREFIX", &self.redis_prefix)
            .env("COULER__TELEMETRY__LOG_FILTER", "warn")
            .stdout(log_file(&self.data_dir, &format!("scheduler-{id}")));
        for (k, v) in env {
            cmd.env(k, v);
        }
        Proc(cmd.spawn().expect("couler-scheduler starts"))
    }

    pub fn call(
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
        let r = req.send().expect("the API answers");
        let status = r.status().as_u16();
        let text = r.text().unwrap_or_default();
        (
            status,
            serde_json::from_str(&text).unwrap_or(Value::String(text)),
        )
    }

    /// Runs the `couler` CLI against this installation as `token`.
    pub fn cli(&self, token: &str, args: &[&str]) -> std::process::Output {
        Command::new(binary("couler"))
            .args(args)
            .env("COULER_SERVER", &self.base)
            .env("COULER_TOKEN", token)
            .output()
            .expect("couler runs")
    }

    /// Standard output of a `couler` command that has to succeed.
    pub fn cli_ok(&self, token: &str, args: &[&str]) -> String {
        let out = self.cli(token, args);
        assert!(
            out.status.success(),
            "couler {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// Stores a tenant secret through the API, as the tenant's admin would.
    pub fn put_secret(&self, tenant: &str, name: &str, data: Value) {
        let admin =
            token(json!({"sub": format!("admin@{tenant}"), "tenant": tenant, "roles": ["admin"]}));
        let (status, body) = self.call(
            reqwest::Method::PUT,
            &format!("/v1/secrets/{name}"),
            &admin,
            Some(json!({ "data": data })),
        );
        assert!(status == 200 || status == 201, "{status} {body}");
    }

    /// Creates a tenant and returns an editor token for it.
    pub fn tenant(&self, name: &str) -> (String, String) {
        self.tenant_with(name, json!({}))
    }

    pub fn tenant_with(&self, name: &str, extra: Value) -> (String, String) {
        let mut body = json!({"name": name, "quotas": {"max_concurrent_runs": 20, "max_queued_runs": 10000, "requests_per_second": 10000}});
        body.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        let (status, t) = self.call(
            reqwest::Method::POST,
            "/v1/tenants",
            &self.platform,
            Some(body),
        );
        assert_eq!(status, 201, "{t}");
        let id = t["id"].as_str().unwrap().to_owned();
        let token = token(json!({"sub": format!("e2e@{name}"), "tenant": id, "roles": ["editor"]}));
        (id, token)
    }

    /// Submits a workflow document (YAML text) as an inline run.
    pub fn submit(&self, token: &str, yaml: &str, parameters: Value) -> String {
        // YAML 1.2 booleans, as the IR parser reads them (`off` stays a string).
        let mut options = serde_saphyr::Options::default();
        options.strict_booleans = true;
        let ir: Value = serde_saphyr::from_str_with_options(yaml, options).unwrap();
        let (status, run) = self.call(
            reqwest::Method::POST,
            "/v1/runs",
            token,
            Some(json!({"ir": ir, "parameters": parameters})),
        );
        assert_eq!(status, 201, "{run}");
        run["id"].as_str().unwrap().to_owned()
    }

    pub fn run(&self, token: &str, id: &str) -> Value {
        let (status, run) = self.call(reqwest::Method::GET, &format!("/v1/runs/{id}"), token, None);
        assert_eq!(status, 200, "{run}");
        run
    }

    /// Waits for a run to end and returns it.
    pub fn wait(&self, token: &str, id: &str, limit: Duration) -> Value {
        let start = Instant::now();
        loop {
            let run = self.run(token, id);
            if matches!(
                run["status"].as_str(),
                Some("succeeded" | "failed" | "cancelled")
            ) {
                return run;
            }
            assert!(
                start.elapsed() < limit,
                "run {id} did not finish in {limit:?}: {run:#}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Everything the services wrote to their standard output so far.
    pub fn service_logs(&self) -> String {
        let mut logs = String::new();
        for entry in std::fs::read_dir(self.data_dir.path()).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "log") {
                logs.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
            }
        }
        logs
    }

    pub fn database_url(&self) -> String {
        format!("{PG}/{}", self.database)
    }
}

impl Drop for Couler {
    fn drop(&mut self) {
        let _ = self.api.0.kill();
        let _ = self.api.0.wait();
        let _ = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc"])
            .arg(format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.database
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

/// An HS256 token with an hour to live.
pub fn token(mut claims: Value) -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    claims["exp"] = json!(now + 3600);
    let key = jsonwebtoken::EncodingKey::from_secret(SECRET.as_bytes()).unwrap();
    jsonwebtoken::encode(&jsonwebtoken::Header::default(), &claims, &key).unwrap()
}

/// Polls `condition` until it holds or `limit` passes.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) {
    let start = Instant::now();
    while !condition() {
        assert!(
            start.elapsed() < limit,
            "condition not met within {limit:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The entry named `name` of a run's or a plan's `steps`.
pub fn step<'a>(doc: &'a Value, name: &str) -> &'a Value {
    doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no step {name}: {doc:#}"))
}

/// Steps of a run by name → status.
pub fn step_statuses(run: &Value) -> std::collections::BTreeMap<String, String> {
    run["steps"]
        .as_array()
        .map(|steps| {
            steps
                .iter()
                .map(|s| {
                    (
                        s["name"].as_str().unwrap().to_owned(),
                        s["status"].as_str().unwrap().to_owned(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The text of an example workflow.
pub fn example(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("examples").join(name)).unwrap()
}

/// A real OpenAI-compatible LLM (`scripts/llm-server`: llama.cpp serving
/// SmolLM2-135M-Instruct as `smollm2`) on a free port, in a process group of
/// its own that is killed on drop. `None` when `COULER_SKIP_REAL_LLM=1`;
/// otherwise a server that cannot be set up fails the test.
pub struct LlmServer {
    child: Child,
    port: u16,
}

impl LlmServer {
    pub fn start() -> Option<LlmServer> {
        if std::env::var("COULER_SKIP_REAL_LLM").as_deref() == Ok("1") {
            eprintln!("skipped: COULER_SKIP_REAL_LLM=1");
            return None;
        }
        let script = repo_root().join("scripts/llm-server");
        let setup = Command::new(&script)
            .arg("--setup-only")
            .stdin(Stdio::null())
            .output()
            .expect("scripts/llm-server runs");
        assert!(
            setup.status.success(),
            "setting up the LLM server failed (needs python3 and PyPI; COULER_SKIP_REAL_LLM=1 skips): {}",
            String::from_utf8_lossy(&setup.stderr)
        );
        use std::os::unix::process::CommandExt;
        let port = free_port();
        let child = Command::new(&script)
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("the LLM server starts");
        let server = LlmServer { child, port };
        let models = format!("{}/models", server.base_url());
        wait_until(Duration::from_secs(120), || {
            reqwest::blocking::get(&models).is_ok_and(|r| r.status().is_success())
        });
        Some(server)
    }

    /// The OpenAI-compatible base URL (`…/v1`).
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }
}

impl Drop for LlmServer {
    fn drop(&mut self) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: signals the process group this value started.
        unsafe { libc::killpg(group, libc::SIGKILL) };
        let _ = self.child.wait();
    }
}
