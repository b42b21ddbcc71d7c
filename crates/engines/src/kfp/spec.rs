//! The subset of KFP's `PipelineSpec` and Kubernetes `PlatformSpec` protos
//! Couler emits, as serde types. Field names are the protos' JSON names and
//! fields are declared in alphabetical order, so the YAML reads like the
//! KFP SDK's own output (which sorts keys).

use crate::yaml::SmallMap;
use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

pub const SCHEMA_VERSION: &str = "2.1.0";
pub const ARTIFACT_TITLE: &str = "system.Artifact";
pub const ARTIFACT_VERSION: &str = "0.0.1";

/// Parameter types (`ml_pipelines.ParameterType.ParameterTypeEnum`).
pub const STRING: &str = "STRING";
pub const LIST: &str = "LIST";
pub const TASK_FINAL_STATUS: &str = "TASK_FINAL_STATUS";

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PipelineSpec<'a> {
    pub components: Prefixed<'a, ComponentSpec<'a>>,
    pub deployment_spec: DeploymentSpec<'a>,
    pub pipeline_info: PipelineInfo,
    pub root: ComponentSpec<'a>,
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

#[derive(Debug, Serialize)]
pub struct DeploymentSpec<'a> {
    pub executors: Prefixed<'a, Executor<'a>>,
}

/// A map whose keys are one prefix and a name (`comp-train`,
/// `exec-train`), sorted by key as the KFP SDK writes them. The prefix is
/// written, not stored, and the entries are sorted once, when complete
/// ([`Prefixed::sort`]): a pipeline has one entry per step, and a
/// `BTreeMap` of formatted keys cost a 10,000-step compile dearly.
#[derive(Debug)]
pub struct Prefixed<'a, V> {
    prefix: &'static str,
    entries: Vec<(Cow<'a, str>, V)>,
}

impl<'a, V> Prefixed<'a, V> {
    pub fn new(prefix: &'static str, capacity: usize) -> Self {
        Prefixed {
            prefix,
            entries: Vec::with_capacity(capacity),
        }
    }

    /// Adds the entry keyed prefix + `name`; names are unique.
    pub fn push(&mut self, name: impl Into<Cow<'a, str>>, value: V) {
        self.entries.push((name.into(), value));
    }

    /// Puts the entries in key order (one prefix: the names' order).
    pub fn sort(&mut self) {
        self.entries.sort_unstable_by(|(a, _), (b, _)| a.cmp(b));
        debug_assert!(self.entries.windows(2).all(|w| w[0].0 != w[1].0));
    }
}

impl<V: Serialize> Serialize for Prefixed<'_, V> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (name, value) in &self.entries {
            map.serialize_entry(&Key(self.prefix, Cow::Borrowed(name)), value)?;
        }
        map.end()
    }
}

/// A prefixed name (`comp-train`) as one string, without building it.
#[derive(Debug, Clone)]
pub struct Key<'a>(pub &'static str, pub Cow<'a, str>);

impl fmt::Display for Key<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)?;
        f.write_str(&self.1)
    }
}

impl Serialize for Key<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

#[derive(Debug, Default, Serialize)]
pub struct Executor<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub container: Option<Container<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub importer: Option<Importer>,
}

#[derive(Debug, Default, Serialize)]
pub struct Container<'a> {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub command: Vec<Cow<'a, str>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar<'a>>,
    pub image: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resources: Option<Resources>,
}

#[derive(Debug, Serialize)]
pub struct EnvVar<'a> {
    pub name: &'a str,
    pub value: Cow<'a, str>,
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
pub struct ComponentSpec<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dag: Option<Dag<'a>>,
    /// `exec-NAME`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub executor_label: Option<Key<'a>>,
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
pub struct Dag<'a> {
    #[serde(skip_serializing_if = "DagOutputs::is_empty")]
    pub outputs: DagOutputs,
    pub tasks: BTreeMap<Cow<'a, str>, Task<'a>>,
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
pub struct Task<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub caching_options: Option<CachingOptions>,
    pub component_ref: ComponentRef<'a>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub dependent_tasks: Vec<Cow<'a, str>>,
    #[serde(skip_serializing_if = "TaskInputs::is_empty")]
    pub inputs: TaskInputs<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterator_policy: Option<IteratorPolicy>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter_iterator: Option<ParameterIterator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_policy: Option<RetryPolicy>,
    pub task_info: TaskInfo<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_policy: Option<TriggerPolicy>,
}

