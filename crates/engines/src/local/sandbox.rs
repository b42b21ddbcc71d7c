//! The sandbox each step try runs in, with Debian's `bubblewrap` (`bwrap`,
//! the sandbox Flatpak is built on): see `docs/design/local-sandbox.md` for
//! why this and not another.
//!
//! A try gets new user, mount, pid, ipc, uts and network namespaces. It sees
//! the host's system directories read only (`/usr` and the `/bin`, `/lib…`
//! links or directories, `/etc`, `/opt`), a private `/tmp`, its own `/proc`
//! and a minimal `/dev`, its work directory (at the same path as on the
//! host, so `{{…path}}` references hold), the host paths the platform
//! lists in `local.mounts`, and at the directory of each declared input and
//! output path a directory of the work directory (see `declared`); nothing
//! else of the data directory: not other runs, not the artifact store, not
//! the try's own control files. Its network is a loopback of its own.
//! Nested user namespaces are refused.
//!
//! Running as root, the engine gives each tenant a uid and gid of its own
//! from `uid_base` (kept in `<data dir>/uids.json`), and the try's wrapper
//! and sandbox run as that uid: never root outside the sandbox, and one
//! tenant's files are not another's. Not running as root, every tenant's
//! steps run as the engine's own (unprivileged) uid, and the namespaces
//! alone keep them apart; the engine says so at start.
//!
//! A try starts without forking the engine (a fork copies the page tables
//! of the whole process: 5 ms at 300 MB, where `posix_spawn` takes 0.9):
//! the engine spawns `/bin/sh` with [`PREPARE`], which, still as the
//! engine's user, joins the try's cgroups, opens the host paths to show
//! (descriptors 3… for `--bind-fd`; declared directories are the engine's
//! own, made in the try's work directory just before; bubblewrap turns each
//! descriptor back into its path and opens that as the tenant's uid, so the
//! directories above the data directory must be searchable by all users:
//! the engine checks that when it starts, see `reach`),
//! then runs bubblewrap through `nsenter`, which joins the tenant's
//! network namespace (host networking) and drops to the tenant's uid and
//! gid with no supplementary groups. The shell records the exit status.

use super::cgroup::TryCgroup;
use super::declared::{Files, Reserved};
use super::network::{HostNetwork, Network};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

mod reach;

pub use reach::{ClosedDir, closed_ancestor, unreachable_message};

/// Why steps cannot be sandboxed here.
#[derive(Debug, Clone, thiserror::Error)]
pub enum SandboxError {
    /// bubblewrap (or what it needs) is missing or cannot run here: steps
    /// fail saying so.
    #[error("{0}")]
    Unavailable(String),
    /// Steps' users cannot reach the data directory or a mount: every step
    /// would fail, so the engine does not start.
    #[error("{0}")]
    Unreachable(String),
}

/// How steps of the local engine are isolated (`[local]` settings).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxConfig {
    /// `bubblewrap` (default): every try in a sandbox of its own. `off`:
    /// steps run as plain host processes, for a single-tenant machine that
    /// cannot run bubblewrap; never for several tenants.
    pub isolation: Isolation,
    /// `none` (default): a loopback of its own. `host`: out through the
    /// machine (NAT), never to it; needs root (see `network`).
    pub network: Network,
    /// The `bwrap` program (default: found on `PATH`).
    pub bwrap: PathBuf,
    /// Host paths steps may see (datasets, tool installations), read only
    /// unless `writable`.
    pub mounts: Vec<HostMount>,
    /// The first uid (and gid) given to tenants when the engine runs as
    /// root; tenant n gets `uid_base + n`.
    pub uid_base: u32,
    /// Processes (threads) one try may have at once.
    pub max_pids: u32,
    /// The memory limit of a step that requests none, in bytes (none: no
    /// limit). A step that fills memory then ends only itself.
    pub default_memory: Option<u64>,
}

