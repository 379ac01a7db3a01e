//! `http.auth`: how HTTP callers prove who they are. `token` (the default)
//! takes static bearer tokens from the environment; `oauth` makes the
//! adapter a resource server for the operator's identity provider. Only
//! the settings live here; no secret does (introspection credentials are
//! named environment variables, read when `serve` starts).

use std::time::Duration;

use serde::{Deserialize, Serialize};
use url::Url;

use super::error::{Invalid, invalid};

/// `http.auth` as the file spells it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "the HTTP authentication settings: an object with \"mode\""
)]
pub struct RawAuth {
    /// `mode`: `token` (static bearer tokens) or `oauth`.
    pub mode: RawAuthMode,
    /// `issuer`: the identity provider's issuer URL (oauth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// `resource`: the public URL of `/mcp` as clients reach it (oauth).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// `audience`: the accepted `aud` values (default: the resource).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<String>>,
    /// `scopes`: the read and send scope names (default `herdr.read`,
    /// `herdr.send`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scopes: Option<RawScopes>,
    /// `jwksUri`: the key set's URL, instead of the one the issuer's metadata
    /// gives.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jwks_uri: Option<String>,
    /// `algorithms`: the accepted JWS algorithms (default RS256, PS256, ES256,
    /// EdDSA).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub algorithms: Option<Vec<String>>,
    /// `clockSkewS`: the tolerance for `exp`, `nbf` and `iat`, in seconds
    /// (default 60, at most 300).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_skew_s: Option<u64>,
    /// `introspection`: RFC 7662 introspection for opaque tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub introspection: Option<RawIntrospection>,
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RawAuthMode {
    Token,
    Oauth,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "the OAuth scopes: an object with \"read\" and \"send\""
)]
pub struct RawScopes {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send: Option<String>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Eq)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "the introspection settings: an object"
)]
pub struct RawIntrospection {
    pub endpoint: String,
    pub client_id_env: String,
    pub client_secret_env: String,
}

/// How HTTP callers authenticate.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum HttpAuth {
    /// `HERDR_MCP_TOKEN` (every tool) and optionally `HERDR_MCP_READ_TOKEN`
    /// (the read tools).
    #[default]
    Token,
    /// Access tokens from the operator's identity provider.
    OAuth(Box<OAuthConfig>),
}

/// Signature algorithms an access token may use. HMAC is never one: a
/// resource server holding a shared secret could mint tokens itself.
pub(super) const ALGORITHMS: [&str; 9] = [
    "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA",
];
const DEFAULT_ALGORITHMS: [&str; 4] = ["RS256", "PS256", "ES256", "EdDSA"];
const DEFAULT_SKEW_S: u64 = 60;

/// A validated `oauth` block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    issuer: String,
    resource: Url,
    audience: Vec<String>,
    read_scope: String,
    send_scope: String,
    jwks_uri: Option<Url>,
    algorithms: Vec<String>,
    clock_skew: Duration,
    introspection: Option<Introspection>,
}

/// RFC 7662 introspection for opaque tokens: the endpoint, and the names
/// of the environment variables holding this resource server's client
/// credentials.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Introspection {
    /// The introspection endpoint (`endpoint`).
    pub endpoint: Url,
    /// The variable holding this resource server's client id (`clientIdEnv`).
    pub client_id_env: String,
    /// The variable holding its client secret (`clientSecretEnv`).
    pub client_secret_env: String,
}

impl OAuthConfig {
    /// The issuer exactly as configured; its metadata must name the same.
    pub fn issuer(&self) -> &str {
        &self.issuer
    }

    /// The public URL of `/mcp`, canonical (scheme and host lower-case,
    /// default port dropped).
    pub fn resource(&self) -> &Url {
        &self.resource
    }

    /// Accepted `aud` values; a token must name one of them.
    pub fn audience(&self) -> &[String] {
        &self.audience
    }

    /// The scope that allows the read tools (`scopes.read`, default
    /// `herdr.read`).
    pub fn read_scope(&self) -> &str {
        &self.read_scope
    }

    /// The scope that also allows `send_prompt` (`scopes.send`, default
    /// `herdr.send`).
    pub fn send_scope(&self) -> &str {
        &self.send_scope
    }

