//! Each subcommand, wired: find the config, load what it needs, run it,
//! print its output. `serve` is where the process's real resources
//! (stdin/stdout or a bound port, the token from the environment, signal
//! handlers, the audit stream) are set up and handed to the server.

use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::signal::unix::SignalKind;

use super::error::Error;
use super::{Command, ConfigArg};
use crate::app::App;
use crate::audit::Audit;
use crate::config::{Config, HttpAuth, HttpConfig, SendMode, Transport};
use crate::ops::{approve, contract, doctor, inspect, reload, setup};
use crate::serve;
use crate::transport::Endpoint;
use crate::transport::http::auth::oauth::ResourceServer;
use crate::transport::http::auth::tokens::BearerToken;
use crate::transport::http::{HttpEndpoint, auth::Authenticator};
use crate::transport::stdio::Pipes;

/// Runs one command to completion.
pub async fn run(command: Command) -> Result<(), Error> {
    crate::ops::marker::keep();
    crate::transport::http::auth::oauth::install_signatures();
    let out = match command {
        Command::Serve { config } => return serve(&config.resolve()?).await,
        Command::InspectCore {
            config,
            json,
            check_contract: true,
            schema,
            record,
            accept,
            guard_check,
        } => {
            let check = contract::Check {
                schema,
                json,
                record,
                guard_check,
            };
            let path = config.resolve()?;
            let report = contract::run(&Config::load(&path)?, &check).await?;
            print(&report.text)?;
            if accept {
                let accepted = crate::ops::accept::accept(&path, &report, config.config.as_deref());
                let said = accepted.await?;
                // The JSON report stays one document on stdout.
                if json {
                    eprint!("{said}");
                } else {
                    print(&said)?;
                }
                return Ok(());
            }
            return match report.differences {
                0 => Ok(()),
                differences => Err(Error::Contract { differences }),
            };
        }
        Command::InspectCore { config, json, .. } => {
            inspect::run(&Config::load(&config.resolve()?)?, json).await?
        }
        Command::Allow {
            config,
            multiline,
            confirm,
            no_confirm,
            mode,
            dry_run,
            address,
        } => {
            let approval = approve::Request {
                address: &address,
                multiline,
                confirm,
                no_confirm,
                mode: mode.map(SendMode::from),
                dry_run,
                config_flag: config.config.as_deref(),
            };
            approve::allow(&config.resolve()?, &approval).await?
        }
        Command::Revoke {
            config,
            address,
            created_ms,
            all: _,
            dry_run,
        } => {
            let revocation = approve::Revocation {
                address: address.as_deref(),
                created_ms,
                dry_run,
                config_flag: config.config.as_deref(),
            };
            approve::revoke(&config.resolve()?, &revocation).await?
        }
        Command::Doctor { config, json } => {
            let report = doctor::run(&config.resolve()?, config.config.as_deref()).await;
            print(&if json { report.json() } else { report.text() })?;
            return match report.failed {
                0 => Ok(()),
                failed => Err(Error::Doctor {
                    failed,
                    config_refused: report.config_refused,
                }),
            };
        }
        Command::Reload { config } => {
            let path = config.resolve()?;
            // A broken config is refused here (exit 2), before any serve
            // is told to load it.
            Config::load(&path)?;
            let report = reload::run(&path);
            print(&report.text)?;
            return Ok(report.outcome?);
        }
        Command::Init {
            config,
            socket,
            transport,
        } => setup::init(
            &config.resolve()?,
            socket,
            transport.into(),
            config.config.as_deref(),
        )?,
        Command::Status { json } => setup::status(json).await,
        Command::Completions { shell } => {
            super::manual::completion(shell, super::reference_command())
        }
        Command::Man => {
            let page = super::manual::man(super::reference_command()).map_err(Error::Output)?;
            String::from_utf8_lossy(&page).into_owned()
        }
    };
    print(&out)
}

fn print(out: &str) -> Result<(), Error> {
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(out.as_bytes())
        .and_then(|()| stdout.flush())
    {
        // The reader closed the pipe early (`inspect-core | head -1`): it
        // has what it wanted.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        written => written.map_err(Error::Output),
    }
}

impl ConfigArg {
    /// The config path given, or the default one.
    pub fn resolve(&self) -> Result<PathBuf, Error> {
        match &self.config {
            Some(path) => Ok(path.clone()),
            None => default_config().ok_or(Error::NoDefaultConfig),
        }
    }
}

/// The default config under this process's environment.
pub(super) fn default_config() -> Option<PathBuf> {
    crate::config::default_path(|name| std::env::var_os(name).map(PathBuf::from))
}

async fn serve(config_path: &Path) -> Result<(), Error> {
    let config = Config::load(config_path)?;
    let endpoint = match config.transport() {
        Transport::Stdio => {
            // Someone ran it by hand: say what it is waiting for.
            if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                eprintln!(
                    "herdr-core-mcp: serve speaks MCP on stdin/stdout and is meant to be launched by an MCP host (see README, Hosts); press Ctrl-D to stop"
                );
            }
            Endpoint::Stdio(Pipes::process())
        }
        Transport::Http(http) => Endpoint::Http(http_endpoint(http)?),
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
    let audit = Audit::open(Box::new(crate::logging::stderr()), config.audit_log())?;
    // What `reload` and `doctor` compare the file with; removed at the end.
    let _started = crate::ops::started::record(&config);
    let app = Arc::new(App::new(config, audit));
    let reloads = serve::reload_on_hangup(hangups, Arc::clone(&app), config_path);
    tokio::select! {
        served = serve::run(app, crate::pace::Pace::of_this_build(), endpoint, shutdown) => served?,
        () = reloads => {}
    }
    Ok(())
}

/// The token from the environment (refused when weak) and the loopback
/// port: the socket the parent passed (`LISTEN_FDS`), else bound here;
/// there is no other address to serve on.
fn http_endpoint(http: &HttpConfig) -> Result<HttpEndpoint, Error> {
    let auth = match http.auth() {
        HttpAuth::Token => {
            let full = BearerToken::from_env()?;
            let read = BearerToken::read_from_env(&full)?;
            Authenticator::Tokens { full, read }
        }
        HttpAuth::OAuth(config) => {
            Authenticator::OAuth(Arc::new(ResourceServer::new(config.as_ref().clone())?))
        }
    };
    let address = SocketAddr::from((Ipv4Addr::LOCALHOST, http.port()));
    let listener = match crate::transport::http::inherited(address)? {
        Some(listener) => {
            tracing::info!(%address, "serving on the socket passed in LISTEN_FDS");
            listener
        }
        None => crate::transport::http::listen(address)
            .map_err(|source| Error::Bind { address, source })?,
    };
    Ok(HttpEndpoint {
        listener,
        config: http.clone(),
        auth,
    })
}
