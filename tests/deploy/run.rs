//! The binaries started as the compose file and the dev overlay start
//! them — the same command lines and the same variables with the same
//! values, except where a value names a place: hosts of the stack become
//! this machine's Postgres (a database of the test's own), Redis and free
//! ports, and volume paths become temporary directories — then bootstrapped
//! and asked to run `examples/diamond.yaml`, which has to succeed. Every
//! health check and probe the files declare has to answer 200.

use crate::files::{Launch, compose_launches, dockerfile, manifest_launches, rendered};
use couler_tests::{PG, Proc, binary, repo_root, tempdir};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One test's stack: its database, Redis key prefix, directories standing
/// for volumes, ports standing for the containers', and processes.
struct Stack {
    database: String,
    prefix: String,
    volumes: BTreeMap<String, tempdir::Dir>,
    /// (host, container port) → the port on this machine.
    ports: BTreeMap<(String, u16), u16>,
    logs: tempdir::Dir,
    procs: Vec<Proc>,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

impl Stack {
    fn new() -> Stack {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let id = tempdir::uuid_like();
        Stack {
            database: format!("couler_test_{id}"),
            prefix: format!("couler-test-{id}"),
            volumes: BTreeMap::new(),
            ports: BTreeMap::new(),
            logs: tempdir::Dir::new("deploy-logs"),
            procs: Vec::new(),
        }
    }

    fn port(&mut self, host: &str, port: u16) -> u16 {
        *self
            .ports
            .entry((host.to_owned(), port))
            .or_insert_with(free_port)
    }

    /// `value` as this machine needs it (see the module docs). `host` is
    /// the name other processes reach this one by.
    fn localize(&mut self, launch: &Launch, host: &str, value: &str) -> String {
        if value.starts_with("postgres://") {
            return format!("{PG}/{}", self.database);
        }
        if value.starts_with("redis://") {
            return "redis://127.0.0.1:6379".into();
        }
        if let Ok(addr) = value.parse::<std::net::SocketAddr>() {
            return format!("127.0.0.1:{}", self.port(host, addr.port()));
        }
        if let Some(rest) = value.strip_prefix("http://") {
            let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
            if let Some((name, port)) = authority.split_once(':')
                && let Some(&local) = self
                    .ports
                    .get(&(name.to_owned(), port.parse().unwrap_or(0)))
            {
                return format!("http://127.0.0.1:{local}/{path}");
            }
        }
        if let Some(mount) = launch.mounts.iter().find(|m| value.starts_with(m.as_str())) {
            let dir = self
                .volumes
                .entry(mount.clone())
                .or_insert_with(|| tempdir::Dir::new("deploy-volume"));
            return format!("{}{}", dir.path().display(), &value[mount.len()..]);
        }
        value.to_owned()
    }

    /// The launch's command with its variables localized, nothing else of
    /// this process' environment but `PATH` and `HOME` (a container has
    /// both), and a Redis key prefix of the test's own.
    fn command(&mut self, launch: &Launch, host: &str, argv: &[String]) -> Command {
        let mut cmd = Command::new(binary(&argv[0]));
        cmd.args(&argv[1..]).env_clear();
        for keep in ["PATH", "HOME"] {
            if let Some(v) = std::env::var_os(keep) {
                cmd.env(keep, v);
            }
        }
        for (name, value) in &launch.env {
            let local = self.localize(launch, host, value);
            cmd.env(name, local);
        }
        cmd.env("COULER__REDIS__KEY_PREFIX", &self.prefix)
            .env("COULER__DATABASE__MAX_CONNECTIONS", "6");
        cmd
    }

    fn start(&mut self, launch: &Launch, host: &str) {
        // Ports first, so that URLs to this process localize.
        for (_, port) in &launch.ports {
            self.port(host, *port);
        }
        let log = std::fs::File::create(self.logs.path().join(format!("{host}.log"))).unwrap();
        let child = self
            .command(launch, host, &launch.argv)
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|e| panic!("{}: cannot start: {e}", launch.origin));
        self.procs.push(Proc(child));
        self.wait_healthy(launch, host);
    }

