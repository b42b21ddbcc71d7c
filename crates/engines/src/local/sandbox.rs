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
//! A try starts without forking the engine and without a program in front
//! of bubblewrap: `spawn` starts bubblewrap the way `posix_spawn` starts a
//! program, from a child that shares the engine's memory and, before it
//! executes bubblewrap, joins the try's cgroups, enters the try's network
//! namespace (the tenant's, or a fresh one made ahead: `netns`) and drops
//! to the tenant's uid and gid with no supplementary groups. The host paths
//! to show are opened by the engine (descriptors 3… for `--bind-fd`;
//! declared directories are the engine's own, made in the try's work
//! directory just before; bubblewrap turns each descriptor back into its
//! path and opens that as the tenant's uid, so the directories above the
//! data directory must be searchable by all users: the engine checks that
//! when it starts, see `reach`). bubblewrap records the step's exit status
//! in the try's `exit` file (`--json-status-fd`), and carries that file's
//! path as its `argv[0]`, by which a re-attaching engine knows it.

use super::cgroup::{Cgroups, Limits, TryCgroup};
use super::declared::{Files, Reserved};
use super::network::{HostNetwork, Network};
use serde::Deserialize;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

mod handover;
mod mountns;
mod netns;
mod pool;
mod reach;
mod spawn;
mod uids;

pub(super) use handover::{Ask, EXIT, Handed};

pub use reach::{ClosedDir, closed_ancestor, unreachable_message};
pub(super) use spawn::spawn;
use uids::Uids;

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
    /// Sandboxes kept started ahead for each tenant (and network) whose
    /// steps ran in the last 30 s, running as root (`sandbox/pool.rs`); 0:
    /// every try starts its own.
    pub started_ahead: usize,
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
            started_ahead: 2,
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
    /// Network namespaces made ahead for `none` (running as root).
    fresh_networks: Option<netns::FreshNetworks>,
    /// The mount namespace tries start bubblewrap in (running as root):
    /// the machine's without the mounts no sandbox shows (`mountns`).
    mounts_ns: Option<OwnedFd>,
    /// A resolver configuration to show as `/etc/resolv.conf` with host
    /// networking, where the host's names a resolver on its own loopback.
    resolv_conf: Option<PathBuf>,
    data_dir: PathBuf,
    /// Sandboxes started ahead (running as root; see `start_ahead`).
    pool: std::sync::OnceLock<pool::Pool>,
}

/// What one try runs as and in.
pub(super) struct Confinement<'a> {
    /// The tenant's uid and gid (running as root) for the sandbox; none:
    /// the engine's own.
    pub owner: Option<(u32, u32)>,
    pub cgroup: Option<&'a TryCgroup>,
    pub network: NetJoin,
}

/// The network namespace a try runs in.
#[derive(Debug)]
pub(super) enum NetJoin {
    /// A new one bubblewrap makes, with only a loopback.
    New,
    /// A new one made ahead (`netns`), with only a loopback.
    Fresh(OwnedFd),
    /// The tenant's (host networking).
    Tenant(PathBuf),
}

/// What the step's process gets besides its sandbox: exactly this
/// environment, `/dev/null` as standard input and these log files.
pub(super) struct StepIo<'a> {
    pub env: &'a [(String, String)],
    pub stdout: &'a File,
    pub stderr: &'a File,
}

/// systemd-resolved's list of real upstream servers: the host's own
/// `/etc/resolv.conf` then names 127.0.0.53, which steps cannot reach.
const UPSTREAM_RESOLV_CONF: &str = "/run/systemd/resolve/resolv.conf";