impl Default for SandboxConfig {
    fn default() -> Self {
        SandboxConfig {
            isolation: Isolation::Bubblewrap,
            network: Network::None,
            bwrap: PathBuf::from("bwrap"),
            mounts: Vec::new(),
            uid_base: 1_500_000,
            max_pids: 1024,
            default_memory: Some(4 << 30),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Isolation {
    Bubblewrap,
    Off,
}

/// Whether steps run as their tenants' own uids with these settings here
/// (bubblewrap, the engine running as root): those uids must then reach
/// the data directory (see `reach`).
pub fn tenant_uids(config: &SandboxConfig) -> bool {
    // SAFETY: plain syscall.
    config.isolation == Isolation::Bubblewrap && unsafe { libc::geteuid() } == 0
}

/// A host path visible in every step's sandbox, at the same path.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HostMount {
    pub path: PathBuf,
    #[serde(default)]
    pub writable: bool,
}

/// A working bubblewrap set-up.
#[derive(Debug)]
pub(super) struct Sandbox {
    bwrap: PathBuf,
    /// util-linux's `nsenter`, to drop to a tenant's uid (running as root).
    nsenter: Option<PathBuf>,
    /// The arguments that show the host's system directories.
    system: Vec<OsString>,
    mounts: Vec<HostMount>,
    /// Tenant uids, when the engine runs as root.
    uids: Option<Uids>,
    /// The platform's default network for steps.
    network: Network,
    /// Host networking, set up when first needed (at start when it is the
    /// default); `Err` says why it cannot be offered.
    host_network: std::sync::OnceLock<Result<HostNetwork, String>>,
    /// A resolver configuration to show as `/etc/resolv.conf` with host
    /// networking, where the host's names a resolver on its own loopback.
    resolv_conf: Option<PathBuf>,
    data_dir: PathBuf,
}

/// What one try runs as and in.
pub(super) struct Confinement<'a> {
    /// The tenant's uid and gid (running as root) for the sandbox; none:
    /// the engine's own.
    pub owner: Option<(u32, u32)>,
    pub cgroup: Option<&'a TryCgroup>,
    /// The network namespace to join (host networking); none: a new one.
    pub network: Option<PathBuf>,
}

/// The shell that starts a sandboxed try: `$1` the exit file, then the
/// `cgroup.procs` files to join up to `--`, the paths to open as
/// descriptors 3, 4, … up to `--`, then the command (`nsenter … bwrap …`).
/// Its own failures exit 125 with a message on standard error.
const PREPARE: &str = r#"f=$1; shift
fail() { echo "couler: $1" >&2; echo 125 >"$f"; exit 125; }
while [ "$1" != -- ]; do echo 0 >"$1" || fail "cannot join the step's cgroup $1"; shift; done; shift
i=3; while [ "$1" != -- ]; do eval "exec $i<\"\$1\"" || fail "cannot open $1"; i=$((i + 1)); shift; done; shift
"$@"; c=$?; echo $c >"$f"; exit $c"#;

/// systemd-resolved's list of real upstream servers: the host's own
/// `/etc/resolv.conf` then names 127.0.0.53, which steps cannot reach.
const UPSTREAM_RESOLV_CONF: &str = "/run/systemd/resolve/resolv.conf";

/// System directories shown read only when present: a directory is bound,
/// a link (merged `/usr`) is recreated.
pub(super) const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];
/// Descriptors handed to bubblewrap are placed from this number up (the
/// shell opens them: it knows single digits only).
const FIRST_FD: RawFd = 3;
/// Host paths a try can be shown: its work directory, `local.mounts` and
/// its declared directories (descriptors 3 to 9).
const MAX_BINDS: usize = 7;

impl Sandbox {
    /// Checks that bubblewrap runs here (one sandboxed `true`) and that a
    /// try in the data directory can be shown to its step (see `reach`);
    /// `Err` says why not.
    pub(super) fn detect(config: &SandboxConfig, data_dir: &Path) -> Result<Sandbox, SandboxError> {
        let sandbox = Sandbox::find(config, data_dir).map_err(SandboxError::Unavailable)?;
        sandbox.probe_reach().map_err(SandboxError::Unreachable)?;
        Ok(sandbox)
    }

