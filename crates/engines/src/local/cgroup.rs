//! Kernel resource limits for step tries: one cgroup per try, under a
//! `couler-steps` group of the engine's own cgroup, with the try's memory
//! limit, a pids limit and its CPU quota. Version 2 (the unified
//! hierarchy) and version 1 (one hierarchy per controller, as on the build
//! machines) are both read; on v1 each controller gets its own directory.
//!
//! A try joins its cgroups before it executes anything (the child that
//! starts bubblewrap writes `0` to each `cgroup.procs`), so nothing it
//! starts is ever outside them. The kernel then enforces the limits: over its memory the
//! try's largest process is killed (counted as `oom_kill`, which is how an
//! out-of-memory end is told from any other), over its pids `fork` fails.
//! Where no cgroup can be made (no controllers, no permission) the engine
//! says so once and limits stay advisory (`memory` sampling).
//!
//! A try's cgroup is named from its directory, so a driver that re-attaches
//! after a restart finds it again; it is removed once the try is read back.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{OnceLock, mpsc};
use std::time::Duration;

/// The group every try's cgroup is made in, per controller directory.
const PARENT: &str = "couler-steps";
/// v1 controllers used, each a hierarchy of its own.
const V1_CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];
const CFS_PERIOD_US: u64 = 100_000;

/// Where try cgroups are made on this machine.
#[derive(Debug, Clone)]
pub(super) enum Cgroups {
    /// One directory in the unified hierarchy.
    V2(PathBuf),
    /// A directory in each of the memory, pids and cpu hierarchies, and in
    /// cpuacct's where it is a hierarchy of its own (it counts CPU time).
    V1 {
        memory: PathBuf,
        pids: PathBuf,
        cpu: PathBuf,
        cpuacct: Option<PathBuf>,
    },
}

/// The limits of one try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Limits {
    pub memory: Option<u64>,
    pub pids: u32,
    /// Millicores; none: not limited.
    pub cpu_millis: Option<u64>,
}

/// One try's cgroup (a directory per hierarchy).
#[derive(Debug, Clone)]
pub(super) struct TryCgroup {
    version: Version,
    dirs: Vec<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Version {
    V1,
    V2,
}

impl Cgroups {
    /// Finds this process's cgroups and makes the `couler-steps` parent in
    /// each, checking that limits can be written there. `Err` says why
    /// limits cannot be enforced.
    pub(super) fn detect() -> Result<Cgroups, String> {
        let own = fs::read_to_string("/proc/self/cgroup")
            .map_err(|e| format!("cannot read /proc/self/cgroup: {e}"))?;
        let root = Path::new("/sys/fs/cgroup");
        let cgroups = if root.join("cgroup.controllers").exists() {
            let path = own_path(&own, "").ok_or("no unified cgroup in /proc/self/cgroup")?;
            let base = root.join(path.trim_start_matches('/'));
            Cgroups::V2(v2_parent(&base)?)
        } else {
            let dir = |controller: &str| -> Result<PathBuf, String> {
                let mount = root.join(controller);
                let path = own_path(&own, controller)
                    .ok_or_else(|| format!("no {controller} cgroup in /proc/self/cgroup"))?;
                let parent = mount.join(path.trim_start_matches('/')).join(PARENT);
                make_dir(&parent)?;
                Ok(parent)
            };
            let cpu = dir(V1_CONTROLLERS[2])?;
            // Mounted with cpu (`cpu,cpuacct`), the cpu directory counts.
            let cpuacct = match cpu.join("cpuacct.usage").exists() {
                true => None,
                false => dir("cpuacct").ok(),
            };
            Cgroups::V1 {
                memory: dir(V1_CONTROLLERS[0])?,
                pids: dir(V1_CONTROLLERS[1])?,
                cpu,
                cpuacct,
            }
        };
        // Prove it once: a cgroup with every limit set, then removed.
        let probe = cgroups.for_try(&format!("probe-{}", std::process::id()));
        let limits = Limits {
            memory: Some(64 << 20),
            pids: 16,
            cpu_millis: Some(500),
        };
        let made = probe.create(limits);
        probe.remove();
        made.map_err(|e| format!("cannot set limits in a step cgroup: {e}"))?;
        Ok(cgroups)
    }

