//! The deployment files as the checks see them: the Dockerfile's stages,
//! and every Couler process the compose file and the rendered Kubernetes
//! overlays start ([`Launch`]), with its arguments, environment (ConfigMaps
//! and Secrets resolved), ports, probes and mounts.

use couler_tests::repo_root;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::OnceLock;

/// The compose file as docker-compose normalizes it, and each overlay as
/// `kubectl kustomize` renders it (`scripts/check-deploy --render`).
pub struct Rendered {
    pub compose: Value,
    pub overlays: BTreeMap<String, Vec<Value>>,
}

/// Rendered once per test process; reuses `scripts/check-deploy`'s output
/// when it runs these tests (`COULER_DEPLOY_RENDERED`).
pub fn rendered() -> &'static Rendered {
    static RENDERED: OnceLock<Rendered> = OnceLock::new();
    RENDERED.get_or_init(|| {
        let given = std::env::var_os("COULER_DEPLOY_RENDERED");
        let dir = match &given {
            Some(dir) => PathBuf::from(dir),
            None => {
                let dir = std::env::temp_dir().join(format!(
                    "couler-deploy-{}",
                    couler_tests::tempdir::uuid_like()
                ));
                let out = std::process::Command::new(repo_root().join("scripts/check-deploy"))
                    .arg("--render")
                    .arg(&dir)
                    .output()
                    .expect("scripts/check-deploy runs");
                assert!(
                    out.status.success(),
                    "scripts/check-deploy --render failed:\n{}{}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                dir
            }
        };
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).unwrap();
        let compose = serde_saphyr::from_str(&read("compose.yml")).expect("compose YAML");
        let mut overlays = BTreeMap::new();
        for entry in std::fs::read_dir(repo_root().join("deploy/kubernetes/overlays")).unwrap() {
            let name = entry.unwrap().file_name().to_string_lossy().into_owned();
            let docs: Vec<Value> = serde_saphyr::from_multiple(&read(&format!("{name}.yaml")))
                .expect("rendered manifests are YAML");
            overlays.insert(name, docs.into_iter().filter(|d| !d.is_null()).collect());
        }
        if given.is_none() {
            let _ = std::fs::remove_dir_all(&dir);
        }
        Rendered { compose, overlays }
    })
}

/// One stage of the Dockerfile.
#[derive(Debug, Default)]
pub struct Stage {
    pub name: String,
    pub workdir: String,
    /// `cargo build -p` packages.
    pub packages: Vec<String>,
    /// Debian packages `apt-get install`ed.
    pub apt: Vec<String>,
    /// `COPY` sources and destinations (`--from` stage, if any).
    pub copies: Vec<(Option<String>, Vec<String>, String)>,
    /// Files the `RUN`s copy from the build's `target/release/`.
    pub built: Vec<String>,
    pub expose: Vec<u16>,
    pub entrypoint: Option<Vec<String>>,
    pub cmd: Option<Vec<String>>,
    pub healthcheck: Option<Vec<String>>,
    pub user: Option<String>,
}

impl Stage {
    /// Absolute paths of the files this stage copies to `dir` (from
    /// another stage or the build context).
    pub fn files_in(&self, dir: &str) -> Vec<String> {
        let mut files = Vec::new();
        for (_, sources, dest) in &self.copies {
            let dest = if dest.starts_with('/') {
                dest.clone()
            } else {
                format!("{}/{dest}", self.workdir)
            };
            if dest.trim_end_matches('/') != dir.trim_end_matches('/') {
                continue;
            }
            for source in sources {
                let file = source.rsplit('/').next().unwrap();
                files.push(format!("{}/{file}", dir.trim_end_matches('/')));
            }
        }
        files
    }
}

