//! The server's life: build the tools over the shared [`App`] and serve MCP
//! on an endpoint that is handed in already set up, until the client
//! leaves or `shutdown` resolves. Reloading the config (on SIGHUP) and the
//! signal handlers are here too; the command line wires them together.
//! Shutdown closes only the adapter's own connections to hc.

use std::path::Path;
use std::sync::Arc;

use tokio::signal::unix::{Signal, SignalKind, signal};

use crate::app::App;
use crate::config::Config;
use crate::escape::printable;
use crate::hc::CoreId;
use crate::mcp::HerdrServer;
use crate::pace::Pace;
use crate::transport::{self, Endpoint};

/// Why serving stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum ServeError {
    /// The stdio session broke.
    #[error(transparent)]
    Session(#[from] transport::stdio::SessionError),
}

/// Serves MCP for `app` on `endpoint` until the session ends (stdio) or
/// `shutdown` resolves, at `pace` (`Pace::of_this_build()` for `serve`).
pub async fn run(
    app: Arc<App>,
    pace: Pace,
    endpoint: Endpoint,
    shutdown: impl Future<Output = ()>,
) -> Result<(), ServeError> {
    log_start(app.loaded().config());
    // hc may start later: the probe only says what it finds.
    let probe = tokio::spawn(probe(Arc::clone(&app)));
    let server = HerdrServer::over(Arc::clone(&app), pace);
    // The calls still running hear of the stop first, so they can answer.
    let stopping = server.stopping().clone();
    let shutdown = async move {
        shutdown.await;
        stopping.cancel();
    };
    let result = match endpoint {
        Endpoint::Stdio(pipes) => transport::stdio::serve(server, pipes, shutdown)
            .await
            .map_err(ServeError::from),
        Endpoint::Http(endpoint) => {
            transport::http::serve(server, endpoint, pace, shutdown).await;
            Ok(())
        }
    };
    probe.abort();
    app.client().close();
    result
}

/// One look at the core at start, logged as one line: its version and
/// core_id, whether `coreId` names it, and how many approvals name live
/// terminals; or why it could not be reached. Never fails the start.
async fn probe(app: Arc<App>) {
    let loaded = app.loaded();
    let config = loaded.config();
    let socket = printable(&config.socket_path().display().to_string()).into_owned();
    let listed = match app.client().list(true).await {
        Ok(listed) => listed,
        Err(e) => {
            tracing::warn!(
                "hc is not reachable at {socket} yet: {}; serving anyway (calls fail until hc answers)",
                printable(&e.to_string())
            );
            return;
        }
    };
    let live = &listed.core.core_id;
    let core = match config.core_id() {
        Some(id) if id == live => "coreId matches".to_owned(),
        Some(id) => format!(
            "coreId {id} does NOT match (hc restarted?): nothing can be sent until terminals are approved again with herdr-core-mcp allow{} ADDRESS",
            config.operator_flag()
        ),
        None => "no coreId is set: nothing can be sent".to_owned(),
    };
    let approvals: Vec<_> = config.approvals().collect();
    let named = approvals
        .iter()
        .filter(|(lifetime, _)| {
            config.core_id() == Some(live)
                && listed.value.terminals.iter().any(|t| {
                    t.address == lifetime.address
                        && t.created_ms == lifetime.created_ms
                        && !t.is_finished()
                })
        })
        .count();
    tracing::info!(
        "hc {} core_id {live} at {socket}: {core}; {named} of {} approval(s) name live terminals",
        printable(&listed.core.version),
        approvals.len()
    );
}

/// Reloads the config on every SIGHUP of `hangups`, until the task is dropped.
pub(crate) async fn reload_on_hangup(mut hangups: Signal, app: Arc<App>, path: &Path) {
    while hangups.recv().await.is_some() {
        reload(&app, path);
    }
}

/// A valid file takes effect for calls that start after this; an invalid
/// one stops sends (reads go on) until a valid one is loaded. The socket,
/// transport and timeout stay as started: changing them needs a restart.
pub(crate) fn reload(app: &App, path: &Path) {
    let new = match Config::load(path) {
        Ok(new) => new,
        Err(e) => {
            tracing::error!(
                "config reload failed; send_prompt is refused until a valid config is loaded: {}",
                printable(&e.to_string())
            );
            app.refuse_sends(e);
            return;
        }
    };
    let (applied, needs_restart) = app.loaded().config().reloaded(new);
    if !needs_restart.is_empty() {
        tracing::warn!(
            "config reload: {} changed but take effect only after a restart of serve; still using the old values",
            needs_restart.join(", ")
        );
    }
    let (idle_only, normal) = applied.approved_by_mode();
    tracing::info!(
        core_id = applied.core_id().map_or("-", CoreId::as_str),
        send_mode = applied.send_mode().as_str(),
        approved_idle_only = idle_only,
        approved_normal = normal,
        "config reloaded"
    );
    app.replace_config(applied);
}

/// The start line: `send_mode` is the top-level default; the approvals are
/// counted by the mode each entry's sends use.
fn log_start(config: &Config) {
    let (idle_only, normal) = config.approved_by_mode();
    tracing::info!(
        socket = %printable(&config.socket_path().display().to_string()),
        send_mode = config.send_mode().as_str(),
        core_id = config.core_id().map_or("-", CoreId::as_str),
        approved_idle_only = idle_only,
        approved_normal = normal,
        timeout_ms = u64::try_from(config.timeout().as_millis()).unwrap_or(u64::MAX),
        "herdr-core-mcp {} starting",
        env!("CARGO_PKG_VERSION")
    );
}

/// Installs the handler for signal `kind` now, so an early signal is
/// handled, never the default (which would kill the process).
pub(crate) fn watch(kind: SignalKind) -> std::io::Result<Signal> {
    signal(kind)
}

/// Installs the SIGTERM and SIGINT handlers now; the future resolves on
/// either.
pub(crate) fn shutdown_signal() -> std::io::Result<impl Future<Output = ()>> {
    let mut term = watch(SignalKind::terminate())?;
    let mut int = watch(SignalKind::interrupt())?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => tracing::info!("SIGTERM: shutting down"),
            _ = int.recv() => tracing::info!("SIGINT: shutting down"),
        }
    })
}
