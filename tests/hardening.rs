//! The fourth hardening round: promises a review broke in the newest
//! surfaces, each held by a test that failed before its fix. An inherited
//! descriptor that is not what it seems, a config that is a FIFO or
//! repeats a key, writers racing on the allowlist, doctor ending in oauth
//! mode, introspection under a flood, refused read-token sends audited,
//! log lines bounded, and waits that never follow an address into another
//! terminal or a restarted core.

mod config_files;
mod config_locks;
mod doctor_ends;
mod inherited_socket;
mod introspection;
mod log_bounds;
mod wait_lifetimes;

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
