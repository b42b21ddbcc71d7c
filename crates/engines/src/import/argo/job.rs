//! `resource` templates that create a Kubeflow training-operator job
//! (`kubeflow.org` PyTorchJob, TFJob or MPIJob, as Couler's
//! `couler.steps.{pytorch,tensorflow,mpi}.train` emit them) as `job` steps.
//!
//! Each replica spec becomes a role (`Master` → `master`, `PS` → `ps`, …)
//! with its count, resources and the first container's image, command and
//! args. The leading role's (master, chief or launcher, else worker) image,
//! command, args, env and working directory become the job's; another role
//! carries its own image, command or args only where they differ. What the
//! IR cannot say (the operator's conditions, `cleanPodPolicy`, restart
//! policies, other pod settings) is reported.

use super::expand::Call;
use super::leaf::Body;
use super::vars::{Node, Vars};
use super::volumes::Mounts;
use super::{Importer, Ptr, entries, items, scalar, str_at};
use couler_ir::{EnvVar, Framework, Replica, Resources, Step, TrainingJob};
use serde_json::Value;
use std::collections::BTreeMap;

/// Keys of a template that [`Importer::training_job`] reads.
const JOB_TEMPLATE_KEYS: &[&str] = &[
    "name",
    "resource",
    "inputs",
    "retryStrategy",
    "activeDeadlineSeconds",
    "timeout",
    "nodeSelector",
    "tolerations",
    "memoize",
];

/// One role as the manifest gives it.
struct Role {
    name: String,
    /// The replica type as the manifest names it (`Worker`).
    kind: String,
    count: u32,
    body: Body,
    resources: Option<Resources>,
}

/// The framework a `kubeflow.org` manifest runs, and where its roles are.
fn framework(manifest: &Value) -> Option<(Framework, &'static str)> {
    let unquote = |key: &str| str_at(manifest, key).map(|s| s.trim_matches(['"', '\'']));
    if !unquote("apiVersion")?.starts_with("kubeflow.org/") {
        return None;
    }
    match unquote("kind")? {
        "PyTorchJob" => Some((Framework::Pytorch, "pytorchReplicaSpecs")),
        "TFJob" => Some((Framework::Tensorflow, "tfReplicaSpecs")),
        "MPIJob" => Some((Framework::Mpi, "mpiReplicaSpecs")),
        _ => None,
    }
}

