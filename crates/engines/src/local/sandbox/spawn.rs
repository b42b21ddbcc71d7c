//! Starting bubblewrap without forking the engine, the way `posix_spawn`
//! starts a program: a child made with `clone(CLONE_VM | CLONE_VFORK)` on a
//! stack of its own shares the engine's memory (no page tables are copied,
//! whatever the engine's size) and, before it executes bubblewrap, joins the
//! try's cgroups, enters a network namespace, drops to the tenant's uid and
//! gid with no supplementary groups and puts the descriptors bubblewrap is
//! handed in their places. The engine's calling thread waits (vfork) until
//! the child has executed bubblewrap or given up; its other threads run on.
//!
//! The child shares the engine's memory with threads that keep running, so
//! it only makes system calls on what the parent prepared: no allocation,
//! no lock, nothing that can panic. It changes credentials with rustix's
//! per-thread calls: glibc's `setuid` family would signal every thread of
//! the engine to change its credentials too. A set-up failure is left in
//! memory the parent reads once it runs again, and the child exits 125.

use std::ffi::{CString, OsStr};
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd, RawFd};
use std::os::raw::{c_char, c_int, c_void};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicI32, AtomicU32, Ordering};

/// The child's stack: what it runs is a few frames of system calls.
const STACK_SIZE: usize = 64 * 1024;
/// Descriptors to hand over are first moved at or above this number, so
/// that placing one never closes another not yet placed.
const SOURCES_FROM: RawFd = 64;

/// Everything the child needs, prepared by the parent.
pub(in crate::local) struct Start {
    program: CString,
    /// `argv` and `envp` as the kernel takes them (null-terminated), and
    /// the strings they point into.
    argv: Vec<*const c_char>,
    env: Vec<*const c_char>,
    strings: Vec<CString>,
    /// `cgroup.procs` files to write `0` to, and their paths for messages.
    cgroup_procs: Vec<CString>,
    mountns: Option<OwnedFd>,
    netns: Option<OwnedFd>,
    owner: Option<(u32, u32)>,
    /// Each descriptor and the number it gets in bubblewrap.
    fds: Vec<(OwnedFd, RawFd)>,
}

/// What a spawn started.
#[derive(Debug)]
pub(in crate::local) struct Spawned {
    pub pid: i32,
    /// Why the child gave up before executing the program (it exits 125).
    pub failure: Option<String>,
}

impl Start {
    /// Runs `program` with `args` (the first is `argv[0]`) in exactly the
    /// environment `env`.
    pub(in crate::local) fn new(
        program: &Path,
        args: impl IntoIterator<Item = impl AsRef<OsStr>>,
        env: &[(String, String)],
    ) -> Result<Start, String> {
        let mut start = Start {
            program: c_string(program.as_os_str())?,
            argv: Vec::new(),
            env: Vec::new(),
            strings: Vec::new(),
            cgroup_procs: Vec::new(),
            mountns: None,
            netns: None,
            owner: None,
            fds: Vec::new(),
        };
        let mut argv = Vec::new();
        for arg in args {
            argv.push(c_string(arg.as_ref())?);
        }
        let mut envp = Vec::new();
        for (key, value) in env {
            envp.push(c_string(OsStr::new(&format!("{key}={value}")))?);
        }
        // A CString's buffer stays where it is when the CString moves.
        start.argv = argv.iter().map(|s| s.as_ptr()).collect();
        start.argv.push(std::ptr::null());
        start.env = envp.iter().map(|s| s.as_ptr()).collect();
        start.env.push(std::ptr::null());
        start.strings = argv.into_iter().chain(envp).collect();
        Ok(start)
    }

    /// Joins the cgroups whose `cgroup.procs` files these are.
    pub(in crate::local) fn join_cgroups(
        &mut self,
        procs: &[std::path::PathBuf],
    ) -> Result<(), String> {
        for file in procs {
            self.cgroup_procs.push(c_string(file.as_os_str())?);
        }
        Ok(())
    }

    /// Enters this mount namespace (after joining the cgroups, whose files
    /// it may not show).
    pub(in crate::local) fn enter_mounts(&mut self, mountns: OwnedFd) {
        self.mountns = Some(mountns);
    }

    /// Enters this network namespace.
    pub(in crate::local) fn enter_network(&mut self, netns: OwnedFd) {
        self.netns = Some(netns);
    }

    /// Runs as this uid and gid, with no supplementary groups.
    pub(in crate::local) fn run_as(&mut self, uid: u32, gid: u32) {
        self.owner = Some((uid, gid));
    }

