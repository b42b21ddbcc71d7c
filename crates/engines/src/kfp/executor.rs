//! What runs: each step's container executor (command, wrapper, env,
//! resources) and its Kubernetes settings (secrets, scheduling hints,
//! timeout, pod labels) for the platform spec.

use super::analyze::{Analysis, Env, StepIo};
use super::spec::{
    Accelerator, Container, EnvVar, KubernetesExecutorConfig, NodeSelector, PodMetadata, Resources,
    RuntimeValue, SecretAsEnv, SecretKeyToEnv, SecretNameParameter, StepPodMetadata, Toleration,
};
use super::unsupported;
use crate::k8s::secrets::{Namespace, secret_object};
use crate::yaml::SmallMap;
use crate::{EngineError, RunSpec};
use couler_ir::{SecretRef, StepKind};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::rc::Rc;

const GPU: &str = "nvidia.com/gpu";

/// Runs a script: writes the source (`$0`) to a file and runs the
/// interpreter (`$@`) on it, as KFP's own Python components do.
const SCRIPT: &str = "program=\"$(mktemp -d)/script\"\nprintf '%s' \"$0\" > \"$program\"\nexec \"$@\" \"$program\"\n";

/// The container for step `i`; moves the rendered command, args and
/// source out of `io`, which nothing reads after this.
pub fn container<'a>(
    a: &Analysis<'a>,
    i: usize,
    io: &mut StepIo<'a>,
) -> Result<Container<'a>, EngineError> {
    let step = a.step(i);
    let (image, user) = match step.kind() {
        Some(StepKind::Container(c)) => (&c.image, None),
        Some(StepKind::Script(s)) => (&s.image, Some(io.source.take().unwrap_or_default())),
        _ => unreachable!("jobs are refused before"),
    };
    let rendered = std::mem::take(&mut io.command);
    // What the step itself runs: a container's command and args, or the
    // script runner with the source and the interpreter.
    let (command, args) = match user {
        None => (rendered, std::mem::take(&mut io.args)),
        Some(source) => (
            vec![
                Cow::Borrowed("sh"),
                Cow::Borrowed("-ec"),
                Cow::Borrowed(SCRIPT),
            ],
            std::iter::once(source).chain(rendered).collect(),
        ),
    };
    let wrapper = wrapper(a, i, io);
    let (command, args) = match wrapper {
        None => (command, args),
        Some(script) => {
            if command.is_empty() {
                return Err(unsupported(format!(
                    "step `{}`: its outputs, working directory or environment need a shell wrapper, which must know the command to run; set `container.command` (the image's entrypoint is unknown here)",
                    step.name
                )));
            }
            let mut wrapped_args: Vec<Cow<'a, str>> = io
                .env
                .iter()
                .filter_map(|(_, e)| match e {
                    Env::FromArg(v) => Some(v.clone()),
                    _ => None,
                })
                .collect();
            wrapped_args.extend(io.working_dir.iter().cloned());
            wrapped_args.extend(command);
            wrapped_args.extend(args);
            (
                vec![
                    Cow::Borrowed("sh"),
                    Cow::Borrowed("-c"),
                    Cow::Owned(script),
                    Cow::Borrowed("couler-step"),
                ],
                wrapped_args,
            )
        }
    };
    let env = io
        .env
        .iter()
        .filter_map(|(name, e)| match e {
            Env::Value(v) => Some(EnvVar {
                name,
                value: v.clone(),
            }),
            _ => None,
        })
        .collect();
    Ok(Container {
        args,
        command,
        env,
        image,
        resources: step.resources.as_ref().and_then(resources),
    })
}

