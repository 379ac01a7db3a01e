//! The config file as written: figment parses the text into a [`RawConfig`]
//! that refuses unknown keys (a misspelt key must never silently change
//! behaviour) and fills the documented defaults. Validation into a
//! [`super::Config`] happens after this, in one place.
//!
//! figment reads a string here, not the file: the file is opened once, its
//! owner and mode checked on that open descriptor, and the same bytes parsed
//! (see `file`). A path-based provider would read the file a second time,
//! after the check, and the two could differ.

use std::path::{Path, PathBuf};

use figment::Figment;
use figment::providers::{Format, Json};
use serde::{Deserialize, Serialize};

use super::error::ConfigError;
use super::parse_detail::{figment_detail, json_slip, repeated};
use super::send_mode::SendMode;
use crate::json_keys::{self, Walked};

pub(super) const DEFAULT_TIMEOUT_MS: u64 = 15_000;
pub(super) const DEFAULT_WAIT_MAX_MS: u64 = 600_000;
pub(super) const DEFAULT_CONFIRM_TIMEOUT_MS: u64 = 120_000;
/// The in-call wait for an answer: under the 60 s many hosts give one tool
/// call, so the host does not end the call before the human can answer.
pub(super) const DEFAULT_CONFIRM_CALL_TIMEOUT_MS: u64 = 50_000;
/// The bound of one send: hc holds a send up to 60 s while the user has a
/// draft in the terminal, plus its submission checks; public clients of
/// current cores allow 90 s.
pub(super) const DEFAULT_SEND_TIMEOUT_MS: u64 = 90_000;

/// One hc version the operator accepted (`inspect-core --check-contract
/// --accept` writes it).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an accepted version: an object with \"version\", \"document_sha256\", \"checked_ms\", \"guard\" and maybe \"params_omitted\" (what `inspect-core --check-contract --accept` writes)"
)]
pub struct RawHcVersion {
    /// `version`: hc's version as its hello reports it.
    pub version: String,
    /// `document_sha256`: SHA-256 of the core's `rpc.discover` document in
    /// canonical JSON, or null when the core did not describe itself.
    pub document_sha256: Option<String>,
    /// `checked_ms`: when the check ran, in ms since the Unix epoch.
    pub checked_ms: u64,
    /// `guard`: how the core showed its `if` guard when it was checked;
    /// absent in entries written before guards had to be shown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<GuardShown>,
    /// `params_omitted`: params the core's document does not declare,
    /// which sends to it leave out (only `force`, false being hc's
    /// default); absent when none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub params_omitted: Vec<OmittedParam>,
}

/// A param sends to an accepted core leave out (`hcVersions[].params_omitted`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum OmittedParam {
    /// `terminal.send`'s `force`: hc's default is false, the only value
    /// the adapter ever sends.
    Force,
}

/// How a core showed its `if` guard (`hcVersions[].guard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GuardShown {
    /// Its own `rpc.discover` document declares it (`document_sha256`
    /// binds that document).
    Document,
    /// A live guard check saw it refuse a mismatching send.
    LiveCheck,
}

/// One approved terminal lifetime as the file spells it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(
    deny_unknown_fields,
    expecting = "an approved lifetime: an object with \"address\" and \"created_ms\" (what `allow` writes)"
)]
pub struct RawLifetime {
    /// `address`: the terminal's address.
    pub address: String,
    /// `created_ms`: hc's `created_ms` of the lifetime.
    pub created_ms: i64,
    /// TAB and LF may be sent to this lifetime (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multiline: bool,
    /// How this lifetime may be prompted (default: the top-level sendMode).
    #[serde(default, rename = "sendMode", skip_serializing_if = "Option::is_none")]
    pub send_mode: Option<SendMode>,
    /// Each prompt to this lifetime waits for a human's confirmation
    /// through the MCP client (`allow --confirm`; default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub confirm: bool,
    /// `machineCoreId`: for a machine's terminal (`NAME/tN`), the core_id
    /// of that machine's own core when it was approved; sends go only while
    /// the machine shows the same one.
    #[serde(
        default,
        rename = "machineCoreId",
        skip_serializing_if = "Option::is_none"
    )]
    pub machine_core_id: Option<String>,
}

/// `transport` as the file spells it.
#[derive(Debug, Clone, Copy, Deserialize, Serialize, Default, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum RawTransport {
    /// `stdio` (the default): the MCP host starts `serve`.
    #[default]
    Stdio,
    /// `http`: MCP over HTTP on the loopback.
    Http,
}

