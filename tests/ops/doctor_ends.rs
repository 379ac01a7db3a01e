//! `doctor` always ends. In oauth mode its key fetch logs a line, and the
//! logging thread used to keep stderr's lock from then on, so the failure
//! line that ends a failing doctor waited forever: any failing check in
//! oauth mode hung it, at the default log level.

use std::time::Duration;

use serde_json::json;

use crate::support::commands::{adapter, finished_within, stderr_of};
use crate::support::oauth::{RESOURCE, idp_for};
use crate::support::write_config;

#[tokio::test]
async fn doctor_in_oauth_mode_ends_after_each_failing_check() {
    let dir = tempfile::tempdir().unwrap();
    let idp = idp_for(dir.path()).await;
    let missing_socket = dir.path().join("no-such-hc.sock");
    let oauth = |resource: &str| {
        json!({"socketPath": missing_socket, "transport": "http", "http": {
            "port": 1, "allowedHosts": ["127.0.0.1:1", "mcp.example.net"],
            "auth": {"mode": "oauth", "issuer": idp.issuer, "resource": resource}}})
    };
    let cases = [
        ("a missing socket", oauth(RESOURCE)),
        (
            "a resource not in allowedHosts",
            oauth("https://elsewhere.example.net/mcp"),
        ),
        ("a loopback http resource", oauth("http://127.0.0.1:1/mcp")),
    ];
    for (what, config) in cases {
        let path = write_config(dir.path(), &config);
        let mut command = adapter(&["doctor", "--config", path.to_str().unwrap()]);
        command.env("RUST_LOG", "info");
        let output = finished_within(command, Duration::from_secs(20)).await;
        let stderr = stderr_of(&output);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(1), "{what}: {stdout}{stderr}");
        assert!(
            stderr.contains("fetched the issuer's signing keys"),
            "{what}: the key fetch logged nothing, so this proves nothing: {stderr}"
        );
        assert!(
            stderr
                .lines()
                .last()
                .is_some_and(|l| l.starts_with("herdr-core-mcp: ")),
            "{what}: no closing line: {stderr}"
        );
    }
    idp.kill().await;
}
