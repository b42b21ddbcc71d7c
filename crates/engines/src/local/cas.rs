//! The content-addressed artifact store under `<data_dir>/cas/`.
//!
//! A file is stored as itself at `cas/<first 2 hex>/<blake3 hex>`. A
//! directory is stored as a *tree manifest*: every file in it is stored on
//! its own, and a JSON document listing the entries (sorted by path, with
//! each file's digest, size and executable bit, plus empty directories and
//! symlinks) is stored like any file. The manifest starts with
//! `{"format":"couler-tree/v1"`, which is how materialising tells the two
//! apart; the directory's digest is the manifest's digest and its size is
//! the sum of its files' sizes. Identical content is stored once, across
//! steps, runs and tenants.
//!
//! Artifacts are stored from, and recreated in, a try's directory through
//! `beneath`: no link a step left is followed, links inside a directory
//! are stored as links, and since any file that starts like a manifest
//! reads as one, a manifest's entries are checked before anything is
//! unpacked (plain relative paths, digests of this store's objects).
//!
//! Everything here is blocking file I/O: call it from `spawn_blocking`.

use super::beneath::{Beneath, Opened, Refused};
use couler_optimizer::ArtifactRef;
use rustix::fs::FileType;
use serde::{Deserialize, Serialize};
use std::ffi::OsStr;
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const TREE_FORMAT: &str = "couler-tree/v1";
const TREE_PREFIX: &[u8] = br#"{"format":"couler-tree/v1""#;
/// How deep a stored directory may nest.
const MAX_DEPTH: usize = 256;

#[derive(Serialize, Deserialize)]
struct Tree {
    format: String,
    entries: Vec<Entry>,
}

#[derive(Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
enum Entry {
    Dir {
        path: String,
    },
    File {
        path: String,
        digest: String,
        size: u64,
        executable: bool,
    },
    Symlink {
        path: String,
        target: String,
    },
}

/// The store rooted at one directory.
#[derive(Debug, Clone)]
pub(super) struct Cas {
    root: PathBuf,
}

impl Cas {
    pub(super) fn new(root: PathBuf) -> Cas {
        Cas { root }
    }

    /// Stores the file or directory `rel` below `base` (a try's
    /// directory), following no link on the way: a link there is refused,
    /// and links inside a directory are stored as links (see `beneath`).
    pub(super) fn store(&self, base: &Beneath, rel: &Path) -> Result<ArtifactRef, Refused> {
        let (digest, size) = match base.open(rel)? {
            Opened::Dir(dir) => self.store_tree(&dir)?,
            Opened::File(file) => self
                .store_file(file)
                .map_err(|e| io_refusal(&base.shown_path(rel), e))?,
        };
        Ok(ArtifactRef {
            location: format!("file://{}", self.object(&digest).display()),
            digest,
            size,
        })
    }

    /// Recreates an artifact at `dest` (a file, or a directory for trees)
    /// in `base`, a directory of the engine's own, writing through no link.
    /// A tree names only objects of this store, by digest, and places them
    /// below `dest` only.
    pub(super) fn materialise(
        &self,
        artifact: &ArtifactRef,
        base: &Beneath,
        dest: &Path,
    ) -> Result<(), Refused> {
        let source = local_path(artifact).map_err(|e| io_refusal(&base.shown_path(dest), e))?;
        let failed = |e| io_refusal(&source, e);
        let (parent, name) = split(dest)?;
        let made;
        let parent = match parent {
            Some(parent) => {
                made = base.make_dirs(parent)?;
                &made
            }
            None => base,
        };
        let mut head = [0u8; TREE_PREFIX.len()];
        let mut file = File::open(&source).map_err(failed)?;
        let read = read_up_to(&mut file, &mut head).map_err(failed)?;
        if read == head.len() && head == TREE_PREFIX {
            let bytes = fs::read(&source).map_err(failed)?;
            let tree: Tree = serde_json::from_slice(&bytes).map_err(|e| failed(invalid(e)))?;
            let root = parent.make_dirs(Path::new(name))?;
            return self.unpack(&tree, &root);
        }
        let mut out = parent.create(name, false)?;
        copy(&source, &mut out).map_err(failed)
    }

