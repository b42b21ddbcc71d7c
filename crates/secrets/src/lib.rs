//! Envelope encryption of tenant secrets, with no I/O.
//!
//! Each secret version is sealed with a fresh random data key (AES-256-GCM);
//! the data key is wrapped by the keyring's active platform key. Both
//! ciphertexts are bound, through their associated data, to the tenant, the
//! secret's name and version (and the wrap to the platform key's id), so a
//! row copied to another tenant, name or version does not open. Rotating the
//! platform key re-wraps data keys only ([`Keyring::rewrap`]); values are
//! never re-encrypted.
//!
//! Secrets that must be reproduced rather than opened (webhook signing
//! secrets) are derived from a platform key instead ([`Keyring::derive`]).

mod derive;
mod keyring;

pub use derive::{DERIVED_LEN, new_salt};
pub use keyring::{Keyring, KeyringError, SecretsConfig, generate_key};

use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use rand::Rng;
use secrecy::zeroize::Zeroizing;
use secrecy::{ExposeSecret, SecretString};
use std::collections::BTreeMap;

/// A secret's value: key → string.
pub type SecretData = BTreeMap<String, SecretString>;

const NONCE_LEN: usize = 12;

/// What a sealed value is bound to.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    /// The tenant's id, as it is printed (`tnt_…`).
    pub tenant: &'a str,
    pub name: &'a str,
    pub version: i32,
}

impl Context<'_> {
    fn aad(&self, purpose: &str, key_id: Option<&str>) -> Vec<u8> {
        // NUL separators: none of the parts can hold one (ids, DNS names).
        let mut aad = format!("couler-secret/v1\0{purpose}\0");
        if let Some(id) = key_id {
            aad.push_str(id);
            aad.push('\0');
        }
        aad.push_str(&format!("{}\0{}\0{}", self.tenant, self.name, self.version));
        aad.into_bytes()
    }
}

/// A data key wrapped by a platform key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrappedKey {
    /// The platform key that wraps it.
    pub key_id: String,
    pub nonce: Vec<u8>,
    /// The data key, encrypted, with its tag.
    pub ciphertext: Vec<u8>,
}

/// A sealed secret value, as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sealed {
    pub data_key: WrappedKey,
    pub nonce: Vec<u8>,
    /// The value (JSON of key → string), encrypted, with its tag.
    pub ciphertext: Vec<u8>,
}

#[derive(Debug, thiserror::Error)]
pub enum SecretsError {
    #[error("platform key {0:?} is not configured; it is needed to open this secret")]
    UnknownKey(String),
    /// Tampered, copied to another tenant, name or version, or wrapped by a
    /// different key of the same id.
    #[error("the secret could not be opened: it was altered or does not belong here")]
    Corrupt,
}

impl Keyring {
    /// Seals `data` under a new data key wrapped by the active key.
    pub fn seal(&self, ctx: &Context, data: &SecretData) -> Result<Sealed, SecretsError> {
        let plain: BTreeMap<&str, &str> = data
            .iter()
            .map(|(k, v)| (k.as_str(), v.expose_secret()))
            .collect();
        let plain = Zeroizing::new(serde_json::to_vec(&plain).expect("strings serialize"));
        let mut data_key = Zeroizing::new([0u8; 32]);
        rand::rng().fill_bytes(&mut data_key[..]);
        let (nonce, ciphertext) = encrypt(&data_key, &plain, &ctx.aad("value", None))?;
        Ok(Sealed {
            data_key: self.wrap(ctx, &data_key)?,
            nonce,
            ciphertext,
        })
    }

    /// Opens a sealed value. Fails if the key that wrapped it is not
    /// configured, or if anything was altered.
    pub fn open(&self, ctx: &Context, sealed: &Sealed) -> Result<SecretData, SecretsError> {
        let data_key = self.unwrap(ctx, &sealed.data_key)?;
        let plain = decrypt(
            &data_key,
            &sealed.nonce,
            &sealed.ciphertext,
            &ctx.aad("value", None),
        )?;
        let mut map: BTreeMap<String, String> =
            serde_json::from_slice(&plain).map_err(|_| SecretsError::Corrupt)?;
        Ok(std::mem::take(&mut map)
            .into_iter()
            .map(|(k, v)| (k, SecretString::from(v)))
            .collect())
    }

    /// The data key wrapped by the active key instead; `None` when it
    /// already is.
    pub fn rewrap(
        &self,
        ctx: &Context,
        wrapped: &WrappedKey,
    ) -> Result<Option<WrappedKey>, SecretsError> {
        if wrapped.key_id == self.active_id() {
            return Ok(None);
        }
        let data_key = self.unwrap(ctx, wrapped)?;
        self.wrap(ctx, &data_key).map(Some)
    }

    fn wrap(&self, ctx: &Context, data_key: &[u8; 32]) -> Result<WrappedKey, SecretsError> {
        let (id, key) = self.active();
        let (nonce, ciphertext) = encrypt(key, data_key, &ctx.aad("data-key", Some(id)))?;
        Ok(WrappedKey {
            key_id: id.to_owned(),
            nonce,
            ciphertext,
        })
    }

    fn unwrap(
        &self,
        ctx: &Context,
        wrapped: &WrappedKey,
    ) -> Result<Zeroizing<[u8; 32]>, SecretsError> {
        let key = self
            .key(&wrapped.key_id)
            .ok_or_else(|| SecretsError::UnknownKey(wrapped.key_id.clone()))?;
        let plain = decrypt(
            key,
            &wrapped.nonce,
            &wrapped.ciphertext,
            &ctx.aad("data-key", Some(&wrapped.key_id)),
        )?;
        let mut data_key = Zeroizing::new([0u8; 32]);
        if plain.len() != data_key.len() {
            return Err(SecretsError::Corrupt);
        }
        data_key.copy_from_slice(&plain);
        Ok(data_key)
    }
}

fn encrypt(key: &[u8; 32], plain: &[u8], aad: &[u8]) -> Result<(Vec<u8>, Vec<u8>), SecretsError> {
    let cipher = Aes256Gcm::new_from_slice(key).expect("32-byte keys");
    // Random 96-bit nonces: each data key seals one value, and a platform
    // key wraps far fewer than the 2^32 keys NIST allows per key.
    let mut nonce = [0u8; NONCE_LEN];
    rand::rng().fill_bytes(&mut nonce);
    let ciphertext = cipher
        .encrypt(&Nonce::from(nonce), Payload { msg: plain, aad })
        .map_err(|_| SecretsError::Corrupt)?;
    Ok((nonce.to_vec(), ciphertext))
}

fn decrypt(
    key: &[u8; 32],
    nonce: &[u8],
    ciphertext: &[u8],
    aad: &[u8],
) -> Result<Zeroizing<Vec<u8>>, SecretsError> {
    let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| SecretsError::Corrupt)?;
    let cipher = Aes256Gcm::new_from_slice(key).expect("32-byte keys");
    cipher
        .decrypt(
            &Nonce::from(nonce),
            Payload {
                msg: ciphertext,
                aad,
            },
        )
        .map(Zeroizing::new)
        .map_err(|_| SecretsError::Corrupt)
}

#[cfg(test)]
mod tests;
