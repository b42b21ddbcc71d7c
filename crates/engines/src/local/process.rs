//! Step processes: start one try, wait for it, stop it, and find it again
//! after a scheduler restart.
//!
//! Every try runs in a process group of its own, sandboxed as bubblewrap
//! (see `sandbox`), else as `/bin/sh -c WRAPPER couler-step <exit file>
//! <program> <args…>`. bubblewrap or the wrapper records the program's exit
//! status in `exit` when it ends, whether or not anyone is still waiting,
//! which is what lets a new scheduler finish a step that ended while none
//! watched. The exit file's path in its command line also identifies the
//! process on re-attach (a recycled pid cannot pass for it).
//!
//! A try we started ourselves is awaited directly: one `spawn_blocking`
//! call prepares the directory, spawns, `waitid(WNOWAIT)`s for the exit,
//! kills whatever is left of the process group while the leader still pins
//! the group id, reaps with `wait4` (CPU time and peak RSS come with it)
//! and reads the outputs. Re-attached tries are polled every 50 ms.
//!
//! A try with a memory limit (`TryMeta::memory_limit`: the step's
//! `resources.memory`, raised after out-of-memory retries by `step`) is
//! sampled every 100 ms, spawned and re-attached alike: the resident
//! memory of every process in its group, summed from `/proc/<pid>/stat`
//! (one small read per process on the machine; no `/proc`, no limit). Over
//! the limit, the try's `oom` file records the use and the limit, then the
//! group gets SIGKILL and the try ends as [`Exit::OutOfMemory`]. The file
//! is written before the kill so that a restart in between still sees an
//! out-of-memory end, and the next try's limit is counted from it. Summed
//! RSS counts pages shared between the group's processes once per process,
//! so it errs towards killing early, as a container's limit would not.
//!
//! A timeout or a cancel is likewise kept in the try's `stopped` file before
//! the first signal: a driver that follows the try after ours is gone (a
//! restart, a takeover) finishes the stop and reports its reason, not a
//! lost process.

use super::beneath::Beneath;
use super::cas::Cas;
use super::cgroup::{Limits, TryCgroup};
use super::declared::Files;
use super::memory::{MEMORY_SAMPLE, OOM_FILE, Oom, over_limit, read_oom_file};
use super::sandbox::{self, Confinement, Sandbox};
use super::template::work_dir;
use crate::StepMetrics;
use couler_optimizer::{ArtifactRef, StepOutputs};
use serde::{Deserialize, Serialize};
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const WRAPPER: &str = r#"f=$1; shift; "$@"; c=$?; echo $c >"$f"; exit $c"#;
/// Between SIGTERM and SIGKILL when a step is stopped.
pub(super) const KILL_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(50);
/// `{{steps.S.outputs.result}}` keeps the last 256 KiB of standard output.
const RESULT_LIMIT: u64 = 256 * 1024;
const STDERR_MARK: &str = "--- stderr ---\n";

pub(super) const STATE_FILE: &str = "state.json";
const EXIT_FILE: &str = sandbox::EXIT;
pub(super) const STDOUT_FILE: &str = "stdout";
pub(super) const STDERR_FILE: &str = "stderr";
const SCRIPT_FILE: &str = "script";
const STOP_FILE: &str = "stopped";

/// Where a try stands in its step's loop; kept in `state.json` so that a
/// re-attached step continues counting where it was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) struct TryMeta {
    /// The step instance's try number (1, 2, …) across retries and
    /// `while` iterations: `StepState.attempt`.
    pub attempt: u32,
    /// The `while` iteration (1 without a loop).
    pub iteration: u32,
    /// Retries used in this iteration.
    pub retry: u32,
    /// The try's memory limit in bytes (none: not limited). It starts at the
    /// step's `resources.memory` and grows after out-of-memory kills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<u64>,
}

#[derive(Debug, Serialize, Deserialize)]
pub(super) struct StateFile {
    pub pid: i32,
    pub pgid: i32,
    pub started_unix_ms: u64,
    /// The try's cgroup when it is not named after the try's directory
    /// (a sandbox started ahead brings its own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cgroup: Option<String>,
    #[serde(flatten)]
    pub meta: TryMeta,
}

