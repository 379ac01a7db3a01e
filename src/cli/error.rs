//! The error of a whole command, and the one place each layer's error is
//! mapped to an exit code: 2 for what the operator must fix in the input
//! (arguments, config, token), 1 for what went wrong while running.

use std::net::SocketAddr;

use crate::audit::AuditError;
use crate::config::ConfigError;
use crate::hc::CoreError;
use crate::ops::approve::ApproveError;
use crate::serve::ServeError;
use crate::transport::http::auth::oauth::StartError;
use crate::transport::http::auth::tokens::{ReadTokenError, TokenError};

/// Why a command failed, already worded for the operator.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The config was refused.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The HTTP bearer token was refused.
    #[error(transparent)]
    Token(#[from] TokenError),
    /// The read-only bearer token was refused.
    #[error(transparent)]
    ReadToken(#[from] ReadTokenError),
    /// OAuth mode cannot start (a credential variable is missing).
    #[error(transparent)]
    OAuth(#[from] StartError),
    /// The audit file cannot be appended to.
    #[error(transparent)]
    Audit(#[from] AuditError),
    /// hc could not be probed.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// `allow` or `revoke` changed nothing.
    #[error(transparent)]
    Approve(#[from] ApproveError),
    /// Serving stopped with an error.
    #[error(transparent)]
    Serve(#[from] ServeError),
    /// The HTTP port could not be bound.
    #[error("cannot listen on {address}: {source}; pick another http.port or stop what uses it")]
    Bind {
        /// The loopback address and `http.port` it tried.
        address: SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The socket passed in `LISTEN_FDS` cannot be served on.
    #[error(transparent)]
    Inherit(#[from] crate::transport::http::InheritError),
    /// A signal handler could not be installed.
    #[error("cannot install a {name} handler: {source}")]
    Signal {
        /// The signals, as shown: `SIGHUP` or `SIGTERM/SIGINT`.
        name: &'static str,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// What the command printed could not be written.
    #[error("cannot write to stdout: {0}")]
    Output(#[source] std::io::Error),
    /// No `--config`, and no home to find the default one in.
    #[error(
        "no --config given, and neither XDG_CONFIG_HOME nor HOME is an absolute path to find herdr-core-mcp/config.json under: pass --config FILE"
    )]
    NoDefaultConfig,
    /// `init` cannot write the config it was asked for (the message says
    /// why and what to do).
    #[error(transparent)]
    Setup(#[from] crate::ops::setup::SetupError),
    /// `doctor` found problems (its lines say which, and the fixes).
    #[error(
        "{failed} check(s) failed: the FAIL lines above say what is wrong and, where they can, the fix"
    )]
    Doctor {
        /// How many checks failed.
        failed: usize,
        /// Whether the config itself was refused (exit 2, a config error).
        config_refused: bool,
    },
    /// `inspect-core --check-contract` found differences from the model.
    #[error(
        "{differences} difference(s) between this core and the modelled contract (listed above)"
    )]
    Contract {
        /// How many differences were found.
        differences: usize,
    },
    /// `inspect-core --check-contract` could not run (a bad --schema or
    /// --record).
    #[error(transparent)]
    Check(#[from] crate::ops::contract::CheckError),
    /// `reload` found nothing to signal, or could not signal.
    #[error(transparent)]
    Reload(#[from] crate::ops::reload::ReloadError),
}

impl Error {
    /// The process's exit status: 2 for what the operator must fix in the
    /// input, 1 for what went wrong while running.
    pub fn exit_code(&self) -> u8 {
        const USAGE: u8 = 2;
        const RUNTIME: u8 = 1;
        match self {
            Error::Config(_)
            | Error::Token(_)
            | Error::ReadToken(_)
            | Error::OAuth(_)
            | Error::Audit(_)
            | Error::Inherit(_)
            | Error::NoDefaultConfig
            | Error::Setup(_)
            | Error::Check(_)
            | Error::Doctor {
                config_refused: true,
                ..
            } => USAGE,
            Error::Approve(ApproveError::Config(_)) => USAGE,
            Error::Approve(_)
            | Error::Core(_)
            | Error::Serve(_)
            | Error::Bind { .. }
            | Error::Signal { .. }
            | Error::Output(_)
            | Error::Doctor { .. }
            | Error::Contract { .. }
            | Error::Reload(_) => RUNTIME,
        }
    }
}
