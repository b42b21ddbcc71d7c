//! Distributed training jobs (Kubeflow training-operator style): the job,
//! its roles, and what each role runs. Field order is canonical, as in
//! [`crate::types`].

use crate::scalar::whole;
use crate::types::{EnvVar, Resources};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A distributed training job (Kubeflow training operator style). Each
/// role runs the job's image, command and args unless the role sets its
/// own (see [`Replica`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct TrainingJob {
    pub framework: Framework,
    pub image: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    /// Replicas by role. Roles: pytorch `master`, `worker`; tensorflow
    /// `chief`, `worker`, `ps`, `evaluator`; mpi `launcher`, `worker`.
    pub replicas: BTreeMap<String, Replica>,
}

impl TrainingJob {
    /// The role the job's outcome follows: its master, chief or launcher,
    /// otherwise its workers.
    pub fn leader(&self) -> &str {
        ["master", "chief", "launcher"]
            .into_iter()
            .find(|r| self.replicas.contains_key(*r))
            .unwrap_or("worker")
    }

    /// The image `role` runs.
    pub fn image_of(&self, role: &str) -> &str {
        self.replicas
            .get(role)
            .and_then(|r| r.image.as_deref())
            .unwrap_or(&self.image)
    }

    /// The command and args `role` runs (empty: the image's entrypoint).
    /// A role with its own `command` runs it with its own `args` only; a
    /// role with only `args` runs the job's command with them. MPI workers
    /// wait for the launcher's `mpirun`: they run only what they set
    /// themselves.
    pub fn argv_of(&self, role: &str) -> (&[String], &[String]) {
        let inherits = !(self.framework == Framework::Mpi && role != "launcher");
        let job: (&[String], &[String]) = if inherits {
            (&self.command, &self.args)
        } else {
            (&[], &[])
        };
        match self.replicas.get(role) {
            Some(r) if !r.command.is_empty() => (&r.command, &r.args),
            Some(r) if !r.args.is_empty() => (job.0, &r.args),
            _ => job,
        }
    }

    /// Every command and args string, the job's and its roles'.
    pub fn texts(&self) -> impl Iterator<Item = &String> {
        (self.command.iter().chain(&self.args)).chain(
            self.replicas
                .values()
                .flat_map(|r| r.command.iter().chain(&r.args)),
        )
    }

    /// Every command and args string, mutably (for substitutions).
    pub fn texts_mut(&mut self) -> impl Iterator<Item = &mut String> {
        (self.command.iter_mut().chain(self.args.iter_mut())).chain(
            self.replicas
                .values_mut()
                .flat_map(|r| r.command.iter_mut().chain(r.args.iter_mut())),
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Framework {
    Pytorch,
    Tensorflow,
    Mpi,
}

impl Framework {
    pub fn roles(self) -> &'static [&'static str] {
        match self {
            Framework::Pytorch => &["master", "worker"],
            Framework::Tensorflow => &["chief", "worker", "ps", "evaluator"],
            Framework::Mpi => &["launcher", "worker"],
        }
    }
}

/// One role of a training job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Replica {
    /// Number of replicas in this role (at least 1).
    #[serde(deserialize_with = "whole::deserialize")]
    pub count: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// This role's image instead of the job's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image: Option<String>,
    /// This role's entrypoint instead of the job's; it runs with this
    /// role's `args` only. (MPI workers run only their own command and
    /// args, the image's entrypoint without them.)
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    /// This role's arguments instead of the job's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
}