    /// Finds bubblewrap and what it shows, and runs one sandboxed `true`.
    fn find(config: &SandboxConfig, data_dir: &Path) -> Result<Sandbox, String> {
        let bwrap = find_program(&config.bwrap).ok_or_else(|| {
            format!(
                "bubblewrap ({}) is not installed; install it (Debian: apt-get install bubblewrap) or set local.sandbox.isolation = \"off\" on a single-tenant machine",
                config.bwrap.display()
            )
        })?;
        let mut system = Vec::new();
        for dir in SYSTEM {
            let path = Path::new(dir);
            match fs::symlink_metadata(path) {
                Ok(m) if m.file_type().is_symlink() => {
                    let target = fs::read_link(path).map_err(|e| e.to_string())?;
                    system.extend(["--symlink".into(), target.into(), path.into()]);
                }
                Ok(m) if m.is_dir() => {
                    system.extend(["--ro-bind".into(), path.into(), path.into()]);
                }
                _ => {}
            }
        }
        if config.mounts.len() >= MAX_BINDS {
            return Err(format!(
                "local.mounts lists {} paths; a step can be shown at most {}",
                config.mounts.len(),
                MAX_BINDS - 1
            ));
        }
        for mount in &config.mounts {
            if !mount.path.is_absolute() || !mount.path.exists() {
                return Err(format!(
                    "local.mounts: {} is not an existing absolute path",
                    mount.path.display()
                ));
            }
        }
        // SAFETY: plain syscall.
        let root = unsafe { libc::geteuid() } == 0;
        let nsenter = match root {
            true => Some(find_program(Path::new("nsenter")).ok_or(
                "nsenter (util-linux) is not installed; the engine needs it to run steps as their tenant's uid",
            )?),
            false => None,
        };
        let host_network = std::sync::OnceLock::new();
        if config.network == Network::Host {
            let _ = host_network.set(Ok(HostNetwork::set_up()?));
        }
        let upstream = Path::new(UPSTREAM_RESOLV_CONF);
        let sandbox = Sandbox {
            bwrap,
            nsenter,
            system,
            mounts: config.mounts.clone(),
            uids: root.then(|| Uids::new(data_dir.join("uids.json"), config.uid_base)),
            resolv_conf: upstream.exists().then(|| upstream.to_owned()),
            network: config.network,
            host_network,
            data_dir: data_dir.to_owned(),
        };
        let mut probe = Command::new(&sandbox.bwrap);
        probe.args(sandbox.args(Path::new("/"), &[], &[], false));
        probe.arg("--").arg("true");
        match probe.output() {
            Ok(out) if out.status.success() => Ok(sandbox),
            Ok(out) => Err(format!(
                "bubblewrap cannot make a sandbox here ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => Err(format!("cannot run {}: {e}", sandbox.bwrap.display())),
        }
    }

    /// What declared directories must stay clear of.
    pub(super) fn reserved(&self) -> Reserved<'_> {
        Reserved {
            system: SYSTEM,
            data_dir: &self.data_dir,
            mounts: &self.mounts,
            spare_binds: MAX_BINDS - 1 - self.mounts.len(),
        }
    }

    /// Whether tenants get uids of their own.
    pub(super) fn per_tenant_uids(&self) -> bool {
        self.uids.is_some()
    }

    /// The uid and gid of `tenant`'s steps (running as root).
    pub(super) fn owner(&self, tenant: &str) -> Result<Option<(u32, u32)>, String> {
        match &self.uids {
            Some(uids) => uids
                .of(tenant)
                .map(|id| Some((id, id)))
                .map_err(|e| format!("cannot give tenant {tenant} a uid: {e}")),
            None => Ok(None),
        }
    }

    /// The network namespace a try of the tenant running as `owner` joins
    /// with `network` (the tenant's, else the platform's default); none:
    /// bubblewrap makes a new one with only a loopback.
    pub(super) fn network(
        &self,
        network: Option<Network>,
        owner: Option<(u32, u32)>,
    ) -> Result<Option<PathBuf>, String> {
        if network.unwrap_or(self.network) == Network::None {
            return Ok(None);
        }
        let host = self
            .host_network
            .get_or_init(HostNetwork::set_up)
            .as_ref()
            .map_err(Clone::clone)?;
        let (Some(uids), Some((uid, _))) = (&self.uids, owner) else {
            return Err("host networking needs tenant uids (the engine running as root)".into());
        };
        host.namespace(uid, uid - uids.base).map(Some)
    }

    /// bubblewrap's arguments up to the program: namespaces, the system,
    /// `/proc`, `/dev`, `/tmp`, an empty working directory where nothing
    /// else is, then each bound descriptor at its path (declared
    /// directories first, so that the work directory or a mount below one
    /// stays visible) and the links of declared files in `/`. `joined`: the
    /// try joins a network namespace before bubblewrap starts.
    fn args(
        &self,
        cwd: &Path,
        binds: &[Bind<'_>],
        links: &[(PathBuf, PathBuf)],
        joined: bool,
    ) -> Vec<OsString> {
        let mut args: Vec<OsString> = [
            "--unshare-user",
            "--unshare-ipc",
            "--unshare-pid",
            "--unshare-uts",
            "--unshare-cgroup-try",
            "--disable-userns",
            "--hostname",
            "couler-step",
        ]
        .iter()
        .map(OsString::from)
        .collect();
        if !joined {
            args.push("--unshare-net".into());
        }
        args.extend(self.system.iter().cloned());
        if let (true, Some(conf)) = (joined, &self.resolv_conf) {
            args.extend(["--ro-bind".into(), conf.into(), "/etc/resolv.conf".into()]);
        }
        for arg in ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"] {
            args.push(arg.into());
        }
        if !self.shows(cwd, binds) {
            // A `workingDir` the sandbox has not: an empty one of its own,
            // below what is bound.
            args.extend(["--tmpfs".into(), cwd.into()]);
        }
        for bind in binds {
            let flag = if bind.writable {
                "--bind-fd"
            } else {
                "--ro-bind-fd"
            };
            args.extend([flag.into(), bind.fd.to_string().into(), bind.at.into()]);
        }
        for (target, link) in links {
            args.extend(["--symlink".into(), target.into(), link.into()]);
        }
        // The sandbox's root (the skeleton holding the mount points) is
        // not for steps to write in either.
        args.extend(["--remount-ro".into(), "/".into()]);
        args.extend(["--chdir".into(), cwd.into()]);
        args
    }

    /// Whether `path` lies in what the sandbox shows of the host.
    fn shows(&self, path: &Path, binds: &[Bind<'_>]) -> bool {
        let system = SYSTEM.iter().map(Path::new);
        path == Path::new("/")
            || path.starts_with("/tmp")
            || system
                .chain(binds.iter().map(|b| b.at))
                .any(|p| path.starts_with(p))
    }

    /// The command that runs `program` (the step's argv) in a sandbox as
    /// `confinement` says, showing the work directory and the declared
    /// directories of `files` writable and the platform's mounts, and
    /// writes its exit status to `exit_file`.
    pub(super) fn command(
        &self,
        exit_file: &Path,
        files: &Files,
        cwd: &Path,
        program: &[String],
        confinement: &Confinement<'_>,
    ) -> Result<Command, String> {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(PREPARE)
            .arg("couler-step")
            .arg(exit_file);
        if let Some(cgroup) = confinement.cgroup {
            command.args(cgroup.procs_files());
        }
        command.arg("--");
        // (host path to open, where the sandbox shows it, writable)
        let mut shown: Vec<(&Path, &Path, bool)> = files
            .binds
            .iter()
            .map(|(host, at)| (host.as_path(), at.as_path(), true))
            .collect();
        shown.push((&files.work, &files.work, true));
        shown.extend(
            self.mounts
                .iter()
                .map(|m| (m.path.as_path(), m.path.as_path(), m.writable)),
        );
        if shown.len() > MAX_BINDS {
            return Err(format!(
                "the step would be shown {} directories; the sandbox shows at most {MAX_BINDS}",
                shown.len()
            ));
        }
        command.args(shown.iter().map(|(host, _, _)| host));
        command.arg("--");
        let binds: Vec<Bind<'_>> = shown
            .iter()
            .enumerate()
            .map(|(i, (_, at, writable))| Bind {
                fd: FIRST_FD + i as RawFd,
                at,
                writable: *writable,
            })
            .collect();
        if let (Some(nsenter), Some((uid, gid))) = (&self.nsenter, confinement.owner) {
            command.arg(nsenter);
            if let Some(netns) = &confinement.network {
                command.arg(format!("--net={}", netns.display()));
            }
            command.args(["-S", &uid.to_string(), "-G", &gid.to_string(), "--"]);
        }
        let joined = confinement.network.is_some();
        command
            .arg(&self.bwrap)
            .args(self.args(cwd, &binds, &files.links, joined))
            .arg("--")
            .args(program);
        Ok(command)
    }
}

/// A descriptor the sandbox shows at `at`.
struct Bind<'a> {
    fd: RawFd,
    at: &'a Path,
    writable: bool,
}

/// Gives `owner` the try directory and what the step writes in.
pub(super) fn hand_over(owner: Option<(u32, u32)>, dirs: &[&Path]) -> io::Result<()> {
    let Some((uid, gid)) = owner else {
        return Ok(());
    };
    for dir in dirs {
        std::os::unix::fs::chown(dir, Some(uid), Some(gid))?;
    }
    Ok(())
}

fn find_program(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return program.is_file().then(|| program.to_owned());
    }
    let path = std::env::var_os("PATH").unwrap_or_else(|| "/usr/bin:/bin".into());
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
}

