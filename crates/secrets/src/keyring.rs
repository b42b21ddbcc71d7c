//! Platform keys from configuration: named AES-256 keys (base64 of 32
//! bytes) and the id of the one that wraps new data keys. Key material
//! never prints.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::Rng;
use secrecy::{ExposeSecret, SecretBox, SecretString};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt;

/// The `[secrets]` section both services read.
///
/// ```toml
/// [secrets]
/// active_key = "k2"
/// keys = { k1 = "<base64 of 32 bytes>", k2 = "<base64 of 32 bytes>" }
/// ```
/// Keep retired keys listed until a re-wrap has moved every data key off
/// them. Key ids given through the environment
/// (`COULER__SECRETS__KEYS__K2=…`) are read in lowercase.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SecretsConfig {
    /// Key id → base64 of 32 random bytes (`openssl rand -base64 32`).
    pub keys: BTreeMap<String, SecretString>,
    /// The key new data keys are wrapped by; may be left out when there is
    /// only one key.
    pub active_key: Option<String>,
}

impl SecretsConfig {
    /// Whether any key is configured (without one, secrets are off).
    pub fn is_configured(&self) -> bool {
        !self.keys.is_empty()
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum KeyringError {
    #[error("secrets.keys.{0} is not base64 of exactly 32 bytes")]
    BadKey(String),
    #[error("secrets.active_key {0:?} is not one of secrets.keys")]
    UnknownActive(String),
    #[error("secrets.keys has several keys: set secrets.active_key to the one new secrets use")]
    NoActive,
    #[error("secrets.active_key is set but secrets.keys is empty")]
    NoKeys,
    #[error("key id {0:?} must be 1 to 64 characters of a-z, 0-9, '-', '_' or '.'")]
    BadId(String),
}

/// The platform keys, one of them active.
pub struct Keyring {
    keys: BTreeMap<String, SecretBox<[u8; 32]>>,
    active: String,
}

impl fmt::Debug for Keyring {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Keyring")
            .field("keys", &self.keys.keys().collect::<Vec<_>>())
            .field("active", &self.active)
            .finish()
    }
}

impl Keyring {
    /// The keyring `config` describes; `None` when it lists no keys.
    pub fn from_config(config: &SecretsConfig) -> Result<Option<Keyring>, KeyringError> {
        if config.keys.is_empty() {
            return match &config.active_key {
                Some(_) => Err(KeyringError::NoKeys),
                None => Ok(None),
            };
        }
        let mut keys = BTreeMap::new();
        for (id, encoded) in &config.keys {
            keys.insert(id.clone(), decode_key(id, encoded.expose_secret())?);
        }
        let active = match &config.active_key {
            Some(id) => id.clone(),
            None if keys.len() == 1 => keys.keys().next().expect("one key").clone(),
            None => return Err(KeyringError::NoActive),
        };
        Keyring::new(keys, active).map(Some)
    }

    /// A keyring of `keys` wrapping new data keys with `active`.
    pub fn new(
        keys: BTreeMap<String, SecretBox<[u8; 32]>>,
        active: String,
    ) -> Result<Keyring, KeyringError> {
        if let Some(bad) = keys.keys().find(|id| !valid_id(id)) {
            return Err(KeyringError::BadId(bad.clone()));
        }
        if !keys.contains_key(&active) {
            return Err(KeyringError::UnknownActive(active));
        }
        Ok(Keyring { keys, active })
    }

    /// The id of the key new data keys are wrapped by.
    pub fn active_id(&self) -> &str {
        &self.active
    }

    /// Whether `id` is configured (so data keys it wrapped open).
    pub fn has_key(&self, id: &str) -> bool {
        self.keys.contains_key(id)
    }

    pub(crate) fn active(&self) -> (&str, &[u8; 32]) {
        (&self.active, self.keys[&self.active].expose_secret())
    }

    pub(crate) fn key(&self, id: &str) -> Option<&[u8; 32]> {
        self.keys.get(id).map(|k| k.expose_secret())
    }
}

fn valid_id(id: &str) -> bool {
    (1..=64).contains(&id.len())
        && id
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

fn decode_key(id: &str, encoded: &str) -> Result<SecretBox<[u8; 32]>, KeyringError> {
    let bytes = secrecy::zeroize::Zeroizing::new(
        STANDARD
            .decode(encoded.trim())
            .map_err(|_| KeyringError::BadKey(id.to_owned()))?,
    );
    if bytes.len() != 32 {
        return Err(KeyringError::BadKey(id.to_owned()));
    }
    // Filled in place, so no copy of the key is left on the stack.
    let mut key = Box::new([0u8; 32]);
    key.copy_from_slice(&bytes);
    Ok(SecretBox::new(key))
}

/// A new random platform key, base64-encoded as configuration takes it.
pub fn generate_key() -> SecretString {
    let mut key = secrecy::zeroize::Zeroizing::new([0u8; 32]);
    rand::rng().fill_bytes(&mut key[..]);
    SecretString::from(STANDARD.encode(&key[..]))
}
