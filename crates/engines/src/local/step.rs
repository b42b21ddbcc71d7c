//! One step's life: `when`, the `while` loop, retries with backoff, and
//! each try's launch (references resolved, environment and secrets, input
//! artifacts) and report. `map` steps fan out in `map`.
//!
//! A step's `resources.memory` is its first try's memory limit (enforced
//! by `process`). A try killed over its limit is a transient failure; when
//! the retry policy allows another try, that try's limit is the previous
//! one × [`OOM_GROWTH`], at most [`OOM_MAX_FACTOR`] × the planned memory.
//! The limit travels in [`TryMeta`], so it is in each try's `state.json`
//! and a restart continues from it; it also carries over to later `while`
//! iterations, which run the same code on like inputs.

use super::cgroup::{self, Limits};
use super::declared::Files;
use super::driver::{Phase, Run};
use super::map;
use super::process::{self, Earlier, Exit, Jail, Launch, OnDisk, Outcome, Stop, TryMeta};
use super::retry::{backoff, human, mib, raised_limit};
use super::template::Scope;
use crate::failure::{FailureKind, classify};
use crate::{StepPhase, StepState, Update};
use couler_ir::refs::{Ref, sole_reference};
use couler_ir::{RetryOn, Step, StepKind};
use couler_optimizer::StepOutputs;
use secrecy::ExposeSecret;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio_util::sync::CancellationToken;

/// How a step (or instance) ended, for the driver.
pub(super) struct StepEnd {
    pub phase: StepPhase,
    pub outputs: Arc<StepOutputs>,
    pub message: Option<String>,
}

impl StepEnd {
    pub(super) fn failed(message: String) -> StepEnd {
        StepEnd {
            phase: StepPhase::Failed,
            outputs: Arc::default(),
            message: Some(message),
        }
    }

    /// The update that reports this end, for steps settled without a try.
    pub(super) fn state(&self, name: &str) -> StepState {
        StepState {
            name: name.to_owned(),
            phase: self.phase,
            attempt: 0,
            message: self.message.clone(),
            outputs: (*self.outputs).clone(),
            metrics: None,
            engine_ref: None,
            logs: None,
        }
    }
}

/// Runs step `index` of the plan (main steps, then exit handlers).
/// Runs one step; `halt` stops its retries and its tries not started yet
/// (the driver's call, or a failed instance of the same map).
pub(super) async fn run_step(
    run: Arc<Run>,
    phase: Arc<Phase>,
    index: usize,
    halt: CancellationToken,
) -> StepEnd {
    let ir = run.plan.ir_step(index);
    if ir.map.is_some() {
        return map::run_map(run, phase, index, halt).await;
    }
    let name = ir.name.clone();
    Instance {
        run,
        phase,
        halt,
        index,
        name,
        item: None,
        slots: None,
        judge_when: true,
    }
    .run()
    .await
}

pub(super) fn skipped(why: String) -> StepEnd {
    StepEnd {
        phase: StepPhase::Skipped,
        outputs: Arc::default(),
        message: Some(why),
    }
}

pub(super) async fn report_end(run: &Run, name: &str, end: StepEnd) -> StepEnd {
    run.send(Update::Step(end.state(name))).await;
    end
}

pub(super) fn scope<'a>(
    run: &'a Run,
    phase: &'a Phase,
    outputs: &'a std::collections::HashMap<String, Arc<StepOutputs>>,
    item: Option<&'a Value>,
    files: Option<&'a Files>,
) -> Scope<'a> {
    Scope {
        outputs,
        own: None,
        item,
        files,
        workflow_name: &run.plan.workflow.name,
        parameters: &run.plan.parameters,
        status: phase.status,
    }
}

/// How one try ended, judged.
enum Ended {
    Ok(StepOutputs),
    Failed(FailureKind, String),
    Cancelled,
}

/// A step, or one instance of a `map` step.
pub(super) struct Instance {
    pub run: Arc<Run>,
    pub phase: Arc<Phase>,
    /// Start no new try (see [`run_step`]).
    pub halt: CancellationToken,
    /// The step's index in the plan.
    pub index: usize,
    pub name: String,
    pub item: Option<Value>,
    /// The map's `parallelism`.
    pub slots: Option<Arc<Semaphore>>,
    /// Whether this instance judges the step's `when` itself.
    pub judge_when: bool,
}

