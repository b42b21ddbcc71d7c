//! Who is calling: JWT bearer tokens (HS256 secret, RS256/ES256 public keys
//! or a JWKS file) and API keys (`ck_<prefix>_<secret>`, stored only as a
//! BLAKE3 hash). The [`Auth`] extractor authenticates, resolves the tenant,
//! applies the tenant's rate limit and hands handlers a [`Principal`].

use crate::config::JwtConfig;
use crate::error::{ApiError, ApiResult};
use crate::fresh::Fresh;
use crate::state::AppState;
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use couler_store::{ApiKeyId, TenantId, tenants::Tenant};
use jsonwebtoken::{Algorithm, DecodingKey, Validation, errors::ErrorKind};
use rand::RngExt;
use secrecy::ExposeSecret;
use serde::Deserialize;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Tenant roles, each including the ones below it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, utoipa::ToSchema)]
#[schema(rename_all = "lowercase")]
pub enum Role {
    Viewer,
    Editor,
    Admin,
}

impl Role {
    pub fn parse(s: &str) -> Option<Role> {
        match s {
            "viewer" => Some(Role::Viewer),
            "editor" => Some(Role::Editor),
            "admin" => Some(Role::Admin),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::Viewer => "viewer",
            Role::Editor => "editor",
            Role::Admin => "admin",
        }
    }
}

/// The platform-wide role that creates tenants.
pub const PLATFORM_ADMIN: &str = "platform-admin";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Via {
    Jwt,
    ApiKey(ApiKeyId),
}

/// An authenticated caller.
#[derive(Debug, Clone)]
pub struct Principal {
    pub subject: String,
    pub tenant: Option<TenantId>,
    /// The highest tenant role held.
    pub role: Option<Role>,
    pub platform_admin: bool,
    pub via: Via,
}

impl Principal {
    /// The caller's tenant, provided it holds at least `need` there.
    pub fn tenant(&self, need: Role) -> ApiResult<TenantId> {
        let Some(tenant) = self.tenant else {
            return Err(ApiError::Forbidden("this token names no tenant".into()));
        };
        match self.role {
            Some(role) if role >= need => Ok(tenant),
            _ => Err(ApiError::Forbidden(format!(
                "this needs the {} role in the tenant",
                need.as_str()
            ))),
        }
    }

    pub fn require_platform_admin(&self) -> ApiResult<()> {
        if self.platform_admin {
            Ok(())
        } else {
            Err(ApiError::Forbidden(format!(
                "this needs the {PLATFORM_ADMIN} role"
            )))
        }
    }

    /// Either a platform admin, or at least `need` in `tenant`.
    pub fn for_tenant(&self, tenant: TenantId, need: Role) -> ApiResult<()> {
        if self.platform_admin {
            return Ok(());
        }
        if self.tenant != Some(tenant) {
            return Err(ApiError::Forbidden(
                "this token is for another tenant".into(),
            ));
        }
        self.tenant(need).map(|_| ())
    }
}

#[derive(Deserialize)]
struct Claims {
    sub: String,
    #[serde(default)]
    tenant: Option<String>,
    #[serde(default)]
    roles: Vec<String>,
}

struct JwtKey {
    kid: Option<String>,
    algorithm: Algorithm,
    key: DecodingKey,
}

/// A verified API key, remembered for [`KEY_CACHE_TTL`].
#[derive(Clone)]
struct CachedKey {
    hash: blake3::Hash,
    principal: Principal,
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    at: Instant,
}

const KEY_PREFIX: &str = "ck_";
const KEY_CACHE_TTL: Duration = Duration::from_secs(30);
const TENANT_CACHE_TTL: Duration = Duration::from_secs(5);

/// Verifies credentials and caches what it learns.
pub struct Authenticator {
    keys: Vec<JwtKey>,
    issuer: Option<String>,
    audience: Option<String>,
    leeway: u64,
    api_keys: Mutex<HashMap<String, CachedKey>>,
    tenants: Fresh<TenantId, Arc<Tenant>>,
    tenant_names: Fresh<String, TenantId>,
    /// When each token subject was last recorded as a principal.
    principals_seen: Mutex<HashMap<(TenantId, String), Instant>>,
}

#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("reading {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{path}: {source}")]
    Parse {
        path: String,
        source: jsonwebtoken::errors::Error,
    },
    #[error("{path}: {message}")]
    Jwks { path: String, message: String },
}

