//! `serve`: load the config, build the shared [`App`], and run the MCP server
//! over the configured transport until the client leaves or a signal asks
//! us to stop. SIGHUP reloads the config. Shutdown closes only the
//! adapter's own connections to hc.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::app::App;
use crate::cli::Failure;
use crate::config::{Config, Transport};
use crate::transport;

pub async fn run(config_path: &Path) -> Result<(), Failure> {
    let config = Config::load(config_path)?;
    let token = match &config.transport {
        Transport::Http(_) => Some(
            transport::auth::BearerToken::from_env().map_err(|e| Failure::Usage(e.to_string()))?,
        ),
        Transport::Stdio => None,
    };
    // Every handler is installed before serving, so an early signal is
    // handled, never the default (which would kill the process).
    let shutdown = shutdown_signal()?;
    let hangups = watch(SignalKind::hangup(), "SIGHUP")?;
    let transport = config.transport.clone();
    log_start(&config);
    let app = Arc::new(App::new(config));
    let reloads = tokio::spawn(reload_on_hangup(
        hangups,
        Arc::clone(&app),
        config_path.to_path_buf(),
    ));
    let result = match (transport, token) {
        (Transport::Http(http), Some(token)) => {
            transport::http::serve(Arc::clone(&app), &http, token, shutdown).await
        }
        _ => transport::stdio::serve(Arc::clone(&app), shutdown).await,
    };
    reloads.abort();
    app.client.close();
    result
}

fn watch(kind: SignalKind, name: &str) -> Result<Signal, Failure> {
    signal(kind).map_err(|e| Failure::Runtime(format!("cannot install a {name} handler: {e}")))
}

/// Reloads the config on every SIGHUP until the task is aborted.
async fn reload_on_hangup(mut hangups: Signal, app: Arc<App>, path: PathBuf) {
    while hangups.recv().await.is_some() {
        reload(&app, &path);
    }
}

/// A valid file takes effect for calls that start after this; an invalid
/// one stops sends (reads go on) until a valid one is loaded. The socket,
/// transport and timeout stay as started: changing them needs a restart.
pub fn reload(app: &App, path: &Path) {
    let new = match Config::load(path) {
        Ok(new) => new,
        Err(e) => {
            tracing::error!(
                "config reload failed; send_prompt is refused until a valid config is loaded: {e}"
            );
            app.refuse_sends(e.to_string());
            return;
        }
    };
    let current = app.config();
    let mut needs_restart = Vec::new();
    if new.socket_path != current.socket_path {
        needs_restart.push("socketPath");
    }
    if new.transport != current.transport {
        needs_restart.push("transport/http");
    }
    if new.timeout != current.timeout {
        needs_restart.push("timeoutMs");
    }
    if !needs_restart.is_empty() {
        tracing::warn!(
            "config reload: {} changed but take effect only after a restart of serve; still using the old values",
            needs_restart.join(", ")
        );
    }
    let applied = Config {
        socket_path: current.socket_path.clone(),
        transport: current.transport.clone(),
        timeout: current.timeout,
        ..new
    };
    tracing::info!(
        core_id = applied.core_id.as_deref().unwrap_or("-"),
        send_mode = applied.send_mode.as_str(),
        approved = applied.send_allowlist.len(),
        "config reloaded"
    );
    app.replace_config(applied);
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

/// Installs the SIGTERM and SIGINT handlers now; the future resolves on
/// either.
pub fn shutdown_signal() -> Result<impl Future<Output = ()>, Failure> {
    let mut term = watch(SignalKind::terminate(), "SIGTERM")?;
    let mut int = watch(SignalKind::interrupt(), "SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}
