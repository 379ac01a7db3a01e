//! `Gate::check` in token mode, one row per rule: the bearer header
//! (scheme case, empty, other schemes, duplicates), `Host` (listed,
//! duplicated, or contradicted by the request line), `Origin` (absent,
//! listed, unlisted, duplicated), and which caller each token proves.

use std::path::Path;

use http::header::WWW_AUTHENTICATE;

use super::*;
use crate::config::{Config, RawConfig, Transport};
use crate::transport::http::auth::tokens::BearerToken;

const FULL: &str = "q3Zk9VbX1mR7tY2uW8pL4nC6sD0fG5hJ";
const READ: &str = "Hn4Tw8Qz2Lr6Vk0Xp3Mb7Yc1Fd5Gs9Ja";
const HOST_OK: &str = "127.0.0.1:8765";
const ORIGIN_OK: &str = "https://app.example.net";

fn gate() -> Gate {
    let text = format!(
        r#"{{"socketPath": "/run/hc.sock", "transport": "http",
            "http": {{"port": 8765, "allowedHosts": ["{HOST_OK}", "localhost:8765"],
                      "allowedOrigins": ["{ORIGIN_OK}"]}}}}"#
    );
    let path = Path::new("/test/config.json");
    let config = Config::validate(path, RawConfig::parse(path, &text).unwrap()).unwrap();
    let Transport::Http(http) = config.transport() else {
        panic!("expected http")
    };
    let auth = Authenticator::Tokens {
        full: BearerToken::new(FULL).unwrap(),
        read: Some(BearerToken::new(READ).unwrap()),
    };
    Gate::new(http, auth)
}

/// What the gate made of a POST to `uri` with `headers`: the caller's
/// kind, or the refusal's status, `WWW-Authenticate` header and (for a 401)
/// what its body tells the client.
async fn check(uri: &str, headers: &[(HeaderName, &str)]) -> String {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        map.append(name.clone(), HeaderValue::from_str(value).unwrap());
    }
    let uri: Uri = uri.parse().unwrap();
    match gate().check(&Method::POST, &uri, &map, None, None).await {
        Ok(caller) => {
            let who = serde_json::to_value(caller.who()).unwrap();
            format!(
                "{} may_send={}",
                who["kind"].as_str().unwrap(),
                caller.may_send()
            )
        }
        Err(response) => {
            let status = response.status().as_u16();
            let challenge = response.headers().get(WWW_AUTHENTICATE);
            let challenge = challenge.map_or("-", |v| v.to_str().unwrap()).to_owned();
            let body = axum::body::to_bytes(response.into_body(), 4096).await;
            let body = String::from_utf8(body.unwrap().to_vec()).unwrap();
            // What the client is told: send a token, or this one is refused.
            let told = match body {
                b if b.starts_with("Unauthorized: send the header") => " (no token)",
                b if b.starts_with("Unauthorized: the bearer token was refused") => " (refused)",
                _ => "",
            };
            format!("{status} {challenge}{told}")
        }
    }
}

/// A request with the allowed Host and `more` headers.
async fn with_host(more: &[(HeaderName, &str)]) -> String {
    let mut headers = vec![(HOST, HOST_OK)];
    headers.extend_from_slice(more);
    check("/mcp", &headers).await
}

const FULL_CALLER: &str = "token may_send=true";
const NO_TOKEN: &str = "401 Bearer (no token)";
const REFUSED: &str = "401 Bearer (refused)";