/// Everything one try needs, resolved up front.
pub(super) struct Launch {
    pub dir: PathBuf,
    pub argv: Vec<String>,
    /// Written to `<dir>/script`; `argv` already names that file.
    pub script: Option<String>,
    /// The step's environment, its secrets' values included (they go to
    /// the child's environment and nowhere else).
    pub env: Vec<(String, String)>,
    pub working_dir: Option<PathBuf>,
    /// Artifacts to place before the start: destination and source.
    pub inputs: Vec<(PathBuf, ArtifactRef)>,
    /// Declared inputs and outputs: what to read back after a successful
    /// exit, and what the sandbox shows.
    pub files: Files,
    pub meta: TryMeta,
    pub cas: Cas,
    pub log_tail: usize,
    pub jail: Jail,
}

/// What confines a try: its sandbox, the uid it runs as and its cgroup
/// (made by the spawn, removed once the try is read back).
#[derive(Default)]
pub(super) struct Jail {
    pub sandbox: Option<Arc<Sandbox>>,
    pub owner: Option<(u32, u32)>,
    pub cgroup: Option<TryCgroup>,
    pub limits: Option<Limits>,
    /// The tenant's network, where it differs from the platform's default.
    pub network: Option<crate::Network>,
}

impl Jail {
    /// Whether the kernel enforces the try's memory limit (no sampling).
    pub(super) fn enforces_memory(&self) -> bool {
        self.cgroup.is_some()
    }
}

impl Launch {
    pub(super) fn script_path(dir: &Path) -> PathBuf {
        work_dir(dir).join(SCRIPT_FILE)
    }
}

/// How a try's process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Exit {
    Code(i32),
    /// The wrapper itself died from this signal (we stopped the group).
    Signal(i32),
    /// Nothing was started: preparation or the spawn failed.
    NotStarted(String),
    /// Found neither running nor finished after a restart.
    Lost,
    /// We killed the group for using more memory than its limit.
    OutOfMemory(Oom),
}

/// The end of a try, as far as the process is concerned.
#[derive(Debug)]
pub(super) struct Outcome {
    pub exit: Exit,
    pub metrics: Option<StepMetrics>,
    /// Read only after exit code 0.
    pub outputs: Option<Result<StepOutputs, String>>,
    /// The tail of the combined log.
    pub logs: Option<String>,
    /// The last non-empty line of standard error, for failure messages.
    pub stderr_line: Option<String>,
}

impl Outcome {
    pub(super) fn without_process(exit: Exit) -> Outcome {
        Outcome {
            exit,
            metrics: None,
            outputs: None,
            logs: None,
            stderr_line: None,
        }
    }
}

/// Why we stopped a process; kept in the try's `stopped` file, written
/// before the first signal, so a driver that follows the try after ours
/// is gone still knows why its process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(super) enum Stop {
    Timeout(Duration),
    Cancel,
}

impl Stop {
    async fn record(self, dir: &Path) {
        let record = serde_json::to_vec(&self).expect("a stop serializes");
        if let Err(e) = tokio::fs::write(dir.join(STOP_FILE), record).await {
            tracing::warn!(dir = %dir.display(), error = %e, "could not record a stop");
        }
    }

    fn recorded(dir: &Path) -> Option<Stop> {
        serde_json::from_slice(&fs::read(dir.join(STOP_FILE)).ok()?).ok()
    }
}

/// The process group of one try, shared between the thread that reaps it
/// and the tasks that may signal it.
#[derive(Default)]
struct Group(Mutex<GroupState>);

#[derive(Default)]
struct GroupState {
    pgid: Option<i32>,
    reaped: bool,
}

impl Group {
    /// The group id while its leader is unreaped (and the id still ours).
    fn pgid(&self) -> Option<i32> {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        state.pgid.filter(|_| !state.reaped)
    }

    fn signal(&self, signal: i32) {
        let state = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let (Some(pgid), false) = (state.pgid, state.reaped) {
            // SAFETY: plain syscall; the unreaped leader keeps the group id ours.
            unsafe { libc::kill(-pgid, signal) };
        }
    }
}

/// A try started in this process.
pub(super) struct Child {
    pid: oneshot::Receiver<i32>,
    task: JoinHandle<Outcome>,
    group: Arc<Group>,
    dir: PathBuf,
    memory_limit: Option<u64>,
}

