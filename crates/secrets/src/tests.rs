use super::*;
use secrecy::ExposeSecret;

fn config(keys: &[(&str, &SecretString)], active: Option<&str>) -> SecretsConfig {
    SecretsConfig {
        keys: keys
            .iter()
            .map(|(id, k)| (id.to_string(), (*k).clone()))
            .collect(),
        active_key: active.map(str::to_owned),
    }
}

fn ring(keys: &[(&str, &SecretString)], active: Option<&str>) -> Keyring {
    Keyring::from_config(&config(keys, active))
        .expect("valid keyring")
        .expect("keys configured")
}

fn data() -> SecretData {
    [
        ("API_KEY".to_owned(), SecretString::from("s3cr3t-value")),
        ("user".to_owned(), SecretString::from("alice")),
    ]
    .into_iter()
    .collect()
}

const CTX: Context = Context {
    tenant: "tnt_0",
    name: "db",
    version: 1,
};

fn plain(data: &SecretData) -> Vec<(&str, &str)> {
    data.iter()
        .map(|(k, v)| (k.as_str(), v.expose_secret()))
        .collect()
}

#[test]
fn seals_and_opens() {
    let k1 = generate_key();
    let ring = ring(&[("k1", &k1)], None);
    let sealed = ring.seal(&CTX, &data()).unwrap();
    assert_eq!(sealed.data_key.key_id, "k1");
    assert!(
        !sealed
            .ciphertext
            .windows(b"s3cr3t-value".len())
            .any(|w| w == b"s3cr3t-value")
    );
    assert_eq!(plain(&ring.open(&CTX, &sealed).unwrap()), plain(&data()));
    // A fresh data key and nonces every time.
    let again = ring.seal(&CTX, &data()).unwrap();
    assert_ne!(again.ciphertext, sealed.ciphertext);
    assert_ne!(again.data_key.ciphertext, sealed.data_key.ciphertext);
}

#[test]
fn tampering_is_detected() {
    let k1 = generate_key();
    let ring = ring(&[("k1", &k1)], None);
    let sealed = ring.seal(&CTX, &data()).unwrap();
    let mut bad = sealed.clone();
    bad.ciphertext[0] ^= 1;
    assert!(matches!(ring.open(&CTX, &bad), Err(SecretsError::Corrupt)));
    let mut bad = sealed.clone();
    bad.data_key.ciphertext[3] ^= 0x80;
    assert!(matches!(ring.open(&CTX, &bad), Err(SecretsError::Corrupt)));
    let mut bad = sealed.clone();
    bad.nonce[0] ^= 1;
    assert!(matches!(ring.open(&CTX, &bad), Err(SecretsError::Corrupt)));
    let mut bad = sealed;
    bad.nonce.pop();
    assert!(matches!(ring.open(&CTX, &bad), Err(SecretsError::Corrupt)));
}

#[test]
fn a_sealed_value_opens_only_where_it_was_sealed() {
    let k1 = generate_key();
    let ring = ring(&[("k1", &k1)], None);
    let sealed = ring.seal(&CTX, &data()).unwrap();
    for other in [
        Context {
            tenant: "tnt_1",
            ..CTX
        },
        Context { name: "db2", ..CTX },
        Context { version: 2, ..CTX },
    ] {
        assert!(
            matches!(ring.open(&other, &sealed), Err(SecretsError::Corrupt)),
            "{other:?}"
        );
    }
    // The wrap is bound to its key id: relabelled under another id holding
    // the same key material, it does not open.
    let same = ring_with_alias(&k1);
    let mut relabelled = sealed;
    relabelled.data_key.key_id = "alias".into();
    assert!(matches!(
        same.open(&CTX, &relabelled),
        Err(SecretsError::Corrupt)
    ));
}

fn ring_with_alias(k: &SecretString) -> Keyring {
    ring(&[("k1", k), ("alias", k)], Some("k1"))
}

