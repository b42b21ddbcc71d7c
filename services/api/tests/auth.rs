//! Authentication against a real server: every way a credential can fail
//! answers 401 or 403 problem+json, and every kind the server is configured
//! for works (HS256, RS256 and ES256 tokens, JWKS keys chosen by `kid`, API
//! keys by either header).

mod common;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::Utc;
use common::*;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Header};
use reqwest::{Method, RequestBuilder, StatusCode};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Claims for `role` in `tenant`, valid for an hour.
fn claims(tenant: &str, role: &str) -> Value {
    let now = Utc::now().timestamp();
    json!({
        "sub": format!("{role}@{tenant}"),
        "tenant": tenant,
        "roles": [role],
        "iat": now,
        "exp": now + 3600,
    })
}

/// Signs `claims` with `key` under `alg`, naming `kid` when given.
fn sign(alg: Algorithm, kid: Option<&str>, claims: &Value, key: &EncodingKey) -> String {
    let mut header = Header::new(alg);
    header.kid = kid.map(str::to_owned);
    jsonwebtoken::encode(&header, claims, key).unwrap()
}

fn hs256(secret: &str, claims: &Value) -> String {
    let key = EncodingKey::from_secret(secret.as_bytes()).unwrap();
    sign(Algorithm::HS256, None, claims, &key)
}

/// `token` with its header replaced by `header` (JSON), signature kept.
fn with_header(token: &str, header: &str) -> String {
    let (_, rest) = token.split_once('.').unwrap();
    format!("{}.{rest}", URL_SAFE_NO_PAD.encode(header))
}

/// A viewer-level read: what every accepted credential may do.
fn probe(api: &TestApi, token: &str) -> RequestBuilder {
    api.request(Method::GET, "/v1/workflows", token)
}

/// Sends `req` and asserts it succeeded.
async fn expect_ok(req: RequestBuilder, what: &str) -> Value {
    let (status, body) = read(req.send().await.unwrap()).await;
    assert_eq!(status, StatusCode::OK, "{what}: {body}");
    body
}

/// Sends `req` and asserts an `application/problem+json` answer with
/// `status` and `code` (and a request id).
async fn expect_problem(req: RequestBuilder, status: StatusCode, code: &str, what: &str) {
    let response = req.send().await.unwrap();
    if status == StatusCode::UNAUTHORIZED {
        let challenge = response.headers().get("www-authenticate");
        assert_eq!(
            challenge.and_then(|v| v.to_str().ok()),
            Some(r#"Bearer realm="couler""#),
            "{what}"
        );
    }
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_owned();
    let (got, body) = read(response).await;
    assert_eq!(got, status, "{what}: {body}");
    assert_eq!(body["code"], code, "{what}: {body}");
    assert!(
        content_type.starts_with("application/problem+json"),
        "{what}: content type {content_type:?}"
    );
    assert_problem(got, &body, status, code);
}

#[tokio::test]
async fn missing_credentials_are_401_unauthenticated() {
    let api = TestApi::start().await;
    let no_header = api.client.get(api.url("/v1/workflows"));
    expect_problem(
        no_header,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
        "no credentials",
    )
    .await;
    let basic = api
        .client
        .get(api.url("/v1/workflows"))
        .basic_auth("alice", Some("password"));
    expect_problem(
        basic,
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
        "basic auth",
    )
    .await;
    api.stop().await;
}

#[tokio::test]
async fn malformed_forged_or_incomplete_tokens_are_401_invalid_token() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let good = claims(&tenant, "viewer");
    expect_ok(probe(&api, &hs256(SECRET, &good)), "control: a good token").await;

    let alg_none = format!(
        "{}.{}.",
        URL_SAFE_NO_PAD.encode(r#"{"alg":"none","typ":"JWT"}"#),
        URL_SAFE_NO_PAD.encode(good.to_string()),
    );
    let wrong_secret = hs256("another-secret-that-is-long-enough-for-hs256", &good);
    // A viewer's signature over an admin's claims.
    let tampered = {
        let viewer = hs256(SECRET, &good);
        let parts: Vec<&str> = viewer.split('.').collect();
        let admin = URL_SAFE_NO_PAD.encode(claims(&tenant, "admin").to_string());
        format!("{}.{admin}.{}", parts[0], parts[2])
    };
    let mut no_tenant = good.clone();
    no_tenant.as_object_mut().unwrap().remove("tenant");
    let mut no_subject = good.clone();
    no_subject.as_object_mut().unwrap().remove("sub");
    let mut no_expiry = good.clone();
    no_expiry.as_object_mut().unwrap().remove("exp");

    let cases = [
        ("garbage", "garbage".to_owned()),
        ("three garbage segments", "a.b.c".to_owned()),
        ("alg none", alg_none),
        ("wrong HS256 secret", wrong_secret),
        ("tampered claims", tampered),
        (
            "no tenant and not a platform admin",
            hs256(SECRET, &no_tenant),
        ),
        ("no sub", hs256(SECRET, &no_subject)),
        ("no exp", hs256(SECRET, &no_expiry)),
    ];
    for (what, token) in cases {
        expect_problem(
            probe(&api, &token),
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            what,
        )
        .await;
    }
    api.stop().await;
}

#[tokio::test]
async fn expired_tokens_are_401_token_expired_beyond_the_leeway() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let now = Utc::now().timestamp();
    let mut long_expired = claims(&tenant, "viewer");
    long_expired["exp"] = json!(now - 120);
    expect_problem(
        probe(&api, &hs256(SECRET, &long_expired)),
        StatusCode::UNAUTHORIZED,
        "token_expired",
        "expired two minutes ago",
    )
    .await;
    // The default leeway (30 s) absorbs clock skew.
    let mut just_expired = claims(&tenant, "viewer");
    just_expired["exp"] = json!(now - 10);
    expect_ok(
        probe(&api, &hs256(SECRET, &just_expired)),
        "expired ten seconds ago",
    )
    .await;
    api.stop().await;
}

