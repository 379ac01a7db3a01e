//! RFC 7662 introspection, for identity providers that issue opaque access
//! tokens: used only when `http.auth.introspection` is configured. The
//! answer must say `active`, name the configured issuer when it names one,
//! and name this resource in `aud` (no passthrough, as for JWTs); `exp`,
//! `nbf` and `iat`, when present, must be integers (a float or a string is
//! an invalid answer, never "no exp"). An answer without `exp` is trusted
//! for a minute at most.
//!
//! Anybody can present a made-up opaque token, and each one would cost an
//! IdP round trip while its connection waits, still unauthenticated. So an
//! introspection is asked only within bounds: a refusal is remembered for
//! [`REFUSAL_TTL_S`] by the token's SHA-256 (the same token is never asked
//! about twice meanwhile), each peer address may have [`PER_PEER_PER_SECOND`]
//! asked per second, and at most [`MAX_IN_FLIGHT`] run at once; past a
//! bound the request is refused at once (429 or 503), never queued.

use crate::lock::held;
use std::collections::HashMap;
use std::net::IpAddr;
use std::num::NonZeroU32;
use std::sync::Mutex;

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use serde_json::Value;
use tokio::sync::Semaphore;
use url::Url;

use super::fetch::Fetcher;
use super::{Granted, Rejection, StartError};
use crate::config::{Introspection, OAuthConfig};

/// How long an active answer without `exp` is remembered.
const TRUST_WITHOUT_EXP_S: u64 = 60;
/// Introspections running at once at most: each holds a connection that
/// has proven nothing yet.
pub(crate) const MAX_IN_FLIGHT: usize = 16;
/// Introspections one peer address may cause per second (the burst is
/// twice that). Behind the operator's proxy every client is one peer, so
/// this is also the bound on all of them: far above a real client's pace,
/// which introspects a token once and then uses the cache.
pub const PER_PEER_PER_SECOND: u32 = 10;
/// How long a refused token is refused without asking again.
pub(crate) const REFUSAL_TTL_S: u64 = 60;
/// Refused tokens remembered at most.
const MAX_REFUSALS: usize = 4096;
/// Peer addresses whose rate is tracked before the idle ones are dropped.
const MAX_PEERS: usize = 1024;

pub(super) struct Introspector {
    fetcher: Fetcher,
    endpoint: Url,
    client_id: String,
    client_secret: String,
    in_flight: Semaphore,
    per_peer: DefaultKeyedRateLimiter<IpAddr>,
    refused: Mutex<HashMap<[u8; 32], (Rejection, u64)>>,
}

impl Introspector {
    /// Reads this resource server's client credentials from the variables
    /// the config names.
    pub(super) fn from_env(
        fetcher: Fetcher,
        config: &Introspection,
    ) -> Result<Introspector, StartError> {
        let read = |key: &'static str, name: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| StartError::MissingSecret {
                    key,
                    name: name.to_owned(),
                })
        };
        let rate = NonZeroU32::new(PER_PEER_PER_SECOND).expect("non-zero rate");
        Ok(Introspector {
            fetcher,
            endpoint: config.endpoint.clone(),
            client_id: read("clientIdEnv", &config.client_id_env)?,
            client_secret: read("clientSecretEnv", &config.client_secret_env)?,
            in_flight: Semaphore::new(MAX_IN_FLIGHT),
            per_peer: RateLimiter::keyed(
                Quota::per_second(rate)
                    .allow_burst(NonZeroU32::new(2 * PER_PEER_PER_SECOND).expect("non-zero burst")),
            ),
            refused: Mutex::new(HashMap::new()),
        })
    }

    /// The verdict on an opaque token (`digest` its SHA-256) presented by
    /// `peer`, asking the IdP only within the bounds of this module.
    pub(super) async fn introspect(
        &self,
        token: &str,
        digest: &[u8; 32],
        peer: Option<IpAddr>,
        config: &OAuthConfig,
        now: u64,
    ) -> Result<Granted, Rejection> {
        if let Some(rejection) = self.refused_before(digest, now) {
            return Err(rejection);
        }
        if let Some(peer) = peer {
            if self.per_peer.len() > MAX_PEERS {
                self.per_peer.retain_recent();
            }
            if self.per_peer.check_key(&peer).is_err() {
                return Err(Rejection::IntrospectionRateLimited);
            }
        }
        let Ok(_permit) = self.in_flight.try_acquire() else {
            return Err(Rejection::IntrospectionBusy);
        };
        let judged = self.ask(token, config, now).await;
        if let Err(rejection) = judged {
            self.remember_refusal(*digest, rejection, now);
        }
        judged
    }

    fn refused_before(&self, digest: &[u8; 32], now: u64) -> Option<Rejection> {
        let mut refused = held(&self.refused);
        match refused.get(digest) {
            Some((rejection, until)) if now < *until => Some(*rejection),
            Some(_) => {
                refused.remove(digest);
                None
            }
            None => None,
        }
    }

    /// Remembers what the IdP said of a token; not a failure to ask it (an
    /// IdP that is back answers at once).
    fn remember_refusal(&self, digest: [u8; 32], rejection: Rejection, now: u64) {
        if rejection == Rejection::IntrospectionFailed {
            return;
        }
        let mut refused = held(&self.refused);
        if refused.len() >= MAX_REFUSALS {
            refused.retain(|_, (_, until)| *until > now);
            if refused.len() >= MAX_REFUSALS
                && let Some(soonest) = refused.iter().min_by_key(|(_, (_, u))| *u).map(|(k, _)| *k)
            {
                refused.remove(&soonest);
            }
        }
        refused.insert(digest, (rejection, now + REFUSAL_TTL_S));
    }

    /// One round trip to the IdP, and the answer judged.
    async fn ask(&self, token: &str, config: &OAuthConfig, now: u64) -> Result<Granted, Rejection> {
        let answer = self
            .fetcher
            .post_form(
                &self.endpoint,
                (&self.client_id, &self.client_secret),
                &[("token", token), ("token_type_hint", "access_token")],
            )
            .await
            .map_err(|e| {
                tracing::warn!(error = %e, endpoint = %self.endpoint, "oauth: introspection failed");
                Rejection::IntrospectionFailed
            })?;
        judge(&answer, config, now)
    }
}

