//! Who sent a delivery: the three schemes, each checked in constant time
//! over the raw body as received. Also how a trigger's credentials are
//! made: public ids, HMAC secrets (derived from a platform key, never
//! stored) and bearer tokens (stored as their hash).

use crate::error::{ApiError, ApiResult};
use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use couler_secrets::{DERIVED_LEN, Keyring};
use couler_store::webhooks::{AuthScheme, Credential};
use couler_store::{TenantId, TriggerId};
use hmac::{Hmac, KeyInit, Mac};
use rand::Rng;
use secrecy::ExposeSecret;
use secrecy::zeroize::Zeroizing;
use sha2::Sha256;

type HmacSha256 = Hmac<Sha256>;

/// GitHub's signature header: `sha256=` and the hex HMAC of the body.
pub const GITHUB_SIGNATURE: &str = "x-hub-signature-256";
/// GitHub's delivery id (a GUID, the same on a redelivery).
pub const GITHUB_DELIVERY: &str = "x-github-delivery";
/// Standard Webhooks: the message id (signed, the same on a retry).
pub const WEBHOOK_ID: &str = "webhook-id";
/// Standard Webhooks: seconds since the epoch when it was sent (signed).
pub const WEBHOOK_TIMESTAMP: &str = "webhook-timestamp";
/// Standard Webhooks: space-separated `v1,<base64 HMAC>` signatures.
pub const WEBHOOK_SIGNATURE: &str = "webhook-signature";

/// The prefix of a trigger's public id.
pub const PUBLIC_ID_PREFIX: &str = "whk_";
/// The prefix of a bearer token.
const TOKEN_PREFIX: &str = "cht_";
/// The prefix Standard Webhooks secrets carry.
const STANDARD_SECRET_PREFIX: &str = "whsec_";

/// Why a delivery does not authenticate. Only metrics and debug logs see
/// it; the sender is told no more than that it does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The scheme's header is absent.
    Missing,
    /// The header is not in the scheme's form.
    Malformed,
    /// Standard Webhooks: the timestamp is outside the replay window.
    Stale,
    /// No key of the trigger made this signature (or token).
    Mismatch,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Missing => "missing",
            Rejection::Malformed => "malformed",
            Rejection::Stale => "stale",
            Rejection::Mismatch => "mismatch",
        }
    }
}

/// What a delivery is checked against: an HMAC key, or a token's hash.
pub enum Key {
    Hmac(Zeroizing<Vec<u8>>),
    TokenHash(Vec<u8>),
}

/// A new public id: `whk_` and 128 random bits, base64url.
pub fn new_public_id() -> String {
    let mut bits = [0u8; 16];
    rand::rng().fill_bytes(&mut bits);
    format!("{PUBLIC_ID_PREFIX}{}", URL_SAFE_NO_PAD.encode(bits))
}

/// Whether `s` has the shape of a public id (others are not looked up).
pub fn is_public_id(s: &str) -> bool {
    s.strip_prefix(PUBLIC_ID_PREFIX).is_some_and(|bits| {
        bits.len() == 22
            && bits
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    })
}

/// What an HMAC secret is derived for: the purpose, tenant, trigger and
/// scheme, NUL-separated (none of them can hold a NUL).
fn info(tenant: TenantId, trigger: TriggerId, auth: AuthScheme) -> Vec<u8> {
    format!("couler-webhook/v1\0{tenant}\0{trigger}\0{}", auth.as_str()).into_bytes()
}

/// The secret as the sender is given it: GitHub takes any text (its UTF-8
/// bytes are the key); Standard Webhooks secrets are `whsec_` and the
/// base64 of the key.
fn shown(auth: AuthScheme, bytes: &[u8; DERIVED_LEN]) -> Zeroizing<String> {
    Zeroizing::new(match auth {
        AuthScheme::StandardWebhooks => {
            format!("{STANDARD_SECRET_PREFIX}{}", STANDARD.encode(bytes))
        }
        _ => URL_SAFE_NO_PAD.encode(bytes),
    })
}

/// The HMAC key a derived secret signs with, as the sender uses it.
fn signing_key(auth: AuthScheme, bytes: &[u8; DERIVED_LEN]) -> Zeroizing<Vec<u8>> {
    match auth {
        AuthScheme::StandardWebhooks => Zeroizing::new(bytes.to_vec()),
        _ => Zeroizing::new(shown(auth, bytes).as_bytes().to_vec()),
    }
}

/// Without platform keys there is nothing to derive HMAC secrets from.
pub fn not_configured() -> ApiError {
    ApiError::NotConfigured {
        code: "hooks_not_configured",
        message: "this server has no platform keys ([secrets] keys) to derive webhook secrets from; use the bearer scheme, or ask the platform operator".into(),
    }
}