impl Authenticator {
    pub fn new(config: &JwtConfig) -> Result<Authenticator, KeyError> {
        let mut keys = Vec::new();
        if let Some(secret) = &config.hs256_secret {
            let key =
                DecodingKey::from_secret(secret.expose_secret().as_bytes()).map_err(|source| {
                    KeyError::Parse {
                        path: "auth.jwt.hs256_secret".into(),
                        source,
                    }
                })?;
            keys.push(JwtKey {
                kid: None,
                algorithm: Algorithm::HS256,
                key,
            });
        }
        for path in &config.public_key_files {
            let shown = path.display().to_string();
            let pem = std::fs::read(path).map_err(|source| KeyError::Read {
                path: shown.clone(),
                source,
            })?;
            let (algorithm, key) = match DecodingKey::from_rsa_pem(&pem) {
                Ok(key) => (Algorithm::RS256, key),
                Err(_) => (
                    Algorithm::ES256,
                    DecodingKey::from_ec_pem(&pem).map_err(|source| KeyError::Parse {
                        path: shown.clone(),
                        source,
                    })?,
                ),
            };
            keys.push(JwtKey {
                kid: None,
                algorithm,
                key,
            });
        }
        if let Some(path) = &config.jwks_file {
            let shown = path.display().to_string();
            let text = std::fs::read_to_string(path).map_err(|source| KeyError::Read {
                path: shown.clone(),
                source,
            })?;
            let set: jsonwebtoken::jwk::JwkSet =
                serde_json::from_str(&text).map_err(|e| KeyError::Jwks {
                    path: shown.clone(),
                    message: e.to_string(),
                })?;
            for jwk in &set.keys {
                let algorithm = match (&jwk.common.key_algorithm, &jwk.algorithm) {
                    (Some(jsonwebtoken::jwk::KeyAlgorithm::RS256), _) => Some(Algorithm::RS256),
                    (Some(jsonwebtoken::jwk::KeyAlgorithm::ES256), _) => Some(Algorithm::ES256),
                    (Some(_), _) => None,
                    (None, jsonwebtoken::jwk::AlgorithmParameters::RSA(_)) => {
                        Some(Algorithm::RS256)
                    }
                    (None, jsonwebtoken::jwk::AlgorithmParameters::EllipticCurve(_)) => {
                        Some(Algorithm::ES256)
                    }
                    _ => None,
                };
                let Some(algorithm) =
                    algorithm.filter(|a| matches!(a, Algorithm::RS256 | Algorithm::ES256))
                else {
                    continue;
                };
                let key = DecodingKey::from_jwk(jwk).map_err(|source| KeyError::Parse {
                    path: shown.clone(),
                    source,
                })?;
                keys.push(JwtKey {
                    kid: jwk.common.key_id.clone(),
                    algorithm,
                    key,
                });
            }
        }
        Ok(Authenticator {
            keys,
            issuer: config.issuer.clone(),
            audience: config.audience.clone(),
            leeway: config.leeway_secs,
            api_keys: Mutex::new(HashMap::new()),
            tenants: Fresh::new(TENANT_CACHE_TTL),
            tenant_names: Fresh::new(TENANT_CACHE_TTL),
            principals_seen: Mutex::new(HashMap::new()),
        })
    }

