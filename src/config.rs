//! The operator's JSON config: read with figment into a raw form that
//! refuses unknown keys, then validated by `TryFrom` into a [`Config`] that
//! can only exist valid. The bearer token is not here: it comes only from
//! the environment (see `transport::auth`).

use std::collections::HashSet;
use std::io::Read;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use figment::Figment;
use figment::providers::{Format, Json};
use serde::{Deserialize, Serialize};

/// Bounds of `timeoutMs`: below 100 ms a busy core looks dead; above a
/// minute a stuck core holds a tool call hostage.
const TIMEOUT_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=60_000;
const DEFAULT_TIMEOUT_MS: u64 = 15_000;
/// Bounds of `waitMaxMs`, the longest one `wait_for_status` call may wait.
const WAIT_MAX_MS_RANGE: std::ops::RangeInclusive<u64> = 100..=600_000;
const DEFAULT_WAIT_MAX_MS: u64 = 600_000;
const DEFAULT_HTTP_PORT: u16 = 8765;
/// Longest core_id hc produces.
const MAX_CORE_ID_CHARS: usize = 128;
/// Config files bigger than this are not configs; refuse before parsing.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Why a config was refused. Each message names the file or key and the fix.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "config {path} is writable by group or others (mode {mode:o}); it holds send authority: run chmod 600 {path}"
    )]
    Permissions { path: PathBuf, mode: u32 },
    #[error("config {path} is not a regular file")]
    NotAFile { path: PathBuf },
    #[error("config {path} is larger than 1 MiB; it is not a herdr-core-mcp config")]
    TooLarge { path: PathBuf },
    #[error("config {path}: {detail}")]
    Parse { path: PathBuf, detail: String },
    #[error("config {path}: `{key}` {problem}")]
    Invalid {
        path: PathBuf,
        key: String,
        problem: String,
    },
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

/// One approved terminal lifetime: hc reuses addresses, so the address
/// alone never approves anything.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TerminalLifetime {
    pub address: String,
    pub created_ms: i64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HttpConfig {
    pub port: u16,
    pub allowed_hosts: Vec<String>,
    pub allowed_origins: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Transport {
    Stdio,
    Http(HttpConfig),
}

/// A validated configuration.
#[derive(Debug, Clone)]
pub struct Config {
    pub socket_path: PathBuf,
    pub transport: Transport,
    pub core_id: Option<String>,
    pub send_mode: SendMode,
    pub send_allowlist: HashSet<TerminalLifetime>,
    pub timeout: Duration,
    pub wait_max: Duration,
}

impl Config {
    /// Whether `(core_id, lifetime)` may receive input.
    pub fn is_send_approved(&self, core_id: &str, lifetime: &TerminalLifetime) -> bool {
        self.core_id.as_deref() == Some(core_id) && self.send_allowlist.contains(lifetime)
    }
}

#[derive(Debug, Clone, Copy, Deserialize, Serialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RawTransport {
    #[default]
    Stdio,
    Http,
}

/// The config file as written, before validation.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawConfig {
    pub socket_path: PathBuf,
    #[serde(default)]
    pub transport: RawTransport,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_id: Option<String>,
    #[serde(default)]
    pub send_mode: SendMode,
    #[serde(default)]
    pub send_allowlist: Vec<TerminalLifetime>,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    #[serde(default = "default_wait_max_ms")]
    pub wait_max_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<RawHttp>,
}

#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawHttp {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_origins: Option<Vec<String>>,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn default_wait_max_ms() -> u64 {
    DEFAULT_WAIT_MAX_MS
}

impl RawConfig {
    /// Reads and parses `path` after the checks of [`RawConfig::read_checked`].
    pub fn load(path: &Path) -> Result<RawConfig, ConfigError> {
        RawConfig::parse(path, &RawConfig::read_checked(path)?)
    }

    /// The text of `path`, after checking it is a regular file of sane size
    /// that nobody but its owner can write.
    pub fn read_checked(path: &Path) -> Result<String, ConfigError> {
        let read_error = |source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        };
        let mut file = std::fs::File::open(path).map_err(read_error)?;
        let meta = file.metadata().map_err(read_error)?;
        if !meta.is_file() {
            return Err(ConfigError::NotAFile {
                path: path.to_path_buf(),
            });
        }
        let mode = meta.permissions().mode() & 0o777;
        if mode & 0o022 != 0 {
            return Err(ConfigError::Permissions {
                path: path.to_path_buf(),
                mode,
            });
        }
        if meta.len() > MAX_CONFIG_BYTES {
            return Err(ConfigError::TooLarge {
                path: path.to_path_buf(),
            });
        }
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(read_error)?;
        Ok(text)
    }

    /// Parses config text; `path` only labels messages.
    pub fn parse(path: &Path, text: &str) -> Result<RawConfig, ConfigError> {
        Figment::from(Json::string(text))
            .extract::<RawConfig>()
            .map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                detail: figment_detail(e),
            })
    }
}

