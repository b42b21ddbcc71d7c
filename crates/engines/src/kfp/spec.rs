//! The subset of KFP's `PipelineSpec` and Kubernetes `PlatformSpec` protos
//! Couler emits, as serde types. Field names are the protos' JSON names and
//! fields are declared in alphabetical order, so the YAML reads like the
//! KFP SDK's own output (which sorts keys).

use crate::yaml::SmallMap;
use serde::Serialize;
use std::collections::BTreeMap;

pub const SCHEMA_VERSION: &str = "2.1.0";
pub const ARTIFACT_TITLE: &str = "system.Artifact";
pub const ARTIFACT_VERSION: &str = "0.0.1";

/// Parameter types (`ml_pipelines.ParameterType.ParameterTypeEnum`).
pub const STRING: &str = "STRING";
pub const LIST: &str = "LIST";
pub const TASK_FINAL_STATUS: &str = "TASK_FINAL_STATUS";

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineSpec {
    pub components: BTreeMap<String, ComponentSpec>,
    pub deployment_spec: DeploymentSpec,
    pub pipeline_info: PipelineInfo,
    pub root: ComponentSpec,
    pub schema_version: &'static str,
    pub sdk_version: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineInfo {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub name: String,
}

#[derive(Debug, Default, Serialize)]
pub struct DeploymentSpec {
    pub executors: BTreeMap<String, Executor>,
}

#[derive(Debug, Default, Serialize)]
pub struct Executor {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<Container>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importer: Option<Importer>,
}

#[derive(Debug, Default, Serialize)]
pub struct Container {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    pub image: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

#[derive(Debug, Serialize)]
pub struct EnvVar {
    pub name: String,
    pub value: String,
}

/// Requests and limits: the legacy numeric fields (cores, GB) and the
/// Kubernetes quantity strings, both as the KFP SDK sets them.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Resources {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accelerator: Option<Accelerator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_limit: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_request: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_request: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_cpu_limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_cpu_request: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_memory_limit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resource_memory_request: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Accelerator {
    /// int64 fields are strings in proto JSON.
    pub count: String,
    pub resource_count: String,
    pub resource_type: String,
    #[serde(rename = "type")]
    pub kind: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Importer {
    pub artifact_uri: RuntimeParameter,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub metadata: BTreeMap<String, String>,
    pub type_schema: ArtifactType,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RuntimeParameter {
    pub runtime_parameter: String,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ComponentSpec {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dag: Option<Dag>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor_label: Option<String>,
    #[serde(skip_serializing_if = "Io::is_empty")]
    pub input_definitions: Io,
    #[serde(skip_serializing_if = "Io::is_empty")]
    pub output_definitions: Io,
}

/// `inputDefinitions` / `outputDefinitions`.
#[derive(Debug, Default, Serialize)]
pub struct Io {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub artifacts: SmallMap<ArtifactSpec>,
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub parameters: SmallMap<ParameterSpec>,
}

impl Io {
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty() && self.parameters.is_empty()
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSpec {
    pub artifact_type: ArtifactType,
}

impl ArtifactSpec {
    pub fn artifact() -> ArtifactSpec {
        ArtifactSpec {
            artifact_type: ArtifactType::artifact(),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactType {
    pub schema_title: &'static str,
    pub schema_version: &'static str,
}

impl ArtifactType {
    pub fn artifact() -> ArtifactType {
        ArtifactType {
            schema_title: ARTIFACT_TITLE,
            schema_version: ARTIFACT_VERSION,
        }
    }
}

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterSpec {
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_optional: bool,
    pub parameter_type: &'static str,
}

impl ParameterSpec {
    pub fn of(parameter_type: &'static str) -> ParameterSpec {
        ParameterSpec {
            is_optional: false,
            parameter_type,
        }
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Dag {
    #[serde(skip_serializing_if = "DagOutputs::is_empty")]
    pub outputs: DagOutputs,
    pub tasks: BTreeMap<String, Task>,
}

#[derive(Debug, Default, Serialize)]
pub struct DagOutputs {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub artifacts: SmallMap<ArtifactSelectors>,
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub parameters: SmallMap<ParameterSelector>,
}

impl DagOutputs {
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty() && self.parameters.is_empty()
    }
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSelectors {
    pub artifact_selectors: Vec<ArtifactSelector>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactSelector {
    pub output_artifact_key: String,
    pub producer_subtask: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterSelector {
    pub value_from_parameter: ValueFromParameter,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ValueFromParameter {
    pub output_parameter_key: String,
    pub producer_subtask: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caching_options: Option<CachingOptions>,
    pub component_ref: ComponentRef,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependent_tasks: Vec<String>,
    #[serde(skip_serializing_if = "TaskInputs::is_empty")]
    pub inputs: TaskInputs,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterator_policy: Option<IteratorPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter_iterator: Option<ParameterIterator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<RetryPolicy>,
    pub task_info: TaskInfo,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_policy: Option<TriggerPolicy>,
}

impl Task {
    pub fn new(name: &str, component: &str) -> Task {
        Task {
            caching_options: None,
            component_ref: ComponentRef {
                name: component.to_owned(),
            },
            dependent_tasks: Vec::new(),
            inputs: TaskInputs::default(),
            iterator_policy: None,
            parameter_iterator: None,
            retry_policy: None,
            task_info: TaskInfo {
                name: name.to_owned(),
            },
            trigger_policy: None,
        }
    }
}

/// `enableCache: false` is proto3's default, so a disabled cache is `{}`.
#[derive(Debug, Serialize)]
pub struct CachingOptions {}

#[derive(Debug, Serialize)]
pub struct ComponentRef {
    pub name: String,
}

#[derive(Debug, Serialize)]
pub struct TaskInfo {
    pub name: String,
}

#[derive(Debug, Default, Serialize)]
pub struct TaskInputs {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub artifacts: SmallMap<ArtifactInput>,
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub parameters: SmallMap<ParameterInput>,
}

impl TaskInputs {
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty() && self.parameters.is_empty()
    }
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component_input_parameter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter_expression_selector: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_value: Option<RuntimeValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_final_status: Option<ProducerTask>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_output_parameter: Option<TaskOutputParameter>,
}

#[derive(Debug, Serialize)]
pub struct RuntimeValue {
    pub constant: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProducerTask {
    pub producer_task: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskOutputParameter {
    pub output_parameter_key: String,
    pub producer_task: String,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ArtifactInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component_input_artifact: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_output_artifact: Option<TaskOutputArtifact>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TaskOutputArtifact {
    pub output_artifact_key: String,
    pub producer_task: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct IteratorPolicy {
    pub parallelism_limit: u32,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterIterator {
    pub item_input: String,
    pub items: Items,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Items {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_parameter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RetryPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_duration: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_factor: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub backoff_max_duration: Option<String>,
    pub max_retry_count: u32,
}

#[derive(Debug, Serialize)]
pub struct TriggerPolicy {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strategy: Option<&'static str>,
}

/// The second YAML document: Kubernetes settings per executor.
#[derive(Debug, Serialize)]
pub struct PlatformSpec {
    pub platforms: Platforms,
}

#[derive(Debug, Serialize)]
pub struct Platforms {
    pub kubernetes: KubernetesPlatform,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesPlatform {
    pub deployment_spec: KubernetesDeployment,
}

#[derive(Debug, Serialize)]
pub struct KubernetesDeployment {
    pub executors: BTreeMap<String, KubernetesExecutorConfig>,
}

/// `kfp_kubernetes.KubernetesExecutorConfig`.
#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesExecutorConfig {
    /// int64, a string in proto JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<NodeSelector>,
    pub pod_metadata: PodMetadata,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub secret_as_env: Vec<SecretAsEnv>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
}

#[derive(Debug, Serialize)]
pub struct NodeSelector {
    pub labels: BTreeMap<String, String>,
}

#[derive(Debug, Default, Serialize)]
pub struct PodMetadata {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub annotations: SmallMap<String>,
    pub labels: SmallMap<String>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretAsEnv {
    pub key_to_env: Vec<SecretKeyToEnv>,
    pub optional: bool,
    pub secret_name: String,
    pub secret_name_parameter: SecretNameParameter,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretKeyToEnv {
    pub env_var: String,
    pub secret_key: String,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SecretNameParameter {
    pub runtime_value: RuntimeValue,
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Toleration {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub effect: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub operator: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub toleration_seconds: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}