/// One finished try: how it ended and where it ran.
struct Try {
    outcome: Outcome,
    stop: Option<Stop>,
    dir: PathBuf,
}

impl Instance {
    fn ir(&self) -> &Step {
        self.run.plan.ir_step(self.index)
    }

    fn dir(&self) -> PathBuf {
        self.run.dir.join(&self.name)
    }

    pub(super) async fn run(self) -> StepEnd {
        if let Some(earlier) = self.run.resume.get(&self.name)
            && earlier.phase.is_terminal()
        {
            return StepEnd {
                phase: earlier.phase,
                outputs: Arc::new(earlier.outputs.clone()),
                message: earlier.message.clone(),
            };
        }
        let ir = self.ir();
        if self.judge_when && !ir.when.is_empty() {
            let judged = {
                let outputs = self.run.outputs.read().unwrap_or_else(|e| e.into_inner());
                let scope = scope(&self.run, &self.phase, &outputs, self.item.as_ref(), None);
                scope
                    .all_hold(&ir.when)
                    .map(|holds| (!holds).then(|| scope.first_false(&ir.when).unwrap_or_default()))
            };
            match judged {
                Ok(None) => {}
                Ok(Some(why)) => return report_end(&self.run, &self.name, skipped(why)).await,
                Err(e) => return report_end(&self.run, &self.name, StepEnd::failed(e)).await,
            }
        }

        let planned = planned_memory(ir);
        let mut meta = TryMeta {
            attempt: 0,
            iteration: 1,
            retry: 0,
            memory_limit: planned,
        };
        let mut pending = None;
        if self.run.existed {
            let dir = self.dir();
            let earlier = tokio::task::spawn_blocking(move || process::latest_try(&dir))
                .await
                .ok()
                .flatten();
            // A try recorded without a limit (or before limits) gets the plan's.
            let or_planned = |at: TryMeta| TryMeta {
                memory_limit: at.memory_limit.or(planned),
                ..at
            };
            match earlier {
                Some(OnDisk::Started(earlier)) => {
                    meta = or_planned(earlier.state.meta);
                    pending = Some(self.reattach(earlier, meta).await);
                }
                Some(OnDisk::Unstarted {
                    meta: at,
                    after_oom,
                }) => {
                    meta = or_planned(at);
                    if after_oom {
                        meta.memory_limit = raised_limit(meta.memory_limit, planned);
                    }
                }
                None => {}
            }
        }
        loop {
            let done = match pending.take() {
                Some(done) => done,
                None => {
                    meta.attempt += 1;
                    match self.attempt(meta).await {
                        Some(done) => done,
                        None => return self.halted(meta.attempt - 1).await,
                    }
                }
            };
            let (metrics, logs, dir) = (
                done.outcome.metrics,
                done.outcome.logs.clone(),
                done.dir.clone(),
            );
            let out_of_memory =
                done.stop.is_none() && matches!(done.outcome.exit, Exit::OutOfMemory(_));
            let report = |phase, message, outputs| StepState {
                name: self.name.clone(),
                phase,
                attempt: meta.attempt,
                message,
                outputs,
                metrics,
                engine_ref: Some(dir.to_string_lossy().into_owned()),
                logs: logs.clone(),
            };
            match judge(done) {
                Ended::Ok(outputs) => {
                    match self.again(&meta, &outputs) {
                        Ok(true) => {
                            let message = format!("iteration {} done; looping", meta.iteration);
                            self.run
                                .send(Update::Step(report(
                                    StepPhase::Running,
                                    Some(message),
                                    outputs,
                                )))
                                .await;
                            meta.iteration += 1;
                            meta.retry = 0;
                            continue;
                        }
                        Ok(false) => {}
                        Err(e) => {
                            return self.end(report(StepPhase::Failed, Some(e), outputs)).await;
                        }
                    }
                    let message = self.success_note(&meta);
                    return self
                        .end(report(StepPhase::Succeeded, message, outputs))
                        .await;
                }
                Ended::Cancelled => {
                    let state = report(
                        StepPhase::Cancelled,
                        Some("cancelled".into()),
                        StepOutputs::default(),
                    );
                    return self.end(state).await;
                }
                Ended::Failed(_, message) if self.phase.cancel.is_cancelled() => {
                    let state = report(
                        StepPhase::Cancelled,
                        Some(format!("cancelled ({message})")),
                        StepOutputs::default(),
                    );
                    return self.end(state).await;
                }
                Ended::Failed(kind, message) => {
                    let retry = self.ir().retry.as_ref().filter(|r| {
                        meta.retry < r.limit
                            && (r.on == RetryOn::Always || kind == FailureKind::Transient)
                    });
                    let Some(policy) = retry.filter(|_| !self.halt.is_cancelled()) else {
                        tracing::debug!(step = %self.name, attempt = meta.attempt, ?kind, "step failed");
                        self.halt.cancel();
                        let state =
                            report(StepPhase::Failed, Some(message), StepOutputs::default());
                        return self.end(state).await;
                    };
                    let wait = backoff(policy, meta.retry);
                    let memory_limit = if out_of_memory {
                        raised_limit(meta.memory_limit, planned)
                    } else {
                        meta.memory_limit
                    };
                    tracing::debug!(step = %self.name, attempt = meta.attempt, ?kind, ?wait, ?memory_limit, "retrying step");
                    let more = match memory_limit {
                        Some(limit) if out_of_memory => format!(" with {} of memory", mib(limit)),
                        _ => String::new(),
                    };
                    let note = format!(
                        "attempt {} failed ({message}); retrying in {}{more}",
                        meta.attempt,
                        human(wait)
                    );
                    self.run
                        .send(Update::Step(report(
                            StepPhase::Running,
                            Some(note),
                            StepOutputs::default(),
                        )))
                        .await;
                    meta.retry += 1;
                    meta.memory_limit = memory_limit;
                    tokio::select! {
                        _ = tokio::time::sleep(wait) => {}
                        _ = self.halt.cancelled() => {}
                    }
                }
            }
        }
    }