/// Prepares the try directory and starts the process, off the runtime.
pub(super) fn launch(launch: Launch) -> Child {
    let group = Arc::new(Group::default());
    let (tx, rx) = oneshot::channel();
    let shared = group.clone();
    let sampled = launch
        .meta
        .memory_limit
        .filter(|_| !launch.jail.enforces_memory());
    let (dir, memory_limit) = (launch.dir.clone(), sampled);
    let task = tokio::task::spawn_blocking(move || execute(launch, tx, &shared));
    Child {
        pid: rx,
        task,
        group,
        dir,
        memory_limit,
    }
}

impl Child {
    /// Waits until the process runs (its `state.json` written); false when
    /// it could not start.
    pub(super) async fn started(&mut self) -> bool {
        (&mut self.pid).await.is_ok()
    }

    /// Waits for the end, stopping the process group on cancel or timeout
    /// (SIGTERM, then SIGKILL after [`KILL_GRACE`]) and killing it outright
    /// over its memory limit.
    pub(super) async fn wait(
        mut self,
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> (Outcome, Option<Stop>) {
        let deadline = timeout.map(|t| tokio::time::Instant::now() + t);
        let stop = tokio::select! {
            out = &mut self.task => return (joined(out), None),
            _ = cancel.cancelled() => Stop::Cancel,
            _ = sleep_until(deadline) => Stop::Timeout(timeout.unwrap_or_default()),
            oom = watch_memory(&self.group, &self.dir, self.memory_limit) => {
                self.group.signal(libc::SIGKILL);
                let mut outcome = joined(self.task.await);
                // It may have finished on its own just before the kill.
                if outcome.exit != Exit::Code(0) {
                    outcome.exit = Exit::OutOfMemory(oom);
                }
                return (outcome, None);
            }
        };
        stop.record(&self.dir).await;
        self.group.signal(libc::SIGTERM);
        let out = tokio::select! {
            out = &mut self.task => out,
            _ = tokio::time::sleep(KILL_GRACE) => {
                self.group.signal(libc::SIGKILL);
                self.task.await
            }
        };
        (joined(out), Some(stop))
    }
}

/// Samples a spawned try's group until it is over `limit` (never without
/// one).
async fn watch_memory(group: &Group, dir: &Path, limit: Option<u64>) -> Oom {
    let Some(limit) = limit else {
        return std::future::pending().await;
    };
    let mut tick = tokio::time::interval(MEMORY_SAMPLE);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        if let Some(pgid) = group.pgid()
            && let Some(oom) = over_limit(pgid, limit, dir).await
        {
            return oom;
        }
    }
}

