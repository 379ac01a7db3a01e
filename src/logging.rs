//! Logging: tracing to stderr only, never stdout (stdout carries MCP in
//! stdio mode), ANSI off. `RUST_LOG` sets levels (default `info`) through
//! an `EnvFilter`, and a second, fixed filter after it lets below `warn`
//! only this crate's own events. Other crates, rmcp first among them, log
//! whole requests and results (prompts, screens, and so secrets) at debug
//! and trace, and a more specific `RUST_LOG` directive beats any directive
//! added to the same `EnvFilter`; a separate filter cannot be lifted by any
//! `RUST_LOG` value. This crate never logs a prompt, a screen or a token.

use tracing::{Level, Metadata};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::filter_fn;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

/// The targets (module paths) whose events may pass below `warn`.
const OWN_TARGET: &str = env!("CARGO_CRATE_NAME");

pub fn init() {
    let levels = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let layer = fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true)
        .with_filter(levels)
        .with_filter(filter_fn(own_or_warning));
    let _ = tracing_subscriber::registry().with(layer).try_init();
}

/// Events and spans of this crate at any level; anything else only at
/// `warn` or `error`.
fn own_or_warning(meta: &Metadata<'_>) -> bool {
    *meta.level() <= Level::WARN || is_own(meta.target())
}

fn is_own(target: &str) -> bool {
    target
        .strip_prefix(OWN_TARGET)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with("::"))
}

#[cfg(test)]
mod tests {
    use super::is_own;

    #[test]
    fn only_this_crate_counts_as_own() {
        assert!(is_own("herdr_core_mcp"));
        assert!(is_own("herdr_core_mcp::serve"));
        assert!(!is_own("herdr_core_mcp_other"));
        assert!(!is_own("rmcp::service"));
        assert!(!is_own("audit"));
    }
}
