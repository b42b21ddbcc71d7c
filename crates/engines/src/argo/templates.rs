//! A step's own template: a `container`, `script` or `resource` (training
//! job) template with its inputs, outputs, resources, scheduling hints,
//! retries and timeout.

use super::analysis::{Analysis, Shape, StepInfo};
use super::job;
use super::model::{
    Artifact, Backoff, Container, EnvVar, EnvVarSource, Inputs, Outputs, Parameter, Resources,
    RetryStrategy, Script, SecretKeySelector, Template, ValueFrom,
};
use super::unsupported;
use super::values::Body;
use crate::EngineError;
use crate::k8s::secrets::{Namespace, secret_object};
use couler_ir::{RetryOn, StepKind};
use std::time::Duration;

impl<'a> Analysis<'a> {
    /// The template that runs step `s`, and the inputs it declares.
    pub fn body_template(&self, s: &StepInfo<'a>) -> Result<(Template, Body<'a>), EngineError> {
        let ir = s.ir;
        let mut body = Body::new(ir)?;
        let mut t = Template {
            name: s.body.clone(),
            ..Template::default()
        };
        // Pods carry the step through their template's name (Argo's node
        // annotations and pod names); no label of ours is needed.
        if let Some(d) = &ir.description {
            t.metadata
                .annotations
                .insert("couler.dev/description".into(), d.clone());
        }
        match ir.kind() {
            Some(StepKind::Container(c)) => {
                t.container = Some(Box::new(Container {
                    image: c.image.clone(),
                    command: self.rewrite_all(s, &c.command, &mut body)?,
                    args: self.rewrite_all(s, &c.args, &mut body)?,
                    env: self.env(s, &c.env, &mut body)?,
                    working_dir: self.rewrite_opt(s, c.working_dir.as_deref(), &mut body)?,
                    resources: resources(ir.resources.as_ref()),
                }));
            }
            Some(StepKind::Script(sc)) => {
                t.script = Some(Box::new(Script {
                    image: sc.image.clone(),
                    command: self.rewrite_all(s, &sc.command, &mut body)?,
                    source: self.rewrite(s, &sc.source, &mut body)?,
                    env: self.env(s, &sc.env, &mut body)?,
                    working_dir: self.rewrite_opt(s, sc.working_dir.as_deref(), &mut body)?,
                    resources: resources(ir.resources.as_ref()),
                }));
            }
            Some(StepKind::Job(j)) => {
                let mut argv = std::collections::BTreeMap::new();
                for role in j.replicas.keys() {
                    let (command, args) = j.argv_of(role);
                    let command = self.rewrite_all(s, command, &mut body)?;
                    let args = self.rewrite_all(s, args, &mut body)?;
                    argv.insert(role.as_str(), (command, args));
                }
                let spec = job::Spec {
                    argv,
                    env: self.env(s, &j.env, &mut body)?,
                    working_dir: self.rewrite_opt(s, j.working_dir.as_deref(), &mut body)?,
                };
                t.resource = Some(Box::new(job::resource(self, s, j, spec)?));
            }
            None => {
                return Err(EngineError::Other(format!(
                    "step {:?} has no container, script or job",
                    ir.name
                )));
            }
        }
        if ir.job.is_none()
            && let Some(h) = &ir.hints
        {
            t.node_selector = h.node_selector.clone();
            t.tolerations = h.tolerations.clone();
        }
        t.inputs = Inputs {
            parameters: body
                .params
                .iter()
                .map(|(n, _)| Parameter::named(n))
                .collect(),
            artifacts: body
                .artifacts
                .iter()
                .map(|a| Artifact {
                    path: Some(a.path.clone()),
                    ..Artifact::named(&a.name)
                })
                .collect(),
        };
        t.outputs = self.body_outputs(s);
        t.retry_strategy = ir.retry.as_ref().map(|r| RetryStrategy {
            limit: r.limit.to_string(),
            retry_policy: match r.on {
                RetryOn::Always => "Always",
                RetryOn::Transient => "OnTransientError",
            },
            backoff: r.backoff.as_ref().map(|b| Backoff {
                duration: duration(b.duration.as_std()),
                factor: b.factor.unwrap_or(2).to_string(),
                cap: b.max_duration.map(|d| duration(d.as_std())),
            }),
        });
        t.active_deadline_seconds = ir.timeout.map(|d| seconds(d.as_std()).to_string());
        Ok((t, body))
    }

