//! Files in a try's directory as the engine (root) reads and writes them:
//! every path is opened one component at a time from a directory
//! descriptor with `O_NOFOLLOW`, so a link a step leaves on the way to its
//! outputs (`/mnt/out -> /etc/shadow`, `work/outputs/parameters -> /etc`)
//! is refused, never followed as root, and a step swapping a directory for
//! a link after it was opened changes nothing. Only regular files and
//! directories are opened for reading; a FIFO or a socket is refused
//! without blocking (opened `O_NONBLOCK`).

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Why a path below a directory was not opened or made.
#[derive(Debug, thiserror::Error)]
pub(super) enum Refused {
    #[error("{} is a link; the engine does not follow links among a step's files", .0.display())]
    Link(PathBuf),
    #[error("{} is not a regular file", .0.display())]
    NotAFile(PathBuf),
    #[error("{} is neither a regular file nor a directory", .0.display())]
    Special(PathBuf),
    #[error("{} is not a plain relative path", .0.display())]
    NotBeneath(PathBuf),
    #[error("{}: {source}", path.display())]
    Io { path: PathBuf, source: io::Error },
}

impl Refused {
    pub(super) fn not_found(&self) -> bool {
        matches!(self, Refused::Io { source, .. } if source.kind() == io::ErrorKind::NotFound)
    }

    fn io(path: &Path, source: impl Into<io::Error>) -> Refused {
        Refused::Io {
            path: path.to_owned(),
            source: source.into(),
        }
    }
}

/// A directory opened without following links; `shown` names it in
/// messages (the path the step knows it by).
#[derive(Debug)]
pub(super) struct Beneath {
    fd: OwnedFd,
    shown: PathBuf,
}

/// What [`Beneath::open`] found.
pub(super) enum Opened {
    File(File),
    Dir(Beneath),
}

impl Beneath {
    /// Opens the directory `path`, not following a link at its last
    /// component (the ones above are the engine's).
    pub(super) fn root(path: &Path) -> Result<Beneath, Refused> {
        let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::open(path, flags, Mode::empty()) {
            Ok(fd) => Ok(Beneath {
                fd,
                shown: path.to_owned(),
            }),
            Err(e) => Err(refusal(rustix::fs::CWD, path.as_os_str(), path, e)),
        }
    }

    /// The same directory, named `shown` in messages.
    pub(super) fn shown_as(self, shown: impl Into<PathBuf>) -> Beneath {
        Beneath {
            shown: shown.into(),
            ..self
        }
    }

    /// What messages call this directory.
    pub(super) fn shown(&self) -> &Path {
        &self.shown
    }

    /// What messages call `rel` below this directory.
    pub(super) fn shown_path(&self, rel: &Path) -> PathBuf {
        self.shown.join(rel)
    }

    /// The directory `rel` below this one.
    pub(super) fn dir(&self, rel: &Path) -> Result<Beneath, Refused> {
        let (fd, shown) = self.walk(rel, OFlags::DIRECTORY)?;
        Ok(Beneath { fd, shown })
    }