impl<'a> Task<'a> {
    /// The task `name` running component `comp-COMPONENT`.
    pub fn new(name: impl Into<Cow<'a, str>>, component: impl Into<Cow<'a, str>>) -> Task<'a> {
        Task {
            caching_options: None,
            component_ref: ComponentRef {
                name: Key("comp-", component.into()),
            },
            dependent_tasks: Vec::new(),
            inputs: TaskInputs::default(),
            iterator_policy: None,
            parameter_iterator: None,
            retry_policy: None,
            task_info: TaskInfo { name: name.into() },
            trigger_policy: None,
        }
    }
}

/// `enableCache: false` is proto3's default, so a disabled cache is `{}`.
#[derive(Debug, Serialize)]
pub struct CachingOptions {}

#[derive(Debug, Serialize)]
pub struct ComponentRef<'a> {
    pub name: Key<'a>,
}

#[derive(Debug, Serialize)]
pub struct TaskInfo<'a> {
    pub name: Cow<'a, str>,
}

#[derive(Debug, Default, Serialize)]
pub struct TaskInputs<'a> {
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub artifacts: SmallMap<ArtifactInput>,
    #[serde(skip_serializing_if = "SmallMap::is_empty")]
    pub parameters: SmallMap<ParameterInput<'a>>,
}

impl TaskInputs<'_> {
    pub fn is_empty(&self) -> bool {
        self.artifacts.is_empty() && self.parameters.is_empty()
    }
}

#[derive(Debug, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ParameterInput<'a> {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub component_input_parameter: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter_expression_selector: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime_value: Option<RuntimeValue>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_final_status: Option<ProducerTask>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub task_output_parameter: Option<TaskOutputParameter<'a>>,
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
pub struct TaskOutputParameter<'a> {
    pub output_parameter_key: String,
    pub producer_task: Cow<'a, str>,
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
pub struct PlatformSpec<'a> {
    pub platforms: Platforms<'a>,
}

#[derive(Debug, Serialize)]
pub struct Platforms<'a> {
    pub kubernetes: KubernetesPlatform<'a>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesPlatform<'a> {
    pub deployment_spec: KubernetesDeployment<'a>,
}

#[derive(Debug, Serialize)]
pub struct KubernetesDeployment<'a> {
    pub executors: Prefixed<'a, KubernetesExecutorConfig<'a>>,
}

/// `kfp_kubernetes.KubernetesExecutorConfig`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct KubernetesExecutorConfig<'a> {
    /// int64, a string in proto JSON.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub active_deadline_seconds: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub node_selector: Option<NodeSelector>,
    pub pod_metadata: StepPodMetadata<'a>,
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

/// The label naming a step's pods.
pub const STEP_LABEL: &str = "couler.dev/step";

/// A step's pod metadata: the run's, shared by every step, and the
/// [`STEP_LABEL`] label, put in key order when written.
#[derive(Debug)]
pub struct StepPodMetadata<'a> {
    pub run: Rc<PodMetadata>,
    pub step: &'a str,
}

impl Serialize for StepPodMetadata<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let fields = if self.run.annotations.is_empty() {
            1
        } else {
            2
        };
        let mut map = serializer.serialize_map(Some(fields))?;
        if !self.run.annotations.is_empty() {
            map.serialize_entry("annotations", &self.run.annotations)?;
        }
        map.serialize_entry("labels", &StepLabels(self))?;
        map.end()
    }
}

struct StepLabels<'m, 'a>(&'m StepPodMetadata<'a>);

impl Serialize for StepLabels<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let run = || {
            self.0
                .run
                .labels
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str()))
        };
        let before = run().filter(|(k, _)| *k < STEP_LABEL);
        let after = run().filter(|(k, _)| *k > STEP_LABEL);
        let step = std::iter::once((STEP_LABEL, self.0.step));
        serializer.collect_map(before.chain(step).chain(after))
    }
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
