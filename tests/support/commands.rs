//! Running the adapter binary as an operator does, under a time limit: a
//! command that does not end is a failure, never a hang.

use std::process::Output;
use std::time::Duration;

/// Runs `command` to its end, or fails the test if it has not ended within
/// `limit` (a command that blocks is the bug these tests look for).
pub async fn finished_within(mut command: tokio::process::Command, limit: Duration) -> Output {
    command
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().expect("spawn the adapter");
    match tokio::time::timeout(limit, child.wait_with_output()).await {
        Ok(output) => output.expect("the adapter's output"),
        Err(_) => panic!("the command did not end within {limit:?}"),
    }
}

/// `herdr-core-mcp ARGS` with the test's environment (no token, warn logs).
pub fn adapter(args: &[&str]) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(crate::support::adapter_bin());
    command
        .args(args)
        .env_remove("HERDR_MCP_TOKEN")
        .env_remove("HERDR_MCP_READ_TOKEN")
        .env("RUST_LOG", "warn");
    command
}

pub fn stderr_of(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}