/// A new credential for a trigger and what its owner is shown, once: an
/// HMAC secret derived from the keyring's active key and a fresh salt, or
/// a random bearer token.
pub fn mint(
    keyring: Option<&Keyring>,
    tenant: TenantId,
    trigger: TriggerId,
    auth: AuthScheme,
) -> ApiResult<(Credential, String)> {
    if auth == AuthScheme::Bearer {
        let mut bits = [0u8; 32];
        rand::rng().fill_bytes(&mut bits);
        let token = format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(bits));
        let hash = blake3::hash(token.as_bytes()).as_bytes().to_vec();
        return Ok((Credential::TokenHash(hash), token));
    }
    let keyring = keyring.ok_or_else(not_configured)?;
    let key_id = keyring.active_id().to_owned();
    let salt = couler_secrets::new_salt();
    let derived = keyring
        .derive(&key_id, &salt, &info(tenant, trigger, auth))
        .map_err(|e| anyhow::anyhow!("deriving a webhook secret: {e}"))?;
    let text = shown(auth, derived.expose_secret()).to_string();
    let salt = salt.to_vec();
    Ok((Credential::Derived { key_id, salt }, text))
}

/// The key a stored credential stands for (re-derived for HMAC schemes);
/// 503 when the platform key it was derived from is not configured.
pub fn key(
    keyring: Option<&Keyring>,
    tenant: TenantId,
    trigger: TriggerId,
    auth: AuthScheme,
    credential: &Credential,
) -> ApiResult<Key> {
    match credential {
        Credential::TokenHash(hash) => Ok(Key::TokenHash(hash.clone())),
        Credential::Derived { key_id, salt } => {
            let keyring = keyring.ok_or_else(not_configured)?;
            match keyring.derive(key_id, salt, &info(tenant, trigger, auth)) {
                Ok(derived) => Ok(Key::Hmac(signing_key(auth, derived.expose_secret()))),
                Err(e) => {
                    tracing::error!(%trigger, error = %e, "a webhook secret's platform key is gone; rotate the trigger");
                    Err(not_configured())
                }
            }
        }
    }
}

/// Checks a delivery against `keys` (current first, then one within its
/// rotation grace): the scheme's headers over the raw `body`, and for
/// Standard Webhooks a timestamp within `window_secs` of `now` (seconds).
pub fn verify(
    auth: AuthScheme,
    keys: &[Key],
    headers: &axum::http::HeaderMap,
    body: &[u8],
    now: i64,
    window_secs: i64,
) -> Result<(), Rejection> {
    let header = |name: &str| -> Result<&str, Rejection> {
        let value = headers.get(name).ok_or(Rejection::Missing)?;
        value.to_str().map_err(|_| Rejection::Malformed)
    };
    let hmac_keys = || {
        keys.iter().filter_map(|k| match k {
            Key::Hmac(key) => Some(key.as_slice()),
            Key::TokenHash(_) => None,
        })
    };
    match auth {
        AuthScheme::HmacGithub => github(hmac_keys(), header(GITHUB_SIGNATURE)?, body),
        AuthScheme::StandardWebhooks => {
            let id = header(WEBHOOK_ID)?;
            let timestamp = header(WEBHOOK_TIMESTAMP)?;
            let sent: i64 = timestamp.trim().parse().map_err(|_| Rejection::Malformed)?;
            if now.abs_diff(sent) > window_secs.unsigned_abs() {
                return Err(Rejection::Stale);
            }
            standard(hmac_keys(), id, timestamp, body, header(WEBHOOK_SIGNATURE)?)
        }
        AuthScheme::Bearer => {
            let value = header(axum::http::header::AUTHORIZATION.as_str())?;
            let token = value
                .split_once(' ')
                .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
                .map(|(_, token)| token.trim())
                .ok_or(Rejection::Malformed)?;
            let hash = blake3::hash(token.as_bytes());
            // blake3::Hash compares in constant time.
            let matches = keys.iter().any(|k| match k {
                Key::TokenHash(stored) => <[u8; 32]>::try_from(stored.as_slice())
                    .is_ok_and(|stored| hash == blake3::Hash::from_bytes(stored)),
                Key::Hmac(_) => false,
            });
            matches.then_some(()).ok_or(Rejection::Mismatch)
        }
    }
}