#[tokio::test]
async fn the_bearer_scheme_is_case_insensitive_and_the_token_exact() {
    let full = |scheme: &str| format!("{scheme} {FULL}");
    let rows: [(&str, String, &str); 11] = [
        ("Bearer", full("Bearer"), FULL_CALLER),
        ("bearer", full("bearer"), FULL_CALLER),
        ("BEARER", full("BEARER"), FULL_CALLER),
        ("bEaReR", full("bEaReR"), FULL_CALLER),
        ("empty token", "Bearer ".into(), NO_TOKEN),
        ("scheme only", "Bearer".into(), NO_TOKEN),
        ("Basic", format!("Basic {FULL}"), NO_TOKEN),
        ("no space", format!("Bearer{FULL}"), NO_TOKEN),
        ("two spaces", format!("Bearer  {FULL}"), REFUSED),
        ("a wrong token", format!("Bearer {FULL}x"), REFUSED),
        ("empty header", String::new(), NO_TOKEN),
    ];
    for (what, value, expected) in rows {
        assert_eq!(
            with_host(&[(AUTHORIZATION, &value)]).await,
            expected,
            "{what}"
        );
    }
    assert_eq!(with_host(&[]).await, NO_TOKEN, "no Authorization");
}

#[tokio::test]
async fn two_authorization_headers_are_refused_even_if_both_are_valid() {
    let full = format!("Bearer {FULL}");
    let read = format!("Bearer {READ}");
    for (first, second) in [(&full, &full), (&full, &read), (&read, &full)] {
        let got = with_host(&[(AUTHORIZATION, first), (AUTHORIZATION, second)]).await;
        assert_eq!(got, NO_TOKEN, "{first} / {second}");
    }
}

#[tokio::test]
async fn the_read_token_proves_a_reader_and_the_full_one_a_sender() {
    let bearer = |token: &str| format!("Bearer {token}");
    assert_eq!(
        with_host(&[(AUTHORIZATION, &bearer(FULL))]).await,
        FULL_CALLER
    );
    assert_eq!(
        with_host(&[(AUTHORIZATION, &bearer(READ))]).await,
        "read-token may_send=false"
    );
}

#[tokio::test]
async fn host_must_be_one_listed_value_agreeing_with_the_request_line() {
    let auth = format!("Bearer {FULL}");
    let rows: [(&str, &str, Vec<&str>, &str); 8] = [
        ("listed", "/mcp", vec![HOST_OK], FULL_CALLER),
        (
            "the other listed",
            "/mcp",
            vec!["localhost:8765"],
            FULL_CALLER,
        ),
        ("unlisted", "/mcp", vec!["evil.example:8765"], "403 -"),
        ("another port", "/mcp", vec!["127.0.0.1:8766"], "403 -"),
        ("absent", "/mcp", vec![], "403 -"),
        ("two Hosts", "/mcp", vec![HOST_OK, HOST_OK], "403 -"),
        (
            "request line agrees",
            "http://127.0.0.1:8765/mcp",
            vec![HOST_OK],
            FULL_CALLER,
        ),
        (
            "request line names another authority",
            "http://localhost:8765/mcp",
            vec![HOST_OK],
            "403 -",
        ),
    ];
    for (what, uri, hosts, expected) in rows {
        let mut headers: Vec<_> = hosts.into_iter().map(|h| (HOST, h)).collect();
        headers.push((AUTHORIZATION, &auth));
        assert_eq!(check(uri, &headers).await, expected, "{what}");
    }
    // Host is judged before the token: a bad Host without one is 403.
    assert_eq!(check("/mcp", &[(HOST, "evil.example")]).await, "403 -");
}

#[tokio::test]
async fn origin_may_be_absent_or_one_listed_value() {
    let auth = format!("Bearer {FULL}");
    let rows: [(&str, Vec<&str>, &str); 6] = [
        ("absent", vec![], FULL_CALLER),
        ("listed", vec![ORIGIN_OK], FULL_CALLER),
        ("unlisted", vec!["https://evil.example"], "403 -"),
        (
            "listed, other scheme",
            vec!["http://app.example.net"],
            "403 -",
        ),
        ("two, both listed", vec![ORIGIN_OK, ORIGIN_OK], "403 -"),
        ("null", vec!["null"], "403 -"),
    ];
    for (what, origins, expected) in rows {
        let mut headers = vec![(AUTHORIZATION, auth.as_str())];
        headers.extend(origins.into_iter().map(|o| (ORIGIN, o)));
        assert_eq!(with_host(&headers).await, expected, "{what}");
    }
}
