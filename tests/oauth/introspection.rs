//! Opaque access tokens, checked by RFC 7662 introspection at the real
//! authorization server, with the resource server's own credentials read
//! from the environment variables the config names.

use reqwest::StatusCode;

use crate::support::idp::{Idp, IdpOptions, TEST_CLIENT};
use crate::support::oauth::{RESOURCE, approved_sim, bind, oauth_config, post, send_call};
use crate::support::{mcp, run_adapter};

#[tokio::test]
async fn opaque_tokens_are_introspected_and_judged_like_jwts() {
    let (sim, approvals) = approved_sim(1).await;
    let idp = Idp::start(
        &bind(),
        sim.dir.path(),
        &IdpOptions {
            resource: "https://jwt.example.net/mcp".to_owned(),
            opaque_resource: Some(RESOURCE.to_owned()),
            ..IdpOptions::default()
        },
    )
    .await;
    let auth = idp.introspecting_auth(RESOURCE);
    // Without its credentials in the environment, serve refuses to start.
    let config = oauth_config(&sim, &approvals, 1, auth.clone());
    let (code, _, stderr) = run_adapter(&["serve", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert!(
        stderr.contains("HERDR_TEST_INTROSPECT_ID, which is not set"),
        "{stderr}"
    );

    let log = sim.dir.path().join("adapter.stderr");
    let mut adapter = mcp::http_env(
        |port| oauth_config(&sim, &approvals, port, auth.clone()),
        &log,
        &crate::support::idp::INTROSPECT_ENV,
    )
    .await;
    adapter.ready().await;
    let reader = idp.token(RESOURCE, "herdr.read").await;
    assert_eq!(reader.matches('.').count(), 0, "an opaque token: {reader}");
    let (status, challenge, body) =
        post(&adapter.url(), Some(&reader), &send_call("t1", "x")).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(
        challenge.contains(r#"error="insufficient_scope""#),
        "{challenge}"
    );
    let sender = idp.token(RESOURCE, "herdr.read herdr.send").await;
    let (status, _, body) = post(&adapter.url(), Some(&sender), &send_call("t1", "opaque")).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(sim.writes_to("t1"), 1);
    let (status, _, body) = post(
        &adapter.url(),
        Some("made-up-opaque-token"),
        &send_call("t1", "x"),
    )
    .await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("not active"), "{body}");
    // An opaque token for another resource is inactive or names another aud.
    let jwt = idp
        .token("https://jwt.example.net/mcp", "herdr.read herdr.send")
        .await;
    let (status, _, body) = post(&adapter.url(), Some(&jwt), &send_call("t1", "x")).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(sim.writes_to("t1"), 1);
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains(&sender) && !text.contains(TEST_CLIENT.1),
        "a secret reached the log"
    );
}
