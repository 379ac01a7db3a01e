//! RFC 7662 introspection, for identity providers that issue opaque access
//! tokens: used only when `http.auth.introspection` is configured. The
//! answer must say `active`, name the configured issuer when it names one,
//! and name this resource in `aud` (no passthrough, as for JWTs). An answer
//! without `exp` is trusted for a minute at most.

use serde_json::Value;
use url::Url;

use super::fetch::Fetcher;
use super::{Granted, Rejection, StartError};
use crate::config::{Introspection, OAuthConfig};

/// How long an active answer without `exp` is remembered.
const TRUST_WITHOUT_EXP_S: u64 = 60;

pub struct Introspector {
    fetcher: Fetcher,
    endpoint: Url,
    client_id: String,
    client_secret: String,
}

impl Introspector {
    /// Reads this resource server's client credentials from the variables
    /// the config names.
    pub fn from_env(fetcher: Fetcher, config: &Introspection) -> Result<Introspector, StartError> {
        let read = |key: &'static str, name: &str| {
            std::env::var(name)
                .ok()
                .filter(|v| !v.is_empty())
                .ok_or_else(|| StartError::MissingSecret {
                    key,
                    name: name.to_owned(),
                })
        };
        Ok(Introspector {
            fetcher,
            endpoint: config.endpoint.clone(),
            client_id: read("clientIdEnv", &config.client_id_env)?,
            client_secret: read("clientSecretEnv", &config.client_secret_env)?,
        })
    }

    pub async fn introspect(
        &self,
        token: &str,
        config: &OAuthConfig,
        now: u64,
    ) -> Result<Granted, Rejection> {
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
    let exp = match answer.get("exp").and_then(Value::as_u64) {
        Some(exp) if exp + skew <= now => return Err(Rejection::Expired),
        Some(exp) => exp,
        None => now + TRUST_WITHOUT_EXP_S,
    };
    if answer
        .get("nbf")
        .and_then(Value::as_u64)
        .is_some_and(|nbf| nbf > now + skew)
    {
        return Err(Rejection::NotYetValid);
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
}