    /// Hands `fd` to the program as descriptor `at`.
    pub(in crate::local) fn hand(&mut self, fd: impl AsFd, at: RawFd) -> io::Result<()> {
        debug_assert!(at < SOURCES_FROM, "descriptor {at} is among the sources");
        let moved = rustix::io::fcntl_dupfd_cloexec(fd, SOURCES_FROM)?;
        self.fds.push((moved, at));
        Ok(())
    }
}

fn c_string(s: &OsStr) -> Result<CString, String> {
    CString::new(s.as_bytes()).map_err(|_| format!("{} holds a NUL byte", s.to_string_lossy()))
}

/// Where the child gave up: the step and, for cgroups, which file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Cgroup(u32),
    Mounts,
    Network,
    Groups,
    Gid,
    Uid,
    Descriptor,
    Exec,
}

impl Stage {
    fn code(self) -> u32 {
        match self {
            Stage::Network => 1,
            Stage::Groups => 2,
            Stage::Gid => 3,
            Stage::Uid => 4,
            Stage::Descriptor => 5,
            Stage::Exec => 6,
            Stage::Mounts => 7,
            Stage::Cgroup(i) => 16 + i,
        }
    }

    fn from_code(code: u32) -> Option<Stage> {
        Some(match code {
            0 => return None,
            1 => Stage::Network,
            2 => Stage::Groups,
            3 => Stage::Gid,
            4 => Stage::Uid,
            5 => Stage::Descriptor,
            6 => Stage::Exec,
            7 => Stage::Mounts,
            n => Stage::Cgroup(n - 16),
        })
    }

    fn describe(self, start: &Start, errno: i32) -> String {
        let error = io::Error::from_raw_os_error(errno);
        let (uid, gid) = start.owner.unwrap_or_default();
        match self {
            Stage::Cgroup(i) => {
                let file = start.cgroup_procs.get(i as usize);
                let file = file.map(|f| f.to_string_lossy()).unwrap_or_default();
                format!("cannot join the step's cgroup {file}: {error}")
            }
            Stage::Mounts => format!("cannot enter the sandboxes' mount namespace: {error}"),
            Stage::Network => format!("cannot enter the step's network namespace: {error}"),
            Stage::Groups => format!("cannot drop supplementary groups: {error}"),
            Stage::Gid => format!("cannot switch to gid {gid}: {error}"),
            Stage::Uid => format!("cannot switch to uid {uid}: {error}"),
            Stage::Descriptor => format!("cannot hand bubblewrap its descriptors: {error}"),
            Stage::Exec => format!("cannot run {}: {error}", start.program.to_string_lossy()),
        }
    }
}

/// What the parent and the child share while the parent waits.
struct Shared<'a> {
    start: &'a Start,
    stage: AtomicU32,
    errno: AtomicI32,
}

/// Starts `start` in a process group of its own; `Err` when no process
/// could be made at all.
pub(in crate::local) fn spawn(start: &Start) -> io::Result<Spawned> {
    let stack = Stack::new()?;
    let shared = Shared {
        start,
        stage: AtomicU32::new(0),
        errno: AtomicI32::new(0),
    };
    // With every signal blocked the engine's handlers cannot run in the
    // child (on the engine's memory) before it resets them.
    // SAFETY: sigset_t is plain data, filled by sigfillset.
    let mut all: libc::sigset_t = unsafe { std::mem::zeroed() };
    let mut old: libc::sigset_t = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointers to sigset_t values.
    unsafe {
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_SETMASK, &all, &mut old);
    }
    // A child that changes its credentials marks the memory it shares,
    // the engine's, as not dumpable; the engine's own flag is put back.
    // SAFETY: plain syscall.
    let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE) };
    // SAFETY: the child runs `child` on its own stack with a pointer to
    // `shared`, which outlives it: CLONE_VFORK returns only once the child
    // has executed the program or exited.
    let pid = unsafe {
        libc::clone(
            child,
            stack.top(),
            libc::CLONE_VM | libc::CLONE_VFORK | libc::SIGCHLD,
            &shared as *const Shared<'_> as *mut c_void,
        )
    };
    let error = io::Error::last_os_error();
    // SAFETY: restores the mask and the flag saved above.
    unsafe {
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        if start.owner.is_some() && dumpable > 0 {
            libc::prctl(libc::PR_SET_DUMPABLE, dumpable);
        }
    }
    if pid < 0 {
        return Err(error);
    }
    let failure = Stage::from_code(shared.stage.load(Ordering::Acquire))
        .map(|stage| stage.describe(start, shared.errno.load(Ordering::Acquire)));
    Ok(Spawned { pid, failure })
}

