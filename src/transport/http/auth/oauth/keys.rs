//! The issuer's signing keys: discovered from its metadata (RFC 8414, then
//! OpenID discovery; its `issuer` must equal the configured one exactly),
//! fetched from its JWKS and kept. An IdP that is down never stops the
//! server: until keys are known every token is refused (401) and discovery
//! is retried in the background; keys once known keep working whatever the
//! IdP does. A token naming an unknown `kid` refetches the JWKS at most
//! once a minute, however many such tokens arrive, so made-up kids cannot
//! hammer the IdP. A kid that two keys of one set share is ambiguous: a
//! token naming it is refused (the set's order must not pick the key).
//! Only the first [`MAX_KEYS`] entries of a set are read; `doctor` says
//! when some were left out. A key without `alg` verifies only the
//! algorithms of `http.auth.algorithms` of its own type (the default list
//! is RS256, PS256, ES256 and EdDSA).

use std::collections::HashMap;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::{Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;
use url::Url;

use super::KeysError;
use super::fetch::Fetcher;
use crate::config::{OAuthConfig, is_loopback};
use crate::escape::printable;

/// Unknown kids refetch the key set at most this often.
pub(crate) const REFETCH_EVERY: Duration = Duration::from_secs(60);
/// While no key is known, discovery is retried this often.
const RETRY_EVERY: Duration = Duration::from_secs(2);
/// Known keys are refreshed this often (a removed key stops working).
const REFRESH_EVERY: Duration = Duration::from_secs(15 * 60);
/// Keys read from one set: real sets hold a handful.
pub(crate) const MAX_KEYS: usize = 64;

/// One verification key, and the algorithm it is pinned to, if the set
/// names one.
pub(super) struct Key {
    pub decoding: DecodingKey,
    pub alg: Option<Algorithm>,
}

/// What a lookup by `kid` found.
pub(super) enum Lookup {
    Found(Arc<Key>),
    /// The set is known and has no such key (after a refetch, if one was due).
    Unknown,
    /// No key set has been fetched yet: the IdP has not answered so far.
    NotYetKnown,
    /// Two keys of the set carry this kid.
    Ambiguous,
    /// Not known, and finding out would need the IdP, which this lookup
    /// may not ask.
    NeedsIdp,
}

/// One key set as read: its usable keys by kid, the kids more than one key
/// carries, and how many entries past [`MAX_KEYS`] were not read.
#[derive(Default)]
pub(crate) struct KeySet {
    keys: HashMap<String, Arc<Key>>,
    ambiguous: Vec<String>,
    ignored: usize,
}

impl KeySet {
    /// Usable signing keys (an ambiguous kid's keys not counted).
    pub(crate) fn usable(&self) -> usize {
        self.keys.len()
    }

    /// The kids that more than one key carries; tokens naming them are refused.
    pub(crate) fn ambiguous(&self) -> &[String] {
        &self.ambiguous
    }

    /// Entries past the first [`MAX_KEYS`], not read.
    pub(crate) fn ignored(&self) -> usize {
        self.ignored
    }
}

#[derive(Default)]
struct Known {
    jwks_uri: Option<Url>,
    keys: Option<Arc<KeySet>>,
    fetched_at: Option<Instant>,
}

pub(super) struct Keys {
    fetcher: Fetcher,
    issuer: String,
    jwks_override: Option<Url>,
    known: RwLock<Known>,
    /// One fetch at a time; whoever waits for it uses its result.
    fetching: tokio::sync::Mutex<()>,
}

impl Keys {
    pub(super) fn new(fetcher: Fetcher, config: &OAuthConfig) -> Keys {
        Keys {
            fetcher,
            issuer: config.issuer().to_owned(),
            jwks_override: config.jwks_uri().cloned(),
            known: RwLock::new(Known::default()),
            fetching: tokio::sync::Mutex::new(()),
        }
    }

    /// The key named `kid`, refetching the set first if it is unknown and
    /// the last fetch is over a minute old, unless `may_fetch` is false.
    pub(super) async fn find(&self, kid: &str, may_fetch: bool) -> Lookup {
        let (found, due) = self.look(kid);
        match found {
            Some(Lookup::NotYetKnown) if !may_fetch => return Lookup::NeedsIdp,
            Some(lookup) => return lookup,
            None if !due => return Lookup::Unknown,
            None if !may_fetch => return Lookup::NeedsIdp,
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
        let known = crate::lock::read(&self.known);
        let Some(keys) = &known.keys else {
            return (Some(Lookup::NotYetKnown), false);
        };
        if let Some(key) = keys.keys.get(kid) {
            return (Some(Lookup::Found(Arc::clone(key))), false);
        }
        if keys.ambiguous.iter().any(|k| k == kid) {
            return (Some(Lookup::Ambiguous), false);
        }
        let due = known
            .fetched_at
            .is_none_or(|at| at.elapsed() >= REFETCH_EVERY);
        (None, due)
    }

    /// Whether any key set is known.
    pub(super) fn ready(&self) -> bool {
        crate::lock::read(&self.known).keys.is_some()
    }

    /// Discovers the JWKS location (once) and fetches the key set; how many
    /// usable keys it has.
    pub(super) async fn refresh(&self) -> Result<usize, KeysError> {
        self.refresh_set().await.map(|set| set.usable())
    }

    /// [`Keys::refresh`], with what the set held.
    pub(super) async fn refresh_set(&self) -> Result<Arc<KeySet>, KeysError> {
        let known_uri = crate::lock::read(&self.known).jwks_uri.clone();
        let jwks_uri = match known_uri {
            Some(uri) => uri,
            None => {
                let uri = match &self.jwks_override {
                    Some(uri) => uri.clone(),
                    None => self.discover().await?,
                };
                crate::lock::write(&self.known).jwks_uri = Some(uri.clone());
                uri
            }
        };
        // A failed fetch counts too: the once-a-minute limit is on asking.
        crate::lock::write(&self.known).fetched_at = Some(Instant::now());
        let set = self
            .fetcher
            .get(&jwks_uri)
            .await
            .map_err(|source| KeysError::Fetch {
                jwks_uri: jwks_uri.to_string(),
                source,
            })?;
        let keys = Arc::new(parse_key_set(&set));
        let count = keys.usable();
        for kid in keys.ambiguous() {
            tracing::warn!(kid = %printable(kid), jwks_uri = %jwks_uri, "oauth: two keys of the issuer's key set carry this kid, so it is ambiguous: tokens naming it are refused (the IdP must give each key its own kid)");
        }
        if keys.ignored() > 0 {
            tracing::warn!(ignored = keys.ignored(), jwks_uri = %jwks_uri, "oauth: the issuer's key set has more than {MAX_KEYS} entries; only the first {MAX_KEYS} are read");
        }
        if count == 0 {
            return Err(KeysError::NoUsableKey {
                jwks_uri: jwks_uri.to_string(),
            });
        }
        crate::lock::write(&self.known).keys = Some(Arc::clone(&keys));
        tracing::info!(keys = count, jwks_uri = %jwks_uri, "oauth: fetched the issuer's signing keys");
        Ok(keys)
    }

    /// The issuer's metadata: RFC 8414 first, then OpenID discovery. Its
    /// `issuer` must equal the configured one character for character.
    async fn discover(&self) -> Result<Url, KeysError> {
        let mut tried = Vec::new();
        for url in metadata_urls(&self.issuer)? {
            match self.fetcher.get(&url).await {
                Ok(document) => return self.jwks_uri_from(&url, &document),
                Err(e) => tried.push(format!("{url}: {e}")),
            }
        }
        Err(KeysError::NoMetadata {
            issuer: printable(&self.issuer).into_owned(),
            tried: tried.join("; "),
        })
    }

    fn jwks_uri_from(&self, url: &Url, document: &Value) -> Result<Url, KeysError> {
        let issuer = document.get("issuer").and_then(Value::as_str);
        if issuer != Some(self.issuer.as_str()) {
            return Err(KeysError::IssuerMismatch {
                url: url.to_string(),
                named: printable(issuer.unwrap_or("(none)")).into_owned(),
                issuer: printable(&self.issuer).into_owned(),
            });
        }
        let jwks_uri = document
            .get("jwks_uri")
            .and_then(Value::as_str)
            .ok_or_else(|| KeysError::NoJwksUri {
                url: url.to_string(),
            })?;
        let jwks_uri = Url::parse(jwks_uri).map_err(|source| KeysError::BadJwksUri {
            url: url.to_string(),
            source,
        })?;
        if jwks_uri.scheme() != "https" && !(jwks_uri.scheme() == "http" && is_loopback(&jwks_uri))
        {
            return Err(KeysError::JwksNotHttps {
                url: url.to_string(),
                jwks_uri: jwks_uri.to_string(),
            });
        }
        Ok(jwks_uri)
    }

    /// Keeps the keys known: retries discovery until it succeeds, then
    /// refreshes now and then. Failures never drop keys already known.
    pub(super) async fn upkeep(self: Arc<Self>) {
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
pub(crate) fn metadata_urls(issuer: &str) -> Result<Vec<Url>, KeysError> {
    let base = Url::parse(issuer).map_err(|source| KeysError::IssuerNotUrl {
        issuer: issuer.to_owned(),
        source,
    })?;
    let path = base.path().trim_end_matches('/').to_owned();
    let mut rfc8414 = base.clone();
    rfc8414.set_path(&format!("/.well-known/oauth-authorization-server{path}"));
    let mut openid = base;
    openid.set_path(&format!("{path}/.well-known/openid-configuration"));
    Ok(vec![rfc8414, openid])
}

/// The usable signing keys of a JWKS document, by kid. Keys that cannot
/// verify (encryption keys, symmetric keys, unknown types, no kid) are
/// left out; the rest of the set still counts. A kid that two entries
/// carry (usable or not) names no key.
fn parse_key_set(set: &Value) -> KeySet {
    let mut parsed = KeySet::default();
    let Some(list) = set.get("keys").and_then(Value::as_array) else {
        return parsed;
    };
    parsed.ignored = list.len().saturating_sub(MAX_KEYS);
    let mut seen = std::collections::HashSet::new();
    for kid in list
        .iter()
        .take(MAX_KEYS)
        .filter_map(|e| e.get("kid").and_then(Value::as_str))
    {
        if !seen.insert(kid) && !parsed.ambiguous.iter().any(|k| k == kid) {
            parsed.ambiguous.push(kid.to_owned());
        }
    }
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
        if decoding.family() == jsonwebtoken::AlgorithmFamily::Hmac
            || parsed.ambiguous.contains(&kid)
        {
            continue;
        }
        parsed.keys.insert(kid, Arc::new(Key { decoding, alg }));
    }
    parsed
}

#[cfg(test)]
mod tests {
    //! Where metadata is looked for, and which keys of a set are kept.

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
        assert_eq!(keys.keys.keys().collect::<Vec<_>>(), ["ec-1"]);
        assert_eq!(keys.keys["ec-1"].alg, Some(Algorithm::ES256));
        assert_eq!(keys.ignored(), 0);
    }

    #[test]
    fn a_kid_two_keys_share_names_no_key_and_entries_past_the_limit_are_counted() {
        let ec = |kid: &str| {
            serde_json::json!({"kty": "EC", "kid": kid, "crv": "P-256", "alg": "ES256",
            "x": "f83OJ3D2xF1Bg8vub9tLe1gHMzV76e8Tus9uPHvRVEU",
            "y": "x_FEzRu9m36HLN_tue659LNpXW6pCyStikYjKIWI5a0"})
        };
        let set = serde_json::json!({"keys": [ec("twice"), ec("once"), ec("twice")]});
        let keys = parse_key_set(&set);
        assert_eq!(keys.keys.keys().collect::<Vec<_>>(), ["once"]);
        assert_eq!(keys.ambiguous(), ["twice"]);
        let many: Vec<Value> = (0..MAX_KEYS + 3).map(|i| ec(&format!("k{i}"))).collect();
        let keys = parse_key_set(&serde_json::json!({ "keys": many }));
        assert_eq!(keys.usable(), MAX_KEYS);
        assert_eq!(keys.ignored(), 3);
    }
}