/// The Dockerfile's stages, in order. Continuation lines are joined;
/// exec-form (`["…"]`) commands are read as JSON.
pub fn dockerfile() -> Vec<Stage> {
    let text = std::fs::read_to_string(repo_root().join("Dockerfile")).unwrap();
    let mut logical = Vec::new();
    let mut current = String::new();
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with('#') && current.is_empty() || trimmed.is_empty() {
            continue;
        }
        match trimmed.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(trimmed);
                logical.push(std::mem::take(&mut current));
            }
        }
    }
    let exec = |rest: &str| -> Vec<String> {
        serde_json::from_str(rest.trim())
            .unwrap_or_else(|_| vec!["sh".into(), "-c".into(), rest.trim().into()])
    };
    let mut stages: Vec<Stage> = Vec::new();
    for line in logical {
        let (instruction, rest) = line.split_once(char::is_whitespace).unwrap_or((&line, ""));
        let words: Vec<&str> = rest.split_whitespace().collect();
        if instruction == "FROM" {
            let name = match words.as_slice() {
                [_, "AS", name] => name.to_string(),
                _ => String::new(),
            };
            stages.push(Stage {
                name,
                workdir: "/".into(),
                ..Stage::default()
            });
            continue;
        }
        let Some(stage) = stages.last_mut() else {
            continue;
        };
        match instruction {
            "WORKDIR" => stage.workdir = rest.trim().to_owned(),
            "USER" => stage.user = Some(rest.trim().to_owned()),
            "EXPOSE" => stage.expose.extend(
                words
                    .iter()
                    .map(|p| p.parse::<u16>().expect("EXPOSE a port")),
            ),
            "ENTRYPOINT" => stage.entrypoint = Some(exec(rest)),
            "CMD" => stage.cmd = Some(exec(rest)),
            "HEALTHCHECK" => {
                let (_, command) = rest.split_once(" CMD ").expect("HEALTHCHECK … CMD");
                stage.healthcheck = Some(exec(command));
            }
            "COPY" => {
                let from = words
                    .iter()
                    .find_map(|w| w.strip_prefix("--from="))
                    .map(str::to_owned);
                let paths: Vec<String> = words
                    .iter()
                    .filter(|w| !w.starts_with("--"))
                    .map(|w| w.to_string())
                    .collect();
                let (dest, sources) = paths.split_last().expect("COPY SRC… DEST");
                stage.copies.push((from, sources.to_vec(), dest.clone()));
            }
            "RUN" => {
                for command in rest.split("&&").filter(|c| c.contains("cargo build")) {
                    let words: Vec<&str> = command.split_whitespace().collect();
                    for pair in words.windows(2) {
                        if pair[0] == "-p" {
                            stage.packages.push(pair[1].to_owned());
                        }
                    }
                }
                stage.built.extend(
                    words
                        .iter()
                        .filter_map(|w| w.strip_prefix("target/release/"))
                        .map(str::to_owned),
                );
                if let Some(at) = rest.find("apt-get install") {
                    let tail = &rest[at + "apt-get install".len()..];
                    let args = tail.split("&&").next().unwrap();
                    stage.apt.extend(
                        args.split_whitespace()
                            .filter(|w| !w.starts_with('-'))
                            .map(str::to_owned),
                    );
                }
            }
            _ => {}
        }
    }
    stages
}

/// A port a probe or health check asks: a number, or a container port's name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Port {
    Number(u16),
    Named(String),
}

/// An HTTP health check: the port and the path it asks.
#[derive(Debug, Clone)]
pub struct Probe {
    pub port: Port,
    pub path: String,
}

/// One Couler process as a deployment file starts it.
#[derive(Debug, Clone)]
pub struct Launch {
    /// Where it comes from, for messages: `compose api`, `dev Deployment/couler-api`.
    pub origin: String,
    /// The Couler command line under the image's entrypoint (compose's
    /// `command`, the manifests' `args`; the image's `CMD` when none is
    /// given).
    pub argv: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Ports it declares: compose's published targets, or container ports
    /// (with their names).
    pub ports: Vec<(Option<String>, u16)>,
    pub probes: Vec<Probe>,
    /// Volume mount targets (paths that are writable or provided).
    pub mounts: Vec<String>,
}