fn figment_detail(error: figment::Error) -> String {
    let key = error.path.join(".");
    let kind = error.kind.to_string();
    if key.is_empty() {
        kind
    } else {
        format!("`{key}`: {kind}")
    }
}

impl Config {
    /// Loads and validates the config at `path`.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        Config::validate(path, RawConfig::load(path)?)
    }

    /// Validates a raw config; `path` only labels messages.
    pub fn validate(path: &Path, raw: RawConfig) -> Result<Config, ConfigError> {
        let invalid = |key: &str, problem: String| ConfigError::Invalid {
            path: path.to_path_buf(),
            key: key.to_owned(),
            problem,
        };
        if !raw.socket_path.is_absolute() {
            return Err(invalid(
                "socketPath",
                format!("must be an absolute path, got {:?}", raw.socket_path),
            ));
        }
        if let Some(id) = &raw.core_id {
            let printable = id.bytes().all(|b| (0x20..0x7f).contains(&b));
            if id.is_empty() || id.len() > MAX_CORE_ID_CHARS || !printable {
                return Err(invalid(
                    "coreId",
                    "must be 1-128 printable ASCII characters, as inspect-core prints it".into(),
                ));
            }
        }
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
                    &format!("sendAllowlist[{i}].address"),
                    "must be a terminal address such as \"t1\"".into(),
                ));
            }
            send_allowlist.insert(entry);
        }
        // The http block is checked even for stdio, so a mistake in it shows
        // now rather than on the day the transport is switched.
        let http = validate_http(raw.http.unwrap_or_default(), &invalid)?;
        let transport = match raw.transport {
            RawTransport::Stdio => Transport::Stdio,
            RawTransport::Http => Transport::Http(http),
        };
        Ok(Config {
            socket_path: raw.socket_path,
            transport,
            core_id: raw.core_id,
            send_mode: raw.send_mode,
            send_allowlist,
            timeout: Duration::from_millis(raw.timeout_ms),
            wait_max: Duration::from_millis(raw.wait_max_ms),
        })
    }
}

