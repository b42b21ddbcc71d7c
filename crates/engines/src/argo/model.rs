//! The part of Argo's `Workflow` and `CronWorkflow` API that Couler emits,
//! spelled as Argo spells it (`argoproj.io/v1alpha1`). Empty fields are left
//! out, so the manifests read like hand-written ones.

use serde::Serialize;
use serde_json::Value;
use std::collections::BTreeMap;

pub(super) const API_VERSION: &str = "argoproj.io/v1alpha1";

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Workflow {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: WorkflowSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CronWorkflow {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: CronWorkflowSpec,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct CronWorkflowSpec {
    pub schedules: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timezone: Option<String>,
    pub workflow_metadata: Metadata,
    pub workflow_spec: WorkflowSpec,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ObjectMeta {
    pub name: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

/// Labels and annotations without a name (pods, spawned Workflows).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Metadata {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

impl Metadata {
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty() && self.annotations.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WorkflowSpec {
    pub entrypoint: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_exit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<u32>,
    /// The run's deadline, in whole seconds (rounded up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<u64>,
    #[serde(skip_serializing_if = "Arguments::is_empty")]
    pub arguments: Arguments,
    #[serde(skip_serializing_if = "Metadata::is_empty")]
    pub pod_metadata: Metadata,
    pub templates: Vec<Template>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Template {
    pub name: String,
    #[serde(skip_serializing_if = "Inputs::is_empty")]
    pub inputs: Inputs,
    #[serde(skip_serializing_if = "Outputs::is_empty")]
    pub outputs: Outputs,
    #[serde(skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parallelism: Option<u32>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_strategy: Option<RetryStrategy>,
    /// IntOrString, written as a string: Argo's JSON Schema types it so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dag: Option<DagTemplate>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub steps: Option<Vec<Vec<WorkflowStep>>>,
    // Boxed: a Workflow holds thousands of templates, each one kind.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<Box<Container>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script: Option<Box<Script>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource: Option<Box<ResourceTemplate>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub suspend: Option<Suspend>,
}

/// A template's inputs or outputs, or a task's or step's arguments: the
/// same shape in Argo's schema.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Values {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub parameters: Vec<Parameter>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub artifacts: Vec<Artifact>,
}

impl Values {
    pub fn is_empty(&self) -> bool {
        self.parameters.is_empty() && self.artifacts.is_empty()
    }
}

pub(super) type Inputs = Values;
pub(super) type Outputs = Values;
pub(super) type Arguments = Values;

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Parameter {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(rename = "enum", skip_serializing_if = "Vec::is_empty")]
    pub allowed: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<ValueFrom>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_name: Option<String>,
}

impl Parameter {
    pub fn named(name: impl Into<String>) -> Parameter {
        Parameter {
            name: name.into(),
            ..Parameter::default()
        }
    }

    pub fn value(name: impl Into<String>, value: impl Into<String>) -> Parameter {
        Parameter {
            name: name.into(),
            value: Some(value.into()),
            ..Parameter::default()
        }
    }
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ValueFrom {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Another node's parameter, in DAG and steps templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    /// An expr-lang expression, in DAG and steps templates.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expression: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Artifact {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from_expression: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_name: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub s3: Option<BucketKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gcs: Option<BucketKey>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub http: Option<Http>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<Raw>,
}

impl Artifact {
    pub fn named(name: impl Into<String>) -> Artifact {
        Artifact {
            name: name.into(),
            ..Artifact::default()
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct BucketKey {
    pub bucket: String,
    pub key: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct Http {
    pub url: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct Raw {
    pub data: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct DagTemplate {
    pub tasks: Vec<DagTask>,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct DagTask {
    pub name: String,
    pub template: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depends: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    #[serde(skip_serializing_if = "Arguments::is_empty")]
    pub arguments: Arguments,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub with_items: Option<Vec<Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub with_param: Option<String>,
}

/// One step of a `steps` template (used for `while` loops).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct WorkflowStep {
    pub name: String,
    pub template: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    #[serde(skip_serializing_if = "Arguments::is_empty")]
    pub arguments: Arguments,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Container {
    pub image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(skip_serializing_if = "Resources::is_empty")]
    pub resources: Resources,
}

#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct Script {
    pub image: String,
    pub command: Vec<String>,
    pub source: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(skip_serializing_if = "Resources::is_empty")]
    pub resources: Resources,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EnvVar {
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value_from: Option<EnvVarSource>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct EnvVarSource {
    pub secret_key_ref: SecretKeySelector,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct SecretKeySelector {
    pub name: String,
    pub key: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub(super) struct Resources {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub requests: BTreeMap<&'static str, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub limits: BTreeMap<&'static str, String>,
}

impl Resources {
    pub fn is_empty(&self) -> bool {
        self.requests.is_empty() && self.limits.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct RetryStrategy {
    /// IntOrString, written as a string.
    pub limit: String,
    pub retry_policy: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff: Option<Backoff>,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct Backoff {
    pub duration: String,
    /// IntOrString, written as a string.
    pub factor: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cap: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ResourceTemplate {
    pub action: &'static str,
    #[serde(skip_serializing_if = "is_false")]
    pub set_owner_reference: bool,
    pub success_condition: String,
    pub failure_condition: String,
    pub manifest: String,
}

#[derive(Debug, Clone, Serialize)]
pub(super) struct Suspend {
    pub duration: String,
}
