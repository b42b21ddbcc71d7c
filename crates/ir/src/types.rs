//! The workflow IR types. Doc comments here become the JSON Schema's
//! descriptions, which editors show while users type.
//!
//! Field order is the canonical order: the canonical form and the content
//! hashes serialize these types as declared, so reordering fields changes
//! every hash.

pub use crate::job::{Framework, Replica, TrainingJob};
use crate::scalar::{Cpu, Duration, Memory, ParamValue, whole};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The `apiVersion` this build reads and writes.
pub const API_VERSION: &str = "couler.dev/v1alpha1";

fn is_false(b: &bool) -> bool {
    !*b
}

/// A machine-learning workflow: a DAG of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields, title = "Couler workflow")]
pub struct Workflow {
    /// IR version; must be `couler.dev/v1alpha1`.
    #[schemars(extend("const" = API_VERSION))]
    pub api_version: String,
    /// Workflow name: lowercase letters, digits and `-`, at most 63 characters.
    #[schemars(pattern(crate::names::DNS_LABEL_PATTERN))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Labels for search and grouping (Kubernetes label syntax).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[schemars(schema_with = "crate::schema::labels_schema")]
    pub labels: BTreeMap<String, String>,
    /// Workflow inputs, referenced as `{{workflow.parameters.NAME}}`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    /// The steps. Order does not matter: dependencies come from `depends`
    /// and from references to other steps' outputs.
    #[schemars(length(min = 1))]
    pub steps: Vec<Step>,
    /// Concurrent groups: members run side by side; depending on a group
    /// waits for all of its members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<Group>,
    /// Exit handler: steps that run after the DAG ends, whatever its outcome
    /// (`{{workflow.status}}` tells which).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub on_exit: Vec<Step>,
    /// At most this many steps run at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    #[schemars(range(min = 1, max = crate::validate::MAX_PARALLELISM))]
    pub parallelism: Option<u32>,
    /// Run the workflow on a schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedule: Option<Schedule>,
    /// Deadline of a run: once it has been running this long it fails
    /// ("deadline exceeded"), its running steps are stopped and nothing new
    /// starts; `onExit` steps still run. Last, so that workflows without
    /// one keep their content hash.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
}

/// A workflow input.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Parameter {
    pub name: String,
    /// Used when a run does not set the parameter; without it the parameter is required.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<ParamValue>,
    /// When set, the value must be one of these.
    #[serde(default, rename = "enum", skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<ParamValue>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A cron schedule.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Schedule {
    /// Five-field cron expression (`"0 2 * * *"`; `L`, `W` and `#` allowed)
    /// or a macro such as `@daily`. It becomes the workflow's `default`
    /// schedule in the control plane, which fires it on every engine.
    pub cron: String,
    /// IANA time zone, e.g. `Europe/Berlin`; UTC when absent (never the
    /// server's zone).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
}

/// A concurrent group of steps.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Group {
    #[schemars(pattern(crate::names::DNS_LABEL_PATTERN))]
    pub name: String,
    /// Member step names; members must not depend on each other.
    #[schemars(length(min = 1))]
    pub steps: Vec<String>,
    /// Steps or groups every member waits for and needs to succeed: plain
    /// names only (an expression such as `a.failed` goes on the member
    /// steps' own `depends`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends: Vec<String>,
}