fn validate_http(
    raw: RawHttp,
    invalid: &impl Fn(&str, String) -> ConfigError,
) -> Result<HttpConfig, ConfigError> {
    let port = match raw.port {
        None => DEFAULT_HTTP_PORT,
        Some(p) => u16::try_from(p)
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| invalid("http.port", format!("must be between 1 and 65535, got {p}")))?,
    };
    let allowed_hosts = raw
        .allowed_hosts
        .unwrap_or_else(|| vec![format!("127.0.0.1:{port}"), format!("localhost:{port}")]);
    if allowed_hosts.is_empty() {
        return Err(invalid(
            "http.allowedHosts",
            "is empty, so every request would be refused: list the Host values clients send, e.g. \"127.0.0.1:8765\"".into(),
        ));
    }
    for (i, host) in allowed_hosts.iter().enumerate() {
        if host.is_empty()
            || host
                .chars()
                .any(|c| c.is_whitespace() || c.is_control() || c == '/')
        {
            return Err(invalid(
                &format!("http.allowedHosts[{i}]"),
                "must be an exact Host value such as \"127.0.0.1:8765\"".into(),
            ));
        }
    }
    let allowed_origins = raw.allowed_origins.unwrap_or_default();
    for (i, origin) in allowed_origins.iter().enumerate() {
        // An Origin header is only scheme://host[:port]; anything else here
        // could never match and would refuse the client it meant to allow.
        let authority = origin
            .strip_prefix("https://")
            .or_else(|| origin.strip_prefix("http://"));
        let shaped = authority.is_some_and(|a| {
            !a.is_empty()
                && !a.contains(['/', '?', '#'])
                && !a.chars().any(|c| c.is_whitespace() || c.is_control())
        });
        if !shaped {
            return Err(invalid(
                &format!("http.allowedOrigins[{i}]"),
                "must be an exact origin such as \"https://mcp.example.net\" (scheme, host, optional port; no path)".into(),
            ));
        }
    }
    Ok(HttpConfig {
        port,
        allowed_hosts,
        allowed_origins,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        let path = Path::new("/test/config.json");
        Config::validate(path, RawConfig::parse(path, text)?)
    }

    #[test]
    fn it_applies_the_documented_defaults() {
        let config = parse(r#"{"socketPath": "/run/hc.sock"}"#).unwrap();
        assert_eq!(config.transport, Transport::Stdio);
        assert_eq!(config.send_mode, SendMode::IdleOnly);
        assert_eq!(config.timeout, Duration::from_millis(15_000));
        assert_eq!(config.wait_max, Duration::from_millis(600_000));
        assert!(config.core_id.is_none());
        assert!(config.send_allowlist.is_empty());
    }

    #[test]
    fn it_rejects_unknown_keys_naming_them() {
        let err = parse(r#"{"socketPath": "/run/hc.sock", "sendmode": "normal"}"#).unwrap_err();
        assert!(err.to_string().contains("sendmode"), "{err}");
        let err = parse(r#"{"socketPath": "/a", "http": {"host": "0.0.0.0"}}"#).unwrap_err();
        assert!(err.to_string().contains("host"), "{err}");
        let err = parse(
            r#"{"socketPath": "/a", "sendAllowlist": [{"address": "t1", "created_ms": 1, "x": 2}]}"#,
        )
        .unwrap_err();
        assert!(err.to_string().contains('x'), "{err}");
    }

    #[test]
    fn it_rejects_out_of_range_and_relative_values() {
        for (text, key) in [
            (r#"{"socketPath": "hc.sock"}"#, "socketPath"),
            (r#"{"socketPath": "/a", "timeoutMs": 99}"#, "timeoutMs"),
            (r#"{"socketPath": "/a", "timeoutMs": 60001}"#, "timeoutMs"),
            (r#"{"socketPath": "/a", "waitMaxMs": 600001}"#, "waitMaxMs"),
            (
                r#"{"socketPath": "/a", "transport": "http", "http": {"port": 0}}"#,
                "http.port",
            ),
            (
                r#"{"socketPath": "/a", "transport": "http", "http": {"port": 65536}}"#,
                "http.port",
            ),
            (r#"{"socketPath": "/a", "coreId": ""}"#, "coreId"),
            (r#"{"socketPath": "/a", "sendMode": "force"}"#, "sendMode"),
            (r#"{"socketPath": "/a", "transport": "tcp"}"#, "transport"),
            (r#"{"socketPath": "/a", "http": {"port": 0}}"#, "http.port"),
            (
                r#"{"socketPath": "/a", "transport": "http", "http": {"allowedHosts": []}}"#,
                "http.allowedHosts",
            ),
            (
                r#"{"socketPath": "/a", "http": {"allowedOrigins": ["https://a.example/mcp"]}}"#,
                "http.allowedOrigins[0]",
            ),
        ] {
            let err = parse(text).expect_err(text);
            assert!(err.to_string().contains(key), "{text}: {err}");
        }
    }

    #[test]
    fn the_shipped_examples_are_valid() {
        let stdio = parse(include_str!("../examples/config.stdio.json")).unwrap();
        assert_eq!(stdio.transport, Transport::Stdio);
        assert_eq!(stdio.send_allowlist.len(), 1);
        let http = parse(include_str!("../examples/config.http.json")).unwrap();
        assert!(matches!(
            http.transport,
            Transport::Http(HttpConfig { port: 8765, .. })
        ));
    }

    #[test]
    fn http_defaults_pin_hosts_to_the_port() {
        let config =
            parse(r#"{"socketPath": "/a", "transport": "http", "http": {"port": 9000}}"#).unwrap();
        let Transport::Http(http) = config.transport else {
            panic!("expected http")
        };
        assert_eq!(http.allowed_hosts, ["127.0.0.1:9000", "localhost:9000"]);
        assert!(http.allowed_origins.is_empty());
    }

    #[test]
    fn approval_needs_the_core_id_and_the_exact_lifetime() {
        let config = parse(
            r#"{"socketPath": "/a", "coreId": "c1", "sendAllowlist": [{"address": "t1", "created_ms": 5}]}"#,
        )
        .unwrap();
        let lifetime = |a: &str, c| TerminalLifetime {
            address: a.into(),
            created_ms: c,
        };
        assert!(config.is_send_approved("c1", &lifetime("t1", 5)));
        assert!(!config.is_send_approved("c2", &lifetime("t1", 5)));
        assert!(!config.is_send_approved("c1", &lifetime("t1", 6)));
        assert!(!config.is_send_approved("c1", &lifetime("t2", 5)));
    }
}