    /// The regular file or directory `rel` below this one.
    pub(super) fn open(&self, rel: &Path) -> Result<Opened, Refused> {
        let (fd, shown) = self.walk(rel, OFlags::empty())?;
        let stat = rustix::fs::fstat(&fd).map_err(|e| Refused::io(&shown, e))?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => Ok(Opened::File(File::from(fd))),
            FileType::Directory => Ok(Opened::Dir(Beneath { fd, shown })),
            _ => Err(Refused::Special(shown)),
        }
    }

    /// The regular file `rel` below this one, for reading.
    pub(super) fn file(&self, rel: &Path) -> Result<File, Refused> {
        match self.open(rel)? {
            Opened::File(file) => Ok(file),
            Opened::Dir(dir) => Err(Refused::NotAFile(dir.shown)),
        }
    }

    /// Names in this directory with their types (links not followed),
    /// sorted by name.
    pub(super) fn entries(&self) -> Result<Vec<(OsString, FileType)>, Refused> {
        let failed = |e| Refused::io(&self.shown, e);
        let mut entries = Vec::new();
        for entry in rustix::fs::Dir::read_from(&self.fd).map_err(failed)? {
            let entry = entry.map_err(failed)?;
            let name = OsStr::from_bytes(entry.file_name().to_bytes());
            if name == "." || name == ".." {
                continue;
            }
            let kind = match entry.file_type() {
                FileType::Unknown => {
                    let stat = rustix::fs::statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW)
                        .map_err(|e| Refused::io(&self.shown.join(name), e))?;
                    FileType::from_raw_mode(stat.st_mode)
                }
                kind => kind,
            };
            entries.push((name.to_owned(), kind));
        }
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(entries)
    }

    /// The target of the link `name` in this directory.
    pub(super) fn read_link(&self, name: &OsStr) -> Result<PathBuf, Refused> {
        let target = rustix::fs::readlinkat(&self.fd, name, Vec::new())
            .map_err(|e| Refused::io(&self.shown.join(name), e))?;
        Ok(PathBuf::from(OsStr::from_bytes(target.as_bytes())))
    }

    /// The directory `rel` below this one, made (with its parents) where
    /// missing; a link on the way is refused.
    pub(super) fn make_dirs(&self, rel: &Path) -> Result<Beneath, Refused> {
        let mut dir: Option<Beneath> = None;
        for name in components(rel)? {
            let at = dir.as_ref().unwrap_or(self);
            let shown = at.shown.join(name);
            match rustix::fs::mkdirat(&at.fd, name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(Errno::EXIST) => {}
                Err(e) => return Err(Refused::io(&shown, e)),
            }
            let fd = open_one(at.fd.as_fd(), name, OFlags::DIRECTORY, &shown)?;
            dir = Some(Beneath { fd, shown });
        }
        Ok(dir.expect("components are not empty"))
    }

    /// A new file `name` in this directory, for writing (mode 0644, or
    /// 0755 when `executable`); never through a link, never an existing
    /// file.
    pub(super) fn create(&self, name: &OsStr, executable: bool) -> Result<File, Refused> {
        let shown = self.shown.join(name);
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        let mode = Mode::from_raw_mode(if executable { 0o755 } else { 0o644 });
        let fd = rustix::fs::openat(&self.fd, name, flags, mode)
            .map_err(|e| refusal(self.fd.as_fd(), name, &shown, e))?;
        if executable {
            // Whatever the umask took away.
            rustix::fs::fchmod(&fd, mode).map_err(|e| Refused::io(&shown, e))?;
        }
        Ok(File::from(fd))
    }

    /// A new link `name` in this directory pointing at `target`.
    pub(super) fn symlink(&self, target: &Path, name: &OsStr) -> Result<(), Refused> {
        rustix::fs::symlinkat(target, &self.fd, name)
            .map_err(|e| Refused::io(&self.shown.join(name), e))
    }

    /// Opens `rel` component by component; the last with `last` flags.
    fn walk(&self, rel: &Path, last: OFlags) -> Result<(OwnedFd, PathBuf), Refused> {
        let names = components(rel)?;
        let mut shown = self.shown.clone();
        let mut dir: Option<OwnedFd> = None;
        for (i, name) in names.iter().enumerate() {
            shown.push(name);
            let flags = if i + 1 == names.len() {
                last
            } else {
                OFlags::DIRECTORY
            };
            let at = dir.as_ref().map_or(self.fd.as_fd(), |d| d.as_fd());
            dir = Some(open_one(at, name, flags, &shown)?);
        }
        Ok((dir.expect("components are not empty"), shown))
    }
}

/// Opens one name in `at` for reading, not following a link.
fn open_one(
    at: BorrowedFd<'_>,
    name: &OsStr,
    flags: OFlags,
    shown: &Path,
) -> Result<OwnedFd, Refused> {
    let flags = flags | OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rustix::fs::openat(at, name, flags, Mode::empty()).map_err(|e| refusal(at, name, shown, e))
}

