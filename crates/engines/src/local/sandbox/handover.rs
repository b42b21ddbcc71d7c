//! Handing a sandbox started ahead (`pool`) to a try: what bubblewrap does
//! last for a cold start, done by the engine in the sandbox's mount
//! namespace, then the try's commands written to the waiting launcher.
//!
//! The binds are made from a thread of the engine's that enters the
//! sandbox's mount namespace (as root on the machine it may, and no
//! process of the tenant's runs there yet): each host directory is cloned
//! into a detached mount (`open_tree`) before the thread enters, and moved
//! to its path inside. It creates the mount points as the tenant's uid (the
//! root is the sandbox's own tmpfs, where the engine's uid is not mapped),
//! then makes the root read only, as `--remount-ro /` does.

use super::super::cgroup::{Limits, TryCgroup};
use super::super::declared::Files;
use super::pool::{COMMANDS_FD, Ready};
use std::fs::{self, File};
use std::io::{self, Write};
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::{Path, PathBuf};

/// What one try needs of a sandbox.
pub(in crate::local) struct Ask<'a> {
    /// The try's directory, where its logs and exit status are named.
    pub dir: &'a Path,
    pub files: &'a Files,
    pub cwd: &'a Path,
    pub program: &'a [String],
    pub env: &'a [(String, String)],
    pub limits: Option<Limits>,
}

/// A sandbox handed to a try, running its program.
pub(in crate::local) struct Handed {
    /// bubblewrap, the leader of the try's process group.
    pub pid: i32,
    pub stdout: File,
    pub stderr: File,
    /// The sandbox's cgroup, now the try's, with the try's limits.
    pub cgroup: Option<TryCgroup>,
    /// The link bubblewrap's `argv[0]` names (to the try's exit file):
    /// removed once the try has been reaped.
    pub alias: PathBuf,
}

/// The files the try's directory names.
pub(in crate::local) const EXIT: &str = "exit";

/// Hands `ready`, with the try's limits already set, to the try `ask`
/// describes, for the tenant `owner`; `Err` stops the sandbox (the try
/// does not start).
pub(super) fn hand(
    mut ready: Ready,
    ask: &Ask<'_>,
    owner: (u32, u32),
    tmpfs: Option<&Path>,
) -> Result<Handed, String> {
    let (stdout, stderr, status) = (
        ready.stdout.take().expect("a ready sandbox"),
        ready.stderr.take().expect("a ready sandbox"),
        ready.status.take().expect("a ready sandbox"),
    );
    for (file, name) in [
        (&stdout, super::super::process::STDOUT_FILE),
        (&stderr, super::super::process::STDERR_FILE),
        (&status, EXIT),
    ] {
        name_file(file, &ask.dir.join(name))
            .map_err(|e| format!("could not name the try's {name} file: {e}"))?;
    }
    let _ = fs::remove_file(&ready.alias);
    std::os::unix::fs::symlink(ask.dir.join(EXIT), &ready.alias)
        .map_err(|e| format!("could not link {}: {e}", ready.alias.display()))?;
    let started = Plan::new(ask, tmpfs).and_then(|plan| {
        plan.apply(&ready.mounts, owner)
            .map_err(|e| format!("could not fit the sandbox to the step: {e}"))?;
        let mut commands = File::from(ready.commands.take().expect("a ready sandbox"));
        commands
            .write_all(script(ask).as_bytes())
            .map_err(|e| format!("could not start the step in its sandbox: {e}"))
    });
    if let Err(e) = started {
        // The sandbox is stopped as `ready` drops; nothing names it.
        let _ = fs::remove_file(&ready.alias);
        return Err(e);
    }
    let pid = std::mem::take(&mut ready.pid);
    Ok(Handed {
        pid,
        stdout,
        stderr,
        cgroup: ready.cgroup.take(),
        alias: ready.alias.clone(),
    })
}

/// Gives the unnamed file `file` the name `path`.
fn name_file(file: &File, path: &Path) -> io::Result<()> {
    match fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    rustix::fs::linkat(
        rustix::fs::CWD,
        format!("/proc/self/fd/{}", file.as_raw_fd()),
        rustix::fs::CWD,
        path,
        rustix::fs::AtFlags::SYMLINK_FOLLOW,
    )?;
    Ok(())
}

/// What the engine mounts and links in the sandbox for one try.
struct Plan<'a> {
    /// Detached clones of host directories, and where each goes: declared
    /// directories first, then the work directory (as a cold start binds).
    binds: Vec<(OwnedFd, &'a Path)>,
    /// Declared files in `/`: (target, link).
    links: &'a [(PathBuf, PathBuf)],
    /// A working directory the sandbox has not: an empty tmpfs of its own.
    tmpfs: Option<&'a Path>,
}