/// The config file as written, before validation.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct RawConfig {
    /// `socketPath`: hc's socket (required).
    pub socket_path: PathBuf,
    /// `transport` (default stdio).
    #[serde(default)]
    pub transport: RawTransport,
    /// `coreId`: the core_id sends are approved for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub core_id: Option<String>,
    /// `sendMode`: the mode of every approval that names none (default
    /// idle-only).
    #[serde(default)]
    pub send_mode: SendMode,
    /// `sendAllowlist`: the approved terminal lifetimes (default none).
    #[serde(default)]
    pub send_allowlist: Vec<RawLifetime>,
    /// `machines`: the core's machines this adapter shows (default all).
    #[serde(default, skip_serializing_if = "super::machines::RawMachines::is_all")]
    pub machines: super::machines::RawMachines,
    /// `hcVersions`: hc versions accepted beyond the built-in one (default
    /// none).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hc_versions: Vec<RawHcVersion>,
    /// `timeoutMs`: the bound of each core call, in ms (default 15,000).
    #[serde(
        default = "default_timeout_ms",
        skip_serializing_if = "is_default_timeout"
    )]
    pub timeout_ms: u64,
    /// `sendTimeoutMs`: the bound of one `terminal.send`, in ms (default
    /// 90,000).
    #[serde(
        default = "default_send_timeout_ms",
        skip_serializing_if = "is_default_send_timeout"
    )]
    pub send_timeout_ms: u64,
    /// `waitMaxMs`: the longest one wait call may wait, in ms (default
    /// 600,000).
    #[serde(
        default = "default_wait_max_ms",
        skip_serializing_if = "is_default_wait_max"
    )]
    pub wait_max_ms: u64,
    /// `confirmTimeoutMs`: how long a 2026-07-28 confirmation (its request
    /// state) stays valid, in ms (default 120,000); it holds no call open.
    #[serde(
        default = "default_confirm_timeout_ms",
        skip_serializing_if = "is_default_confirm_timeout"
    )]
    pub confirm_timeout_ms: u64,
    /// `confirmCallTimeoutMs`: how long a question asked inside the tool
    /// call (`elicitation/create`, before 2026-07-28) waits for the human's
    /// answer, in ms (default 50,000).
    #[serde(
        default = "default_confirm_call_timeout_ms",
        skip_serializing_if = "is_default_confirm_call_timeout"
    )]
    pub confirm_call_timeout_ms: u64,
    /// `auditLog`: the file each send attempt's audit line is also appended to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_log: Option<PathBuf>,
    /// `http`: the HTTP transport's settings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http: Option<RawHttp>,
}

/// `http` as the file spells it.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq, Default)]
#[serde(
    deny_unknown_fields,
    rename_all = "camelCase",
    expecting = "the HTTP settings: an object such as {\"port\": 8765}"
)]
pub struct RawHttp {
    /// `port`: the loopback port (default 8765).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub port: Option<u64>,
    /// `allowedHosts`: the exact `Host` values accepted (default
    /// `127.0.0.1:<port>` and `localhost:<port>`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_hosts: Option<Vec<String>>,
    /// `allowedOrigins`: the exact `Origin` values accepted (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_origins: Option<Vec<String>>,
    /// `auth`: how HTTP callers authenticate (default token mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<super::auth::RawAuth>,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn default_send_timeout_ms() -> u64 {
    DEFAULT_SEND_TIMEOUT_MS
}

fn is_default_send_timeout(ms: &u64) -> bool {
    *ms == DEFAULT_SEND_TIMEOUT_MS
}

fn default_wait_max_ms() -> u64 {
    DEFAULT_WAIT_MAX_MS
}

fn default_confirm_timeout_ms() -> u64 {
    DEFAULT_CONFIRM_TIMEOUT_MS
}

fn default_confirm_call_timeout_ms() -> u64 {
    DEFAULT_CONFIRM_CALL_TIMEOUT_MS
}

fn is_default_confirm_call_timeout(ms: &u64) -> bool {
    *ms == DEFAULT_CONFIRM_CALL_TIMEOUT_MS
}

// A config the adapter writes says only what differs from the defaults.
fn is_default_timeout(ms: &u64) -> bool {
    *ms == DEFAULT_TIMEOUT_MS
}

fn is_default_wait_max(ms: &u64) -> bool {
    *ms == DEFAULT_WAIT_MAX_MS
}

fn is_default_confirm_timeout(ms: &u64) -> bool {
    *ms == DEFAULT_CONFIRM_TIMEOUT_MS
}

impl RawConfig {
    /// A first config: hc's socket at `socket_path`, served over
    /// `transport`, `idle-only`, nothing approved, every other key at its
    /// default.
    pub fn first(socket_path: PathBuf, transport: RawTransport) -> RawConfig {
        RawConfig {
            socket_path,
            transport,
            core_id: None,
            send_mode: SendMode::IdleOnly,
            send_allowlist: Vec::new(),
            machines: super::machines::RawMachines::All,
            hc_versions: Vec::new(),
            timeout_ms: DEFAULT_TIMEOUT_MS,
            send_timeout_ms: DEFAULT_SEND_TIMEOUT_MS,
            wait_max_ms: DEFAULT_WAIT_MAX_MS,
            confirm_timeout_ms: DEFAULT_CONFIRM_TIMEOUT_MS,
            confirm_call_timeout_ms: DEFAULT_CONFIRM_CALL_TIMEOUT_MS,
            audit_log: None,
            http: None,
        }
    }

    /// Reads `path` (after the checks of [`super::file::read_checked`]) and
    /// parses it.
    pub fn load(path: &Path) -> Result<RawConfig, ConfigError> {
        RawConfig::parse(path, &super::file::read_checked(path)?.text)
    }

    /// Parses config text; `path` only labels messages. A key given twice
    /// in one object is refused, naming both lines: serde would silently
    /// take the last value, and `allow` would rewrite the file without the
    /// first.
    pub fn parse(path: &Path, text: &str) -> Result<RawConfig, ConfigError> {
        if let Err(e) = serde_json::from_str::<serde::de::IgnoredAny>(text) {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                detail: format!(
                    "it is not valid JSON ({e}){}: fix the JSON in that file",
                    json_slip(text, &e)
                ),
            });
        }
        if let Err(Walked::Repeated(repeat)) = json_keys::check_counted(text) {
            return Err(ConfigError::Parse {
                path: path.to_path_buf(),
                detail: repeated(text, &repeat),
            });
        }
        Figment::from(Json::string(text))
            .extract::<RawConfig>()
            .map_err(|e| ConfigError::Parse {
                path: path.to_path_buf(),
                detail: figment_detail(e),
            })
    }
}