/// One step of the DAG. Exactly one of `container`, `script` or `job` says
/// what it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
#[schemars(extend("oneOf" = [
    {"required": ["container"], "properties": {"container": {"not": {"type": "null"}}}},
    {"required": ["script"], "properties": {"script": {"not": {"type": "null"}}}},
    {"required": ["job"], "properties": {"job": {"not": {"type": "null"}}}},
]))]
pub struct Step {
    /// Step name: lowercase letters, digits and `-`, at most 63 characters.
    #[schemars(pattern(crate::names::DNS_LABEL_PATTERN))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Run a container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
    /// Run inline source with an interpreter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub script: Option<Script>,
    /// Run a distributed training job.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<TrainingJob>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
    /// Opaque scheduling hints passed to engines that understand them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Hints>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inputs: Option<Inputs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outputs: Option<Outputs>,
    /// What must hold of earlier steps for this one to run; all entries
    /// must hold. An entry is a step or group name, which must have
    /// succeeded (a cache hit counts), or an expression:
    /// `expr := and ('||' and)*`, `and := unary ('&&' unary)*`,
    /// `unary := '!' unary | '(' expr ')' | NAME ('.' OUTCOME)?`, with
    /// OUTCOME one of `succeeded`, `failed`, `skipped`, `any` (ended
    /// whatever the outcome), e.g. `a && (c.succeeded || c.failed)`. A
    /// group can only be named bare. The step waits until every step an
    /// entry names has ended, then is skipped (with the entry as reason)
    /// if an entry is false. A failed step fails the run unless a step that
    /// ran depends on it, directly or through steps that did not run (a
    /// handled failure). References to outputs add dependencies that must
    /// succeed, unless an entry names the step.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub depends: Vec<String>,
    /// Run only if every condition holds; otherwise the step is skipped.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<Condition>,
    /// Fan out: one instance per item, each seeing `{{item}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub map: Option<MapOver>,
    /// Repeat the step while its own outputs satisfy a condition.
    #[serde(default, rename = "while", skip_serializing_if = "Option::is_none")]
    pub repeat: Option<WhileLoop>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry: Option<Retry>,
    /// Fail the step (killing it) after this long.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<Cache>,
    /// Hyperparameter search: the step becomes one trial per configuration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tune: Option<Tune>,
}

/// The three ways a step runs, borrowed from a step.
#[derive(Debug, Clone, Copy)]
pub enum StepKind<'a> {
    Container(&'a Container),
    Script(&'a Script),
    Job(&'a TrainingJob),
}

impl Step {
    /// What the step runs, when exactly one kind is set.
    pub fn kind(&self) -> Option<StepKind<'_>> {
        match (&self.container, &self.script, &self.job) {
            (Some(c), None, None) => Some(StepKind::Container(c)),
            (None, Some(s), None) => Some(StepKind::Script(s)),
            (None, None, Some(j)) => Some(StepKind::Job(j)),
            _ => None,
        }
    }

    pub fn image(&self) -> Option<&str> {
        self.kind().map(|k| match k {
            StepKind::Container(c) => c.image.as_str(),
            StepKind::Script(s) => s.image.as_str(),
            StepKind::Job(j) => j.image.as_str(),
        })
    }

    /// Every image the step runs: a job's own and its roles' (each once).
    pub fn images(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.image().into_iter().collect();
        if let Some(j) = &self.job {
            for image in j.replicas.values().filter_map(|r| r.image.as_deref()) {
                if !out.contains(&image) {
                    out.push(image);
                }
            }
        }
        out
    }

    pub fn env(&self) -> &[EnvVar] {
        match self.kind() {
            Some(StepKind::Container(c)) => &c.env,
            Some(StepKind::Script(s)) => &s.env,
            Some(StepKind::Job(j)) => &j.env,
            None => &[],
        }
    }

    pub fn output_parameter(&self, name: &str) -> Option<&OutputParameter> {
        self.outputs
            .as_ref()?
            .parameters
            .iter()
            .find(|p| p.name == name)
    }

    pub fn output_artifact(&self, name: &str) -> Option<&OutputArtifact> {
        self.outputs
            .as_ref()?
            .artifacts
            .iter()
            .find(|a| a.name == name)
    }
}

/// A step's input artifact read from another step's outputs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArtifactRead {
    /// Indexes into `steps`: the step that reads and the one that wrote.
    pub reader: usize,
    pub producer: usize,
    /// Index into the reader's `inputs.artifacts`.
    pub input: usize,
    /// The producer's output artifact.
    pub artifact: String,
}