#[tokio::test]
async fn tokens_not_valid_yet_are_401_beyond_the_leeway() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let now = Utc::now().timestamp();
    let mut future = claims(&tenant, "viewer");
    future["nbf"] = json!(now + 3600);
    expect_problem(
        probe(&api, &hs256(SECRET, &future)),
        StatusCode::UNAUTHORIZED,
        "invalid_token",
        "valid only in an hour",
    )
    .await;
    let mut almost = claims(&tenant, "viewer");
    almost["nbf"] = json!(now + 10);
    expect_ok(probe(&api, &hs256(SECRET, &almost)), "valid in ten seconds").await;
    api.stop().await;
}

#[tokio::test]
async fn issuer_and_audience_are_required_when_configured() {
    let api = TestApi::start_with(|config| {
        config.auth.jwt.issuer = Some("https://idp.example.com".into());
        config.auth.jwt.audience = Some("couler".into());
    })
    .await;
    // The harness's platform token names no issuer, so it is refused here too.
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/tenants",
            &api.platform_token,
            Some(json!({"name": "acme"})),
        )
        .await;
    assert_problem(status, &body, StatusCode::UNAUTHORIZED, "invalid_token");
    let platform = hs256(
        SECRET,
        &json!({
            "sub": "platform-operator",
            "roles": ["platform-admin"],
            "iss": "https://idp.example.com",
            "aud": "couler",
            "exp": Utc::now().timestamp() + 3600,
        }),
    );
    let (status, created) = api
        .call(
            Method::POST,
            "/v1/tenants",
            &platform,
            Some(json!({"name": "acme"})),
        )
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    let tenant = created["id"].as_str().unwrap().to_owned();
    let with = |iss: Option<&str>, aud: Option<&str>| {
        let mut c = claims(&tenant, "viewer");
        if let Some(iss) = iss {
            c["iss"] = json!(iss);
        }
        if let Some(aud) = aud {
            c["aud"] = json!(aud);
        }
        hs256(SECRET, &c)
    };
    expect_ok(
        probe(&api, &with(Some("https://idp.example.com"), Some("couler"))),
        "right issuer and audience",
    )
    .await;
    let cases = [
        (
            "wrong issuer",
            with(Some("https://evil.example.com"), Some("couler")),
        ),
        (
            "wrong audience",
            with(Some("https://idp.example.com"), Some("other-service")),
        ),
        ("no issuer", with(None, Some("couler"))),
        ("no audience", with(Some("https://idp.example.com"), None)),
    ];
    for (what, token) in cases {
        expect_problem(
            probe(&api, &token),
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            what,
        )
        .await;
    }
    api.stop().await;
}

