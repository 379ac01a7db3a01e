//! The hc 0.1.15 socket contract as types, and nothing else: method names,
//! parameters, result shapes, statuses, handshake pins and error codes.
//!
//! This is the ONE place in the adapter that spells a method name, a field
//! name or an error code of hc. A correction after checking hc's published
//! schema is a change to this file only. No I/O lives here; `conn` frames
//! these types on the socket and `client` gives them typed calls.

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub use super::core_id::{CoreId, InvalidCoreId, MAX_CORE_ID_CHARS};

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

/// hc's answer to `hc.hello`: who this core is.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
pub struct Hello {
    pub core_id: CoreId,
    pub version: String,
    pub generation: u64,
    pub framing: String,
    pub pid: u64,
    pub started_ms: i64,
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

/// One terminal lifetime; `(address, created_ms)` names it, since hc reuses
/// addresses.
// Unknown extra fields from hc are tolerated; the documented ones must be
// present with their documented types.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize, schemars::JsonSchema)]
pub struct TerminalRecord {
    pub address: String,
    pub created_ms: i64,
    pub finished_ms: Option<i64>,
    pub exit_code: Option<i64>,
    pub status: TerminalStatus,
    pub status_seq: u64,
    pub title: Option<String>,
    pub cwd: Option<String>,
    pub program: Option<String>,
    pub submit_key: String,
    pub rows: u32,
    pub cols: u32,
}

impl TerminalRecord {
    pub fn is_finished(&self) -> bool {
        self.finished_ms.is_some()
    }
}

#[derive(Debug, Serialize)]
pub struct ListParams {
    pub include_finished: bool,
}

#[derive(Debug, Deserialize)]
pub struct ListResult {
    pub terminals: Vec<TerminalRecord>,
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
#[derive(Debug, Clone, Deserialize)]
pub struct ReadResult {
    pub address: String,
    pub created_ms: i64,
    pub text: String,
    pub complete: bool,
    pub rows: u32,
    pub cols: u32,
    pub status: TerminalStatus,
    pub status_seq: u64,
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
#[derive(Debug, Clone, Deserialize)]
pub struct SendResult {
    pub address: String,
    pub created_ms: i64,
    pub accepted: bool,
    pub status: TerminalStatus,
    pub status_seq: u64,
}

/// hc's own error kinds (contract section 5). Each is recognised only when
/// `code`, `message` and `data.kind` all agree.
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

    /// The kind of a JSON-RPC error object, only when code, message and
    /// `data.kind` name the same documented kind.
    pub fn classify(code: i64, message: &str, data: Option<&Value>) -> Option<ErrorKind> {
        let data_kind = data.and_then(|d| d.get("kind")).and_then(Value::as_str);
        Self::ALL
            .into_iter()
            .find(|k| k.code() == code && k.name() == message && data_kind == Some(k.name()))
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
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_mismatch_needs_code_message_and_kind_to_agree() {
        let data = json!({"kind": "status_mismatch", "address": "t1"});
        assert_eq!(
            ErrorKind::classify(-32000, "status_mismatch", Some(&data)),
            Some(ErrorKind::StatusMismatch)
        );
        assert_eq!(ErrorKind::classify(-32000, "status_mismatch", None), None);
        assert_eq!(
            ErrorKind::classify(-32001, "status_mismatch", Some(&data)),
            None
        );
        assert_eq!(ErrorKind::classify(-32000, "busy", Some(&data)), None);
        let other = json!({"kind": "busy"});
        assert_eq!(
            ErrorKind::classify(-32000, "status_mismatch", Some(&other)),
            None
        );
    }

    #[test]
    fn send_params_spell_if_and_omit_it_when_unguarded() {
        let guarded = SendParams {
            address: "t1",
            text: "hi",
            submit: true,
            guard: Some(SendGuard::Idle),
            force: false,
        };
        assert_eq!(
            serde_json::to_value(&guarded).unwrap(),
            json!({"address":"t1","text":"hi","submit":true,"if":"idle","force":false})
        );
        let unguarded = SendParams {
            guard: None,
            ..guarded
        };
        assert_eq!(
            serde_json::to_value(&unguarded).unwrap(),
            json!({"address":"t1","text":"hi","submit":true,"force":false})
        );
    }
}
