//! Finding a step's tries again after a scheduler restart: the latest try
//! on disk, whether its process still runs, and finishing it (waiting for a
//! live one, reading back one that ended while nobody watched) or stopping
//! what is left of a run.

use super::*;
use std::os::unix::ffi::OsStrExt;

/// A try directory of an earlier start, found on disk.
pub(in crate::local) struct Earlier {
    pub dir: PathBuf,
    pub state: StateFile,
}

/// What an earlier start left of a step instance.
pub(in crate::local) enum OnDisk {
    /// Its latest try started a process.
    Started(Earlier),
    /// Its latest try was prepared but never started; counting resumes so
    /// that the next try takes its place. `after_oom`: the try before it
    /// was killed out of memory, so this one was to have a higher limit.
    Unstarted { meta: TryMeta, after_oom: bool },
}

/// The latest try of a step instance, if an earlier start made one.
pub(in crate::local) fn latest_try(instance_dir: &Path) -> Option<OnDisk> {
    let latest = fs::read_dir(instance_dir)
        .ok()?
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .max()?;
    let state = |n: u32| -> Option<StateFile> {
        let dir = instance_dir.join(n.to_string());
        serde_json::from_slice(&fs::read(dir.join(STATE_FILE)).ok()?).ok()
    };
    if let Some(state) = state(latest) {
        let dir = instance_dir.join(latest.to_string());
        return Some(OnDisk::Started(Earlier { dir, state }));
    }
    let mut meta = TryMeta {
        attempt: latest - 1,
        iteration: 1,
        retry: 0,
        memory_limit: None,
    };
    let mut after_oom = false;
    if let Some(previous) = latest.checked_sub(1).and_then(state) {
        // After a success the loop went round again; otherwise it retried.
        let previous_dir = instance_dir.join((latest - 1).to_string());
        let succeeded = read_exit_file(&previous_dir) == Some(0);
        meta.iteration = previous.meta.iteration + u32::from(succeeded);
        meta.retry = if succeeded {
            0
        } else {
            previous.meta.retry + 1
        };
        meta.memory_limit = previous.meta.memory_limit;
        after_oom = !succeeded && read_oom_file(&previous_dir).is_some();
    }
    Some(OnDisk::Unstarted { meta, after_oom })
}

/// The exit status a try's `exit` file holds once its step has ended: a
/// number (the wrapper's, or the engine's for a sandbox that could not
/// start), or in bubblewrap's JSON lines the `exit-code` written last.
pub(super) fn read_exit_file(dir: &Path) -> Option<i32> {
    let text = fs::read_to_string(dir.join(EXIT_FILE)).ok()?;
    if let Ok(code) = text.trim().parse() {
        return Some(code);
    }
    text.lines().find_map(|line| {
        let status: serde_json::Value = serde_json::from_str(line).ok()?;
        i32::try_from(status.get("exit-code")?.as_i64()?).ok()
    })
}

/// Whether `pid` is still the wrapper of the try in `dir`.
fn alive(pid: i32, dir: &Path) -> bool {
    match fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(cmdline) => {
            let exit = dir.join(EXIT_FILE);
            let needle = exit.as_os_str().as_encoded_bytes();
            // A sandbox started ahead names a link to it (`sandbox::pool`).
            let first = cmdline.split(|b| *b == 0).next().unwrap_or_default();
            let alias = Path::new(std::ffi::OsStr::from_bytes(first));
            cmdline.windows(needle.len()).any(|w| w == needle)
                || fs::read_link(alias).is_ok_and(|target| target == exit)
        }
        // No /proc (not Linux): trust the pid.
        // SAFETY: signal 0 only checks for existence.
        Err(_) if !Path::new("/proc/self").exists() => unsafe { libc::kill(pid, 0) == 0 },
        Err(_) => false,
    }
}

