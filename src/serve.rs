//! `serve`: load the config, build the shared [`App`], and run the MCP server
//! over the configured transport until the client leaves or a signal asks
//! us to stop. Shutdown closes only the adapter's own connections to hc.

use std::path::Path;
use std::sync::Arc;

use crate::app::App;
use crate::cli::Failure;
use crate::config::{Config, Transport};
use crate::transport;

pub async fn run(config_path: &Path) -> Result<(), Failure> {
    let config = Config::load(config_path)?;
    let transport = config.transport.clone();
    log_start(&config);
    let app = Arc::new(App::new(config));
    let result = match transport {
        Transport::Stdio => transport::stdio::serve(Arc::clone(&app), shutdown_signal()).await,
        Transport::Http(http) => {
            let token = transport::auth::BearerToken::from_env()
                .map_err(|e| Failure::Usage(e.to_string()))?;
            transport::http::serve(Arc::clone(&app), &http, token, shutdown_signal()).await
        }
    };
    app.client.close();
    result
}

fn log_start(config: &Config) {
    tracing::info!(
        socket = %config.socket_path.display(),
        send_mode = config.send_mode.as_str(),
        core_id = config.core_id.as_deref().unwrap_or("-"),
        approved = config.send_allowlist.len(),
        timeout_ms = u64::try_from(config.timeout.as_millis()).unwrap_or(u64::MAX),
        "herdr-core-mcp {} starting",
        env!("CARGO_PKG_VERSION")
    );
}

/// Resolves on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate()).expect("installing a SIGTERM handler");
    let mut int = signal(SignalKind::interrupt()).expect("installing a SIGINT handler");
    tokio::select! {
        _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
        _ = int.recv() => tracing::info!("SIGINT: shutting down"),
    }
}
