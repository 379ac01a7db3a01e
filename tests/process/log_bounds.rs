//! Whatever a client sends, a log line stays short and escaped: a method
//! name of 60,000 characters used to be logged whole (rmcp logs the error
//! it answers with, and that names the method).

use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;

use crate::support::{Sim, SimOptions, adapter_bin};

/// Longest stderr line allowed here: the bound on every value (256
/// characters, escaped, and its length) leaves a line far shorter.
const LONGEST_LINE: usize = 2_000;

#[tokio::test]
async fn a_huge_method_name_is_logged_cut_escaped_and_with_its_length() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let mut child = tokio::process::Command::new(adapter_bin())
        .args(["serve", "--config", config.to_str().unwrap()])
        .env("RUST_LOG", "info")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let huge = "m".repeat(60_000);
    let spoof = "\u{202e}\u{1b}[2J".repeat(1_000);
    let messages = [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": huge, "params": {}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": spoof, "params": {}}),
    ];
    let mut stdin = child.stdin.take().unwrap();
    for message in &messages {
        stdin
            .write_all(format!("{message}\n").as_bytes())
            .await
            .unwrap();
    }
    drop(stdin);
    let output = tokio::time::timeout(Duration::from_secs(20), child.wait_with_output())
        .await
        .expect("serve ends with its input")
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains(r#""id":2,"error""#), "{stdout:.300}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    for line in stderr.lines() {
        assert!(
            line.chars().count() <= LONGEST_LINE,
            "a {}-character log line: {line:.300}",
            line.chars().count()
        );
        assert!(
            !line.chars().any(herdr_core_mcp::is_hazard),
            "a raw control or format character: {line:.300}"
        );
    }
    let cut = stderr
        .lines()
        .find(|l| l.contains("mmmm"))
        .unwrap_or_else(|| panic!("the refused method is not logged at all: {stderr}"));
    assert!(cut.contains(" chars]"), "{cut:.400}");
}