    fn object(&self, hex: &str) -> PathBuf {
        self.root.join(&hex[..2]).join(hex)
    }

    /// Copies the file into the store while hashing it: one read.
    fn store_file(&self, mut src: File) -> io::Result<(String, u64)> {
        let (tmp, mut out) = self.temp_file()?;
        let mut hasher = blake3::Hasher::new();
        let mut buf = vec![0u8; 64 * 1024];
        let mut size = 0u64;
        let copied = (|| loop {
            let n = match src.read(&mut buf) {
                Ok(0) => return Ok(()),
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            hasher.update(&buf[..n]);
            out.write_all(&buf[..n])?;
            size += n as u64;
        })();
        drop(out);
        if let Err(e) = copied {
            let _ = fs::remove_file(&tmp);
            return Err(e);
        }
        let hex = hasher.finalize().to_hex().to_string();
        self.commit(&tmp, &hex)?;
        Ok((hex, size))
    }

    fn store_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hex = blake3::hash(bytes).to_hex().to_string();
        if !self.object(&hex).exists() {
            let (tmp, mut out) = self.temp_file()?;
            out.write_all(bytes)?;
            drop(out);
            self.commit(&tmp, &hex)?;
        }
        Ok(hex)
    }

    fn store_tree(&self, dir: &Beneath) -> Result<(String, u64), Refused> {
        let mut entries = Vec::new();
        let mut total = 0u64;
        self.store_entries(dir, Path::new(""), 0, &mut entries, &mut total)?;
        entries.sort_by(|a, b| entry_path(a).cmp(entry_path(b)));
        let manifest = serde_json::to_vec(&Tree {
            format: TREE_FORMAT.to_owned(),
            entries,
        })
        .map_err(|e| io_refusal(dir.shown(), invalid(e)))?;
        let digest = self
            .store_bytes(&manifest)
            .map_err(|e| io_refusal(&self.root, e))?;
        Ok((digest, total))
    }

    /// Stores what is in `dir` (at `rel` in the tree), depth first; one
    /// descriptor per level.
    fn store_entries(
        &self,
        dir: &Beneath,
        rel: &Path,
        depth: usize,
        entries: &mut Vec<Entry>,
        total: &mut u64,
    ) -> Result<(), Refused> {
        if depth > MAX_DEPTH {
            return Err(io_refusal(
                dir.shown(),
                invalid(format!("nested deeper than {MAX_DEPTH} directories")),
            ));
        }
        for (name, kind) in dir.entries()? {
            let child = rel.join(&name);
            let path = child
                .to_str()
                .ok_or_else(|| {
                    io_refusal(
                        &dir.shown().join(&name),
                        invalid("a name that is not UTF-8"),
                    )
                })?
                .to_owned();
            match kind {
                FileType::Directory => {
                    entries.push(Entry::Dir { path });
                    let sub = dir.dir(Path::new(&name))?;
                    self.store_entries(&sub, &child, depth + 1, entries, total)?;
                }
                FileType::Symlink => {
                    let target = dir.read_link(&name)?;
                    let target = target
                        .to_str()
                        .ok_or_else(|| {
                            io_refusal(
                                &dir.shown().join(&name),
                                invalid("a link target that is not UTF-8"),
                            )
                        })?
                        .to_owned();
                    entries.push(Entry::Symlink { path, target });
                }
                _ => {
                    let file = dir.file(Path::new(&name))?;
                    let mode = file
                        .metadata()
                        .map_err(|e| io_refusal(&dir.shown().join(&name), e))?
                        .permissions()
                        .mode();
                    let (digest, size) = self
                        .store_file(file)
                        .map_err(|e| io_refusal(&dir.shown().join(&name), e))?;
                    *total += size;
                    entries.push(Entry::File {
                        path,
                        digest,
                        size,
                        executable: mode & 0o111 != 0,
                    });
                }
            }
        }
        Ok(())
    }

