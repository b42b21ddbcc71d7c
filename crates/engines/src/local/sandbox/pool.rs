//! Sandboxes started ahead: bubblewrap's own start (about 3 ms of CPU,
//! `docs/design/local-sandbox.md`) is paid before a try is due, not when it
//! is.
//!
//! Running as root, for each tenant and network a try has started with in
//! the last `IDLE`, a thread of its own keeps `local.sandbox.started_ahead`
//! sandboxes ready: bubblewrap started with everything a try of that tenant
//! gets that does not depend on the try (namespaces, the system, `/proc`,
//! `/dev`, `/tmp`, the platform's mounts, a cgroup, its logs and exit
//! status as unnamed files in the data directory), its root left writable,
//! running a shell (`LAUNCHER`) that says it is ready and then waits for
//! the commands the try runs. Handing one to a try (`handover`) binds the
//! try's work and declared directories into its mount namespace, makes the
//! root read only, names the files in the try's directory and writes the
//! shell the try's `cd`, environment and `exec`: a sandbox as a cold start
//! makes it, in a fraction of a millisecond.
//!
//! A sandbox never handed out ends with the engine: its shell reads the
//! end of its commands when the engine's end of the pipe closes.

use super::super::cgroup::{Cgroups, Limits, TryCgroup};
use super::{Bind, Confinement, FIRST_FD, Sandbox, StepIo};
use crate::Network;
use std::collections::HashMap;
use std::ffi::OsString;
use std::fs::{self, File};
use std::io::{self, Read, Seek};
use std::os::fd::{AsFd, OwnedFd, RawFd};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

/// A tenant and network whose tries have not started for this long get no
/// more sandboxes ahead, and those ready are stopped.
const IDLE: Duration = Duration::from_secs(30);
/// How long a try waits for a sandbox being started (about 3 ms of CPU)
/// before it starts its own.
const WAIT: Duration = Duration::from_millis(20);
/// Threads starting sandboxes: a chain of short steps on two cores starts
/// them faster with two than with one (`docs/design/local-sandbox.md`).
const KEEPERS: usize = 2;
/// A sandbox not ready by then is stopped (bubblewrap is stuck).
const READY_WITHIN: Duration = Duration::from_secs(10);
/// Where the names bubblewrap carries as `argv[0]` become links to the
/// try's exit file once a sandbox is handed out (see `process::reattach`).
pub(super) const ALIASES: &str = "sandboxes";
/// The descriptors the launcher reads its commands from and says it is
/// ready on (below 10: the shell's redirections take one digit).
pub(super) const COMMANDS_FD: RawFd = FIRST_FD;
const READY_FD: RawFd = FIRST_FD + 1;
/// The platform's mounts are bound from here up.
const MOUNTS_FROM: RawFd = FIRST_FD + 2;

/// Whose sandboxes these are: the tenant's uid and gid, and whether it has
/// host networking.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct Key {
    pub owner: (u32, u32),
    pub host: bool,
}

/// The sandboxes started ahead, and the thread that starts them.
#[derive(Debug)]
pub(super) struct Pool {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    /// Wakes the keepers: a key is short of sandboxes, or the pool ends.
    wake: Condvar,
    /// Wakes tries waiting for a sandbox being started.
    filled: Condvar,
}

#[derive(Debug, Default)]
struct State {
    ready: HashMap<Key, Vec<Ready>>,
    /// Sandboxes being started, per key.
    starting: HashMap<Key, usize>,
    /// When each key last asked for a sandbox.
    wanted: HashMap<Key, Instant>,
    stopped: bool,
}

/// One sandbox started ahead, waiting for a try.
#[derive(Debug)]
pub(super) struct Ready {
    /// bubblewrap's pid, the leader of its process group (0 once handed
    /// out: nothing left to stop).
    pub pid: i32,
    /// What bubblewrap carries as `argv[0]`.
    pub alias: PathBuf,
    /// The write end of the launcher's commands.
    pub commands: Option<OwnedFd>,
    /// The sandbox's mount namespace.
    pub mounts: File,
    pub stdout: Option<File>,
    pub stderr: Option<File>,
    pub status: Option<File>,
    pub cgroup: Option<TryCgroup>,
}

