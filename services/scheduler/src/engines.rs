//! The engines this scheduler can drive, by the name tenants choose.

use crate::config::{AirflowEngineConfig, AirflowOperator, LocalEngineConfig};
use couler_engines::EngineAdapter;
use couler_engines::airflow::{AirflowAdapter, AirflowConfig, Operator};
use couler_engines::local::{LocalConfig, LocalEngine};
use std::collections::BTreeMap;
use std::sync::Arc;

#[derive(Clone, Default)]
pub struct Engines {
    by_name: BTreeMap<&'static str, Arc<dyn EngineAdapter>>,
}

impl Engines {
    pub fn from_config(
        local: &LocalEngineConfig,
        airflow: Option<&AirflowEngineConfig>,
    ) -> anyhow::Result<Engines> {
        std::fs::create_dir_all(&local.data_dir)?;
        let mut config = LocalConfig::new(local.data_dir.canonicalize()?);
        if let Some(n) = local.max_parallel_steps {
            config.max_parallel_steps = n;
        }
        let mut engines = Engines::default().with(Arc::new(LocalEngine::new(config)));
        if let Some(a) = airflow {
            let mut config = AirflowConfig::new(
                a.base_url.clone(),
                a.dags_folder.clone(),
                a.username.clone(),
                a.password.clone(),
            );
            config.operator = match a.operator {
                AirflowOperator::KubernetesPod => Operator::KubernetesPod,
                AirflowOperator::Bash => Operator::Bash,
            };
            engines = engines.with(Arc::new(AirflowAdapter::new(config)?));
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