    /// Reports a terminal state and hands its end to the caller.
    async fn end(&self, state: StepState) -> StepEnd {
        let end = StepEnd {
            phase: state.phase,
            outputs: Arc::new(state.outputs.clone()),
            message: state.message.clone(),
        };
        self.run.send(Update::Step(state)).await;
        end
    }

    /// The run stopped starting new work before this try could start.
    async fn halted(&self, attempt: u32) -> StepEnd {
        let reason = self.phase.not_started_reason();
        let message = if attempt == 0 {
            reason.to_owned()
        } else {
            format!("retry abandoned ({reason})")
        };
        let state = StepState {
            attempt,
            ..StepEnd {
                phase: StepPhase::Cancelled,
                outputs: Arc::default(),
                message: Some(message),
            }
            .state(&self.name)
        };
        self.end(state).await
    }

    /// Whether a `while` step goes round again after a successful try.
    fn again(&self, meta: &TryMeta, outputs: &StepOutputs) -> Result<bool, String> {
        let ir = self.ir();
        let Some(w) = &ir.repeat else {
            return Ok(false);
        };
        if meta.iteration >= w.max_iterations {
            return Ok(false);
        }
        let table = self.run.outputs.read().unwrap_or_else(|e| e.into_inner());
        let scope = Scope {
            own: Some((&ir.name, outputs)),
            ..scope(&self.run, &self.phase, &table, None, None)
        };
        scope.all_hold(&w.condition)
    }

    fn success_note(&self, meta: &TryMeta) -> Option<String> {
        let ir = self.ir();
        if let Some(w) = &ir.repeat {
            let capped = if meta.iteration >= w.max_iterations {
                " (maxIterations reached)"
            } else {
                ""
            };
            return Some(format!("{} iterations{capped}", meta.iteration));
        }
        job_note(ir)
    }