/// System directories shown read only when present: a directory is bound,
/// a link (merged `/usr`) is recreated.
pub(super) const SYSTEM: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt",
];
/// Descriptors handed to bubblewrap are placed from this number up.
const FIRST_FD: RawFd = 3;
/// Host paths a try can be shown: its work directory, `local.mounts` and
/// its declared directories. Each costs bubblewrap a bind mount and a pass
/// over the mount table at every start.
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
        let fresh_networks = match root {
            true => netns::FreshNetworks::start()
                .inspect_err(|e| tracing::info!(error = %e, "no network namespaces made ahead; bubblewrap makes them"))
                .ok(),
            false => None,
        };
        let mounts_ns = match root {
            true => small_mount_namespace(&bwrap, data_dir, &config.mounts),
            false => None,
        };
        let host_network = std::sync::OnceLock::new();
        if config.network == Network::Host {
            let _ = host_network.set(Ok(HostNetwork::set_up()?));
        }
        let upstream = Path::new(UPSTREAM_RESOLV_CONF);
        let mut sandbox = Sandbox {
            bwrap,
            system,
            mounts: config.mounts.clone(),
            uids: root.then(|| Uids::new(data_dir.join("uids.json"), config.uid_base)),
            resolv_conf: upstream.exists().then(|| upstream.to_owned()),
            network: config.network,
            host_network,
            fresh_networks,
            mounts_ns,
            data_dir: data_dir.to_owned(),
            pool: std::sync::OnceLock::new(),
        };
        match sandbox.probe() {
            Err(e) if sandbox.mounts_ns.is_some() => {
                tracing::warn!(error = %e, "bubblewrap cannot start from the sandboxes' mount namespace; it starts from the machine's");
                sandbox.mounts_ns = None;
                sandbox.probe()?;
            }
            probed => probed?,
        }
        Ok(sandbox)
    }

    /// Runs one sandboxed `true`, started from where tries start.
    fn probe(&self) -> Result<(), String> {
        let mut probe = Command::new(&self.bwrap);
        probe.args(self.args(Some(Path::new("/")), &[], &[], &NetJoin::New));
        probe.arg("--").arg("true");
        if let Some(ns) = &self.mounts_ns {
            let ns = ns.as_raw_fd();
            // SAFETY: runs in the forked child before it executes
            // bubblewrap, and only enters the namespace `ns` names (open
            // in the engine while `probe` runs).
            unsafe {
                std::os::unix::process::CommandExt::pre_exec(&mut probe, move || {
                    let ns = std::os::fd::BorrowedFd::borrow_raw(ns);
                    rustix::thread::move_into_link_name_space(
                        ns,
                        Some(rustix::thread::LinkNameSpaceType::Mount),
                    )
                    .map_err(io::Error::from)
                });
            }
        }
        match probe.output() {
            Ok(out) if out.status.success() => Ok(()),
            Ok(out) => Err(format!(
                "bubblewrap cannot make a sandbox here ({}): {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )),
            Err(e) => Err(format!("cannot run {}: {e}", self.bwrap.display())),
        }
    }

    /// Keeps `ready` sandboxes started ahead per tenant and network (see
    /// `pool`), each in a cgroup of `cgroups` with `limits` until it is
    /// handed out; only running as root, where the engine may bind into a
    /// started sandbox.
    pub(super) fn start_ahead(
        self: &Arc<Self>,
        ready: usize,
        cgroups: Option<Cgroups>,
        limits: Limits,
    ) {
        if ready == 0 || self.uids.is_none() {
            return;
        }
        if let Err(e) = pool::sweep(&self.data_dir, cgroups.as_ref()) {
            tracing::info!(error = %e, "no sandboxes started ahead");
            return;
        }
        match pool::Pool::start(Arc::downgrade(self), ready, cgroups, limits) {
            Ok(started) => {
                let _ = self.pool.set(started);
            }
            Err(e) => tracing::info!(error = %e, "no sandboxes started ahead"),
        }
    }

    /// Hands the try `ask` describes a sandbox started ahead for the
    /// tenant running as `owner` with `network`, when one is ready and the
    /// try can take one; none: the try starts its own (`start`).
    pub(super) fn hand_ready(
        &self,
        ask: &Ask<'_>,
        owner: Option<(u32, u32)>,
        network: Option<Network>,
    ) -> Option<Result<Handed, String>> {
        let (pool, owner) = (self.pool.get()?, owner?);
        if !self.fits_ahead(ask) {
            return None;
        }
        let host = network.unwrap_or(self.network) == Network::Host;
        let ready = pool.take(pool::Key { owner, host })?;
        if let (Some(cgroup), Some(limits)) = (&ready.cgroup, ask.limits)
            && let Err(e) = cgroup.create(limits)
        {
            // Nothing is handed yet: the try starts its own, whose cgroup
            // reports what is wrong with its limits.
            tracing::warn!(error = %e, "cannot give a sandbox started ahead the step's limits");
            return None;
        }
        let shown = ask.files.binds.iter().map(|(_, at)| at.as_path());
        let shown: Vec<&Path> = shown.chain([ask.files.work.as_path()]).collect();
        let tmpfs = (!self.shows(ask.cwd, &shown)).then_some(ask.cwd);
        Some(handover::hand(ready, ask, owner, tmpfs))
    }

    /// Whether a sandbox started ahead fits the try: what it binds lies
    /// clear of the system directories and the platform's mounts (which a
    /// started sandbox already shows), and the launcher's shell can set
    /// its environment.
    fn fits_ahead(&self, ask: &Ask<'_>) -> bool {
        let clear = |at: &Path| {
            at != Path::new("/")
                && !SYSTEM.iter().any(|s| at.starts_with(s))
                && !self
                    .mounts
                    .iter()
                    .any(|m| m.path.starts_with(at) || at.starts_with(&m.path))
        };
        !ask.program.is_empty()
            && clear(&ask.files.work)
            && ask.files.binds.iter().all(|(_, at)| clear(at))
            && ask.env.iter().all(|(key, _)| handover::shell_name(key))
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

    /// The network namespace a try of the tenant running as `owner` runs
    /// in with `network` (the tenant's, else the platform's default).
    pub(super) fn network(
        &self,
        network: Option<Network>,
        owner: Option<(u32, u32)>,
    ) -> Result<NetJoin, String> {
        if network.unwrap_or(self.network) == Network::None {
            let fresh = self.fresh_networks.as_ref().and_then(|f| f.take());
            return Ok(fresh.map_or(NetJoin::New, NetJoin::Fresh));
        }
        let host = self
            .host_network
            .get_or_init(HostNetwork::set_up)
            .as_ref()
            .map_err(Clone::clone)?;
        let (Some(uids), Some((uid, _))) = (&self.uids, owner) else {
            return Err("host networking needs tenant uids (the engine running as root)".into());
        };
        host.namespace(uid, uid - uids.base).map(NetJoin::Tenant)
    }

    /// bubblewrap's arguments up to the program: namespaces, the system,
    /// `/proc`, `/dev`, `/tmp`, an empty working directory where nothing
    /// else is, then each bound descriptor at its path (declared
    /// directories first, so that the work directory or a mount below one
    /// stays visible) and the links of declared files in `/`.
    ///
    /// Without `cwd` (a sandbox started ahead, `pool`) the root stays
    /// writable and no directory is entered: the engine binds what the try
    /// needs and makes the root read only when it hands the sandbox over.
    fn args(
        &self,
        cwd: Option<&Path>,
        binds: &[Bind<'_>],
        links: &[(PathBuf, PathBuf)],
        network: &NetJoin,
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
        if let NetJoin::New = network {
            args.push("--unshare-net".into());
        }
        args.extend(self.system.iter().cloned());
        if let (NetJoin::Tenant(_), Some(conf)) = (network, &self.resolv_conf) {
            args.extend(["--ro-bind".into(), conf.into(), "/etc/resolv.conf".into()]);
        }
        for arg in ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"] {
            args.push(arg.into());
        }
        let bound: Vec<&Path> = binds.iter().map(|b| b.at).collect();
        if let Some(cwd) = cwd.filter(|cwd| !self.shows(cwd, &bound)) {
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
        if let Some(cwd) = cwd {
            // The sandbox's root (the skeleton holding the mount points) is
            // not for steps to write in either.
            args.extend(["--remount-ro".into(), "/".into()]);
            args.extend(["--chdir".into(), cwd.into()]);
        }
        args
    }

    /// Whether `path` lies in what the sandbox shows of the host.
    fn shows(&self, path: &Path, binds: &[&Path]) -> bool {
        let system = SYSTEM.iter().map(Path::new);
        let mounts = self.mounts.iter().map(|m| m.path.as_path());
        path == Path::new("/")
            || path.starts_with("/tmp")
            || system
                .chain(mounts)
                .chain(binds.iter().copied())
                .any(|p| path.starts_with(p))
    }

    /// What starts `program` (the step's argv) in a sandbox as
    /// `confinement` says, with `io`, showing the work
    /// directory and the declared directories of `files` writable and the
    /// platform's mounts; bubblewrap writes the exit status to `exit_file`.
    pub(super) fn start(
        &self,
        exit_file: &Path,
        files: &Files,
        cwd: &Path,
        program: &[String],
        confinement: Confinement<'_>,
        io: StepIo<'_>,
    ) -> Result<spawn::Start, String> {
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
        let binds: Vec<Bind<'_>> = shown
            .iter()
            .enumerate()
            .map(|(i, (_, at, writable))| Bind {
                fd: FIRST_FD + i as RawFd,
                at,
                writable: *writable,
            })
            .collect();
        let status_fd = FIRST_FD + binds.len() as RawFd;
        // argv[0] names the exit file: a re-attaching engine knows its try's
        // bubblewrap by it (bubblewrap's own messages do not use it).
        let mut argv = vec![exit_file.as_os_str().to_owned()];
        argv.extend(self.args(Some(cwd), &binds, &files.links, &confinement.network));
        argv.extend(["--json-status-fd".into(), status_fd.to_string().into()]);
        argv.push("--".into());
        argv.extend(program.iter().map(OsString::from));
        let status = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(exit_file)
            .map_err(|e| format!("could not create {}: {e}", exit_file.display()))?;
        let hosts: Vec<&Path> = shown.iter().map(|(host, _, _)| *host).collect();
        let handed = [(status.as_fd(), status_fd)];
        self.confined(&argv, io, (&hosts, &binds), &handed, confinement)
    }

    /// What starts bubblewrap with `argv` as `confinement` says, with `io`
    /// as its descriptors 0 to 2, each host path of `shown` opened at its
    /// bind's descriptor and `handed` at theirs.
    fn confined(
        &self,
        argv: &[OsString],
        io: StepIo<'_>,
        shown: (&[&Path], &[Bind<'_>]),
        handed: &[(BorrowedFd<'_>, RawFd)],
        confinement: Confinement<'_>,
    ) -> Result<spawn::Start, String> {
        let mut start = spawn::Start::new(&self.bwrap, argv, io.env)?;
        let handing = |e: io::Error| format!("could not hand the sandbox its descriptors: {e}");
        let null = File::open("/dev/null").map_err(handing)?;
        for (fd, at) in [
            (null.as_fd(), 0),
            (io.stdout.as_fd(), 1),
            (io.stderr.as_fd(), 2),
        ] {
            start.hand(fd, at).map_err(handing)?;
        }
        for (host, bind) in shown.0.iter().zip(shown.1) {
            // Opened as the engine's user, only to name the path to
            // bubblewrap; O_PATH neither reads nor blocks (a FIFO).
            let dir = File::options()
                .read(true)
                .custom_flags(libc::O_PATH)
                .open(host)
                .map_err(|e| format!("cannot open {}: {e}", host.display()))?;
            start.hand(&dir, bind.fd).map_err(handing)?;
        }
        for (fd, at) in handed {
            start.hand(fd, *at).map_err(handing)?;
        }
        if let Some(cgroup) = confinement.cgroup {
            start.join_cgroups(&cgroup.procs_files())?;
        }
        if let Some(ns) = &self.mounts_ns {
            start.enter_mounts(ns.try_clone().map_err(handing)?);
        }
        match confinement.network {
            NetJoin::New => {}
            NetJoin::Fresh(netns) => start.enter_network(netns),
            NetJoin::Tenant(path) => {
                let netns = File::open(&path).map_err(|e| {
                    format!(
                        "cannot open the tenant's network namespace {}: {e}",
                        path.display()
                    )
                })?;
                start.enter_network(netns.into());
            }
        }
        if let (Some(_), Some((uid, gid))) = (&self.uids, confinement.owner) {
            start.run_as(uid, gid);
        }
        Ok(start)
    }
}

/// The small mount namespace of `mountns` for a sandbox showing the system
/// directories, `data_dir` and `mounts`, with bubblewrap at `bwrap`; none
/// (bubblewrap starts from the machine's) when it cannot be made.
fn small_mount_namespace(bwrap: &Path, data_dir: &Path, mounts: &[HostMount]) -> Option<OwnedFd> {
    let shown = SYSTEM
        .iter()
        .map(Path::new)
        .chain([bwrap, data_dir, Path::new(UPSTREAM_RESOLV_CONF)])
        .chain(mounts.iter().map(|m| m.path.as_path()));
    // Each as written and as the kernel names it (through links).
    let trees = shown
        .flat_map(|p| [Some(p.to_owned()), fs::canonicalize(p).ok()])
        .flatten()
        .collect();
    let keep = mountns::Keep {
        trees,
        alone: vec!["/proc".into(), "/dev".into()],
    };
    match mountns::small(keep) {
        Ok((ns, left)) => {
            tracing::debug!(
                mounts = left,
                "sandboxes start from a mount namespace of their own"
            );
            Some(ns)
        }
        Err(e) => {
            tracing::info!(error = %e, "sandboxes start from the machine's mount namespace");
            None
        }
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
