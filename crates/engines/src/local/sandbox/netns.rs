//! Network namespaces for tries with `network = "none"`, made ahead of time.
//!
//! Making a network namespace is the largest single cost of starting a
//! sandbox (0.6 ms of bubblewrap's 3.5 on the 2-core build machine: the
//! kernel registers a loopback device and its sysctl tables). Running as
//! root, the engine keeps a few fresh ones made by a thread of its own, each
//! with only its loopback, up (127.0.0.1 and ::1); a try takes one and joins
//! it before bubblewrap starts, instead of bubblewrap making one. A
//! namespace is taken once and never handed out again, so no two tries ever
//! share one: each has a loopback of its own, as with `--unshare-net`. Made
//! by the engine, it belongs to the machine's user namespace, so a step
//! (in a user namespace of its own, without capabilities) can change
//! nothing in it. When none is ready, bubblewrap makes one as before.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd};
use std::sync::{Arc, Condvar, Mutex};

/// Fresh namespaces kept ready: tries start one at a time on a chain, and
/// a burst past this waits for no one (bubblewrap makes its own).
const READY: usize = 4;

/// The namespaces ready, and the thread that makes them.
#[derive(Debug)]
pub(super) struct FreshNetworks {
    shared: Arc<Shared>,
}

#[derive(Debug, Default)]
struct Shared {
    state: Mutex<State>,
    wake: Condvar,
}

#[derive(Debug, Default)]
struct State {
    ready: VecDeque<OwnedFd>,
    closed: bool,
}

impl FreshNetworks {
    /// Makes one namespace to prove it works here, then starts the thread
    /// that keeps [`READY`] of them; `Err` says why not (tries then get
    /// bubblewrap's).
    pub(super) fn start() -> io::Result<FreshNetworks> {
        let home = open_own()?;
        let first = make(&home)?;
        let shared = Arc::new(Shared::default());
        shared
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .ready
            .push_back(first);
        let maker = shared.clone();
        std::thread::Builder::new()
            .name("couler-netns".into())
            .spawn(move || keep_ready(&maker, &home))?;
        Ok(FreshNetworks { shared })
    }

    /// A namespace no one else has had, if one is ready; never waits.
    pub(super) fn take(&self) -> Option<OwnedFd> {
        let mut state = self.shared.state.lock().unwrap_or_else(|e| e.into_inner());
        let fresh = state.ready.pop_front();
        self.shared.wake.notify_one();
        fresh
    }
}

impl Drop for FreshNetworks {
    fn drop(&mut self) {
        self.shared
            .state
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .closed = true;
        self.shared.wake.notify_one();
    }
}

/// The thread: tops the queue up whenever one is taken, until closed.
fn keep_ready(shared: &Shared, home: &OwnedFd) {
    loop {
        {
            let mut state = shared.state.lock().unwrap_or_else(|e| e.into_inner());
            while !state.closed && state.ready.len() >= READY {
                state = shared.wake.wait(state).unwrap_or_else(|e| e.into_inner());
            }
            if state.closed {
                return;
            }
        }
        match make(home) {
            Ok(fresh) => shared
                .state
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .ready
                .push_back(fresh),
            Err(e) => {
                tracing::warn!(error = %e, "cannot make a network namespace ahead; bubblewrap makes them");
                return;
            }
        }
    }
}

fn open_own() -> io::Result<OwnedFd> {
    Ok(std::fs::File::open("/proc/thread-self/ns/net")?.into())
}

/// A new network namespace with its loopback up, made on this thread,
/// which then goes back to `home`.
fn make(home: &OwnedFd) -> io::Result<OwnedFd> {
    // SAFETY: NEWNET moves only this thread, which holds no descriptor
    // another thread could be confused by.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNET) }?;
    let made = open_own().and_then(|fresh| loopback_up().map(|()| fresh));
    rustix::thread::move_into_link_name_space(
        home.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )?;
    made
}

/// Brings `lo` of this thread's network namespace up; the kernel gives it
/// 127.0.0.1/8 and ::1.
fn loopback_up() -> io::Result<()> {
    // SAFETY: a new socket, owned from here on.
    let socket = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if socket < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: just made, owned by nothing else.
    let socket = unsafe { OwnedFd::from_raw_fd(socket) };
    // SAFETY: ifreq is plain data; the name fits with its NUL.
    let mut request: libc::ifreq = unsafe { std::mem::zeroed() };
    for (to, from) in request.ifr_name.iter_mut().zip(b"lo\0") {
        *to = *from as libc::c_char;
    }
    // SAFETY: SIOCGIFFLAGS and SIOCSIFFLAGS read and write an ifreq.
    unsafe {
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCGIFFLAGS, &mut request) != 0 {
            return Err(io::Error::last_os_error());
        }
        request.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
        if libc::ioctl(socket.as_raw_fd(), libc::SIOCSIFFLAGS, &request) != 0 {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn every_try_gets_a_namespace_of_its_own_with_a_loopback() {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let fresh = FreshNetworks::start().unwrap();
        let ours = std::fs::metadata("/proc/thread-self/ns/net").unwrap().ino();
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..3 * READY {
            let netns = loop {
                match fresh.take() {
                    Some(fd) => break fd,
                    None => std::thread::sleep(std::time::Duration::from_millis(1)),
                }
            };
            let inode = rustix::fs::fstat(&netns).unwrap().st_ino;
            assert_ne!(inode, ours, "the engine's own namespace was handed out");
            assert!(seen.insert(inode), "a namespace was handed out twice");
        }
        // The thread making them went back to the engine's namespace.
        assert_eq!(
            std::fs::metadata("/proc/thread-self/ns/net").unwrap().ino(),
            ours
        );
        // Its loopback is up and answers, nothing else is there.
        let netns = fresh.take().or_else(|| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            fresh.take()
        });
        let netns = netns.expect("refilled");
        let probe = std::thread::spawn(move || {
            rustix::thread::move_into_link_name_space(
                netns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .unwrap();
            let links = interfaces();
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            let connected = std::net::TcpStream::connect(listener.local_addr().unwrap()).is_ok();
            (links, connected)
        });
        let (links, connected) = probe.join().unwrap();
        assert_eq!(links, ["lo"]);
        assert!(connected);
    }

    /// The network interfaces of this thread's namespace.
    fn interfaces() -> Vec<String> {
        // SAFETY: if_nameindex returns an array ended by a zero index,
        // freed once read.
        unsafe {
            let list = libc::if_nameindex();
            let mut names = Vec::new();
            let mut at = list;
            while !at.is_null() && (*at).if_index != 0 {
                names.push(
                    std::ffi::CStr::from_ptr((*at).if_name)
                        .to_string_lossy()
                        .into_owned(),
                );
                at = at.add(1);
            }
            libc::if_freenameindex(list);
            names
        }
    }
}
