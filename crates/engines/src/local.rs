//! The local engine: runs a plan's steps as processes on this machine, for
//! single machines, demos and tests. Images are recorded but not used (no
//! container runtime); each try runs in a sandbox of its own (see
//! `sandbox`: namespaces, the tenant's own uid, only its work directory)
//! under kernel resource limits (see `cgroup`).
//!
//! # On disk (`data_dir`)
//!
//! ```text
//! runs/<run>/<attempt>[-<stage>]/       the run (Started.engine_ref)
//!   driver.lock                         flock held by the driving process
//!   cancelled                           present once cancel() was called
//!   <step or step[i]>/<try>/            one try (StepState.engine_ref)
//!     state.json  pid, pgid, start time, try/iteration/retry counters, memory limit,
//!                 written right after the spawn, before `running` is sent
//!     stdout, stderr, exit              logs and the wrapper's exit status
//!     oom                               present after an out-of-memory kill: bytes used and the limit
//!     work/                             all the step sees of the data directory (its cwd):
//!       script                          a script step's source
//!       paths/<declared path>           in the sandbox: every declared input and output
//!                                       ({{…path}}); each declared directory is shown here
//!       inputs/<A>                      without the sandbox: {{inputs.artifacts.A.path}}
//!       outputs/parameters/<P>          without the sandbox: {{outputs.parameters.P.path}}
//!       outputs/artifacts/<A>           without the sandbox: {{outputs.artifacts.A.path}}
//! cas/<2 hex>/<blake3 hex>              artifacts by content (see `cas`)
//! uids.json                             each tenant's uid (running as root)
//! ```
//!
//! Declared `path`s of inputs and outputs are container paths, and in the
//! sandbox they hold as in a container (see `declared`): the directory of
//! each is a fresh writable directory of the try's own (as an `emptyDir`
//! volume mounted there would be), input artifacts are copied into it, and
//! outputs are read from it; the `{{…path}}` references name the same
//! files by their host paths, so a step may use either. A declared path
//! the sandbox cannot show (under `/usr`, `/etc` or another system
//! directory, `/proc`, `/dev`, `/sys`, the data directory or
//! `local.mounts`) is refused when the run starts, naming the step and the
//! path. Without the sandbox (`local.sandbox.isolation = "off"`) declared
//! paths are not used: the references point into the work directory, steps
//! must write through them, and an output that is not there says so. A step
//! runs in its
//! `workingDir` (made empty in the sandbox when the host has none there) or
//! its work directory, with an environment of its own `env`, the values of
//! the secrets it references (from [`RunSpec::secrets`]) and a short
//! allow-list of the engine's (PATH, USER, LOGNAME, LANG, LC_*, TZ; HOME is
//! the sandbox's `/tmp`): nothing else of the scheduler's environment leaks
//! into steps.
//!
//! # Semantics
//!
//! - A step starts once all its upstream steps are done and its `depends`
//!   entries hold; `Reuse` steps and steps terminal in `resume` are not run
//!   (reused ones are reported once).
//! - Skips propagate: a step that needs an upstream step to succeed (a bare
//!   name, a read output) is skipped when that one was; a step with a false
//!   `depends` entry is skipped naming the entry.
//! - `result` is the trimmed last 256 KiB of standard output; logs are
//!   standard output followed by `--- stderr ---` and standard error. While
//!   a step runs, `logs_since` reads both as they grow, interleaved (see
//!   `live`), so the live view's order can differ from the stored log's.
//! - `map` instances are `step[i]`; the step itself reports each output
//!   parameter and `result` as a JSON list over its instances (values that
//!   are JSON objects or arrays are embedded, others become strings).
//! - `while` reruns a step while its conditions hold on its latest outputs;
//!   every iteration and retry is a new try, counted by `attempt`.
//! - A failed step fails the run unless a step that ran depends on it,
//!   directly or through steps that did not run (Argo's rule, see
//!   `couler_ir::depends`). Once a failure is sure to fail the run (at
//!   once for plain dependencies), running steps finish, nothing new starts
//!   but steps whose `depends` ask for outcomes or use `||`/`!`, steps
//!   never started are reported `cancelled` ("upstream failed" below the
//!   failure), exit handlers run, and the run fails naming the step. Until
//!   then a step that needed a failed step to succeed is skipped.
//! - Cancel stops running steps (SIGTERM to the process group, SIGKILL
//!   after 2 s), reports them and the unstarted ones `cancelled`, then runs
//!   the exit handlers; a cancel while exit handlers run stops those.
//! - Training jobs run their command once, as rank 0 of a world of 1.
//! - A step's `resources.memory` limits its process group's resident memory;
//!   over it the group is killed (`OOMKilled`, a transient failure) and a
//!   retry runs with twice the limit, at most 4× the request.
//! - Hyperparameter `tune` steps are refused: the scheduler runs their
//!   trials as ordinary steps, batch by batch.
//!
//! # Restarts
//!
//! Each try runs under a `/bin/sh` wrapper in a process group of its own
//! (see `process`); the wrapper records the exit status in the try
//! directory, so `start` with `resume` (or simply the run directory still
//! on disk) finishes a try that ended unwatched from its files, polls one
//! that is still running, and treats one that vanished as a transient
//! failure.
//! Dropping the engine, or the update receiver, stops driving but leaves
//! step processes running for the next start to re-attach. The exit status
//! is not fsync'ed: re-attach survives a scheduler crash, not a power cut.