fn joined(out: Result<Outcome, tokio::task::JoinError>) -> Outcome {
    out.unwrap_or_else(|e| {
        Outcome::without_process(Exit::NotStarted(format!("internal error: {e}")))
    })
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// A try's process, just started.
struct Started {
    pid: i32,
    t0: Instant,
    stdout: File,
    stderr: File,
    /// The try's cgroup: its own, or that of the sandbox started ahead it
    /// was handed.
    cgroup: Option<TryCgroup>,
    /// A link to the try's exit file, removed once the try is reaped.
    alias: Option<PathBuf>,
}

fn execute(launch: Launch, started: oneshot::Sender<i32>, group: &Group) -> Outcome {
    let Started {
        pid,
        t0,
        mut stdout,
        mut stderr,
        cgroup,
        alias,
    } = match spawn(&launch) {
        Ok(spawned) => spawned,
        Err(message) => {
            if let Some(cgroup) = &launch.jail.cgroup {
                cgroup.remove();
            }
            return Outcome::without_process(Exit::NotStarted(message));
        }
    };
    group.0.lock().unwrap_or_else(|e| e.into_inner()).pgid = Some(pid);
    let state = StateFile {
        pid,
        pgid: pid,
        started_unix_ms: unix_ms(SystemTime::now()),
        cgroup: cgroup
            .as_ref()
            .filter(|_| alias.is_some())
            .map(TryCgroup::name),
        meta: launch.meta,
    };
    if let Err(e) = fs::write(
        launch.dir.join(STATE_FILE),
        serde_json::to_vec(&state).expect("state serializes"),
    ) {
        tracing::warn!(dir = %launch.dir.display(), error = %e, "could not record the step process");
    }
    let _ = started.send(pid);

    let (status, usage) = reap(pid, group);
    let wall = t0.elapsed();
    let exit = if libc::WIFEXITED(status) {
        Exit::Code(libc::WEXITSTATUS(status))
    } else {
        Exit::Signal(libc::WTERMSIG(status))
    };
    let metrics = StepMetrics {
        wall_ms: wall.as_millis() as u64,
        cpu_ms: timeval_ms(usage.ru_utime) + timeval_ms(usage.ru_stime),
        max_rss_kb: usage.ru_maxrss.max(0) as u64,
        exit_code: match exit {
            Exit::Code(c) => Some(c),
            _ => None,
        },
    };
    if let Some(alias) = alias {
        let _ = fs::remove_file(alias);
    }
    let cgroup = cgroup.as_ref();
    let outcome = read_back(&launch, cgroup, exit, metrics, &mut stdout, &mut stderr);
    if let Some(cgroup) = cgroup {
        cgroup.remove();
    }
    outcome
}

/// Reads logs and (after success) outputs of a finished try.
fn read_back(
    launch: &Launch,
    cgroup: Option<&TryCgroup>,
    exit: Exit,
    mut metrics: StepMetrics,
    stdout: &mut File,
    stderr: &mut File,
) -> Outcome {
    let exit = match (cgroup, exit) {
        (Some(cgroup), exit) if exit != Exit::Code(0) => match kernel_oom(launch, cgroup) {
            Some(oom) => Exit::OutOfMemory(oom),
            None => exit,
        },
        (_, exit) => exit,
    };
    if let Some(cgroup) = cgroup {
        // The step runs below bubblewrap's own processes, which the engine
        // does not reap, so the kernel's count for the cgroup is its peak.
        let peak_kb = cgroup.peak_memory().unwrap_or(0) / 1024;
        metrics.max_rss_kb = metrics.max_rss_kb.max(peak_kb);
        // Likewise its CPU time, which resource advice is computed from.
        let cpu_ms = cgroup.cpu_time().map_or(0, |t| t.as_millis() as u64);
        metrics.cpu_ms = metrics.cpu_ms.max(cpu_ms);
    }
    if matches!(exit, Exit::OutOfMemory(_)) {
        // Killed, as a sampled kill is: no exit status of its own.
        metrics.exit_code = None;
    }
    let out = tail(stdout, RESULT_LIMIT.max(launch.log_tail as u64)).unwrap_or_default();
    let err = tail(stderr, launch.log_tail as u64).unwrap_or_default();
    let outputs = (exit == Exit::Code(0)).then(|| {
        let cut = out.len().saturating_sub(RESULT_LIMIT as usize);
        outputs::collect(&launch.files, &launch.cas, &out[cut..])
    });
    Outcome {
        stderr_line: last_line(&err),
        logs: Some(combine_tail(&out, &err, launch.log_tail)),
        exit,
        metrics: Some(metrics),
        outputs,
    }
}

/// An out-of-memory kill the kernel made in the try's cgroup, recorded in
/// the try's `oom` file as a sampled kill is.
fn kernel_oom(launch: &Launch, cgroup: &TryCgroup) -> Option<Oom> {
    if !cgroup.oom_killed() {
        return None;
    }
    let limit = launch.jail.limits.and_then(|l| l.memory).unwrap_or(0);
    let oom = Oom {
        used: cgroup.peak_memory().unwrap_or(limit).max(limit),
        limit,
    };
    let record = serde_json::to_vec(&oom).expect("oom serializes");
    if let Err(e) = fs::write(launch.dir.join(OOM_FILE), record) {
        tracing::warn!(dir = %launch.dir.display(), error = %e, "could not record an out-of-memory kill");
    }
    Some(oom)
}

fn spawn(launch: &Launch) -> Result<Started, String> {
    let dir = &launch.dir;
    let work = work_dir(dir);
    let jail = &launch.jail;
    let cwd = match &launch.working_dir {
        Some(wd) if jail.sandbox.is_none() && !wd.is_dir() => {
            return Err(format!(
                "working directory {} does not exist on this host (the local engine runs steps on the host, not in their image)",
                wd.display()
            ));
        }
        Some(wd) => wd,
        None => &work,
    };
    // The try directory stays the engine's: the step's user gets its work
    // directory and what it writes in, never the engine's records beside
    // them (exit, state.json, logs), which the engine writes while the
    // step runs.
    let mut owned = vec![work.clone()];
    owned.extend(writable_dirs(
        &launch.files,
        jail.sandbox.as_ref().map(|_| cwd.as_path()),
    ));
    for at in std::iter::once(dir.as_path()).chain(owned.iter().map(|d| d.as_path())) {
        fs::create_dir_all(at).map_err(|e| format!("could not create {}: {e}", at.display()))?;
    }
    if !launch.inputs.is_empty() {
        let base =
            Beneath::root(&work).map_err(|e| format!("could not open the work directory: {e}"))?;
        for (dest, artifact) in &launch.inputs {
            let rel = dest.strip_prefix(&work).unwrap_or(dest);
            launch.cas.materialise(artifact, &base, rel).map_err(|e| {
                format!(
                    "could not place input artifact {} at {}: {e}",
                    artifact.digest,
                    dest.display()
                )
            })?;
        }
    }
    if let Some(source) = &launch.script {
        fs::write(Launch::script_path(dir), source)
            .map_err(|e| format!("could not write the script: {e}"))?;
    }
    let owned: Vec<&Path> = owned.iter().map(PathBuf::as_path).collect();
    sandbox::hand_over(jail.owner, &owned)
        .map_err(|e| format!("could not hand the work directory to the step's user: {e}"))?;
    if let Some(sandbox) = &jail.sandbox {
        let ask = sandbox::Ask {
            dir,
            files: &launch.files,
            cwd,
            program: &launch.argv,
            env: &launch.env,
            limits: jail.limits,
        };
        if let Some(handed) = sandbox.hand_ready(&ask, jail.owner, jail.network) {
            let handed = handed?;
            return Ok(Started {
                pid: handed.pid,
                t0: Instant::now(),
                stdout: handed.stdout,
                stderr: handed.stderr,
                cgroup: handed.cgroup,
                alias: Some(handed.alias),
            });
        }
    }
    if let (Some(cgroup), Some(limits)) = (&jail.cgroup, jail.limits) {
        cgroup
            .create(limits)
            .map_err(|e| format!("could not create the step's cgroup: {e}"))?;
    }
    let log = |name: &str| {
        OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(dir.join(name))
            .map_err(|e| format!("could not create the {name} log: {e}"))
    };
    let (stdout, stderr) = (log(STDOUT_FILE)?, log(STDERR_FILE)?);
    let clone = |f: &File| {
        f.try_clone()
            .map_err(|e| format!("could not share a log: {e}"))
    };
    let exit_file = dir.join(EXIT_FILE);
    let Some(sandbox) = &jail.sandbox else {
        let mut command = Command::new("/bin/sh");
        command
            .arg("-c")
            .arg(WRAPPER)
            .arg("couler-step")
            .arg(&exit_file)
            .args(&launch.argv)
            .env_clear()
            .envs(launch.env.iter().map(|(k, v)| (k, v)))
            .current_dir(cwd)
            // A group of its own (not a session: std can then still use
            // posix_spawn), so that stopping the step stops its children.
            .process_group(0)
            .stdin(Stdio::null())
            .stdout(clone(&stdout)?)
            .stderr(clone(&stderr)?);
        let t0 = Instant::now();
        let child = command
            .spawn()
            .map_err(|e| format!("could not start the step: {e}"))?;
        // Reaped with wait4 below; std's handle has nothing to release.
        return Ok(Started {
            pid: child.id() as i32,
            t0,
            stdout,
            stderr,
            cgroup: jail.cgroup.clone(),
            alias: None,
        });
    };
    let confinement = Confinement {
        owner: jail.owner,
        cgroup: jail.cgroup.as_ref(),
        network: sandbox.network(jail.network, jail.owner)?,
    };
    let io = sandbox::StepIo {
        env: &launch.env,
        stdout: &stdout,
        stderr: &stderr,
    };
    let start = sandbox.start(
        &exit_file,
        &launch.files,
        cwd,
        &launch.argv,
        confinement,
        io,
    )?;
    let t0 = Instant::now();
    // In a group of its own too (see `sandbox::spawn`).
    let spawned = sandbox::spawn(&start).map_err(|e| format!("could not start the step: {e}"))?;
    if let Some(failure) = &spawned.failure {
        // Exits 125 with the reason last on standard error, as a wrapper
        // that fails before the step does.
        let _ = (&stderr).write_all(format!("couler: {failure}\n").as_bytes());
        let _ = fs::write(&exit_file, "125\n");
    }
    Ok(Started {
        pid: spawned.pid,
        t0,
        stdout,
        stderr,
        cgroup: jail.cgroup.clone(),
        alias: None,
    })
}

/// Waits for the leader to exit, kills what is left of its group, then
/// reaps it with its resource usage.
fn reap(pid: i32, group: &Group) -> (i32, libc::rusage) {
    loop {
        // SAFETY: zeroed siginfo_t is a valid out-parameter.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waits on our own child; WNOWAIT leaves it unreaped.
        let r = unsafe {
            libc::waitid(
                libc::P_PID,
                pid as libc::id_t,
                &mut info,
                libc::WEXITED | libc::WNOWAIT,
            )
        };
        if r == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    let mut state = group.0.lock().unwrap_or_else(|e| e.into_inner());
    // Like a container ending: background processes of the step go too.
    // SAFETY: the zombie leader still holds the group id.
    unsafe { libc::kill(-pid, libc::SIGKILL) };
    let mut status = 0;
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: reaps our own child.
        let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if r == pid || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
            break;
        }
    }
    state.reaped = true;
    (status, usage)
}

