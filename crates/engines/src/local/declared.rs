//! Declared container paths: where a try's input artifacts, output
//! parameters and output artifacts live on the host, and what the sandbox
//! shows at their declared paths.
//!
//! In the sandbox, each declared path `P` has its host file in the work
//! directory's mirror `work/paths/P`, and the directory of `P` is that
//! mirror's directory, bound writable (a fresh, empty directory per try,
//! like an `emptyDir` volume): a step writes `P` itself or through its
//! `{{…path}}` reference, which names the host file (visible at the same
//! path), and both are the same file. A directory nested in another
//! declared one is part of it. A file directly in `/` (which stays read
//! only) is a link to its host file, so it is written in place, not renamed
//! onto. Declared directories are bound before the work directory and
//! `local.mounts`, so one above them (`/tmp` when the data directory is
//! there) does not hide them. A declared directory inside what the sandbox
//! gives a meaning of its own (the host's system directories, `/proc`,
//! `/dev`, `/sys`, the data directory, `local.mounts`), or a file in `/`
//! over one of those or `/tmp`, is refused, naming the path.
//!
//! Without the sandbox, declared paths are not used: the references point
//! to `work/inputs/<A>`, `work/outputs/parameters/<P>` and
//! `work/outputs/artifacts/<A>`.

use super::sandbox::HostMount;
use super::template::work_dir;
use couler_ir::Step;
use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

/// The kernel's file systems, never a declared directory.
const KERNEL: &[&str] = &["/proc", "/dev", "/sys"];

/// One declared input or output of a step.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Declared {
    pub name: String,
    /// The path the step declares.
    pub path: String,
    /// Where the file is on the host (what `{{…path}}` names).
    pub host: PathBuf,
    /// An output parameter's value when the file is absent.
    pub default: Option<String>,
}

/// A try's declared files and what the sandbox shows for them.
#[derive(Debug, Clone, Default)]
pub(super) struct Files {
    pub work: PathBuf,
    pub inputs: Vec<Declared>,
    pub parameters: Vec<Declared>,
    pub artifacts: Vec<Declared>,
    /// Whether declared paths are shown (in the sandbox).
    pub shown: bool,
    /// Host directories shown writable at declared directories: (host,
    /// in the sandbox), none inside another.
    pub binds: Vec<(PathBuf, PathBuf)>,
    /// Files directly in `/`: (host file, link in the sandbox).
    pub links: Vec<(PathBuf, PathBuf)>,
    /// Host directories made before the start: every declared directory's.
    pub dirs: Vec<PathBuf>,
}

/// What the sandbox shows of its own: declared directories stay clear of it.
pub(super) struct Reserved<'a> {
    /// System directories shown read only.
    pub system: &'a [&'a str],
    pub data_dir: &'a Path,
    pub mounts: &'a [HostMount],
    /// Descriptors left for declared directories.
    pub spare_binds: usize,
}

impl Files {
    /// The files of the try in `dir` of `step`; `shown`: in a sandbox.
    pub(super) fn new(dir: &Path, step: &Step, shown: bool) -> Files {
        let work = work_dir(dir);
        let mirror = |path: &str, plain: PathBuf| match clean(path) {
            Some(rel) if shown => work.join("paths").join(rel),
            _ => plain,
        };
        let declared = |name: &str, path: &str, plain: PathBuf, default: Option<String>| Declared {
            name: name.to_owned(),
            path: path.to_owned(),
            host: mirror(path, plain),
            default,
        };
        let outputs = step.outputs.as_ref();
        let mut files = Files {
            inputs: step
                .inputs
                .iter()
                .flat_map(|i| &i.artifacts)
                .map(|a| declared(&a.name, &a.path, input_path(&work, &a.name), None))
                .collect(),
            parameters: outputs
                .into_iter()
                .flat_map(|o| &o.parameters)
                .map(|p| {
                    let default = p.default.as_ref().map(|d| d.as_str().to_owned());
                    declared(&p.name, &p.path, parameter_path(&work, &p.name), default)
                })
                .collect(),
            artifacts: outputs
                .into_iter()
                .flat_map(|o| &o.artifacts)
                .map(|a| declared(&a.name, &a.path, artifact_path(&work, &a.name), None))
                .collect(),
            shown,
            work,
            ..Files::default()
        };
        if shown {
            files.plan();
        }
        files
    }

    /// Binds, links and directories for the declared paths.
    fn plan(&mut self) {
        let mut dirs = BTreeSet::new();
        let mut links = Vec::new();
        for d in self.all() {
            let Some(rel) = clean(&d.path) else { continue };
            let path = Path::new("/").join(&rel);
            match path.parent().expect("a path below /") {
                parent if parent == Path::new("/") => links.push((d.host.clone(), path.clone())),
                parent => {
                    dirs.insert(parent.to_owned());
                }
            }
        }
        let mirror = self.work.join("paths");
        let host = |dir: &Path| mirror.join(dir.strip_prefix("/").expect("absolute"));
        for dir in &dirs {
            // Sorted, so an enclosing directory comes first.
            if !self.binds.iter().any(|(_, outer)| dir.starts_with(outer)) {
                self.binds.push((host(dir), dir.clone()));
            }
        }
        self.dirs = dirs.iter().map(|d| host(d)).collect();
        links.sort();
        links.dedup();
        self.links = links;
    }

    fn all(&self) -> impl Iterator<Item = &Declared> {
        self.inputs
            .iter()
            .chain(&self.parameters)
            .chain(&self.artifacts)
    }