mod beneath;
mod cas;
mod cgroup;
mod declared;
mod driver;
mod live;
mod map;
mod memory;
mod network;
mod process;
mod retry;
mod sandbox;
mod step;
mod template;

pub use network::Network;
pub use sandbox::{
    ClosedDir, HostMount, Isolation, SandboxConfig, SandboxError, closed_ancestor, tenant_uids,
    unreachable_message,
};

use crate::{EngineAdapter, EngineError, LogCursor, RunSpec, Started, StepState};
use async_trait::async_trait;
use cas::Cas;
use couler_optimizer::Plan;
use driver::Run;
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;
use tokio::sync::{Semaphore, mpsc};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const ENGINE: &str = "local";
/// Where steps read reused artifacts from: the host's files (see `cas`).
pub const READS: &[&str] = &["file://"];
const LOCK_FILE: &str = "driver.lock";
const CANCELLED_FILE: &str = "cancelled";
/// Holds why the run's deadline stopped it (see `EngineAdapter::expire`).
const DEADLINE_FILE: &str = "deadline";
/// How long `start` waits for another driver of the same run to let go.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// Settings of a [`LocalEngine`].
#[derive(Debug, Clone)]
pub struct LocalConfig {
    /// Runs, the artifact store and the tenants' uids live here.
    pub data_dir: PathBuf,
    /// Step processes at once, across all runs of this engine.
    pub max_parallel_steps: usize,
    /// How much of a step's logs terminal updates carry.
    pub log_tail_bytes: usize,
    /// How steps are isolated from each other and from the machine.
    pub sandbox: SandboxConfig,
}

impl LocalConfig {
    /// Defaults: 4 × CPUs parallel steps, 64 KiB log tails.
    pub fn new(data_dir: impl Into<PathBuf>) -> LocalConfig {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        LocalConfig {
            data_dir: data_dir.into(),
            max_parallel_steps: 4 * cpus,
            log_tail_bytes: crate::track::LOG_TAIL_BYTES,
            sandbox: SandboxConfig::default(),
        }
    }
}

/// Runs steps as processes on this machine. See the module docs.
pub struct LocalEngine {
    shared: Arc<Shared>,
    active: Arc<Mutex<HashMap<PathBuf, Active>>>,
    next_id: AtomicU64,
}

/// What every run of an engine shares.
struct Shared {
    config: LocalConfig,
    /// `max_parallel_steps`.
    slots: Arc<Semaphore>,
    cas: Cas,
    runs_dir: PathBuf,
    /// The allow-listed part of the engine's environment.
    base_env: Vec<(String, String)>,
    /// Every try's sandbox; `Err`: required but not available here, so
    /// steps fail saying why.
    sandbox: Result<Option<Arc<sandbox::Sandbox>>, SandboxError>,
    /// Where tries get kernel resource limits; none: limits are advisory.
    cgroups: Option<cgroup::Cgroups>,
}

/// A run this engine is driving.
struct Active {
    id: u64,
    /// The token `cancel()` trips (swapped when exit handlers start).
    cancel: Arc<Mutex<CancellationToken>>,
    /// The main DAG's token, which `expire()` trips: exit handlers run on.
    main: CancellationToken,
    task: JoinHandle<()>,
}

/// Why a local engine does not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// Every step would fail: their users cannot reach the data directory
    /// or a mount (see `sandbox`).
    #[error("the local engine cannot start: {0}")]
    Unreachable(String),
}

