//! Opaque tokens under attack, against the real authorization server:
//! introspection answers judged strictly, a slow introspection endpoint
//! and a crowd of made-up tokens unable to lock authorised clients out,
//! each made-up token costing the IdP at most one bounded round trip, and
//! a read token's refused send audited like any send attempt.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use reqwest::StatusCode;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::idp::{INTROSPECT_ENV, Idp, IdpOptions};
use crate::support::mcp::{self, READ_TEST_TOKEN};
use crate::support::oauth::{
    RESOURCE, approved_sim, bind, initialize, oauth_config, post, send_call,
};

/// How slow the introspection endpoint is made (as the review measured).
const SLOW_IDP_MS: u64 = 2_500;
/// Connections in the flood, each with a made-up opaque token.
const FLOOD: usize = 1_100;

/// An IdP issuing JWTs for [`RESOURCE`] and opaque tokens for another
/// resource, and an adapter process trusting it, with introspection.
async fn world(dir: &std::path::Path) -> (crate::support::Sim, Idp, mcp::HttpAdapter) {
    let (sim, approvals) = approved_sim(1).await;
    let idp = Idp::start(
        &bind(),
        dir,
        &IdpOptions {
            resource: RESOURCE.to_owned(),
            opaque_resource: Some("https://opaque.example.net/mcp".to_owned()),
            ..IdpOptions::default()
        },
    )
    .await;
    let auth = idp.introspecting_auth(RESOURCE);
    let log = dir.join("adapter.stderr");
    let mut adapter = mcp::http_env(
        |port| oauth_config(&sim, &approvals, port, auth.clone()),
        &log,
        &INTROSPECT_ENV,
    )
    .await;
    adapter.ready().await;
    (sim, idp, adapter)
}

/// How many introspection requests the IdP has received.
async fn introspections(idp: &Idp) -> u64 {
    let state: serde_json::Value = reqwest::Client::new()
        .post(format!("{}/__control", idp.issuer))
        .json(&json!({}))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    state["requests"]["/token/introspection"]
        .as_u64()
        .unwrap_or(0)
}

#[tokio::test]
async fn a_slow_introspection_flood_from_one_address_cannot_lock_out_clients_with_a_jwt() {
    flood_beside_jwt_clients(1).await;
}

#[tokio::test]
async fn a_slow_introspection_flood_from_many_addresses_cannot_lock_out_clients_with_a_jwt() {
    // Four connections per loopback address: no per-peer bound applies, so
    // the bound on introspections at once and the slots hold alone.
    flood_beside_jwt_clients(FLOOD / 4).await;
}

/// [`FLOOD`] connections with made-up opaque tokens from `peers` loopback
/// addresses while the IdP answers in [`SLOW_IDP_MS`], then five clients
/// with a valid JWT, each on a fresh connection: all five are served.
async fn flood_beside_jwt_clients(peers: usize) {
    rlimit::increase_nofile_limit(16 * 1024).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let (_sim, idp, adapter) = world(dir.path()).await;
    let url = adapter.url();
    let mut jwts = Vec::new();
    for _ in 0..5 {
        jwts.push(idp.token(RESOURCE, "herdr.read").await);
    }
    // The adapter knows the IdP's keys: a JWT is accepted.
    crate::support::oauth::accepted(&url, &jwts[0]).await;
    idp.set_delay(SLOW_IDP_MS).await;

    // The crowd: each connection sends its request with a made-up opaque
    // token; a task per connection notes when it is answered or closed.
    let body = initialize().to_string();
    let answered = Arc::new(AtomicU64::new(0));
    let mut crowd = Vec::with_capacity(FLOOD);
    for i in 0..FLOOD {
        let peer = std::net::Ipv4Addr::new(
            127,
            0,
            1 + (i % peers / 250) as u8,
            1 + (i % peers % 250) as u8,
        );
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind((peer, 0).into()).unwrap();
        let Ok(mut stream) = socket.connect(([127, 0, 0, 1], adapter.port).into()).await else {
            answered.fetch_add(1, Ordering::SeqCst);
            continue;
        };
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nAuthorization: Bearer made-up-opaque-token-{i}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{body}",
            adapter.port,
            body.len()
        );
        if stream.write_all(request.as_bytes()).await.is_err() {
            answered.fetch_add(1, Ordering::SeqCst);
            continue;
        }
        let answered = Arc::clone(&answered);
        crowd.push(tokio::spawn(async move {
            let mut byte = [0u8; 1];
            let _ = stream.read(&mut byte).await;
            answered.fetch_add(1, Ordering::SeqCst);
            // Held open, as a crowd that does not let go would.
            std::future::pending::<()>().await;
            drop(stream);
        }));
    }
    // The adapter has taken in the whole crowd once each connection has
    // been answered (or closed), or has made the IdP introspect its token.
    crate::support::eventually("the crowd to be taken in", async || {
        let asked = introspections(&idp).await;
        (answered.load(Ordering::SeqCst) + asked >= FLOOD as u64).then_some(())
    })
    .await;
    let mut served = 0;
    let mut worst = Duration::ZERO;
    for jwt in &jwts {
        // A client of its own: a fresh connection, as a newcomer makes.
        let client = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let started = Instant::now();
        let answered = client
            .post(&url)
            .bearer_auth(jwt)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(initialize().to_string())
            .send()
            .await;
        worst = worst.max(started.elapsed());
        if answered.is_ok_and(|r| r.status() == StatusCode::OK) {
            served += 1;
        }
    }
    eprintln!(
        "introspection flood: {FLOOD} made-up opaque tokens from {peers} address(es) ({} connected), IdP {SLOW_IDP_MS} ms: {served} of 5 JWT clients served, worst {worst:?}",
        crowd.len()
    );
    assert_eq!(served, 5, "authorised clients were locked out");
    idp.set_delay(0).await;
    for task in crowd {
        task.abort();
    }
}