/// GitHub: `sha256=<hex>` of HMAC-SHA256(secret, body).
fn github<'a>(
    keys: impl Iterator<Item = &'a [u8]>,
    header: &str,
    body: &[u8],
) -> Result<(), Rejection> {
    let signature = header
        .trim()
        .strip_prefix("sha256=")
        .and_then(|h| hex::decode(h).ok())
        .filter(|s| s.len() == 32)
        .ok_or(Rejection::Malformed)?;
    for key in keys {
        let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
        mac.update(body);
        // Constant-time comparison.
        if mac.verify_slice(&signature).is_ok() {
            return Ok(());
        }
    }
    Err(Rejection::Mismatch)
}

/// Standard Webhooks: any `v1,<base64>` of HMAC-SHA256(key, "id.timestamp.body").
fn standard<'a>(
    keys: impl Iterator<Item = &'a [u8]>,
    id: &str,
    timestamp: &str,
    body: &[u8],
    header: &str,
) -> Result<(), Rejection> {
    let signatures: Vec<Vec<u8>> = header
        .split(' ')
        .filter_map(|s| s.strip_prefix("v1,"))
        .filter_map(|s| STANDARD.decode(s).ok())
        .filter(|s| s.len() == 32)
        .collect();
    if signatures.is_empty() {
        return Err(Rejection::Malformed);
    }
    for key in keys {
        let mut mac = HmacSha256::new_from_slice(key).expect("HMAC takes keys of any length");
        mac.update(id.as_bytes());
        mac.update(b".");
        mac.update(timestamp.as_bytes());
        mac.update(b".");
        mac.update(body);
        // Constant-time comparison, against each signature given.
        if signatures
            .iter()
            .any(|s| mac.clone().verify_slice(s).is_ok())
        {
            return Ok(());
        }
    }
    Err(Rejection::Mismatch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::{HeaderMap, HeaderValue};

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (name, value) in pairs {
            h.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        h
    }

    fn hmac(key: &[u8]) -> Key {
        Key::Hmac(Zeroizing::new(key.to_vec()))
    }

    /// GitHub's published example ("Validating webhook deliveries").
    #[test]
    fn githubs_test_vector_verifies() {
        let key = hmac(b"It's a Secret to Everybody");
        let signed = headers(&[(
            GITHUB_SIGNATURE,
            "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
        )]);
        let verify = |keys: &[Key], h: &HeaderMap, body: &[u8]| {
            super::verify(AuthScheme::HmacGithub, keys, h, body, 0, 300)
        };
        assert_eq!(
            verify(std::slice::from_ref(&key), &signed, b"Hello, World!"),
            Ok(())
        );
        assert_eq!(
            verify(std::slice::from_ref(&key), &signed, b"Hello, World?"),
            Err(Rejection::Mismatch)
        );
        assert_eq!(
            verify(&[hmac(b"another secret")], &signed, b"Hello, World!"),
            Err(Rejection::Mismatch)
        );
        // A previous key within its grace verifies too.
        assert_eq!(
            verify(&[hmac(b"new secret"), key], &signed, b"Hello, World!"),
            Ok(())
        );
        let keys = [hmac(b"It's a Secret to Everybody")];
        assert_eq!(
            verify(&keys, &HeaderMap::new(), b"Hello, World!"),
            Err(Rejection::Missing)
        );
        for bad in [
            "757107ea",
            "sha1=757107ea0eb2509fc211221cce984b8a",
            "sha256=zz",
        ] {
            assert_eq!(
                verify(
                    &keys,
                    &headers(&[(GITHUB_SIGNATURE, bad)]),
                    b"Hello, World!"
                ),
                Err(Rejection::Malformed),
                "{bad}"
            );
        }
    }

    /// The Standard Webhooks example (as in the specification's reference
    /// libraries), and its replay window.
    #[test]
    fn the_standard_webhooks_test_vector_verifies_within_its_window() {
        let key = hmac(&STANDARD.decode("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw").unwrap());
        let body = br#"{"test": 2432232314}"#;
        let signed = |signature: &str| {
            headers(&[
                (WEBHOOK_ID, "msg_p5jXN8AQM9LWM0D4loKWxJek"),
                (WEBHOOK_TIMESTAMP, "1614265330"),
                (WEBHOOK_SIGNATURE, signature),
            ])
        };
        let good = signed("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        let keys = std::slice::from_ref(&key);
        let at = |now: i64, h: &HeaderMap, body: &[u8]| {
            super::verify(AuthScheme::StandardWebhooks, keys, h, body, now, 300)
        };
        assert_eq!(at(1614265330, &good, body), Ok(()));
        assert_eq!(at(1614265330 + 300, &good, body), Ok(()));
        assert_eq!(at(1614265330 - 300, &good, body), Ok(()));
        assert_eq!(at(1614265330 + 301, &good, body), Err(Rejection::Stale));
        assert_eq!(at(1614265330, &good, b"{}"), Err(Rejection::Mismatch));
        // Several signatures (a sender mid-rotation): any one will do.
        let both = signed("v1,AAAA v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
        assert_eq!(at(1614265330, &both, body), Ok(()));
        assert_eq!(
            at(1614265330, &signed("v2,abc"), body),
            Err(Rejection::Malformed)
        );
        // The id is signed: another id does not verify.
        let mut moved = good.clone();
        moved.insert(WEBHOOK_ID, HeaderValue::from_static("msg_other"));
        assert_eq!(at(1614265330, &moved, body), Err(Rejection::Mismatch));
    }

    #[test]
    fn minted_credentials_verify_and_bearer_tokens_are_kept_hashed() {
        let config = couler_secrets::SecretsConfig {
            keys: [("k1".to_owned(), couler_secrets::generate_key())].into(),
            active_key: None,
        };
        let keyring = Keyring::from_config(&config).unwrap().unwrap();
        let (tenant, trigger) = (TenantId::new(), TriggerId::new());
        let body = b"{\"ref\": \"refs/heads/main\"}";
        // GitHub: the shown secret is the HMAC key.
        let (credential, secret) =
            mint(Some(&keyring), tenant, trigger, AuthScheme::HmacGithub).unwrap();
        let key = super::key(
            Some(&keyring),
            tenant,
            trigger,
            AuthScheme::HmacGithub,
            &credential,
        )
        .unwrap();
        let mut mac = HmacSha256::new_from_slice(secret.as_bytes()).unwrap();
        mac.update(body);
        let signature = format!("sha256={}", hex::encode(mac.finalize().into_bytes()));
        let h = headers(&[(GITHUB_SIGNATURE, &signature)]);
        assert_eq!(
            verify(AuthScheme::HmacGithub, &[key], &h, body, 0, 300),
            Ok(())
        );
        // Another trigger (or tenant) with the same salt derives another key.
        let other = super::key(
            Some(&keyring),
            tenant,
            TriggerId::new(),
            AuthScheme::HmacGithub,
            &credential,
        )
        .unwrap();
        assert_eq!(
            verify(AuthScheme::HmacGithub, &[other], &h, body, 0, 300),
            Err(Rejection::Mismatch)
        );
        // Standard Webhooks: `whsec_` and the base64 of the key.
        let (credential, secret) = mint(
            Some(&keyring),
            tenant,
            trigger,
            AuthScheme::StandardWebhooks,
        )
        .unwrap();
        let raw = STANDARD
            .decode(secret.strip_prefix("whsec_").unwrap())
            .unwrap();
        let mut mac = HmacSha256::new_from_slice(&raw).unwrap();
        mac.update(b"msg_1.100.");
        mac.update(body);
        let signature = format!("v1,{}", STANDARD.encode(mac.finalize().into_bytes()));
        let h = headers(&[
            (WEBHOOK_ID, "msg_1"),
            (WEBHOOK_TIMESTAMP, "100"),
            (WEBHOOK_SIGNATURE, &signature),
        ]);
        let key = super::key(
            Some(&keyring),
            tenant,
            trigger,
            AuthScheme::StandardWebhooks,
            &credential,
        )
        .unwrap();
        assert_eq!(
            verify(AuthScheme::StandardWebhooks, &[key], &h, body, 100, 300),
            Ok(())
        );
        // Bearer: only the hash is kept.
        let (credential, token) = mint(None, tenant, trigger, AuthScheme::Bearer).unwrap();
        let Credential::TokenHash(hash) = &credential else {
            panic!("{credential:?}")
        };
        assert_ne!(hash.as_slice(), token.as_bytes());
        let keys = [Key::TokenHash(hash.clone())];
        let bearer = |value: &str| headers(&[("authorization", value)]);
        let check = |h: &HeaderMap| verify(AuthScheme::Bearer, &keys, h, body, 0, 300);
        assert_eq!(check(&bearer(&format!("Bearer {token}"))), Ok(()));
        assert_eq!(check(&bearer("Bearer cht_guess")), Err(Rejection::Mismatch));
        assert_eq!(check(&bearer(&token)), Err(Rejection::Malformed));
        assert_eq!(check(&HeaderMap::new()), Err(Rejection::Missing));
        // HMAC schemes need a platform key.
        assert!(mint(None, tenant, trigger, AuthScheme::HmacGithub).is_err());
        assert!(is_public_id(&new_public_id()));
        assert!(!is_public_id("whk_short") && !is_public_id("whk_AAAAAAAAAAAAAAAAAAAAA="));
    }
}
