//! The operator's JSON config: parsed by figment into a [`RawConfig`] that
//! refuses unknown keys (`raw`), read only after its permissions are checked
//! (`file`), then validated by `TryFrom` into a [`Config`] whose fields are
//! private, so an unvalidated one cannot be built. The bearer token is not
//! here: it comes only from the environment (see `transport::auth`).

mod file;
mod http;
mod raw;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::hc::CoreId;
pub use file::read_checked;
pub use http::HttpConfig;
pub use raw::{RawConfig, RawHttp, RawLifetime, RawTransport};

/// Bounds of `timeoutMs`: below 100 ms a busy core looks dead; above a
/// minute a stuck core holds a tool call hostage.
const TIMEOUT_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=60_000;
/// Bounds of `waitMaxMs`, the longest one wait call may wait.
const WAIT_MAX_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=600_000;

/// Why a config was refused. Each message names the file or key and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be opened or read.
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Someone else could write the file, and so grant send authority.
    #[error(
        "config {path} is writable by group or others (mode {mode:o}); it holds send authority: run chmod 600 {path}"
    )]
    Permissions { path: PathBuf, mode: u32 },
    /// The path is a directory, a socket, ...
    #[error("config {path} is not a regular file")]
    NotAFile { path: PathBuf },
    /// Too big to be a config.
    #[error("config {path} is larger than 1 MiB; it is not a herdr-core-mcp config")]
    TooLarge { path: PathBuf },
    /// Not JSON, or a key that does not exist, or a value of the wrong type.
    #[error("config {path}: {detail}")]
    Parse { path: PathBuf, detail: String },
    /// A value out of its documented range or shape.
    #[error("config {path}: `{key}` {problem}", key = invalid.key, problem = invalid.problem)]
    Invalid { path: PathBuf, invalid: Invalid },
}

/// A value that parsed but is not valid: which key, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{key}` {problem}")]
pub struct Invalid {
    pub key: String,
    pub problem: String,
}

fn invalid(key: impl Into<String>, problem: impl Into<String>) -> Invalid {
    Invalid {
        key: key.into(),
        problem: problem.into(),
    }
}

/// How `send_prompt` guards its input. An operator setting, never a tool argument.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize, Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum SendMode {
    /// Only into an idle terminal, with hc's atomic `if: "idle"` guard.
    #[default]
    IdleOnly,
    /// Into an idle or done terminal; `done` has no atomic guard in hc.
    Normal,
}

impl SendMode {
    pub fn as_str(self) -> &'static str {
        match self {
            SendMode::IdleOnly => "idle-only",
            SendMode::Normal => "normal",
        }
    }
}

/// One terminal lifetime: hc reuses addresses, so the address alone never
/// approves anything.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TerminalLifetime {
    pub address: String,
    pub created_ms: i64,
}

/// The transport `serve` speaks; only HTTP has settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http(HttpConfig),
}

/// A validated configuration: only [`TryFrom<RawConfig>`] builds one.
#[derive(Debug, Clone)]
pub struct Config {
    socket_path: PathBuf,
    transport: Transport,
    core_id: Option<CoreId>,
    send_mode: SendMode,
    send_allowlist: HashSet<TerminalLifetime>,
    timeout: Duration,
    wait_max: Duration,
}

impl Config {
    /// Loads and validates the config at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::validate(path, RawConfig::load(path)?)
    }

    /// Validates a raw config; `path` only labels messages.
    pub fn validate(path: &Path, raw: RawConfig) -> Result<Config, ConfigError> {
        Config::try_from(raw).map_err(|invalid| ConfigError::Invalid {
            path: path.to_path_buf(),
            invalid,
        })
    }

    pub fn socket_path(&self) -> &Path {
        &self.socket_path
    }

    pub fn transport(&self) -> &Transport {
        &self.transport
    }

    /// The core sends are approved for; without one nothing can be sent.
    pub fn core_id(&self) -> Option<&CoreId> {
        self.core_id.as_ref()
    }

    pub fn send_mode(&self) -> SendMode {
        self.send_mode
    }

    /// How many terminal lifetimes are approved.
    pub fn approved_count(&self) -> usize {
        self.send_allowlist.len()
    }

    /// Bound of each core call.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Longest one wait call may wait.
    pub fn wait_max(&self) -> Duration {
        self.wait_max
    }

    /// Whether `(core_id, lifetime)` may receive input.
    pub fn is_send_approved(&self, core_id: &CoreId, lifetime: &TerminalLifetime) -> bool {
        self.core_id.as_ref() == Some(core_id) && self.send_allowlist.contains(lifetime)
    }

    /// `new` as a running server applies it on reload: the settings fixed at
    /// start (socket, transport, timeout) keep this config's values. Also
    /// names the settings that changed but need a restart.
    pub fn reloaded(&self, new: Config) -> (Config, Vec<&'static str>) {
        let mut needs_restart = Vec::new();
        if new.socket_path != self.socket_path {
            needs_restart.push("socketPath");
        }
        if new.transport != self.transport {
            needs_restart.push("transport/http");
        }
        if new.timeout != self.timeout {
            needs_restart.push("timeoutMs");
        }
        let applied = Config {
            socket_path: self.socket_path.clone(),
            transport: self.transport.clone(),
            timeout: self.timeout,
            ..new
        };
        (applied, needs_restart)
    }
}

impl TryFrom<RawConfig> for Config {
    type Error = Invalid;

    fn try_from(raw: RawConfig) -> Result<Config, Invalid> {
        if !raw.socket_path.is_absolute() {
            return Err(invalid(
                "socketPath",
                format!("must be an absolute path, got {:?}", raw.socket_path),
            ));
        }
        let core_id = raw
            .core_id
            .map(CoreId::try_from)
            .transpose()
            .map_err(|e| invalid("coreId", e.to_string()))?;
        if !TIMEOUT_MS_RANGE.contains(&raw.timeout_ms) {
            return Err(invalid(
                "timeoutMs",
                format!("must be between 100 and 60000, got {}", raw.timeout_ms),
            ));
        }
        if !WAIT_MAX_MS_RANGE.contains(&raw.wait_max_ms) {
            return Err(invalid(
                "waitMaxMs",
                format!("must be between 100 and 600000, got {}", raw.wait_max_ms),
            ));
        }
        let mut send_allowlist = HashSet::new();
        for (i, entry) in raw.send_allowlist.into_iter().enumerate() {
            if entry.address.is_empty() || entry.address.chars().any(char::is_control) {
                return Err(invalid(
                    format!("sendAllowlist[{i}].address"),
                    "must be a terminal address such as \"t1\"",
                ));
            }
            send_allowlist.insert(TerminalLifetime {
                address: entry.address,
                created_ms: entry.created_ms,
            });
        }
        // The http block is checked even for stdio, so a mistake in it shows
        // now rather than on the day the transport is switched.
        let http = http::validate(raw.http.unwrap_or_default())?;
        let transport = match raw.transport {
            RawTransport::Stdio => Transport::Stdio,
            RawTransport::Http => Transport::Http(http),
        };
        Ok(Config {
            socket_path: raw.socket_path,
            transport,
            core_id,
            send_mode: raw.send_mode,
            send_allowlist,
            timeout: Duration::from_millis(raw.timeout_ms),
            wait_max: Duration::from_millis(raw.wait_max_ms),
        })
    }
}

#[cfg(test)]
mod tests;