    /// Recreates a tree's entries in `root`. The manifest may come from a
    /// step (any file reads as one when it starts like one), so every
    /// entry is checked: a plain relative path, a digest that names an
    /// object of this store, and nothing placed through a link the tree
    /// made itself.
    fn unpack(&self, tree: &Tree, root: &Beneath) -> Result<(), Refused> {
        for entry in &tree.entries {
            let rel = Path::new(entry_path(entry));
            let (parent, name) = split(rel)?;
            let made;
            let dir = match parent {
                Some(parent) => {
                    made = root.make_dirs(parent)?;
                    &made
                }
                None => root,
            };
            match entry {
                Entry::Dir { .. } => {
                    dir.make_dirs(Path::new(name))?;
                }
                Entry::File {
                    digest, executable, ..
                } => {
                    let object = self
                        .checked_object(digest)
                        .map_err(|e| io_refusal(&root.shown_path(rel), e))?;
                    let mut out = dir.create(name, *executable)?;
                    copy(&object, &mut out).map_err(|e| io_refusal(&object, e))?;
                }
                Entry::Symlink { target, .. } => dir.symlink(Path::new(target), name)?,
            }
        }
        Ok(())
    }

    /// The object of `hex`, when it is a digest (64 lowercase hex digits).
    fn checked_object(&self, hex: &str) -> io::Result<PathBuf> {
        let digest = hex.len() == 64 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        if !digest {
            return Err(invalid(format!("{hex:?} is not a digest")));
        }
        Ok(self.object(hex))
    }

    fn temp_file(&self) -> io::Result<(PathBuf, File)> {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        let dir = self.root.join("tmp");
        let name = format!(
            "{}-{}",
            std::process::id(),
            COUNTER.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(name);
        match File::create(&path) {
            Ok(f) => Ok((path, f)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(&dir)?;
                Ok((path.clone(), File::create(&path)?))
            }
            Err(e) => Err(e),
        }
    }

    /// Moves a finished temporary file to its address (atomic; a concurrent
    /// writer of the same content wins harmlessly).
    fn commit(&self, tmp: &Path, hex: &str) -> io::Result<()> {
        let dest = self.object(hex);
        if dest.exists() {
            return fs::remove_file(tmp);
        }
        match fs::rename(tmp, &dest) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(dest.parent().expect("objects have a parent"))?;
                fs::rename(tmp, &dest)
            }
            other => other,
        }
    }
}

fn entry_path(e: &Entry) -> &str {
    match e {
        Entry::Dir { path } | Entry::File { path, .. } | Entry::Symlink { path, .. } => path,
    }
}

/// The host path of an artifact stored by a local engine.
fn local_path(artifact: &ArtifactRef) -> io::Result<PathBuf> {
    artifact
        .location
        .strip_prefix("file://")
        .map(PathBuf::from)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::Unsupported,
                format!(
                    "artifact {} is at {}, which the local engine cannot read",
                    artifact.digest, artifact.location
                ),
            )
        })
}

/// Copies content only (into a fresh file), so that steps cannot change
/// the store through their inputs.
fn copy(from: &Path, to: &mut File) -> io::Result<()> {
    let mut src = File::open(from)?;
    io::copy(&mut src, to)?;
    Ok(())
}

/// A path's parent (none: it is a single name) and its last name.
fn split(rel: &Path) -> Result<(Option<&Path>, &OsStr), Refused> {
    let plain = rel.components().all(|c| matches!(c, Component::Normal(_)));
    match (plain, rel.parent(), rel.file_name()) {
        (true, Some(parent), Some(name)) if parent.as_os_str().is_empty() => Ok((None, name)),
        (true, Some(parent), Some(name)) => Ok((Some(parent), name)),
        _ => Err(Refused::NotBeneath(rel.to_owned())),
    }
}