/// The `sh -c` script around a step that needs one: KFP fills placeholders
/// only in command and args and has no working directory, no stdout
/// output and no output defaults. `None` when the step runs as written.
fn wrapper(a: &Analysis, i: usize, io: &StepIo<'_>) -> Option<String> {
    let step = a.step(i);
    let result_key = &a.result_keys[i];
    let result = a.exports[i].contains_key(result_key);
    let defaults: Vec<(&str, &str)> = step
        .outputs
        .iter()
        .flat_map(|o| &o.parameters)
        .filter_map(|p| p.default.as_ref().map(|d| (p.name.as_str(), d.as_str())))
        .collect();
    let env_args: Vec<&str> = io
        .env
        .iter()
        .filter(|(_, e)| matches!(e, Env::FromArg(_)))
        .map(|(n, _)| *n)
        .collect();
    if !result && defaults.is_empty() && env_args.is_empty() && io.working_dir.is_none() {
        return None;
    }
    let mut s = String::new();
    for name in env_args {
        s.push_str(&format!("export {name}=\"$1\"; shift\n"));
    }
    if io.working_dir.is_some() {
        s.push_str("cd \"$1\" || exit 1; shift\n");
    }
    let after = result || !defaults.is_empty();
    if result {
        // Stream stdout to the log and keep it, trimmed of trailing newlines.
        s.push_str("o=\"$(mktemp -d)\"; mkfifo \"$o/p\"; tee \"$o/s\" < \"$o/p\" &\n\"$@\" > \"$o/p\"; rc=$?; wait\n");
        s.push_str(&format!(
            "f=\"{}\"; mkdir -p \"${{f%/*}}\"; printf '%s' \"$(cat \"$o/s\")\" > \"$f\"\n",
            output_file(result_key)
        ));
    } else if after {
        s.push_str("\"$@\"; rc=$?\n");
    } else {
        s.push_str("exec \"$@\"\n");
    }
    for (name, default) in defaults {
        s.push_str(&format!(
            "f=\"{}\"; [ -e \"$f\" ] || {{ mkdir -p \"${{f%/*}}\"; printf '%s' {} > \"$f\"; }}\n",
            output_file(name),
            shell_quote(default)
        ));
    }
    if after {
        s.push_str("exit \"$rc\"\n");
    }
    Some(s)
}

fn output_file(key: &str) -> String {
    format!("{{{{$.outputs.parameters['{key}'].output_file}}}}")
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// Requests and limits at the same values (the IR's `resources` is what the
/// step needs, and the local engine enforces memory as a limit).
fn resources(r: &couler_ir::Resources) -> Option<Resources> {
    let mut out = Resources::default();
    if let Some(cpu) = r.cpu {
        let cores = cpu.millis() as f64 / 1000.0;
        out.cpu_limit = Some(cores);
        out.cpu_request = Some(cores);
        out.resource_cpu_limit = Some(cpu.to_string());
        out.resource_cpu_request = Some(cpu.to_string());
    }
    if let Some(memory) = r.memory {
        let gb = memory.bytes() as f64 / 1e9;
        out.memory_limit = Some(gb);
        out.memory_request = Some(gb);
        out.resource_memory_limit = Some(memory.to_string());
        out.resource_memory_request = Some(memory.to_string());
    }
    if let Some(gpu) = r.gpu.filter(|&g| g > 0) {
        out.accelerator = Some(Accelerator {
            count: gpu.to_string(),
            resource_count: gpu.to_string(),
            resource_type: GPU.to_owned(),
            kind: GPU.to_owned(),
        });
    }
    let any = out.accelerator.is_some() || out.cpu_limit.is_some() || out.memory_limit.is_some();
    any.then_some(out)
}

/// An environment variable from the tenant secret's Kubernetes Secret in
/// the pods' namespace, which every tenant shares.
fn secret_as_env(var: &str, secret: &SecretRef, tenant: &str) -> SecretAsEnv {
    let object = secret_object(Namespace::Shared { tenant }, &secret.name);
    SecretAsEnv {
        key_to_env: vec![SecretKeyToEnv {
            env_var: var.to_owned(),
            secret_key: secret.key.clone(),
        }],
        optional: false,
        secret_name: object.clone(),
        secret_name_parameter: SecretNameParameter {
            runtime_value: RuntimeValue { constant: object },
        },
    }
}

/// The Kubernetes settings of step `i`'s pods.
pub fn platform<'a>(
    a: &Analysis<'a>,
    i: usize,
    io: &StepIo<'a>,
    run: &Rc<PodMetadata>,
    tenant: &str,
) -> Result<KubernetesExecutorConfig<'a>, EngineError> {
    let step = a.step(i);
    let pod_metadata = StepPodMetadata {
        run: Rc::clone(run),
        step: &step.name,
    };
    let secret_as_env = io
        .env
        .iter()
        .filter_map(|(name, e)| match e {
            Env::Secret(s) => Some(secret_as_env(name, s, tenant)),
            _ => None,
        })
        .collect();
    let hints = step.hints.as_ref();
    let node_selector = hints
        .filter(|h| !h.node_selector.is_empty())
        .map(|h| NodeSelector {
            labels: h.node_selector.clone(),
        });
    let tolerations = hints
        .map(|h| {
            h.tolerations
                .iter()
                .map(|t| toleration(&step.name, t))
                .collect()
        })
        .transpose()?
        .unwrap_or_default();
    let active_deadline_seconds = step.timeout.map(|t| {
        let d = t.as_std();
        (d.as_secs() + u64::from(d.subsec_nanos() > 0))
            .max(1)
            .to_string()
    });
    Ok(KubernetesExecutorConfig {
        active_deadline_seconds,
        node_selector,
        pod_metadata,
        secret_as_env,
        tolerations,
    })
}