    /// Starts and awaits one try; `None` when the run halted first.
    async fn attempt(&self, meta: TryMeta) -> Option<Try> {
        let _permits = tokio::select! {
            permits = self.acquire() => permits,
            _ = self.halt.cancelled() => return None,
        };
        if self.halt.is_cancelled() {
            return None;
        }
        let dir = self.dir().join(meta.attempt.to_string());
        let launch = match self.launch(&dir, meta) {
            Ok(launch) => launch,
            Err(message) => {
                return Some(Try {
                    outcome: Outcome::without_process(Exit::NotStarted(message)),
                    stop: None,
                    dir,
                });
            }
        };
        let mut child = process::launch(launch);
        if child.started().await {
            self.report_running(meta, &dir, self.running_note(&meta))
                .await;
        }
        let timeout = self.ir().timeout.map(|t| t.as_std());
        let (outcome, stop) = child.wait(&self.phase.cancel, timeout).await;
        Some(Try { outcome, stop, dir })
    }

    /// Follows a try an earlier start left behind.
    async fn reattach(&self, earlier: Earlier, meta: TryMeta) -> Try {
        let dir = earlier.dir.clone();
        self.report_running(meta, &dir, Some("re-attached after a restart".into()))
            .await;
        let ir = self.ir();
        let cgroup = match (&earlier.state.cgroup, &self.run.engine.cgroups) {
            (Some(name), Some(cgroups)) => Some(cgroups.for_try(name)),
            _ => self.cgroup(&dir),
        };
        let jail = Jail {
            cgroup,
            limits: Some(self.limits(&meta)),
            ..Jail::default()
        };
        let launch = Launch {
            dir: dir.clone(),
            argv: Vec::new(),
            script: None,
            env: Vec::new(),
            working_dir: None,
            inputs: Vec::new(),
            files: self.files(&dir),
            meta,
            cas: self.run.engine.cas.clone(),
            log_tail: self.run.engine.config.log_tail_bytes,
            jail,
        };
        let timeout = ir.timeout.map(|t| t.as_std());
        let (outcome, stop) = earlier.wait(launch, &self.phase.cancel, timeout).await;
        Try { outcome, stop, dir }
    }

    /// Where the try in `dir` finds its declared inputs and outputs.
    fn files(&self, dir: &Path) -> Files {
        let sandboxed = matches!(self.run.engine.sandbox, Ok(Some(_)));
        Files::new(dir, self.ir(), sandboxed)
    }

    /// The cgroup of the try in `dir`, where the kernel limits tries.
    fn cgroup(&self, dir: &Path) -> Option<cgroup::TryCgroup> {
        let cgroups = self.run.engine.cgroups.as_ref()?;
        Some(cgroups.for_try(&cgroup::name_for(dir)))
    }

    /// The kernel limits of a try: its memory limit (or the platform's
    /// default), the pids cap and its CPU request.
    fn limits(&self, meta: &TryMeta) -> Limits {
        let settings = &self.run.engine.config.sandbox;
        let cpu = self.ir().resources.as_ref().and_then(|r| r.cpu);
        Limits {
            memory: meta.memory_limit.or(settings.default_memory),
            pids: settings.max_pids,
            cpu_millis: cpu.map(|c| c.millis()),
        }
    }

    /// What confines a new try in `dir`: sandbox, owner and cgroup.
    fn jail(&self, dir: &Path, meta: &TryMeta) -> Result<Jail, String> {
        let sandbox = self
            .run
            .engine
            .sandbox
            .clone()
            .map_err(|why| format!("the local engine cannot sandbox steps: {why}"))?;
        let owner = match &sandbox {
            Some(sandbox) => sandbox.owner(&self.run.spec.tenant)?,
            None => None,
        };
        Ok(Jail {
            sandbox,
            owner,
            cgroup: self.cgroup(dir),
            limits: Some(self.limits(meta)),
            network: self.run.spec.network,
        })
    }

    async fn report_running(&self, meta: TryMeta, dir: &Path, message: Option<String>) {
        let state = StepState {
            name: self.name.clone(),
            phase: StepPhase::Running,
            attempt: meta.attempt,
            message,
            outputs: StepOutputs::default(),
            metrics: None,
            engine_ref: Some(dir.to_string_lossy().into_owned()),
            logs: None,
        };
        self.run.send(Update::Step(state)).await;
    }

