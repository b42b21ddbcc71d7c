//! Argo Workflows → IR.
//!
//! | Argo | Couler |
//! |---|---|
//! | `Workflow`, `WorkflowTemplate`, `ClusterWorkflowTemplate`; `CronWorkflow` `workflowSpec` | the workflow; `schedule`/`schedules[0]` and `timezone` → `schedule` |
//! | `metadata.name` / `generateName`, `labels`, description annotation | `name` (as a DNS label), `labels`, `description` |
//! | `spec.arguments.parameters` (`value`, `enum`, `description`); entrypoint inputs | `parameters` (`default`, `enum`); `{{workflow.parameters.x}}` kept |
//! | entrypoint `dag` / `steps` template, nested ones | steps, flattened: a nested task is named `outer-inner` (names lowercased, `-` for other characters, unique, at most 63) and waits for what the outer task waited for; a task after a nested template waits for its last steps |
//! | `dependencies`, `depends` (`A`, `A.Succeeded`, `.Failed`, `.Skipped`, `.Omitted`, …, `!`, `&&`, `\|\|`), step groups | `depends` entries with outcomes (see `argo/depends.rs`): a bare `A` and the step group before are `a \|\| a.skipped && E_A` where `a` can be skipped by its `when`, as Argo runs the step after a skipped one |
//! | `when` (govaluate `==`, `!=`, `<`…, `&&`, `x == a \|\| x == b`) | `when` conditions (`in` for the `\|\|` form); `{{workflow.status}}` values as `succeeded`/`failed` |
//! | `withItems`, `withSequence` (numbers) / `withParam` | `map.items` / `map.from`; `{{item}}`, `{{item.f}}` kept |
//! | `arguments.parameters` → `{{inputs.parameters.p}}` | substituted into the template's text; `{{tasks.X.outputs.result\|parameters.P}}` → `{{steps.x.outputs.…}}` |
//! | `arguments.artifacts` `from` + template `inputs.artifacts` `path` | `inputs.artifacts`; `{{inputs.artifacts.a.path}}` kept |
//! | dag/steps template `outputs` (`valueFrom.parameter`, `from`) | what the inner step's output resolves to |
//! | `container` / `script` templates | `container` / `script`: image (a parameter's default written in), command, args, env (`secretKeyRef` → secret), workingDir, source; `resources.requests` (`limits` when no request) |
//! | template `nodeSelector`, `tolerations` (and the workflow's) | `hints` |
//! | `emptyDir` volumes (the workflow's or a template's) mounted at the directory of a declared input or output path | nothing: engines give each step a fresh writable directory there (reported as keeping the run) |
//! | `outputs.parameters` `valueFrom.path` (+`default`), `outputs.artifacts` `path` | `outputs` |
//! | `retryStrategy` `limit`, `retryPolicy`, `backoff` (`duration`, `factor`, `cap`) | `retry` (`OnError`/`OnTransientError` → `transient`, else `always`; `cap` → `maxDuration`) |
//! | template `activeDeadlineSeconds`, `timeout` | the step's `timeout` |
//! | `spec.activeDeadlineSeconds` | the workflow's `timeout` (the deadline of a run) |
//! | template `memoize` (`maxAge`) | `cache` with `ttl` (`""`: none); Couler keys on the step's exact inputs, not `key` (reported) |
//! | `resource` templates creating a `kubeflow.org` PyTorchJob, TFJob or MPIJob | `job` steps: roles, replicas, per-role image, command, args and resources, env; conditions, `cleanPodPolicy` and restart policies reported |
//! | a steps template that re-runs its one step by calling itself `when …` | `while` (at most 1000 iterations, reported) |
//! | `spec.onExit` | `onExit` steps |
//! | `spec.parallelism`; a template's `parallelism` over one loop (else the entrypoint's) | `parallelism`; `map.parallelism` |
//!
//! Everything else is reported with its JSON pointer. A task that cannot
//! be formed (`templateRef`, other `resource` templates, `suspend`, `http`, daemon
//! templates, other recursion, a `when` with no IR form, …) is left out,
//! and the tasks after it wait for its upstream steps instead; an
//! unresolvable `{{…}}` is replaced by `%…%` text.

mod depends;
mod expand;
mod job;
mod leaf;
mod loops;
mod memo;
mod order;
mod text;
mod vars;
mod volumes;

