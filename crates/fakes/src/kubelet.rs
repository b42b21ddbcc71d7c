//! Runs pods as local processes.
//!
//! Each pod gets a directory on the host; inside the pod that directory is
//! `/tmp` (a private mount namespace, `unshare --mount`), so two pods that
//! both write `/tmp/outputs/x` do not see each other's files, and a
//! controller reads a finished pod's outputs from [`Kubelet::tmp`]. The
//! process runs in its own process group so a kill takes its children too.

use crate::kube::{Resource, Store};
use std::collections::HashMap;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use tokio::process::Command;

/// What to run in a pod's single container.
#[derive(Debug, Clone, Default)]
pub struct Container {
    /// The program and its arguments (Kubernetes' `command` + `args`).
    pub argv: Vec<String>,
    pub env: Vec<(String, String)>,
    /// Inside the pod; defaults to `/tmp`.
    pub working_dir: Option<String>,
}

/// How a container ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Exit {
    /// The exit code, or 128 + the signal number.
    pub code: i32,
    /// Killed through [`Kubelet::kill`] (a deadline or a cancel).
    pub killed: bool,
    /// Everything the container wrote to stdout.
    pub stdout: String,
}

impl Exit {
    pub fn succeeded(&self) -> bool {
        self.code == 0 && !self.killed
    }
}

struct Pod {
    pgid: Option<i32>,
    killed: bool,
}

/// The pods of one fake cluster.
pub struct Kubelet {
    root: PathBuf,
    pods: Mutex<HashMap<String, Pod>>,
    /// The cluster's objects, for the Secrets pods read.
    store: Option<Arc<Store>>,
}

impl Kubelet {
    /// Pods' directories are created under `root`; no cluster, so pods
    /// cannot read Secrets.
    pub fn new(root: impl Into<PathBuf>) -> Arc<Kubelet> {
        Arc::new(Kubelet {
            root: root.into(),
            pods: Mutex::new(HashMap::new()),
            store: None,
        })
    }

    /// The kubelet of a cluster whose objects are in `store`.
    pub fn in_cluster(root: impl Into<PathBuf>, store: Arc<Store>) -> Arc<Kubelet> {
        Arc::new(Kubelet {
            root: root.into(),
            pods: Mutex::new(HashMap::new()),
            store: Some(store),
        })
    }

    /// The value of `key` of the Secret `name`, as a container's
    /// `secretKeyRef` reads it; the error is the kubelet's
    /// `CreateContainerConfigError` message.
    pub fn secret(&self, namespace: &str, name: &str, key: &str) -> Result<String, String> {
        use base64::Engine as _;
        let secrets = Resource::new("", "v1", "secrets");
        let secret = self
            .store
            .as_ref()
            .and_then(|s| s.get(&secrets, namespace, name))
            .ok_or_else(|| format!("secret \"{name}\" not found"))?;
        let missing = || format!("couldn't find key {key} in Secret {namespace}/{name}");
        if let Some(text) = secret["stringData"][key].as_str() {
            return Ok(text.to_owned());
        }
        let encoded = secret["data"][key].as_str().ok_or_else(missing)?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(encoded)
            .map_err(|e| format!("Secret {namespace}/{name}: key {key} is not base64: {e}"))?;
        String::from_utf8(bytes)
            .map_err(|_| format!("Secret {namespace}/{name}: key {key} is not UTF-8"))
    }

    /// The value a container spec's env var takes from elsewhere: the
    /// Secret key its `valueFrom.secretKeyRef` names; none without
    /// `valueFrom`.
    pub fn value_from(
        &self,
        namespace: &str,
        var: &serde_json::Value,
    ) -> Result<Option<String>, String> {
        let from = &var["valueFrom"];
        if from.is_null() {
            return Ok(None);
        }
        let reference = &from["secretKeyRef"];
        if !reference.is_object() {
            return Err(format!(
                "env {}: only valueFrom.secretKeyRef is supported by the fake kubelet",
                var["name"].as_str().unwrap_or_default()
            ));
        }
        let name = reference["name"].as_str().unwrap_or_default();
        let key = reference["key"].as_str().unwrap_or_default();
        self.secret(namespace, name, key).map(Some)
    }

    fn dir(&self, namespace: &str, pod: &str) -> PathBuf {
        self.root.join(namespace).join(pod)
    }

    /// The host directory that is the pod's `/tmp`: write a pod's inputs
    /// here before [`Kubelet::run`], read its outputs after.
    pub fn tmp(&self, namespace: &str, pod: &str) -> PathBuf {
        self.dir(namespace, pod).join("tmp")
    }

    /// Maps a path inside the pod to the host, when it is under `/tmp`.
    pub fn host_path(&self, namespace: &str, pod: &str, path: &str) -> Option<PathBuf> {
        let rest = path.strip_prefix("/tmp")?;
        if !(rest.is_empty() || rest.starts_with('/')) {
            return None;
        }
        Some(self.tmp(namespace, pod).join(rest.trim_start_matches('/')))
    }

    /// Creates the pod's directories; call before writing inputs into
    /// [`Kubelet::tmp`]. [`Kubelet::run`] calls it too.
    pub fn prepare(&self, namespace: &str, pod: &str) -> io::Result<()> {
        std::fs::create_dir_all(self.tmp(namespace, pod))
    }