    fn running_note(&self, meta: &TryMeta) -> Option<String> {
        let ir = self.ir();
        let mut notes = Vec::new();
        if let Some(w) = &ir.repeat {
            notes.push(format!(
                "iteration {} of at most {}",
                meta.iteration, w.max_iterations
            ));
        }
        if meta.retry > 0 {
            notes.push(format!("retry {}", meta.retry));
        }
        if let Some(limit) = meta.memory_limit
            && planned_memory(ir).is_some_and(|p| p != limit)
        {
            notes.push(format!("memory limit raised to {}", mib(limit)));
        }
        notes.extend(job_note(ir));
        (!notes.is_empty()).then(|| notes.join("; "))
    }

    async fn acquire(&self) -> [Option<OwnedSemaphorePermit>; 3] {
        let take = |s: &Arc<Semaphore>| s.clone().acquire_owned();
        let map = match &self.slots {
            Some(s) => take(s).await.ok(),
            None => None,
        };
        let workflow = match &self.run.slots {
            Some(s) => take(s).await.ok(),
            None => None,
        };
        let engine = take(&self.run.engine.slots).await.ok();
        [map, workflow, engine]
    }

    /// Resolves everything a try needs: references, program, environment,
    /// secrets and input artifacts.
    fn launch(&self, dir: &Path, meta: TryMeta) -> Result<Launch, String> {
        let ir = self.ir();
        let mut step = ir.clone();
        let mut inputs = Vec::new();
        let files = self.files(dir);
        if let Ok(Some(sandbox)) = &self.run.engine.sandbox {
            let refused = files.refusals(&sandbox.reserved());
            if !refused.is_empty() {
                return Err(refused.join("; "));
            }
        }
        {
            let outputs = self.run.outputs.read().unwrap_or_else(|e| e.into_inner());
            scope(
                &self.run,
                &self.phase,
                &outputs,
                self.item.as_ref(),
                Some(&files),
            )
            .render_step(&mut step)?;
            for input in ir.inputs.iter().flat_map(|i| &i.artifacts) {
                let Some(Ok(Ref::StepArtifact(source, artifact))) = sole_reference(&input.from)
                else {
                    return Err(format!("input artifact `{}`: bad `from`", input.name));
                };
                let stored = outputs
                    .get(source)
                    .and_then(|o| o.artifacts.get(artifact))
                    .ok_or_else(|| {
                        format!(
                            "input artifact `{}`: step `{source}` has no output artifact `{artifact}`",
                            input.name
                        )
                    })?;
                inputs.push((files.input(&input.name), stored.clone()));
            }
        }
        let (argv, script, working_dir, extra) = match step.kind() {
            Some(StepKind::Container(c)) => {
                let argv: Vec<String> = c.command.iter().chain(&c.args).cloned().collect();
                if argv.is_empty() {
                    return Err("the container has no command: the local engine cannot use the image's entrypoint".into());
                }
                (argv, None, c.working_dir.clone(), Vec::new())
            }
            Some(StepKind::Script(s)) => {
                let mut argv = s.command.clone();
                argv.push(Launch::script_path(dir).to_string_lossy().into_owned());
                (
                    argv,
                    Some(s.source.clone()),
                    s.working_dir.clone(),
                    Vec::new(),
                )
            }
            Some(StepKind::Job(j)) => {
                // One process: the leading role's (see `job_note`).
                let leader = j.leader();
                let (command, args) = j.argv_of(leader);
                let argv: Vec<String> = command.iter().chain(args).cloned().collect();
                if argv.is_empty() {
                    return Err(format!(
                        "the job's {leader} has no command: the local engine cannot use the image's entrypoint"
                    ));
                }
                let single = ["WORLD_SIZE=1", "RANK=0", "LOCAL_RANK=0"];
                let extra = single
                    .iter()
                    .map(|kv| kv.split_once('=').expect("literal"))
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect();
                (argv, None, j.working_dir.clone(), extra)
            }
            None => return Err("the step has no container, script or job".into()),
        };
        let engine = &self.run.engine;
        let jail = self.jail(dir, &meta)?;
        let mut env = engine.base_env.clone();
        if jail.sandbox.is_some() {
            // The host's home and temporary directories are not in the sandbox.
            env.retain(|(k, _)| k != "HOME" && k != "TMPDIR");
            env.push(("HOME".into(), "/tmp".into()));
        }
        env.push(("COULER_RUN".into(), self.run.spec.run.clone()));
        env.push(("COULER_STEP".into(), self.name.clone()));
        env.extend(extra);
        for var in step.env() {
            match (&var.value, &var.secret) {
                (Some(value), _) => env.push((var.name.clone(), value.clone())),
                (None, Some(secret)) => {
                    let value = self
                        .run
                        .spec
                        .secrets
                        .get(&secret.name, &secret.key)
                        .ok_or_else(|| {
                            format!(
                                "secret {}/{} (env {}) was not handed to the run: the tenant has no such secret or key",
                                secret.name, secret.key, var.name
                            )
                        })?;
                    env.push((var.name.clone(), value.expose_secret().to_owned()));
                }
                (None, None) => {}
            }
        }
        Ok(Launch {
            dir: dir.to_owned(),
            argv,
            script,
            env,
            working_dir: working_dir.map(PathBuf::from),
            inputs,
            files,
            meta,
            cas: engine.cas.clone(),
            log_tail: engine.config.log_tail_bytes,
            jail,
        })
    }
}

