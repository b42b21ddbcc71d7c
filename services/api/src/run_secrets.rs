//! The secrets a run's workflow reads (`env[].secret` in its steps), and
//! the problems when the tenant does not have one: a run is refused before
//! it is queued, naming the step and the reference.

use crate::batch::Workflow;
use crate::error::{ApiError, ApiResult};
use couler_store::secrets::Missing;
use std::collections::BTreeMap;

/// A step's read of a secret key, and where to point a problem with it.
#[derive(Debug, Clone)]
pub struct SecretUse {
    pub step: String,
    pub name: String,
    pub key: String,
    /// JSON pointer in the request (inline IR) or in the stored version.
    pub path: String,
    /// Whether `path` is in the request; otherwise the problem points at
    /// `/workflow` and names `path` in its message.
    pub in_request: bool,
}

impl SecretUse {
    /// Every secret an inline workflow's steps read (its pointers under `/ir`).
    pub fn of_inline(workflow: &couler_ir::Workflow) -> Vec<SecretUse> {
        use couler_ir::StepKind;
        let mut uses = Vec::new();
        for (list, steps) in [("steps", &workflow.steps), ("onExit", &workflow.on_exit)] {
            for (i, step) in steps.iter().enumerate() {
                let kind = match step.kind() {
                    Some(StepKind::Container(_)) => "container",
                    Some(StepKind::Script(_)) => "script",
                    Some(StepKind::Job(_)) => "job",
                    None => continue,
                };
                for (j, var) in step.env().iter().enumerate() {
                    if let Some(secret) = &var.secret {
                        uses.push(SecretUse {
                            step: step.name.clone(),
                            name: secret.name.clone(),
                            key: secret.key.clone(),
                            path: format!("/ir/{list}/{i}/{kind}/env/{j}/secret"),
                            in_request: true,
                        });
                    }
                }
            }
        }
        uses
    }

    pub fn of_stored(found: couler_store::workflows::SecretUse) -> SecretUse {
        SecretUse {
            path: format!(
                "/{}/{}/{}/env/{}/secret",
                found.list, found.step, found.kind, found.env
            ),
            step: found.step_name,
            name: found.name,
            key: found.key,
            in_request: false,
        }
    }

    /// The problem when the tenant lacks this secret or key.
    fn problem(&self, missing: Missing<'_>) -> couler_ir::Problem {
        let (code, at) = match missing {
            Missing::Secret => (couler_ir::Code::UnknownSecret, "/name"),
            Missing::Key(_) => (couler_ir::Code::UnknownSecretKey, "/key"),
        };
        let mut message = missing.describe(&self.step, &self.name, &self.key);
        let path = if self.in_request {
            format!("{}{at}", self.path)
        } else {
            message.push_str(&format!(" (at {}{at} in the stored version)", self.path));
            "/workflow".to_owned()
        };
        couler_ir::Problem {
            path,
            code,
            message,
        }
    }
}

/// Refuses a workflow reading a secret or key the tenant does not have,
/// naming every such read at once.
pub fn check_secrets(workflow: &Workflow, have: &BTreeMap<String, Vec<String>>) -> ApiResult<()> {
    let problems: Vec<couler_ir::Problem> = workflow
        .secrets
        .iter()
        .filter_map(|u| Missing::of(have, &u.name, &u.key).map(|m| u.problem(m)))
        .collect();
    if problems.is_empty() {
        Ok(())
    } else {
        Err(ApiError::Invalid(couler_ir::Problems(problems)))
    }
}
