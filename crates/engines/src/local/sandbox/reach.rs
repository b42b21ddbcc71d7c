//! Whether steps can be shown their directories: bubblewrap turns each
//! `--bind-fd` descriptor back into its path (`/proc/self/fd/N`) and opens
//! that as the step's user, so running as root a tenant's uid must be able
//! to search every directory above the data directory and each of
//! `local.mounts`. A data directory below `/root` or a `mkdtemp` directory
//! (mode 0700) fails every step with bubblewrap's `Can't find source path
//! /proc/self/fd/3: Permission denied`; the engine finds out when it
//! starts, with one sandboxed try shown a directory made inside the data
//! directory exactly as a try's work directory is, and refuses to start
//! naming the directory in the way.
//!
//! Not running as root, steps run as the engine's own uid in a user
//! namespace mapped to it, which can search whatever the engine made; the
//! probe runs all the same (it checks the binding itself).

use super::{Confinement, Files, NetJoin, Sandbox, StepIo};
use std::fs::{self, File};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A directory that users other than its owner cannot search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedDir {
    pub path: PathBuf,
    /// Its permission bits.
    pub mode: u32,
}

impl std::fmt::Display for ClosedDir {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (mode {:04o}) cannot be searched by other users",
            self.path.display(),
            self.mode
        )
    }
}

/// The first directory on the way to `path` (itself included, where it
/// exists) that users other than its owner and group cannot search: what
/// stops a tenant's uid from reaching `path`. Mode bits only (an ACL
/// granting access is not seen; the engine's probe is the real test).
pub fn closed_ancestor(path: &Path) -> Option<ClosedDir> {
    let path = std::path::absolute(path).ok()?;
    let mut at = PathBuf::new();
    for component in path.components() {
        at.push(component);
        let Ok(meta) = fs::metadata(&at) else {
            // Not made yet: the engine makes it 0755.
            return None;
        };
        let mode = meta.permissions().mode() & 0o7777;
        if meta.is_dir() && mode & 0o001 == 0 {
            return Some(ClosedDir { path: at, mode });
        }
    }
    None
}

/// What to do about `closed` standing in the way of `what`.
pub fn unreachable_message(what: &str, closed: &ClosedDir) -> String {
    format!(
        "steps cannot reach {what}: {closed}, and each step's sandbox is opened by path as its tenant's own uid. Make it searchable (chmod o+x {}) or use a directory every user can reach (local.data_dir, `couler up --data-dir`; e.g. under /var/lib)",
        closed.path.display()
    )
}

impl Sandbox {
    /// Runs `true` in a sandbox shown a fresh directory of the data
    /// directory (at the depth of a try's work directory) and the mounts,
    /// as a tenant's uid when running as root, the way a try runs. `Err`
    /// names what is in the way.
    pub(super) fn probe_reach(&self) -> Result<(), String> {
        let probe = self
            .data_dir
            .join("runs")
            .join(format!(".sandbox-probe-{}", std::process::id()));
        let work = probe.join("step").join("1").join("work");
        let result = self.run_probe(&probe, &work);
        let _ = fs::remove_dir_all(&probe);
        result
    }

    fn run_probe(&self, probe: &Path, work: &Path) -> Result<(), String> {
        fs::create_dir_all(work).map_err(|e| format!("cannot make {}: {e}", work.display()))?;
        let owner = self.uids.as_ref().map(|u| (u.base, u.base));
        super::hand_over(owner, &[work])
            .map_err(|e| format!("cannot hand {} to a tenant's uid: {e}", work.display()))?;
        let files = Files {
            work: work.to_owned(),
            ..Files::default()
        };
        let confinement = Confinement {
            owner,
            cgroup: None,
            network: NetJoin::New,
        };
        let program = ["true".to_owned()];
        let log = |name: &str| {
            File::options()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .open(probe.join(name))
                .map_err(|e| format!("cannot make {}: {e}", probe.join(name).display()))
        };
        let (stdout, stderr) = (log("stdout")?, log("stderr")?);
        let env = [("PATH".to_owned(), "/usr/bin:/bin".to_owned())];
        let io = StepIo {
            env: &env,
            stdout: &stdout,
            stderr: &stderr,
        };
        let start = self.start(&probe.join("exit"), &files, work, &program, confinement, io)?;
        let spawned = super::spawn(&start)
            .map_err(|e| format!("cannot run {}: {e}", self.bwrap.display()))?;
        let mut status = 0;
        // SAFETY: reaps the child just started.
        unsafe { libc::waitpid(spawned.pid, &mut status, 0) };
        if spawned.failure.is_none() && libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
            return Ok(());
        }
        let said = spawned.failure.unwrap_or_else(|| {
            fs::read_to_string(probe.join("stderr"))
                .unwrap_or_default()
                .trim()
                .to_owned()
        });
        let shown = std::iter::once((work, "the data directory")).chain(
            self.mounts
                .iter()
                .map(|m| (m.path.as_path(), "a local.mounts path")),
        );
        for (path, what) in shown {
            if let Some(closed) = closed_ancestor(path).filter(|_| owner.is_some()) {
                let what = format!("{what} ({})", path.display());
                return Err(format!(
                    "{} (bubblewrap: {said})",
                    unreachable_message(&what, &closed)
                ));
            }
        }
        Err(format!(
            "a sandboxed step cannot be shown a directory of the data directory ({}) or local.mounts: {said}",
            self.data_dir.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_closed_directory_on_the_way_is_named() {
        let dir = std::env::temp_dir().join(format!("couler-reach-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(dir.join("closed/open/data")).unwrap();
        fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
        fs::set_permissions(dir.join("closed"), fs::Permissions::from_mode(0o700)).unwrap();
        assert_eq!(
            closed_ancestor(&dir.join("closed/open/data/not-yet")),
            Some(ClosedDir {
                path: dir.join("closed"),
                mode: 0o700
            })
        );
        fs::set_permissions(dir.join("closed"), fs::Permissions::from_mode(0o711)).unwrap();
        assert_eq!(closed_ancestor(&dir.join("closed/open/data/not-yet")), None);
        let message = unreachable_message(
            "the data directory",
            &ClosedDir {
                path: dir.join("closed"),
                mode: 0o700,
            },
        );
        assert!(message.contains(&format!("chmod o+x {}", dir.join("closed").display())));
        fs::remove_dir_all(&dir).unwrap();
    }
}