/// The step's `resources.memory` in bytes: its first try's memory limit.
fn planned_memory(ir: &Step) -> Option<u64> {
    ir.resources.as_ref()?.memory.map(|m| m.bytes())
}

/// Training jobs run as one process here; say so.
fn job_note(ir: &Step) -> Option<String> {
    let job = ir.job.as_ref()?;
    let replicas: Vec<String> = job
        .replicas
        .iter()
        .map(|(role, r)| format!("{role} ×{}", r.count))
        .collect();
    Some(format!(
        "{} job replicas ({}) collapsed to one process running the {}'s command (WORLD_SIZE=1, RANK=0) on the local engine",
        format!("{:?}", job.framework).to_lowercase(),
        replicas.join(", "),
        job.leader()
    ))
}

/// Turns a try's process outcome into success, a classified failure or a
/// cancellation.
fn judge(done: Try) -> Ended {
    let Try { outcome, stop, .. } = done;
    let with_stderr = |message: String| match &outcome.stderr_line {
        Some(line) => format!("{message}: {line}"),
        None => message,
    };
    match (stop, outcome.exit) {
        (Some(Stop::Cancel), _) => Ended::Cancelled,
        (Some(Stop::Timeout(after)), _) => Ended::Failed(
            FailureKind::Timeout,
            format!("timed out after {}", human(after)),
        ),
        (None, Exit::Code(0)) => match outcome.outputs {
            Some(Ok(outputs)) => Ended::Ok(outputs),
            Some(Err(message)) => Ended::Failed(FailureKind::User, message),
            None => Ended::Ok(StepOutputs::default()),
        },
        (None, Exit::Code(code)) => {
            // Shells report a child killed by signal N as exit code 128+N.
            let signal = (129..=192).contains(&code).then_some(code - 128);
            let message = with_stderr(match signal {
                Some(s) => format!("killed by signal {s} (exit code {code})"),
                None => format!("exit code {code}"),
            });
            Ended::Failed(classify(&message, signal), message)
        }
        (None, Exit::Signal(signal)) => {
            let message = with_stderr(format!("killed by signal {signal}"));
            Ended::Failed(classify(&message, Some(signal)), message)
        }
        (None, Exit::NotStarted(message)) => Ended::Failed(classify(&message, None), message),
        (None, Exit::OutOfMemory(oom)) => {
            let message = format!(
                "OOMKilled: the step used {}, over its memory limit of {}",
                mib(oom.used),
                mib(oom.limit)
            );
            Ended::Failed(classify(&message, None), message)
        }
        (None, Exit::Lost) => Ended::Failed(
            FailureKind::Transient,
            "the step's process was lost while no scheduler watched it".into(),
        ),
    }
}
