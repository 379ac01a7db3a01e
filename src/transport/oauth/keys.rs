//! The issuer's signing keys: discovered from its metadata (RFC 8414, then
//! OpenID discovery; its `issuer` must equal the configured one exactly),
//! fetched from its JWKS and kept. An IdP that is down never stops the
//! server: until keys are known every token is refused (401) and discovery
//! is retried in the background; keys once known keep working whatever the
//! IdP does. A token naming an unknown `kid` refetches the JWKS at most
//! once a minute, however many such tokens arrive, so made-up kids cannot
//! hammer the IdP.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use url::Url;

use super::fetch::Fetcher;
use crate::config::{OAuthConfig, is_loopback};
use crate::escape::printable;

/// Unknown kids refetch the key set at most this often.
pub const REFETCH_EVERY: Duration = Duration::from_secs(60);
/// While no key is known, discovery is retried this often.
const RETRY_EVERY: Duration = Duration::from_secs(2);
/// Known keys are refreshed this often (a removed key stops working).
const REFRESH_EVERY: Duration = Duration::from_secs(15 * 60);
/// Keys kept from one set: real sets hold a handful.
const MAX_KEYS: usize = 64;

/// One verification key, and the algorithm it is pinned to, if the set
/// names one.
pub struct Key {
    pub decoding: DecodingKey,
    pub alg: Option<Algorithm>,
}

/// What a lookup by `kid` found.
pub enum Lookup {
    Found(Arc<Key>),
    /// The set is known and has no such key (after a refetch, if one was due).
    Unknown,
    /// No key set has been fetched yet: the IdP has not answered so far.
    NotYetKnown,
}

#[derive(Default)]
struct Known {
    jwks_uri: Option<Url>,
    keys: Option<Arc<HashMap<String, Arc<Key>>>>,
    fetched_at: Option<Instant>,
}

pub struct Keys {
    fetcher: Fetcher,
    issuer: String,
    jwks_override: Option<Url>,
    known: RwLock<Known>,
    /// One fetch at a time; whoever waits for it uses its result.
    fetching: tokio::sync::Mutex<()>,
}