impl<'a> Plan<'a> {
    fn new(ask: &'a Ask<'a>, tmpfs: Option<&'a Path>) -> Result<Plan<'a>, String> {
        let mut binds = Vec::new();
        let declared = ask.files.binds.iter().map(|(h, at)| (h, at.as_path()));
        for (host, at) in declared.chain([(&ask.files.work, ask.files.work.as_path())]) {
            use rustix::mount::{OpenTreeFlags, open_tree};
            let tree = open_tree(
                rustix::fs::CWD,
                host,
                OpenTreeFlags::OPEN_TREE_CLONE | OpenTreeFlags::OPEN_TREE_CLOEXEC,
            )
            .map_err(|e| format!("cannot clone {}: {e}", host.display()))?;
            binds.push((tree, at));
        }
        Ok(Plan {
            binds,
            links: &ask.files.links,
            tmpfs,
        })
    }

    /// Applies the plan in the mount namespace `mounts`, creating what it
    /// needs as `owner`.
    fn apply(&self, mounts: &File, owner: (u32, u32)) -> io::Result<()> {
        std::thread::scope(|scope| {
            scope
                .spawn(|| self.apply_here(mounts, owner))
                .join()
                .unwrap_or_else(|_| Err(io::Error::other("the mounting thread panicked")))
        })
    }

    /// The thread's work: it leaves the engine's file-system context, so
    /// it never returns to the engine's mount namespace.
    fn apply_here(&self, mounts: &File, (uid, gid): (u32, u32)) -> io::Result<()> {
        use rustix::mount::{MountFlags, MoveMountFlags, mount, mount_remount, move_mount};
        // SAFETY: this thread's own file-system context and credentials;
        // it ends when this function returns. setfsuid and setfsgid are
        // per thread (glibc does not broadcast them).
        unsafe {
            rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FS)?;
            libc::setfsgid(gid);
            libc::setfsuid(uid);
        }
        rustix::thread::move_into_link_name_space(
            mounts.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Mount),
        )?;
        for (tree, at) in &self.binds {
            fs::create_dir_all(at)?;
            move_mount(
                tree.as_fd(),
                "",
                rustix::fs::CWD,
                *at,
                MoveMountFlags::MOVE_MOUNT_F_EMPTY_PATH,
            )?;
            // As bubblewrap's own binds: no set-user-id, no devices.
            mount_remount(
                *at,
                MountFlags::BIND | MountFlags::NOSUID | MountFlags::NODEV,
                "",
            )?;
        }
        for (target, link) in self.links {
            std::os::unix::fs::symlink(target, link)?;
        }
        if let Some(at) = self.tmpfs {
            fs::create_dir_all(at)?;
            let options =
                std::ffi::CString::new(format!("mode=0755,uid={uid},gid={gid}")).expect("no NUL");
            mount(
                "tmpfs",
                at,
                "tmpfs",
                MountFlags::NOSUID | MountFlags::NODEV,
                options.as_c_str(),
            )?;
        }
        mount_remount(
            "/",
            MountFlags::BIND | MountFlags::RDONLY | MountFlags::NOSUID | MountFlags::NODEV,
            "",
        )?;
        Ok(())
    }
}

/// What the launcher runs for the try: into its working directory, exactly
/// its environment, then its program (which replaces the launcher).
fn script(ask: &Ask<'_>) -> String {
    let mut script = format!(
        "cd {} || exit 125\nunset PWD OLDPWD\n",
        quote(&ask.cwd.to_string_lossy())
    );
    for (key, value) in ask.env {
        script.push_str(&format!("export {key}={}\n", quote(value)));
    }
    script.push_str(&format!("exec {COMMANDS_FD}<&-"));
    for arg in ask.program {
        script.push(' ');
        script.push_str(&quote(arg));
    }
    script.push('\n');
    script
}

/// `s` as one word of the shell, whatever it holds.
fn quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Whether the shell can take `key` as a variable name.
pub(super) fn shell_name(key: &str) -> bool {
    let mut chars = key.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_script_quotes_every_word() {
        let files = Files::default();
        let env = [("A_1".to_string(), "it's $HOME `x`\nnext".to_string())];
        let program = [
            "sh".to_string(),
            "-c".into(),
            r#"printf '%s\n' "$A_1""#.into(),
        ];
        let ask = Ask {
            dir: Path::new("/d"),
            files: &files,
            cwd: Path::new("/w o'rk"),
            program: &program,
            env: &env,
            limits: None,
        };
        let out = std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(
                script(&ask)
                    .replace("cd '/w o'\\''rk' || exit 125", "cd / || exit 125")
                    .replace(&format!("exec {COMMANDS_FD}<&-"), "exec"),
            )
            .env_clear()
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "it's $HOME `x`\nnext\n"
        );
        assert!(script(&ask).starts_with("cd '/w o'\\''rk' || exit 125\n"));
        assert!(shell_name("_A1") && !shell_name("1A") && !shell_name("A-B") && !shell_name(""));
    }
}