fn toleration(step: &str, t: &serde_json::Value) -> Result<Toleration, EngineError> {
    let object = t.as_object().ok_or_else(|| {
        EngineError::Other(format!("step `{step}`: a toleration must be a mapping"))
    })?;
    let mut out = Toleration::default();
    for (key, value) in object {
        let wrong = |kind: &str| {
            EngineError::Other(format!(
                "step `{step}`: toleration field `{key}` must be {kind}"
            ))
        };
        let text = || {
            value
                .as_str()
                .map(str::to_owned)
                .ok_or_else(|| wrong("a string"))
        };
        match key.as_str() {
            "effect" => out.effect = Some(text()?),
            "key" => out.key = Some(text()?),
            "operator" => out.operator = Some(text()?),
            "value" => out.value = Some(text()?),
            "tolerationSeconds" => {
                out.toleration_seconds = Some(value.as_i64().ok_or_else(|| wrong("an integer"))?)
            }
            other => {
                return Err(unsupported(format!(
                    "step `{step}`: toleration field `{other}`, which Kubernetes tolerations (and KFP's) do not have"
                )));
            }
        }
    }
    Ok(out)
}

/// Pod labels naming the run; an annotation keeps the exact value where a
/// label had to be sanitized.
pub fn run_metadata(workflow_labels: &BTreeMap<String, String>, run: &RunSpec) -> PodMetadata {
    let mut labels: SmallMap<String> = workflow_labels
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    let mut annotations = SmallMap::default();
    let mut set = |key: &str, value: &str| {
        let label = label_value(value);
        if label != value {
            annotations.insert(key.to_owned(), value.to_owned());
        }
        labels.insert(key.to_owned(), label);
    };
    set("couler.dev/tenant", &run.tenant);
    set("couler.dev/run", &run.run);
    if let Some(stage) = &run.stage {
        set("couler.dev/stage", stage);
    }
    PodMetadata {
        annotations,
        labels,
    }
}

/// A valid Kubernetes label value: at most 63 of `[A-Za-z0-9._-]`, starting
/// and ending alphanumeric.
pub fn label_value(s: &str) -> String {
    let mapped: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed = mapped.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    let cut: String = trimmed.chars().take(63).collect();
    cut.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn label_values_are_sanitized() {
        assert_eq!(label_value("tnt_abc"), "tnt_abc");
        assert_eq!(label_value("-run/1 x-"), "run-1-x");
        assert_eq!(label_value(&"a".repeat(70)).len(), 63);
        assert!(couler_ir::names::is_label_value(&label_value("..é..")));
    }

    #[test]
    fn shell_quoting_survives_quotes() {
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
    }
}