impl LocalEngine {
    /// An engine, or why it would fail every step it ran; a missing
    /// bubblewrap is not such a reason (steps fail saying how to fix it,
    /// `local.sandbox.isolation = "off"` on a single-tenant machine).
    pub fn try_new(config: LocalConfig) -> Result<LocalEngine, StartError> {
        let engine = LocalEngine::new(config);
        match &engine.shared.sandbox {
            Err(SandboxError::Unreachable(why)) => Err(StartError::Unreachable(why.clone())),
            _ => Ok(engine),
        }
    }

    /// An engine whose steps fail, saying why, where it cannot sandbox them
    /// (see [`LocalEngine::try_new`]).
    pub fn new(mut config: LocalConfig) -> LocalEngine {
        if let Ok(absolute) = std::path::absolute(&config.data_dir) {
            config.data_dir = absolute;
        }
        config.max_parallel_steps = config.max_parallel_steps.max(1);
        let data = &config.data_dir;
        let (sandbox, cgroups) = isolation(&config);
        let shared = Shared {
            sandbox,
            cgroups,
            slots: Arc::new(Semaphore::new(config.max_parallel_steps)),
            cas: Cas::new(data.join("cas")),
            runs_dir: data.join("runs"),
            base_env: base_env(),
            config,
        };
        LocalEngine {
            shared: Arc::new(shared),
            active: Arc::default(),
            next_id: AtomicU64::new(0),
        }
    }

    pub fn config(&self) -> &LocalConfig {
        &self.shared.config
    }

    /// Where a run (stage) lives: `runs/<run>/<attempt>[-<stage>]`.
    fn dir_of(&self, run: &RunSpec) -> PathBuf {
        let leaf = match &run.stage {
            Some(stage) => format!("{}-{stage}", run.attempt),
            None => run.attempt.to_string(),
        };
        self.shared.runs_dir.join(&run.run).join(leaf)
    }

    /// The run directory, checked against what `start` handed out.
    fn run_dir(&self, run: &RunSpec, engine_ref: &str) -> Result<PathBuf, EngineError> {
        let dir = self.dir_of(run);
        let stage_ok = run.stage.as_deref().is_none_or(safe_component);
        if !safe_component(&run.run) || !stage_ok || Path::new(engine_ref) != dir {
            return Err(EngineError::Other(format!(
                "{engine_ref:?} is not the local engine's directory of run {} attempt {}",
                run.run, run.attempt
            )));
        }
        Ok(dir)
    }

