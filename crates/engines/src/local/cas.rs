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
//! Everything here is blocking file I/O: call it from `spawn_blocking`.

use couler_optimizer::ArtifactRef;
use serde::{Deserialize, Serialize};
use std::fs::{self, File};
use std::io::{self, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const TREE_FORMAT: &str = "couler-tree/v1";
const TREE_PREFIX: &[u8] = br#"{"format":"couler-tree/v1""#;

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

    /// Stores the file or directory at `path`.
    pub(super) fn store(&self, path: &Path) -> io::Result<ArtifactRef> {
        let meta = fs::symlink_metadata(path)?;
        let (digest, size) = if meta.is_dir() {
            self.store_tree(path)?
        } else {
            self.store_file(path)?
        };
        Ok(ArtifactRef {
            location: format!("file://{}", self.object(&digest).display()),
            digest,
            size,
        })
    }

    /// Recreates an artifact at `dest` (a file, or a directory for trees).
    pub(super) fn materialise(&self, artifact: &ArtifactRef, dest: &Path) -> io::Result<()> {
        let source = local_path(artifact)?;
        if let Some(parent) = dest.parent() {
            fs::create_dir_all(parent)?;
        }
        let mut head = [0u8; TREE_PREFIX.len()];
        let mut file = File::open(&source)?;
        let read = read_up_to(&mut file, &mut head)?;
        if read == head.len() && head == TREE_PREFIX {
            let tree: Tree = serde_json::from_slice(&fs::read(&source)?)
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))?;
            return self.unpack(&tree, dest);
        }
        copy_plain(&source, dest)
    }

    fn object(&self, hex: &str) -> PathBuf {
        self.root.join(&hex[..2]).join(hex)
    }

    /// Copies the file into the store while hashing it: one read.
    fn store_file(&self, path: &Path) -> io::Result<(String, u64)> {
        let mut src = File::open(path)?;
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

    fn store_tree(&self, dir: &Path) -> io::Result<(String, u64)> {
        let mut entries = Vec::new();
        let mut total = 0u64;
        let mut stack = vec![PathBuf::new()];
        while let Some(rel) = stack.pop() {
            let mut children: Vec<_> = fs::read_dir(dir.join(&rel))?.collect::<Result<_, _>>()?;
            children.sort_by_key(|c| c.file_name());
            // Push in reverse so that the walk visits names in sorted order.
            for child in children.iter().rev() {
                let child_rel = rel.join(child.file_name());
                let name = child_rel
                    .to_str()
                    .ok_or_else(|| invalid(format!("{} is not UTF-8", child_rel.display())))?
                    .to_owned();
                let meta = fs::symlink_metadata(child.path())?;
                if meta.is_dir() {
                    entries.push(Entry::Dir { path: name });
                    stack.push(child_rel);
                } else if meta.file_type().is_symlink() {
                    let target = fs::read_link(child.path())?;
                    let target = target
                        .to_str()
                        .ok_or_else(|| invalid(format!("{} is not UTF-8", target.display())))?
                        .to_owned();
                    entries.push(Entry::Symlink { path: name, target });
                } else {
                    let (digest, size) = self.store_file(&child.path())?;
                    total += size;
                    entries.push(Entry::File {
                        path: name,
                        digest,
                        size,
                        executable: meta.permissions().mode() & 0o111 != 0,
                    });
                }
            }
        }
        entries.sort_by(|a, b| entry_path(a).cmp(entry_path(b)));
        let manifest = serde_json::to_vec(&Tree {
            format: TREE_FORMAT.to_owned(),
            entries,
        })
        .map_err(invalid)?;
        Ok((self.store_bytes(&manifest)?, total))
    }

    fn unpack(&self, tree: &Tree, dest: &Path) -> io::Result<()> {
        fs::create_dir_all(dest)?;
        for entry in &tree.entries {
            let rel = Path::new(entry_path(entry));
            if rel.is_absolute()
                || rel
                    .components()
                    .any(|c| matches!(c, std::path::Component::ParentDir))
            {
                return Err(invalid(format!("unsafe path {} in a tree", rel.display())));
            }
            let at = dest.join(rel);
            match entry {
                Entry::Dir { .. } => fs::create_dir_all(&at)?,
                Entry::File {
                    digest, executable, ..
                } => {
                    if let Some(parent) = at.parent() {
                        fs::create_dir_all(parent)?;
                    }
                    copy_plain(&self.object(digest), &at)?;
                    if *executable {
                        fs::set_permissions(&at, fs::Permissions::from_mode(0o755))?;
                    }
                }
                Entry::Symlink { target, .. } => std::os::unix::fs::symlink(target, &at)?,
            }
        }
        Ok(())
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

/// Copies content only (a fresh file with default permissions), so that
/// steps cannot change the store through their inputs.
fn copy_plain(from: &Path, to: &Path) -> io::Result<()> {
    let mut src = File::open(from)?;
    let mut dst = File::create(to)?;
    io::copy(&mut src, &mut dst)?;
    Ok(())
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
        let stored = cas.store(&dir.join("a")).unwrap();
        assert_eq!(stored.digest, blake3::hash(b"hello").to_hex().to_string());
        assert_eq!(stored.size, 5);
        assert!(stored.location.ends_with(&stored.digest));
        cas.materialise(&stored, &dir.join("out/b")).unwrap();
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
        let first = cas.store(&src).unwrap();
        let again = cas.store(&src).unwrap();
        assert_eq!(first, again);
        assert_eq!(first.size, 4 + 10);

        let out = dir.join("out");
        cas.materialise(&first, &out).unwrap();
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
        assert_eq!(cas.store(&out).unwrap().digest, first.digest);
        fs::remove_dir_all(&dir).unwrap();
    }
}
