//! The binary checks token signatures with ring (src/.../signatures.rs),
//! whatever else a test build links: a spawned adapter accepts a token of
//! each key the IdP publishes (RS256 issued by the IdP, ES256 signed here
//! with its EC key; each key names its `alg`, so PS256 is not one of
//! them: the unit tests check the rest), and refuses each with one byte of
//! its signature changed.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::idp::{Idp, IdpOptions, now_s};
use crate::support::oauth::{
    RESOURCE, accepted, approved_sim, bind, idp_for, initialize, post, spawned_trusting,
};

/// `token` with one byte in the middle of its signature changed (in the
/// base64url text: a letter for another letter keeps it decodable).
fn with_changed_signature(token: &str) -> String {
    let cut = token.rfind('.').expect("a JWS") + 1;
    let mut bytes = token.as_bytes().to_vec();
    let middle = cut + (bytes.len() - cut) / 2;
    bytes[middle] = if bytes[middle] == b'A' { b'B' } else { b'A' };
    String::from_utf8(bytes).unwrap()
}

/// A read-scoped access token for [`RESOURCE`] from `idp`'s issuer, signed
/// here with `key` under `kid`.
fn signed(
    idp: &Idp,
    algorithm: jsonwebtoken::Algorithm,
    kid: &str,
    key: &jsonwebtoken::EncodingKey,
) -> String {
    let header = jsonwebtoken::Header {
        kid: Some(kid.to_owned()),
        typ: Some("at+jwt".to_owned()),
        ..jsonwebtoken::Header::new(algorithm)
    };
    let claims = json!({"iss": idp.issuer, "aud": RESOURCE, "sub": "signed-here",
                        "scope": "herdr.read", "iat": now_s(), "exp": now_s() + 600});
    jsonwebtoken::encode(&header, &claims, key).unwrap()
}

#[tokio::test]
async fn the_binary_verifies_rs256_and_es256_and_refuses_a_changed_signature() {
    let (sim, approvals) = approved_sim(1).await;
    let idp = idp_for(sim.dir.path()).await;
    let log = sim.dir.path().join("adapter.stderr");
    let adapter = spawned_trusting(&sim, &approvals, &idp, &log).await;
    let url = adapter.url();
    let issued = idp.token(RESOURCE, "herdr.read").await;
    accepted(&url, &issued).await;

    let ec = idp.key("ES256");
    let es256 = signed(
        &idp,
        jsonwebtoken::Algorithm::ES256,
        ec["kid"].as_str().unwrap(),
        &jsonwebtoken::EncodingKey::from_ec_pem(ec["private_pem"].as_str().unwrap().as_bytes())
            .unwrap(),
    );
    for (what, token) in [("RS256 from the IdP", issued), ("ES256", es256)] {
        let (status, _, body) = post(&url, Some(&token), &initialize()).await;
        assert_eq!(status, StatusCode::OK, "{what}: {body}");
        let forged = with_changed_signature(&token);
        let (status, challenge, body) = post(&url, Some(&forged), &initialize()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what} changed: {body}");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(
            body.contains("signature"),
            "{what}: the body says why: {body}"
        );
    }
}

/// A 1,024-bit RSA key in the IdP's set is refused by ring (RustCrypto,
/// which the test build also links, would take it): the token signed with
/// it gets 401, one signed with the 2,048-bit key of the same set is
/// accepted. The keys are the unit tests' own.
#[tokio::test]
async fn a_token_signed_with_a_1024_bit_rsa_key_is_refused() {
    let (sim, approvals) = approved_sim(1).await;
    let long = include_str!("../../src/transport/http/auth/oauth/testdata/rsa-2048.pem");
    let short = include_str!("../../src/transport/http/auth/oauth/testdata/rsa-1024.pem");
    let keys = sim.dir.path().join("idp-keys.json");
    std::fs::write(
        &keys,
        json!({"keys": [
            {"kid": "rs256-long", "alg": "RS256", "private_pem": long},
            {"kid": "rs256-short", "alg": "RS256", "private_pem": short},
        ]})
        .to_string(),
    )
    .unwrap();
    let idp = Idp::start(
        &bind(),
        sim.dir.path(),
        &IdpOptions {
            resource: RESOURCE.to_owned(),
            keys_in: Some(keys),
            ..IdpOptions::default()
        },
    )
    .await;
    let log = sim.dir.path().join("adapter.stderr");
    let adapter = spawned_trusting(&sim, &approvals, &idp, &log).await;
    let url = adapter.url();
    let signed_with = |kid: &str, pem: &str| {
        let key = jsonwebtoken::EncodingKey::from_rsa_pem(pem.as_bytes()).unwrap();
        signed(&idp, jsonwebtoken::Algorithm::RS256, kid, &key)
    };
    accepted(&url, &signed_with("rs256-long", long)).await;
    let (status, _, body) = post(
        &url,
        Some(&signed_with("rs256-short", short)),
        &initialize(),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("does not match its key"), "{body}");
}
