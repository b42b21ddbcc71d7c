//! Webhook delivery → queued run latency, against a release `couler-api`
//! process on the real Postgres and Redis of this machine, at 64
//! concurrent connections; and, in the same run against the same server,
//! `POST /v1/runs` creating the same run, as the baseline, with and without
//! an `Idempotency-Key` (a delivery always has its key: the delivery id).
//! They alternate (hooks, runs, keyed runs, twice) so that the machine's
//! speed drifting cancels out of the ratios. Each delivery is signed (GitHub's
//! HMAC), has its own delivery id and maps one parameter from its payload;
//! its run is queued in the transaction that records the delivery. Target:
//! p99 ≤ 25 ms.
//!
//! Run: `cargo bench -p couler-api --bench hooks`
//! (`BENCH_SECONDS` per measured phase, default 10; `BENCH_CONNECTIONS`,
//! default 64; `BENCH_WARMUP` seconds, default 3; `BENCH_API_BIN` runs a
//! prebuilt `couler-api`, e.g. to compare two builds).

use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const PG: &str = "postgres://postgres@127.0.0.1:5432";
const JWT_SECRET: &str = "couler-bench-hs256-secret-not-for-production";
/// Senders: each connection posts to one of them (a trigger takes at most
/// 1,000 deliveries a second, more than a sender sends).
const TRIGGERS: usize = 16;
const P99_TARGET: Duration = Duration::from_millis(25);

const WORKFLOW: &str = r#"apiVersion: couler.dev/v1alpha1
name: bench
parameters:
  - name: sha
steps:
  - name: a
    container:
      image: alpine:3.20
      command: [echo, "{{workflow.parameters.sha}}"]
"#;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn token(claims: Value) -> String {
    let now = chrono::Utc::now().timestamp();
    let mut claims = claims;
    claims["exp"] = json!(now + 3600);
    claims["iat"] = json!(now);
    jsonwebtoken::encode(
        &jsonwebtoken::Header::default(),
        &claims,
        &jsonwebtoken::EncodingKey::from_secret(JWT_SECRET.as_bytes()).unwrap(),
    )
    .unwrap()
}

/// The API as its own process, as it is deployed.
struct Server {
    child: Child,
    base: String,
    database: String,
}

impl Server {
    fn start() -> Server {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let database = format!("couler_bench_hooks_{}", uuid::Uuid::new_v4().simple());
        let bin = std::env::var("BENCH_API_BIN")
            .unwrap_or_else(|_| env!("CARGO_BIN_EXE_couler-api").to_owned());
        let child = Command::new(bin)
            .arg("serve")
            .env("DATABASE_URL", format!("{PG}/{database}"))
            .env("COULER__HTTP__ADDR", format!("127.0.0.1:{port}"))
            .env("COULER__AUTH__JWT__HS256_SECRET", JWT_SECRET)
            .env(
                "COULER__REDIS__KEY_PREFIX",
                format!("couler-bench-{database}"),
            )
            .env("COULER__TELEMETRY__LOG_FILTER", "warn")
            .env("COULER__QUOTAS__REQUESTS_PER_SECOND", "1000000")
            .env(
                "COULER__SECRETS__KEYS__BENCH",
                secrecy::ExposeSecret::expose_secret(&couler_secrets::generate_key()),
            )
            .stdout(Stdio::null())
            .spawn()
            .expect("couler-api starts");
        Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
            database,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let ddl = format!("DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)", self.database);
        let _ = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-qc", &ddl])
            .stderr(Stdio::null())
            .status();
    }
}

async fn call(http: &reqwest::Client, url: String, token: &str, body: Value) -> Value {
    let r = http
        .post(url)
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{status}: {body}");
    body
}

/// What one connection sends.
#[derive(Clone)]
enum Target {
    /// A trigger's URL and secret.
    Hook { url: String, secret: String },
    /// `POST /v1/runs` with an editor's token (and, `keyed`, an
    /// `Idempotency-Key`, as a delivery has its delivery id).
    Runs {
        url: String,
        token: String,
        keyed: bool,
    },
}

static SEQUENCE: AtomicU64 = AtomicU64::new(0);

impl Target {
    fn request(&self, http: &reqwest::Client) -> (reqwest::RequestBuilder, u16) {
        let n = SEQUENCE.fetch_add(1, Ordering::Relaxed);
        match self {
            Target::Hook { url, secret } => {
                let body = json!({"ref": "refs/heads/main", "sha": n.to_string()}).to_string();
                let mut mac = Hmac::<Sha256>::new_from_slice(secret.as_bytes()).unwrap();
                mac.update(body.as_bytes());
                let signature = hex::encode(mac.finalize().into_bytes());
                let req = http
                    .post(url)
                    .header("content-type", "application/json")
                    .header("x-hub-signature-256", format!("sha256={signature}"))
                    .header("x-github-delivery", format!("bench-{n}"))
                    .body(body);
                (req, 202)
            }
            Target::Runs { url, token, keyed } => {
                let body = json!({"workflow": "bench", "parameters": {"sha": n.to_string()}});
                let mut req = http.post(url).bearer_auth(token).json(&body);
                if *keyed {
                    req = req.header("idempotency-key", format!("bench-{n}"));
                }
                (req, 201)
            }
        }
    }
}

#[derive(Default)]
struct Measured {
    latencies_us: Vec<u64>,
    errors: u64,
    seconds: f64,
}

impl Measured {
    fn percentile(&self, p: f64) -> Duration {
        let mut sorted = self.latencies_us.clone();
        sorted.sort_unstable();
        let at = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
        Duration::from_micros(sorted[at])
    }

