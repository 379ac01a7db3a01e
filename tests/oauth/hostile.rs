//! Hostile tokens: each answered 401, nothing sent, and the log says why
//! without ever holding the token; made-up kids cannot make the adapter
//! hammer the IdP.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::idp::{OTHER_RESOURCE, b64, now_s};
use crate::support::oauth::{
    RESOURCE, accepted, approved_sim, idp_for, post, send_call, spawned_trusting,
};

/// Log lines saying the adapter fetched the IdP's keys.
fn key_fetches(log: &str) -> usize {
    log.matches("fetched the issuer's signing keys").count()
}

#[tokio::test]
async fn hostile_tokens_are_refused_with_nothing_sent_and_only_the_reason_logged() {
    let (sim, approvals) = approved_sim(1).await;
    let idp = idp_for(sim.dir.path()).await;
    let log = sim.dir.path().join("adapter.stderr");
    let adapter = spawned_trusting(&sim, &approvals, &idp, &log).await;
    let url = adapter.url();
    let valid = idp.token(RESOURCE, "herdr.read herdr.send").await;
    accepted(&url, &valid).await;

    let rsa = idp.key("RS256");
    let kid = rsa["kid"].as_str().unwrap();
    let [header, payload, signature]: [&str; 3] =
        valid.split('.').collect::<Vec<_>>().try_into().unwrap();
    let mut claims: serde_json::Value = serde_json::from_slice(
        &base64::Engine::decode(&base64::engine::general_purpose::URL_SAFE_NO_PAD, payload)
            .unwrap(),
    )
    .unwrap();
    claims["client_id"] = json!("someone-else");
    let tampered = format!(
        "{header}.{}.{signature}",
        b64(claims.to_string().as_bytes())
    );
    let hs256 = jsonwebtoken::encode(
        &jsonwebtoken::Header {
            kid: Some(kid.to_owned()),
            ..jsonwebtoken::Header::new(jsonwebtoken::Algorithm::HS256)
        },
        &json!({"iss": idp.issuer, "aud": RESOURCE, "exp": now_s() + 600, "scope": "herdr.send"}),
        &jsonwebtoken::EncodingKey::from_secret(rsa["public_pem"].as_str().unwrap().as_bytes())
            .unwrap(),
    )
    .unwrap();
    let none = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "typ": "at+jwt", "kid": kid}).to_string().as_bytes()),
        b64(json!({"iss": idp.issuer, "aud": RESOURCE, "exp": now_s() + 600, "scope": "herdr.send"}).to_string().as_bytes())
    );
    let jwe = format!(
        "{}.{}.{}.{}.{}",
        b64(br#"{"alg":"RSA-OAEP-256","enc":"A256GCM","kid":"k"}"#),
        b64(b"key"),
        b64(b"iv"),
        b64(b"ciphertext"),
        b64(b"tag")
    );
    let cases: Vec<(&str, String, &str)> = vec![
        ("alg none", none, "header"),
        ("HS256 keyed with the public key", hs256, "algorithm"),
        (
            "wrong iss",
            idp.forge(
                RESOURCE,
                json!({}),
                json!({"iss": "http://127.0.0.1:9/evil"}),
            ),
            "iss",
        ),
        (
            "a token for another resource",
            idp.token(OTHER_RESOURCE, "herdr.read herdr.send").await,
            "aud",
        ),
        (
            "expired",
            idp.forge(
                RESOURCE,
                json!({}),
                json!({"iat": now_s() - 7200, "exp": now_s() - 3600}),
            ),
            "expired",
        ),
        (
            "nbf in the future",
            idp.forge(RESOURCE, json!({}), json!({"nbf": now_s() + 3600})),
            "not valid yet",
        ),
        (
            "iat in the future",
            idp.forge(RESOURCE, json!({}), json!({"iat": now_s() + 3600})),
            "issued in the future",
        ),
        (
            "unknown kid",
            idp.forge(RESOURCE, json!({"kid": "made-up"}), json!({})),
            "kid",
        ),
        (
            "typ not at+jwt",
            idp.forge(RESOURCE, json!({"typ": "JWT"}), json!({})),
            "typ",
        ),
        ("tampered payload", tampered, "signature"),
        ("a JWE", jwe, "not a JWS"),
        (
            "9 KiB",
            format!("{}.{}.{}", header, "A".repeat(9 * 1024), signature),
            "over 8 KiB",
        ),
    ];
    for (what, token, reason) in &cases {
        let (status, challenge, body) = post(&url, Some(token), &send_call("t1", "hostile")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED, "{what}: {body}");
        assert!(
            challenge.contains(r#"error="invalid_token""#),
            "{what}: {challenge}"
        );
        assert!(body.contains(reason), "{what}: the body says why: {body}");
    }
    // Only the Authorization header is read: a valid token elsewhere is no token.
    let response = reqwest::Client::new()
        .post(format!("{url}?access_token={valid}"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(send_call("t1", "via the query").to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    let response = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("access_token={valid}"))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(sim.writes_to("t1"), 0, "no hostile token sent anything");

    // A flood of made-up kids costs the IdP at most one key fetch.
    let before = key_fetches(&std::fs::read_to_string(&log).unwrap());
    // The kid is looked up before any signature is checked, so these need
    // none (signing a thousand in a debug build would take a minute).
    for i in 0..1000 {
        let head = json!({"alg": "RS256", "typ": "at+jwt", "kid": format!("random-{i}")});
        let token = format!("{}.{payload}.{signature}", b64(head.to_string().as_bytes()));
        let (status, _, _) = post(&url, Some(&token), &send_call("t1", "kid flood")).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    let text = std::fs::read_to_string(&log).unwrap();
    let fetched = key_fetches(&text) - before;
    println!("1,000 made-up kids: {fetched} key fetch(es)");
    assert!(
        fetched <= 1,
        "1,000 made-up kids fetched the keys {fetched} times"
    );
    assert_eq!(sim.writes_to("t1"), 0);
    // The log holds reasons, never a token or its signature.
    assert!(text.contains("bearer token refused"), "{text}");
    for (what, token, _) in &cases {
        let secret_part = token.rsplit('.').find(|p| p.len() > 8).unwrap_or(token);
        assert!(
            !text.contains(secret_part),
            "{what}: a token part reached the log"
        );
    }
    assert!(
        !text.contains(signature),
        "the valid token's signature reached the log"
    );
}