    /// The cgroup of the try whose directory hashes to `name`.
    pub(super) fn for_try(&self, name: &str) -> TryCgroup {
        match self {
            Cgroups::V2(parent) => TryCgroup {
                version: Version::V2,
                dirs: vec![parent.join(name)],
            },
            Cgroups::V1 {
                memory,
                pids,
                cpu,
                cpuacct,
            } => TryCgroup {
                version: Version::V1,
                dirs: [memory, pids, cpu]
                    .into_iter()
                    .chain(cpuacct)
                    .map(|p| p.join(name))
                    .collect(),
            },
        }
    }

    /// Removes the cgroups whose names start with `prefix` and that hold no
    /// process (left by an engine that ended).
    pub(super) fn remove_idle(&self, prefix: &str) {
        let parents = match self {
            Cgroups::V2(parent) => vec![parent],
            Cgroups::V1 {
                memory,
                pids,
                cpu,
                cpuacct,
            } => [memory, pids, cpu].into_iter().chain(cpuacct).collect(),
        };
        for parent in parents {
            for entry in fs::read_dir(parent).into_iter().flatten().flatten() {
                let dir = entry.path();
                let named = entry.file_name().to_string_lossy().starts_with(prefix);
                let idle =
                    fs::read_to_string(dir.join("cgroup.procs")).is_ok_and(|p| p.trim().is_empty());
                if named && idle {
                    let _ = fs::remove_dir(&dir);
                }
            }
        }
    }

    pub(super) fn describe(&self) -> &'static str {
        match self {
            Cgroups::V2(_) => "cgroup v2",
            Cgroups::V1 { .. } => "cgroup v1",
        }
    }
}

/// A try's cgroup name: from its directory, so a re-attach finds it.
pub(super) fn name_for(dir: &Path) -> String {
    let hash = blake3::hash(dir.as_os_str().as_encoded_bytes());
    format!("try-{}", &hash.to_hex()[..20])
}

impl TryCgroup {
    /// Makes the directories and writes the limits.
    pub(super) fn create(&self, limits: Limits) -> io::Result<()> {
        for dir in &self.dirs {
            match fs::create_dir(dir) {
                Err(e) if e.kind() != io::ErrorKind::AlreadyExists => return Err(e),
                _ => {}
            }
        }
        match self.version {
            Version::V2 => {
                let dir = &self.dirs[0];
                let memory = limits.memory.map_or("max".into(), |m| m.to_string());
                write(dir, "memory.max", &memory)?;
                // Swap would let a step go past its memory unnoticed.
                write_if_present(dir, "memory.swap.max", "0")?;
                write(dir, "pids.max", &limits.pids.to_string())?;
                let cpu = match limits.cpu_millis {
                    Some(m) => format!("{} {CFS_PERIOD_US}", quota_us(m)),
                    None => format!("max {CFS_PERIOD_US}"),
                };
                write(dir, "cpu.max", &cpu)
            }
            Version::V1 => {
                let (memory, pids, cpu) = (&self.dirs[0], &self.dirs[1], &self.dirs[2]);
                let bytes = limits.memory.map_or("-1".into(), |m| m.to_string());
                // The memory and swap limit may not be below the memory
                // limit: lifted first, so that a limit may also go up.
                write_if_present(memory, "memory.memsw.limit_in_bytes", "-1")?;
                write(memory, "memory.limit_in_bytes", &bytes)?;
                write_if_present(memory, "memory.memsw.limit_in_bytes", &bytes)?;
                write(pids, "pids.max", &limits.pids.to_string())?;
                write(cpu, "cpu.cfs_period_us", &CFS_PERIOD_US.to_string())?;
                let quota = limits
                    .cpu_millis
                    .map_or("-1".into(), |m| quota_us(m).to_string());
                write(cpu, "cpu.cfs_quota_us", &quota)
            }
        }
    }

    /// The cgroup's name (the same in every hierarchy).
    pub(super) fn name(&self) -> String {
        let name = self.dirs.first().and_then(|d| d.file_name());
        name.map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    }