    /// Runs the container to its end. Logs (stdout, then stderr) are kept
    /// for [`Kubelet::logs`].
    pub async fn run(&self, namespace: &str, pod: &str, container: &Container) -> io::Result<Exit> {
        let key = format!("{namespace}/{pod}");
        if self
            .pods
            .lock()
            .unwrap()
            .get(&key)
            .is_some_and(|p| p.killed)
        {
            return Ok(Exit {
                code: 137,
                killed: true,
                stdout: String::new(),
            });
        }
        self.prepare(namespace, pod)?;
        let dir = self.dir(namespace, pod);
        let Some((program, args)) = container.argv.split_first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the container has no command",
            ));
        };
        let tmp = self.tmp(namespace, pod);
        let mut command = Command::new("unshare");
        if !is_root() {
            command.args(["--user", "--map-root-user"]);
        }
        command
            .args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(r#"mount --bind "$0" /tmp && cd "$1" && shift && exec "$@""#)
            .arg(&tmp)
            .arg(container.working_dir.as_deref().unwrap_or("/tmp"))
            .arg(program)
            .args(args)
            .envs(container.env.iter().map(|(k, v)| (k, v)))
            .env("HOSTNAME", pod)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(dir.join("stdout"))?)
            .stderr(std::fs::File::create(dir.join("stderr"))?)
            .process_group(0)
            .kill_on_drop(false);
        let mut child = command.spawn()?;
        let pgid = child.id().map(|id| id as i32);
        let killed_before_start = {
            let mut pods = self.pods.lock().unwrap();
            let entry = pods.entry(key.clone()).or_insert(Pod {
                pgid: None,
                killed: false,
            });
            entry.pgid = pgid;
            entry.killed
        };
        if killed_before_start {
            kill_group(pgid);
        }
        let status = child.wait().await?;
        let killed = {
            let mut pods = self.pods.lock().unwrap();
            let pod = pods.get_mut(&key);
            let killed = pod.as_ref().is_some_and(|p| p.killed);
            if let Some(pod) = pod {
                pod.pgid = None;
            }
            killed
        };
        // Children left behind in the group end with the pod, as they do
        // when a container's PID 1 exits.
        kill_group(pgid);
        let code = status
            .code()
            .unwrap_or_else(|| 128 + status.signal().unwrap_or(9));
        let stdout = String::from_utf8_lossy(&std::fs::read(dir.join("stdout"))?).into_owned();
        Ok(Exit {
            code,
            killed,
            stdout,
        })
    }

    /// Kills the pod's processes (now, or as soon as it starts).
    pub fn kill(&self, namespace: &str, pod: &str) {
        let mut pods = self.pods.lock().unwrap();
        let entry = pods.entry(format!("{namespace}/{pod}")).or_insert(Pod {
            pgid: None,
            killed: false,
        });
        entry.killed = true;
        kill_group(entry.pgid);
    }

    /// What the pod wrote so far (stdout, then stderr), if it ever ran.
    pub fn logs(&self, namespace: &str, pod: &str) -> Option<String> {
        let dir = self.dir(namespace, pod);
        let stdout = std::fs::read(dir.join("stdout")).ok()?;
        let stderr = std::fs::read(dir.join("stderr")).unwrap_or_default();
        let mut text = String::from_utf8_lossy(&stdout).into_owned();
        text.push_str(&String::from_utf8_lossy(&stderr));
        Some(text)
    }

    /// Whether the pod's directory exists (it ran or is running).
    pub fn exists(&self, namespace: &str, pod: &str) -> bool {
        Path::new(&self.dir(namespace, pod)).exists()
    }
}

fn kill_group(pgid: Option<i32>) {
    if let Some(pgid) = pgid {
        // SAFETY: kill(2) with a negative pid signals a process group; no
        // memory is involved.
        unsafe {
            libc::kill(-pgid, libc::SIGKILL);
        }
    }
}

fn is_root() -> bool {
    // SAFETY: geteuid(2) has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Container {
        Container {
            argv: vec!["sh".into(), "-c".into(), script.into()],
            ..Container::default()
        }
    }

    fn kubelet(name: &str) -> (Arc<Kubelet>, PathBuf) {
        let root =
            std::env::temp_dir().join(format!("couler-kubelet-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        (Kubelet::new(&root), root)
    }

    #[tokio::test]
    async fn pods_have_a_private_tmp() {
        let (k, root) = kubelet("private");
        let a = k
            .run("ns", "a", &sh("echo a > /tmp/x && ls /tmp"))
            .await
            .unwrap();
        let b = k
            .run("ns", "b", &sh("cat /tmp/x 2>/dev/null || echo none"))
            .await
            .unwrap();
        assert!(a.succeeded(), "{a:?}");
        assert_eq!(a.stdout, "x\n");
        assert_eq!(b.stdout, "none\n");
        assert_eq!(
            std::fs::read_to_string(k.tmp("ns", "a").join("x")).unwrap(),
            "a\n"
        );
        assert_eq!(
            k.host_path("ns", "a", "/tmp/x").unwrap(),
            k.tmp("ns", "a").join("x")
        );
        assert_eq!(k.host_path("ns", "a", "/tmpx"), None);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[tokio::test]
    async fn exit_codes_logs_and_kills() {
        let (k, root) = kubelet("exits");
        let failed = k
            .run("ns", "f", &sh("echo out; echo err >&2; exit 3"))
            .await
            .unwrap();
        assert_eq!(failed.code, 3);
        assert_eq!(k.logs("ns", "f").unwrap(), "out\nerr\n");
        let k2 = k.clone();
        let sleeper =
            tokio::spawn(async move { k2.run("ns", "s", &sh("sleep 30 & wait")).await.unwrap() });
        while !k.exists("ns", "s") {
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        k.kill("ns", "s");
        let exit = tokio::time::timeout(std::time::Duration::from_secs(5), sleeper)
            .await
            .expect("killed promptly")
            .unwrap();
        assert!(exit.killed && !exit.succeeded(), "{exit:?}");
        std::fs::remove_dir_all(root).unwrap();
    }
}
