//! Why a config was refused: the file (missing, unreadable, unsafe, too
//! large, not JSON) or a value in it ([`Invalid`], naming its key).

use std::path::PathBuf;

/// Why a config was refused. Each message names the file or key and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// There is no file at the path.
    #[error(
        "config {path} does not exist: create it with `{create}` (add --socket PATH when hc's socket is not at its usual place), or pass --config with the config you meant (without --config the default is $XDG_CONFIG_HOME/herdr-core-mcp/config.json, else ~/.config/herdr-core-mcp/config.json)",
        path = path.display()
    )]
    Missing {
        /// The path, as given.
        path: PathBuf,
        /// The command that creates it (`init`, private from the first
        /// byte).
        create: String,
    },
    /// The file could not be opened or read.
    #[error("cannot read config {path}: {source}")]
    Read {
        /// The path, as given.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Someone else could write or replace the file, and so grant send
    /// authority.
    #[error("config {path}{shown} is refused: it holds send authority, and {why}", path = path.display(), shown = if path == resolved { String::new() } else { format!(" (really {})", resolved.display()) })]
    Unsafe {
        /// The path, as given.
        path: PathBuf,
        /// Its real path (symlinks resolved).
        resolved: PathBuf,
        /// What is wrong, and the fix.
        why: String,
    },
    /// The path is a directory, a FIFO, a socket, ...
    #[error("config {path} is {kind}, not a regular file: point --config at the JSON config file", path = path.display())]
    NotAFile {
        /// The path, as given.
        path: PathBuf,
        /// What it is instead, e.g. `a directory`.
        kind: &'static str,
    },
    /// Too big to be a config.
    #[error("config {path} is larger than 1 MiB; it is not a herdr-core-mcp config")]
    TooLarge {
        /// The path, as given.
        path: PathBuf,
    },
    /// Not JSON, or a key that does not exist, or a value of the wrong type.
    #[error("config {path}: {detail}")]
    Parse {
        /// The path, as given.
        path: PathBuf,
        /// What is wrong, and where: the key, or both lines of a repeated one.
        detail: String,
    },
    /// A value out of its documented range or shape.
    #[error("config {path}: `{key}` {problem}", key = invalid.key, problem = invalid.problem)]
    Invalid {
        /// The path, as given.
        path: PathBuf,
        /// The key, and what is wrong with its value.
        invalid: Invalid,
    },
}

/// A value that parsed but is not valid: which key, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}` {problem}")]
pub struct Invalid {
    /// The key, as a path into the file, e.g. `http.auth.issuer`.
    pub key: String,
    /// What is wrong with its value, worded to follow the key.
    pub problem: String,
}

pub(crate) fn invalid(key: impl Into<String>, problem: impl Into<String>) -> Invalid {
    Invalid {
        key: key.into(),
        problem: problem.into(),
    }
}