impl Importer<'_> {
    /// A `resource` template creating a training job, as a `job` step;
    /// `None` (nothing reported) when the template is another resource.
    pub(super) fn training_job(
        &mut self,
        name: &str,
        tpl: &Value,
        tpl_at: &Ptr,
        call: &Call,
    ) -> Option<Node> {
        let resource = tpl.get("resource")?;
        let r_at = tpl_at.key("resource");
        if str_at(resource, "action") != Some("create") {
            return None;
        }
        let mut options = serde_saphyr::Options::default();
        options.strict_booleans = true;
        let manifest: Value =
            serde_saphyr::from_str_with_options(str_at(resource, "manifest")?, options).ok()?;
        let (framework, specs_key) = framework(&manifest)?;

        let bound = self.bind_inputs(tpl, tpl_at, call);
        let vars = Vars {
            inputs: Some(&bound),
            exit: call.exit,
            ..Vars::default()
        };
        for (key, _, at) in entries(Some(tpl), tpl_at) {
            if key == "outputs" {
                self.report.push(
                    &at,
                    "job outputs",
                    "a training job's outputs (the created object's name, uid or fields) have no IR form",
                );
            } else if !JOB_TEMPLATE_KEYS.contains(&key) {
                self.report.push(
                    &at,
                    key,
                    format!("the template setting {key:?} has no IR equivalent"),
                );
            }
        }
        if let Some(a) = tpl.get("inputs").and_then(|i| i.get("artifacts")) {
            self.report.push(
                &tpl_at.key("inputs").key("artifacts"),
                "inputs.artifacts",
                format!(
                    "input artifacts of a training job have no IR form; {} not provided",
                    a.as_array().map_or(0, Vec::len)
                ),
            );
        }
        self.resource_settings(resource, &r_at);
        let m_at = r_at.key("manifest");
        self.manifest_settings(&manifest, specs_key, &m_at);
        let specs_at = m_at.key("spec").key(specs_key);
        let mut roles = Vec::new();
        for (kind, spec, at) in entries(manifest["spec"].get(specs_key), &specs_at) {
            if let Some(role) = self.role(framework, kind, spec, &at, &vars) {
                roles.push(role);
            }
        }
        if roles.is_empty() {
            self.report.push(
                &specs_at,
                "resource template",
                format!("the {framework:?} job in template {name:?} has no role Couler can run; the tasks calling it are left out"),
            );
            return Some(Node::Missing {
                upstream: call.upstream.clone(),
            });
        }
        let job = self.hoist(framework, roles, &specs_at);
        let step = Step {
            name: self.names.claim(if call.name.is_empty() {
                name
            } else {
                &call.name
            }),
            description: None,
            container: None,
            script: None,
            job: Some(job),
            resources: None,
            hints: None,
            inputs: None,
            outputs: None,
            depends: Vec::new(),
            when: Vec::new(),
            map: None,
            repeat: None,
            retry: None,
            timeout: None,
            cache: None,
            tune: None,
        };
        Some(self.place(tpl, tpl_at, call, &vars, step))
    }

    /// The `resource` fields besides the manifest.
    fn resource_settings(&mut self, resource: &Value, at: &Ptr) {
        for (key, value, k_at) in entries(Some(resource), at) {
            match key {
                "action" | "manifest" | "setOwnerReference" => {}
                "successCondition" | "failureCondition" => {
                    let condition = scalar(value).unwrap_or_default();
                    // A replica-status count (what the Couler SDK writes)
                    // asks what the leading role's outcome already says.
                    let feature = if is_replica_count(&condition) {
                        "job condition".to_owned()
                    } else {
                        format!("resource.{key}")
                    };
                    self.report.push(
                        &k_at,
                        feature,
                        format!("Couler judges a training job by its leading role (master, chief or launcher, else all workers), not by {condition:?}"),
                    )
                }
                other => {
                    self.report
                        .push(&k_at, format!("resource.{other}"), "has no IR equivalent")
                }
            }
        }
    }

    /// The manifest's settings besides its roles.
    fn manifest_settings(&mut self, manifest: &Value, specs_key: &str, at: &Ptr) {
        for (key, value, k_at) in entries(Some(manifest), at) {
            match key {
                "apiVersion" | "kind" => {}
                "metadata" => {
                    for (k, _, m_at) in entries(Some(value), &k_at) {
                        if !matches!(k, "name" | "generateName" | "labels") {
                            self.report.push(
                                &m_at,
                                format!("job metadata.{k}"),
                                "has no IR equivalent",
                            );
                        }
                    }
                }
                "spec" => {
                    for (k, v, s_at) in entries(Some(value), &k_at) {
                        match k {
                            _ if k == specs_key => {}
                            "cleanPodPolicy" => self.report.push(
                                &s_at,
                                "cleanPodPolicy",
                                format!("informational: cleanPodPolicy {:?} is not kept; Couler's compilers leave pods to the operator's default", scalar(v).unwrap_or_default()),
                            ),
                            "slotsPerWorker" if v.as_u64() == Some(1) => {}
                            other => self.report.push(
                                &s_at,
                                format!("job spec.{other}"),
                                "has no IR equivalent",
                            ),
                        }
                    }
                }
                other => self
                    .report
                    .push(&k_at, format!("job {other}"), "has no IR equivalent"),
            }
        }
    }

    /// One replica spec (`Worker: {replicas, restartPolicy, template}`).
    fn role(
        &mut self,
        framework: Framework,
        kind: &str,
        spec: &Value,
        at: &Ptr,
        vars: &Vars,
    ) -> Option<Role> {
        let name = kind.to_ascii_lowercase();
        if !framework.roles().contains(&name.as_str()) {
            self.report.push(
                at,
                "job role",
                format!(
                    "{kind:?} is not a role of {framework:?} jobs in the IR ({}); it does not run",
                    framework.roles().join(", ")
                ),
            );
            return None;
        }
        let mut count = 1;
        let mut container = None;
        for (key, value, k_at) in entries(Some(spec), at) {
            match key {
                "replicas" => match value.as_u64().and_then(|n| u32::try_from(n).ok()) {
                    Some(n) if n > 0 => count = n,
                    _ => self.report.push(
                        &k_at,
                        "replicas",
                        format!("role {name:?}: {value} is not a positive whole number; 1 is used"),
                    ),
                },
                "restartPolicy" => self.report.push(
                    &k_at,
                    "restartPolicy",
                    format!("role {name:?}: restartPolicy {:?} has no IR form; a failed pod fails the job and the step's retry policy applies", scalar(value).unwrap_or_default()),
                ),
                "template" => container = self.pod(value, &k_at, &name),
                other => self.report.push(
                    &k_at,
                    format!("replica {other}"),
                    "has no IR equivalent",
                ),
            }
        }
        let Some((container, c_at)) = container else {
            self.report.push(
                at,
                "job role",
                format!("role {name:?} has no container; it does not run"),
            );
            return None;
        };
        if let Some(command) = container.get("command").and_then(Value::as_str) {
            self.report.push(
                &c_at.key("command"),
                "command string",
                format!("role {name:?}: the command {command:?} is one string, which Kubernetes refuses; it is run with `sh -c`"),
            );
        }
        let container = command_list(container);
        let (body, resources) = self.container(&container, &c_at, vars, false, &Mounts::default());
        Some(Role {
            name,
            kind: kind.to_owned(),
            count,
            body,
            resources,
        })
    }

    /// The first container of a role's pod template; the rest is reported.
    fn pod<'v>(&mut self, template: &'v Value, at: &Ptr, role: &str) -> Option<(&'v Value, Ptr)> {
        let mut first = None;
        for (key, value, k_at) in entries(Some(template), at) {
            match key {
                "metadata" => {}
                "spec" => {
                    for (k, v, s_at) in entries(Some(value), &k_at) {
                        if k != "containers" {
                            self.report.push(
                                &s_at,
                                format!("pod {k}"),
                                format!(
                                    "role {role:?}: the pod setting {k:?} has no IR equivalent"
                                ),
                            );
                            continue;
                        }
                        for (i, c, c_at) in items(Some(v), &s_at) {
                            if i == 0 {
                                first = Some((c, c_at));
                            } else {
                                self.report.push(
                                    &c_at,
                                    "sidecar",
                                    format!("role {role:?}: only the first container runs"),
                                );
                            }
                        }
                    }
                }
                other => self.report.push(
                    &k_at,
                    format!("pod template {other}"),
                    "has no IR equivalent",
                ),
            }
        }
        first
    }

    /// The job: the leading role's body as the job's, the others' where
    /// they differ.
    fn hoist(&mut self, framework: Framework, roles: Vec<Role>, at: &Ptr) -> TrainingJob {
        let mut job = TrainingJob {
            framework,
            image: String::new(),
            command: Vec::new(),
            args: Vec::new(),
            env: Vec::new(),
            working_dir: None,
            replicas: roles
                .iter()
                .map(|r| (r.name.clone(), replica(r.count, r.resources.clone())))
                .collect(),
        };
        let leader = job.leader().to_owned();
        let bodies: BTreeMap<String, (String, Body)> = roles
            .into_iter()
            .map(|r| (r.name, (r.kind, r.body)))
            .collect();
        let (_, lead) = bodies
            .get(&leader)
            .or_else(|| bodies.values().next())
            .expect("a job has a role");
        job.image = lead.image.clone();
        job.command = lead.command.clone();
        job.args = lead.args.clone();
        job.env = lead.env.clone();
        job.working_dir = lead.working_dir.clone();
        for (name, (kind, body)) in &bodies {
            let inherited = job.argv_of(name).0.to_vec();
            let differs = job.argv_of(name) != (body.command.as_slice(), body.args.as_slice());
            let replica = job
                .replicas
                .get_mut(name)
                .expect("every role has a replica");
            if body.image != job.image {
                replica.image = Some(body.image.clone());
            }
            if differs {
                if body.command == inherited && !body.args.is_empty() {
                    replica.args = body.args.clone();
                } else if body.command.is_empty() {
                    if inherited.is_empty() {
                        replica.args = body.args.clone();
                    } else {
                        self.report.push(
                            &at.key(kind),
                            "job role command",
                            format!("role {name:?} runs its image's entrypoint while the job has a command, which has no IR form; it runs the job's command"),
                        );
                    }
                } else {
                    replica.command = body.command.clone();
                    replica.args = body.args.clone();
                }
            }
            if !same_env(&body.env, &job.env) || body.working_dir != job.working_dir {
                self.report.push(
                    &at.key(kind),
                    "job role env",
                    format!("role {name:?} sets other environment variables or another working directory than the {leader:?}, which has no IR form; the {leader:?}'s are used"),
                );
            }
        }
        job
    }
}