/// Tenant uids, allocated once and kept on disk under a lock, so that every
/// engine on the machine gives a tenant the same uid.
#[derive(Debug)]
struct Uids {
    file: PathBuf,
    pub base: u32,
    known: Mutex<BTreeMap<String, u32>>,
}

impl Uids {
    fn new(file: PathBuf, base: u32) -> Uids {
        Uids {
            file,
            base,
            known: Mutex::default(),
        }
    }

    fn of(&self, tenant: &str) -> io::Result<u32> {
        let mut known = self.known.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(uid) = known.get(tenant) {
            return Ok(*uid);
        }
        let lock = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.file.with_extension("lock"))?;
        // SAFETY: flock on a descriptor we own; released when it closes.
        if unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let mut table: BTreeMap<String, u32> = match fs::read(&self.file) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(io::Error::other)?,
            Err(e) if e.kind() == io::ErrorKind::NotFound => BTreeMap::new(),
            Err(e) => return Err(e),
        };
        let uid = match table.get(tenant) {
            Some(uid) => *uid,
            None => {
                let next = table.values().max().map_or(self.base, |m| m + 1);
                table.insert(tenant.to_owned(), next);
                let tmp = self.file.with_extension("tmp");
                fs::write(
                    &tmp,
                    serde_json::to_vec_pretty(&table).map_err(io::Error::other)?,
                )?;
                fs::rename(&tmp, &self.file)?;
                next
            }
        };
        *known = table;
        Ok(uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenants_keep_distinct_uids_across_engines() {
        let dir = std::env::temp_dir().join(format!("couler-uids-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("uids.json");
        let a = Uids::new(file.clone(), 1000);
        assert_eq!(a.of("tnt_a").unwrap(), 1000);
        assert_eq!(a.of("tnt_b").unwrap(), 1001);
        assert_eq!(a.of("tnt_a").unwrap(), 1000);
        // Another engine on the same data directory agrees and goes on.
        let b = Uids::new(file, 1000);
        assert_eq!(b.of("tnt_b").unwrap(), 1001);
        assert_eq!(b.of("tnt_c").unwrap(), 1002);
        assert_eq!(a.of("tnt_c").unwrap(), 1002);
        fs::remove_dir_all(&dir).unwrap();
    }
}