impl Earlier {
    /// Follows a try started by an earlier scheduler to its end: finished
    /// from its files, awaited by polling (and sampled against its memory
    /// limit), or found lost.
    pub(in crate::local) async fn wait(
        self,
        launch: Launch,
        cancel: &CancellationToken,
        timeout: Option<Duration>,
    ) -> (Outcome, Option<Stop>) {
        let pid = self.state.pid;
        let started = UNIX_EPOCH + Duration::from_millis(self.state.started_unix_ms);
        let deadline = timeout.map(|t| {
            let ran = SystemTime::now()
                .duration_since(started)
                .unwrap_or_default();
            tokio::time::Instant::now() + t.saturating_sub(ran)
        });
        // With a cgroup the kernel holds the limit; only sample without one.
        let memory_limit = launch
            .meta
            .memory_limit
            .filter(|_| !launch.jail.enforces_memory());
        let launch = Arc::new(launch);
        // The earlier driver may have recorded a kill or a stop that it
        // did not get to finish.
        let mut killed = read_oom_file(&self.dir).is_some();
        if killed && alive(pid, &self.dir) {
            // SAFETY: plain syscall; identity checked just above.
            unsafe { libc::kill(-self.state.pgid, libc::SIGKILL) };
        }
        let mut stop = Stop::recorded(&self.dir);
        if stop.is_some() {
            terminate(self.state.pgid, pid, &self.dir).await;
        }
        let mut next_sample = tokio::time::Instant::now();
        loop {
            if let Some(code) = read_exit_file(&self.dir) {
                return (finish_from_files(launch, started, code).await, stop);
            }
            if !alive(pid, &self.dir) {
                // It may have written its exit file just before leaving.
                if let Some(code) = read_exit_file(&self.dir) {
                    return (finish_from_files(launch, started, code).await, stop);
                }
                let exit = match (stop, read_oom_file(&self.dir)) {
                    (Some(_), _) => Exit::Signal(libc::SIGTERM),
                    (None, Some(oom)) => Exit::OutOfMemory(oom),
                    (None, None) => Exit::Lost,
                };
                return (Outcome::without_process(exit), stop);
            }
            if stop.is_some() || killed {
                tokio::time::sleep(POLL).await;
                continue;
            }
            if let Some(limit) = memory_limit
                && tokio::time::Instant::now() >= next_sample
            {
                next_sample = tokio::time::Instant::now() + MEMORY_SAMPLE;
                let over = over_limit(self.state.pgid, limit, &self.dir).await;
                if over.is_some() && alive(pid, &self.dir) {
                    // SAFETY: as above.
                    unsafe { libc::kill(-self.state.pgid, libc::SIGKILL) };
                    killed = true;
                    continue;
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(POLL) => {}
                _ = cancel.cancelled() => stop = Some(Stop::Cancel),
                _ = sleep_until(deadline) => stop = Some(Stop::Timeout(timeout.unwrap_or_default())),
            }
            if let Some(stop) = stop {
                stop.record(&self.dir).await;
                terminate(self.state.pgid, pid, &self.dir).await;
            }
        }
    }
}

/// SIGTERM to a group we did not start, then SIGKILL after the grace
/// period if its leader is still there.
async fn terminate(pgid: i32, pid: i32, dir: &Path) {
    if !alive(pid, dir) {
        return;
    }
    // SAFETY: plain syscall; identity checked just above.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    let until = tokio::time::Instant::now() + KILL_GRACE;
    while tokio::time::Instant::now() < until {
        if !alive(pid, dir) {
            return;
        }
        tokio::time::sleep(POLL).await;
    }
    if alive(pid, dir) {
        // SAFETY: as above.
        unsafe { libc::kill(-pgid, libc::SIGKILL) };
    }
}

async fn finish_from_files(launch: Arc<Launch>, started: SystemTime, code: i32) -> Outcome {
    let work = move || {
        let ended = fs::metadata(launch.dir.join(EXIT_FILE))
            .and_then(|m| m.modified())
            .unwrap_or_else(|_| SystemTime::now());
        let metrics = StepMetrics {
            wall_ms: ended
                .duration_since(started)
                .unwrap_or_default()
                .as_millis() as u64,
            exit_code: Some(code),
            // CPU and memory died with the process that could have reaped it.
            ..StepMetrics::default()
        };
        let open = |name| OpenOptions::new().read(true).open(launch.dir.join(name));
        let mut outcome = match (open(STDOUT_FILE), open(STDERR_FILE)) {
            (Ok(mut out), Ok(mut err)) => {
                let cgroup = launch.jail.cgroup.as_ref();
                read_back(
                    &launch,
                    cgroup,
                    Exit::Code(code),
                    metrics,
                    &mut out,
                    &mut err,
                )
            }
            _ => Outcome {
                metrics: Some(metrics),
                ..Outcome::without_process(Exit::Code(code))
            },
        };
        // An exit status written as the kill landed still means the kill.
        if code != 0
            && let Some(oom) = read_oom_file(&launch.dir)
        {
            outcome.exit = Exit::OutOfMemory(oom);
        }
        if let Some(cgroup) = &launch.jail.cgroup {
            cgroup.remove();
        }
        outcome
    };
    tokio::task::spawn_blocking(work).await.unwrap_or_else(|e| {
        Outcome::without_process(Exit::NotStarted(format!("internal error: {e}")))
    })
}

/// Stops the processes of a run no task of ours is driving (after a
/// restart): every latest try still running gets SIGTERM, then SIGKILL.
pub(in crate::local) async fn stop_orphans(run_dir: PathBuf) {
    let found = tokio::task::spawn_blocking(move || {
        let mut found = Vec::new();
        for entry in fs::read_dir(&run_dir).into_iter().flatten().flatten() {
            if let Some(OnDisk::Started(earlier)) = latest_try(&entry.path())
                && read_exit_file(&earlier.dir).is_none()
            {
                found.push(earlier);
            }
        }
        found
    })
    .await
    .unwrap_or_default();
    for earlier in found {
        tokio::spawn(async move {
            Stop::Cancel.record(&earlier.dir).await;
            terminate(earlier.state.pgid, earlier.state.pid, &earlier.dir).await;
        });
    }
}