fn replica(count: u32, resources: Option<Resources>) -> Replica {
    Replica {
        count,
        resources,
        image: None,
        command: Vec::new(),
        args: Vec::new(),
    }
}

/// A container whose `command` is one string (as Couler writes it) with
/// the command as `sh -c` runs it.
fn command_list(container: &Value) -> Value {
    let mut c = container.clone();
    if let Some(command) = c.get("command").and_then(Value::as_str).map(str::to_owned) {
        c["command"] = Value::from(vec!["sh".to_owned(), "-c".to_owned(), command]);
    }
    c
}

fn same_env(a: &[EnvVar], b: &[EnvVar]) -> bool {
    a.len() == b.len() && a.iter().all(|x| b.contains(x))
}

/// `status.replicaStatuses.ROLE.(succeeded|failed) OP N`, the conditions
/// the Couler SDK gives its training jobs.
fn is_replica_count(condition: &str) -> bool {
    let parts: Vec<&str> = condition.split_whitespace().collect();
    let [field, op, n] = parts.as_slice() else {
        return false;
    };
    let path: Vec<&str> = field.split('.').collect();
    matches!(
        path.as_slice(),
        ["status", "replicaStatuses", role, "succeeded" | "failed"] if !role.is_empty()
    ) && matches!(*op, "==" | ">" | ">=")
        && n.parse::<u32>().is_ok()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_couler_sdks_conditions_are_replica_counts() {
        use super::is_replica_count;
        assert!(is_replica_count(
            "status.replicaStatuses.Worker.succeeded == 1"
        ));
        assert!(is_replica_count(
            "status.replicaStatuses.Launcher.failed > 0"
        ));
        assert!(!is_replica_count("status.phase == Done"));
        assert!(!is_replica_count(
            "status.replicaStatuses.Worker.active > 0"
        ));
    }
}