impl Workflow {
    /// Every input artifact of `steps` read from another of `steps`; an
    /// input that names none is left out (validation reports it).
    pub fn artifact_reads(&self) -> Vec<ArtifactRead> {
        let index: BTreeMap<&str, usize> = (self.steps.iter().enumerate())
            .map(|(i, s)| (s.name.as_str(), i))
            .collect();
        let mut reads = Vec::new();
        for (reader, step) in self.steps.iter().enumerate() {
            for (input, a) in step
                .inputs
                .iter()
                .flat_map(|i| i.artifacts.iter().enumerate())
            {
                if let Some(Ok(crate::refs::Ref::StepArtifact(from, artifact))) =
                    crate::refs::sole_reference(&a.from)
                    && let Some(&producer) = index.get(from)
                {
                    reads.push(ArtifactRead {
                        reader,
                        producer,
                        input,
                        artifact: artifact.to_owned(),
                    });
                }
            }
        }
        reads
    }
}

/// A container to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Container {
    /// Image reference; pin by digest (`…@sha256:…`) for exact caching.
    pub image: String,
    /// Entrypoint; the image's own when empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

/// Inline source run by an interpreter in an image.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Script {
    pub image: String,
    /// Interpreter, e.g. `["python3"]` or `["bash"]`; the source file is appended.
    pub command: Vec<String>,
    /// The program text.
    pub source: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
}

/// An environment variable: a literal `value`, or a `secret` referenced by
/// name (never a secret's value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct EnvVar {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<SecretRef>,
}

/// A key of a named secret in the tenant's secret store.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SecretRef {
    pub name: String,
    pub key: String,
}

/// Resource requests for a step (or one replica of a job).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Resources {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<Cpu>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<Memory>,
    /// Whole GPUs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    pub gpu: Option<u32>,
}

/// Engine hints, passed through as given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Hints {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    /// Kubernetes tolerations, passed through unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Inputs {
    /// Artifacts from earlier steps, placed at a path before the step starts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<InputArtifact>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct InputArtifact {
    pub name: String,
    /// `{{steps.STEP.outputs.artifacts.NAME}}`
    pub from: String,
    /// Absolute path where the artifact appears.
    pub path: String,
}

/// What a step produces. Its standard output is always available as
/// `{{steps.STEP.outputs.result}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Outputs {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<OutputParameter>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<OutputArtifact>,
}

/// A value read from a file the step writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct OutputParameter {
    pub name: String,
    /// Absolute path of the file holding the value.
    pub path: String,
    /// Used when the file is absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<ParamValue>,
}

/// A file or directory the step writes, stored content-addressed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct OutputArtifact {
    pub name: String,
    pub path: String,
}

/// One condition: `input operator value` (or `values` for `in`/`notin`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Condition {
    /// Usually a reference, e.g. `{{steps.flip.outputs.result}}`.
    pub input: String,
    pub operator: Operator,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<ParamValue>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ParamValue>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Operator {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
    Notin,
}

impl std::fmt::Display for Operator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Operator::Eq => "eq",
            Operator::Ne => "ne",
            Operator::Lt => "lt",
            Operator::Le => "le",
            Operator::Gt => "gt",
            Operator::Ge => "ge",
            Operator::In => "in",
            Operator::Notin => "notin",
        })
    }
}

impl Operator {
    /// Whether the operator takes a list (`values`) rather than one `value`.
    pub fn takes_list(self) -> bool {
        matches!(self, Operator::In | Operator::Notin)
    }
    /// Whether the operator compares numbers.
    pub fn is_numeric(self) -> bool {
        matches!(
            self,
            Operator::Lt | Operator::Le | Operator::Gt | Operator::Ge
        )
    }
}

/// Fan-out: `items` given here, or `from` a JSON list produced earlier.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct MapOver {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items: Option<Vec<serde_json::Value>>,
    /// A reference to a parameter holding a JSON list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// At most this many instances at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    pub parallelism: Option<u32>,
}

