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
    let e = oauth_with(serde_json::json!({"resource": "http://mcp.example.net/mcp"})).unwrap_err();
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
