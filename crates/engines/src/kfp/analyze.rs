//! The first pass: every `{{…}}` reference of every step that runs, turned
//! into KFP placeholders, and the inputs ("channels") and outputs that
//! wiring them needs. Reused steps' outputs become literals here.

use super::cel;
use super::unsupported;
use crate::EngineError;
use couler_ir::refs::{Ref, Segment, segments, sole_reference};
use couler_ir::{Condition, EnvVar, SecretRef, Step, StepKind};
use couler_optimizer::{Action, Plan, ReuseStatus, StepOutputs};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write;

/// Where a reference is read: decides which wrapper level needs the input.
pub const TEXT: u8 = 1;
pub const INNER_COND: u8 = 2;
pub const OUTER_COND: u8 = 4;
pub const FROM: u8 = 8;

/// The name of the exit handler's `PipelineTaskFinalStatus` input, as the
/// KFP SDK names it.
pub const STATUS_INPUT: &str = "status";

/// Turns the final status struct into Couler's `{{workflow.status}}` word.
pub const STATUS_SELECTOR: &str = "struct_value.state == 'SUCCEEDED' ? 'succeeded' : (struct_value.state == 'FAILED' ? 'failed' : (struct_value.state == 'CANCELED' ? 'cancelled' : struct_value.state))";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamSource {
    /// A running step's output parameter (or its stdout result).
    Output { producer: usize, key: String },
    /// `{{workflow.status}}` in an exit handler.
    Status,
    /// `{{item}}` or `{{item.FIELD}}`.
    Item { field: Option<String> },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArtifactSource {
    Output {
        producer: usize,
        key: String,
    },
    /// A reused step's stored artifact, brought in by an importer task.
    Import {
        importer: String,
    },
}

#[derive(Debug, Clone)]
pub struct ParamUse {
    pub source: ParamSource,
    /// `TEXT | INNER_COND | OUTER_COND | FROM`.
    pub at: u8,
}

/// An environment variable as the container gets it.
#[derive(Debug, Clone)]
pub enum Env<'a> {
    Value(Cow<'a, str>),
    /// Holds placeholders, which KFP fills only in command and args: the
    /// wrapper exports it from an argument.
    FromArg(Cow<'a, str>),
    Secret(&'a SecretRef),
}

#[derive(Debug, Clone)]
pub enum Items {
    Raw(String),
    From(String),
}

/// One step that runs, rendered. Text without references is borrowed
/// from the plan (most of it: a 10,000-step pipeline is mostly text).
#[derive(Debug)]
pub struct StepIo<'a> {
    /// Command and args (containers); for scripts, the interpreter.
    pub command: Vec<Cow<'a, str>>,
    pub args: Vec<Cow<'a, str>>,
    pub source: Option<Cow<'a, str>>,
    pub env: Vec<(&'a str, Env<'a>)>,
    pub working_dir: Option<Cow<'a, str>>,
    /// `when` outside the fan-out (or on a plain step), and per item.
    pub outer_cond: Option<String>,
    pub inner_cond: Option<String>,
    pub items: Option<Items>,
    /// Parameter inputs by channel name.
    pub params: BTreeMap<String, ParamUse>,
    /// Artifact inputs by input name (declared inputs and channels).
    pub artifacts: BTreeMap<String, ArtifactSource>,
    /// The loop item input, for a `map` step.
    pub item_input: Option<String>,
}

/// An output another step reads.
#[derive(Debug, Clone)]
pub struct Export {
    pub channel: String,
    pub artifact: bool,
    /// Read by an exit handler across the exit-handler boundary.
    pub by_exit: bool,
}

/// An importer task for a reused step's artifact.
#[derive(Debug, Clone)]
pub struct ImportSpec {
    pub uri: String,
    pub digest: String,
    /// Needed in the main DAG and/or the exit-handler DAG.
    pub in_main: bool,
    pub in_exit: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum ChannelId {
    Output(usize, String),
    Item(usize, Option<String>),
    Status,
}

/// Unique names: task/component bases and `pipelinechannel--…` inputs.
#[derive(Default)]
pub struct Names {
    taken: HashSet<String>,
}

impl Names {
    pub fn reserve(&mut self, name: &str) {
        self.taken.insert(name.to_owned());
    }

    pub fn unique(&mut self, base: String) -> String {
        if self.taken.insert(base.clone()) {
            return base;
        }
        (2..)
            .map(|n| format!("{base}-{n}"))
            .find(|c| self.taken.insert(c.clone()))
            .expect("some suffix is free")
    }
}

pub struct Analysis<'a> {
    pub plan: &'a Plan,
    pub dag: Cow<'a, couler_ir::Dag>,
    /// Plan index of each step name.
    pub index: HashMap<&'a str, usize>,
    /// Both main steps and exit handlers run: main steps go into an exit
    /// handler group.
    pub exit_handler: bool,
    pub bases: Names,
    /// The stdout output key of each step.
    pub result_keys: Vec<String>,
    /// Rendered steps (`None` for reused ones).
    pub io: Vec<Option<StepIo<'a>>>,
    /// Outputs other steps read, by producer and container output key.
    pub exports: Vec<BTreeMap<String, Export>>,
    /// Container outputs typed `LIST` because a `map` reads them.
    pub list_outputs: HashSet<(usize, String)>,
    pub importers: BTreeMap<String, ImportSpec>,
    channels: HashMap<ChannelId, String>,
    channel_names: Names,
    import_names: HashMap<(usize, &'a str), String>,
}

impl<'a> Analysis<'a> {
    pub fn new(plan: &'a Plan) -> Result<Analysis<'a>, EngineError> {
        let dag = crate::compile::dag(plan)?;
        let n = plan.steps.len();
        let mut index = HashMap::with_capacity(n);
        let mut bases = Names::default();
        let mut result_keys = Vec::with_capacity(n);
        for i in 0..n {
            let step = plan.ir_step(i);
            index.insert(step.name.as_str(), i);
            bases.reserve(&step.name);
            result_keys.push(result_key(step));
        }
        let runs = |exit: bool| {
            plan.steps
                .iter()
                .any(|s| s.exit_handler == exit && matches!(s.action, Action::Run))
        };
        Ok(Analysis {
            plan,
            dag,
            index,
            exit_handler: runs(false) && runs(true),
            bases,
            result_keys,
            io: Vec::new(),
            exports: vec![BTreeMap::new(); n],
            list_outputs: HashSet::new(),
            importers: BTreeMap::new(),
            channels: HashMap::new(),
            channel_names: Names::default(),
            import_names: HashMap::new(),
        })
    }

    pub fn step(&self, i: usize) -> &'a Step {
        self.plan.ir_step(i)
    }

    pub fn runs(&self, i: usize) -> bool {
        matches!(self.plan.steps[i].action, Action::Run)
    }

    pub fn is_exit(&self, i: usize) -> bool {
        self.plan.steps[i].exit_handler
    }

    /// Steps behind a step that an earlier attempt skipped are skipped too.
    pub fn upstream_skipped(&self, i: usize) -> bool {
        let (graph, offset) = self.graph_of(i);
        graph.upstream((i - offset) as u32).iter().any(|&u| {
            matches!(
                self.plan.steps[u as usize + offset].action,
                Action::Reuse {
                    status: ReuseStatus::Skipped,
                    ..
                }
            )
        })
    }

    /// The step's graph and the plan index of its node 0.
    pub fn graph_of(&self, i: usize) -> (&couler_ir::Graph, usize) {
        if self.is_exit(i) {
            (&self.dag.on_exit, self.plan.workflow.steps.len())
        } else {
            (&self.dag.steps, 0)
        }
    }

    /// Renders every step that runs, in plan order.
    pub fn scan(&mut self) -> Result<(), EngineError> {
        for i in 0..self.plan.steps.len() {
            let io = if self.runs(i) {
                Some(self.scan_step(i)?)
            } else {
                None
            };
            self.io.push(io);
        }
        Ok(())
    }

    fn channel(&mut self, id: ChannelId) -> String {
        if let Some(name) = self.channels.get(&id) {
            return name.clone();
        }
        let base = match &id {
            ChannelId::Output(p, key) => {
                format!("pipelinechannel--{}-{key}", self.step(*p).name)
            }
            ChannelId::Item(c, None) => {
                format!("pipelinechannel--{}-loop-item", self.step(*c).name)
            }
            ChannelId::Item(c, Some(field)) => format!(
                "pipelinechannel--{}-loop-item-{}",
                self.step(*c).name,
                sanitize_field(field)
            ),
            ChannelId::Status => "pipelinechannel--workflow-status".to_owned(),
        };
        let name = self.channel_names.unique(base);
        self.channels.insert(id, name.clone());
        name
    }

    fn scan_step(&mut self, c: usize) -> Result<StepIo<'a>, EngineError> {
        let step = self.step(c);
        let map = step.map.as_ref();
        let per_item_when = map.is_some() && reads_item(&step.when);
        let mut s = Scan {
            a: self,
            c,
            step,
            io: StepIo {
                command: Vec::new(),
                args: Vec::new(),
                source: None,
                env: Vec::new(),
                working_dir: None,
                outer_cond: None,
                inner_cond: None,
                items: None,
                params: BTreeMap::new(),
                artifacts: BTreeMap::new(),
                item_input: None,
            },
        };
        let (command, args, env, working_dir) = match step.kind() {
            Some(StepKind::Container(k)) => (&k.command[..], &k.args[..], &k.env, &k.working_dir),
            Some(StepKind::Script(k)) => {
                s.io.source = Some(s.text(&k.source, TEXT)?);
                (&k.command[..], &[][..], &k.env, &k.working_dir)
            }
            Some(StepKind::Job(_)) | None => {
                return Err(unsupported(format!(
                    "step `{}`: distributed training jobs (`job`); a KFP v2 pipeline runs containers, and launching training-operator jobs needs a launcher component of its own",
                    step.name
                )));
            }
        };
        s.io.command = s.texts(command)?;
        s.io.args = s.texts(args)?;
        s.io.env = s.env(env)?;
        s.io.working_dir = working_dir
            .as_deref()
            .map(|d| s.text(d, TEXT))
            .transpose()?;
        if let Some(inputs) = &step.inputs {
            for input in &inputs.artifacts {
                let Some(Ok(Ref::StepArtifact(p, a))) = sole_reference(&input.from) else {
                    return Err(EngineError::Other(format!(
                        "step `{}`: input artifact `{}` has no valid `from`",
                        step.name, input.name
                    )));
                };
                let source = s.artifact_source(p, a)?;
                s.io.artifacts.insert(input.name.clone(), source);
            }
        }
        if let Some(map) = map {
            s.io.item_input = Some(s.a.channel(ChannelId::Item(c, None)));
            s.io.items = Some(s.items(map)?);
        }
        let mut outer = Vec::new();
        if s.a.upstream_skipped(c) {
            outer.push("false".to_owned());
        }
        let at = if per_item_when {
            INNER_COND
        } else {
            OUTER_COND
        };
        let mut conds = Vec::with_capacity(step.when.len());
        for cond in &step.when {
            conds.push(s.condition(cond, at)?);
        }
        if per_item_when {
            s.io.inner_cond = cel::all(&conds);
        } else {
            outer.extend(conds);
        }
        s.io.outer_cond = cel::all(&outer);
        Ok(s.io)
    }
}

/// One step being rendered.
struct Scan<'s, 'a> {
    a: &'s mut Analysis<'a>,
    c: usize,
    step: &'a Step,
    io: StepIo<'a>,
}

/// A reference resolved for one use.
enum Resolved {
    Literal(String),
    Param(String),
    Artifact(String),
    Placeholder(String),
}

impl<'a> Scan<'_, 'a> {
    fn name(&self) -> &'a str {
        &self.step.name
    }

    fn texts(&mut self, list: &'a [String]) -> Result<Vec<Cow<'a, str>>, EngineError> {
        list.iter().map(|s| self.text(s, TEXT)).collect()
    }

    /// `s` with every reference replaced by a KFP placeholder or a literal;
    /// borrowed when it has none.
    fn text(&mut self, s: &'a str, at: u8) -> Result<Cow<'a, str>, EngineError> {
        if !couler_ir::refs::has_references(s) {
            return Ok(Cow::Borrowed(s));
        }
        let mut out = String::with_capacity(s.len() + 32);
        for seg in segments(s) {
            match seg.map_err(|e| EngineError::Other(e.to_string()))? {
                Segment::Text(t) => out.push_str(t),
                Segment::Ref(r) => match self.resolve(r, at)? {
                    Resolved::Literal(v) | Resolved::Placeholder(v) => out.push_str(&v),
                    Resolved::Param(ch) => {
                        let _ = write!(out, "{{{{$.inputs.parameters['{ch}']}}}}");
                    }
                    Resolved::Artifact(ch) => {
                        let _ = write!(out, "{{{{$.inputs.artifacts['{ch}'].uri}}}}");
                    }
                },
            }
        }
        Ok(Cow::Owned(out))
    }

    fn env(&mut self, env: &'a [EnvVar]) -> Result<Vec<(&'a str, Env<'a>)>, EngineError> {
        let mut out = Vec::with_capacity(env.len());
        for var in env {
            let value = match (&var.value, &var.secret) {
                (_, Some(secret)) => Env::Secret(secret),
                (Some(v), None) => {
                    let rendered = self.text(v, TEXT)?;
                    if rendered.contains("{{$.") {
                        Env::FromArg(rendered)
                    } else {
                        Env::Value(rendered)
                    }
                }
                (None, None) => Env::Value(Cow::Borrowed("")),
            };
            out.push((var.name.as_str(), value));
        }
        Ok(out)
    }

    fn use_param(&mut self, channel: &str, source: ParamSource, at: u8) {
        self.io
            .params
            .entry(channel.to_owned())
            .and_modify(|u| u.at |= at)
            .or_insert(ParamUse { source, at });
    }

    fn reused(&self, p: usize) -> Option<&'a StepOutputs> {
        match &self.a.plan.steps[p].action {
            Action::Reuse { outputs, .. } => Some(outputs),
            Action::Run => None,
        }
    }

    fn producer(&self, name: &str) -> Result<usize, EngineError> {
        let p = *self.a.index.get(name).ok_or_else(|| {
            EngineError::Other(format!(
                "step `{}` reads unknown step `{name}`",
                self.name()
            ))
        })?;
        if p == self.c {
            return Err(unsupported(format!(
                "step `{}` reads its own outputs, which only a `while` loop may",
                self.name()
            )));
        }
        Ok(p)
    }

    fn export(&mut self, p: usize, key: &str, artifact: bool) -> String {
        let channel = self.a.channel(ChannelId::Output(p, key.to_owned()));
        let by_exit = self.a.is_exit(self.c) && !self.a.is_exit(p);
        let export = self.a.exports[p]
            .entry(key.to_owned())
            .or_insert_with(|| Export {
                channel: channel.clone(),
                artifact,
                by_exit: false,
            });
        export.by_exit |= by_exit;
        channel
    }

    fn resolve(&mut self, r: Ref<'a>, at: u8) -> Result<Resolved, EngineError> {
        let step = self.name();
        Ok(match r {
            Ref::StepResult(p) | Ref::StepParameter(p, _) => {
                let producer = self.producer(p)?;
                if let Some(outputs) = self.reused(producer) {
                    let value = match r {
                        Ref::StepParameter(_, k) => outputs.parameters.get(k),
                        _ => outputs.result.as_ref(),
                    };
                    return value.cloned().map(Resolved::Literal).ok_or_else(|| {
                        EngineError::Other(format!(
                            "step `{step}` reads {r}, but the reused result of `{p}` has no such output"
                        ))
                    });
                }
                let key = match r {
                    Ref::StepParameter(_, k) => k.to_owned(),
                    _ => self.a.result_keys[producer].clone(),
                };
                let ch = self.export(producer, &key, false);
                if at == FROM {
                    self.a.list_outputs.insert((producer, key.clone()));
                }
                self.use_param(&ch, ParamSource::Output { producer, key }, at);
                Resolved::Param(ch)
            }
            Ref::StepArtifact(p, a) => {
                let producer = self.producer(p)?;
                if let Some(outputs) = self.reused(producer) {
                    let stored = outputs.artifacts.get(a).ok_or_else(|| {
                        EngineError::Other(format!(
                            "step `{step}` reads {r}, but the reused result of `{p}` has no such artifact"
                        ))
                    })?;
                    return Ok(Resolved::Literal(stored.location.clone()));
                }
                self.not_mapped(producer, a)?;
                let ch = self.export(producer, a, true);
                self.io.artifacts.insert(
                    ch.clone(),
                    ArtifactSource::Output {
                        producer,
                        key: a.to_owned(),
                    },
                );
                Resolved::Artifact(ch)
            }
            Ref::Item(field) => {
                let ch = self
                    .a
                    .channel(ChannelId::Item(self.c, field.map(str::to_owned)));
                self.use_param(
                    &ch,
                    ParamSource::Item {
                        field: field.map(str::to_owned),
                    },
                    at,
                );
                Resolved::Param(ch)
            }
            Ref::WorkflowStatus if self.a.exit_handler => {
                let ch = self.a.channel(ChannelId::Status);
                self.use_param(&ch, ParamSource::Status, at);
                Resolved::Param(ch)
            }
            // Every main step was reused (none failed): the run succeeded.
            Ref::WorkflowStatus => Resolved::Literal("succeeded".to_owned()),
            Ref::WorkflowName => Resolved::Literal(self.a.plan.workflow.name.clone()),
            Ref::InputArtifactPath(a) => {
                Resolved::Placeholder(format!("{{{{$.inputs.artifacts['{a}'].path}}}}"))
            }
            Ref::OutputParameterPath(p) => {
                Resolved::Placeholder(format!("{{{{$.outputs.parameters['{p}'].output_file}}}}"))
            }
            Ref::OutputArtifactPath(a) => {
                Resolved::Placeholder(format!("{{{{$.outputs.artifacts['{a}'].path}}}}"))
            }
            Ref::WorkflowParameter(p) => {
                return Err(EngineError::Other(format!(
                    "step `{step}`: workflow parameter `{p}` was not resolved by the planner"
                )));
            }
            Ref::TrialParameter(_) | Ref::TrialBudget => {
                return Err(unsupported(format!(
                    "step `{step}`: {r} outside a planned trial; the scheduler runs hyperparameter trials in stages"
                )));
            }
        })
    }

    /// Where an artifact of step `p` comes from, registering what wiring it needs.
    fn artifact_source(&mut self, p: &'a str, a: &'a str) -> Result<ArtifactSource, EngineError> {
        let producer = self.producer(p)?;
        if let Some(outputs) = self.reused(producer) {
            let stored = outputs.artifacts.get(a).ok_or_else(|| {
                EngineError::Other(format!(
                    "step `{}` reads artifact `{a}` of `{p}`, whose reused result has no such artifact",
                    self.name()
                ))
            })?;
            let importer = match self.a.import_names.get(&(producer, a)) {
                Some(name) => name.clone(),
                None => {
                    let name = self.a.bases.unique(format!("importer-{p}-{a}"));
                    self.a.import_names.insert((producer, a), name.clone());
                    name
                }
            };
            let exit = self.a.is_exit(self.c) && self.a.exit_handler;
            let spec = self
                .a
                .importers
                .entry(importer.clone())
                .or_insert_with(|| ImportSpec {
                    uri: stored.location.clone(),
                    digest: stored.digest.clone(),
                    in_main: false,
                    in_exit: false,
                });
            if exit {
                spec.in_exit = true;
            } else {
                spec.in_main = true;
            }
            return Ok(ArtifactSource::Import { importer });
        }
        self.not_mapped(producer, a)?;
        self.export(producer, a, true);
        Ok(ArtifactSource::Output {
            producer,
            key: a.to_owned(),
        })
    }

    fn not_mapped(&self, producer: usize, artifact: &str) -> Result<(), EngineError> {
        let p = self.a.step(producer);
        if p.map.is_some() {
            return Err(unsupported(format!(
                "step `{}` reads artifact `{artifact}` of `{}`, a `map` step: KFP collects a fan-out's artifacts into a list, which one input path cannot hold",
                self.name(),
                p.name
            )));
        }
        Ok(())
    }

    fn items(&mut self, map: &'a couler_ir::MapOver) -> Result<Items, EngineError> {
        if let Some(items) = &map.items {
            return Ok(Items::Raw(
                serde_json::to_string(items).expect("JSON values serialize"),
            ));
        }
        let from = map.from.as_deref().unwrap_or_default();
        match sole_reference(from) {
            Some(Ok(r @ (Ref::StepResult(_) | Ref::StepParameter(..)))) => {
                match self.resolve(r, FROM)? {
                    Resolved::Param(ch) => Ok(Items::From(ch)),
                    Resolved::Literal(text) => raw_list(self.name(), &text),
                    _ => unreachable!("parameters resolve to parameters or literals"),
                }
            }
            // A resolved workflow parameter: the list is known now.
            None => raw_list(self.name(), from),
            Some(_) => Err(EngineError::Other(format!(
                "step `{}`: `map.from` must reference a parameter holding a JSON list",
                self.name()
            ))),
        }
    }

    /// One `when` condition as CEL over the task's inputs.
    fn condition(&mut self, c: &'a Condition, at: u8) -> Result<String, EngineError> {
        let mut operands = Vec::new();
        for seg in segments(&c.input) {
            match seg.map_err(|e| EngineError::Other(e.to_string()))? {
                Segment::Text(t) => operands.push(cel::string(t)),
                Segment::Ref(r) => match self.resolve(r, at)? {
                    Resolved::Literal(v) | Resolved::Placeholder(v) => {
                        operands.push(cel::string(&v))
                    }
                    Resolved::Param(ch) => operands.push(cel::input(&ch)),
                    Resolved::Artifact(_) => {
                        return Err(EngineError::Other(format!(
                            "step `{}`: a `when` cannot compare an artifact",
                            self.name()
                        )));
                    }
                },
            }
        }
        let lhs = match operands.len() {
            0 => cel::string(""),
            1 => operands.pop().expect("one operand"),
            _ => operands.join(" + "),
        };
        Ok(cel::compare(&lhs, c))
    }
}

fn raw_list(step: &str, text: &str) -> Result<Items, EngineError> {
    match serde_json::from_str::<Vec<serde_json::Value>>(text) {
        Ok(items) => Ok(Items::Raw(
            serde_json::to_string(&items).expect("JSON values serialize"),
        )),
        Err(_) => Err(EngineError::Other(format!(
            "step `{step}`: `map.from` is {:?}, not a JSON list",
            text.chars().take(200).collect::<String>()
        ))),
    }
}

/// Whether any condition reads `{{item…}}`.
fn reads_item(conditions: &[Condition]) -> bool {
    conditions
        .iter()
        .any(|c| couler_ir::refs::references(&c.input).any(|r| matches!(r, Ok(Ref::Item(_)))))
}

/// The key of a step's stdout output: `result`, unless the step declares an
/// output of that name.
fn result_key(step: &Step) -> String {
    let taken = |k: &str| step.output_parameter(k).is_some() || step.output_artifact(k).is_some();
    ["result", "stdout"]
        .into_iter()
        .map(str::to_owned)
        .chain((2..).map(|n| format!("result-{n}")))
        .find(|k| !taken(k))
        .expect("some key is free")
}

/// An item field as part of an input name.
fn sanitize_field(field: &str) -> String {
    field
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '-'
            }
        })
        .collect()
}
