//! The values of the tenant secrets a run's steps reference, as the
//! scheduler hands them to an engine: held as [`SecretString`]s, never
//! printed, never serialized, and compared by name only.

use secrecy::SecretString;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Secret name → key → value, for one run.
#[derive(Clone, Default)]
pub struct SecretValues(Arc<BTreeMap<String, BTreeMap<String, SecretString>>>);

impl SecretValues {
    pub fn new(values: BTreeMap<String, BTreeMap<String, SecretString>>) -> SecretValues {
        SecretValues(Arc::new(values))
    }

    /// The value of `key` of secret `name`, if the run was given it.
    pub fn get(&self, name: &str, key: &str) -> Option<&SecretString> {
        self.0.get(name)?.get(key)
    }

    /// Each secret with its keys and values.
    pub fn iter(&self) -> impl Iterator<Item = (&String, &BTreeMap<String, SecretString>)> {
        self.0.iter()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn names(&self) -> impl Iterator<Item = (&String, Vec<&String>)> {
        self.0.iter().map(|(n, keys)| (n, keys.keys().collect()))
    }
}

impl std::fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.names()).finish()
    }
}

impl PartialEq for SecretValues {
    fn eq(&self, other: &Self) -> bool {
        self.names().eq(other.names())
    }
}

impl Eq for SecretValues {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_never_print() {
        let values = SecretValues::new(BTreeMap::from([(
            "hub".to_owned(),
            BTreeMap::from([("token".to_owned(), SecretString::from("s3cr3t-value"))]),
        )]));
        let shown = format!("{values:?}");
        assert!(shown.contains("hub") && shown.contains("token"), "{shown}");
        assert!(!shown.contains("s3cr3t-value"), "{shown}");
        assert!(values.get("hub", "token").is_some());
        assert!(values.get("hub", "other").is_none());
    }
}
