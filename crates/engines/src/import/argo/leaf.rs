//! Container and script templates as IR steps: what runs, its inputs and
//! outputs, resources, retries and timeout.

use super::expand::Call;
use super::vars::{Node, Vars};
use super::volumes::Mounts;
use super::{Importer, Ptr, entries, items, scalar, str_at};
use couler_ir::names::{is_dns_subdomain, is_env_name, is_identifier, is_secret_key};
use couler_ir::refs::{Ref, Segment, segments};
use couler_ir::scalar::{Cpu, Duration, Memory, ParamValue};
use couler_ir::{
    Backoff, Container, EnvVar, InputArtifact, Inputs, OutputArtifact, OutputParameter, Outputs,
    Resources, Retry, RetryOn, Script, SecretRef, Step, WhileLoop,
};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

const MAX_RETRIES: u32 = 100;
pub(super) const MAX_TIMEOUT_SECS: u64 = 30 * 24 * 3600;
/// Keys of a template that [`Importer::leaf`] reads.
const LEAF_KEYS: &[&str] = &[
    "name",
    "container",
    "script",
    "inputs",
    "outputs",
    "retryStrategy",
    "activeDeadlineSeconds",
    "timeout",
    "nodeSelector",
    "tolerations",
    "daemon",
    "volumes",
    "memoize",
];
/// Where an Argo artifact can live besides a path; none exists in the IR.
const ARTIFACT_SOURCES: &[&str] = &[
    "s3",
    "gcs",
    "oss",
    "hdfs",
    "http",
    "git",
    "raw",
    "artifactory",
    "azure",
    "plugin",
    "from",
    "fromExpression",
];