/// The child: set up, then execute the program, or record where it failed
/// and exit 125.
extern "C" fn child(arg: *mut c_void) -> c_int {
    // SAFETY: `spawn` passes a `Shared` that outlives the child's set-up.
    let shared = unsafe { &*(arg as *const Shared<'_>) };
    // SAFETY: only system calls on memory `spawn` prepared.
    if let Err((stage, errno)) = unsafe { set_up_and_exec(shared.start) } {
        shared.errno.store(errno, Ordering::Release);
        shared.stage.store(stage.code(), Ordering::Release);
    }
    // SAFETY: leaves without running anything of the engine's.
    unsafe { libc::_exit(125) }
}

/// The child's work; returns only on failure.
///
/// # Safety
/// Only in the child of [`spawn`]: it changes the calling process's
/// credentials, namespaces and descriptors.
unsafe fn set_up_and_exec(start: &Start) -> Result<(), (Stage, i32)> {
    // SAFETY (whole body): system calls on the child's own process with
    // pointers into `start`, which the suspended parent keeps alive.
    unsafe {
        // Handlers the engine installed must not run in the program before
        // it has its own (they would run on the engine's memory); SIGPIPE,
        // ignored by Rust programs, goes back to its default as std's
        // `Command` does.
        let mut action: libc::sigaction = std::mem::zeroed();
        for signal in 1..=64 {
            if libc::sigaction(signal, std::ptr::null(), &mut action) != 0 {
                continue;
            }
            let handler = action.sa_sigaction;
            if handler != libc::SIG_DFL && (handler != libc::SIG_IGN || signal == libc::SIGPIPE) {
                action.sa_sigaction = libc::SIG_DFL;
                libc::sigaction(signal, &action, std::ptr::null_mut());
            }
        }
        // First the cgroups: whatever the try starts is counted there.
        for (i, file) in start.cgroup_procs.iter().enumerate() {
            let fd = libc::open(file.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
            if fd < 0 || libc::write(fd, b"0".as_ptr().cast(), 1) != 1 {
                return Err((Stage::Cgroup(i as u32), errno()));
            }
            libc::close(fd);
        }
        if let Some(mountns) = &start.mountns {
            rustix::thread::move_into_link_name_space(
                mountns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Mount),
            )
            .map_err(|e| (Stage::Mounts, e.raw_os_error()))?;
        }
        if let Some(netns) = &start.netns {
            rustix::thread::move_into_link_name_space(
                netns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .map_err(|e| (Stage::Network, e.raw_os_error()))?;
        }
        if let Some((uid, gid)) = start.owner {
            use rustix::thread::{self, Gid, Uid};
            thread::set_thread_groups(&[]).map_err(|e| (Stage::Groups, e.raw_os_error()))?;
            let gid = Gid::from_raw(gid);
            thread::set_thread_res_gid(gid, gid, gid)
                .map_err(|e| (Stage::Gid, e.raw_os_error()))?;
            let uid = Uid::from_raw(uid);
            thread::set_thread_res_uid(uid, uid, uid)
                .map_err(|e| (Stage::Uid, e.raw_os_error()))?;
        }
        // Every source is above every target (see `Start::hand`), and dup2
        // leaves the copy open across exec.
        for (fd, at) in &start.fds {
            if libc::dup2(fd.as_raw_fd(), *at) < 0 {
                return Err((Stage::Descriptor, errno()));
            }
        }
        libc::setpgid(0, 0);
        libc::chdir(c"/".as_ptr());
        let mut none: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut none);
        libc::sigprocmask(libc::SIG_SETMASK, &none, std::ptr::null_mut());
        libc::execve(
            start.program.as_ptr(),
            start.argv.as_ptr(),
            start.env.as_ptr(),
        );
        Err((Stage::Exec, errno()))
    }
}

fn errno() -> i32 {
    io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// The child's stack, with a guard page below it.
struct Stack {
    base: *mut c_void,
    len: usize,
}

impl Stack {
    fn new() -> io::Result<Stack> {
        // SAFETY: plain syscall.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as usize;
        let len = STACK_SIZE + page;
        // SAFETY: a fresh anonymous mapping, ours until dropped.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_STACK,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let stack = Stack { base, len };
        // SAFETY: the lowest page of our own mapping.
        if unsafe { libc::mprotect(base, page, libc::PROT_NONE) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(stack)
    }

    /// Stacks grow down on every architecture Linux runs the engine on.
    fn top(&self) -> *mut c_void {
        // SAFETY: one past the end of our own mapping.
        unsafe { self.base.cast::<u8>().add(self.len).cast() }
    }
}

impl Drop for Stack {
    fn drop(&mut self) {
        // SAFETY: our own mapping; the child has executed or exited.
        unsafe { libc::munmap(self.base, self.len) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::io::Read;

    fn wait(pid: i32) -> i32 {
        let mut status = 0;
        // SAFETY: reaps our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        status
    }

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("couler-spawn-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn the_program_gets_its_arguments_environment_and_descriptors() {
        let dir = scratch("fds");
        let out = fs::File::create(dir.join("out")).unwrap();
        let given = fs::File::open("/etc/hostname")
            .or_else(|_| fs::File::open("/etc/passwd"))
            .unwrap();
        let mut start = Start::new(
            Path::new("/bin/sh"),
            [
                "couler-test",
                "-c",
                "echo \"$0 $1 $GREETING\"; head -c 11 /proc/$$/cmdline; echo; readlink /proc/self/fd/5; ls /proc/self/fd",
                "zero",
                "one",
            ],
            &[("GREETING".into(), "hello".into())],
        )
        .unwrap();
        start.hand(&out, 1).unwrap();
        start.hand(&given, 5).unwrap();
        let spawned = spawn(&start).unwrap();
        assert_eq!(spawned.failure, None);
        assert_eq!(wait(spawned.pid), 0);
        let mut text = String::new();
        fs::File::open(dir.join("out"))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("zero one hello"));
        assert_eq!(lines.next(), Some("couler-test"), "argv[0]: {text}");
        assert!(lines.next().unwrap().starts_with("/etc/"), "{text}");
        // The copies made to hand them over stayed in the engine.
        let open: Vec<i32> = lines.filter_map(|fd| fd.parse().ok()).collect();
        let copies: Vec<i32> = start.fds.iter().map(|(fd, _)| fd.as_raw_fd()).collect();
        assert!(
            copies
                .iter()
                .all(|fd| *fd >= SOURCES_FROM && !open.contains(fd)),
            "{text}"
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_program_runs_as_the_owner_in_a_group_of_its_own() {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let dir = scratch("owner");
        let out = fs::File::create(dir.join("out")).unwrap();
        let mut start = Start::new(
            Path::new("/bin/sh"),
            [
                "sh",
                "-c",
                "id -u; id -g; id -G; cut -d' ' -f5 /proc/self/stat; echo $$",
            ],
            &[("PATH".into(), "/usr/bin:/bin".into())],
        )
        .unwrap();
        start.hand(&out, 1).unwrap();
        start.run_as(65534, 65533);
        // SAFETY: plain syscall.
        let dumpable = unsafe { libc::prctl(libc::PR_GET_DUMPABLE) };
        let spawned = spawn(&start).unwrap();
        assert_eq!(spawned.failure, None);
        assert_eq!(wait(spawned.pid), 0);
        let text = fs::read_to_string(dir.join("out")).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[..3], ["65534", "65533", "65533"], "{text}");
        // The shell leads its own process group.
        assert_eq!(lines[3], spawned.pid.to_string(), "{text}");
        // The engine is still root, and as dumpable as it was.
        // SAFETY: plain syscalls.
        assert_eq!(unsafe { libc::geteuid() }, 0);
        assert_eq!(unsafe { libc::prctl(libc::PR_GET_DUMPABLE) }, dumpable);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_set_up_failure_is_reported_and_exits_125() {
        let dir = scratch("fail");
        let mut start = Start::new(Path::new("/bin/true"), ["true"], &[]).unwrap();
        start
            .join_cgroups(&[dir.join("no-such-cgroup/cgroup.procs")])
            .unwrap();
        let spawned = spawn(&start).unwrap();
        let failure = spawned.failure.expect("the join fails");
        assert!(
            failure.starts_with("cannot join the step's cgroup"),
            "{failure}"
        );
        assert!(failure.contains("No such file"), "{failure}");
        let status = wait(spawned.pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 125);

        let start = Start::new(&dir.join("missing"), ["missing"], &[]).unwrap();
        let spawned = spawn(&start).unwrap();
        assert!(spawned.failure.unwrap().starts_with("cannot run"));
        wait(spawned.pid);
        fs::remove_dir_all(&dir).unwrap();
    }
}
