//! Each subcommand, wired: load what it needs, run it, print its output.
//! `serve` is where the process's real resources (stdin/stdout or a bound
//! port, the token from the environment, signal handlers) are set up and
//! handed to the server.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::Path;
use std::sync::Arc;

use tokio::signal::unix::SignalKind;

use super::Command;
use super::error::Error;
use crate::app::App;
use crate::audit::Audit;
use crate::config::{Config, HttpConfig, Transport};
use crate::transport::auth::BearerToken;
use crate::transport::stdio::Pipes;
use crate::transport::{Endpoint, HttpEndpoint};
use crate::{approve, inspect, serve};

/// Runs one command to completion.
pub async fn run(command: Command) -> Result<(), Error> {
    let out = match command {
        Command::Serve { config } => return serve(&config).await,
        Command::InspectCore { config, json } => {
            inspect::run(&Config::load(&config)?, json).await?
        }
        Command::Allow {
            config,
            address,
            multiline,
        } => approve::allow(&config, &address, multiline).await?,
        Command::Revoke {
            config,
            address,
            created_ms,
        } => approve::revoke(&config, &address, created_ms)?,
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
        .map_err(Error::Output)
}

async fn serve(config_path: &Path) -> Result<(), Error> {
    let config = Config::load(config_path)?;
    let endpoint = match config.transport() {
        Transport::Stdio => Endpoint::Stdio(Pipes::process()),
        Transport::Http(http) => Endpoint::Http(http_endpoint(http).await?),
    };
    // Every handler is installed before serving, so an early signal is
    // handled, never the default (which would kill the process).
    let shutdown = serve::shutdown_signal().map_err(|source| Error::Signal {
        name: "SIGTERM/SIGINT",
        source,
    })?;
    let hangups = serve::watch(SignalKind::hangup()).map_err(|source| Error::Signal {
        name: "SIGHUP",
        source,
    })?;
    let audit = Audit::open(Box::new(std::io::stderr()), config.audit_log())?;
    let app = Arc::new(App::new(config, audit));
    let reloads = serve::reload_on_hangup(hangups, Arc::clone(&app), config_path);
    tokio::select! {
        served = serve::run(app, endpoint, shutdown) => served?,
        () = reloads => {}
    }
    Ok(())
}

/// The token from the environment (refused when weak) and the loopback
/// port bound; there is no other address to bind.
async fn http_endpoint(http: &HttpConfig) -> Result<HttpEndpoint, Error> {
    let token = BearerToken::from_env()?;
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, http.port));
    let listener = tokio::net::TcpListener::bind(address)
        .await
        .map_err(|source| Error::Bind { address, source })?;
    Ok(HttpEndpoint {
        listener,
        config: http.clone(),
        token,
    })
}
