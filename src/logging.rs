//! Logging: tracing to stderr only, never stdout (stdout carries MCP in
//! stdio mode), ANSI off. `RUST_LOG` sets levels (default `info`), except
//! that rmcp's own logs are capped at `warn`: at debug level rmcp prints
//! whole requests and results, which would put prompts and screens (and so
//! secrets) in the log.

use tracing_subscriber::EnvFilter;

/// Appended after `RUST_LOG`, so it wins over any rmcp level set there.
const RMCP_CAP: &str = "rmcp=warn";

pub fn init() {
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info"))
        .add_directive(RMCP_CAP.parse().expect("a valid directive"));
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_env_filter(filter)
        .try_init();
}
