//! Logging: tracing to stderr only, never stdout (stdout carries MCP in
//! stdio mode), ANSI off. `RUST_LOG` sets levels (default `info`) through
//! an `EnvFilter`, and a second, fixed filter after it lets below `warn`
//! only this crate's own events. Other crates, rmcp first among them, log
//! whole requests and results (prompts, screens, and so secrets) at debug
//! and trace, and a more specific `RUST_LOG` directive beats any directive
//! added to the same `EnvFilter`; a separate filter cannot be lifted by any
//! `RUST_LOG` value. This crate never logs a prompt, a screen or a token.

use tracing::Level;
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The targets (module paths) whose events may pass below `warn`.
const OWN_TARGET: &str = env!("CARGO_CRATE_NAME");

pub fn init() {
    let levels = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let output = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true);
    // Two global filters: a callsite is enabled only if both enable it, so
    // the cap holds whatever the RUST_LOG filter says, and both answers are
    // cached per callsite.
    let _ = tracing_subscriber::registry()
        .with(levels)
        .with(cap())
        .with(output)
        .try_init();
}

/// Events and spans of this crate at any level; anything else only at
/// `warn` or `error`. A static `Targets` filter, so each callsite's answer
/// is decided once and cached: a dynamic one would be asked again at every
/// span and event of every crate (the bench showed it in the CPU per call).
fn cap() -> Targets {
    Targets::new()
        .with_default(Level::WARN)
        .with_target(OWN_TARGET, Level::TRACE)
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::cap;

    #[test]
    fn only_this_crate_passes_below_warn() {
        let cap = cap();
        assert!(cap.would_enable("herdr_core_mcp", &Level::TRACE));
        assert!(cap.would_enable("herdr_core_mcp::serve", &Level::DEBUG));
        assert!(!cap.would_enable("rmcp::service", &Level::INFO));
        assert!(cap.would_enable("rmcp::service", &Level::WARN));
        assert!(!cap.would_enable("hyper", &Level::DEBUG));
    }
}