/// The image name compose and the manifests give Couler's runtime image.
fn is_couler_image(image: &str) -> bool {
    let name = image.split(':').next().unwrap_or_default();
    name == "couler" || name.ends_with("/couler")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .map(|s| s.as_str().unwrap_or_default().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// `http://127.0.0.1:PORT/PATH` in a health check's command.
pub fn url_probe(argv: &[String]) -> Option<Probe> {
    let url = argv.iter().find(|a| a.starts_with("http://"))?;
    let rest = url.strip_prefix("http://")?;
    let (host_port, path) = rest.split_once('/').unwrap_or((rest, ""));
    let port = host_port.rsplit_once(':')?.1.parse().ok()?;
    Some(Probe {
        port: Port::Number(port),
        path: format!("/{path}"),
    })
}

/// Every compose service that runs Couler's image.
pub fn compose_launches(compose: &Value, runtime: &Stage) -> Vec<Launch> {
    let mut launches = Vec::new();
    for (name, service) in compose["services"].as_object().expect("services") {
        if !service["image"].as_str().is_some_and(is_couler_image) {
            continue;
        }
        // An entrypoint of its own keeps the image's (tini, which reaps
        // what sandboxes leave) in front of the Couler program.
        let mut argv = match strings(&service["entrypoint"]) {
            entrypoint if entrypoint.is_empty() => Vec::new(),
            entrypoint => {
                let init = runtime
                    .entrypoint
                    .as_deref()
                    .expect("the image's ENTRYPOINT");
                assert!(
                    entrypoint.starts_with(init),
                    "compose {name}'s entrypoint {entrypoint:?} drops the image's {init:?}"
                );
                entrypoint[init.len()..].to_vec()
            }
        };
        argv.extend(strings(&service["command"]));
        if argv.is_empty() {
            argv = runtime.cmd.clone().expect("the image's CMD");
        }
        let env = service["environment"]
            .as_object()
            .map(|e| {
                e.iter()
                    .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                    .collect()
            })
            .unwrap_or_default();
        let published = service["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| p["target"].as_u64().expect("a port target") as u16);
        let exposed = service["expose"].as_array().into_iter().flatten().map(|p| {
            p.as_str()
                .and_then(|p| p.parse().ok())
                .expect("an exposed port")
        });
        let ports = published.chain(exposed).map(|p| (None, p)).collect();
        let test = strings(&service["healthcheck"]["test"]);
        let probes = match test.first().map(String::as_str) {
            Some("NONE") => Vec::new(),
            Some(_) => url_probe(&test).into_iter().collect(),
            None => runtime
                .healthcheck
                .as_deref()
                .and_then(url_probe)
                .into_iter()
                .collect(),
        };
        let mounts = service["volumes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str()?.split(':').nth(1).map(str::to_owned))
            .collect();
        launches.push(Launch {
            origin: format!("compose {name}"),
            argv,
            env,
            ports,
            probes,
            mounts,
        });
    }
    launches
}

/// The object of `kind` named `name` (generated names carry a hash suffix).
pub fn find<'a>(docs: &'a [Value], kind: &str, name: &str) -> Option<&'a Value> {
    docs.iter()
        .find(|d| d["kind"] == kind && d["metadata"]["name"] == name)
}

/// The `data` of a ConfigMap or Secret (Secrets' values decoded).
fn data(docs: &[Value], kind: &str, name: &str) -> Option<BTreeMap<String, String>> {
    let doc = find(docs, kind, name)?;
    let mut out = BTreeMap::new();
    for (k, v) in doc["data"].as_object().into_iter().flatten() {
        let v = v.as_str().unwrap_or_default();
        let v = match kind {
            "Secret" => String::from_utf8(base64_decode(v)).expect("UTF-8 secret"),
            _ => v.to_owned(),
        };
        out.insert(k.clone(), v);
    }
    for (k, v) in doc["stringData"].as_object().into_iter().flatten() {
        out.insert(k.clone(), v.as_str().unwrap_or_default().to_owned());
    }
    Some(out)
}

fn base64_decode(s: &str) -> Vec<u8> {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in s.bytes().filter(|c| *c != b'=' && !c.is_ascii_whitespace()) {
        let v = ALPHABET.iter().position(|a| *a == c).expect("base64") as u32;
        bits = bits << 6 | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push((bits >> n) as u8);
            bits &= (1 << n) - 1;
        }
    }
    out
}

/// The pod template of a workload (Deployment, Job).
pub fn pod_spec(doc: &Value) -> &Value {
    &doc["spec"]["template"]["spec"]
}

/// Every container of Couler's image in a rendered overlay. A ConfigMap or
/// Secret a container reads that the overlay lacks must be `optional`
/// (one the operator creates) — except `couler-secrets`, which every
/// overlay but production defines.
pub fn manifest_launches(overlay: &str, docs: &[Value], runtime: &Stage) -> Vec<Launch> {
    let mut launches = Vec::new();
    for doc in docs {
        let spec = pod_spec(doc);
        for container in spec["containers"].as_array().into_iter().flatten() {
            if !container["image"].as_str().is_some_and(is_couler_image) {
                continue;
            }
            let origin = format!(
                "{overlay} {}/{} container {}",
                doc["kind"].as_str().unwrap(),
                doc["metadata"]["name"].as_str().unwrap(),
                container["name"].as_str().unwrap()
            );
            assert!(
                container["command"].is_null(),
                "{origin} replaces the image's entrypoint (tini, which reaps what sandboxes leave)"
            );
            let mut argv = strings(&container["args"]);
            if argv.is_empty() {
                argv = runtime.cmd.clone().expect("the image's CMD");
            }
            let mut env = BTreeMap::new();
            for from in container["envFrom"].as_array().into_iter().flatten() {
                let (kind, reference) = match (&from["configMapRef"], &from["secretRef"]) {
                    (r, _) if r.is_object() => ("ConfigMap", r),
                    (_, r) => ("Secret", r),
                };
                let name = reference["name"].as_str().unwrap();
                match data(docs, kind, name) {
                    Some(values) => env.extend(values),
                    None => assert!(
                        reference["optional"] == true
                            || (overlay == "production" && name == "couler-secrets"),
                        "{origin} reads {kind} {name}, which {overlay} does not define and is not optional"
                    ),
                }
            }
            for var in container["env"].as_array().into_iter().flatten() {
                let name = var["name"].as_str().unwrap().to_owned();
                env.insert(name, var["value"].as_str().unwrap_or_default().to_owned());
            }
            let ports = container["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|p| {
                    (
                        p["name"].as_str().map(str::to_owned),
                        p["containerPort"].as_u64().unwrap() as u16,
                    )
                })
                .collect();
            let probes = ["startupProbe", "readinessProbe", "livenessProbe"]
                .iter()
                .filter_map(|p| {
                    let get = &container[*p]["httpGet"];
                    let port = match &get["port"] {
                        Value::String(name) => Port::Named(name.clone()),
                        Value::Number(n) => Port::Number(n.as_u64()? as u16),
                        _ => return None,
                    };
                    Some(Probe {
                        port,
                        path: get["path"].as_str()?.to_owned(),
                    })
                })
                .collect();
            let mounts = container["volumeMounts"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|m| m["mountPath"].as_str().unwrap().to_owned())
                .collect();
            launches.push(Launch {
                origin,
                argv,
                env,
                ports,
                probes,
                mounts,
            });
        }
    }
    launches
}

impl Launch {
    /// The port a probe asks, its name resolved against the declared ports.
    pub fn probe_port(&self, probe: &Probe) -> u16 {
        match &probe.port {
            Port::Number(n) => *n,
            Port::Named(name) => {
                self.ports
                    .iter()
                    .find(|(n, _)| n.as_deref() == Some(name))
                    .unwrap_or_else(|| {
                        panic!(
                            "{}: a probe asks port {name:?}, which it does not declare",
                            self.origin
                        )
                    })
                    .1
            }
        }
    }

    /// The port of an address setting (`0.0.0.0:8080`), checking that it
    /// listens on every interface (a container's loopback is its own).
    pub fn listen_port(&self, var: &str) -> Option<u16> {
        let addr: std::net::SocketAddr = self
            .env
            .get(var)?
            .parse()
            .unwrap_or_else(|e| panic!("{}: {var} is not an address: {e}", self.origin));
        assert!(
            addr.ip().is_unspecified(),
            "{}: {var} = {addr} is unreachable from outside the container",
            self.origin
        );
        Some(addr.port())
    }
}
