//! A small mount namespace that bubblewrap starts from.
//!
//! bubblewrap copies the mount table of the namespace it starts in, then
//! reads all of it back (`/proc/self/mountinfo`) for every bind it makes:
//! a host with many mounts (cgroup hierarchies, `/sys`, container layers,
//! a Kubernetes node's volumes) makes every try start more slowly, about
//! 18 µs a mount per start on the build machine. Running as root, the
//! engine makes one namespace at start, a copy of the machine's with every
//! mount a sandbox does not show detached (in that copy only), and each try
//! enters it before bubblewrap runs (`spawn`). Nothing a step sees changes:
//! what bubblewrap binds is kept at the same path.
//!
//! Kept: `/`, the mounts that hold `/proc` and `/dev` (bubblewrap reads
//! the one and binds six devices of the other, not what is mounted below
//! them), and the mounts that hold or lie below the paths given (the system
//! directories, the data directory, the platform's mounts, bubblewrap
//! itself). The copy follows the machine's mounts below those (slave
//! propagation) where the machine shares them.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// Mounts kept with what is below them, and mounts kept alone.
pub(super) struct Keep {
    pub trees: Vec<PathBuf>,
    pub alone: Vec<PathBuf>,
}

impl Keep {
    /// Whether the mount at `point` stays.
    fn keeps(&self, point: &Path) -> bool {
        point == Path::new("/")
            || self.alone.iter().any(|k| k.starts_with(point))
            || self
                .trees
                .iter()
                .any(|k| k.starts_with(point) || point.starts_with(k))
    }
}

/// Makes the namespace (on a thread of its own, which leaves it) and
/// returns it with how many mounts it has; `Err` when this process may
/// not (not root).
pub(super) fn small(keep: Keep) -> io::Result<(OwnedFd, usize)> {
    std::thread::Builder::new()
        .name("couler-mountns".into())
        .spawn(move || make(&keep))?
        .join()
        .map_err(|_| io::Error::other("the thread making the mount namespace panicked"))?
}

fn make(keep: &Keep) -> io::Result<(OwnedFd, usize)> {
    use rustix::mount::{MountPropagationFlags, UnmountFlags, mount_change, unmount};
    // SAFETY: NEWNS (with FS, which it implies) moves only this thread,
    // which ends once the namespace is made.
    unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::NEWNS) }?;
    // Nothing done here reaches the machine's namespace; what the machine
    // mounts later below a kept mount still shows here.
    mount_change(
        "/",
        MountPropagationFlags::DOWNSTREAM | MountPropagationFlags::REC,
    )?;
    let points = mount_points(&std::fs::read_to_string("/proc/thread-self/mountinfo")?);
    // Below first; a mount already gone with the one above it is no error.
    for point in points.iter().rev().filter(|p| !keep.keeps(p)) {
        match unmount(point, UnmountFlags::DETACH) {
            Ok(()) | Err(rustix::io::Errno::INVAL | rustix::io::Errno::NOENT) => {}
            Err(e) => {
                return Err(io::Error::other(format!(
                    "cannot detach {} from the sandboxes' mount namespace: {e}",
                    point.display()
                )));
            }
        }
    }
    let left = mount_points(&std::fs::read_to_string("/proc/thread-self/mountinfo")?).len();
    Ok((
        std::fs::File::open("/proc/thread-self/ns/mnt")?.into(),
        left,
    ))
}

/// The mount points of a `mountinfo` table, in its order (a mount after
/// the one it is mounted on).
fn mount_points(mountinfo: &str) -> Vec<PathBuf> {
    mountinfo
        .lines()
        .filter_map(|line| line.split(' ').nth(4))
        .map(|point| PathBuf::from(unescape(point)))
        .collect()
}

/// `mountinfo` writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(d) => {
                out.push(d.iter().fold(0u8, |n, b| n.wrapping_mul(8) + (b - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::AsFd;

    #[test]
    fn mount_points_are_read_with_their_escapes() {
        let table = "22 1 0:21 / /proc rw,nosuid - proc proc rw\n\
                     30 22 0:5 / /mnt/my\\040data rw - ext4 /dev/vdb rw\n";
        assert_eq!(
            mount_points(table),
            [PathBuf::from("/proc"), PathBuf::from("/mnt/my data")]
        );
    }

    #[test]
    fn what_a_sandbox_shows_is_kept_and_nothing_else() {
        let keep = Keep {
            trees: vec!["/usr".into(), "/data/couler".into()],
            alone: vec!["/proc".into(), "/dev".into()],
        };
        for kept in ["/", "/proc", "/dev", "/usr", "/data", "/data/couler/runs/x"] {
            assert!(keep.keeps(Path::new(kept)), "{kept}");
        }
        for gone in [
            "/sys",
            "/sys/fs/cgroup",
            "/dev/pts",
            "/proc/sys/fs/binfmt_misc",
            "/mnt",
        ] {
            assert!(!keep.keeps(Path::new(gone)), "{gone}");
        }
    }

    #[test]
    fn the_namespace_has_fewer_mounts_and_the_machine_keeps_all_of_its() {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            return;
        }
        let before = std::fs::read_to_string("/proc/self/mountinfo").unwrap();
        let keep = Keep {
            trees: vec!["/usr".into(), std::env::temp_dir()],
            alone: vec!["/proc".into(), "/dev".into()],
        };
        let (ns, left) = small(keep).unwrap();
        assert!(left <= mount_points(&before).len());
        let seen = std::thread::spawn(move || {
            // SAFETY: this thread's own fs struct, then its namespace.
            unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FS) }.unwrap();
            rustix::thread::move_into_link_name_space(
                ns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Mount),
            )
            .unwrap();
            let points =
                mount_points(&std::fs::read_to_string("/proc/thread-self/mountinfo").unwrap());
            (points, Path::new("/usr/bin/env").exists())
        })
        .join()
        .unwrap();
        let (points, usr) = seen;
        assert_eq!(points.len(), left);
        assert!(usr, "/usr is not shown in the namespace");
        assert!(!points.iter().any(|p| p.starts_with("/sys")), "{points:?}");
        // The machine's own table is as it was.
        assert_eq!(
            std::fs::read_to_string("/proc/self/mountinfo").unwrap(),
            before
        );
    }
}
