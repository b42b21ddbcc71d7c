//! Canonical form and content hashes.
//!
//! The canonical form is the typed IR serialized back out: fields in
//! declaration order, maps sorted, defaults omitted, scalars in one spelling
//! (`30m`, `500m`, `4Gi`). Two documents that differ only in key order,
//! whitespace, quoting or YAML-vs-JSON have the same canonical form; any
//! change that affects execution changes it. Digests are BLAKE3 over the
//! canonical JSON, with a distinct derivation context per kind of object.

use crate::types::{Step, Workflow};
use serde::{Serialize, Serializer};
use std::fmt;

const WORKFLOW_CONTEXT: &str = "couler.dev 2026 ir workflow v1";
const STEP_CONTEXT: &str = "couler.dev 2026 ir step v1";

/// A 256-bit BLAKE3 content digest, shown as 64 hex characters.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Digest(blake3::Hash);

impl Digest {
    pub fn as_bytes(&self) -> &[u8; 32] {
        self.0.as_bytes()
    }
    pub fn to_hex(&self) -> String {
        self.0.to_hex().to_string()
    }
}

impl fmt::Display for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0.to_hex().as_str())
    }
}

impl fmt::Debug for Digest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Digest({self})")
    }
}

impl Serialize for Digest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.0.to_hex().as_str())
    }
}

/// The digests of a workflow and of each of its steps.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hashes {
    pub workflow: Digest,
    /// `(step name, digest)` for `steps` then `onExit`, in document order.
    pub steps: Vec<(String, Digest)>,
}

fn digest_of(context: &str, value: &impl Serialize) -> Digest {
    let mut hasher = blake3::Hasher::new_derive_key(context);
    serde_json::to_writer(&mut hasher, value).expect("IR types always serialize");
    Digest(hasher.finalize())
}

/// The canonical form as compact JSON.
pub fn canonical_json(workflow: &Workflow) -> String {
    serde_json::to_string(workflow).expect("IR types always serialize")
}

/// Digest of one step's canonical form.
pub fn step_digest(step: &Step) -> Digest {
    digest_of(STEP_CONTEXT, step)
}

/// Digest of the whole workflow's canonical form.
pub fn workflow_digest(workflow: &Workflow) -> Digest {
    digest_of(WORKFLOW_CONTEXT, workflow)
}

/// The workflow digest and every step's digest.
pub fn hashes(workflow: &Workflow) -> Hashes {
    Hashes {
        workflow: workflow_digest(workflow),
        steps: workflow
            .steps
            .iter()
            .chain(&workflow.on_exit)
            .map(|s| (s.name.clone(), step_digest(s)))
            .collect(),
    }
}

/// The canonical form as YAML (same content as [`canonical_json`]).
pub fn canonical_yaml(workflow: &Workflow) -> String {
    serde_saphyr::to_string(workflow).expect("IR types always serialize")
}