fn io_refusal(path: &Path, source: io::Error) -> Refused {
    Refused::Io {
        path: path.to_owned(),
        source,
    }
}

fn read_up_to(file: &mut File, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match file.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

fn invalid(e: impl std::fmt::Display) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("couler-cas-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn files_are_addressed_by_their_blake3() {
        let dir = scratch("file");
        let cas = Cas::new(dir.join("cas"));
        fs::write(dir.join("a"), b"hello").unwrap();
        let base = Beneath::root(&dir).unwrap();
        let stored = cas.store(&base, Path::new("a")).unwrap();
        assert_eq!(stored.digest, blake3::hash(b"hello").to_hex().to_string());
        assert_eq!(stored.size, 5);
        assert!(stored.location.ends_with(&stored.digest));
        cas.materialise(&stored, &base, Path::new("out/b")).unwrap();
        assert_eq!(fs::read(dir.join("out/b")).unwrap(), b"hello");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn directories_round_trip_and_hash_deterministically() {
        let dir = scratch("tree");
        let cas = Cas::new(dir.join("cas"));
        let src = dir.join("src");
        fs::create_dir_all(src.join("sub/empty")).unwrap();
        fs::write(src.join("z.txt"), b"last").unwrap();
        fs::write(src.join("sub/run.sh"), b"#!/bin/sh\n").unwrap();
        fs::set_permissions(src.join("sub/run.sh"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("z.txt", src.join("link")).unwrap();
        let base = Beneath::root(&dir).unwrap();
        let first = cas.store(&base, Path::new("src")).unwrap();
        let again = cas.store(&base, Path::new("src")).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.size, 4 + 10);
        // The manifest of this tree as the engine wrote it before links
        // were refused on the way: digests, and so cache keys, stay.
        assert_eq!(
            first.digest,
            blake3::hash(&fs::read(local_path(&first).unwrap()).unwrap())
                .to_hex()
                .to_string()
        );

        cas.materialise(&first, &base, Path::new("out")).unwrap();
        let out = dir.join("out");
        assert_eq!(fs::read(out.join("z.txt")).unwrap(), b"last");
        assert!(out.join("sub/empty").is_dir());
        assert_eq!(
            fs::metadata(out.join("sub/run.sh"))
                .unwrap()
                .permissions()
                .mode()
                & 0o111,
            0o111
        );
        assert_eq!(
            fs::read_link(out.join("link")).unwrap(),
            PathBuf::from("z.txt")
        );
        // The copy hashes the same as the original.
        assert_eq!(
            cas.store(&base, Path::new("out")).unwrap().digest,
            first.digest
        );
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn trees_naming_what_is_not_an_object_are_refused() {
        let dir = scratch("forged");
        let cas = Cas::new(dir.join("cas"));
        let base = Beneath::root(&dir).unwrap();
        fs::write(dir.join("secret"), b"secret").unwrap();
        let forge = |name: &str, entries: &str| {
            fs::write(
                dir.join(name),
                format!(r#"{{"format":"couler-tree/v1","entries":{entries}}}"#),
            )
            .unwrap();
            cas.store(&base, Path::new(name)).unwrap()
        };
        let climb = format!("../../{}", dir.join("secret").display());
        let read = forge(
            "read",
            &format!(
                r#"[{{"kind":"file","path":"x","digest":"{climb}","size":1,"executable":false}}]"#
            ),
        );
        let err = cas
            .materialise(&read, &base, Path::new("in/read"))
            .unwrap_err();
        assert!(err.to_string().contains("is not a digest"), "{err}");
        let escape = forge("escape", r#"[{"kind":"dir","path":"../up"}]"#);
        let err = cas
            .materialise(&escape, &base, Path::new("in/escape"))
            .unwrap_err();
        assert!(matches!(err, Refused::NotBeneath(_)), "{err}");
        assert!(!dir.join("in/up").exists());
        fs::remove_dir_all(&dir).unwrap();
    }
}
