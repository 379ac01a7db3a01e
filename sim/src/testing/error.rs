//! What can go wrong when starting or driving a simulator process, one
//! variant per cause, each saying what to do about it.

use std::fmt;
use std::io;
use std::path::PathBuf;

use serde_json::Value;

use super::{BINARY_ENV, MAX_SOCKET_PATH_BYTES};

/// Why a simulator could not be started, driven or stopped.
#[derive(Debug)]
pub enum Error {
    /// No `hc-sim` binary where it was looked for.
    BinaryMissing(PathBuf),
    /// A socket path is too long to bind.
    PathTooLong(PathBuf),
    /// The options do not make a command line `hc-sim` would serve with
    /// (an unknown fault, say); clap's or the simulator's own words.
    Options(String),
    /// An operating-system call failed; `action` says what was being done.
    Io {
        /// What was being done.
        action: String,
        /// The operating system's error.
        source: io::Error,
    },
    /// `hc-sim` exited, printed something else or took too long before its
    /// ready line.
    NotReady(String),
    /// A control call was answered with a JSON-RPC error (the `error`
    /// object, as sent).
    Refused {
        /// The control method called.
        method: String,
        /// The JSON-RPC error object it was answered with.
        error: Value,
    },
    /// A control reply was not a JSON-RPC response.
    BadReply {
        /// The control method called.
        method: String,
        /// The line that came back.
        line: String,
    },
}

impl Error {
    pub(super) fn io(action: impl Into<String>) -> impl FnOnce(io::Error) -> Error {
        let action = action.into();
        move |source| Error::Io { action, source }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BinaryMissing(path) => write!(
                f,
                "hc-sim is not at {}: build it with `cargo build --example hc-sim` \
                 (with --release for a release build), or set {BINARY_ENV} to its path",
                path.display()
            ),
            Error::PathTooLong(path) => write!(
                f,
                "{} is {} bytes, more than a Unix socket path may have \
                 ({MAX_SOCKET_PATH_BYTES}): run the simulator in a shorter directory",
                path.display(),
                path.as_os_str().len()
            ),
            Error::Options(detail) => write!(f, "the simulator's options are invalid: {detail}"),
            Error::Io { action, source } => write!(f, "{action}: {source}"),
            Error::NotReady(detail) => write!(f, "hc-sim did not get ready: {detail}"),
            Error::Refused { method, error } => {
                write!(f, "control {method} was refused: {error}")
            }
            Error::BadReply { method, line } => write!(
                f,
                "control {method} got a reply that is not a JSON-RPC response: {line:?}"
            ),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}
