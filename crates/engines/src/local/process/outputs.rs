//! A finished try's outputs: output parameters read and output artifacts
//! stored from its work directory. The engine runs as root and the step
//! wrote there, so every path is opened below the work directory without
//! following links (see `beneath`): a parameter or artifact that is a link,
//! or lies below one, fails the step naming the path. Links inside an
//! artifact directory are stored as links (a model's `latest -> v3`), never
//! followed; a consumer gets the link, which points into its own sandbox.

use super::super::beneath::{Beneath, Refused};
use super::super::cas::Cas;
use super::super::declared::{Declared, Files};
use couler_optimizer::{Named, StepOutputs};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

const PARAMETER_LIMIT: u64 = 1024 * 1024;

/// Reads a step's outputs after it exited 0.
pub(super) fn collect(files: &Files, cas: &Cas, stdout: &[u8]) -> Result<StepOutputs, String> {
    let mut parameters = Named::new();
    let mut artifacts = Named::new();
    if !files.parameters.is_empty() || !files.artifacts.is_empty() {
        let (base, below) = base(files)?;
        let rel = |d: &Declared| d.host.strip_prefix(&below).unwrap_or(&d.host).to_owned();
        for d in &files.parameters {
            let value = parameter(base.as_ref(), &rel(d), d, files)?;
            parameters.insert(d.name.clone(), value);
        }
        for d in &files.artifacts {
            let name = &d.name;
            let stored = match &base {
                Some(base) => cas.store(base, &rel(d)),
                None => Err(absent(&d.host)),
            };
            match stored {
                Ok(stored) => {
                    artifacts.insert(name.clone(), stored);
                }
                Err(e) if e.not_found() => {
                    let reference = format!("{{{{outputs.artifacts.{name}.path}}}}");
                    return Err(format!(
                        "output artifact `{name}` was not written to {}",
                        looked_at(d, &reference, files)
                    ));
                }
                Err(e) => return Err(format!("could not store output artifact `{name}`: {e}")),
            }
        }
    }
    Ok(StepOutputs {
        result: Some(String::from_utf8_lossy(stdout).trim().to_owned()),
        parameters,
        artifacts,
    })
}

/// The directory outputs are read below (none: it is not there, so no
/// output is) and its host path. In the sandbox that is `work/paths`,
/// named `/` in messages, as the step sees it.
fn base(files: &Files) -> Result<(Option<Beneath>, PathBuf), String> {
    let opened = Beneath::root(&files.work).and_then(|work| match files.shown {
        true => Ok(work.dir(Path::new("paths"))?.shown_as("/")),
        false => Ok(work),
    });
    let below = match files.shown {
        true => files.work.join("paths"),
        false => files.work.clone(),
    };
    match opened {
        Ok(base) => Ok((Some(base), below)),
        Err(e) if e.not_found() => Ok((None, below)),
        Err(e) => Err(format!("could not read the step's outputs: {e}")),
    }
}

/// One output parameter's value: its file's content, else its default.
fn parameter(
    base: Option<&Beneath>,
    rel: &Path,
    d: &Declared,
    files: &Files,
) -> Result<String, String> {
    let name = &d.name;
    let opened = match base {
        Some(base) => base.file(rel),
        None => Err(absent(&d.host)),
    };
    match opened {
        Ok(f) => {
            let mut bytes = Vec::new();
            f.take(PARAMETER_LIMIT + 1)
                .read_to_end(&mut bytes)
                .map_err(|e| format!("could not read output parameter `{name}`: {e}"))?;
            if bytes.len() as u64 > PARAMETER_LIMIT {
                return Err(format!(
                    "output parameter `{name}` is over {} KiB; use an output artifact",
                    PARAMETER_LIMIT / 1024
                ));
            }
            Ok(String::from_utf8_lossy(&bytes).trim_end().to_owned())
        }
        Err(e) if e.not_found() => match &d.default {
            Some(default) => Ok(default.clone()),
            None => {
                let reference = format!("{{{{outputs.parameters.{name}.path}}}}");
                Err(format!(
                    "output parameter `{name}` was not written to {} and has no default",
                    looked_at(d, &reference, files)
                ))
            }
        },
        Err(e) => Err(format!("could not read output parameter `{name}`: {e}")),
    }
}

fn absent(path: &Path) -> Refused {
    Refused::Io {
        path: path.to_owned(),
        source: io::ErrorKind::NotFound.into(),
    }
}

/// Where a declared output was looked for, for the message that it is not
/// there.
fn looked_at(d: &Declared, reference: &str, files: &Files) -> String {
    if files.shown {
        return format!("{} ({reference})", d.path);
    }
    format!(
        "{reference} ({}); without the sandbox (local.sandbox.isolation = \"off\") the declared path {} is not read, so write through the reference",
        d.host.display(),
        d.path
    )
}