/// The launcher: says it is ready, then runs what the engine writes.
fn launcher() -> String {
    format!("echo >&{READY_FD}; exec {READY_FD}>&-; . /dev/fd/{COMMANDS_FD}")
}

impl Pool {
    /// Starts the thread that keeps `ready` sandboxes per key of
    /// `sandbox`, each in a cgroup of `cgroups` with `limits` until it is
    /// handed out.
    pub(super) fn start(
        sandbox: Weak<Sandbox>,
        ready: usize,
        cgroups: Option<Cgroups>,
        limits: Limits,
    ) -> io::Result<Pool> {
        let shared = Arc::new(Shared::default());
        for _ in 0..KEEPERS {
            let keeper = Keeper {
                shared: shared.clone(),
                sandbox: sandbox.clone(),
                ready,
                cgroups: cgroups.clone(),
                limits,
            };
            std::thread::Builder::new()
                .name("couler-sandboxes".into())
                .spawn(move || keeper.run())?;
        }
        Ok(Pool { shared })
    }

    /// A ready sandbox for `key`: one waiting, else one about to be (a
    /// start of its own would only compete with it for the CPU), else
    /// none. Either way `key` has sandboxes started from now on.
    pub(super) fn take(&self, key: Key) -> Option<Ready> {
        let mut state = lock(&self.shared.state);
        state.wanted.insert(key, Instant::now());
        self.shared.wake.notify_all();
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(ready) = state.ready.get_mut(&key).and_then(Vec::pop) {
                return Some(ready);
            }
            let now = Instant::now();
            if state.starting.get(&key).is_none_or(|n| *n == 0) || now >= deadline {
                return None;
            }
            state = (self.shared.filled)
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        lock(&self.shared.state).stopped = true;
        self.shared.wake.notify_all();
    }
}

fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(|e| e.into_inner())
}

/// The thread keeping sandboxes ready.
struct Keeper {
    shared: Arc<Shared>,
    sandbox: Weak<Sandbox>,
    ready: usize,
    cgroups: Option<Cgroups>,
    limits: Limits,
}

impl Keeper {
    fn run(self) {
        static SLOTS: AtomicU64 = AtomicU64::new(0);
        let mut failures = 0u32;
        while let Some(key) = self.next() {
            let Some(sandbox) = self.sandbox.upgrade() else {
                break;
            };
            let slot = SLOTS.fetch_add(1, Ordering::Relaxed);
            let prepared = self.prepare(&sandbox, key, slot);
            let mut state = lock(&self.shared.state);
            if let Some(n) = state.starting.get_mut(&key) {
                *n = n.saturating_sub(1);
            }
            self.shared.filled.notify_all();
            match prepared {
                // (Not for a key gone idle meanwhile: nothing would stop it.)
                Ok(ready) if !state.stopped && state.wanted.contains_key(&key) => {
                    failures = 0;
                    state.ready.entry(key).or_default().push(ready);
                }
                Ok(ready) => {
                    drop(state);
                    drop(ready);
                }
                Err(e) => {
                    drop(state);
                    failures += 1;
                    if failures == 3 {
                        tracing::warn!(error = %e, "cannot start sandboxes ahead; tries start their own");
                    } else {
                        tracing::debug!(error = %e, "a sandbox started ahead failed");
                    }
                    // 10 ms, doubling up to 10 s.
                    let pause = Duration::from_millis(10 << failures.min(10));
                    std::thread::sleep(pause);
                }
            }
        }
        let left: Vec<Ready> = lock(&self.shared.state)
            .ready
            .drain()
            .flat_map(|(_, ready)| ready)
            .collect();
        drop(left);
    }