#[tokio::test]
async fn made_up_opaque_tokens_cost_the_idp_a_bounded_number_of_introspections() {
    let dir = tempfile::tempdir().unwrap();
    let (_sim, idp, adapter) = world(dir.path()).await;
    let url = adapter.url();
    let before = introspections(&idp).await;
    let started = Instant::now();
    let mut statuses = Vec::new();
    for i in 0..40 {
        let token = format!("made-up-opaque-token-{i}");
        let (status, _, _) = post(&url, Some(&token), &initialize()).await;
        statuses.push(status);
    }
    let elapsed = started.elapsed();
    let asked = introspections(&idp).await - before;
    let limited = statuses
        .iter()
        .filter(|s| **s == StatusCode::TOO_MANY_REQUESTS)
        .count();
    eprintln!(
        "introspection amplification: 40 made-up opaque tokens caused {asked} introspection(s); {limited} answered 429"
    );
    // The burst, and what the rate refilled while the 40 were sent.
    let rate = herdr_core_mcp::PER_PEER_PER_SECOND as u64;
    let allowed = 2 * rate + (rate as f64 * elapsed.as_secs_f64()).ceil() as u64;
    assert!(
        asked <= allowed,
        "{asked} introspections for 40 made-up tokens in {elapsed:?} (at most {allowed})"
    );
    assert!(limited > 0, "{statuses:?}");
    assert!(
        statuses
            .iter()
            .all(|s| *s == StatusCode::UNAUTHORIZED || *s == StatusCode::TOO_MANY_REQUESTS),
        "{statuses:?}"
    );
    // The same refused token again is answered from the refusal cache.
    let again = introspections(&idp).await;
    tokio::time::sleep(Duration::from_secs(1)).await; // let the rate limit refill
    for _ in 0..5 {
        let (status, _, _) = post(&url, Some("made-up-opaque-token-0"), &initialize()).await;
        assert_eq!(status, StatusCode::UNAUTHORIZED);
    }
    assert_eq!(
        introspections(&idp).await,
        again,
        "a refused token was asked about again"
    );
}

#[tokio::test]
async fn a_read_token_send_refused_by_the_transport_leaves_an_audit_line() {
    let (sim, approvals) = approved_sim(1).await;
    let audit_log = sim.dir.path().join("audit.log");
    let adapter = crate::support::in_process::http(|port| {
        let mut config = approvals.clone();
        crate::support::merge(
            &mut config,
            json!({"transport": "http", "http": {"port": port}, "auditLog": audit_log}),
        );
        sim.config(config)
    })
    .await;
    let (status, challenge, _) = post(
        &adapter.url(),
        Some(READ_TEST_TOKEN),
        &send_call("t1", "a secret prompt"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    let written = std::fs::read_to_string(&audit_log).unwrap();
    let lines: Vec<serde_json::Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 1, "{written}");
    let line = &lines[0];
    assert_eq!(line["outcome"], "not_sent", "{line}");
    assert_eq!(line["reason"], "insufficient_scope", "{line}");
    assert_eq!(line["address"], "t1", "{line}");
    assert_eq!(line["caller"]["kind"], "read-token", "{line}");
    assert!(!written.contains("a secret prompt"), "{written}");
    assert_eq!(sim.writes_to("t1"), 0);
    // An address no terminal can have is recorded by its length and
    // digest only.
    let huge = "t".repeat(60_000);
    let (status, _, _) = post(
        &adapter.url(),
        Some(READ_TEST_TOKEN),
        &send_call(&huge, "x"),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let written = std::fs::read_to_string(&audit_log).unwrap();
    let last = written.lines().last().unwrap();
    assert!(
        last.contains(r#""address":null,"address_chars":60000,"address_sha256":""#),
        "{last:.300}"
    );
    assert!(last.len() < 1_000, "a {}-byte audit line", last.len());
}
