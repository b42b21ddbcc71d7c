//! Volumes and their mounts. The IR has none, but an `emptyDir` volume
//! mounted at the directory of a step's declared input or output path (as
//! the Couler SDK mounts `couler-out-dir-0` at `/mnt` for `/mnt/…`
//! outputs) is what engines give every step there anyway: a fresh,
//! writable directory (see the local engine's `declared`). Such volumes
//! and mounts are reported as keeping the run; every other volume
//! (persistentVolumeClaim, hostPath, configMap, secret, …) and mount
//! changes it.

use super::{Importer, Ptr, entries, items, str_at};
use couler_ir::{Inputs, Outputs};
use serde_json::Value;
use std::collections::{BTreeSet, HashSet};
use std::path::{Path, PathBuf};

/// What a template's mounts are judged against.
#[derive(Debug, Default)]
pub(super) struct Mounts {
    /// `emptyDir` volumes: the workflow's and the template's own.
    pub empty_dirs: HashSet<String>,
    /// The directories of the step's declared paths.
    pub declared_dirs: BTreeSet<PathBuf>,
}

impl Mounts {
    pub(super) fn new(
        empty_dirs: HashSet<String>,
        inputs: Option<&Inputs>,
        outputs: Option<&Outputs>,
    ) -> Mounts {
        let inputs = inputs
            .into_iter()
            .flat_map(|i| &i.artifacts)
            .map(|a| &a.path);
        let parameters = outputs
            .into_iter()
            .flat_map(|o| &o.parameters)
            .map(|p| &p.path);
        let artifacts = outputs
            .into_iter()
            .flat_map(|o| &o.artifacts)
            .map(|a| &a.path);
        let declared_dirs = inputs
            .chain(parameters)
            .chain(artifacts)
            .filter_map(|path| Some(normal(Path::new(path).parent()?)))
            .collect();
        Mounts {
            empty_dirs,
            declared_dirs,
        }
    }
}

impl Importer<'_> {
    /// Reports `volumes` (the workflow's or a template's) and returns the
    /// names of the `emptyDir` ones.
    pub(super) fn volumes(&mut self, v: &Value, at: &Ptr) -> HashSet<String> {
        let mut empty = HashSet::new();
        let list = items(Some(v), at);
        if list.is_empty() && !v.as_array().is_some_and(Vec::is_empty) {
            self.report
                .push(at, "volumes", "not a list of volumes; not imported");
        }
        for (_, volume, v_at) in list {
            let name = str_at(volume, "name").unwrap_or_default();
            if volume.get("emptyDir").is_some() && !name.is_empty() {
                empty.insert(name.to_owned());
                self.report.push(
                    &v_at,
                    "emptyDir volume",
                    format!(
                        "the emptyDir volume {name:?} is not kept: each step gets a fresh writable directory at the directory of each of its declared input and output paths (mounts of it elsewhere are reported)"
                    ),
                );
                continue;
            }
            let kind = entries(Some(volume), &v_at)
                .into_iter()
                .map(|(key, ..)| key)
                .find(|key| *key != "name")
                .unwrap_or("unknown");
            self.report.push(
                &v_at,
                "volumes",
                format!("the {kind} volume {name:?} has no IR equivalent; steps that mount it do not see it"),
            );
        }
        empty
    }

    /// Reports a container's `volumeMounts`.
    pub(super) fn volume_mounts(&mut self, v: &Value, at: &Ptr, mounts: &Mounts) {
        let list = items(Some(v), at);
        if list.is_empty() && !v.as_array().is_some_and(Vec::is_empty) {
            self.report
                .push(at, "volumeMounts", "not a list of mounts; not imported");
        }
        for (_, mount, m_at) in list {
            let name = str_at(mount, "name").unwrap_or_default();
            let path = str_at(mount, "mountPath").unwrap_or_default();
            let plain = entries(Some(mount), &m_at).iter().all(|(key, value, _)| {
                matches!(*key, "name" | "mountPath" | "subPath")
                    || (*key == "readOnly" && value.as_bool() == Some(false))
            });
            let (feature, message) = if !mounts.empty_dirs.contains(name) {
                (
                    "volumeMounts",
                    format!("the mount of volume {name:?} at {path} has no IR equivalent"),
                )
            } else if !plain {
                (
                    "volumeMounts",
                    format!(
                        "the emptyDir volume {name:?} at {path} is mounted with settings the IR cannot keep (read only, propagation, …)"
                    ),
                )
            } else if !path.starts_with('/')
                || !mounts.declared_dirs.contains(&normal(Path::new(path)))
            {
                (
                    "volumeMounts",
                    format!(
                        "the emptyDir volume {name:?} at {path} is not kept, and no declared input or output path lies directly in {path}, so the step gets no writable directory there"
                    ),
                )
            } else {
                (
                    "emptyDir mount",
                    format!(
                        "the emptyDir volume {name:?} at {path} is not kept: {path} holds declared paths, so each step gets a fresh writable directory there"
                    ),
                )
            };
            self.report.push(&m_at, feature, message);
        }
    }
}

/// `path` without `.`, empty names or a trailing `/`.
fn normal(path: &Path) -> PathBuf {
    path.components().collect()
}