    fn verify_jwt(&self, token: &str) -> ApiResult<Claims> {
        let invalid = |why: &str| ApiError::Unauthenticated {
            code: "invalid_token",
            message: format!("the bearer token is not valid: {why}"),
        };
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| invalid("malformed token or unsupported algorithm"))?;
        let candidates: Vec<&JwtKey> = self
            .keys
            .iter()
            .filter(|k| k.algorithm == header.alg)
            .filter(|k| header.kid.is_none() || k.kid.is_none() || k.kid == header.kid)
            .collect();
        if candidates.is_empty() {
            return Err(invalid("no key accepts this token's algorithm"));
        }
        let mut validation = Validation::new(header.alg);
        validation.leeway = self.leeway;
        validation.validate_nbf = true;
        // A configured issuer or audience must be present, not just match when present.
        let mut required = vec!["exp", "sub"];
        match &self.issuer {
            Some(iss) => {
                validation.set_issuer(&[iss]);
                required.push("iss");
            }
            None => validation.iss = None,
        }
        match &self.audience {
            Some(aud) => {
                validation.set_audience(&[aud]);
                required.push("aud");
            }
            None => validation.validate_aud = false,
        }
        validation.set_required_spec_claims(&required);
        let mut last = invalid("signature does not verify");
        for key in candidates {
            match jsonwebtoken::decode::<Claims>(token, &key.key, &validation) {
                Ok(data) => return Ok(data.claims),
                Err(e) => {
                    last = match e.kind() {
                        ErrorKind::ExpiredSignature => ApiError::Unauthenticated {
                            code: "token_expired",
                            message: "the bearer token has expired".into(),
                        },
                        ErrorKind::ImmatureSignature => invalid("not valid yet"),
                        ErrorKind::InvalidIssuer => invalid("wrong issuer"),
                        ErrorKind::InvalidAudience => invalid("wrong audience"),
                        ErrorKind::MissingRequiredClaim(c) => {
                            invalid(&format!("missing claim {c}"))
                        }
                        ErrorKind::InvalidSignature => invalid("signature does not verify"),
                        _ => invalid("malformed token"),
                    };
                    if !matches!(e.kind(), ErrorKind::InvalidSignature) {
                        return Err(last);
                    }
                }
            }
        }
        Err(last)
    }

    /// Forgets a revoked key at once (other replicas forget it within the cache TTL).
    pub fn forget_api_key(&self, prefix: &str) {
        self.api_keys.lock().expect("cache lock").remove(prefix);
    }

    pub fn forget_tenant(&self, id: TenantId) {
        self.tenants.forget(&id);
    }
}

/// A freshly minted API key: shown once, stored as its hash.
pub struct MintedKey {
    pub secret: String,
    pub prefix: String,
    pub hash: [u8; 32],
}

pub fn mint_api_key() -> MintedKey {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    let prefix: String = (0..12)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    let body: String = (0..40)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    let secret = format!("{KEY_PREFIX}{prefix}_{body}");
    let hash = *blake3::hash(secret.as_bytes()).as_bytes();
    MintedKey {
        secret,
        prefix,
        hash,
    }
}

