//! Scheduler configuration: defaults, an optional TOML file, then
//! `COULER__…` environment variables (and `DATABASE_URL`, `REDIS_URL`).

use serde::Deserialize;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    pub database: couler_store::DatabaseConfig,
    pub scheduler: SchedulerConfig,
    pub local: LocalEngineConfig,
    pub redis: couler_cache::RedisSettings,
    pub cache: couler_cache::CacheSettings,
    pub telemetry: couler_telemetry::TelemetryConfig,
    /// The LLM `llm` hyperparameter searches ask; none: they fall back to
    /// random configurations.
    pub llm: Option<couler_nl::llm::LlmConfig>,
    /// An Airflow 3 deployment to run the `airflow` tenants' runs on; none:
    /// not offered.
    pub airflow: Option<AirflowEngineConfig>,
    /// A Kubernetes cluster running Argo Workflows for the `argo` tenants'
    /// runs; none: not offered.
    pub argo: Option<ArgoEngineConfig>,
    /// A Kubernetes cluster running Tekton Pipelines for the `tekton`
    /// tenants' runs; none: not offered.
    pub tekton: Option<KubeEngineConfig>,
    /// A Kubeflow Pipelines API server for the `kfp` tenants' runs; none:
    /// not offered.
    pub kfp: Option<KfpEngineConfig>,
    /// Platform keys that open tenant secrets for delivery to steps (the
    /// same `[secrets]` section as the API's).
    pub secrets: couler_secrets::SecretsConfig,
}

/// An engine that runs as custom resources on a Kubernetes cluster.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KubeEngineConfig {
    /// The API server; none: the in-cluster service account, then
    /// `KUBECONFIG`.
    #[serde(default)]
    pub api_url: Option<String>,
    /// A bearer token for `api_url`.
    #[serde(default)]
    pub token: Option<secrecy::SecretString>,
    /// The namespace of a tenant's runs; `{tenant}` is replaced by the
    /// tenant id (default `couler-{tenant}`).
    #[serde(default = "default_namespace")]
    pub namespace: String,
}

fn default_namespace() -> String {
    "couler-{tenant}".into()
}

impl KubeEngineConfig {
    pub fn kube(&self) -> couler_engines::k8s::KubeConfig {
        couler_engines::k8s::KubeConfig {
            api_url: self.api_url.clone(),
            token: self.token.clone(),
            namespace: self.namespace.clone(),
        }
    }
}

/// Argo Workflows: a Kubernetes cluster plus where its artifact repository
/// is.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ArgoEngineConfig {
    /// As in [`KubeEngineConfig`].
    #[serde(default)]
    pub api_url: Option<String>,
    #[serde(default)]
    pub token: Option<secrecy::SecretString>,
    #[serde(default = "default_namespace")]
    pub namespace: String,
    /// The bucket of Argo's artifact repository (default
    /// `couler-artifacts`).
    #[serde(default)]
    pub artifact_bucket: Option<String>,
    /// Where that bucket is readable from this scheduler, to digest output
    /// artifacts; none: they are read from the bucket when `cache.s3` lists
    /// it, and otherwise not reported (nor cached).
    #[serde(default)]
    pub artifact_mount: Option<PathBuf>,
}

impl Config {
    /// The cache index's settings, with every object store this scheduler
    /// sees, so that a hit on a deleted artifact there is a miss.
    pub fn cache_config(&self) -> couler_cache::CacheConfig {
        let mut config = self.redis.cache_config(&self.cache);
        config.mounts = self.mounts();
        config
    }

    /// The Argo adapter's settings; it reads what steps store in its
    /// bucket from the same stores the cache checks hits in.
    pub fn argo_adapter(&self) -> Option<couler_engines::argo::ArgoConfig> {
        let argo = self.argo.as_ref()?;
        let stores = couler_objects::Stores::new(self.mounts(), self.cache.s3.clone());
        Some(argo.adapter(stores))
    }

    /// The object stores mounted here: those listed with the cache's
    /// settings, and Argo's artifact bucket where it is mounted.
    fn mounts(&self) -> Vec<couler_objects::Mount> {
        let mut mounts = self.cache.mounts.clone();
        if let Some(argo) = &self.argo
            && let Some(path) = &argo.artifact_mount
        {
            mounts.push(couler_objects::Mount {
                prefix: argo.adapter(Default::default()).bucket_prefix(),
                path: path.clone(),
            });
        }
        mounts
    }
}

