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
use super::send_mode::SendMode;
use crate::json_keys::{self, Repeat, Walked};

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

/// What JSON's common slips look like where parsing stopped: a comma
/// before a closing bracket, or a comment; empty for anything else.
fn json_slip(text: &str, error: &serde_json::Error) -> &'static str {
    let Some(line) = text.lines().nth(error.line().saturating_sub(1)) else {
        return "";
    };
    // serde_json counts columns in bytes, from 1, at the offending one.
    let at = line
        .get(error.column().saturating_sub(1)..)
        .unwrap_or_default()
        .trim_start();
    let before: String = text
        .lines()
        .take(error.line().saturating_sub(1))
        .chain(std::iter::once(
            line.get(..error.column().saturating_sub(1))
                .unwrap_or_default(),
        ))
        .collect::<Vec<_>>()
        .join("\n");
    if at.starts_with("//") || at.starts_with("/*") || at.starts_with('#') {
        "; JSON has no comments: remove it"
    } else if (at.starts_with('}') || at.starts_with(']')) && before.trim_end().ends_with(',') {
        "; JSON allows no comma before a closing } or ]: remove it"
    } else {
        ""
    }
}

/// What a repeated key's refusal says: the key where it is, and both lines.
fn repeated(text: &str, repeat: &Repeat) -> String {
    let key = key_words(repeat.path.iter().chain([&repeat.key]));
    format!(
        "`{key}` is given twice (lines {} and {}): keep one of them (a repeated key would otherwise silently take its last value)",
        json_keys::line_of(text, repeat.offsets.0),
        json_keys::line_of(text, repeat.offsets.1)
    )
}

/// A key as the config spells it: `sendAllowlist[0].created_ms`.
fn key_words<'a>(parts: impl IntoIterator<Item = &'a String>) -> String {
    let mut key = String::new();
    for part in parts {
        if part.bytes().all(|b| b.is_ascii_digit()) && !key.is_empty() {
            key.push_str(&format!("[{part}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(part);
        }
    }
    key
}

fn figment_detail(error: figment::Error) -> String {
    let key = key_words(&error.path);
    let kind = match &error.kind {
        // figment's own wording nests quotes inside quotes; say it plainly.
        figment::error::Kind::UnknownField(field, known) => {
            return format!(
                "unknown key {field:?}{} ({}); the keys here are: {}",
                match key.rsplit_once('.') {
                    Some((parent, _)) => format!(" in {parent:?}"),
                    None => String::new(),
                },
                match known.iter().find(|k| k.eq_ignore_ascii_case(field)) {
                    Some(meant) => format!("did you mean {meant:?}? keys are case-sensitive"),
                    None => "a misspelling?".to_owned(),
                },
                known.join(", ")
            );
        }
        // figment's own wording quotes the list inside quotes
        // (``a` or `b``); say it plainly.
        figment::error::Kind::UnknownVariant(found, expected) => {
            format!("{found:?} is not one of: {}", expected.join(", "))
        }
        // A number of another type, or out of its type's range: what the
        // key takes and means, never a Rust type.
        figment::error::Kind::InvalidType(actual, _)
        | figment::error::Kind::InvalidValue(actual, _)
            if super::numbers::at(&key).is_some() =>
        {
            let number = super::numbers::at(&key).expect("just found");
            let hint = match actual {
                figment::error::Actual::Str(s) if s.trim().parse::<f64>().is_ok() => {
                    ": write it as a number, without quotes"
                }
                _ => "",
            };
            format!("{}, got {}{hint}", number.wants(), actual_words(actual))
        }
        figment::error::Kind::InvalidType(actual, expected)
        | figment::error::Kind::InvalidValue(actual, expected) => format!(
            "must be {}, got {}",
            expected_words(expected),
            actual_words(actual)
        ),
        kind => kind.to_string(),
    };
    if key.is_empty() {
        kind
    } else {
        format!("`{key}`: {kind}")
    }
}

/// A value as the config's JSON spells it, not as serde names its type.
fn actual_words(actual: &figment::error::Actual) -> String {
    use figment::error::Actual;
    match actual {
        Actual::Bool(b) => b.to_string(),
        Actual::Unsigned(n) => n.to_string(),
        Actual::Signed(n) => n.to_string(),
        Actual::Float(n) => n.to_string(),
        Actual::Char(c) => format!("the string {:?}", c.to_string()),
        Actual::Str(s) => format!(
            "the string {}",
            crate::escape::bounded(&format!("{s:?}"), 80)
        ),
        Actual::Unit | Actual::Option => "null".to_owned(),
        Actual::Seq => "a list".to_owned(),
        Actual::Map => "an object".to_owned(),
        _ => "a value of another kind".to_owned(),
    }
}

/// What serde expected, in the config's words.
fn expected_words(expected: &str) -> String {
    let words = expected.trim_start_matches("a ").trim_start_matches("an ");
    match words {
        "u8" | "u16" | "u32" | "u64" | "u128" | "usize" | "i8" | "i16" | "i32" | "i64" | "i128"
        | "isize" => "a whole number".to_owned(),
        "f32" | "f64" => "a number".to_owned(),
        "string" | "str" | "borrowed string" => "a string".to_owned(),
        "boolean" | "bool" => "true or false".to_owned(),
        "sequence" => "a list".to_owned(),
        "map" => "an object".to_owned(),
        _ => expected.to_owned(),
    }
}
