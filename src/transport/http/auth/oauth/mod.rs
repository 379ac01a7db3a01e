//! OAuth 2.1 resource server mode: the adapter checks access tokens the
//! operator's identity provider issued, and never issues one itself (no
//! login page, no user store). A JWS access token is verified against the
//! issuer's keys (`keys`): the algorithm on the allowlist and of the key's
//! type, the signature by the key its `kid` names, `iss` exactly, an `aud`
//! naming this resource (a token for another resource is refused: no
//! passthrough), `exp`/`nbf`/`iat` within the skew, `typ` `at+jwt` when
//! present, no `crit`. An opaque token goes to introspection (RFC 7662),
//! only when it is configured. The JWT parsing is `jsonwebtoken`'s and the
//! signature check ring's (`signatures`); nothing here parses a signature
//! by hand.
//!
//! A validated token is remembered by its SHA-256 until its `exp`
//! (`cache`), so a steady client pays for one verification.

mod cache;
mod errors;
mod fetch;
mod introspect;
mod keys;
mod signatures;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use jsonwebtoken::{Algorithm, Validation};
use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::caller::Caller;
use crate::config::OAuthConfig;
use cache::TokenCache;
use errors::rejection;
pub(crate) use errors::{KeysError, Rejection};
pub(crate) use fetch::Fetcher;
use introspect::Introspector;
pub use introspect::PER_PEER_PER_SECOND;
pub(crate) use keys::{KeySet, MAX_KEYS};
use keys::{Keys, Lookup};
pub(crate) use signatures::install as install_signatures;

/// Longest access token read: real ones are 1-2 KiB.
pub(crate) const MAX_TOKEN_BYTES: usize = 8 * 1024;
/// The resource name the protected-resource metadata gives.
const RESOURCE_NAME: &str = "herdr-core-mcp";

/// Where a token may be checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Asking the IdP if need be (introspection, an unknown kid's refetch).
    Any,
    /// Only with what is known here (a JWT whose key is known): for a
    /// connection on a reserve slot, which must not wait on the IdP.
    LocalOnly,
}

/// The claims read from a verified token.
#[derive(Debug, Deserialize)]
struct Claims {
    #[serde(default)]
    sub: Option<String>,
    #[serde(default)]
    client_id: Option<String>,
    #[serde(default)]
    azp: Option<String>,
    #[serde(default)]
    scope: Option<String>,
    /// Some IdPs (Okta, Entra ID) list scopes in `scp`.
    #[serde(default)]
    scp: Option<Scp>,
    exp: u64,
    #[serde(default)]
    iat: Option<u64>,
}

#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scp {
    One(String),
    Many(Vec<String>),
}

/// What a valid token grants, before it is cached.
pub(crate) struct Granted {
    /// The token's `sub`, if any.
    pub sub: Option<String>,
    /// The client it was issued to: `client_id` (or a JWT's `azp`), if any.
    pub client_id: Option<String>,
    /// The scopes it grants: `scope` (and a JWT's `scp`).
    pub scopes: Vec<String>,
    /// Seconds since the epoch after which it is no longer accepted.
    pub exp: u64,
}

/// A token's verdict: a caller, or a token valid for none of this
/// server's scopes (answered 403 `insufficient_scope`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenVerdict {
    /// A valid token with the read or the send scope: who calls, and whether
    /// they may send.
    Caller(Caller),
    /// A valid token with neither scope.
    NoScope,
}

/// The OAuth resource server: the validated config, the issuer's keys,
/// introspection when configured, and the cache of verdicts.
pub struct ResourceServer {
    config: OAuthConfig,
    keys: Arc<Keys>,
    introspector: Option<Introspector>,
    cache: TokenCache,
    algorithms: Vec<Algorithm>,
    metadata: String,
}

/// Why OAuth mode cannot start (only the config or the environment; the
/// IdP being down never stops it).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A variable the introspection block names is unset or empty.
    #[error(
        "http.auth.introspection.{key} names {name}, which is not set in the environment: export it before serve (the secret never goes in the config file)"
    )]
    MissingSecret {
        /// The key naming the variable: `clientIdEnv` or `clientSecretEnv`.
        key: &'static str,
        /// The variable's name.
        name: String,
    },
}

/// Discovers the issuer's metadata and fetches its keys once, as `serve`
/// would (for `doctor`): what the key set holds, or why there is none.
pub(crate) async fn probe(config: &OAuthConfig) -> Result<Arc<KeySet>, KeysError> {
    Keys::new(Fetcher::new(), config).refresh_set().await
}

impl ResourceServer {
    /// Builds the resource server; keys are discovered by [`Self::upkeep`].
    pub fn new(config: OAuthConfig) -> Result<ResourceServer, StartError> {
        signatures::install_if_none();
        let fetcher = Fetcher::new();
        let introspector = config
            .introspection()
            .map(|i| Introspector::from_env(fetcher.clone(), i))
            .transpose()?;
        let algorithms = config
            .algorithms()
            .iter()
            .map(|a| a.parse::<Algorithm>().expect("validated algorithm names"))
            .collect();
        let metadata = serde_json::json!({
            "resource": config.resource().as_str(),
            "authorization_servers": [config.issuer()],
            "scopes_supported": [config.read_scope(), config.send_scope()],
            "bearer_methods_supported": ["header"],
            "resource_name": RESOURCE_NAME,
        })
        .to_string();
        Ok(ResourceServer {
            keys: Arc::new(Keys::new(fetcher, &config)),
            introspector,
            cache: TokenCache::default(),
            algorithms,
            metadata,
            config,
        })
    }

