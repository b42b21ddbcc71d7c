//! Training jobs as Argo `resource` templates that create a Kubeflow
//! training-operator job (`kubeflow.org/v1` PyTorchJob, TFJob or MPIJob)
//! and wait on its replica statuses.

use super::STEP_LABEL;
use super::analysis::{Analysis, StepInfo};
use super::model::{EnvVar, ResourceTemplate};
use super::names::dns_label;
use super::templates::{resources, seconds};
use crate::EngineError;
use couler_ir::{Framework, TrainingJob};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The container fields after references were rewritten.
pub(super) struct Spec<'a> {
    /// Each role's command and args (see `TrainingJob::argv_of`).
    pub argv: BTreeMap<&'a str, (Vec<String>, Vec<String>)>,
    pub env: Vec<EnvVar>,
    pub working_dir: Option<String>,
}

/// Kind, replica-spec field and container name the training operator
/// expects for a framework.
fn kind(framework: Framework) -> (&'static str, &'static str, &'static str) {
    match framework {
        Framework::Pytorch => ("PyTorchJob", "pytorchReplicaSpecs", "pytorch"),
        Framework::Tensorflow => ("TFJob", "tfReplicaSpecs", "tensorflow"),
        Framework::Mpi => ("MPIJob", "mpiReplicaSpecs", "mpi"),
    }
}

/// The operator's replica type for an IR role.
fn replica_type(role: &str) -> String {
    match role {
        "ps" => "PS".into(),
        other => {
            let mut c = other.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        }
    }
}

pub(super) fn resource(
    a: &Analysis<'_>,
    s: &StepInfo<'_>,
    job: &TrainingJob,
    spec: Spec<'_>,
) -> Result<ResourceTemplate, EngineError> {
    let (kind, specs_field, container_name) = kind(job.framework);
    let ir = s.ir;
    let mut labels = Map::new();
    labels.insert(STEP_LABEL.into(), ir.name.clone().into());
    for (key, value) in &a.labels {
        labels.insert(key.clone(), value.clone().into());
    }
    let mut replicas = Map::new();
    for (role, replica) in &job.replicas {
        let mut container = json!({
            "name": container_name,
            "image": job.image_of(role),
        });
        if let Some((command, args)) = spec.argv.get(role.as_str()) {
            if !command.is_empty() {
                container["command"] = json!(command);
            }
            if !args.is_empty() {
                container["args"] = json!(args);
            }
        }
        if !spec.env.is_empty() {
            container["env"] = serde_json::to_value(&spec.env).map_err(other)?;
        }
        if let Some(dir) = &spec.working_dir {
            container["workingDir"] = json!(dir);
        }
        let r = resources(replica.resources.as_ref().or(ir.resources.as_ref()));
        if !r.is_empty() {
            container["resources"] = serde_json::to_value(&r).map_err(other)?;
        }
        let mut pod = json!({ "containers": [container] });
        if let Some(h) = &ir.hints {
            if !h.node_selector.is_empty() {
                pod["nodeSelector"] = json!(h.node_selector);
            }
            if !h.tolerations.is_empty() {
                pod["tolerations"] = json!(h.tolerations);
            }
        }
        replicas.insert(
            replica_type(role),
            json!({
                "replicas": replica.count,
                // Argo's retryStrategy owns retries: a failed pod fails the job.
                "restartPolicy": "Never",
                "template": {
                    "metadata": { "labels": labels },
                    "spec": pod,
                },
            }),
        );
    }
    let mut job_spec = Map::new();
    if let Some(t) = ir.timeout {
        job_spec.insert(
            "runPolicy".into(),
            json!({ "activeDeadlineSeconds": seconds(t.as_std()) }),
        );
    }
    job_spec.insert(specs_field.into(), Value::Object(replicas));
    let manifest = json!({
        "apiVersion": "kubeflow.org/v1",
        "kind": kind,
        "metadata": {
            // Retries and map instances each create a job of their own.
            "generateName": format!("{}-", dns_label(&[&ir.name], 40)),
            "labels": labels,
        },
        "spec": job_spec,
    });
    let (success, failure) = conditions(job);
    Ok(ResourceTemplate {
        action: "create",
        set_owner_reference: true,
        success_condition: success,
        failure_condition: failure,
        manifest: crate::yaml::to_string(&manifest).map_err(other)?,
    })
}

/// The job is judged by its leading role: the master, chief or launcher
/// when it has one, otherwise by all of its workers.
fn conditions(job: &TrainingJob) -> (String, String) {
    let role = job.leader();
    let needed = match role {
        "worker" => job.replicas.get("worker").map_or(1, |w| w.count.max(1)),
        _ => 1,
    };
    let path = format!("status.replicaStatuses.{}", replica_type(role));
    (
        format!("{path}.succeeded > {}", needed - 1),
        format!("{path}.failed > 0"),
    )
}

fn other(e: impl std::fmt::Display) -> EngineError {
    EngineError::Other(format!("could not write a training job manifest: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use couler_ir::Replica;
    use std::collections::BTreeMap;

    fn job(framework: Framework, roles: &[(&str, u32)]) -> TrainingJob {
        TrainingJob {
            framework,
            image: "x".into(),
            command: vec![],
            args: vec![],
            env: vec![],
            working_dir: None,
            replicas: roles
                .iter()
                .map(|(r, n)| {
                    (
                        (*r).to_owned(),
                        Replica {
                            count: *n,
                            resources: None,
                            image: None,
                            command: vec![],
                            args: vec![],
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn judged_by_the_leading_role() {
        let (ok, failed) = conditions(&job(Framework::Pytorch, &[("master", 1), ("worker", 2)]));
        assert_eq!(ok, "status.replicaStatuses.Master.succeeded > 0");
        assert_eq!(failed, "status.replicaStatuses.Master.failed > 0");
        let (ok, _) = conditions(&job(Framework::Tensorflow, &[("worker", 3), ("ps", 1)]));
        assert_eq!(ok, "status.replicaStatuses.Worker.succeeded > 2");
        assert_eq!(replica_type("ps"), "PS");
        assert_eq!(replica_type("evaluator"), "Evaluator");
    }
}
