//! An IdP that is down at start, killed mid-run, slow, and back: serve
//! keeps answering, known keys keep working, and it recovers by itself.

use reqwest::StatusCode;
use serde_json::json;

use crate::support::idp::{Idp, IdpOptions};
use crate::support::in_process;
use crate::support::oauth::{RESOURCE, accepted, approved_sim, initialize, oauth_config, post};

/// A loopback socket bound but not listening: connections to its port are
/// refused, as to an IdP that is down, until it is handed to one.
fn reserved_port() -> socket2::Socket {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.set_reuse_address(true).unwrap();
    socket
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], 0)).into())
        .unwrap();
    socket
}

fn listening(socket: socket2::Socket) -> std::net::TcpListener {
    socket.listen(128).unwrap();
    socket.into()
}

#[tokio::test]
async fn an_idp_down_at_start_killed_slow_and_back_never_stops_serve() {
    let (sim, approvals) = approved_sim(1).await;
    let socket = reserved_port();
    let idp_port = socket.local_addr().unwrap().as_socket().unwrap().port();
    let issuer = format!("http://127.0.0.1:{idp_port}");
    let auth = json!({"mode": "oauth", "issuer": issuer, "resource": RESOURCE});
    let adapter = in_process::http(|port| oauth_config(&sim, &approvals, port, auth.clone())).await;
    let url = adapter.url();

    // Down at start: every token is refused, and the answer says why.
    let (status, _, body) = post(&url, Some("a.b.c"), &initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");

    // Up: the adapter learns the keys by itself.
    let idp = Idp::start(
        &listening(socket),
        sim.dir.path(),
        &IdpOptions {
            resource: RESOURCE.to_owned(),
            ..IdpOptions::default()
        },
    )
    .await;
    assert_eq!(idp.issuer, issuer);
    let used = idp.token(RESOURCE, "herdr.read").await;
    let fresh = idp.token(RESOURCE, "herdr.read herdr.send").await;
    accepted(&url, &used).await;
    let keys = idp.keys_file.clone();

    // Killed: a token seen before and one never seen both still pass,
    // on the keys already known.
    idp.kill().await;
    let (status, _, body) = post(&url, Some(&used), &initialize()).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, _, body) = post(&url, Some(&fresh), &initialize()).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // A second adapter starts while the IdP is back but slow (5 s, over
    // the 3 s fetch timeout): it answers at once, refusing, until the IdP
    // is fast again; then it recovers without a restart.
    let again = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    again.set_reuse_address(true).unwrap();
    again
        .bind(&std::net::SocketAddr::from(([127, 0, 0, 1], idp_port)).into())
        .expect("rebind the IdP's port after it was killed");
    let slow = Idp::start(
        &listening(again),
        sim.dir.path(),
        &IdpOptions {
            resource: RESOURCE.to_owned(),
            delay_ms: 5_000,
            keys_in: Some(keys),
            ..IdpOptions::default()
        },
    )
    .await;
    let second = in_process::http(|port| oauth_config(&sim, &approvals, port, auth.clone())).await;
    let started = std::time::Instant::now();
    let (status, _, body) = post(&second.url(), Some(&fresh), &initialize()).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert!(body.contains("keys are not known yet"), "{body}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(3),
        "a slow IdP does not hold the answer ({:?})",
        started.elapsed()
    );
    // Meanwhile the first adapter is untouched.
    let (status, _, _) = post(&url, Some(&used), &initialize()).await;
    assert_eq!(status, StatusCode::OK);
    slow.set_delay(0).await;
    accepted(&second.url(), &fresh).await;
    drop(slow);
}