#[tokio::test]
async fn tokens_naming_an_unknown_tenant_are_401_unknown_tenant() {
    let api = TestApi::start().await;
    api.tenant("acme").await;
    expect_ok(
        probe(&api, &user("acme", "viewer")),
        "control: a tenant named by name",
    )
    .await;
    let missing_id = format!("tnt_{}", uuid::Uuid::now_v7().simple());
    for tenant in [missing_id.as_str(), "no-such-tenant"] {
        expect_problem(
            probe(&api, &user(tenant, "admin")),
            StatusCode::UNAUTHORIZED,
            "unknown_tenant",
            tenant,
        )
        .await;
    }
    api.stop().await;
}

#[tokio::test]
async fn a_tenant_admin_cannot_read_or_change_another_tenant() {
    let api = TestApi::start().await;
    let a = api.tenant("alpha").await;
    let b = api.tenant("beta").await;
    let admin_a = user(&a, "admin");
    let own = expect_ok(
        api.request(Method::GET, &format!("/v1/tenants/{a}"), &admin_a),
        "own tenant",
    )
    .await;
    assert_eq!(own["id"], a.as_str());
    let other = format!("/v1/tenants/{b}");
    expect_problem(
        api.request(Method::GET, &other, &admin_a),
        StatusCode::FORBIDDEN,
        "forbidden",
        "GET another tenant",
    )
    .await;
    expect_problem(
        api.request(Method::PATCH, &other, &admin_a)
            .json(&json!({"display_name": "taken over"})),
        StatusCode::FORBIDDEN,
        "forbidden",
        "PATCH another tenant",
    )
    .await;
    let (_, b_now) = api
        .call(Method::GET, &other, &api.platform_token, None)
        .await;
    assert_eq!(b_now["display_name"], "beta", "{b_now}");
    api.stop().await;
}

/// Key pairs made with the `openssl` CLI in a directory removed on drop.
struct Keys {
    dir: PathBuf,
}

impl Keys {
    fn new() -> Keys {
        let dir = std::env::temp_dir().join(format!("couler-auth-{}", uuid::Uuid::new_v4()));
        std::fs::create_dir_all(&dir).unwrap();
        Keys { dir }
    }

    /// Generates `<name>.pem` (private, PKCS#8) and `<name>.pub.pem`.
    fn generate(&self, name: &str, algorithm: &[&str]) -> (EncodingKey, PathBuf) {
        let private = self.dir.join(format!("{name}.pem"));
        let public = self.dir.join(format!("{name}.pub.pem"));
        let mut args = vec!["genpkey"];
        args.extend_from_slice(algorithm);
        args.extend(["-out", private.to_str().unwrap()]);
        openssl(&args);
        openssl(&[
            "pkey",
            "-in",
            private.to_str().unwrap(),
            "-pubout",
            "-out",
            public.to_str().unwrap(),
        ]);
        let pem = std::fs::read(&private).unwrap();
        let key = if algorithm.contains(&"RSA") {
            EncodingKey::from_rsa_pem(&pem).unwrap()
        } else {
            EncodingKey::from_ec_pem(&pem).unwrap()
        };
        (key, public)
    }

