//! The hc 0.1.15 socket contract as types, and nothing else: method names,
//! parameters, result shapes, statuses, handshake pins and error codes.
//!
//! This is the ONE place in the adapter that spells a method name, a field
//! name or an error code of hc, and the Rust mirror of the contract's
//! document, `hc-0.1.15.openrpc.json` beside it (tests check the two name
//! the same methods and fields). A correction after checking hc's
//! published schema is a change to those two files. No I/O lives here;
//! `conn` frames these types on the socket and `client` gives them typed
//! calls.
//!
//! Tolerant where safety allows, strict where it matters: a record needs
//! only what the tools cannot work without (`address`, `created_ms`,
//! `status`, `status_seq`), every other field may be absent and unknown
//! ones are ignored; a status outside the six is read as `unknown` (the
//! reported word kept beside it), never as idle or done; hc's error kinds
//! are recognised by `code` and `data.kind`, and `message` is only shown.
//! The handshake pins and the send result stay strict.

use serde::{Deserialize, Serialize};
use serde_json::Value;

mod record;

pub use super::core_id::{CoreId, InvalidCoreId, MAX_CORE_ID_CHARS};
pub use record::{
    ListResult, MAX_ADDRESS_CHARS, MAX_UNREADABLE, TerminalRecord, UnreadableRecord, check_address,
    read_records,
};

/// The only hc version this adapter speaks; anything else is refused at the
/// handshake rather than guessed at.
pub const PINNED_VERSION: &str = "0.1.15";
/// Protocol generation of hc 0.1.15.
pub const PINNED_GENERATION: u64 = 1;
/// Line framing: one JSON-RPC message per `\n`-terminated line.
pub const PINNED_FRAMING: &str = "plain";
/// The hc methods the adapter calls. `terminal.send` is the only one that
/// writes to a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Hello,
    List,
    Get,
    Read,
    Send,
}

impl Method {
    /// Every method, in the contract document's order.
    pub const ALL: [Method; 5] = [
        Method::Hello,
        Method::List,
        Method::Get,
        Method::Read,
        Method::Send,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Method::Hello => "hc.hello",
            Method::List => "terminal.list",
            Method::Get => "terminal.get",
            Method::Read => "terminal.read",
            Method::Send => "terminal.send",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Serialize)]
pub struct ClientInfo<'a> {
    pub name: &'a str,
    pub version: &'a str,
}

#[derive(Debug, Serialize)]
pub struct HelloParams<'a> {
    pub generation: u64,
    pub framing: &'a str,
    pub client: ClientInfo<'a>,
}

/// The OpenRPC document of the modelled contract: methods, params,
/// results and errors as JSON Schemas (`inspect-core --check-contract`
/// compares live replies with it).
pub const CONTRACT_DOCUMENT: &str = include_str!("../hc-0.1.15.openrpc.json");

/// hc's answer to `hc.hello`: who this core is. The pinned facts are
/// required; `pid` and `started_ms` are only shown.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
pub struct Hello {
    pub core_id: CoreId,
    pub version: String,
    pub generation: u64,
    pub framing: String,
    #[serde(default)]
    pub pid: Option<u64>,
    #[serde(default)]
    pub started_ms: Option<i64>,
}

/// A terminal's state as the foreground program last reported it (OSC 7501).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TerminalStatus {
    Idle,
    Working,
    Done,
    Blocked,
    Error,
    Unknown,
}

impl TerminalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TerminalStatus::Idle => "idle",
            TerminalStatus::Working => "working",
            TerminalStatus::Done => "done",
            TerminalStatus::Blocked => "blocked",
            TerminalStatus::Error => "error",
            TerminalStatus::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for TerminalStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Longest status word kept when hc reports one outside the six.
pub const MAX_REPORTED_STATUS_CHARS: usize = 64;