    /// The next key short of sandboxes; none once the pool is dropped.
    fn next(&self) -> Option<Key> {
        let mut state = lock(&self.shared.state);
        loop {
            if state.stopped {
                return None;
            }
            let now = Instant::now();
            let idle: Vec<Key> = state
                .wanted
                .iter()
                .filter(|(_, at)| now.duration_since(**at) > IDLE)
                .map(|(key, _)| *key)
                .collect();
            if !idle.is_empty() {
                let stale: Vec<Ready> = idle
                    .iter()
                    .flat_map(|key| {
                        state.wanted.remove(key);
                        state.starting.remove(key);
                        state.ready.remove(key).unwrap_or_default()
                    })
                    .collect();
                drop(state);
                drop(stale);
                state = lock(&self.shared.state);
                continue;
            }
            let short = state.wanted.keys().copied().find(|key| {
                let ready = state.ready.get(key).map_or(0, Vec::len);
                ready + state.starting.get(key).copied().unwrap_or(0) < self.ready
            });
            if let Some(key) = short {
                *state.starting.entry(key).or_default() += 1;
                return Some(key);
            }
            // Until the first key goes idle, whose sandboxes are then
            // stopped (not a whole IDLE later).
            let until_idle = state
                .wanted
                .values()
                .map(|at| (*at + IDLE).saturating_duration_since(now))
                .min()
                .unwrap_or(IDLE);
            state = self
                .shared
                .wake
                .wait_timeout(state, until_idle + Duration::from_millis(1))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Starts one sandbox for `key` and waits until it is ready.
    fn prepare(&self, sandbox: &Sandbox, key: Key, slot: u64) -> Result<Ready, String> {
        let name = format!("{}-{slot}", std::process::id());
        let alias = sandbox.data_dir.join(ALIASES).join(&name);
        let network = match key.host {
            true => Network::Host,
            false => Network::None,
        };
        let network = sandbox.network(Some(network), Some(key.owner))?;
        let cgroup = self
            .cgroups
            .as_ref()
            .map(|c| c.for_try(&format!("slot-{name}")));
        if let Some(cgroup) = &cgroup {
            cgroup
                .create(self.limits)
                .map_err(|e| format!("could not create a sandbox's cgroup: {e}"))?;
        }
        let mut ready = Ready {
            pid: 0,
            alias,
            commands: None,
            mounts: File::open("/dev/null").map_err(|e| e.to_string())?,
            stdout: Some(unnamed(&sandbox.data_dir)?),
            stderr: Some(unnamed(&sandbox.data_dir)?),
            status: Some(unnamed(&sandbox.data_dir)?),
            cgroup,
        };
        let pipe = || rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC);
        let (commands, commands_in) = pipe().map_err(|e| e.to_string())?;
        // The launcher reopens its end by path, as the tenant's uid.
        let (uid, gid) = key.owner;
        rustix::fs::fchown(
            &commands,
            Some(rustix::fs::Uid::from_raw(uid)),
            Some(rustix::fs::Gid::from_raw(gid)),
        )
        .map_err(|e| e.to_string())?;
        let (mut ready_out, ready_in) = pipe()
            .map(|(r, w)| (File::from(r), w))
            .map_err(|e| e.to_string())?;
        ready.commands = Some(commands_in);

        let hosts: Vec<&Path> = sandbox.mounts.iter().map(|m| m.path.as_path()).collect();
        let binds: Vec<Bind<'_>> = sandbox
            .mounts
            .iter()
            .enumerate()
            .map(|(i, m)| Bind {
                fd: MOUNTS_FROM + i as RawFd,
                at: &m.path,
                writable: m.writable,
            })
            .collect();
        let status_fd = MOUNTS_FROM + binds.len() as RawFd;
        let mut argv: Vec<OsString> = vec![ready.alias.clone().into()];
        argv.extend(sandbox.args(None, &binds, &[], &network));
        argv.extend(["--json-status-fd".into(), status_fd.to_string().into()]);
        argv.extend([
            "--".into(),
            "/bin/sh".into(),
            "-c".into(),
            launcher().into(),
        ]);
        let (stdout, stderr, status) = ready.files();
        let io = StepIo {
            env: &[],
            stdout,
            stderr,
        };
        let handed = [
            (commands.as_fd(), COMMANDS_FD),
            (ready_in.as_fd(), READY_FD),
            (status.as_fd(), status_fd),
        ];
        let confinement = Confinement {
            owner: Some(key.owner),
            cgroup: ready.cgroup.as_ref(),
            network,
        };
        let start = sandbox.confined(&argv, io, (&hosts, &binds), &handed, confinement)?;
        let spawned =
            super::spawn(&start).map_err(|e| format!("could not start bubblewrap: {e}"))?;
        ready.pid = spawned.pid;
        // Only the launcher keeps the write end: it closes once ready.
        drop((start, ready_in, commands));
        if let Some(failure) = spawned.failure {
            return Err(failure);
        }
        let mut byte = [0u8];
        if !ready_within(&ready_out, READY_WITHIN) || !matches!(ready_out.read(&mut byte), Ok(1)) {
            return Err(format!(
                "bubblewrap ended before its launcher ran: {}",
                ready.stderr_text()
            ));
        }
        let child = ready.child_pid()?;
        ready.mounts = File::open(format!("/proc/{child}/ns/mnt"))
            .map_err(|e| format!("cannot open the sandbox's mount namespace: {e}"))?;
        Ok(ready)
    }
}

impl Ready {
    fn files(&self) -> (&File, &File, &File) {
        fn file(f: &Option<File>) -> &File {
            f.as_ref().expect("not handed out")
        }
        (file(&self.stdout), file(&self.stderr), file(&self.status))
    }

