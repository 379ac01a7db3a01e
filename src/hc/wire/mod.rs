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

mod context;
mod error_kind;
mod lenient;
mod machine;
pub mod needs;
mod record;

pub use super::core_id::{CoreId, InvalidCoreId, MAX_CORE_ID_CHARS};
pub use context::{MAX_STATUS_REASON_CHARS, StatusContext};
pub use error_kind::{ErrorKind, standard_code_name};
pub use machine::{
    MAX_MACHINE_NAME_CHARS, MAX_MACHINES, MachineListResult, MachineRecord, MachineState,
    check_machine_name, machine_of, read_machines,
};
pub use record::{
    ListResult, MAX_ADDRESS_CHARS, MAX_UNREADABLE, TerminalRecord, UnreadableRecord, check_address,
    read_records,
};

/// The only hc version this adapter speaks; anything else is refused at the
/// handshake rather than guessed at.
pub const PINNED_VERSION: &str = "0.1.15";
/// Protocol generation of hc 0.1.15.
pub const PINNED_GENERATION: u64 = 1;
/// JSON-RPC's code for a method the server does not have.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Line framing: one JSON-RPC message per `\n`-terminated line.
pub const PINNED_FRAMING: &str = "plain";
/// The hc methods the adapter calls. `terminal.send` is the only one that
/// writes to a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// `hc.hello`: the handshake, first on every connection.
    Hello,
    /// `terminal.list`: every terminal, in one reply.
    List,
    /// `terminal.get`: one terminal's record.
    Get,
    /// `terminal.read`: one terminal's screen.
    Read,
    /// `terminal.send`: paste text into a terminal and submit it (the only
    /// writer).
    Send,
    /// `rpc.discover`: the core's own OpenRPC document (OpenRPC's discovery
    /// method, which a document need not list itself). Read-only.
    Discover,
    /// `machine.list`: the machines this core added, with their state
    /// (contract §8, a model: not in the 0.1.15 document, and a core
    /// without it has no machines). Read-only.
    MachineList,
}

impl Method {
    /// Every method the contract document lists, in its order
    /// (`rpc.discover` is OpenRPC's own, not listed).
    pub const ALL: [Method; 5] = [
        Method::Hello,
        Method::List,
        Method::Get,
        Method::Read,
        Method::Send,
    ];

    /// The method's name on the wire, e.g. `terminal.send`.
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Hello => "hc.hello",
            Method::List => "terminal.list",
            Method::Get => "terminal.get",
            Method::Read => "terminal.read",
            Method::Send => "terminal.send",
            Method::Discover => "rpc.discover",
            Method::MachineList => "machine.list",
        }
    }
}

impl std::fmt::Display for Method {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `hc.hello`'s `client` param: who is calling.
#[derive(Debug, Serialize)]
pub struct ClientInfo<'a> {
    /// `name`: the adapter's crate name.
    pub name: &'a str,
    /// `version`: the adapter's version.
    pub version: &'a str,
}

/// `hc.hello`'s params: the pins asked for, and who is calling.
#[derive(Debug, Serialize)]
pub struct HelloParams<'a> {
    /// `generation`: the protocol generation asked for ([`PINNED_GENERATION`]).
    pub generation: u64,
    /// `framing`: the line framing asked for ([`PINNED_FRAMING`]).
    pub framing: &'a str,
    /// `client`: the adapter's name and version.
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
    /// hc's `core_id`: this hc process incarnation, new at every hc start.
    pub core_id: CoreId,
    /// hc's `version`; only [`PINNED_VERSION`] is accepted.
    pub version: String,
    /// hc's `generation`; only [`PINNED_GENERATION`] is accepted.
    pub generation: u64,
    /// hc's `framing`; only [`PINNED_FRAMING`] is accepted.
    pub framing: String,
    /// hc's `pid`: its process id, when sent.
    #[serde(default)]
    pub pid: Option<u64>,
    /// hc's `started_ms`: when it started, in ms since the Unix epoch, when
    /// sent.
    #[serde(default)]
    pub started_ms: Option<i64>,
}

/// A terminal's state as the foreground program last reported it (OSC 7501):
/// `idle`, `working`, `done`, `blocked` (waiting for a human decision),
/// `error`, or `unknown` (none reported yet, or a word outside these six).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Deserialize, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TerminalStatus {
    /// Waiting for input.
    Idle,
    /// Busy with a task.
    Working,
    /// Finished a task, and waiting.
    Done,
    /// Waiting for a human decision (a dialog).
    Blocked,
    /// Reported an error.
    Error,
    /// No status reported yet, or a status word outside these six.
    Unknown,
}

impl TerminalStatus {
    /// The status as hc spells it, e.g. `idle`.
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

/// `terminal.list`'s params.
#[derive(Debug, Serialize)]
pub struct ListParams {
    /// `include_finished`: also list terminals whose program has exited.
    pub include_finished: bool,
}

/// `terminal.get`'s params.
#[derive(Debug, Serialize)]
pub struct GetParams<'a> {
    /// `address`: the terminal asked for.
    pub address: &'a str,
}

