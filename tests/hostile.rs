//! Hostile steps: two tenants on one server, tenant B's steps trying to get
//! at what is not theirs on the local engine. Each attack must be contained
//! (the step fails or sees nothing) while tenant A's run goes on untouched
//! and A's own secret reaches A's step; and a secret's value appears in no
//! API response, event, service log or cache entry.

use couler_tests::*;
use reqwest::Method;
use serde_json::{Value, json};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const LIMIT: Duration = Duration::from_secs(180);
/// What tenant A's secret value starts with: B searches for it.
const MARK: &str = "tenant-a-secret-";

/// Tenant A: a secret, and a run whose steps read it, keep an artifact and
/// stay up while B attacks.
struct TenantA {
    tenant: String,
    token: String,
    secret: String,
    run: String,
}

fn admin(tenant: &str) -> String {
    token(json!({"sub": format!("admin@{tenant}"), "tenant": tenant, "roles": ["admin"]}))
}

fn sha256(text: &str) -> String {
    let out = Command::new("sh")
        .args(["-c", "printf %s \"$0\" | sha256sum | cut -d' ' -f1", text])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// A's workflow: `hold` keeps running (with the secret in its environment)
/// until the scratch file `release` appears; `model` leaves an artifact.
fn start_tenant_a(couler: &Couler, scratch: &Path) -> TenantA {
    let (tenant, token) = couler.tenant("alice");
    let secret = format!("{MARK}{}", tempdir::uuid_like());
    couler.put_secret(&tenant, "hub", json!({ "token": secret }));
    let release = scratch.join("release");
    let yaml = format!(
        "apiVersion: couler.dev/v1alpha1
name: victim
steps:
  - name: model
    container:
      image: alpine
      command: [sh, -c, 'mkdir -p $(dirname {{{{outputs.artifacts.m.path}}}}); echo weights > {{{{outputs.artifacts.m.path}}}}']
    outputs: {{artifacts: [{{name: m, path: /tmp/m}}]}}
  - name: hold
    cache: {{policy: off}}
    container:
      image: alpine
      env: [{{name: TOKEN, secret: {{name: hub, key: token}}}}]
      command: [sh, -c, 'while [ ! -e {release} ]; do sleep 0.1; done; printf %s \"$TOKEN\" | sha256sum | cut -d\" \" -f1']
",
        release = release.display()
    );
    let run = couler.submit(&token, &yaml, json!({}));
    wait_until(LIMIT, || {
        let run = couler.run(&token, &run);
        let steps = step_statuses(&run);
        steps.get("hold").map(String::as_str) == Some("running")
            && steps.get("model").map(String::as_str) == Some("succeeded")
    });
    TenantA {
        tenant,
        token,
        secret,
        run,
    }
}

/// The host paths of what A's run left: its try directories and the
/// artifact its `model` step stored.
fn a_paths(couler: &Couler, a: &TenantA) -> (PathBuf, PathBuf, i32) {
    let run = couler.run(&a.token, &a.run);
    // The local engine's layout: runs/<run>/<attempt>/<step>/<try>.
    let try_dir = couler
        .data_dir
        .path()
        .join(format!("runs/{}/1/hold/1", a.run));
    assert!(try_dir.join("state.json").exists(), "{}", try_dir.display());
    let model = step(&run, "model");
    let artifact = model["outputs"]["artifacts"]["m"]["location"]
        .as_str()
        .unwrap()
        .strip_prefix("file://")
        .unwrap()
        .to_owned();
    let state: Value =
        serde_json::from_slice(&std::fs::read(try_dir.join("state.json")).unwrap()).unwrap();
    (
        try_dir,
        PathBuf::from(artifact),
        state["pid"].as_i64().unwrap() as i32,
    )
}

/// One probe step of tenant B: a shell script whose standard output is its
/// verdict.
fn probe(name: &str, script: &str) -> String {
    let script = script.replace('\'', "''");
    format!(
        "  - name: {name}\n    cache: {{policy: off}}\n    container: {{image: alpine, command: [sh, -c, '{script}']}}\n"
    )
}

#[test]
fn hostile_steps_of_one_tenant_are_contained() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("hostile");
    let scratch = couler.scratch("hostile");
    let a = start_tenant_a(&couler, scratch.path());
    let (a_try, a_artifact, a_pid) = a_paths(&couler, &a);
    let data = couler.data_dir.path().display().to_string();
    let (_, b) = couler.tenant("bob");
    let api_port = couler.base.rsplit(':').next().unwrap().to_owned();

    let connect = |port: &str| {
        format!(
            "python3 -c \"import socket; socket.create_connection((\\\"127.0.0.1\\\", {port}), timeout=2)\" 2>/dev/null && echo open-{port} || echo closed-{port}"
        )
    };
    let mut steps = String::new();
    steps += &probe(
        "secrets",
        &format!(
            "ls {data}/secrets 2>/dev/null; find / \\( -path /usr -o -path /opt -o -path /proc -o -path /sys -o -path /dev \\) -prune -o -type f -print 2>/dev/null | xargs grep -l {MARK} 2>/dev/null | wc -l; cat /proc/*/environ 2>/dev/null | grep -c {MARK}; true"
        ),
    );
    // The data directory's path exists in B's sandbox only as the skeleton
    // holding B's own work directory: nothing of A's run is in it.
    steps += &probe(
        "files",
        &format!(
            "ls -R {data} 2>/dev/null | grep -c {a_run}; for f in {try_dir}/work {try_dir}/state.json {artifact}; do if cat $f >/dev/null 2>&1 || ls $f >/dev/null 2>&1; then echo reached $f; fi; done; echo done",
            a_run = a.run,
            try_dir = a_try.display(),
            artifact = a_artifact.display()
        ),
    );
    steps += &probe(
        "processes",
        &format!(
            "ls /proc | grep -c \"^[0-9]\"; kill -9 {a_pid} 2>/dev/null && echo killed || echo not-killed"
        ),
    );
    steps += &probe(
        "network",
        &[connect("5432"), connect("6379"), connect(&api_port)].join("; "),
    );
    steps += &probe(
        "writes",
        "for d in / /usr /etc /opt; do touch $d/hostile-b 2>/dev/null && echo wrote $d; done; touch /tmp/hostile-b && echo tmp-ok",
    );
    let yaml = format!("apiVersion: couler.dev/v1alpha1\nname: probe\nsteps:\n{steps}");
    let probes = couler.submit(&b, &yaml, json!({}));
    let run = couler.wait(&b, &probes, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    let result = |name: &str| {
        step(&run, name)["outputs"]["result"]
            .as_str()
            .unwrap()
            .to_owned()
    };

    // Secrets: no secrets directory, no file and no process environment
    // holding A's value.
    assert_eq!(result("secrets"), "0\n0", "{run:#}");
    // A's try, its records, its artifact and the data directory: not there.
    assert_eq!(result("files"), "0\ndone", "{run:#}");
    // Only its own processes (the shell, ls, grep and the sandbox's init),
    // and A's step cannot be signalled.
    let (count, kill) = result("processes")
        .split_once('\n')
        .map(|(c, k)| (c.parse::<u32>().unwrap(), k.to_owned()))
        .unwrap();
    assert!(count <= 6, "B sees {count} processes: {run:#}");
    assert_eq!(kill, "not-killed");
    // Postgres, Redis and the API are not reachable over loopback.
    assert_eq!(
        result("network"),
        format!("closed-5432\nclosed-6379\nclosed-{api_port}"),
        "{run:#}"
    );
    // Nothing written outside the work directory but the private /tmp.
    assert_eq!(result("writes"), "tmp-ok", "{run:#}");
    for dir in [
        Path::new("/"),
        Path::new("/usr"),
        Path::new("/etc"),
        Path::new("/tmp"),
        couler.data_dir.path(),
        scratch.path(),
    ] {
        assert!(
            !dir.join("hostile-b").exists(),
            "B wrote in {}",
            dir.display()
        );
    }

    // A's run went on, and its step got A's secret.
    std::fs::write(scratch.path().join("release"), "").unwrap();
    let run = couler.wait(&a.token, &a.run, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
    assert_eq!(
        step(&run, "hold")["outputs"]["result"],
        sha256(&a.secret),
        "A's step read A's secret"
    );
}

#[test]
fn fork_bombs_and_memory_hogs_end_only_themselves() {
    let couler = Couler::start();
    let _scheduler = couler.scheduler("bombs");
    let scratch = couler.scratch("bombs");
    let a = start_tenant_a(&couler, scratch.path());
    let (b_tenant, b) = couler.tenant("bob");
    let yaml = "apiVersion: couler.dev/v1alpha1
name: bombs
steps:
  - name: fork-bomb
    timeout: 15s
    cache: {policy: off}
    container: {image: alpine, command: [sh, -c, 'bomb() { bomb | bomb & }; bomb; sleep 30']}
  - name: memory-hog
    cache: {policy: off}
    resources: {memory: 64Mi}
    container: {image: alpine, command: [python3, -c, 'x = bytearray(512 * 1024 * 1024); print(len(x))']}
";
    let bombs = couler.submit(&b, yaml, json!({}));
    let run = couler.wait(&b, &bombs, LIMIT);
    assert_eq!(run["status"], "failed", "{run:#}");
    let hog = step(&run, "memory-hog");
    assert_eq!(hog["status"], "failed", "{run:#}");
    assert!(
        hog["message"].as_str().unwrap().contains("OOMKilled"),
        "{run:#}"
    );
    assert_eq!(step(&run, "fork-bomb")["status"], "failed", "{run:#}");
    // Nothing of B's bomb is left on the machine.
    let uids: Value =
        serde_json::from_slice(&std::fs::read(couler.data_dir.path().join("uids.json")).unwrap())
            .unwrap();
    let b_uid = uids[&b_tenant].as_u64().expect("B has a uid of its own") as u32;
    assert_ne!(uids[&b_tenant], uids[&a.tenant], "{uids}");
    wait_until(Duration::from_secs(20), || {
        processes_of(b_uid, couler.data_dir.path()) == 0
    });

    // The server answers, and A's run finishes as if nothing happened.
    let (status, _) = couler.call(Method::GET, "/readyz", &a.token, None);
    assert_eq!(status, 200);
    std::fs::write(scratch.path().join("release"), "").unwrap();
    let run = couler.wait(&a.token, &a.run, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");
}

/// Processes on the machine running as `uid`.
/// Processes running as `uid`, leaving out the sandboxes the engine
/// started ahead for the tenant and has handed to no try: bubblewrap named
/// by a path under `<data>/sandboxes` that is no link to a try yet, and its
/// idle launcher. They are the platform's and end when the tenant has
/// started nothing for 30 s; a step's processes are never among them.
fn processes_of(uid: u32, data_dir: &Path) -> usize {
    let field = |pid: &str, name: &str| -> Option<u32> {
        let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
        let line = status.lines().find_map(|l| l.strip_prefix(name))?;
        line.split_whitespace().next()?.parse().ok()
    };
    let ready_sandbox = |pid: &str| {
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        let argv0 = Path::new(std::ffi::OsStr::from_bytes(
            cmdline.split(|b| *b == 0).next().unwrap_or_default(),
        ));
        argv0.starts_with(data_dir.join("sandboxes")) && argv0.symlink_metadata().is_err()
    };
    let in_ready_sandbox = |pid: &str| {
        let mut pid = pid.to_owned();
        for _ in 0..8 {
            if ready_sandbox(&pid) {
                return true;
            }
            match field(&pid, "PPid:") {
                Some(parent) if parent > 1 => pid = parent.to_string(),
                _ => return false,
            }
        }
        false
    };
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|e| e.file_name().to_str().map(str::to_owned))
        .filter(|pid| pid.parse::<u32>().is_ok())
        .filter(|pid| field(pid, "Uid:") == Some(uid) && !in_ready_sandbox(pid))
        .count()
}

#[test]
fn a_secret_value_appears_in_no_response_event_log_or_cache_entry() {
    let debug = [("COULER__TELEMETRY__LOG_FILTER", "debug")];
    let couler = Couler::start_with(&debug);
    let _scheduler = couler.scheduler_with("leak", &debug);
    let scratch = couler.scratch("leak");
    let a = start_tenant_a(&couler, scratch.path());
    std::fs::write(scratch.path().join("release"), "").unwrap();
    let run = couler.wait(&a.token, &a.run, LIMIT);
    assert_eq!(run["status"], "succeeded", "{run:#}");

    let mut seen = vec![run.to_string()];
    let tenant = a.tenant.clone();
    for path in [
        format!("/v1/runs/{}/events", a.run),
        format!("/v1/runs/{}/logs?step=hold", a.run),
        "/v1/secrets".to_owned(),
        "/v1/secrets/hub".to_owned(),
        format!("/v1/runs/{}/plan", a.run),
    ] {
        for token in [&a.token, &admin(&tenant)] {
            let (_, body) = couler.call(Method::GET, &path, token, None);
            seen.push(body.to_string());
        }
    }
    for (what, text) in seen
        .iter()
        .map(|t| ("an API response", t))
        .chain([("the services' logs", &couler.service_logs())])
    {
        assert!(!text.contains(&a.secret), "the secret is in {what}: {text}");
    }
    assert!(
        couler.service_logs().len() > 1000,
        "the services logged at debug level"
    );
    let cache = redis_dump(&couler.redis_prefix);
    assert!(!cache.is_empty(), "the run left cache entries");
    assert!(
        !cache.contains(&a.secret),
        "the secret is in the cache index"
    );
}

/// Every key under `prefix` in Redis with its value, as text.
fn redis_dump(prefix: &str) -> String {
    let cli = |args: &[&str]| {
        let out = Command::new("redis-cli").args(args).output().unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let mut dump = String::new();
    for key in cli(&["--scan", "--pattern", &format!("{prefix}*")]).lines() {
        let value = match cli(&["type", key]).trim() {
            "string" => cli(&["get", key]),
            "hash" => cli(&["hgetall", key]),
            "set" => cli(&["smembers", key]),
            "zset" => cli(&["zrange", key, "0", "-1", "withscores"]),
            "list" => cli(&["lrange", key, "0", "-1"]),
            other => other.to_owned(),
        };
        dump.push_str(key);
        dump.push_str(&value);
    }
    dump
}