use super::{ImportError, Imported, Names, Ptr, Report, dns_label};
use couler_ir::names::{is_identifier, is_label_key, is_label_value};
use couler_ir::scalar::{Duration, ParamValue};
use couler_ir::{Code, Hints, Parameter, Schedule, Step, Workflow};
use depends::StepFacts;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

const KINDS: &[&str] = &[
    "Workflow",
    "WorkflowTemplate",
    "ClusterWorkflowTemplate",
    "CronWorkflow",
];

/// Imports one Argo document (the first of a supported kind in `yaml`).
pub fn argo(yaml: &str) -> Result<Imported, ImportError> {
    let mut options = serde_saphyr::Options::default();
    options.strict_booleans = true;
    options.leading_zero_numbers_as_strings = true;
    let docs: Vec<Value> = serde_saphyr::from_multiple_with_options(yaml, options)
        .map_err(|e| ImportError::Syntax(e.to_string()))?;
    let kind_of = |d: &Value| {
        d.get("kind")
            .and_then(Value::as_str)
            .unwrap_or("?")
            .to_owned()
    };
    let Some(index) = docs.iter().position(|d| {
        KINDS.contains(&kind_of(d).as_str())
            && str_at(d, "apiVersion").is_some_and(|v| v.starts_with("argoproj.io/"))
    }) else {
        let kinds: Vec<String> = docs.iter().map(kind_of).collect();
        return Err(ImportError::NotAWorkflow(if kinds.is_empty() {
            "the document is empty".into()
        } else {
            format!("kinds: {}", kinds.join(", "))
        }));
    };
    let doc = &docs[index];
    let mut report = Report::default();
    for (i, other) in docs.iter().enumerate().filter(|(i, _)| *i != index) {
        report.push(
            &Ptr::root(),
            "document",
            format!(
                "document {} ({}) is not imported; only the {} is",
                i + 1,
                kind_of(other),
                kind_of(doc)
            ),
        );
    }
    let cron = kind_of(doc) == "CronWorkflow";
    let root_spec = doc.get("spec").unwrap_or(&Value::Null);
    let (spec, spec_at) = if cron {
        (
            root_spec.get("workflowSpec").unwrap_or(&Value::Null),
            Ptr::root().key("spec").key("workflowSpec"),
        )
    } else {
        (root_spec, Ptr::root().key("spec"))
    };
    let entrypoint = str_at(spec, "entrypoint").ok_or_else(|| {
        ImportError::NoEntrypoint(match spec.get("workflowTemplateRef") {
            Some(r) => format!(
                "the workflow has no entrypoint of its own: it runs the WorkflowTemplate {}",
                r.get("name").and_then(Value::as_str).unwrap_or("?")
            ),
            None => "spec.entrypoint is missing".into(),
        })
    })?;

    let mut importer = Importer::new(spec, &spec_at, report);
    if !importer.templates.contains_key(entrypoint) {
        return Err(ImportError::NoEntrypoint(format!(
            "the entrypoint template {entrypoint:?} is not in the document"
        )));
    }
    let (name, description, labels) = importer.metadata(doc);
    let schedule = if cron { importer.cron(root_spec) } else { None };
    importer.spec(spec, &spec_at);
    importer.run(entrypoint, false);
    if let Some(exit) = str_at(spec, "onExit") {
        if importer.templates.contains_key(exit) {
            importer.run(exit, true);
        } else {
            importer.report.push(
                &spec_at.key("onExit"),
                "onExit",
                format!("the exit-handler template {exit:?} is not in the document"),
            );
        }
    }
    importer.finish(Workflow {
        api_version: couler_ir::API_VERSION.to_owned(),
        name,
        description,
        labels,
        parameters: Vec::new(),
        steps: Vec::new(),
        groups: Vec::new(),
        on_exit: Vec::new(),
        parallelism: None,
        schedule,
        timeout: None,
    })
}

fn str_at<'v>(v: &'v Value, key: &str) -> Option<&'v str> {
    v.get(key).and_then(Value::as_str)
}

/// A scalar as Argo passes it on: strings as they are, numbers and
/// booleans as their text.
fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The (key, value, pointer) entries of a mapping, empty for anything else.
fn entries<'v>(v: Option<&'v Value>, at: &Ptr) -> Vec<(&'v str, &'v Value, Ptr)> {
    v.and_then(Value::as_object)
        .map(|o| o.iter().map(|(k, v)| (k.as_str(), v, at.key(k))).collect())
        .unwrap_or_default()
}

