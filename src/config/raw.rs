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

use super::{ConfigError, SendMode};
use crate::json_keys::{self, Repeat, Walked};

pub(super) const DEFAULT_TIMEOUT_MS: u64 = 15_000;
pub(super) const DEFAULT_WAIT_MAX_MS: u64 = 600_000;

/// One approved terminal lifetime as the file spells it.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RawLifetime {
    pub address: String,
    pub created_ms: i64,
    /// TAB and LF may be sent to this lifetime (default false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub multiline: bool,
    /// How this lifetime may be prompted (default: the top-level sendMode).
    #[serde(default, rename = "sendMode", skip_serializing_if = "Option::is_none")]
    pub send_mode: Option<SendMode>,
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
    pub send_allowlist: Vec<RawLifetime>,
    #[serde(default = "default_timeout_ms")]
    pub timeout_ms: u64,
    #[serde(default = "default_wait_max_ms")]
    pub wait_max_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audit_log: Option<PathBuf>,
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
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth: Option<super::auth::RawAuth>,
}

fn default_timeout_ms() -> u64 {
    DEFAULT_TIMEOUT_MS
}

fn default_wait_max_ms() -> u64 {
    DEFAULT_WAIT_MAX_MS
}

impl RawConfig {
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

/// What a repeated key's refusal says: the key where it is, and both lines.
fn repeated(text: &str, repeat: &Repeat) -> String {
    let mut key = String::new();
    for part in repeat.path.iter().chain([&repeat.key]) {
        if part.bytes().all(|b| b.is_ascii_digit()) && !key.is_empty() {
            key.push_str(&format!("[{part}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(part);
        }
    }
    format!(
        "`{key}` is given twice (lines {} and {}): keep one of them (a repeated key would otherwise silently take its last value)",
        json_keys::line_of(text, repeat.offsets.0),
        json_keys::line_of(text, repeat.offsets.1)
    )
}

fn figment_detail(error: figment::Error) -> String {
    let key = error.path.join(".");
    let kind = match &error.kind {
        // figment's own wording nests quotes inside quotes; say it plainly.
        figment::error::Kind::UnknownField(field, known) => {
            return format!(
                "unknown key {field:?}{} (a misspelling?); the keys here are: {}",
                match key.rsplit_once('.') {
                    Some((parent, _)) => format!(" in {parent:?}"),
                    None => String::new(),
                },
                known.join(", ")
            );
        }
        // figment's own wording quotes the list inside quotes
        // (``a` or `b``); say it plainly.
        figment::error::Kind::UnknownVariant(found, expected) => {
            format!("{found:?} is not one of: {}", expected.join(", "))
        }
        kind => kind.to_string(),
    };
    if key.is_empty() {
        kind
    } else {
        format!("`{key}`: {kind}")
    }
}