/// `terminal.read`'s params.
#[derive(Debug, Serialize)]
pub struct ReadParams<'a> {
    /// `address`: the terminal whose screen is read.
    pub address: &'a str,
    /// `lines`: history lines to stitch in; the client always sends 0 (the
    /// screen only).
    pub lines: u32,
}

/// `terminal.read`'s answer: the screen text and the status beside it.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct ReadResult {
    /// hc's `address`: the terminal read.
    pub address: String,
    /// hc's `created_ms`: the lifetime read, in ms since the Unix epoch.
    pub created_ms: i64,
    /// hc's `text`: the screen's rows joined by `\n`, trailing blanks trimmed.
    pub text: String,
    /// hc's `complete`: false when the screen was caught mid-update or not
    /// wholly captured.
    pub complete: bool,
    /// hc's `rows`: the screen's height, when sent.
    #[serde(default)]
    pub rows: Option<u32>,
    /// hc's `cols`: the screen's width, when sent.
    #[serde(default)]
    pub cols: Option<u32>,
    /// hc's `status`, read as [`TerminalStatus::from_reported`] reads it.
    #[serde(deserialize_with = "reported_status")]
    pub status: TerminalStatus,
    /// hc's `status_seq`: one more at every status change of the terminal.
    pub status_seq: u64,
    /// hc's `status_kind`, when sent (as in the record).
    #[serde(default, deserialize_with = "lenient::lenient")]
    pub status_kind: Option<String>,
    /// hc's `status_msg`, when sent: untrusted program text, raw.
    #[serde(default, deserialize_with = "lenient::lenient")]
    pub status_msg: Option<String>,
    /// hc's `status_ms`, when sent.
    #[serde(default, deserialize_with = "lenient::lenient")]
    pub status_ms: Option<i64>,
}

impl ReadResult {
    /// The reason, kind and age of its status as a record gives them
    /// (escaped, bounded, the age read now).
    pub fn status_context(&self) -> StatusContext {
        StatusContext::of(
            self.status_kind.as_deref(),
            self.status_msg.as_deref(),
            self.status_ms,
        )
    }
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
    /// Write only while the terminal is idle (`"if": "idle"`).
    Idle,
}

impl SendGuard {
    /// The guard as hc spells it in `if`.
    pub fn as_str(self) -> &'static str {
        match self {
            SendGuard::Idle => "idle",
        }
    }
}

/// `terminal.send`'s params.
#[derive(Debug, Serialize)]
pub struct SendParams<'a> {
    /// `address`: the terminal to write to.
    pub address: &'a str,
    /// `text`: what hc pastes.
    pub text: &'a str,
    /// `submit`: whether hc sends the terminal's submit key after the paste.
    pub submit: bool,
    /// `if`: the status hc compares under its input lock before writing;
    /// left out when none.
    #[serde(rename = "if", skip_serializing_if = "Option::is_none")]
    pub guard: Option<SendGuard>,
    /// `force`: false, or left out (hc's default is false) for a core
    /// whose accepted document does not declare it. Never true: `force`
    /// would skip the blocked refusal and the keyboard-quiet wait, which
    /// this adapter never does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub force: Option<bool>,
}

impl SendParams<'_> {
    /// The name of the `force` param: the one param the adapter can do
    /// without.
    pub const FORCE: &'static str = "force";
}

/// `terminal.send`'s answer: the input was accepted (not: the task is done).
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
pub struct SendResult {
    /// hc's `address`: the terminal written to.
    pub address: String,
    /// hc's `created_ms`: the lifetime the input reached.
    pub created_ms: i64,
    /// hc's `accepted`: true when hc took the input (the client refuses
    /// anything else).
    pub accepted: bool,
    /// hc's `status` right after enqueueing, read as
    /// [`TerminalStatus::from_reported`] reads it.
    #[serde(deserialize_with = "reported_status")]
    pub status: TerminalStatus,
    /// hc's `status_seq` with that status.
    pub status_seq: u64,
    /// hc's `started`, when sent: false means hc took the request but did
    /// not start the delivery (the terminal's input held the user's draft
    /// past hc's draft protection), and nothing was typed. Absent on cores
    /// that do not send it, read as started. Any other value (`null`, a
    /// string) breaks the result's shape: after dispatch, UNKNOWN.
    #[serde(default, deserialize_with = "started_flag")]
    pub started: Option<bool>,
}

/// `started` when present: exactly `true` or `false`.
fn started_flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<bool>, D::Error> {
    match serde_json::Value::deserialize(d)? {
        serde_json::Value::Bool(started) => Ok(Some(started)),
        other => Err(serde::de::Error::custom(format!(
            "started is {other}, not true or false"
        ))),
    }
}

#[cfg(test)]
mod tests;
