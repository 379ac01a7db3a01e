//! hc's error kinds, and the standard JSON-RPC codes it uses.

use serde_json::Value;

/// hc's own error kinds (contract section 5). Each is recognised by `code`
/// and `data.kind` together; `message` is human text (a real core says
/// `unknown method "x"`), shown but never read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// -32000 `status_mismatch`: the `if` guard failed; nothing was written.
    StatusMismatch,
    /// -32001 `not_found`: no terminal at that address.
    NotFound,
    /// -32002 `finished`: the terminal's program has exited.
    Finished,
    /// -32003 `blocked`: the program is blocked and the send had no `force`.
    Blocked,
    /// -32004 `busy`: the input queue is full or the keyboard-quiet wait timed
    /// out.
    Busy,
    /// -32005 `machine_unavailable`: the terminal's machine is not
    /// connected; nothing was forwarded (contract §8).
    MachineUnavailable,
    /// -32006 `machine_lost`: the connection to the terminal's machine was
    /// lost while the call was in flight (contract §8).
    MachineLost,
    /// -32010 `unsupported_generation`: the handshake asked for a generation
    /// hc does not speak.
    UnsupportedGeneration,
    /// -32099 `internal`: anything else.
    Internal,
}

impl ErrorKind {
    const ALL: [ErrorKind; 9] = [
        ErrorKind::StatusMismatch,
        ErrorKind::NotFound,
        ErrorKind::Finished,
        ErrorKind::Blocked,
        ErrorKind::Busy,
        ErrorKind::MachineUnavailable,
        ErrorKind::MachineLost,
        ErrorKind::UnsupportedGeneration,
        ErrorKind::Internal,
    ];

    /// The JSON-RPC `code` hc answers this kind with.
    pub fn code(self) -> i64 {
        match self {
            ErrorKind::StatusMismatch => -32000,
            ErrorKind::NotFound => -32001,
            ErrorKind::Finished => -32002,
            ErrorKind::Blocked => -32003,
            ErrorKind::Busy => -32004,
            ErrorKind::MachineUnavailable => -32005,
            ErrorKind::MachineLost => -32006,
            ErrorKind::UnsupportedGeneration => -32010,
            ErrorKind::Internal => -32099,
        }
    }

    /// The `data.kind` hc names this kind with.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::StatusMismatch => "status_mismatch",
            ErrorKind::NotFound => "not_found",
            ErrorKind::Finished => "finished",
            ErrorKind::Blocked => "blocked",
            ErrorKind::Busy => "busy",
            ErrorKind::MachineUnavailable => "machine_unavailable",
            ErrorKind::MachineLost => "machine_lost",
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
    pub fn all() -> [ErrorKind; 9] {
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
