//! The engines this scheduler can drive, by the name tenants choose.

use crate::config::Config;
use couler_engines::EngineAdapter;
use couler_engines::airflow::AirflowAdapter;
use couler_engines::argo::ArgoAdapter;
use couler_engines::kfp::KfpAdapter;
use couler_engines::local::{LocalConfig, LocalEngine};
use couler_engines::tekton::{TektonAdapter, TektonConfig};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct Engines {
    by_name: BTreeMap<&'static str, Arc<dyn EngineAdapter>>,
}

impl Engines {
    /// The local engine, plus every engine the configuration names.
    pub fn from_config(config: &Config) -> anyhow::Result<Engines> {
        let local = &config.local;
        std::fs::create_dir_all(&local.data_dir)?;
        let mut local_config = LocalConfig::new(local.data_dir.canonicalize()?);
        if let Some(n) = local.max_parallel_steps {
            local_config.max_parallel_steps = n;
        }
        local_config.sandbox = local.sandbox.clone();
        let mut engines = Engines::default().with(Arc::new(LocalEngine::try_new(local_config)?));
        if let Some(a) = &config.airflow {
            engines = engines.with(Arc::new(AirflowAdapter::new(a.adapter())?));
        }
        if let Some(argo) = config.argo_adapter() {
            engines = engines.with(Arc::new(ArgoAdapter::new(argo)?));
        }
        if let Some(t) = &config.tekton {
            engines = engines.with(Arc::new(TektonAdapter::new(TektonConfig::new(t.kube()))?));
        }
        if let Some(k) = &config.kfp {
            engines = engines.with(Arc::new(KfpAdapter::new(k.adapter())?));
        }
        Ok(engines)
    }

    pub fn with(mut self, engine: Arc<dyn EngineAdapter>) -> Engines {
        self.by_name.insert(engine.name(), engine);
        self
    }

    pub fn get(&self, name: &str) -> Option<Arc<dyn EngineAdapter>> {
        self.by_name.get(name).cloned()
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.by_name.keys().copied().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn configured_engines_are_offered() {
        let dir = std::env::temp_dir().join(format!("couler-engines-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("scheduler.toml");
        std::fs::write(
            &file,
            format!(
                r#"
[local]
data_dir = "{}"

[argo]
api_url = "https://10.0.0.1:6443"
token = "argo-token"
artifact_bucket = "ml-artifacts"
artifact_mount = "/mnt/ml-artifacts"

[tekton]
namespace = "pipelines-{{tenant}}"

[kfp]
base_url = "http://ml-pipeline.kubeflow:8888"
pods = {{ namespace = "kubeflow" }}

[airflow]
base_url = "http://airflow:8080"
dags_folder = "/opt/airflow/dags"
username = "couler"
password = "airflow-password"
pods = {{ namespace = "airflow-pods" }}

[cache]
mounts = [{{ prefix = "minio://mlpipeline", path = "/mnt/mlpipeline" }}]

[[cache.s3]]
prefix = "gs://ml-models"
endpoint = "https://storage.googleapis.com"
access_key_id = "GOOG1EHMAC"
secret_access_key = "gcs-hmac-secret"
"#,
                dir.join("local").display()
            ),
        )
        .unwrap();
        let config = Config::load(Some(&file)).expect("the config loads");
        let argo = config.argo_adapter().unwrap();
        assert_eq!(argo.artifact_bucket, "ml-artifacts");
        // Hits on the mounted buckets are checked there: KFP's, listed
        // with the cache's settings, and Argo's.
        assert_eq!(
            config.cache_config().mounts,
            [
                couler_objects::Mount {
                    prefix: "minio://mlpipeline".into(),
                    path: "/mnt/mlpipeline".into(),
                },
                couler_objects::Mount {
                    prefix: "s3://ml-artifacts/".into(),
                    path: "/mnt/ml-artifacts".into(),
                }
            ]
        );
        // And asked of S3-compatible stores listed with them.
        let s3 = &config.cache_config().s3;
        assert_eq!(
            s3.iter().map(|s| s.prefix()).collect::<Vec<_>>(),
            ["gs://ml-models/"]
        );
        assert_eq!(argo.kube.namespace("tnt_ab"), "couler-tnt-ab");
        assert!(
            !format!("{argo:?}").contains("argo-token"),
            "secrets never print"
        );
        assert!(
            !format!("{config:?}").contains("gcs-hmac-secret"),
            "secrets never print"
        );
        let tekton = config.tekton.as_ref().unwrap().kube();
        assert_eq!(tekton.namespace("tnt_ab"), "pipelines-tnt-ab");
        let kfp = config.kfp.as_ref().unwrap().adapter();
        assert_eq!(kfp.pods_namespace, "kubeflow");
        assert!(kfp.kube.is_some());
        let airflow = config.airflow.as_ref().unwrap().adapter();
        assert_eq!(
            airflow.operator,
            couler_engines::airflow::Operator::KubernetesPod
        );
        assert_eq!(airflow.pods_namespace, "airflow-pods");
        assert!(airflow.kube.is_some() && airflow.data_dir.is_none());
        assert!(!format!("{airflow:?}").contains("airflow-password"));

        let engines = Engines::from_config(&config).expect("engines");
        assert_eq!(
            engines.names(),
            ["airflow", "argo", "kfp", "local", "tekton"]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