    fn rsa(&self, name: &str) -> (EncodingKey, PathBuf) {
        self.generate(
            name,
            &["-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
        )
    }

    fn ec(&self, name: &str) -> (EncodingKey, PathBuf) {
        self.generate(
            name,
            &["-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
        )
    }
}

impl Drop for Keys {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn openssl(args: &[&str]) {
    let out = Command::new("openssl")
        .args(args)
        .output()
        .expect("these tests need the openssl CLI");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A JWK for a public key PEM file, named `kid`.
fn jwk(public: &Path, alg: Algorithm, kid: &str) -> Jwk {
    let pem = std::fs::read(public).unwrap();
    let key = match alg {
        Algorithm::RS256 => DecodingKey::from_rsa_pem(&pem).unwrap(),
        _ => DecodingKey::from_ec_pem(&pem).unwrap(),
    };
    let mut jwk = Jwk::from_decoding_key(&key, Some(alg)).unwrap();
    jwk.common.key_id = Some(kid.to_owned());
    jwk
}

#[tokio::test]
async fn rs256_and_es256_tokens_verify_against_configured_public_keys() {
    let keys = Keys::new();
    let (rsa, rsa_public) = keys.rsa("rsa");
    let (ec, ec_public) = keys.ec("ec");
    let (stranger, _) = keys.rsa("stranger");
    let files = vec![rsa_public.clone(), ec_public];
    let api = TestApi::start_with(|config| config.auth.jwt.public_key_files = files).await;
    let tenant = api.tenant("acme").await;
    let c = claims(&tenant, "viewer");
    expect_ok(
        probe(&api, &sign(Algorithm::RS256, None, &c, &rsa)),
        "RS256",
    )
    .await;
    expect_ok(probe(&api, &sign(Algorithm::ES256, None, &c, &ec)), "ES256").await;
    expect_ok(probe(&api, &hs256(SECRET, &c)), "HS256 alongside").await;

    // An HS256 token keyed with the RSA public key (algorithm confusion).
    let public_pem = std::fs::read_to_string(&rsa_public).unwrap();
    let cases = [
        (
            "signed by an unknown RSA key",
            sign(Algorithm::RS256, None, &c, &stranger),
        ),
        (
            "HS256 keyed with the RSA public key",
            hs256(&public_pem, &c),
        ),
        (
            "RS256 claimed, ES256 key used",
            with_header(
                &sign(Algorithm::ES256, None, &c, &ec),
                r#"{"alg":"RS256","typ":"JWT"}"#,
            ),
        ),
    ];
    for (what, token) in cases {
        expect_problem(
            probe(&api, &token),
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            what,
        )
        .await;
    }
    api.stop().await;
}

#[tokio::test]
async fn jwks_keys_are_chosen_by_kid() {
    let keys = Keys::new();
    let (rsa, rsa_public) = keys.rsa("rsa");
    let (ec, ec_public) = keys.ec("ec");
    let (stranger, _) = keys.rsa("stranger");
    let set = JwkSet {
        keys: vec![
            jwk(&rsa_public, Algorithm::RS256, "rsa-1"),
            jwk(&ec_public, Algorithm::ES256, "ec-1"),
        ],
    };
    let jwks = keys.dir.join("jwks.json");
    std::fs::write(&jwks, serde_json::to_vec(&set).unwrap()).unwrap();
    let api = TestApi::start_with(|config| config.auth.jwt.jwks_file = Some(jwks)).await;
    let tenant = api.tenant("acme").await;
    let c = claims(&tenant, "viewer");
    expect_ok(
        probe(&api, &sign(Algorithm::RS256, Some("rsa-1"), &c, &rsa)),
        "RS256 with its kid",
    )
    .await;
    expect_ok(
        probe(&api, &sign(Algorithm::ES256, Some("ec-1"), &c, &ec)),
        "ES256 with its kid",
    )
    .await;
    let cases = [
        (
            "unknown kid",
            sign(Algorithm::RS256, Some("rsa-2"), &c, &rsa),
        ),
        (
            "known kid, another key's signature",
            sign(Algorithm::RS256, Some("rsa-1"), &c, &stranger),
        ),
        (
            "an RSA signature naming the EC key",
            sign(Algorithm::RS256, Some("ec-1"), &c, &rsa),
        ),
    ];
    for (what, token) in cases {
        expect_problem(
            probe(&api, &token),
            StatusCode::UNAUTHORIZED,
            "invalid_token",
            what,
        )
        .await;
    }
    api.stop().await;
}

/// Creates an API key as the tenant's admin; returns the created document.
async fn create_key(api: &TestApi, admin: &str, body: Value) -> Value {
    let (status, key) = api
        .call(Method::POST, "/v1/api-keys", admin, Some(body))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{key}");
    key
}

/// `GET /v1/api-keys` as raw text and parsed.
async fn list_keys(api: &TestApi, admin: &str) -> (String, Vec<Value>) {
    let response = api
        .request(Method::GET, "/v1/api-keys", admin)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::OK);
    let text = response.text().await.unwrap();
    let keys: Vec<Value> = serde_json::from_str(&text).unwrap();
    (text, keys)
}

fn with_key(api: &TestApi, method: Method, path: &str, key: &str) -> RequestBuilder {
    api.client
        .request(method, api.url(path))
        .header("x-api-key", key)
}

#[tokio::test]
async fn api_key_secret_is_shown_once_and_stored_only_as_a_hash() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let created = create_key(&api, &admin, json!({"name": "ci", "roles": ["editor"]})).await;
    let secret = created["secret"].as_str().unwrap().to_owned();
    let prefix = created["prefix"].as_str().unwrap().to_owned();
    assert!(
        secret.starts_with(&format!("ck_{prefix}_")),
        "{secret} / {prefix}"
    );
    let hidden = &secret[format!("ck_{prefix}_").len()..];
    assert!(hidden.len() >= 32, "{secret}");

    let (text, keys) = list_keys(&api, &admin).await;
    assert_eq!(keys.len(), 1, "{text}");
    assert_eq!(keys[0]["id"], created["id"]);
    assert!(keys[0].get("secret").is_none(), "{text}");
    assert!(!text.contains(hidden), "the list shows the secret: {text}");

    let pool = api.pool().await;
    let stored: Vec<u8> = sqlx::query_scalar("SELECT key_hash FROM api_keys WHERE prefix = $1")
        .bind(&prefix)
        .fetch_one(&pool)
        .await
        .unwrap();
    assert_eq!(stored.len(), 32, "key_hash is not a digest: {stored:?}");
    assert!(
        !stored.windows(hidden.len()).any(|w| w == hidden.as_bytes()),
        "key_hash holds the secret"
    );
    let row: String =
        sqlx::query_scalar("SELECT row_to_json(k)::text FROM api_keys k WHERE prefix = $1")
            .bind(&prefix)
            .fetch_one(&pool)
            .await
            .unwrap();
    let hidden_hex: String = hidden.bytes().map(|b| format!("{b:02x}")).collect();
    assert!(
        !row.contains(hidden) && !row.contains(&hidden_hex),
        "the row holds the secret: {row}"
    );
    pool.close().await;
    api.stop().await;
}

#[tokio::test]
async fn api_key_works_by_either_header_and_records_its_use() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let created = create_key(&api, &admin, json!({"name": "ci", "roles": ["editor"]})).await;
    let secret = created["secret"].as_str().unwrap();
    assert!(created["last_used_at"].is_null(), "{created}");

    // Same prefix, wrong secret: refused both before and after the real
    // key is cached.
    let forged = format!("{}{}", &secret[..secret.len() - 1], {
        if secret.ends_with('a') { 'b' } else { 'a' }
    });
    let path = "/v1/workflows";
    expect_problem(
        probe(&api, &forged),
        StatusCode::UNAUTHORIZED,
        "invalid_api_key",
        "forged key, uncached",
    )
    .await;
    expect_ok(probe(&api, secret), "Authorization: Bearer").await;
    expect_ok(with_key(&api, Method::GET, path, secret), "x-api-key").await;
    expect_problem(
        with_key(&api, Method::GET, path, &forged),
        StatusCode::UNAUTHORIZED,
        "invalid_api_key",
        "forged key, real one cached",
    )
    .await;
    expect_problem(
        probe(&api, "ck_short_secret"),
        StatusCode::UNAUTHORIZED,
        "invalid_api_key",
        "malformed key",
    )
    .await;

    let (status, wf) = read(
        with_key(&api, Method::POST, path, secret)
            .header("content-type", "application/yaml")
            .body(DIAMOND)
            .send()
            .await
            .unwrap(),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{wf}");
    // By the key's id: names are labels, and two keys may share one.
    assert_eq!(
        wf["created_by"],
        format!("api-key:{}", created["id"].as_str().unwrap())
    );

    let (_, keys) = list_keys(&api, &admin).await;
    let used = keys[0]["last_used_at"].as_str().expect("last_used_at set");
    let used: chrono::DateTime<Utc> = used.parse().unwrap();
    let created_at: chrono::DateTime<Utc> =
        created["created_at"].as_str().unwrap().parse().unwrap();
    assert!(used >= created_at, "{used} < {created_at}");
    api.stop().await;
}

#[tokio::test]
async fn revoked_api_key_is_401_at_once() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let created = create_key(&api, &admin, json!({"name": "ci", "roles": ["viewer"]})).await;
    let secret = created["secret"].as_str().unwrap();
    expect_ok(probe(&api, secret), "before revocation (and now cached)").await;

    let id = created["id"].as_str().unwrap();
    let (status, revoked) = api
        .call(Method::DELETE, &format!("/v1/api-keys/{id}"), &admin, None)
        .await;
    assert_eq!(status, StatusCode::OK, "{revoked}");
    assert!(revoked["revoked_at"].is_string(), "{revoked}");

    expect_problem(
        probe(&api, secret),
        StatusCode::UNAUTHORIZED,
        "invalid_api_key",
        "revoked, Authorization",
    )
    .await;
    expect_problem(
        with_key(&api, Method::GET, "/v1/workflows", secret),
        StatusCode::UNAUTHORIZED,
        "invalid_api_key",
        "revoked, x-api-key",
    )
    .await;
    api.stop().await;
}

#[tokio::test]
async fn expired_api_key_is_401() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let past = (Utc::now() - chrono::Duration::minutes(1)).to_rfc3339();
    let (status, body) = api
        .call(
            Method::POST,
            "/v1/api-keys",
            &admin,
            Some(json!({"name": "old", "roles": ["viewer"], "expires_at": past})),
        )
        .await;
    assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_expiry");