impl ArgoEngineConfig {
    fn adapter(&self, artifact_stores: couler_objects::Stores) -> couler_engines::argo::ArgoConfig {
        let kube = KubeEngineConfig {
            api_url: self.api_url.clone(),
            token: self.token.clone(),
            namespace: self.namespace.clone(),
        };
        let mut config = couler_engines::argo::ArgoConfig::new(kube.kube());
        if let Some(bucket) = &self.artifact_bucket {
            config.artifact_bucket = bucket.clone();
        }
        config.artifact_stores = artifact_stores;
        config
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KfpEngineConfig {
    /// The API server, e.g. `http://ml-pipeline.kubeflow:8888`.
    pub base_url: String,
    /// A bearer token, when the API server requires one.
    #[serde(default)]
    pub token: Option<secrecy::SecretString>,
    /// The experiment runs go to; none: KFP's default experiment.
    #[serde(default)]
    pub experiment_id: Option<String>,
    /// The cluster KFP runs its pods on, for step logs (KFP's API serves
    /// none); none: no logs.
    #[serde(default)]
    pub pods: Option<KubeEngineConfig>,
}

impl KfpEngineConfig {
    pub fn adapter(&self) -> couler_engines::kfp::KfpConfig {
        let mut config = couler_engines::kfp::KfpConfig::new(self.base_url.clone());
        config.token = self.token.clone();
        config.experiment_id = self.experiment_id.clone();
        if let Some(pods) = &self.pods {
            config.pods_namespace = pods.namespace.clone();
            config.kube = Some(pods.kube());
        }
        config
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AirflowEngineConfig {
    /// The API server, e.g. `http://airflow:8080`.
    pub base_url: String,
    /// The DAGs folder its dag processor reads (shared with this scheduler).
    pub dags_folder: PathBuf,
    pub username: String,
    pub password: secrecy::SecretString,
    /// `kubernetes-pod` (default) or `bash` (a LocalExecutor).
    #[serde(default)]
    pub operator: AirflowOperator,
    /// With `bash`: the workers' data directory (their
    /// `COULER_AIRFLOW_DATA`) as this scheduler sees it, where a run's
    /// secrets are written while it runs; none: runs reading secrets fail.
    #[serde(default)]
    pub data_dir: Option<PathBuf>,
    /// With `kubernetes-pod`: the cluster and namespace its pods run in,
    /// where a run's secrets become Kubernetes Secrets; none: runs reading
    /// secrets fail.
    #[serde(default)]
    pub pods: Option<KubeEngineConfig>,
}

impl AirflowEngineConfig {
    pub fn adapter(&self) -> couler_engines::airflow::AirflowConfig {
        use couler_engines::airflow::{AirflowConfig, Operator};
        let mut config = AirflowConfig::new(
            self.base_url.clone(),
            self.dags_folder.clone(),
            self.username.clone(),
            self.password.clone(),
        );
        config.operator = match self.operator {
            AirflowOperator::KubernetesPod => Operator::KubernetesPod,
            AirflowOperator::Bash => Operator::Bash,
        };
        config.data_dir = self.data_dir.clone();
        if let Some(pods) = &self.pods {
            config.pods_namespace = pods.namespace.clone();
            config.kube = Some(pods.kube());
        }
        config
    }
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AirflowOperator {
    #[default]
    KubernetesPod,
    Bash,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SchedulerConfig {
    /// This replica's name in leases; hostname and pid when absent.
    pub id: Option<String>,
    /// How long a claim lasts without renewal; a dead scheduler's runs are
    /// taken over after this.
    pub lease_secs: u64,
    /// Lease renewal (and cancel check) interval.
    pub heartbeat_ms: u64,
    /// Queue polling when no notification arrives.
    pub poll_ms: u64,
    /// Runs this replica drives at once.
    pub max_active_runs: usize,
    /// Where `/metrics` is served; none: not served.
    pub metrics_addr: Option<SocketAddr>,
}

impl Default for SchedulerConfig {
    fn default() -> Self {
        SchedulerConfig {
            id: None,
            lease_secs: 15,
            heartbeat_ms: 1000,
            poll_ms: 1000,
            max_active_runs: 64,
            metrics_addr: None,
        }
    }
}

impl SchedulerConfig {
    pub fn lease(&self) -> Duration {
        Duration::from_secs(self.lease_secs)
    }

    /// The lease owner name.
    pub fn owner(&self) -> String {
        self.id.clone().unwrap_or_else(|| {
            let host =
                std::fs::read_to_string("/etc/hostname").unwrap_or_else(|_| "localhost".into());
            format!("{}-{}", host.trim(), std::process::id())
        })
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LocalEngineConfig {
    /// Working directories, logs and the content-addressed artifact store.
    pub data_dir: PathBuf,
    /// Step processes at once; 4 × CPUs when absent.
    pub max_parallel_steps: Option<usize>,
    /// How steps are sandboxed (`[local.sandbox]`).
    pub sandbox: couler_engines::local::SandboxConfig,
}

impl Default for LocalEngineConfig {
    fn default() -> Self {
        LocalEngineConfig {
            data_dir: PathBuf::from(".couler/local"),
            max_parallel_steps: None,
            sandbox: Default::default(),
        }
    }
}

const SECTIONS: &[&str] = &[
    "database",
    "scheduler",
    "local",
    "redis",
    "cache",
    "telemetry",
    "llm",
    "airflow",
    "argo",
    "tekton",
    "kfp",
    "secrets",
];

impl Config {
    pub fn load(file: Option<&Path>) -> Result<Config, Box<figment::Error>> {
        couler_telemetry::load_config(file, SECTIONS)
    }

    /// Every environment variable [`Config::load`] reads, from these types.
    pub fn env_vars() -> Result<Vec<String>, couler_telemetry::config_env::TraceError> {
        couler_telemetry::config_env::env_vars::<Config>(SECTIONS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_vars_reach_into_every_section() {
        let names = Config::env_vars().expect("the config types trace");
        for section in SECTIONS {
            let prefix = format!("COULER__{}__", section.to_ascii_uppercase());
            assert!(
                names.iter().any(|n| n.starts_with(&prefix)),
                "{section}: {names:?}"
            );
        }
        for name in [
            "COULER__SCHEDULER__METRICS_ADDR",
            "COULER__LOCAL__DATA_DIR",
            "COULER__LOCAL__SANDBOX__ISOLATION",
            "COULER__LOCAL__SANDBOX__MOUNTS",
            "COULER__AIRFLOW__OPERATOR",
            "COULER__AIRFLOW__PODS__NAMESPACE",
            "COULER__KFP__PODS__API_URL",
            "COULER__ARGO__ARTIFACT_MOUNT",
            "COULER__CACHE__S3",
            "COULER__SECRETS__KEYS__<KEY>",
            "REDIS_URL",
        ] {
            assert!(names.iter().any(|n| n == name), "{name} missing: {names:?}");
        }
    }
}
