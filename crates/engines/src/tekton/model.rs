//! The subset of the Tekton Pipelines v1 API (`tekton.dev/v1`) that Couler
//! emits, as serde types. Field order is the order a person reads a task in;
//! empty fields are left out.

use crate::yaml::SmallMap;
use serde::Serialize;
use std::collections::BTreeMap;

pub const API_VERSION: &str = "tekton.dev/v1";

fn none<T>(v: &Option<T>) -> bool {
    v.is_none()
}

/// A Kubernetes object: `Pipeline` or `PipelineRun`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Object<S> {
    pub api_version: &'static str,
    pub kind: &'static str,
    pub metadata: ObjectMeta,
    pub spec: S,
}

#[derive(Debug, Default, Serialize)]
pub struct ObjectMeta {
    pub name: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize)]
pub struct PipelineSpec {
    #[serde(skip_serializing_if = "none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamSpec>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workspaces: Vec<Named>,
    pub tasks: Vec<PipelineTask>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub finally: Vec<PipelineTask>,
}

/// A declared parameter (of a Pipeline or of an embedded Task).
#[derive(Debug, PartialEq, Serialize)]
pub struct ParamSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "none")]
    pub default: Option<String>,
}

impl ParamSpec {
    pub fn string(name: impl Into<String>) -> ParamSpec {
        ParamSpec {
            name: name.into(),
            kind: "string",
            description: None,
            default: None,
        }
    }
}

/// An object that is only a name (workspace declarations).
#[derive(Debug, PartialEq, Serialize)]
pub struct Named {
    pub name: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineTask {
    pub name: String,
    #[serde(skip_serializing_if = "none")]
    pub description: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub run_after: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub when: Vec<WhenExpression>,
    #[serde(skip_serializing_if = "none")]
    pub retries: Option<u32>,
    #[serde(skip_serializing_if = "none")]
    pub timeout: Option<String>,
    #[serde(skip_serializing_if = "none")]
    pub matrix: Option<Matrix>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Param>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workspaces: Vec<WorkspacePipelineTaskBinding>,
    pub task_spec: EmbeddedTask,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Param {
    pub name: String,
    pub value: ParamValue,
}

/// A parameter value: Tekton accepts a string or a list of strings here.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ParamValue {
    String(String),
    Array(Vec<String>),
}

/// Either `input`/`operator`/`values`, or a `cel` expression.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct WhenExpression {
    #[serde(skip_serializing_if = "none")]
    pub input: Option<String>,
    #[serde(skip_serializing_if = "none")]
    pub operator: Option<&'static str>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub values: Vec<String>,
    #[serde(skip_serializing_if = "none")]
    pub cel: Option<String>,
}

#[derive(Debug, Default, Serialize)]
pub struct Matrix {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Param>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<IncludeParams>,
}

/// One explicit matrix combination.
#[derive(Debug, Serialize)]
pub struct IncludeParams {
    pub name: String,
    pub params: Vec<Param>,
}

#[derive(Debug, PartialEq, Serialize)]
pub struct WorkspacePipelineTaskBinding {
    pub name: String,
    pub workspace: String,
}

#[derive(Debug, Default, Serialize)]
pub struct EmbeddedTask {
    #[serde(skip_serializing_if = "none")]
    pub metadata: Option<TaskMetadata>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<ParamSpec>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub results: Vec<TaskResult>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workspaces: Vec<Named>,
    pub steps: Vec<Step>,
}

#[derive(Debug, Default, Serialize)]
pub struct TaskMetadata {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub labels: SmallMap<String>,
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub annotations: SmallMap<String>,
}

#[derive(Debug, PartialEq, Serialize)]
pub struct TaskResult {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "none")]
    pub description: Option<String>,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Step {
    pub name: String,
    pub image: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "none")]
    pub working_dir: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(skip_serializing_if = "none")]
    pub compute_resources: Option<ResourceRequirements>,
    #[serde(skip_serializing_if = "none")]
    pub timeout: Option<String>,
    #[serde(skip_serializing_if = "none")]
    pub script: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVar {
    pub name: String,
    #[serde(skip_serializing_if = "none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "none")]
    pub value_from: Option<EnvVarSource>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EnvVarSource {
    pub secret_key_ref: SecretKeySelector,
}

#[derive(Debug, Serialize)]
pub struct SecretKeySelector {
    pub name: String,
    pub key: String,
}

#[derive(Debug, Default, Clone, Serialize)]
pub struct ResourceRequirements {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub requests: SmallMap<String>,
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub limits: SmallMap<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineRunSpec {
    pub pipeline_ref: Named,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub params: Vec<Param>,
    pub timeouts: TimeoutFields,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub workspaces: Vec<WorkspaceBinding>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub task_run_specs: Vec<PipelineTaskRunSpec>,
}

#[derive(Debug, Serialize)]
pub struct TimeoutFields {
    pub pipeline: String,
    /// The deadline of the pipeline's tasks; `finally` tasks still run
    /// after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tasks: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkspaceBinding {
    pub name: String,
    pub volume_claim_template: VolumeClaimTemplate,
}

#[derive(Debug, Serialize)]
pub struct VolumeClaimTemplate {
    pub spec: ClaimSpec,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ClaimSpec {
    pub access_modes: Vec<&'static str>,
    pub resources: ClaimResources,
}

#[derive(Debug, Serialize)]
pub struct ClaimResources {
    pub requests: BTreeMap<&'static str, String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineTaskRunSpec {
    pub pipeline_task_name: String,
    pub pod_template: PodTemplate,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PodTemplate {
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<serde_json::Value>,
}