    fn line(&self, what: &str) -> String {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        format!(
            "{what:<28} {:>8.0} req/s  p50 {:>6.2} ms  p90 {:>6.2} ms  p99 {:>6.2} ms  max {:>7.2} ms  errors {}",
            self.latencies_us.len() as f64 / self.seconds,
            ms(self.percentile(0.50)),
            ms(self.percentile(0.90)),
            ms(self.percentile(0.99)),
            ms(self.percentile(1.0)),
            self.errors,
        )
    }
}

/// Every connection sends its target's requests, one at a time, for `secs`.
async fn load(
    http: &reqwest::Client,
    targets: &[Target],
    connections: usize,
    secs: f64,
) -> Measured {
    let until = Instant::now() + Duration::from_secs_f64(secs);
    let tasks: Vec<_> = (0..connections)
        .map(|i| {
            let (http, target) = (http.clone(), targets[i % targets.len()].clone());
            tokio::spawn(async move {
                let (mut latencies, mut errors) = (Vec::new(), 0u64);
                while Instant::now() < until {
                    let (req, expected) = target.request(&http);
                    let start = Instant::now();
                    match req.send().await {
                        Ok(r) if r.status().as_u16() == expected => {
                            let _ = r.bytes().await;
                            latencies.push(start.elapsed().as_micros() as u64);
                        }
                        Ok(r) => {
                            errors += 1;
                            if errors == 1 {
                                let status = r.status();
                                eprintln!(
                                    "unexpected {status}: {}",
                                    r.text().await.unwrap_or_default()
                                );
                            }
                        }
                        Err(_) => errors += 1,
                    }
                }
                (latencies, errors)
            })
        })
        .collect();
    let mut measured = Measured {
        seconds: secs,
        ..Measured::default()
    };
    for task in tasks {
        let (latencies, errors) = task.await.unwrap();
        measured.latencies_us.extend(latencies);
        measured.errors += errors;
    }
    measured
}

fn main() {
    let secs: f64 = env_or("BENCH_SECONDS", 10.0);
    let connections: usize = env_or("BENCH_CONNECTIONS", 64);
    let warmup: f64 = env_or("BENCH_WARMUP", 3.0);
    let _ = rustls::crypto::ring::default_provider().install_default();
    // The load generator keeps to one thread: the server and Postgres get
    // the rest of the machine.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let server = Server::start();
    runtime.block_on(async {
        let http = reqwest::Client::builder()
            .pool_max_idle_per_host(connections)
            .tcp_nodelay(true)
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        for _ in 0..500 {
            if let Ok(r) = http.get(server.url("/readyz")).send().await
                && r.status().is_success()
            {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let platform = token(json!({"sub": "ops", "roles": ["platform-admin"]}));
        let quotas = json!({"max_concurrent_runs": 10, "max_queued_runs": 1000000, "requests_per_second": 1000000});
        let tenant = call(&http, server.url("/v1/tenants"), &platform, json!({"name": "bench", "quotas": quotas})).await;
        let tenant = tenant["id"].as_str().unwrap();
        let editor = token(json!({"sub": "bench", "tenant": tenant, "roles": ["editor"]}));
        let r = http
            .post(server.url("/v1/workflows"))
            .bearer_auth(&editor)
            .header("content-type", "application/yaml")
            .body(WORKFLOW)
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201, "{}", r.text().await.unwrap());
        let mut hooks = Vec::new();
        for i in 0..TRIGGERS {
            let body = json!({"name": format!("sender-{i}"), "auth": "hmac_github",
                              "parameter_map": {"sha": "/sha"}, "rate_per_second": 1000});
            let t = call(&http, server.url("/v1/workflows/bench/triggers"), &editor, body).await;
            hooks.push(Target::Hook {
                url: server.url(t["url"].as_str().unwrap()),
                secret: t["secret"].as_str().unwrap().to_owned(),
            });
        }
        let runs = |keyed| {
            [Target::Runs {
                url: server.url("/v1/runs"),
                token: editor.clone(),
                keyed,
            }]
        };
        let (runs, keyed) = (runs(false), runs(true));
        eprintln!("warming up for {warmup}s each");
        for targets in [&hooks[..], &runs[..], &keyed[..]] {
            load(&http, targets, connections, warmup).await;
        }
        let (mut hook, mut run, mut keyed_run) =
            (Measured::default(), Measured::default(), Measured::default());
        for round in 0..2 {
            eprintln!("round {}: {}s of each", round + 1, secs / 2.0);
            for (targets, into) in [
                (&hooks[..], &mut hook),
                (&runs[..], &mut run),
                (&keyed[..], &mut keyed_run),
            ] {
                let m = load(&http, targets, connections, secs / 2.0).await;
                into.latencies_us.extend(m.latencies_us);
                into.errors += m.errors;
                into.seconds += m.seconds;
            }
        }
        println!("{connections} connections, {secs}s measured per endpoint, release build");
        println!("{}", hook.line("webhook delivery → run"));
        println!("{}", run.line("POST /v1/runs (baseline)"));
        println!("{}", keyed_run.line("  with Idempotency-Key"));
        let h99 = hook.percentile(0.99);
        for (baseline, what) in [(&run, "runs"), (&keyed_run, "keyed runs")] {
            println!(
                "webhook / {what}: p99 {:.2}, throughput {:.2}",
                h99.as_secs_f64() / baseline.percentile(0.99).as_secs_f64(),
                hook.latencies_us.len() as f64 / baseline.latencies_us.len() as f64,
            );
        }
        let verdict = if h99 <= P99_TARGET { "met" } else { "missed" };
        println!(
            "target p99 <= {} ms: {verdict} ({:.2} ms)",
            P99_TARGET.as_millis(),
            h99.as_secs_f64() * 1e3
        );
    });
    drop(server);
}