    /// Overrides the JWKS location the issuer's metadata gives.
    pub fn jwks_uri(&self) -> Option<&Url> {
        self.jwks_uri.as_ref()
    }

    /// Accepted JWS algorithms, by their JOSE names.
    pub fn algorithms(&self) -> &[String] {
        &self.algorithms
    }

    /// Tolerance for `exp`, `nbf` and `iat`.
    pub fn clock_skew(&self) -> Duration {
        self.clock_skew
    }

    /// Introspection for opaque tokens, when configured.
    pub fn introspection(&self) -> Option<&Introspection> {
        self.introspection.as_ref()
    }

    /// Where the protected-resource metadata of `resource` is published
    /// (RFC 9728 section 3.1: the well-known segment goes before the path).
    pub fn metadata_url(&self) -> String {
        let mut url = self.resource.clone();
        let path = self.resource.path().trim_end_matches('/').to_owned();
        url.set_path(&format!("/.well-known/oauth-protected-resource{path}"));
        url.set_query(None);
        url.to_string()
    }
}

pub(super) fn validate(raw: Option<RawAuth>) -> Result<HttpAuth, Invalid> {
    let Some(raw) = raw else {
        return Ok(HttpAuth::Token);
    };
    match raw.mode {
        RawAuthMode::Token => token_only(&raw).map(|()| HttpAuth::Token),
        RawAuthMode::Oauth => oauth(raw).map(|c| HttpAuth::OAuth(Box::new(c))),
    }
}

/// Token mode takes no other key: one set for oauth would do nothing.
fn token_only(raw: &RawAuth) -> Result<(), Invalid> {
    let set = [
        ("issuer", raw.issuer.is_some()),
        ("resource", raw.resource.is_some()),
        ("audience", raw.audience.is_some()),
        ("scopes", raw.scopes.is_some()),
        ("jwksUri", raw.jwks_uri.is_some()),
        ("algorithms", raw.algorithms.is_some()),
        ("clockSkewS", raw.clock_skew_s.is_some()),
        ("introspection", raw.introspection.is_some()),
    ];
    match set.iter().find(|(_, present)| *present) {
        Some((key, _)) => Err(invalid(
            format!("http.auth.{key}"),
            "applies only to \"mode\": \"oauth\"; remove it, or set the mode to oauth",
        )),
        None => Ok(()),
    }
}

fn oauth(raw: RawAuth) -> Result<OAuthConfig, Invalid> {
    let issuer = raw.issuer.ok_or_else(|| {
        invalid(
            "http.auth.issuer",
            "is required in oauth mode: your identity provider's issuer URL, e.g. \"https://id.example.net/realms/main\"",
        )
    })?;
    web_url("http.auth.issuer", &issuer)?;
    let resource = raw.resource.ok_or_else(|| {
        invalid(
            "http.auth.resource",
            "is required in oauth mode: the public https URL of /mcp as clients reach it through your proxy, e.g. \"https://mcp.example.net/mcp\"",
        )
    })?;
    let resource = web_url("http.auth.resource", &resource)?;
    if resource.query().is_some() {
        return Err(invalid(
            "http.auth.resource",
            "must not have a query: it is the URL clients connect to",
        ));
    }
    let audience = match raw.audience {
        None => vec![resource.to_string()],
        Some(list) if list.is_empty() => {
            return Err(invalid(
                "http.auth.audience",
                "is empty, so every token would be refused: leave it out (the resource) or list the aud values your IdP puts in tokens for this server",
            ));
        }
        Some(list) => {
            for (i, aud) in list.iter().enumerate() {
                if aud.trim().is_empty() || aud.chars().any(char::is_control) {
                    return Err(invalid(
                        format!("http.auth.audience[{i}]"),
                        "must be a non-empty aud value",
                    ));
                }
            }
            list
        }
    };
    let scopes = raw.scopes.unwrap_or(RawScopes {
        read: None,
        send: None,
    });
    let read_scope = scope("http.auth.scopes.read", scopes.read, "herdr.read")?;
    let send_scope = scope("http.auth.scopes.send", scopes.send, "herdr.send")?;
    if read_scope == send_scope {
        return Err(invalid(
            "http.auth.scopes",
            "read and send must be different scopes, or every reader could send",
        ));
    }
    let jwks_uri = raw
        .jwks_uri
        .map(|u| web_url("http.auth.jwksUri", &u))
        .transpose()?;
    let algorithms = algorithms(raw.algorithms)?;
    let skew = raw.clock_skew_s.unwrap_or(DEFAULT_SKEW_S);
    super::numbers::in_range(&super::numbers::CLOCK_SKEW_S, skew)?;
    let introspection = raw.introspection.map(introspection).transpose()?;
    Ok(OAuthConfig {
        issuer,
        resource,
        audience,
        read_scope,
        send_scope,
        jwks_uri,
        algorithms,
        clock_skew: Duration::from_secs(skew),
        introspection,
    })
}