impl Keys {
    pub fn new(fetcher: Fetcher, config: &OAuthConfig) -> Keys {
        Keys {
            fetcher,
            issuer: config.issuer().to_owned(),
            jwks_override: config.jwks_uri().cloned(),
            known: RwLock::new(Known::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The key named `kid`, refetching the set first if it is unknown and
    /// the last fetch is over a minute old.
    pub async fn find(&self, kid: &str) -> Lookup {
        let (found, due) = self.look(kid);
        match found {
            Some(lookup) => return lookup,
            None if !due => return Lookup::Unknown,
            None => {}
        }
        let _one = self.fetching.lock().await;
        // Someone else may have fetched while this call waited.
        let (found, due) = self.look(kid);
        if let Some(lookup) = found {
            return lookup;
        }
        if !due {
            return Lookup::Unknown;
        }
        if let Err(e) = self.refresh().await {
            tracing::warn!(error = %e, "oauth: refetching the issuer's keys for an unknown kid failed; the keys already known keep working");
        }
        self.look(kid).0.unwrap_or(Lookup::Unknown)
    }

    /// The key if known; whether a refetch is due when it is not.
    fn look(&self, kid: &str) -> (Option<Lookup>, bool) {
        let known = self.known.read().expect("keys lock");
        let Some(keys) = &known.keys else {
            return (Some(Lookup::NotYetKnown), false);
        };
        if let Some(key) = keys.get(kid) {
            return (Some(Lookup::Found(Arc::clone(key))), false);
        }
        let due = known
            .fetched_at
            .is_none_or(|at| at.elapsed() >= REFETCH_EVERY);
        (None, due)
    }

    /// Whether any key set is known.
    pub fn ready(&self) -> bool {
        self.known.read().expect("keys lock").keys.is_some()
    }

    /// Discovers the JWKS location (once) and fetches the key set.
    pub async fn refresh(&self) -> Result<usize, String> {
        let known_uri = self.known.read().expect("keys lock").jwks_uri.clone();
        let jwks_uri = match known_uri {
            Some(uri) => uri,
            None => {
                let uri = match &self.jwks_override {
                    Some(uri) => uri.clone(),
                    None => self.discover().await?,
                };
                self.known.write().expect("keys lock").jwks_uri = Some(uri.clone());
                uri
            }
        };
        // A failed fetch counts too: the once-a-minute limit is on asking.
        self.known.write().expect("keys lock").fetched_at = Some(Instant::now());
        let set = self
            .fetcher
            .get(&jwks_uri)
            .await
            .map_err(|e| format!("fetching the key set {jwks_uri}: {e}"))?;
        let keys = parse_key_set(&set);
        let count = keys.len();
        if count == 0 {
            return Err(format!(
                "the key set {jwks_uri} has no usable signing key (RSA, EC or OKP with a kid)"
            ));
        }
        self.known.write().expect("keys lock").keys = Some(Arc::new(keys));
        tracing::info!(keys = count, jwks_uri = %jwks_uri, "oauth: fetched the issuer's signing keys");
        Ok(count)
    }

    /// The issuer's metadata: RFC 8414 first, then OpenID discovery. Its
    /// `issuer` must equal the configured one character for character.
    async fn discover(&self) -> Result<Url, String> {
        let mut tried = Vec::new();
        for url in metadata_urls(&self.issuer)? {
            match self.fetcher.get(&url).await {
                Ok(document) => return self.jwks_uri_from(&url, &document),
                Err(e) => tried.push(format!("{url}: {e}")),
            }
        }
        Err(format!(
            "no metadata for issuer {}: {}",
            printable(&self.issuer),
            tried.join("; ")
        ))
    }

    fn jwks_uri_from(&self, url: &Url, document: &Value) -> Result<Url, String> {
        let issuer = document.get("issuer").and_then(Value::as_str);
        if issuer != Some(self.issuer.as_str()) {
            return Err(format!(
                "the metadata at {url} names issuer {}, not the configured {}: set http.auth.issuer to exactly the issuer your IdP reports",
                printable(issuer.unwrap_or("(none)")),
                printable(&self.issuer)
            ));
        }
        let jwks_uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| {
                format!("the metadata at {url} has no jwks_uri: set http.auth.jwksUri")
            })?;
        let jwks_uri = Url::parse(jwks_uri)
            .map_err(|e| format!("the metadata at {url} has an unusable jwks_uri ({e})"))?;
        if jwks_uri.scheme() != "https" && !(jwks_uri.scheme() == "http" && is_loopback(&jwks_uri))
        {
            return Err(format!(
                "the metadata at {url} names a jwks_uri that is not https: {jwks_uri}"
            ));
        }
        Ok(jwks_uri)
    }

    /// Keeps the keys known: retries discovery until it succeeds, then
    /// refreshes now and then. Failures never drop keys already known.
    pub async fn upkeep(self: Arc<Self>) {
        let mut failures = 0u32;
        loop {
            let wait = match self.refresh().await {
                Ok(_) => {
                    failures = 0;
                    REFRESH_EVERY
                }
                Err(e) => {
                    failures += 1;
                    if self.ready() {
                        tracing::warn!(error = %e, "oauth: refreshing the issuer's keys failed; the keys already known keep working");
                        REFRESH_EVERY
                    } else {
                        // Every failure while nothing is known is worth a
                        // line: every request is refused meanwhile.
                        tracing::warn!(error = %e, attempt = failures, "oauth: the issuer's keys are not known yet, so every token is refused (401); retrying");
                        RETRY_EVERY
                    }
                }
            };
            tokio::time::sleep(wait).await;
        }
    }
}

/// Where the issuer publishes its metadata: RFC 8414 section 3.1 (the
/// well-known segment before the issuer's path), then OpenID Connect
/// Discovery (appended to the issuer).
pub fn metadata_urls(issuer: &str) -> Result<Vec<Url>, String> {
    let base = Url::parse(issuer).map_err(|e| format!("issuer {issuer:?} is not a URL: {e}"))?;
    let path = base.path().trim_end_matches('/').to_owned();
    let mut rfc8414 = base.clone();
    rfc8414.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let mut openid = base;
    openid.set_path(&format!("{path}/.well-known/openid-configuration"));
    Ok(vec![rfc8414, openid])
}

/// The usable signing keys of a JWKS document, by kid. Keys that cannot
/// verify (encryption keys, symmetric keys, unknown types, no kid) are
/// left out; the rest of the set still counts.
fn parse_key_set(set: &Value) -> HashMap<String, Arc<Key>> {
    let mut keys = HashMap::new();
    let Some(list) = set.get("keys").and_then(Value::as_array) else {
        return keys;
    };
    for entry in list.iter().take(MAX_KEYS) {
        let Ok(jwk) = serde_json::from_value::<Jwk>(entry.clone()) else {
            continue;
        };
        let Some(kid) = jwk.common.key_id.clone() else {
            continue;
        };
        if matches!(
            jwk.common.public_key_use,
            Some(PublicKeyUse::Encryption | PublicKeyUse::Other(_))
        ) {
            continue;
        }
        let alg = match jwk.common.key_algorithm {
            None => None,
            Some(a) => match a.to_string().parse::<Algorithm>() {
                Ok(alg) => Some(alg),
                Err(_) => continue,
            },
        };
        let Ok(decoding) = DecodingKey::from_jwk(&jwk) else {
            continue;
        };
        if decoding.family() == jsonwebtoken::AlgorithmFamily::Hmac {
            continue;
        }
        keys.insert(kid, Arc::new(Key { decoding, alg }));
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_is_looked_for_where_both_specs_say() {
        let urls = metadata_urls("https://id.example.net/realms/main").unwrap();
        assert_eq!(
            urls[0].as_str(),
            "https://id.example.net/.well-known/oauth-authorization-server/realms/main"
        );
        assert_eq!(
            urls[1].as_str(),
            "https://id.example.net/realms/main/.well-known/openid-configuration"
        );
        let urls = metadata_urls("http://127.0.0.1:9000").unwrap();
        assert_eq!(
            urls[0].as_str(),
            "http://127.0.0.1:9000/.well-known/oauth-authorization-server"
        );
        assert_eq!(
            urls[1].as_str(),
            "http://127.0.0.1:9000/.well-known/openid-configuration"
        );
    }

    #[test]
    fn only_signing_keys_with_a_kid_are_kept() {
        let set = serde_json::json!({"keys": [
            {"kty": "oct", "kid": "secret", "k": "c2VjcmV0LXNlY3JldC1zZWNyZXQ"},
            {"kty": "EC", "kid": "ec-1", "crv": "P-256", "alg": "ES256", "use": "sig",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "kid": "ec-enc", "crv": "P-256", "use": "enc",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "EC", "crv": "P-256",
             "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
             "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"},
            {"kty": "weird", "kid": "w"}
        ]});
        let keys = parse_key_set(&set);
        assert_eq!(keys.keys().collect::<Vec<_>>(), ["ec-1"]);
        assert_eq!(keys["ec-1"].alg, Some(Algorithm::ES256));
    }
}
