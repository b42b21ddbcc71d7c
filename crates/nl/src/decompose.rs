//! The decomposition: a typed description of what a user asked for, the
//! shared intermediate form between understanding a request (the offline
//! planner today, an LLM later) and building IR from it.
//!
//! Stages run in order; the subtasks of one stage are independent of each
//! other (a parallel group, or the branches of an `if … otherwise …`).

use serde::{Deserialize, Serialize};
use std::fmt;

/// Byte offsets `[start, end)` into the description the user typed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Span {
    pub start: usize,
    pub end: usize,
}

impl Span {
    pub fn new(start: usize, end: usize) -> Span {
        Span { start, end }
    }

    /// The smallest span covering both.
    pub fn join(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// The text this span covers (empty if it does not fit `text`).
    pub fn of(self, text: &str) -> &str {
        text.get(self.start..self.end).unwrap_or("")
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// What a subtask does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskKind {
    /// Load data from a URL, bucket or table.
    Load,
    /// Check the data's quality before it is used.
    QualityCheck,
    /// Clean, normalize, deduplicate.
    Preprocess,
    /// Derive model inputs from cleaned data.
    Features,
    Train,
    /// Training across several workers (a `job` step).
    DistributedTrain,
    Evaluate,
    /// Keep the best of several models.
    Select,
    Register,
    Deploy,
    Report,
    Notify,
    /// A command the user spelled out, or (without one) a generic step the
    /// user must fill in.
    Shell,
    /// Write data or a model somewhere else: a warehouse, a file format
    /// such as ONNX.
    Export,
    /// Batch inference: a trained model applied to data.
    Predict,
    /// Several models combined into one (averaging, voting, stacking).
    Ensemble,
}

impl TaskKind {
    pub const ALL: [TaskKind; 16] = [
        TaskKind::Load,
        TaskKind::QualityCheck,
        TaskKind::Preprocess,
        TaskKind::Features,
        TaskKind::Train,
        TaskKind::DistributedTrain,
        TaskKind::Evaluate,
        TaskKind::Select,
        TaskKind::Register,
        TaskKind::Deploy,
        TaskKind::Report,
        TaskKind::Notify,
        TaskKind::Shell,
        TaskKind::Export,
        TaskKind::Predict,
        TaskKind::Ensemble,
    ];

    /// The snake_case name used in serialized forms and evaluation files.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskKind::Load => "load",
            TaskKind::QualityCheck => "quality_check",
            TaskKind::Preprocess => "preprocess",
            TaskKind::Features => "features",
            TaskKind::Train => "train",
            TaskKind::DistributedTrain => "distributed_train",
            TaskKind::Evaluate => "evaluate",
            TaskKind::Select => "select",
            TaskKind::Register => "register",
            TaskKind::Deploy => "deploy",
            TaskKind::Report => "report",
            TaskKind::Notify => "notify",
            TaskKind::Shell => "shell",
            TaskKind::Export => "export",
            TaskKind::Predict => "predict",
            TaskKind::Ensemble => "ensemble",
        }
    }

    /// Whether the subtask reads the current dataset.
    pub fn reads_data(self) -> bool {
        matches!(
            self,
            TaskKind::QualityCheck
                | TaskKind::Preprocess
                | TaskKind::Features
                | TaskKind::Train
                | TaskKind::DistributedTrain
                | TaskKind::Evaluate
                | TaskKind::Predict
        )
    }

    /// Where a step of this kind usually sits in an ML pipeline; a goal
    /// stated up front whose step is not listed goes there.
    pub fn pipeline_order(self) -> u8 {
        match self {
            TaskKind::Load => 0,
            TaskKind::QualityCheck => 1,
            TaskKind::Preprocess => 2,
            TaskKind::Features => 3,
            TaskKind::Train | TaskKind::DistributedTrain => 4,
            TaskKind::Ensemble => 5,
            TaskKind::Evaluate => 6,
            TaskKind::Select => 7,
            TaskKind::Export => 8,
            TaskKind::Register => 9,
            TaskKind::Deploy => 10,
            TaskKind::Predict => 11,
            TaskKind::Report => 12,
            TaskKind::Notify => 13,
            TaskKind::Shell => 14,
        }
    }

    pub fn trains(self) -> bool {
        matches!(self, TaskKind::Train | TaskKind::DistributedTrain)
    }
}

impl fmt::Display for TaskKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The whole request, understood.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Decomposition {
    /// In order; each stage waits for the one before.
    pub stages: Vec<Stage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<ScheduleSpec>,
    /// Retries for every step that sets none of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
    /// Subtasks that run after everything else, whatever the outcome.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_exit: Vec<Subtask>,
    /// Secrets the description named; generated steps may use only these.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secrets: Vec<String>,
}

