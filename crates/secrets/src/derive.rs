//! Secrets derived from a platform key instead of stored: HKDF-SHA256
//! (RFC 5869) with the platform key as input keying material, a random
//! salt kept with what the secret is for, and `info` naming its purpose.
//! Whoever reads the database learns the salt and the key's id, never the
//! secret; the same key, salt and info give the same secret on every
//! replica.

use crate::{Keyring, SecretsError};
use hkdf::Hkdf;
use rand::Rng;
use secrecy::SecretBox;
use sha2::Sha256;

/// Length of a derived secret and of a salt, in bytes.
pub const DERIVED_LEN: usize = 32;

/// A new random salt for [`Keyring::derive`].
pub fn new_salt() -> [u8; DERIVED_LEN] {
    let mut salt = [0u8; DERIVED_LEN];
    rand::rng().fill_bytes(&mut salt);
    salt
}

impl Keyring {
    /// The secret platform key `key_id` derives for `salt` and `info`
    /// (a purpose and what it is bound to; callers separate the parts so
    /// that no two purposes can give the same bytes). Fails only when the
    /// key is not configured.
    pub fn derive(
        &self,
        key_id: &str,
        salt: &[u8],
        info: &[u8],
    ) -> Result<SecretBox<[u8; DERIVED_LEN]>, SecretsError> {
        let key = self
            .key(key_id)
            .ok_or_else(|| SecretsError::UnknownKey(key_id.to_owned()))?;
        let hkdf = Hkdf::<Sha256>::new(Some(salt), key);
        // Filled in place, so no copy of the secret is left behind.
        let mut out = Box::new([0u8; DERIVED_LEN]);
        hkdf.expand(info, &mut out[..])
            .expect("32 bytes is a valid HKDF-SHA256 output length");
        Ok(SecretBox::new(out))
    }
}