fn timeval_ms(t: libc::timeval) -> u64 {
    (t.tv_sec.max(0) as u64) * 1000 + (t.tv_usec.max(0) as u64) / 1000
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64
}

/// The directories a try writes in, made before it starts and handed to
/// its user (parents first): where its outputs go, and in the sandbox its
/// declared directories and a `workingDir` inside one of them.
fn writable_dirs(files: &Files, sandboxed_cwd: Option<&Path>) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if !files.shown {
        for (list, kind) in [
            (&files.parameters, "parameters"),
            (&files.artifacts, "artifacts"),
        ] {
            if !list.is_empty() {
                let outputs = files.work.join("outputs");
                dirs.extend([outputs.join(kind), outputs]);
            }
        }
        dirs.sort();
        dirs.dedup();
        return dirs;
    }
    if !files.links.is_empty() || !files.dirs.is_empty() {
        dirs.push(files.work.join("paths"));
    }
    dirs.extend(files.dirs.iter().cloned());
    dirs.extend(sandboxed_cwd.and_then(|cwd| files.host_of(cwd)));
    dirs
}

/// The last `max` bytes of a file.
fn tail(file: &mut File, max: u64) -> io::Result<Vec<u8>> {
    let len = file.metadata()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(max)))?;
    let mut bytes = Vec::with_capacity(len.min(max) as usize);
    file.take(max).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// Standard output, then standard error after a marker line.
fn combine(out: &[u8], err: &[u8]) -> String {
    let mut text = String::from_utf8_lossy(out).into_owned();
    if !err.is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(STDERR_MARK);
        text.push_str(&String::from_utf8_lossy(err));
    }
    text
}

fn combine_tail(out: &[u8], err: &[u8], max: usize) -> String {
    let text = combine(out, err);
    let mut cut = text.len().saturating_sub(max);
    while !text.is_char_boundary(cut) {
        cut += 1;
    }
    text[cut..].to_owned()
}

fn last_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?.trim();
    let mut end = line.len().min(300);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    Some(line[..end].to_owned())
}

/// The full combined log of one try directory.
pub(super) fn full_log(dir: &Path) -> io::Result<String> {
    let read = |name| match fs::read(dir.join(name)) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        other => other,
    };
    Ok(combine(&read(STDOUT_FILE)?, &read(STDERR_FILE)?))
}

mod outputs;
mod reattach;

pub(super) use reattach::{Earlier, OnDisk, latest_try, stop_orphans};

/// The exit status the try in `dir` recorded, once it has ended.
pub(super) fn exit_code(dir: &Path) -> Option<i32> {
    reattach::read_exit_file(dir)
}

#[cfg(test)]
mod tests;