    /// The files a process writes `0` to to join the try's cgroups.
    pub(super) fn procs_files(&self) -> Vec<PathBuf> {
        self.dirs.iter().map(|d| d.join("cgroup.procs")).collect()
    }

    /// Whether the kernel killed a process of the try for its memory.
    pub(super) fn oom_killed(&self) -> bool {
        let (dir, file) = match self.version {
            Version::V2 => (&self.dirs[0], "memory.events"),
            Version::V1 => (&self.dirs[0], "memory.oom_control"),
        };
        let text = fs::read_to_string(dir.join(file)).unwrap_or_default();
        text.lines()
            .filter_map(|l| l.strip_prefix("oom_kill "))
            .any(|n| n.trim().parse::<u64>().is_ok_and(|n| n > 0))
    }

    /// The most memory the try used, in bytes, where the kernel keeps it.
    pub(super) fn peak_memory(&self) -> Option<u64> {
        let file = match self.version {
            Version::V2 => "memory.peak",
            Version::V1 => "memory.max_usage_in_bytes",
        };
        fs::read_to_string(self.dirs[0].join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// The CPU time the try's processes used, where the kernel counts it:
    /// bubblewrap's and the step's below them, which the engine cannot
    /// reap (rusage does not reach them).
    pub(super) fn cpu_time(&self) -> Option<Duration> {
        let read = |dir: &Path, file: &str| fs::read_to_string(dir.join(file)).ok();
        match self.version {
            Version::V2 => read(&self.dirs[0], "cpu.stat")?
                .lines()
                .find_map(|l| l.strip_prefix("usage_usec "))
                .and_then(|n| n.trim().parse().ok())
                .map(Duration::from_micros),
            Version::V1 => self
                .dirs
                .iter()
                .find_map(|d| read(d, "cpuacct.usage")?.trim().parse().ok())
                .map(Duration::from_nanos),
        }
    }

    /// Kills whatever is left in the cgroups, then has them removed by a
    /// thread of their own: removing a memory cgroup takes a while, and one
    /// whose last process is still exiting (a sandbox's init outlives
    /// bubblewrap while the kernel tears its namespaces down) cannot be
    /// removed yet, so the try's end waits for neither.
    pub(super) fn remove(&self) {
        for dir in &self.dirs {
            kill_all(dir);
        }
        remove_later(self.dirs.clone());
    }
}

/// SIGKILL to every process in `dir`.
fn kill_all(dir: &Path) {
    if let Ok(procs) = fs::read_to_string(dir.join("cgroup.procs")) {
        for pid in procs.lines().filter_map(|p| p.trim().parse::<i32>().ok()) {
            // SAFETY: plain syscall on a pid the cgroup lists.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
    }
}

/// Hands `dirs` to the thread that removes cgroups, which retries each for
/// a few seconds while its last processes exit.
fn remove_later(dirs: Vec<PathBuf>) {
    static REMOVER: OnceLock<mpsc::Sender<Vec<PathBuf>>> = OnceLock::new();
    let remover = REMOVER.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Vec<PathBuf>>();
        let removing = move || {
            for dir in rx.into_iter().flatten() {
                // 0.25 ms, doubling up to 50 ms: about 5 s in all.
                let mut pause = Duration::from_micros(250);
                let mut tries = 0;
                loop {
                    match fs::remove_dir(&dir) {
                        Err(e) if e.kind() != io::ErrorKind::NotFound && tries < 110 => {
                            tries += 1;
                            std::thread::sleep(pause);
                            pause = (pause * 2).min(Duration::from_millis(50));
                            kill_all(&dir);
                        }
                        Err(e) if e.kind() != io::ErrorKind::NotFound => {
                            tracing::warn!(dir = %dir.display(), error = %e, "a step's cgroup cannot be removed; left in place");
                            break;
                        }
                        _ => break,
                    }
                }
            }
        };
        if let Err(e) = std::thread::Builder::new()
            .name("couler-cgroups".into())
            .spawn(removing)
        {
            tracing::warn!(error = %e, "cannot start the thread that removes step cgroups");
        }
        tx
    });
    if let Err(mpsc::SendError(dirs)) = remover.send(dirs) {
        tracing::warn!(dirs = ?dirs, "step cgroups left in place");
    }
}

fn quota_us(millis: u64) -> u64 {
    // At least 1 ms per period: the kernel refuses less.
    (millis * CFS_PERIOD_US / 1000).max(1000)
}

/// The path of this process's cgroup in the hierarchy holding `controller`
/// (`""`: the unified one), from `/proc/self/cgroup`.
fn own_path(proc_cgroup: &str, controller: &str) -> Option<String> {
    proc_cgroup.lines().find_map(|line| {
        let mut parts = line.splitn(3, ':');
        let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
        let hit = if controller.is_empty() {
            controllers.is_empty()
        } else {
            controllers.split(',').any(|c| c == controller)
        };
        hit.then(|| path.to_owned())
    })
}

/// v2: steps go in `<own>/couler-steps`. The unified hierarchy lets a
/// cgroup either hold processes or hand controllers to children, so when
/// this process's own cgroup cannot delegate yet, the process moves to a
/// leaf `<own>/couler-engine` first and enables the controllers.
fn v2_parent(base: &Path) -> Result<PathBuf, String> {
    let wanted = ["memory", "pids", "cpu"];
    let enabled = fs::read_to_string(base.join("cgroup.subtree_control")).unwrap_or_default();
    if !wanted
        .iter()
        .all(|c| enabled.split_whitespace().any(|e| e == *c))
    {
        let available = fs::read_to_string(base.join("cgroup.controllers"))
            .map_err(|e| format!("cannot read {}: {e}", base.display()))?;
        if let Some(missing) = wanted
            .iter()
            .find(|c| !available.split_whitespace().any(|a| a == **c))
        {
            return Err(format!("the {missing} controller is not available here"));
        }
        let leaf = base.join("couler-engine");
        make_dir(&leaf)?;
        write(&leaf, "cgroup.procs", &std::process::id().to_string())
            .map_err(|e| format!("cannot move the engine into {}: {e}", leaf.display()))?;
        write(base, "cgroup.subtree_control", "+memory +pids +cpu")
            .map_err(|e| format!("cannot delegate controllers in {}: {e}", base.display()))?;
    }
    let parent = base.join(PARENT);
    make_dir(&parent)?;
    write(&parent, "cgroup.subtree_control", "+memory +pids +cpu")
        .map_err(|e| format!("cannot delegate controllers in {}: {e}", parent.display()))?;
    Ok(parent)
}

fn make_dir(dir: &Path) -> Result<(), String> {
    match fs::create_dir(dir) {
        Err(e) if e.kind() != io::ErrorKind::AlreadyExists => {
            Err(format!("cannot create {}: {e}", dir.display()))
        }
        _ => Ok(()),
    }
}

fn write(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    let mut f = OpenOptions::new().write(true).open(dir.join(file))?;
    f.write_all(value.as_bytes())
}

fn write_if_present(dir: &Path, file: &str, value: &str) -> io::Result<()> {
    match File::options().write(true).open(dir.join(file)) {
        Ok(mut f) => f.write_all(value.as_bytes()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_cgroups_are_found_per_hierarchy() {
        let text =
            "12:pids:/user.slice\n4:memory:/process_api/abc\n2:cpu,cpuacct:/x\n0::/init.scope\n";
        assert_eq!(
            own_path(text, "memory").as_deref(),
            Some("/process_api/abc")
        );
        assert_eq!(own_path(text, "cpu").as_deref(), Some("/x"));
        assert_eq!(own_path(text, "").as_deref(), Some("/init.scope"));
        assert_eq!(own_path(text, "blkio"), None);
    }

    #[test]
    fn cpu_quotas_follow_millicores() {
        assert_eq!(quota_us(500), 50_000);
        assert_eq!(quota_us(2000), 200_000);
        assert_eq!(quota_us(1), 1000);
    }

    #[test]
    fn a_try_keeps_its_cgroup_name() {
        let a = name_for(Path::new("/data/runs/r/1/s/1"));
        assert_eq!(a, name_for(Path::new("/data/runs/r/1/s/1")));
        assert_ne!(a, name_for(Path::new("/data/runs/r/1/s/2")));
        assert!(a.starts_with("try-") && a.len() == 24);
    }
}