impl TerminalStatus {
    /// The modelled status hc's word names, else `unknown` with the word
    /// (printable and at most [`MAX_REPORTED_STATUS_CHARS`] characters;
    /// anything else is kept as its length only).
    pub fn from_reported(word: &str) -> (TerminalStatus, Option<String>) {
        const KNOWN: [TerminalStatus; 6] = [
            TerminalStatus::Idle,
            TerminalStatus::Working,
            TerminalStatus::Done,
            TerminalStatus::Blocked,
            TerminalStatus::Error,
            TerminalStatus::Unknown,
        ];
        match KNOWN.into_iter().find(|s| s.as_str() == word) {
            Some(status) => (status, None),
            None if word.chars().count() <= MAX_REPORTED_STATUS_CHARS
                && !word.is_empty()
                && !word.chars().any(crate::escape::is_hazard) =>
            {
                (TerminalStatus::Unknown, Some(word.to_owned()))
            }
            None => (
                TerminalStatus::Unknown,
                Some(format!("({} characters)", word.chars().count())),
            ),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct ListParams {
    pub include_finished: bool,
}

#[derive(Debug, Serialize)]
pub struct GetParams<'a> {
    pub address: &'a str,
}

#[derive(Debug, Serialize)]
pub struct ReadParams<'a> {
    pub address: &'a str,
    pub lines: u32,
}

/// `terminal.read`'s answer: the screen text and the status beside it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct ReadResult {
    pub address: String,
    pub created_ms: i64,
    pub text: String,
    pub complete: bool,
    #[serde(default)]
    pub rows: Option<u32>,
    #[serde(default)]
    pub cols: Option<u32>,
    #[serde(deserialize_with = "reported_status")]
    pub status: TerminalStatus,
    pub status_seq: u64,
}

/// A status word as [`TerminalStatus::from_reported`] reads it.
fn reported_status<'de, D: serde::Deserializer<'de>>(d: D) -> Result<TerminalStatus, D::Error> {
    let word = std::borrow::Cow::<str>::deserialize(d)?;
    Ok(TerminalStatus::from_reported(&word).0)
}

/// The status hc compares under its input lock before writing (`if`).
/// hc 0.1.15 cannot express `done`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SendGuard {
    Idle,
}

impl SendGuard {
    pub fn as_str(self) -> &'static str {
        match self {
            SendGuard::Idle => "idle",
        }
    }
}

#[derive(Debug, Serialize)]
pub struct SendParams<'a> {
    pub address: &'a str,
    pub text: &'a str,
    pub submit: bool,
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub guard: Option<SendGuard>,
    /// Always false: `force` would skip the blocked refusal and the
    /// keyboard-quiet wait, which this adapter never does.
    pub force: bool,
}

/// `terminal.send`'s answer: the input was accepted (not: the task is done).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct SendResult {
    pub address: String,
    pub created_ms: i64,
    pub accepted: bool,
    #[serde(deserialize_with = "reported_status")]
    pub status: TerminalStatus,
    pub status_seq: u64,
}

/// hc's own error kinds (contract section 5). Each is recognised by `code`
/// and `data.kind` together; `message` is human text (a real core says
/// `unknown method "x"`), shown but never read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    StatusMismatch,
    NotFound,
    Finished,
    Blocked,
    Busy,
    UnsupportedGeneration,
    Internal,
}

impl ErrorKind {
    const ALL: [ErrorKind; 7] = [
        ErrorKind::StatusMismatch,
        ErrorKind::NotFound,
        ErrorKind::Finished,
        ErrorKind::Blocked,
        ErrorKind::Busy,
        ErrorKind::UnsupportedGeneration,
        ErrorKind::Internal,
    ];

    pub fn code(self) -> i64 {
        match self {
            ErrorKind::StatusMismatch => -32000,
            ErrorKind::NotFound => -32001,
            ErrorKind::Finished => -32002,
            ErrorKind::Blocked => -32003,
            ErrorKind::Busy => -32004,
            ErrorKind::UnsupportedGeneration => -32010,
            ErrorKind::Internal => -32099,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::StatusMismatch => "status_mismatch",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Finished => "finished",
            ErrorKind::Blocked => "blocked",
            ErrorKind::Busy => "busy",
            ErrorKind::UnsupportedGeneration => "unsupported_generation",
            ErrorKind::Internal => "internal",
        }
    }

    /// The kind of a JSON-RPC error object, only when its code and
    /// `data.kind` name the same documented kind; `message` plays no part.
    pub fn classify(code: i64, data: Option<&Value>) -> Option<ErrorKind> {
        let data_kind = data.and_then(|d| d.get("kind")).and_then(Value::as_str);
        Self::ALL
            .into_iter()
            .find(|k| k.code() == code && data_kind == Some(k.name()))
    }

    /// Every kind, in the contract's order.
    pub fn all() -> [ErrorKind; 7] {
        Self::ALL
    }
}

/// Standard JSON-RPC codes hc uses, kept here so messages can name them.
pub fn standard_code_name(code: i64) -> Option<&'static str> {
    match code {
        -32700 => Some("parse error"),
        -32600 => Some("invalid request"),
        -32601 => Some("method not found"),
        -32602 => Some("invalid params"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