#[test]
fn rotation_rewraps_and_old_keys_still_open() {
    let (k1, k2) = (generate_key(), generate_key());
    let old = ring(&[("k1", &k1)], None);
    let sealed = old.seal(&CTX, &data()).unwrap();

    let rotated = ring(&[("k1", &k1), ("k2", &k2)], Some("k2"));
    // Still readable before the re-wrap.
    assert_eq!(plain(&rotated.open(&CTX, &sealed).unwrap()), plain(&data()));
    let rewrapped = rotated.rewrap(&CTX, &sealed.data_key).unwrap().unwrap();
    assert_eq!(rewrapped.key_id, "k2");
    assert_eq!(rotated.rewrap(&CTX, &rewrapped).unwrap(), None);
    let moved = Sealed {
        data_key: rewrapped,
        ..sealed.clone()
    };
    // Once re-wrapped, k1 may go.
    let only_new = ring(&[("k2", &k2)], None);
    assert_eq!(plain(&only_new.open(&CTX, &moved).unwrap()), plain(&data()));
    match only_new.open(&CTX, &sealed) {
        Err(SecretsError::UnknownKey(id)) => assert_eq!(id, "k1"),
        other => panic!("expected UnknownKey, got {other:?}"),
    }
}

#[test]
fn configuration_is_checked_and_never_prints_keys() {
    let k1 = generate_key();
    let k2 = generate_key();
    assert!(
        Keyring::from_config(&SecretsConfig::default())
            .unwrap()
            .is_none()
    );
    assert_eq!(
        Keyring::from_config(&config(&[], Some("k1"))).unwrap_err(),
        KeyringError::NoKeys
    );
    assert_eq!(
        Keyring::from_config(&config(&[("k1", &k1), ("k2", &k2)], None)).unwrap_err(),
        KeyringError::NoActive
    );
    assert_eq!(
        Keyring::from_config(&config(&[("k1", &k1)], Some("k9"))).unwrap_err(),
        KeyringError::UnknownActive("k9".into())
    );
    let short = SecretString::from("c2hvcnQ=");
    assert_eq!(
        Keyring::from_config(&config(&[("k1", &short)], None)).unwrap_err(),
        KeyringError::BadKey("k1".into())
    );
    assert_eq!(
        Keyring::from_config(&config(&[("K 1", &k1)], None)).unwrap_err(),
        KeyringError::BadId("K 1".into())
    );
    let ring = ring(&[("k1", &k1), ("k2", &k2)], Some("k2"));
    assert_eq!(ring.active_id(), "k2");
    assert!(ring.has_key("k1") && !ring.has_key("k3"));
    let printed = format!(
        "{ring:?} {:?}",
        config(&[("k1", &k1), ("k2", &k2)], Some("k2"))
    );
    for key in [&k1, &k2] {
        assert!(!printed.contains(key.expose_secret()), "{printed}");
    }
}

/// HKDF-SHA256 as RFC 5869 defines it (computed independently, with
/// Python's hmac module, for this key, salt and info).
#[test]
fn derive_is_hkdf_sha256_of_the_platform_key() {
    let key = SecretString::from("BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=");
    let keyring = ring(&[("k1", &key)], None);
    let derived = keyring.derive("k1", &[1u8; 32], b"couler-test").unwrap();
    let hex: String = derived
        .expose_secret()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    assert_eq!(
        hex,
        "96f5afe09d46787b19d667dcaf083cc55315e92c989a814a4ed619deaac66cae"
    );
}

#[test]
fn derived_secrets_differ_by_key_salt_and_info_and_need_the_key() {
    let (k1, k2) = (generate_key(), generate_key());
    let keyring = ring(&[("k1", &k1), ("k2", &k2)], Some("k2"));
    let derive = |key: &str, salt: &[u8], info: &[u8]| {
        *keyring.derive(key, salt, info).unwrap().expose_secret()
    };
    let base = derive("k1", b"salt", b"info");
    assert_eq!(base, derive("k1", b"salt", b"info"));
    assert_ne!(base, derive("k2", b"salt", b"info"));
    assert_ne!(base, derive("k1", b"salt2", b"info"));
    assert_ne!(base, derive("k1", b"salt", b"info2"));
    assert!(matches!(
        keyring.derive("k3", b"salt", b"info"),
        Err(SecretsError::UnknownKey(id)) if id == "k3"
    ));
    assert_ne!(new_salt(), new_salt());
}