    /// The validated `oauth` block it enforces.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The RFC 9728 protected-resource metadata document.
    pub fn metadata(&self) -> &str {
        &self.metadata
    }

    /// Discovers the keys and keeps them known, for as long as it runs.
    pub fn upkeep(&self) -> impl Future<Output = ()> + use<> {
        Arc::clone(&self.keys).upkeep()
    }

    /// The verdict on one token presented from `peer`, checked within `reach`.
    pub async fn authenticate(
        &self,
        token: &str,
        peer: Option<std::net::IpAddr>,
        reach: Reach,
    ) -> Result<TokenVerdict, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::TooLong);
        }
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        let now = now_s();
        if let Some(verdict) = self.cache.get(&digest, now) {
            return Ok(verdict);
        }
        let granted = if is_jws_shaped(token) {
            self.verify(token, now, reach).await?
        } else if let Some(introspector) = &self.introspector {
            if reach == Reach::LocalOnly {
                return Err(Rejection::NeedsIdp);
            }
            introspector
                .introspect(token, &digest, peer, &self.config, now)
                .await?
        } else {
            return Err(Rejection::NotJws);
        };
        let verdict = self.verdict(&granted);
        self.cache.put(digest, verdict.clone(), granted.exp, now);
        Ok(verdict)
    }

    /// The read scope allows the read tools; the send scope allows
    /// `send_prompt` as well.
    fn verdict(&self, granted: &Granted) -> TokenVerdict {
        let has = |scope: &str| granted.scopes.iter().any(|s| s == scope);
        let may_send = has(self.config.send_scope());
        if !may_send && !has(self.config.read_scope()) {
            return TokenVerdict::NoScope;
        }
        TokenVerdict::Caller(Caller::oauth(
            granted.sub.as_deref(),
            granted.client_id.as_deref(),
            may_send,
        ))
    }

    async fn verify(&self, token: &str, now: u64, reach: Reach) -> Result<Granted, Rejection> {
        let header = jsonwebtoken::decode_header(token).map_err(|_| Rejection::Header)?;
        if header.enc.is_some() {
            return Err(Rejection::Header);
        }
        if !self.algorithms.contains(&header.alg) {
            return Err(Rejection::Algorithm);
        }
        if header.crit.is_some() {
            return Err(Rejection::Critical);
        }
        if let Some(typ) = &header.typ {
            let typ = typ.to_ascii_lowercase();
            if typ != "at+jwt" && typ != "application/at+jwt" {
                return Err(Rejection::Type);
            }
        }
        let kid = header.kid.as_deref().ok_or(Rejection::NoKid)?;
        let key = match self.keys.find(kid, reach == Reach::Any).await {
            Lookup::Found(key) => key,
            Lookup::Unknown => return Err(Rejection::UnknownKid),
            Lookup::NotYetKnown => return Err(Rejection::KeysNotKnown),
            Lookup::Ambiguous => return Err(Rejection::AmbiguousKid),
            Lookup::NeedsIdp => return Err(Rejection::NeedsIdp),
        };
        if key.alg.is_some_and(|alg| alg != header.alg)
            || key.decoding.family() != header.alg.family()
        {
            return Err(Rejection::KeyMismatch);
        }
        let mut validation = Validation::new(header.alg);
        validation.set_issuer(&[self.config.issuer()]);
        validation.set_audience(self.config.audience());
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.leeway = self.config.clock_skew().as_secs();
        validation.validate_nbf = true;
        let data = jsonwebtoken::decode::<Claims>(token, &key.decoding, &validation)
            .map_err(|e| rejection(e.kind()))?;
        let claims = data.claims;
        if claims
            .iat
            .is_some_and(|iat| iat > now + self.config.clock_skew().as_secs())
        {
            return Err(Rejection::IssuedInFuture);
        }
        let mut scopes: Vec<String> = claims
            .scope
            .as_deref()
            .unwrap_or("")
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect();
        match claims.scp {
            Some(Scp::One(s)) => scopes.extend(s.split_ascii_whitespace().map(str::to_owned)),
            Some(Scp::Many(list)) => scopes.extend(list),
            None => {}
        }
        Ok(Granted {
            sub: claims.sub,
            client_id: claims.client_id.or(claims.azp),
            scopes,
            exp: claims.exp,
        })
    }
}

/// Two dots and nothing that base64url lacks: a JWS compact
/// serialisation (a JWE has four dots).
fn is_jws_shaped(token: &str) -> bool {
    token.bytes().filter(|b| *b == b'.').count() == 2
        && token
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

fn now_s() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
}

#[cfg(test)]
mod tests {
    //! Unit tests of the resource server's own helpers.

    use super::*;

    #[test]
    fn only_compact_jws_is_taken_for_a_jwt() {
        assert!(is_jws_shaped("eyJh.eyJz.c2ln"));
        assert!(
            !is_jws_shaped("eyJh.eyJz.c2ln.aXY.dGFn"),
            "a JWE has five parts"
        );
        assert!(!is_jws_shaped("opaque-token-value"));
        assert!(!is_jws_shaped("eyJh.eyJz.c2l+"), "not base64url");
    }
}
