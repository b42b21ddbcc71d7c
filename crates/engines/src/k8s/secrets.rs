//! Tenant secrets as Kubernetes Secrets.
//!
//! Before a run starts on a Kubernetes-based engine, the scheduler mirrors
//! every tenant secret the run reads into the namespace its pods run in,
//! and the compiled manifest names that Secret in `secretKeyRef` (Argo,
//! Tekton) or `secretAsEnv` (KFP). The Secret holds the secret's current
//! version, all its keys, and nothing else: keys the version no longer has
//! are removed. It is labelled as Couler's and as the tenant's, and a
//! Secret of the same name that is not Couler's is never overwritten.

use super::api_error;
use crate::{EngineError, SecretValues};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, ObjectMeta, Patch, PatchParams, PostParams};
use secrecy::ExposeSecret;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// The label every Secret the scheduler writes carries.
pub const MANAGED_BY: (&str, &str) = ("app.kubernetes.io/managed-by", "couler");
/// The label naming the tenant whose secret a Secret holds.
pub const TENANT_LABEL: &str = "couler.dev/tenant";
/// The annotation naming the tenant secret a Secret holds.
pub const SECRET_ANNOTATION: &str = "couler.dev/secret";

const PREFIX: &str = "couler-secret-";
/// A Kubernetes object name's limit (DNS-1123 subdomain).
const MAX_NAME: usize = 253;

/// Where a tenant's secrets go in a cluster.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Namespace<'a> {
    /// A namespace of the tenant's own (Argo, Tekton): `couler-secret-<name>`.
    Own,
    /// One namespace every tenant's pods share (KFP):
    /// `couler-secret-<tenant>-<name>`.
    Shared { tenant: &'a str },
}

/// The name of the Kubernetes Secret that holds tenant secret `name`. A
/// name past 253 characters is cut and ends in a hash of the whole, so
/// distinct secrets never share a Secret.
pub fn secret_object(namespace: Namespace<'_>, name: &str) -> String {
    let full = match namespace {
        Namespace::Own => format!("{PREFIX}{name}"),
        Namespace::Shared { tenant } => {
            let tenant = tenant.to_ascii_lowercase().replace('_', "-");
            format!("{PREFIX}{tenant}-{name}")
        }
    };
    if full.len() <= MAX_NAME {
        return full;
    }
    let hash = blake3::hash(full.as_bytes()).to_hex();
    let keep = MAX_NAME - 1 - 16;
    let head = full[..keep].trim_end_matches(['-', '.']);
    format!("{head}-{}", &hash[..16])
}

/// Writes `secrets` into `namespace` as [`secret_object`]s, creating or
/// updating each so it holds exactly the revealed version's keys.
pub async fn sync(
    client: kube::Client,
    namespace: &str,
    placement: Namespace<'_>,
    tenant: &str,
    secrets: &SecretValues,
    engine: &'static str,
) -> Result<(), EngineError> {
    let api: Api<Secret> = Api::namespaced(client, namespace);
    for (name, keys) in secrets.iter() {
        let object = secret_object(placement, name);
        let data: BTreeMap<String, ByteString> = keys
            .iter()
            .map(|(k, v)| (k.clone(), ByteString(v.expose_secret().as_bytes().to_vec())))
            .collect();
        put(&api, &object, name, tenant, data, engine)
            .await
            .map_err(|e| match e {
                Put::Api(e) => api_error(engine, e),
                Put::NotOurs(message) => EngineError::Other(format!(
                    "cannot deliver secret `{name}` to namespace {namespace}: {message}"
                )),
            })?;
    }
    Ok(())
}

enum Put {
    Api(kube::Error),
    NotOurs(String),
}

async fn put(
    api: &Api<Secret>,
    object: &str,
    name: &str,
    tenant: &str,
    data: BTreeMap<String, ByteString>,
    engine: &'static str,
) -> Result<(), Put> {
    // A create that loses a race to another scheduler's re-reads.
    for _ in 0..3 {
        let Some(existing) = api.get_opt(object).await.map_err(Put::Api)? else {
            let secret = Secret {
                metadata: ObjectMeta {
                    name: Some(object.to_owned()),
                    labels: Some(labels(tenant)),
                    annotations: Some(BTreeMap::from([(
                        SECRET_ANNOTATION.to_owned(),
                        name.to_owned(),
                    )])),
                    ..ObjectMeta::default()
                },
                type_: Some("Opaque".into()),
                data: Some(data.clone()),
                ..Secret::default()
            };
            match api.create(&PostParams::default(), &secret).await {
                Ok(_) => return Ok(()),
                Err(kube::Error::Api(s)) if s.code == 409 => continue,
                Err(e) => return Err(Put::Api(e)),
            }
        };
        let theirs = existing.metadata.labels.unwrap_or_default();
        if theirs.get(MANAGED_BY.0).map(String::as_str) != Some(MANAGED_BY.1)
            || theirs.get(TENANT_LABEL).map(String::as_str) != Some(tenant)
        {
            return Err(Put::NotOurs(format!(
                "a Secret named {object} exists there and is not this tenant's Couler secret; \
                 it is left alone (rename or remove it)"
            )));
        }
        let current = existing.data.unwrap_or_default();
        if current == data {
            return Ok(());
        }
        // A merge patch: new values, and null for keys the version dropped.
        let mut patch = Map::new();
        for key in current.keys().filter(|k| !data.contains_key(*k)) {
            patch.insert(key.clone(), Value::Null);
        }
        for (key, value) in &data {
            patch.insert(key.clone(), serde_json::to_value(value).unwrap_or_default());
        }
        api.patch(
            object,
            &PatchParams::default(),
            &Patch::Merge(json!({"data": patch})),
        )
        .await
        .map_err(Put::Api)?;
        tracing::info!(
            engine,
            secret = name,
            object,
            "updated the tenant secret's Kubernetes Secret"
        );
        return Ok(());
    }
    Err(Put::NotOurs(format!(
        "the Secret {object} kept changing while it was written"
    )))
}

fn labels(tenant: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        (MANAGED_BY.0.to_owned(), MANAGED_BY.1.to_owned()),
        (TENANT_LABEL.to_owned(), tenant.to_owned()),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_objects_are_valid_distinct_names() {
        assert_eq!(secret_object(Namespace::Own, "hub"), "couler-secret-hub");
        let tenant = "tnt_0123456789abcdef0123456789abcdef";
        assert_eq!(
            secret_object(Namespace::Shared { tenant }, "hub"),
            "couler-secret-tnt-0123456789abcdef0123456789abcdef-hub"
        );
        let long = vec!["x".repeat(60); 4].join(".");
        let (long_a, long_b) = (format!("{long}.a"), format!("{long}.b"));
        let (a, b) = (
            secret_object(Namespace::Own, &long_a),
            secret_object(Namespace::Own, &long_b),
        );
        assert_ne!(a, b);
        // Kubernetes' check: at most 253 characters, labels of [a-z0-9-]
        // that start and end alphanumeric.
        for name in [&a, &b] {
            assert!(name.len() <= 253, "{name}");
            assert!(name.split('.').all(|l| {
                !l.is_empty()
                    && !l.starts_with('-')
                    && !l.ends_with('-')
                    && l.bytes()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == b'-')
            }));
        }
    }
}