impl Importer<'_> {
    /// One IR step running `tpl` (a container or script template).
    pub(super) fn leaf(
        &mut self,
        tpl: &Value,
        tpl_at: &Ptr,
        name: String,
        call: &Call,
        bound: &BTreeMap<String, String>,
        repeat: Option<WhileLoop>,
    ) -> Node {
        let mut vars = Vars {
            inputs: Some(bound),
            exit: call.exit,
            ..Vars::default()
        };
        let inputs = self.input_artifacts(tpl, tpl_at, call, &mut vars);
        let outputs = self.outputs(tpl, tpl_at, &mut vars);
        let mut empty_dirs = self.empty_dirs.clone();
        if let Some(own) = tpl.get("volumes") {
            empty_dirs.extend(self.volumes(own, &tpl_at.key("volumes")));
        }
        let mounts = Mounts::new(empty_dirs, inputs.as_ref(), outputs.as_ref());
        for (key, _, at) in entries(Some(tpl), tpl_at) {
            if !LEAF_KEYS.contains(&key) {
                self.report.push(
                    &at,
                    key,
                    format!("the template setting {key:?} has no IR equivalent"),
                );
            }
        }
        let (container, script, resources) = match (tpl.get("container"), tpl.get("script")) {
            (Some(c), _) => {
                let at = tpl_at.key("container");
                let (body, resources) = self.container(c, &at, &vars, false, &mounts);
                (
                    Some(Container {
                        image: body.image,
                        command: body.command,
                        args: body.args,
                        env: body.env,
                        working_dir: body.working_dir,
                    }),
                    None,
                    resources,
                )
            }
            (None, Some(s)) => {
                let at = tpl_at.key("script");
                let (body, resources) = self.container(s, &at, &vars, true, &mounts);
                let command = if body.command.is_empty() {
                    self.report.push(
                        &at.key("command"),
                        "script.command",
                        "a script without a command is run with `sh`",
                    );
                    vec!["sh".to_owned()]
                } else {
                    body.command
                };
                let source = match s.get("source").and_then(scalar) {
                    Some(source) => self.text(&source, &vars, &at.key("source")).0,
                    None => String::new(),
                };
                (
                    None,
                    Some(Script {
                        image: body.image,
                        command,
                        source,
                        env: body.env,
                        working_dir: body.working_dir,
                    }),
                    resources,
                )
            }
            (None, None) => unreachable!("leaf templates have a container or a script"),
        };
        let step = Step {
            name,
            description: None,
            container,
            script,
            job: None,
            resources,
            hints: None,
            inputs,
            outputs,
            depends: Vec::new(),
            when: Vec::new(),
            map: None,
            repeat,
            retry: None,
            timeout: None,
            cache: None,
            tune: None,
        };
        self.place(tpl, tpl_at, call, &vars, step)
    }

    /// Completes `step` with what every imported leaf takes from its
    /// template (hints, retries, timeout, cache) and from its call (when,
    /// map, dependencies), and adds it to the workflow.
    pub(super) fn place(
        &mut self,
        tpl: &Value,
        tpl_at: &Ptr,
        call: &Call,
        vars: &Vars,
        mut step: Step,
    ) -> Node {
        let mut hints = self.hints.clone();
        if let Some(selector) = tpl.get("nodeSelector") {
            let own = self.node_selector(selector, &tpl_at.key("nodeSelector"));
            hints.node_selector.extend(own);
        }
        if let Some(t) = tpl.get("tolerations") {
            let own = self.tolerations(t, &tpl_at.key("tolerations"));
            hints.tolerations.extend(own);
        }
        step.hints =
            (!hints.node_selector.is_empty() || !hints.tolerations.is_empty()).then_some(hints);
        step.retry = tpl
            .get("retryStrategy")
            .and_then(|r| self.retry(r, &tpl_at.key("retryStrategy"), vars));
        step.timeout = self.timeout(tpl, tpl_at, vars);
        step.cache = self.memoize(tpl, tpl_at, vars);
        step.depends = self.depends(&call.upstream);
        step.when = call.when.clone();
        step.map = call.map.clone();

        let node = Node::Leaf {
            step: step.name.clone(),
            parameters: step
                .outputs
                .iter()
                .flat_map(|o| &o.parameters)
                .map(|p| p.name.clone())
                .collect(),
            artifacts: step
                .outputs
                .iter()
                .flat_map(|o| &o.artifacts)
                .map(|a| a.name.clone())
                .collect(),
        };
        self.record(&step);
        if call.exit {
            self.on_exit.push(step);
        } else {
            self.steps.push(step);
        }
        node
    }

    /// The outputs a leaf template declares in a form the IR keeps.
    pub(super) fn declared_outputs(tpl: &Value) -> (BTreeSet<String>, BTreeSet<String>) {
        let names = |kind: &str, ok: fn(&Value) -> bool| {
            tpl.get("outputs")
                .and_then(|o| o.get(kind))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter(|o| ok(o))
                .filter_map(|o| str_at(o, "name"))
                .filter(|n| is_identifier(n))
                .map(str::to_owned)
                .collect()
        };
        (
            names("parameters", |p| {
                p.get("valueFrom").and_then(|v| v.get("path")).is_some()
            }),
            names("artifacts", |a| a.get("path").is_some()),
        )
    }

    fn input_artifacts(
        &mut self,
        tpl: &Value,
        tpl_at: &Ptr,
        call: &Call,
        vars: &mut Vars,
    ) -> Option<Inputs> {
        let at = tpl_at.key("inputs").key("artifacts");
        let mut out = Vec::new();
        for (_, a, a_at) in items(tpl.get("inputs").and_then(|i| i.get("artifacts")), &at) {
            let (Some(name), Some(path)) = (str_at(a, "name"), str_at(a, "path")) else {
                self.report.push(
                    &a_at,
                    "inputs.artifacts",
                    "an input artifact without a name and path is not imported",
                );
                continue;
            };
            let tag = format!("inputs.artifacts.{name}.path");
            match call.artifacts.get(name) {
                Some(from) if is_identifier(name) && path.starts_with('/') => {
                    out.push(InputArtifact {
                        name: name.to_owned(),
                        from: from.clone(),
                        path: path.to_owned(),
                    });
                    let reference = format!("{{{{{tag}}}}}");
                    vars.paths.insert(tag, reference);
                }
                _ => {
                    vars.paths.insert(tag, path.to_owned());
                    match ARTIFACT_SOURCES.iter().find(|s| a.get(**s).is_some()) {
                        Some(source) => self.report.push(
                            &a_at.key(source),
                            format!("artifact {source}"),
                            format!("input artifact {name:?} comes from {source}, which Couler cannot fetch; it is not provided"),
                        ),
                        None if a.get("optional") == Some(&Value::Bool(true)) => {}
                        None => self.report.push(
                            &a_at,
                            "inputs.artifacts",
                            format!("input artifact {name:?} is not passed from an imported step; it is not provided"),
                        ),
                    }
                }
            }
        }
        (!out.is_empty()).then_some(Inputs { artifacts: out })
    }

    fn outputs(&mut self, tpl: &Value, tpl_at: &Ptr, vars: &mut Vars) -> Option<Outputs> {
        let at = tpl_at.key("outputs");
        let outputs = tpl.get("outputs");
        let mut parameters = Vec::new();
        let mut artifacts = Vec::new();
        let mut names = BTreeSet::new();
        for (key, _, k_at) in entries(outputs, &at) {
            if key != "parameters" && key != "artifacts" {
                self.report
                    .push(&k_at, format!("outputs.{key}"), "has no IR equivalent");
            }
        }
        for (_, p, p_at) in items(
            outputs.and_then(|o| o.get("parameters")),
            &at.key("parameters"),
        ) {
            let name = str_at(p, "name").unwrap_or_default();
            let value_from = p.get("valueFrom");
            for (key, _, k_at) in entries(value_from, &p_at.key("valueFrom")) {
                if key != "path" && key != "default" {
                    self.report.push(
                        &k_at,
                        format!("valueFrom.{key}"),
                        format!("output parameter {name:?}: only `valueFrom.path` has an IR form"),
                    );
                }
            }
            for (key, _, k_at) in entries(Some(p), &p_at) {
                if !matches!(key, "name" | "valueFrom" | "description") {
                    self.report.push(
                        &k_at,
                        format!("outputs.parameters.{key}"),
                        format!("output parameter {name:?}: {key:?} has no IR form"),
                    );
                }
            }
            let Some(path) = value_from.and_then(|v| str_at(v, "path")) else {
                continue;
            };
            let path = self.text(path, vars, &p_at.key("valueFrom").key("path")).0;
            if !is_identifier(name) || !path.starts_with('/') || !names.insert(name) {
                self.report.push(
                    &p_at,
                    "outputs.parameters",
                    format!(
                        "output parameter {name:?} needs a unique IR name and an absolute path"
                    ),
                );
                continue;
            }
            let tag = format!("outputs.parameters.{name}.path");
            vars.paths.insert(tag.clone(), format!("{{{{{tag}}}}}"));
            parameters.push(OutputParameter {
                name: name.to_owned(),
                path,
                default: value_from
                    .and_then(|v| v.get("default"))
                    .and_then(scalar)
                    .map(ParamValue),
            });
        }
        for (_, a, a_at) in items(
            outputs.and_then(|o| o.get("artifacts")),
            &at.key("artifacts"),
        ) {
            let name = str_at(a, "name").unwrap_or_default();
            for (key, _, k_at) in entries(Some(a), &a_at) {
                if !matches!(key, "name" | "path") {
                    self.report.push(&k_at, format!("artifact {key}"), format!("output artifact {name:?}: {key:?} has no IR form (Couler stores artifacts itself)"));
                }
            }
            let Some(path) = str_at(a, "path") else {
                continue;
            };
            let path = self.text(path, vars, &a_at.key("path")).0;
            if !is_identifier(name) || !path.starts_with('/') || !names.insert(name) {
                self.report.push(
                    &a_at,
                    "outputs.artifacts",
                    format!("output artifact {name:?} needs a unique IR name and an absolute path"),
                );
                continue;
            }
            let tag = format!("outputs.artifacts.{name}.path");
            vars.paths.insert(tag.clone(), format!("{{{{{tag}}}}}"));
            artifacts.push(OutputArtifact {
                name: name.to_owned(),
                path,
            });
        }
        (!parameters.is_empty() || !artifacts.is_empty()).then_some(Outputs {
            parameters,
            artifacts,
        })
    }

    /// A container or script body, and its resources.
    pub(super) fn container(
        &mut self,
        c: &Value,
        at: &Ptr,
        vars: &Vars,
        script: bool,
        mounts: &Mounts,
    ) -> (Body, Option<Resources>) {
        let mut body = Body::default();
        let mut resources = None;
        for (key, value, k_at) in entries(Some(c), at) {
            match key {
                "name" => {}
                "source" if script => {}
                "image" => {
                    let image = scalar(value).unwrap_or_default();
                    let image = self.text(&image, vars, &k_at).0;
                    body.image = self.image(image, &k_at);
                }
                "command" => body.command = self.strings(value, &k_at, vars),
                "args" if !script => body.args = self.strings(value, &k_at, vars),
                "env" => body.env = self.env(value, &k_at, vars),
                "workingDir" => {
                    let dir = self.text(&scalar(value).unwrap_or_default(), vars, &k_at).0;
                    if dir.starts_with('/') || dir.starts_with("{{") {
                        body.working_dir = Some(dir);
                    } else {
                        self.report.push(
                            &k_at,
                            "workingDir",
                            "a relative working directory has no IR form",
                        );
                    }
                }
                "resources" => resources = self.resources(value, &k_at),
                "volumeMounts" => self.volume_mounts(value, &k_at, mounts),
                other => self.report.push(
                    &k_at,
                    other,
                    format!("the container setting {other:?} has no IR equivalent"),
                ),
            }
        }
        if body.image.trim().is_empty() || body.image.chars().any(char::is_whitespace) {
            self.report.push(
                &at.key("image"),
                "image",
                format!(
                    "{:?} is not an image reference; `busybox` is used",
                    body.image
                ),
            );
            body.image = "busybox".into();
        }
        (body, resources)
    }

    /// The IR takes images literally: a workflow parameter's default is
    /// written in; other references have no IR form and become text.
    fn image(&mut self, image: String, at: &Ptr) -> String {
        if !image.contains("{{") {
            return image;
        }
        let mut out = String::new();
        let mut literal = true;
        for segment in segments(&image) {
            match segment {
                Ok(Segment::Text(t)) => out.push_str(t),
                Ok(Segment::Ref(Ref::WorkflowParameter(p))) => {
                    let default = self
                        .parameters
                        .iter()
                        .find(|x| x.name == p)
                        .and_then(|x| x.default.clone());
                    match default {
                        Some(d) => out.push_str(d.as_str()),
                        None => {
                            literal = false;
                            out.push_str(&format!("%workflow.parameters.{p}%"));
                        }
                    }
                }
                Ok(Segment::Ref(r)) => {
                    literal = false;
                    out.push_str(&format!("%{}%", r.to_string().trim_matches(['{', '}'])));
                }
                Err(_) => {
                    literal = false;
                    out.push('%');
                }
            }
        }
        if literal {
            self.report.push(
                at,
                "image parameter",
                format!("the image {image:?} is fixed to {out:?}, its parameters' defaults"),
            );
        } else {
            self.report.push(at, "image reference", format!("the image {image:?} is chosen at run time, which has no IR form; it is written as {out:?}"));
        }
        out
    }

    fn strings(&mut self, v: &Value, at: &Ptr, vars: &Vars) -> Vec<String> {
        let mut out = Vec::new();
        for (_, s, s_at) in items(Some(v), at) {
            let s = scalar(s).unwrap_or_default();
            out.push(self.text(&s, vars, &s_at).0);
        }
        out
    }

    fn env(&mut self, v: &Value, at: &Ptr, vars: &Vars) -> Vec<EnvVar> {
        let mut out: Vec<EnvVar> = Vec::new();
        for (_, e, e_at) in items(Some(v), at) {
            let name = str_at(e, "name").unwrap_or_default();
            if !is_env_name(name) || out.iter().any(|x| x.name == name) {
                self.report.push(
                    &e_at.key("name"),
                    "env",
                    format!("{name:?} is not a valid or unique IR environment variable name"),
                );
                continue;
            }
            let secret = e.get("valueFrom").map(|from| {
                match (from.get("secretKeyRef"), from.as_object().map(|o| o.len())) {
                    (Some(r), Some(1)) => match (str_at(r, "name"), str_at(r, "key")) {
                        (Some(n), Some(k)) if is_dns_subdomain(n) && is_secret_key(k) => {
                            Some(SecretRef {
                                name: n.to_owned(),
                                key: k.to_owned(),
                            })
                        }
                        _ => None,
                    },
                    _ => None,
                }
            });
            match secret {
                Some(Some(secret)) => out.push(EnvVar {
                    name: name.to_owned(),
                    value: None,
                    secret: Some(secret),
                }),
                Some(None) => {
                    let source = e["valueFrom"]
                        .as_object()
                        .and_then(|o| o.keys().next().cloned())
                        .unwrap_or_default();
                    self.report.push(&e_at.key("valueFrom"), format!("env {source}"), format!("environment variable {name:?}: only `secretKeyRef` (with a literal name and key) has an IR form; the variable is not set"));
                }
                None => {
                    let value = e.get("value").and_then(scalar).unwrap_or_default();
                    let value = self.text(&value, vars, &e_at.key("value")).0;
                    out.push(EnvVar {
                        name: name.to_owned(),
                        value: Some(value),
                        secret: None,
                    });
                }
            }
        }
        out
    }

    pub(super) fn resources(&mut self, v: &Value, at: &Ptr) -> Option<Resources> {
        let mut r = Resources {
            cpu: None,
            memory: None,
            gpu: None,
        };
        let requests = v.get("requests");
        let limits = v.get("limits");
        for (key, _, k_at) in entries(Some(v), at) {
            if key != "requests" && key != "limits" {
                self.report
                    .push(&k_at, format!("resources.{key}"), "has no IR equivalent");
            }
        }
        // Kubernetes requests default to the limits.
        for (kind, map) in [("requests", requests), ("limits", limits)] {
            for (name, value, k_at) in entries(map, &at.key(kind)) {
                let text = scalar(value).unwrap_or_default();
                let requested = requests.and_then(|r| r.get(name));
                if kind == "limits" && requested.is_some() {
                    if requested.and_then(scalar).as_deref() != Some(text.as_str()) {
                        self.report.push(&k_at, "resources.limits", format!("the {name} limit differs from the request; only the request is kept"));
                    }
                    continue;
                }
                let parsed = match name {
                    "cpu" => Cpu::parse(&text)
                        .ok()
                        .filter(|c| c.millis() > 0)
                        .map(|c| r.cpu = Some(c)),
                    "memory" => Memory::parse(&text)
                        .ok()
                        .filter(|m| m.bytes() > 0)
                        .map(|m| r.memory = Some(m)),
                    "nvidia.com/gpu" => text.parse::<u32>().ok().map(|g| r.gpu = Some(g)),
                    _ => None,
                };
                if parsed.is_none() {
                    self.report.push(
                        &k_at,
                        format!("resources {name}"),
                        format!("{name} = {text:?} has no IR form"),
                    );
                }
            }
        }
        (r.cpu.is_some() || r.memory.is_some() || r.gpu.is_some()).then_some(r)
    }

    fn retry(&mut self, v: &Value, at: &Ptr, vars: &Vars) -> Option<Retry> {
        let mut retry = Retry {
            limit: MAX_RETRIES,
            backoff: None,
            on: RetryOn::Always,
        };
        let mut limited = false;
        for (key, value, k_at) in entries(Some(v), at) {
            match key {
                "limit" => match self.number(value, &k_at, vars) {
                    Some(n) if n > MAX_RETRIES as u64 => {
                        self.report.push(
                            &k_at,
                            "retryStrategy.limit",
                            format!("{n} retries are capped at {MAX_RETRIES}"),
                        );
                        limited = true;
                    }
                    Some(n) => {
                        retry.limit = n as u32;
                        limited = true;
                    }
                    None => self
                        .report
                        .push(&k_at, "retryStrategy.limit", "not a whole number"),
                },
                "retryPolicy" => match value.as_str() {
                    Some("Always" | "OnFailure") => retry.on = RetryOn::Always,
                    Some("OnError" | "OnTransientError") => retry.on = RetryOn::Transient,
                    _ => self.report.push(
                        &k_at,
                        "retryStrategy.retryPolicy",
                        format!("{value} has no IR form; failures of any kind are retried"),
                    ),
                },
                "backoff" => retry.backoff = self.backoff(value, &k_at, vars),
                other => self.report.push(
                    &k_at,
                    format!("retryStrategy.{other}"),
                    "has no IR equivalent",
                ),
            }
        }
        if !limited {
            self.report.push(
                at,
                "retryStrategy.limit",
                format!("retries without a limit are capped at {MAX_RETRIES}"),
            );
        }
        Some(retry)
    }

    fn backoff(&mut self, v: &Value, at: &Ptr, vars: &Vars) -> Option<Backoff> {
        let mut duration = None;
        let mut factor = None;
        let mut max_duration = None;
        for (key, value, k_at) in entries(Some(v), at) {
            match key {
                "duration" => duration = self.duration(value, &k_at, vars),
                "cap" => max_duration = self.duration(value, &k_at, vars),
                "factor" => match self.number(value, &k_at, vars) {
                    Some(f @ 1..=10) => factor = Some(f as u32),
                    _ => self.report.push(
                        &k_at,
                        "backoff.factor",
                        "only whole factors from 1 to 10 have an IR form; 2 is used",
                    ),
                },
                "maxDuration" => self.report.push(
                    &k_at,
                    "backoff.maxDuration",
                    "a bound on the total time spent retrying has no IR form",
                ),
                other => {
                    self.report
                        .push(&k_at, format!("backoff.{other}"), "has no IR equivalent")
                }
            }
        }
        let Some(duration) = duration else {
            self.report
                .push(at, "backoff", "a backoff without a duration is not kept");
            return None;
        };
        let max_duration = max_duration.filter(|m| *m >= duration);
        Some(Backoff {
            duration,
            factor,
            max_duration,
        })
    }

    fn timeout(&mut self, tpl: &Value, tpl_at: &Ptr, vars: &Vars) -> Option<Duration> {
        let deadline = tpl.get("activeDeadlineSeconds").and_then(|v| {
            let at = tpl_at.key("activeDeadlineSeconds");
            let secs = self.number(v, &at, vars);
            if secs.is_none() {
                self.report.push(
                    &at,
                    "activeDeadlineSeconds",
                    "not a whole number of seconds",
                );
            }
            secs.map(|s| (Duration(std::time::Duration::from_secs(s)), at))
        });
        let timeout = tpl.get("timeout").and_then(|v| {
            let at = tpl_at.key("timeout");
            self.duration(v, &at, vars).map(|d| (d, at))
        });
        let (d, at) = match (deadline, timeout) {
            (Some(a), Some(b)) => {
                if a.0 <= b.0 {
                    a
                } else {
                    b
                }
            }
            (a, b) => a.or(b)?,
        };
        let secs = d.as_std().as_secs();
        if secs == 0 || secs > MAX_TIMEOUT_SECS {
            self.report.push(
                &at,
                "timeout",
                format!("{d} is outside what the IR allows (0, 30 days]"),
            );
            return None;
        }
        Some(d)
    }

    /// A whole number, from a number or a string (after tag substitution).
    fn number(&mut self, v: &Value, at: &Ptr, vars: &Vars) -> Option<u64> {
        let text = self.text(&scalar(v)?, vars, at).0;
        text.trim().parse().ok()
    }

    fn duration(&mut self, v: &Value, at: &Ptr, vars: &Vars) -> Option<Duration> {
        let text = self.text(&scalar(v)?, vars, at).0;
        match Duration::parse(&text) {
            Ok(d) if !d.as_std().is_zero() => Some(d),
            _ => {
                self.report.push(
                    at,
                    "duration",
                    format!("{text:?} is not a duration the IR accepts"),
                );
                None
            }
        }
    }
}

/// What a container and a script have in common.
#[derive(Default)]
pub(super) struct Body {
    pub image: String,
    pub command: Vec<String>,
    pub args: Vec<String>,
    pub env: Vec<EnvVar>,
    pub working_dir: Option<String>,
}