    fn stderr_text(&self) -> String {
        let mut text = String::new();
        if let Some(mut file) = self.stderr.as_ref() {
            let _ = file.rewind();
            let _ = file.take(4096).read_to_string(&mut text);
        }
        text.trim().to_owned()
    }

    /// The pid (on the machine) of bubblewrap's process in the sandbox,
    /// from the first line bubblewrap writes to the status file.
    fn child_pid(&self) -> Result<i32, String> {
        let mut text = String::new();
        if let Some(mut file) = self.status.as_ref() {
            let _ = file.rewind();
            let _ = file.read_to_string(&mut text);
        }
        let first: Option<serde_json::Value> = text
            .lines()
            .next()
            .and_then(|l| serde_json::from_str(l).ok());
        first
            .as_ref()
            .and_then(|v| v.get("child-pid")?.as_i64())
            .map(|pid| pid as i32)
            .ok_or_else(|| format!("bubblewrap wrote no child pid: {text:?}"))
    }
}

impl Drop for Ready {
    /// A sandbox never handed out: stopped, reaped and its cgroup removed.
    fn drop(&mut self) {
        if self.pid > 0 {
            // SAFETY: our own child, the leader of its group, not reaped.
            unsafe {
                libc::kill(-self.pid, libc::SIGKILL);
                libc::waitpid(self.pid, std::ptr::null_mut(), 0);
            }
        }
        if let Some(cgroup) = &self.cgroup {
            cgroup.remove();
        }
    }
}

/// Whether `pipe` has something to read (or its end) within `limit`.
fn ready_within(pipe: &File, limit: Duration) -> bool {
    let mut fd = libc::pollfd {
        fd: std::os::fd::AsRawFd::as_raw_fd(pipe),
        events: libc::POLLIN,
        revents: 0,
    };
    let ms = limit.as_millis().min(i32::MAX as u128) as i32;
    // SAFETY: one pollfd we own, for the call's duration.
    unsafe { libc::poll(&mut fd, 1, ms) > 0 }
}

/// A file in `dir` with no name yet (`O_TMPFILE`), given one in the try's
/// directory when the sandbox is handed out.
fn unnamed(dir: &Path) -> Result<File, String> {
    File::options()
        .read(true)
        .write(true)
        .mode(0o600)
        .custom_flags(libc::O_TMPFILE)
        .open(dir)
        .map_err(|e| format!("cannot make an unnamed file in {}: {e}", dir.display()))
}

/// Clears what sandboxes of an earlier engine left: links of tries that
/// have ended, and idle cgroups of sandboxes never handed out.
pub(super) fn sweep(data_dir: &Path, cgroups: Option<&Cgroups>) -> io::Result<()> {
    let aliases = data_dir.join(ALIASES);
    fs::create_dir_all(&aliases)?;
    for entry in fs::read_dir(&aliases)?.flatten() {
        let ended = match fs::read_link(entry.path()) {
            Ok(exit) => exit
                .parent()
                .is_none_or(|dir| super::super::process::exit_code(dir).is_some() || !dir.exists()),
            Err(_) => true,
        };
        if ended {
            let _ = fs::remove_file(entry.path());
        }
    }
    if let Some(cgroups) = cgroups {
        cgroups.remove_idle("slot-");
    }
    Ok(())
}