    /// The host file of `{{inputs.artifacts.A.path}}`.
    pub(super) fn input(&self, name: &str) -> PathBuf {
        find(&self.inputs, name).unwrap_or_else(|| input_path(&self.work, name))
    }

    /// The host file of `{{outputs.parameters.P.path}}`.
    pub(super) fn parameter(&self, name: &str) -> PathBuf {
        find(&self.parameters, name).unwrap_or_else(|| parameter_path(&self.work, name))
    }

    /// The host file of `{{outputs.artifacts.A.path}}`.
    pub(super) fn artifact(&self, name: &str) -> PathBuf {
        find(&self.artifacts, name).unwrap_or_else(|| artifact_path(&self.work, name))
    }

    /// The host directory behind `path` in the sandbox, when a declared
    /// directory holds it.
    pub(super) fn host_of(&self, path: &Path) -> Option<PathBuf> {
        self.binds
            .iter()
            .find_map(|(host, at)| Some(host.join(path.strip_prefix(at).ok()?)))
    }

    /// Why the sandbox cannot show these declared paths, one line each
    /// (empty: it can).
    pub(super) fn refusals(&self, reserved: &Reserved<'_>) -> Vec<String> {
        let mut problems = Vec::new();
        let kinds = [
            ("input artifact", &self.inputs),
            ("output parameter", &self.parameters),
            ("output artifact", &self.artifacts),
        ];
        for (kind, list) in kinds {
            for d in list {
                let why = match clean(&d.path) {
                    None => Some("it is not a plain absolute path (no `..`)".into()),
                    Some(rel) => {
                        let path = Path::new("/").join(rel);
                        let dir = path.parent().expect("a path below /");
                        if dir != Path::new("/") {
                            reserved.clash(dir, false)
                        } else if self.binds.iter().any(|(_, at)| at.starts_with(&path)) {
                            Some(format!("{} is also a declared directory", path.display()))
                        } else {
                            reserved.clash(&path, true)
                        }
                    }
                };
                if let Some(why) = why {
                    problems.push(format!("{kind} `{}` at {}: {why}", d.name, d.path));
                }
            }
        }
        if problems.is_empty() && self.binds.len() > reserved.spare_binds {
            let dirs: Vec<String> = self
                .binds
                .iter()
                .map(|(_, at)| at.display().to_string())
                .collect();
            problems.push(format!(
                "declared paths lie in {} directories ({}); with local.mounts, a step can be shown at most {} (put them in fewer directories)",
                dirs.len(),
                dirs.join(", "),
                reserved.spare_binds
            ));
        }
        problems
    }
}

impl Reserved<'_> {
    /// Why the sandbox cannot show a fresh directory at `dir` (a file at
    /// `dir` when `file`), if it cannot.
    fn clash(&self, dir: &Path, file: bool) -> Option<String> {
        let tmp = [Path::new("/tmp")];
        let mut own: Vec<(&Path, &str)> = Vec::new();
        own.extend(
            self.system
                .iter()
                .map(|s| (Path::new(*s), "the host's, shown read only")),
        );
        own.extend(KERNEL.iter().map(|k| (Path::new(*k), "the kernel's")));
        own.push((self.data_dir, "the engine's data directory"));
        own.extend(self.mounts.iter().map(|m| {
            (
                m.path.as_path(),
                "a host directory every step sees (local.mounts)",
            )
        }));
        if file {
            // A link cannot stand where the sandbox mounts something.
            own.extend(
                tmp.iter()
                    .map(|t| (*t, "the step's private temporary directory")),
            );
        }
        own.iter().find_map(|(other, what)| {
            if dir == *other {
                Some(format!("{} is {what}", dir.display()))
            } else if dir.starts_with(other) {
                Some(format!(
                    "{} is in {}, {what}",
                    dir.display(),
                    other.display()
                ))
            } else if file && other.starts_with(dir) {
                Some(format!(
                    "{} holds {}, {what}",
                    dir.display(),
                    other.display()
                ))
            } else {
                None
            }
        })
    }
}

/// Checks every step the plan runs: one line per path the sandbox cannot
/// show, naming the step.
pub(super) fn refusals(steps: &[&Step], reserved: &Reserved<'_>) -> Vec<String> {
    steps
        .iter()
        .flat_map(|step| {
            Files::new(Path::new("/"), step, true)
                .refusals(reserved)
                .into_iter()
                .map(|why| format!("step `{}`: {why}", step.name))
        })
        .collect()
}

/// `path` below `/`, without `..` (`/a//b/./c` is `a/b/c`).
fn clean(path: &str) -> Option<PathBuf> {
    let path = Path::new(path);
    if !path.is_absolute() || path.as_os_str().as_encoded_bytes().contains(&0) {
        return None;
    }
    let mut rel = PathBuf::new();
    for c in path.components() {
        match c {
            Component::RootDir => {}
            Component::Normal(n) => rel.push(n),
            _ => return None,
        }
    }
    (!rel.as_os_str().is_empty()).then_some(rel)
}

fn find(list: &[Declared], name: &str) -> Option<PathBuf> {
    list.iter().find(|d| d.name == name).map(|d| d.host.clone())
}

fn input_path(work: &Path, name: &str) -> PathBuf {
    work.join("inputs").join(name)
}

fn parameter_path(work: &Path, name: &str) -> PathBuf {
    work.join("outputs").join("parameters").join(name)
}

fn artifact_path(work: &Path, name: &str) -> PathBuf {
    work.join("outputs").join("artifacts").join(name)
}

#[cfg(test)]
mod tests;