/// The (index, item, pointer) entries of a list, empty for anything else.
fn items<'v>(v: Option<&'v Value>, at: &Ptr) -> Vec<(usize, &'v Value, Ptr)> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .enumerate()
                .map(|(i, v)| (i, v, at.index(i)))
                .collect()
        })
        .unwrap_or_default()
}

/// The state of one import.
struct Importer<'d> {
    templates: HashMap<&'d str, (&'d Value, Ptr)>,
    report: Report,
    names: Names,
    steps: Vec<Step>,
    on_exit: Vec<Step>,
    parameters: Vec<Parameter>,
    parallelism: Option<u32>,
    /// `spec.activeDeadlineSeconds`.
    timeout: Option<Duration>,
    /// The workflow's own `nodeSelector` and `tolerations`, for every step.
    hints: Hints,
    /// Templates being expanded, to stop recursion.
    stack: Vec<String>,
    facts: HashMap<String, StepFacts>,
    /// Where the kept schedule came from.
    schedule_at: Ptr,
    /// The workflow's `emptyDir` volumes, by name.
    empty_dirs: HashSet<String>,
}

impl<'d> Importer<'d> {
    fn new(spec: &'d Value, spec_at: &Ptr, report: Report) -> Self {
        let mut templates = HashMap::new();
        for (_, t, at) in items(spec.get("templates"), &spec_at.key("templates")) {
            if let Some(name) = str_at(t, "name") {
                templates.entry(name).or_insert((t, at));
            }
        }
        Importer {
            templates,
            report,
            names: Names::default(),
            steps: Vec::new(),
            on_exit: Vec::new(),
            parameters: Vec::new(),
            parallelism: None,
            timeout: None,
            hints: Hints {
                node_selector: BTreeMap::new(),
                tolerations: Vec::new(),
            },
            stack: Vec::new(),
            facts: HashMap::new(),
            schedule_at: Ptr::root(),
            empty_dirs: HashSet::new(),
        }
    }

    /// Name, description and labels from `metadata`.
    fn metadata(&mut self, doc: &Value) -> (String, Option<String>, BTreeMap<String, String>) {
        let at = Ptr::root().key("metadata");
        let meta = doc.get("metadata").unwrap_or(&Value::Null);
        let raw = str_at(meta, "name")
            .or_else(|| str_at(meta, "generateName"))
            .unwrap_or("imported");
        let name = dns_label(raw, 63);
        let mut description = None;
        let mut labels = BTreeMap::new();
        for (key, value, path) in entries(Some(meta), &at) {
            match key {
                "name" | "generateName" => {}
                "labels" => {
                    for (k, v, p) in entries(Some(value), &path) {
                        match scalar(v) {
                            Some(v) if is_label_key(k) && is_label_value(&v) => {
                                labels.insert(k.to_owned(), v);
                            }
                            _ => self
                                .report
                                .push(&p, "label", "not a valid Kubernetes label"),
                        }
                    }
                }
                "annotations" => {
                    for (k, v, p) in entries(Some(value), &path) {
                        if k == "workflows.argoproj.io/description" {
                            description = v.as_str().map(|d| d.trim().to_owned());
                        } else {
                            self.report.push(
                                &p,
                                "annotation",
                                format!("annotation {k:?} is not kept"),
                            );
                        }
                    }
                }
                other => self.report.push(
                    &path,
                    other,
                    format!("metadata.{other} has no IR equivalent"),
                ),
            }
        }
        (name, description, labels)
    }