impl Decomposition {
    pub fn subtasks(&self) -> impl Iterator<Item = &Subtask> {
        self.stages.iter().flat_map(|s| s.tasks.iter())
    }
}

/// Subtasks that do not depend on each other.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    pub tasks: Vec<Subtask>,
}

impl Stage {
    /// Two or more unconditional subtasks: they run as a concurrent group.
    pub fn is_parallel_group(&self) -> bool {
        self.tasks.len() > 1 && self.tasks.iter().all(|t| t.condition.is_none())
    }

    /// The distinct kinds of the stage, sorted, joined by `|`.
    pub fn kinds_label(&self) -> String {
        let mut kinds: Vec<&str> = self.tasks.iter().map(|t| t.kind.as_str()).collect();
        kinds.sort_unstable();
        kinds.dedup();
        kinds.join("|")
    }
}

/// One thing to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subtask {
    pub kind: TaskKind,
    /// The words that asked for it.
    pub text: String,
    /// The step's name when the words named it ("B" of "then B and C");
    /// otherwise the builder names it from the words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub span: Option<Span>,
    /// The model family (`lstm`, `xgboost` …) for training subtasks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// A URL, bucket path or file the subtask reads or writes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// A command the user spelled out (shell subtasks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fan_out: Option<FanOut>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<ConditionSpec>,
    /// Retries after the first attempt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<u32>,
    #[serde(default, skip_serializing_if = "ResourceSpec::is_empty")]
    pub resources: ResourceSpec,
}

impl Subtask {
    pub fn new(kind: TaskKind, text: impl Into<String>) -> Subtask {
        Subtask {
            kind,
            text: text.into(),
            name: None,
            span: None,
            model: None,
            target: None,
            command: None,
            fan_out: None,
            condition: None,
            retry: None,
            resources: ResourceSpec::default(),
        }
    }
}

/// One instance per value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FanOut {
    /// What varies, as an identifier (`batch_size`, `shard`, `fold`).
    pub parameter: String,
    pub values: FanOutValues,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FanOutValues {
    /// "batch sizes 100, 200 and 300"
    List(Vec<String>),
    /// "shards 1 to 20", inclusive.
    Range { start: i64, end: i64 },
    /// "five folds": 1 to n.
    Count(u32),
}

impl FanOut {
    /// The values, spelled out.
    pub fn items(&self) -> Vec<String> {
        match &self.values {
            FanOutValues::List(v) => v.clone(),
            FanOutValues::Range { start, end } => (*start..=*end).map(|i| i.to_string()).collect(),
            FanOutValues::Count(n) => (1..=*n).map(|i| i.to_string()).collect(),
        }
    }

    pub fn width(&self) -> usize {
        match &self.values {
            FanOutValues::List(v) => v.len(),
            FanOutValues::Range { start, end } => (end - start + 1).max(0) as usize,
            FanOutValues::Count(n) => *n as usize,
        }
    }
}

/// Run only if `metric operator value` holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConditionSpec {
    /// `accuracy`, `auc`, `loss`, `score`, or `quality` (a check's pass/fail).
    pub metric: String,
    pub operator: Comparison,
    pub value: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Comparison {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Comparison {
    /// The comparison that holds exactly when this one does not.
    pub fn negate(self) -> Comparison {
        match self {
            Comparison::Eq => Comparison::Ne,
            Comparison::Ne => Comparison::Eq,
            Comparison::Lt => Comparison::Ge,
            Comparison::Le => Comparison::Gt,
            Comparison::Gt => Comparison::Le,
            Comparison::Ge => Comparison::Lt,
        }
    }
}

impl ConditionSpec {
    pub fn negate(&self) -> ConditionSpec {
        ConditionSpec {
            operator: self.operator.negate(),
            ..self.clone()
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gpus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpus: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_gib: Option<u32>,
    /// Workers of a distributed job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub workers: Option<u32>,
}

impl ResourceSpec {
    pub fn is_empty(&self) -> bool {
        *self == ResourceSpec::default()
    }

    /// Fills what `self` leaves unset from `other`.
    pub fn or(&self, other: &ResourceSpec) -> ResourceSpec {
        ResourceSpec {
            gpus: self.gpus.or(other.gpus),
            cpus: self.cpus.or(other.cpus),
            memory_gib: self.memory_gib.or(other.memory_gib),
            workers: self.workers.or(other.workers),
        }
    }
}

/// When the workflow runs on its own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleSpec {
    /// Five-field cron.
    pub cron: String,
    /// The words that asked for it.
    pub text: String,
}
