//! Startup over HTTP fails closed on a missing or weak token: exit 2, one
//! line on stderr naming the problem, never the token itself.

use serde_json::json;

use crate::support::mcp::TEST_TOKEN;
use crate::support::{run_adapter, write_config};

#[test]
fn http_startup_fails_closed_on_a_weak_token() {
    let dir = tempfile::tempdir().unwrap();
    // Held by the test: an adapter that got as far as binding would fail
    // with "cannot listen" (exit 1), not with the token's exit 2.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let config = write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("hc.sock"), "transport": "http", "http": {"port": port}}),
    );
    let config = config.to_str().unwrap();
    let thirty_one = &TEST_TOKEN[..31];
    let changeme = "changeme-Zq8vN2xR5tB7wK1mP4sD9fH3jL";
    let low_entropy = "abcdefghijk".repeat(3);
    let cases: [(&str, Option<&str>, &str); 4] = [
        ("missing", None, "is not set"),
        ("31 bytes", Some(thirty_one), "31 bytes"),
        ("changeme", Some(changeme), "placeholder"),
        ("11 distinct characters", Some(&low_entropy), "not random"),
    ];
    for (what, token, says) in cases {
        let env: Vec<(&str, &str)> = token.map(|t| ("HERDR_MCP_TOKEN", t)).into_iter().collect();
        let (code, stdout, stderr) = run_adapter(&["serve", "--config", config], &env);
        assert_eq!(code, 2, "{what}: exit {code}, stderr {stderr:?}");
        assert_eq!(stdout, "", "{what}: stdout {stdout:?}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: not one line: {stderr:?}");
        assert!(
            lines[0].contains("HERDR_MCP_TOKEN") && lines[0].contains(says),
            "{what}: {stderr:?}"
        );
        if let Some(token) = token {
            assert!(!stderr.contains(token), "{what}: the token was printed");
        }
    }
}