/// A bounded loop: the step reruns while every condition (over its own
/// outputs) holds, at most `maxIterations` times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct WhileLoop {
    pub condition: Vec<Condition>,
    #[serde(deserialize_with = "whole::deserialize")]
    pub max_iterations: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Retry {
    /// Retries after the first attempt.
    #[serde(deserialize_with = "whole::deserialize")]
    pub limit: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backoff: Option<Backoff>,
    /// Which failures are retried.
    #[serde(default, skip_serializing_if = "RetryOn::is_default")]
    pub on: RetryOn,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RetryOn {
    /// Any failure, including the step's own non-zero exit.
    #[default]
    Always,
    /// Infrastructure failures only: quota, throttling, lost nodes, image
    /// pulls, out-of-memory kills.
    Transient,
}

impl RetryOn {
    fn is_default(&self) -> bool {
        *self == RetryOn::Always
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Backoff {
    /// Wait before the first retry.
    pub duration: Duration,
    /// Each wait is the previous one times this (default 2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    pub factor: Option<u32>,
    /// Cap on a single wait.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_duration: Option<Duration>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Cache {
    #[serde(default, skip_serializing_if = "CachePolicy::is_default")]
    pub policy: CachePolicy,
    #[serde(default, skip_serializing_if = "CacheScope::is_default")]
    pub scope: CacheScope,
    /// How long an entry stays valid.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<Duration>,
    /// Bump to invalidate earlier results of this step.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CachePolicy {
    /// Reuse results whose exact inputs were computed before.
    #[default]
    Auto,
    /// Never look up nor store.
    Off,
}

impl CachePolicy {
    fn is_default(&self) -> bool {
        *self == CachePolicy::Auto
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// Results may be reused by any tenant that shares.
    #[default]
    Shared,
    /// Results are reused only within the tenant.
    Tenant,
}

impl CacheScope {
    fn is_default(&self) -> bool {
        *self == CacheScope::Shared
    }
}

/// A hyperparameter search over the step.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Tune {
    /// Hyperparameters by name, referenced as `{{trial.parameters.NAME}}`.
    pub space: BTreeMap<String, SearchParam>,
    pub objective: Objective,
    #[serde(default)]
    pub strategy: Strategy,
    #[serde(deserialize_with = "whole::deserialize")]
    pub max_trials: u32,
    /// Trials at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    pub parallelism: Option<u32>,
    /// Seed for `random` (and the fallback of `llm`), for reproducible searches.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    pub seed: Option<u64>,
    /// Successive-halving budgets; the budget is `{{trial.budget}}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub halving: Option<Halving>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data_card: Option<DataCard>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_card: Option<ModelCard>,
}

/// One dimension of a search space.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct SearchParam {
    #[serde(rename = "type")]
    pub kind: ParamKind,
    /// Lower bound (`int`, `double`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<f64>,
    /// Upper bound, inclusive (`int`, `double`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<f64>,
    /// Grid spacing; required for `double` under the `grid` strategy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<f64>,
    /// Sample on a log scale (`double`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub log: bool,
    /// Choices (`categorical`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<ParamValue>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ParamKind {
    Int,
    Double,
    Categorical,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Objective {
    /// Name of the step's output parameter holding the metric.
    pub metric: String,
    pub goal: Goal,
    /// Stop early once a trial reaches this value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Goal {
    Minimize,
    Maximize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    Grid,
    #[default]
    Random,
    /// Successive halving.
    Halving,
    /// Configurations suggested by the configured LLM.
    Llm,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct Halving {
    /// Budget (e.g. epochs) of the first rung.
    #[serde(deserialize_with = "whole::deserialize")]
    pub min_budget: u32,
    /// Budget of the last rung.
    #[serde(deserialize_with = "whole::deserialize")]
    pub max_budget: u32,
    /// Keep the best 1/eta of trials at each rung (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[serde(deserialize_with = "whole::opt")]
    pub eta: Option<u32>,
}

/// What the LLM strategy is told about the data.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct DataCard {
    pub name: String,
    /// E.g. tabular, image, text.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// E.g. "1.2M rows" or "50 GB".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub labels: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

/// What the LLM strategy is told about the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(deny_unknown_fields)]
pub struct ModelCard {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structure: Option<String>,
}