    /// A CronWorkflow's schedule; its other settings are reported.
    fn cron(&mut self, spec: &Value) -> Option<Schedule> {
        let at = Ptr::root().key("spec");
        let mut crons = Vec::new();
        let mut timezone = None;
        for (key, value, path) in entries(Some(spec), &at) {
            match (key, value) {
                ("workflowSpec", _) => {}
                ("schedule", Value::String(s)) => crons.push((s.clone(), path)),
                ("schedules", _) => {
                    for (_, s, p) in items(Some(value), &path) {
                        crons.extend(s.as_str().map(|s| (s.to_owned(), p)));
                    }
                }
                ("timezone", Value::String(tz)) if !tz.is_empty() => timezone = Some(tz.clone()),
                ("concurrencyPolicy", Value::String(p)) if p == "Allow" => {}
                ("suspend", Value::Bool(false)) => {}
                ("workflowMetadata", _) => self.report.push(
                    &path,
                    "workflowMetadata",
                    "labels and annotations of the workflows a CronWorkflow starts are not kept",
                ),
                (other, _) => self.report.push(
                    &path,
                    other,
                    format!("the CronWorkflow setting {other:?} has no IR equivalent"),
                ),
            }
        }
        let mut crons = crons.into_iter();
        let (cron, at) = crons.next()?;
        self.schedule_at = at;
        for (extra, path) in crons {
            self.report.push(
                &path,
                "schedules",
                format!("only the first schedule is kept; {extra:?} is not"),
            );
        }
        Some(Schedule { cron, timezone })
    }

    /// Workflow-level settings of the spec.
    fn spec(&mut self, spec: &Value, at: &Ptr) {
        for (key, value, path) in entries(Some(spec), at) {
            match key {
                "entrypoint" | "templates" | "onExit" => {}
                "arguments" => self.arguments(value, &path),
                "parallelism" => match value.as_u64().and_then(|p| u32::try_from(p).ok()) {
                    Some(p) if p > 0 => self.parallelism = Some(p),
                    _ => self
                        .report
                        .push(&path, "parallelism", "not a positive whole number"),
                },
                "activeDeadlineSeconds" => self.timeout = self.deadline(value, &path),
                "nodeSelector" => {
                    self.hints.node_selector = self.node_selector(value, &path);
                }
                "tolerations" => self.hints.tolerations = self.tolerations(value, &path),
                "volumes" => self.empty_dirs = self.volumes(value, &path),
                other => self.report.push(
                    &path,
                    other,
                    format!("the workflow setting {other:?} has no IR equivalent"),
                ),
            }
        }
    }

    /// `spec.activeDeadlineSeconds` as the workflow's deadline.
    fn deadline(&mut self, v: &Value, at: &Ptr) -> Option<Duration> {
        let secs = scalar(v).and_then(|s| s.trim().parse::<u64>().ok());
        match secs {
            Some(s) if s > 0 && s <= leaf::MAX_TIMEOUT_SECS => {
                Some(Duration(std::time::Duration::from_secs(s)))
            }
            _ => {
                self.report.push(
                    at,
                    "activeDeadlineSeconds",
                    format!("{v} is not a whole number of seconds in (0, 30 days]; the run has no deadline"),
                );
                None
            }
        }
    }

    fn arguments(&mut self, args: &Value, at: &Ptr) {
        for (key, value, path) in entries(Some(args), at) {
            if key != "parameters" {
                self.report.push(
                    &path,
                    format!("arguments.{key}"),
                    "workflow arguments other than parameters have no IR equivalent",
                );
                continue;
            }
            for (_, p, p_at) in items(Some(value), &path) {
                let Some(name) = str_at(p, "name") else {
                    continue;
                };
                if !is_identifier(name) || self.parameters.iter().any(|x| x.name == name) {
                    self.report.push(
                        &p_at.key("name"),
                        "parameter",
                        format!("{name:?} is not a valid or unique IR parameter name"),
                    );
                    continue;
                }
                let mut parameter = Parameter {
                    name: name.to_owned(),
                    default: None,
                    allowed: Vec::new(),
                    description: None,
                };
                for (k, v, at) in entries(Some(p), &p_at) {
                    match k {
                        "name" => {}
                        "value" | "default" => parameter.default = scalar(v).map(ParamValue),
                        "enum" => {
                            parameter.allowed =
                                v.as_array().into_iter().flatten().filter_map(scalar).map(ParamValue).collect()
                        }
                        "description" => parameter.description = scalar(v),
                        other => self.report.push(
                            &at,
                            format!("parameter.{other}"),
                            format!("{other:?} of a workflow parameter has no IR equivalent; the parameter is required instead"),
                        ),
                    }
                }
                if let Some(d) = &parameter.default
                    && !parameter.allowed.is_empty()
                    && !parameter.allowed.contains(d)
                {
                    parameter.allowed.push(d.clone());
                }
                self.parameters.push(parameter);
            }
        }
    }