/// An https URL, or http to a loopback host (tests, or an IdP on this
/// machine): tokens and keys never travel in clear text over a network.
fn web_url(key: &str, text: &str) -> Result<Url, Invalid> {
    let url =
        Url::parse(text).map_err(|e| invalid(key, format!("is not a URL ({e}): {text:?}")))?;
    if url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
        return Err(invalid(key, "must not carry a fragment or credentials"));
    }
    match url.scheme() {
        "https" => Ok(url),
        "http" if is_loopback(&url) => Ok(url),
        "http" => Err(invalid(
            key,
            format!(
                "must be https (http is accepted only for a loopback host such as 127.0.0.1), got {text:?}"
            ),
        )),
        other => Err(invalid(
            key,
            format!("must be an https URL, got scheme {other:?}"),
        )),
    }
}

/// Whether `url` names this machine: `localhost`, 127.0.0.0/8 or ::1.
pub(crate) fn is_loopback(url: &Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

fn scope(key: &str, value: Option<String>, default: &str) -> Result<String, Invalid> {
    let value = value.unwrap_or_else(|| default.to_owned());
    // RFC 6749 section 3.3: printable ASCII except space, `"` and `\`.
    let shaped = !value.is_empty()
        && value
            .bytes()
            .all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\');
    if !shaped {
        return Err(invalid(
            key,
            format!("must be one scope name (printable ASCII, no spaces or quotes), got {value:?}"),
        ));
    }
    Ok(value)
}

fn algorithms(raw: Option<Vec<String>>) -> Result<Vec<String>, Invalid> {
    let Some(list) = raw else {
        return Ok(DEFAULT_ALGORITHMS.iter().map(|a| (*a).to_owned()).collect());
    };
    if list.is_empty() {
        return Err(invalid(
            "http.auth.algorithms",
            "is empty, so every token would be refused: leave it out for RS256, PS256, ES256 and EdDSA",
        ));
    }
    for (i, alg) in list.iter().enumerate() {
        if alg.len() >= 2 && alg[..2].eq_ignore_ascii_case("HS") {
            return Err(invalid(
                format!("http.auth.algorithms[{i}]"),
                format!(
                    "{alg:?} is never accepted: HMAC needs a shared secret, and whoever holds it can mint tokens; use the IdP's asymmetric keys (RS256, PS256, ES256, EdDSA)"
                ),
            ));
        }
        if !ALGORITHMS.contains(&alg.as_str()) {
            return Err(invalid(
                format!("http.auth.algorithms[{i}]"),
                format!("{alg:?} is not one of {}", ALGORITHMS.join(", ")),
            ));
        }
    }
    Ok(list)
}

fn introspection(raw: RawIntrospection) -> Result<Introspection, Invalid> {
    let endpoint = web_url("http.auth.introspection.endpoint", &raw.endpoint)?;
    for (key, name) in [
        ("clientIdEnv", &raw.client_id_env),
        ("clientSecretEnv", &raw.client_secret_env),
    ] {
        let shaped = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !shaped {
            return Err(invalid(
                format!("http.auth.introspection.{key}"),
                format!(
                    "must name an environment variable (letters, digits, _), got {name:?}; the secret itself never goes in the file"
                ),
            ));
        }
    }
    Ok(Introspection {
        endpoint,
        client_id_env: raw.client_id_env,
        client_secret_env: raw.client_secret_env,
    })
}

#[cfg(test)]
mod tests {
    //! `http.auth` validation, one case per rule.

    use super::*;

    fn raw(json: serde_json::Value) -> Option<RawAuth> {
        Some(serde_json::from_value(json).unwrap())
    }

    fn oauth_with(extra: serde_json::Value) -> Result<HttpAuth, Invalid> {
        let mut base = serde_json::json!({
            "mode": "oauth",
            "issuer": "https://id.example.net/realms/main",
            "resource": "https://MCP.Example.NET:443/mcp",
        });
        base.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        validate(raw(base))
    }

    #[test]
    fn token_is_the_default_and_takes_no_oauth_key() {
        assert_eq!(validate(None).unwrap(), HttpAuth::Token);
        assert_eq!(
            validate(raw(serde_json::json!({"mode": "token"}))).unwrap(),
            HttpAuth::Token
        );
        let e = validate(raw(
            serde_json::json!({"mode": "token", "issuer": "https://a"}),
        ))
        .unwrap_err();
        assert_eq!(e.key, "http.auth.issuer");
    }

    #[test]
    fn the_resource_is_compared_in_canonical_form_and_defaults_fill_in() {
        let HttpAuth::OAuth(c) = oauth_with(serde_json::json!({})).unwrap() else {
            panic!("oauth")
        };
        assert_eq!(c.resource().as_str(), "https://mcp.example.net/mcp");
        assert_eq!(c.audience(), ["https://mcp.example.net/mcp"]);
        assert_eq!(
            (c.read_scope(), c.send_scope()),
            ("herdr.read", "herdr.send")
        );
        assert_eq!(c.algorithms(), ["RS256", "PS256", "ES256", "EdDSA"]);
        assert_eq!(c.clock_skew(), Duration::from_secs(60));
        assert_eq!(
            c.metadata_url(),
            "https://mcp.example.net/.well-known/oauth-protected-resource/mcp"
        );
    }

    #[test]
    fn clear_text_urls_are_refused_unless_loopback() {
        let e = oauth_with(serde_json::json!({"issuer": "http://id.example.net"})).unwrap_err();
        assert_eq!(e.key, "http.auth.issuer");
        assert!(e.problem.contains("must be https"), "{}", e.problem);
        let e =
            oauth_with(serde_json::json!({"resource": "http://mcp.example.net/mcp"})).unwrap_err();
        assert_eq!(e.key, "http.auth.resource");
        assert!(
            oauth_with(serde_json::json!({
                "issuer": "http://127.0.0.1:9000",
                "resource": "http://localhost:8765/mcp"
            }))
            .is_ok()
        );
    }

    #[test]
    fn hmac_and_unknown_algorithms_are_refused() {
        for (alg, says) in [
            ("HS256", "never accepted"),
            ("none", "is not one of"),
            ("rs256", "is not one of"),
        ] {
            let e = oauth_with(serde_json::json!({"algorithms": ["RS256", alg]})).unwrap_err();
            assert_eq!(e.key, "http.auth.algorithms[1]");
            assert!(e.problem.contains(says), "{alg}: {}", e.problem);
        }
    }

    #[test]
    fn scopes_skew_and_introspection_are_checked() {
        let e = oauth_with(serde_json::json!({"scopes": {"read": "a", "send": "a"}})).unwrap_err();
        assert_eq!(e.key, "http.auth.scopes");
        let e = oauth_with(serde_json::json!({"scopes": {"send": "two words"}})).unwrap_err();
        assert_eq!(e.key, "http.auth.scopes.send");
        let e = oauth_with(serde_json::json!({"clockSkewS": 301})).unwrap_err();
        assert_eq!(e.key, "http.auth.clockSkewS");
        let e = oauth_with(serde_json::json!({"introspection": {
            "endpoint": "https://id.example.net/introspect",
            "clientIdEnv": "ID", "clientSecretEnv": "s3cr3t value"
        }}))
        .unwrap_err();
        assert_eq!(e.key, "http.auth.introspection.clientSecretEnv");
        let e = validate(raw(
            serde_json::json!({"mode": "oauth", "resource": "https://a/mcp"}),
        ))
        .unwrap_err();
        assert_eq!(e.key, "http.auth.issuer");
    }
}
