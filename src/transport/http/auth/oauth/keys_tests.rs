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