fn judge(answer: &Value, config: &OAuthConfig, now: u64) -> Result<Granted, Rejection> {
    let text = |key: &str| answer.get(key).and_then(Value::as_str).map(str::to_owned);
    if answer.get("active") != Some(&Value::Bool(true)) {
        return Err(Rejection::Inactive);
    }
    if let Some(iss) = answer.get("iss")
        && iss.as_str() != Some(config.issuer())
    {
        return Err(Rejection::Issuer);
    }
    let names = |aud: &str| config.audience().iter().any(|a| a == aud);
    let aud_ok = match answer.get("aud") {
        Some(Value::String(aud)) => names(aud),
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).any(names),
        _ => false,
    };
    if !aud_ok {
        return Err(Rejection::Audience);
    }
    let skew = config.clock_skew().as_secs();
    let exp = match time_claim(answer, "exp")? {
        Some(exp) if exp.saturating_add(skew) <= now => return Err(Rejection::Expired),
        Some(exp) => exp,
        None => now + TRUST_WITHOUT_EXP_S,
    };
    if time_claim(answer, "nbf")?.is_some_and(|nbf| nbf > now + skew) {
        return Err(Rejection::NotYetValid);
    }
    if time_claim(answer, "iat")?.is_some_and(|iat| iat > now + skew) {
        return Err(Rejection::IssuedInFuture);
    }
    Ok(Granted {
        sub: text("sub"),
        client_id: text("client_id"),
        scopes: text("scope")
            .unwrap_or_default()
            .split_ascii_whitespace()
            .map(str::to_owned)
            .collect(),
        exp,
    })
}

/// A NumericDate member (seconds since the epoch): absent, or a
/// non-negative integer. Anything else present (a float, a string, null)
/// makes the answer invalid, as it does a JWT: read as absent, an expired
/// token would pass.
fn time_claim(answer: &Value, key: &str) -> Result<Option<u64>, Rejection> {
    match answer.get(key) {
        None => Ok(None),
        Some(value) => value.as_u64().map(Some).ok_or(Rejection::Claims),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Config, HttpAuth, RawConfig, Transport};

    fn config() -> OAuthConfig {
        let text = serde_json::json!({
            "socketPath": "/tmp/s",
            "transport": "http",
            "http": {"auth": {
                "mode": "oauth",
                "issuer": "https://id.example.net",
                "resource": "https://mcp.example.net/mcp",
            }},
        })
        .to_string();
        let raw = RawConfig::parse(std::path::Path::new("test"), &text).unwrap();
        match Config::try_from(raw).unwrap().transport() {
            Transport::Http(http) => match http.auth() {
                HttpAuth::OAuth(c) => c.as_ref().clone(),
                HttpAuth::Token => panic!("oauth mode"),
            },
            Transport::Stdio => panic!("http transport"),
        }
    }

    #[test]
    fn introspection_answers_are_judged_like_tokens() {
        let c = config();
        let ok = serde_json::json!({"active": true, "iss": "https://id.example.net",
            "aud": ["https://mcp.example.net/mcp"], "exp": 2_000, "scope": "herdr.read", "sub": "u"});
        let granted = judge(&ok, &c, 1_000).unwrap();
        assert_eq!(granted.scopes, ["herdr.read"]);
        assert_eq!(granted.exp, 2_000);
        let mut inactive = ok.clone();
        inactive["active"] = Value::Bool(false);
        assert_eq!(judge(&inactive, &c, 1_000).err(), Some(Rejection::Inactive));
        let mut other = ok.clone();
        other["aud"] = serde_json::json!("https://other.example.net/api");
        assert_eq!(judge(&other, &c, 1_000).err(), Some(Rejection::Audience));
        let mut no_aud = ok.clone();
        no_aud.as_object_mut().unwrap().remove("aud");
        assert_eq!(judge(&no_aud, &c, 1_000).err(), Some(Rejection::Audience));
        let mut wrong_iss = ok.clone();
        wrong_iss["iss"] = serde_json::json!("https://evil.example.net");
        assert_eq!(judge(&wrong_iss, &c, 1_000).err(), Some(Rejection::Issuer));
        assert_eq!(judge(&ok, &c, 2_061).err(), Some(Rejection::Expired));
    }

    #[test]
    fn time_claims_that_are_not_integers_make_the_answer_invalid() {
        let c = config();
        let ok = serde_json::json!({"active": true, "aud": "https://mcp.example.net/mcp",
            "exp": 2_000, "scope": "herdr.read"});
        for (key, value) in [
            ("exp", serde_json::json!(500.5)),
            ("exp", serde_json::json!("500")),
            ("exp", serde_json::json!(null)),
            ("exp", serde_json::json!(-5)),
            ("nbf", serde_json::json!(10.0)),
            ("iat", serde_json::json!("10")),
        ] {
            let mut answer = ok.clone();
            answer[key] = value.clone();
            assert_eq!(
                judge(&answer, &c, 1_000).err(),
                Some(Rejection::Claims),
                "{key}: {value}"
            );
        }
        let mut future = ok.clone();
        future["iat"] = serde_json::json!(5_000);
        assert_eq!(
            judge(&future, &c, 1_000).err(),
            Some(Rejection::IssuedInFuture)
        );
    }
}
