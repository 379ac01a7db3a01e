//! Logging: tracing to stderr only, never stdout (stdout carries MCP in
//! stdio mode), ANSI off. `RUST_LOG` overrides the default `info` level.

use tracing_subscriber::EnvFilter;

pub fn init() {
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,rmcp=warn"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_env_filter(filter)
        .try_init();
}