    let soon = Utc::now() + chrono::Duration::seconds(3);
    let created = create_key(
        &api,
        &admin,
        json!({"name": "brief", "roles": ["viewer"], "expires_at": soon.to_rfc3339()}),
    )
    .await;
    let secret = created["secret"].as_str().unwrap();
    // Used (and so cached) while still valid.
    expect_ok(probe(&api, secret), "before expiry").await;
    let expires_at: chrono::DateTime<Utc> =
        created["expires_at"].as_str().unwrap().parse().unwrap();
    // Nothing to await but the clock.
    let left = (expires_at - Utc::now()).to_std().unwrap_or_default();
    tokio::time::sleep(left + std::time::Duration::from_millis(100)).await;
    expect_problem(
        probe(&api, secret),
        StatusCode::UNAUTHORIZED,
        "invalid_api_key",
        "after expiry",
    )
    .await;
    api.stop().await;
}

/// A key's name is 1 to 100 characters (not bytes, as the OpenAPI
/// document's `maxLength` counts them), and not blank.
#[tokio::test]
async fn api_key_names_are_counted_in_characters() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let created = create_key(
        &api,
        &admin,
        json!({"name": "é".repeat(100), "roles": ["viewer"]}),
    )
    .await;
    assert_eq!(created["name"], "é".repeat(100));
    for name in ["é".repeat(101), "  ".to_owned()] {
        let (status, body) = api
            .call(
                Method::POST,
                "/v1/api-keys",
                &admin,
                Some(json!({"name": name, "roles": ["viewer"]})),
            )
            .await;
        assert_problem(status, &body, StatusCode::BAD_REQUEST, "invalid_name");
    }
    api.stop().await;
}

#[tokio::test]
async fn viewer_api_key_cannot_write() {
    let api = TestApi::start().await;
    let tenant = api.tenant("acme").await;
    let admin = user(&tenant, "admin");
    let created = create_key(&api, &admin, json!({"name": "ro", "roles": ["viewer"]})).await;
    let secret = created["secret"].as_str().unwrap();
    expect_ok(probe(&api, secret), "viewer reads").await;
    expect_problem(
        with_key(&api, Method::POST, "/v1/workflows", secret)
            .header("content-type", "application/yaml")
            .body(DIAMOND),
        StatusCode::FORBIDDEN,
        "forbidden",
        "viewer key creates a workflow",
    )
    .await;
    let list = expect_ok(probe(&api, &admin), "nothing was created").await;
    assert_eq!(list["items"], json!([]), "{list}");
    api.stop().await;
}
