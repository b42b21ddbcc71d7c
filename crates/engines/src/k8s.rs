//! What the Kubernetes-based adapters (Argo, Tekton, KFP) share: how to
//! reach the cluster, which namespace a tenant's runs go to, and how a
//! run's tenant secrets become Kubernetes Secrets there ([`secrets`]).

pub mod secrets;

use crate::EngineError;
use secrecy::{ExposeSecret, SecretString};

/// How to reach a Kubernetes cluster.
#[derive(Debug, Clone)]
pub struct KubeConfig {
    /// The API server, e.g. `https://10.0.0.1:6443`; none: the usual
    /// discovery (in-cluster service account, then `KUBECONFIG`).
    pub api_url: Option<String>,
    /// A bearer token for `api_url` (a service account's).
    pub token: Option<SecretString>,
    /// The namespace of a tenant's runs; `{tenant}` is replaced by the
    /// tenant id, lower-cased (`couler-{tenant}` → `couler-tnt_ab12` is not
    /// a valid name, so `_` becomes `-`).
    pub namespace: String,
}

impl KubeConfig {
    /// Discovers the cluster; namespaces `couler-{tenant}`.
    pub fn infer() -> KubeConfig {
        KubeConfig {
            api_url: None,
            token: None,
            namespace: "couler-{tenant}".into(),
        }
    }

    /// A cluster at `url` (tests point this at the fake API server).
    pub fn at(url: impl Into<String>) -> KubeConfig {
        KubeConfig {
            api_url: Some(url.into()),
            ..KubeConfig::infer()
        }
    }

    /// The namespace of `tenant`'s runs.
    pub fn namespace(&self, tenant: &str) -> String {
        let tenant = tenant.to_ascii_lowercase().replace('_', "-");
        self.namespace.replace("{tenant}", &tenant)
    }

    /// A client for the cluster; `engine` names the adapter in errors.
    pub async fn client(&self, engine: &'static str) -> Result<kube::Client, EngineError> {
        let unavailable = |message: String| EngineError::Unavailable { engine, message };
        let mut config = match &self.api_url {
            Some(url) => {
                let uri = url.parse().map_err(|e| {
                    unavailable(format!("the API server URL {url:?} is invalid: {e}"))
                })?;
                kube::Config::new(uri)
            }
            None => kube::Config::infer()
                .await
                .map_err(|e| unavailable(format!("no Kubernetes configuration was found: {e}")))?,
        };
        if let Some(token) = &self.token {
            config.auth_info.token = Some(token.expose_secret().to_owned().into());
        }
        kube::Client::try_from(config).map_err(|e| unavailable(e.to_string()))
    }
}

/// A refusal by the API server is the run's problem; anything else
/// (5xx, throttling, no connection) is the engine being unavailable.
pub(crate) fn api_error(engine: &'static str, e: kube::Error) -> EngineError {
    match e {
        kube::Error::Api(s) if s.code < 500 && s.code != 429 => EngineError::Other(format!(
            "the Kubernetes API refused ({} {}): {}",
            s.code, s.reason, s.message
        )),
        other => EngineError::Unavailable {
            engine,
            message: other.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tenant_namespaces_are_valid_names() {
        assert_eq!(KubeConfig::infer().namespace("tnt_AB12"), "couler-tnt-ab12");
    }
}