    /// The step's declared outputs; those exit handlers read travel on as
    /// global outputs when no outer template exports them.
    fn body_outputs(&self, s: &StepInfo<'a>) -> Outputs {
        let global = s.shape == Shape::Plain && !s.wrapped;
        let Some(o) = &s.ir.outputs else {
            return Outputs::default();
        };
        Outputs {
            parameters: o
                .parameters
                .iter()
                .map(|p| Parameter {
                    value_from: Some(ValueFrom {
                        path: Some(p.path.clone()),
                        default: p.default.as_ref().map(|d| d.as_str().to_owned()),
                        ..ValueFrom::default()
                    }),
                    global_name: global
                        .then(|| s.globals.parameters.get(p.name.as_str()).cloned())
                        .flatten(),
                    ..Parameter::named(&p.name)
                })
                .collect(),
            artifacts: o
                .artifacts
                .iter()
                .map(|a| Artifact {
                    path: Some(a.path.clone()),
                    global_name: global
                        .then(|| s.globals.artifacts.get(a.name.as_str()).cloned())
                        .flatten(),
                    ..Artifact::named(&a.name)
                })
                .collect(),
        }
    }

    fn rewrite_all(
        &self,
        s: &StepInfo<'a>,
        texts: &'a [String],
        body: &mut Body<'a>,
    ) -> Result<Vec<String>, EngineError> {
        texts.iter().map(|t| self.rewrite(s, t, body)).collect()
    }

    fn rewrite_opt(
        &self,
        s: &StepInfo<'a>,
        text: Option<&'a str>,
        body: &mut Body<'a>,
    ) -> Result<Option<String>, EngineError> {
        text.map(|t| self.rewrite(s, t, body)).transpose()
    }

    /// Literal values, and secrets as references to a Kubernetes secret of
    /// the same name (never their values).
    fn env(
        &self,
        s: &StepInfo<'a>,
        env: &'a [couler_ir::EnvVar],
        body: &mut Body<'a>,
    ) -> Result<Vec<EnvVar>, EngineError> {
        env.iter()
            .map(|e| {
                Ok(match (&e.value, &e.secret) {
                    (_, Some(secret)) => EnvVar {
                        name: e.name.clone(),
                        value: None,
                        value_from: Some(EnvVarSource {
                            secret_key_ref: SecretKeySelector {
                                name: secret_object(Namespace::Own, &secret.name),
                                key: secret.key.clone(),
                            },
                        }),
                    },
                    (Some(v), None) => EnvVar {
                        name: e.name.clone(),
                        value: Some(self.rewrite(s, v, body)?),
                        value_from: None,
                    },
                    (None, None) => {
                        return Err(unsupported(
                            &s.ir.name,
                            format!("environment variable {:?} without a value", e.name),
                        ));
                    }
                })
            })
            .collect()
    }
}

/// Requests as given; GPUs as `nvidia.com/gpu`, which Kubernetes wants as
/// a limit too.
pub(super) fn resources(r: Option<&couler_ir::Resources>) -> Resources {
    let mut out = Resources::default();
    let Some(r) = r else { return out };
    if let Some(cpu) = r.cpu {
        out.requests.insert("cpu", cpu.to_string());
    }
    if let Some(memory) = r.memory {
        out.requests.insert("memory", memory.to_string());
    }
    if let Some(gpu) = r.gpu {
        out.requests.insert("nvidia.com/gpu", gpu.to_string());
        out.limits.insert("nvidia.com/gpu", gpu.to_string());
    }
    out
}

/// A Go duration Argo parses: whole seconds, or milliseconds.
fn duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// Whole seconds, rounded up, at least one.
pub(super) fn seconds(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}