/// The error for a failed open of `name` in `at`: a link when it is one.
fn refusal(at: BorrowedFd<'_>, name: &OsStr, shown: &Path, e: Errno) -> Refused {
    if matches!(e, Errno::LOOP | Errno::NOTDIR | Errno::EXIST)
        && let Ok(stat) = rustix::fs::statat(at, name, AtFlags::SYMLINK_NOFOLLOW)
        && FileType::from_raw_mode(stat.st_mode) == FileType::Symlink
    {
        return Refused::Link(shown.to_owned());
    }
    Refused::io(shown, e)
}

/// The names of a relative path without `..` (`.` is skipped).
fn components(rel: &Path) -> Result<Vec<&OsStr>, Refused> {
    let mut names = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(name) => names.push(name),
            Component::CurDir => {}
            _ => return Err(Refused::NotBeneath(rel.to_owned())),
        }
    }
    if names.is_empty() {
        return Err(Refused::NotBeneath(rel.to_owned()));
    }
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    fn scratch(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("couler-beneath-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("root/sub")).unwrap();
        std::fs::write(dir.join("outside"), b"outside").unwrap();
        std::fs::write(dir.join("root/sub/f"), b"inside").unwrap();
        dir
    }

    #[test]
    fn links_anywhere_on_the_way_are_refused() {
        let dir = scratch("links");
        let root = dir.join("root");
        std::os::unix::fs::symlink(dir.join("outside"), root.join("file-link")).unwrap();
        std::os::unix::fs::symlink(&dir, root.join("dir-link")).unwrap();
        let base = Beneath::root(&root).unwrap().shown_as("/w");
        let mut text = String::new();
        base.file(Path::new("sub/f"))
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "inside");
        for (rel, shown) in [
            ("file-link", "/w/file-link"),
            ("dir-link/outside", "/w/dir-link"),
            ("dir-link", "/w/dir-link"),
        ] {
            match base.open(Path::new(rel)) {
                Err(Refused::Link(at)) => assert_eq!(at, Path::new(shown)),
                other => panic!("{rel}: {:?}", other.map(|_| ())),
            }
        }
        assert!(matches!(
            base.dir(Path::new("dir-link")),
            Err(Refused::Link(_))
        ));
        assert!(matches!(
            base.make_dirs(Path::new("dir-link/x")),
            Err(Refused::Link(_))
        ));
        assert!(matches!(
            base.open(Path::new("../outside")),
            Err(Refused::NotBeneath(_))
        ));
        assert!(base.open(Path::new("missing")).err().unwrap().not_found());
        // A link at the place of a new file is not written through.
        assert!(matches!(
            base.create(OsStr::new("file-link"), false),
            Err(Refused::Link(_))
        ));
        assert_eq!(std::fs::read(dir.join("outside")).unwrap(), b"outside");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn fifos_are_refused_without_blocking() {
        let dir = scratch("fifo");
        let fifo = dir.join("root/fifo");
        rustix::fs::mknodat(
            rustix::fs::CWD,
            &fifo,
            FileType::Fifo,
            Mode::from_raw_mode(0o644),
            0,
        )
        .unwrap();
        let base = Beneath::root(&dir.join("root")).unwrap();
        assert!(matches!(
            base.file(Path::new("fifo")),
            Err(Refused::Special(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn made_directories_and_files_hold_what_was_written() {
        let dir = scratch("make");
        let base = Beneath::root(&dir.join("root")).unwrap();
        let made = base.make_dirs(Path::new("a/b")).unwrap();
        made.create(OsStr::new("run.sh"), true)
            .unwrap()
            .write_all(b"#!/bin/sh\n")
            .unwrap();
        made.symlink(Path::new("run.sh"), OsStr::new("latest"))
            .unwrap();
        let names: Vec<_> = made.entries().unwrap();
        assert_eq!(
            names,
            [
                (OsString::from("latest"), FileType::Symlink),
                (OsString::from("run.sh"), FileType::RegularFile)
            ]
        );
        let meta = std::fs::metadata(dir.join("root/a/b/run.sh")).unwrap();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
            0o755
        );
        assert_eq!(
            made.read_link(OsStr::new("latest")).unwrap(),
            Path::new("run.sh")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