fn credentials(parts: &Parts) -> Option<&str> {
    if let Some(key) = parts.headers.get("x-api-key").and_then(|v| v.to_str().ok()) {
        return Some(key.trim());
    }
    let value = parts
        .headers
        .get(axum::http::header::AUTHORIZATION)?
        .to_str()
        .ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

/// Authenticated caller, rate-limited per tenant.
pub struct Auth(pub Principal);

impl FromRequestParts<AppState> for Auth {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> ApiResult<Auth> {
        let token = credentials(parts).ok_or_else(|| ApiError::Unauthenticated {
            code: "unauthenticated",
            message: "send a bearer token or an API key (Authorization: Bearer …)".into(),
        })?;
        let principal = if token.starts_with(KEY_PREFIX) {
            api_key_principal(state, token).await?
        } else {
            jwt_principal(state, token).await?
        };
        if let Some(tenant) = principal.tenant {
            let tenant =
                tenant_by_id(state, tenant)
                    .await?
                    .ok_or_else(|| ApiError::Unauthenticated {
                        code: "unknown_tenant",
                        message: "the credentials name a tenant that does not exist".into(),
                    })?;
            state
                .limiter
                .acquire(tenant.id, tenant.quotas.requests_per_second)
                .await?;
            // Only once the tenant is known to exist.
            if principal.via == Via::Jwt {
                record_principal(state, tenant.id, &principal.subject).await?;
            }
            tracing::Span::current().record("tenant", tracing::field::display(tenant.id));
        }
        Ok(Auth(principal))
    }
}

async fn jwt_principal(state: &AppState, token: &str) -> ApiResult<Principal> {
    let auth = &state.auth;
    let claims = auth.verify_jwt(token)?;
    let platform_admin = claims.roles.iter().any(|r| r == PLATFORM_ADMIN);
    let role = claims.roles.iter().filter_map(|r| Role::parse(r)).max();
    let tenant = match claims.tenant.as_deref() {
        None => None,
        Some(t) => Some(match t.parse::<TenantId>() {
            Ok(id) => id,
            Err(_) => {
                tenant_id_by_name(state, t)
                    .await?
                    .ok_or_else(|| ApiError::Unauthenticated {
                        code: "unknown_tenant",
                        message: "the token names a tenant that does not exist".into(),
                    })?
            }
        }),
    };
    if tenant.is_none() && !platform_admin {
        return Err(ApiError::Unauthenticated {
            code: "invalid_token",
            message: "the bearer token is not valid: it names no tenant".into(),
        });
    }
    Ok(Principal {
        subject: claims.sub,
        tenant,
        role,
        platform_admin,
        via: Via::Jwt,
    })
}

async fn api_key_principal(state: &AppState, token: &str) -> ApiResult<Principal> {
    let invalid = || ApiError::Unauthenticated {
        code: "invalid_api_key",
        message: "the API key is not valid".into(),
    };
    let prefix = token[KEY_PREFIX.len()..]
        .split('_')
        .next()
        .filter(|p| p.len() == 12)
        .ok_or_else(invalid)?;
    let presented = blake3::hash(token.as_bytes());
    let auth = &state.auth;
    if let Some(cached) = auth
        .api_keys
        .lock()
        .expect("cache lock")
        .get(prefix)
        .cloned()
        && cached.at.elapsed() < KEY_CACHE_TTL
    {
        // blake3::Hash compares in constant time.
        let expired = cached.expires_at.is_some_and(|e| e <= chrono::Utc::now());
        return if cached.hash == presented && !expired {
            Ok(cached.principal)
        } else {
            Err(invalid())
        };
    }
    let mut tx = state.store.platform().await?;
    let found = couler_store::api_keys::find_by_prefix(&mut tx, prefix).await?;
    let Some((key, stored)) = found else {
        return Err(invalid());
    };
    let stored = <[u8; 32]>::try_from(stored.as_slice())
        .map(blake3::Hash::from_bytes)
        .map_err(|_| invalid())?;
    if stored != presented
        || key.revoked_at.is_some()
        || key.expires_at.is_some_and(|e| e <= chrono::Utc::now())
    {
        return Err(invalid());
    }
    couler_store::api_keys::mark_used(&mut tx, key.tenant_id, key.id).await?;
    tx.commit().await?;
    let principal = Principal {
        subject: format!("api-key:{}", key.id),
        tenant: Some(key.tenant_id),
        role: key.roles.iter().filter_map(|r| Role::parse(r)).max(),
        platform_admin: false,
        via: Via::ApiKey(key.id),
    };
    let cached = CachedKey {
        hash: stored,
        principal: principal.clone(),
        expires_at: key.expires_at,
        at: Instant::now(),
    };
    auth.api_keys
        .lock()
        .expect("cache lock")
        .insert(prefix.to_owned(), cached);
    Ok(principal)
}

/// Records a token's subject as a principal of its tenant, at most every
/// few minutes per subject (for audit: who acted, and when last).
async fn record_principal(state: &AppState, tenant: TenantId, subject: &str) -> ApiResult<()> {
    const EVERY: Duration = Duration::from_secs(300);
    let key = (tenant, subject.to_owned());
    if let Some(at) = state
        .auth
        .principals_seen
        .lock()
        .expect("cache lock")
        .get(&key)
        && at.elapsed() < EVERY
    {
        return Ok(());
    }
    let mut tx = state.store.tenant(tenant).await?;
    couler_store::principals::touch(
        &mut tx,
        tenant,
        subject,
        couler_store::principals::PrincipalKind::User,
    )
    .await?;
    tx.commit().await?;
    state
        .auth
        .principals_seen
        .lock()
        .expect("cache lock")
        .insert(key, Instant::now());
    Ok(())
}

/// A tenant by id, cached briefly (quotas change rarely).
pub async fn tenant_by_id(state: &AppState, id: TenantId) -> ApiResult<Option<Arc<Tenant>>> {
    let tenant = state.auth.tenants.get(&id, async || {
        let mut tx = state.store.platform().await?;
        let tenant = couler_store::tenants::get(&mut tx, id).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(tenant.map(Arc::new))
    });
    Ok(tenant.await?)
}

async fn tenant_id_by_name(state: &AppState, name: &str) -> ApiResult<Option<TenantId>> {
    let id = state.auth.tenant_names.get(name, async || {
        let mut tx = state.store.platform().await?;
        let tenant = couler_store::tenants::get_by_name(&mut tx, name).await?;
        tx.commit().await?;
        Ok::<_, sqlx::Error>(tenant.map(|t| t.id))
    });
    Ok(id.await?)
}