    fn node_selector(&mut self, v: &Value, at: &Ptr) -> BTreeMap<String, String> {
        let mut out = BTreeMap::new();
        for (k, v, p) in entries(Some(v), at) {
            match scalar(v) {
                Some(v) if is_label_key(k) && is_label_value(&v) => {
                    out.insert(k.to_owned(), v);
                }
                _ => self
                    .report
                    .push(&p, "nodeSelector", "not a valid label selector entry"),
            }
        }
        out
    }

    /// Kubernetes tolerations, passed through; each must be a mapping.
    fn tolerations(&mut self, v: &Value, at: &Ptr) -> Vec<Value> {
        let mut out = Vec::new();
        for (_, t, t_at) in items(Some(v), at) {
            if t.is_object() {
                out.push(t.clone());
            } else {
                self.report
                    .push(&t_at, "tolerations", "a toleration must be a mapping");
            }
        }
        out
    }

    /// Declares a workflow parameter read but not declared (Argo accepts
    /// it at submission); `false` when the name cannot be an IR parameter.
    fn workflow_parameter(&mut self, name: &str, at: &Ptr) -> bool {
        if self.parameters.iter().any(|p| p.name == name) {
            return true;
        }
        if !is_identifier(name) {
            return false;
        }
        self.report.push(
            at,
            "undeclared-parameter",
            format!(
                "workflow parameter {name:?} is read but not declared; it is declared as required"
            ),
        );
        self.parameters.push(Parameter {
            name: name.to_owned(),
            default: None,
            allowed: Vec::new(),
            description: None,
        });
        true
    }

    /// Assembles the workflow, validates it and mends what the IR checks
    /// across steps (a `when` reading a step that is not upstream).
    fn finish(mut self, mut wf: Workflow) -> Result<Imported, ImportError> {
        wf.parameters = std::mem::take(&mut self.parameters);
        wf.steps = std::mem::take(&mut self.steps);
        wf.on_exit = std::mem::take(&mut self.on_exit);
        wf.parallelism = self.parallelism;
        wf.timeout = self.timeout;
        if wf.steps.is_empty() {
            return Err(ImportError::Nothing {
                unsupported: self.report.into_items(),
            });
        }
        let limits = couler_ir::Limits::default();
        for _ in 0..3 {
            let problems = match couler_ir::validate(&wf, &limits) {
                Ok(_) => {
                    return Ok(Imported {
                        workflow: wf,
                        unsupported: self.report.into_items(),
                    });
                }
                Err(problems) => problems,
            };
            let mut mended = false;
            for p in problems.iter() {
                if p.code == Code::WhenNotUpstream {
                    mended |= add_when_reads(&mut wf, &p.path);
                } else if p.path.starts_with("/schedule") && wf.schedule.is_some() {
                    self.report.push(
                        &self.schedule_at,
                        "schedule",
                        format!("{}; the schedule is not kept", p.message),
                    );
                    wf.schedule = None;
                    mended = true;
                }
            }
            if !mended {
                return Err(ImportError::Invalid(problems));
            }
        }
        couler_ir::validate(&wf, &limits).map_err(ImportError::Invalid)?;
        Ok(Imported {
            workflow: wf,
            unsupported: self.report.into_items(),
        })
    }
}

/// Makes the steps a `when` reads (at `/steps/N/when/…`) dependencies of
/// step N, as Argo orders a task after the tasks its `when` reads.
fn add_when_reads(wf: &mut Workflow, path: &str) -> bool {
    let mut parts = path.trim_start_matches('/').split('/');
    let (Some(list), Some(index)) = (
        parts.next(),
        parts.next().and_then(|i| i.parse::<usize>().ok()),
    ) else {
        return false;
    };
    let steps = match list {
        "steps" => &mut wf.steps,
        "onExit" => &mut wf.on_exit,
        _ => return false,
    };
    let Some(step) = steps.get_mut(index) else {
        return false;
    };
    let reads: HashSet<String> = step
        .when
        .iter()
        .flat_map(|c| couler_ir::refs::references(&c.input))
        .filter_map(|r| r.ok()?.step().map(str::to_owned))
        .collect();
    let mut changed = false;
    for read in reads {
        if read != step.name && !step.depends.contains(&read) {
            step.depends.push(read);
            changed = true;
        }
    }
    changed
}