    fn active(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Active>> {
        self.active.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for LocalEngine {
    /// Stops driving (as a crash would); step processes keep running.
    fn drop(&mut self) {
        for active in self.active().values() {
            active.task.abort();
        }
    }
}

#[async_trait]
impl EngineAdapter for LocalEngine {
    fn name(&self) -> &'static str {
        ENGINE
    }

    async fn start(
        &self,
        run: &RunSpec,
        plan: Arc<Plan>,
        resume: Vec<StepState>,
    ) -> Result<Started, EngineError> {
        let stage = run.stage.as_ref();
        for (what, value) in [
            ("tenant", Some(&run.tenant)),
            ("run", Some(&run.run)),
            ("stage", stage),
        ] {
            let Some(value) = value else { continue };
            if !safe_component(value) {
                return Err(EngineError::Other(format!(
                    "{what} id {value:?} cannot name a directory"
                )));
            }
        }
        let dag = crate::compile::dag(&plan)?.into_owned();
        let searching = |(s, p): &(&couler_ir::Step, &couler_optimizer::PlannedStep)| {
            s.tune.is_some() && matches!(p.action, couler_optimizer::Action::Run)
        };
        if let Some((step, _)) = plan.workflow.steps.iter().zip(&plan.steps).find(searching) {
            return Err(EngineError::Unsupported {
                engine: ENGINE,
                feature: format!(
                    "step `{}` uses `tune`; hyperparameter trials must be expanded into steps before they reach an engine",
                    step.name
                ),
            });
        }
        if let Ok(Some(sandbox)) = &self.shared.sandbox {
            let running = (0..plan.steps.len())
                .filter(|i| matches!(plan.steps[*i].action, couler_optimizer::Action::Run))
                .map(|i| plan.ir_step(i))
                .collect::<Vec<_>>();
            let refused = declared::refusals(&running, &sandbox.reserved());
            if !refused.is_empty() {
                return Err(EngineError::Unsupported {
                    engine: ENGINE,
                    feature: format!(
                        "declared paths the sandbox cannot show: {}",
                        refused.join("; ")
                    ),
                });
            }
        }
        let dir = self.dir_of(run);

        // A driver of the same run in this process gives way (lease takeover).
        let previous = self.active().remove(&dir);
        if let Some(previous) = previous {
            previous.task.abort();
            let _ = previous.task.await;
        }
        let (existed, cancelled_earlier, lock) = open_run_dir(dir.clone()).await?;
        if cancelled_earlier {
            // Nothing new starts in a cancelled run; stop what still runs.
            process::stop_orphans(dir.clone()).await;
        }

        let (tx, rx) = mpsc::channel(crate::track::UPDATE_BUFFER);
        let main = CancellationToken::new();
        let cancel = Arc::new(Mutex::new(main.clone()));
        let slots = plan
            .workflow
            .parallelism
            .map(|p| Arc::new(Semaphore::new(p as usize)));
        let state = Arc::new(Run {
            spec: run.clone(),
            plan,
            dir: dir.clone(),
            engine: self.shared.clone(),
            updates: tx,
            outputs: RwLock::default(),
            resume: resume.into_iter().map(|s| (s.name.clone(), s)).collect(),
            existed,
            slots,
            detached: CancellationToken::new(),
        });
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let registry = self.active.clone();
        let key = dir.clone();
        let token = cancel.clone();
        // Spawned under the registry lock so the task cannot deregister
        // before it is registered.
        let mut active = self.active();
        let task = tokio::spawn(async move {
            let _lock = lock;
            driver::drive(state, dag, token, cancelled_earlier).await;
            let mut active = registry.lock().unwrap_or_else(|e| e.into_inner());
            if active.get(&key).is_some_and(|a| a.id == id) {
                active.remove(&key);
            }
        });
        active.insert(
            dir.clone(),
            Active {
                id,
                cancel,
                main,
                task,
            },
        );
        drop(active);
        Ok(Started {
            engine_ref: dir.to_string_lossy().into_owned(),
            updates: rx,
        })
    }

    async fn cancel(&self, run: &RunSpec, engine_ref: &str) -> Result<(), EngineError> {
        let dir = self.run_dir(run, engine_ref)?;
        // Recorded first, so that a driver started later finishes the cancel.
        tokio::fs::write(dir.join(CANCELLED_FILE), b"")
            .await
            .map_err(|e| EngineError::Other(format!("cannot cancel run {}: {e}", run.run)))?;
        let live = self.active().get(&dir).map(|a| a.cancel.clone());
        match live {
            Some(token) => token.lock().unwrap_or_else(|e| e.into_inner()).cancel(),
            None => process::stop_orphans(dir).await,
        }
        Ok(())
    }

    /// Stops the main DAG as `cancel` does, but the run fails with
    /// `message` and its exit handlers see `{{workflow.status}}` failed;
    /// exit handlers already running go on.
    async fn expire(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        message: &str,
    ) -> Result<(), EngineError> {
        let dir = self.run_dir(run, engine_ref)?;
        // Recorded first, so that a driver started later fails the run too.
        tokio::fs::write(dir.join(DEADLINE_FILE), message)
            .await
            .map_err(|e| EngineError::Other(format!("cannot stop run {}: {e}", run.run)))?;
        let live = self.active().get(&dir).map(|a| a.main.clone());
        match live {
            Some(token) => token.cancel(),
            None => process::stop_orphans(dir).await,
        }
        Ok(())
    }

    async fn logs(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        step: &str,
    ) -> Result<String, EngineError> {
        let dir = self.run_dir(run, engine_ref)?;
        if !safe_component(step) {
            return Err(EngineError::Other(format!("{step:?} is not a step name")));
        }
        let instance = dir.join(step);
        let step = step.to_owned();
        tokio::task::spawn_blocking(move || step_logs(&instance, &step))
            .await
            .map_err(|e| EngineError::Other(format!("internal error: {e}")))?
    }

    /// Append-only: positions into the try's stdout and stderr (see `live`).
    async fn logs_since(
        &self,
        run: &RunSpec,
        engine_ref: &str,
        step: &str,
        cursor: &mut LogCursor,
    ) -> Result<String, EngineError> {
        let dir = self.run_dir(run, engine_ref)?;
        if !safe_component(step) {
            return Err(EngineError::Other(format!("{step:?} is not a step name")));
        }
        let instance = dir.join(step);
        let mut moved = cursor.clone();
        let (text, moved) = tokio::task::spawn_blocking(move || {
            live::read_new(&instance, &mut moved).map(|text| (text, moved))
        })
        .await
        .map_err(|e| EngineError::Other(format!("internal error: {e}")))?
        .map_err(|e| EngineError::Other(format!("cannot read the logs of `{step}`: {e}")))?;
        *cursor = moved;
        Ok(text)
    }
}

/// Every try's log of one step instance; tries after the first get a
/// header line.
fn step_logs(instance: &Path, step: &str) -> Result<String, EngineError> {
    let mut tries: Vec<u32> = fs::read_dir(instance)
        .map_err(|_| EngineError::Other(format!("step `{step}` has no logs")))?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    tries.sort_unstable();
    let mut logs = Vec::new();
    for n in tries {
        let log = process::full_log(&instance.join(n.to_string()))
            .map_err(|e| EngineError::Other(format!("cannot read the logs of `{step}`: {e}")))?;
        logs.push((n, log));
    }
    Ok(crate::track::join_attempts(logs))
}

/// Creates the run directory and takes its driver lock: whether it existed,
/// whether the run was cancelled earlier, and the lock.
async fn open_run_dir(dir: PathBuf) -> Result<(bool, bool, File), EngineError> {
    let unavailable = |message: String| EngineError::Unavailable {
        engine: ENGINE,
        message,
    };
    let deadline = tokio::time::Instant::now() + LOCK_WAIT;
    loop {
        let at = dir.clone();
        let opened = tokio::task::spawn_blocking(move || -> io::Result<_> {
            let existed = at.is_dir();
            fs::create_dir_all(&at)?;
            let lock = OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(at.join(LOCK_FILE))?;
            // SAFETY: flock on a descriptor we own.
            let locked =
                unsafe { libc::flock(lock.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0;
            Ok((
                existed,
                at.join(CANCELLED_FILE).exists() || at.join(DEADLINE_FILE).exists(),
                locked.then_some(lock),
            ))
        })
        .await
        .map_err(|e| unavailable(format!("internal error: {e}")))?
        .map_err(|e| unavailable(format!("cannot prepare {}: {e}", dir.display())))?;
        match opened {
            (existed, cancelled, Some(lock)) => return Ok((existed, cancelled, lock)),
            _ if tokio::time::Instant::now() >= deadline => {
                return Err(unavailable(format!(
                    "another process is driving {}",
                    dir.display()
                )));
            }
            _ => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    }
}

/// Detects the sandbox and cgroups once per engine and says, once, what
/// steps will and will not be kept from.
fn isolation(
    config: &LocalConfig,
) -> (
    Result<Option<Arc<sandbox::Sandbox>>, SandboxError>,
    Option<cgroup::Cgroups>,
) {
    let cgroups = match cgroup::Cgroups::detect() {
        Ok(cgroups) => {
            tracing::debug!(
                kind = cgroups.describe(),
                "local engine: step limits enforced by the kernel"
            );
            Some(cgroups)
        }
        Err(why) => {
            tracing::warn!(reason = %why, "local engine: no cgroups, so step limits are advisory (memory is sampled, pids and CPU are not limited)");
            None
        }
    };
    let sandbox = match config.sandbox.isolation {
        Isolation::Off => {
            tracing::warn!(
                "local engine: steps are not sandboxed (local.sandbox.isolation = \"off\"); they see the machine as the engine does: use this for one tenant only"
            );
            Ok(None)
        }
        Isolation::Bubblewrap => {
            match sandbox::Sandbox::detect(&config.sandbox, &config.data_dir) {
                Ok(sandbox) => {
                    if !sandbox.per_tenant_uids() {
                        tracing::info!(
                            "local engine: not running as root, so every tenant's steps run as this user; namespaces alone keep them apart"
                        );
                    }
                    let sandbox = Arc::new(sandbox);
                    let settings = &config.sandbox;
                    let limits = cgroup::Limits {
                        memory: settings.default_memory,
                        pids: settings.max_pids,
                        cpu_millis: None,
                    };
                    sandbox.start_ahead(settings.started_ahead, cgroups.clone(), limits);
                    Ok(Some(sandbox))
                }
                Err(why) => {
                    tracing::error!(reason = %why, "local engine: no sandbox, so no step will start");
                    Err(why)
                }
            }
        }
    };
    (sandbox, cgroups)
}

fn safe_component(s: &str) -> bool {
    !s.is_empty() && s != "." && s != ".." && !s.contains(['/', '\0'])
}

fn base_env() -> Vec<(String, String)> {
    const KEEP: &[&str] = &["PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ", "TMPDIR"];
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| KEEP.contains(&k.as_str()) || k.starts_with("LC_"))
        .collect();
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), "/usr/local/bin:/usr/bin:/bin".into()));
    }
    env
}