    /// Every probe of the launch answers 200.
    fn wait_healthy(&mut self, launch: &Launch, host: &str) {
        assert!(
            !launch.probes.is_empty(),
            "{}: no health check",
            launch.origin
        );
        let http = reqwest::blocking::Client::new();
        for probe in &launch.probes {
            let port = self.port(host, launch.probe_port(probe));
            let url = format!("http://127.0.0.1:{port}{}", probe.path);
            let start = Instant::now();
            loop {
                match http.get(&url).send() {
                    Ok(r) if r.status().is_success() => break,
                    last => assert!(
                        start.elapsed() < Duration::from_secs(90),
                        "{}: {url} did not answer 200 ({last:?}); logs:\n{}",
                        launch.origin,
                        self.logs()
                    ),
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }

    /// Runs a one-shot launch to its end; its standard output.
    fn run(&mut self, launch: &Launch, argv: &[String], extra: &[(&str, &str)]) -> String {
        let mut cmd = self.command(launch, "one-shot", argv);
        cmd.envs(extra.iter().copied()).stdin(Stdio::null());
        let out = cmd.output().expect("the one-shot runs");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "{}: {argv:?} failed:\n{stdout}{}\nservice logs:\n{}",
            launch.origin,
            String::from_utf8_lossy(&out.stderr),
            self.logs()
        );
        stdout
    }

    /// The admin API key a bootstrap printed (`api key ck_…`).
    fn bootstrap(&mut self, launch: &Launch) -> String {
        let out = self.run(launch, &launch.argv.clone(), &[]);
        out.lines()
            .find_map(|l| l.strip_prefix("api key "))
            .unwrap_or_else(|| panic!("{}: printed no API key: {out}", launch.origin))
            .trim()
            .to_owned()
    }

    fn logs(&self) -> String {
        let mut all = String::new();
        for entry in std::fs::read_dir(self.logs.path()).unwrap().flatten() {
            all.push_str(&format!("--- {}\n", entry.file_name().to_string_lossy()));
            all.push_str(&std::fs::read_to_string(entry.path()).unwrap_or_default());
        }
        all
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        self.procs.clear();
        let _ = Command::new("psql")
            .args(["-h", "127.0.0.1", "-U", "postgres", "-d", "postgres", "-qc"])
            .arg(format!(
                "DROP DATABASE IF EXISTS \"{}\" WITH (FORCE)",
                self.database
            ))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // The cache index and rate-limit keys the stack wrote.
        let _ = Command::new("sh")
            .arg("-c")
            .arg("redis-cli --scan --pattern \"$1:*\" | xargs -r redis-cli unlink")
            .args(["sh", &self.prefix])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

fn by_origin<'a>(launches: &'a [Launch], suffix: &str) -> &'a Launch {
    launches
        .iter()
        .find(|l| l.origin.ends_with(suffix) || l.origin.contains(&format!("{suffix} ")))
        .unwrap_or_else(|| panic!("no launch {suffix}: {launches:#?}"))
}

fn assert_diamond_succeeded(run: &Value, stack: &Stack) {
    assert_eq!(
        run["status"],
        "succeeded",
        "{run:#}\nlogs:\n{}",
        stack.logs()
    );
    let steps = run["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 4, "{run:#}");
    assert!(steps.iter().all(|s| s["status"] == "succeeded"), "{run:#}");
}

#[test]
fn compose_stack_runs_the_diamond() {
    let stages = dockerfile();
    let runtime = stages.iter().find(|s| s.name == "runtime").unwrap();
    let launches = compose_launches(&rendered().compose, runtime);
    let mut stack = Stack::new();
    stack.start(by_origin(&launches, "compose api"), "api");
    let key = stack.bootstrap(by_origin(&launches, "compose bootstrap"));
    stack.start(by_origin(&launches, "compose scheduler"), "scheduler");

    // The CLI as `docker compose run couler submit …` runs it.
    let cli = by_origin(&launches, "compose couler");
    let diamond = repo_root().join("examples/diamond.yaml");
    let argv: Vec<String> = [
        cli.argv[0].as_str(),
        "submit",
        diamond.to_str().unwrap(),
        "--wait",
        "--output",
        "json",
    ]
    .map(str::to_owned)
    .to_vec();
    let out = stack.run(cli, &argv, &[("COULER_TOKEN", &key)]);
    let run: Value = serde_json::from_str(&out).expect("the finished run as JSON");
    assert_diamond_succeeded(&run, &stack);
}

#[test]
fn kubernetes_dev_overlay_runs_the_diamond() {
    let stages = dockerfile();
    let runtime = stages.iter().find(|s| s.name == "runtime").unwrap();
    let docs = &rendered().overlays["dev"];
    let launches = manifest_launches("dev", docs, runtime);
    let mut stack = Stack::new();
    let api = by_origin(&launches, "Deployment/couler-api");
    stack.start(api, "couler-api");
    let key = stack.bootstrap(by_origin(&launches, "Job/couler-bootstrap"));
    stack.start(
        by_origin(&launches, "Deployment/couler-scheduler"),
        "couler-scheduler",
    );

    let base = format!(
        "http://127.0.0.1:{}",
        stack.port("couler-api", api.ports[0].1)
    );
    let http = reqwest::blocking::Client::new();
    let ir: Value = serde_saphyr::from_str(&couler_tests::example("diamond.yaml")).unwrap();
    let created: Value = http
        .post(format!("{base}/v1/runs"))
        .bearer_auth(&key)
        .json(&json!({ "ir": ir }))
        .send()
        .unwrap()
        .json()
        .unwrap();
    let id = created["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{created:#}"));
    let start = Instant::now();
    let run = loop {
        let run: Value = http
            .get(format!("{base}/v1/runs/{id}"))
            .bearer_auth(&key)
            .send()
            .unwrap()
            .json()
            .unwrap();
        if matches!(
            run["status"].as_str(),
            Some("succeeded" | "failed" | "cancelled")
        ) {
            break run;
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "{run:#}\n{}",
            stack.logs()
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    assert_diamond_succeeded(&run, &stack);
}
