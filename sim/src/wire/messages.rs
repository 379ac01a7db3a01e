//! The params and results of each hc method, and the terminal record
//! (contract §3 and §4): field names and which fields are optional.

use serde::{Deserialize, Serialize};

use super::{Guard, Status};

/// `hc.hello` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct HelloParams {
    pub generation: i64,
    pub framing: String,
    /// Read so that a hello without a valid `client` is refused, as hc
    /// refuses it; the simulator has no use for its value.
    #[expect(dead_code, reason = "required on the wire, unused by the simulator")]
    pub client: ClientInfo,
}

/// Who is calling, as the client says in `hc.hello`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[expect(dead_code, reason = "required on the wire, unused by the simulator")]
pub(crate) struct ClientInfo {
    pub name: String,
    pub version: String,
}

/// `hc.hello` result.
#[derive(Debug, Serialize)]
pub(crate) struct HelloResult<'a> {
    pub core_id: &'a str,
    pub version: &'a str,
    pub generation: u64,
    pub framing: &'a str,
    pub pid: u32,
    pub started_ms: u64,
}

/// `terminal.list` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListParams {
    pub include_finished: bool,
}

/// `terminal.list` result.
#[derive(Debug, Serialize)]
pub(crate) struct ListResult {
    pub terminals: Vec<Record>,
}

/// `terminal.get` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct GetParams {
    pub address: String,
}

/// `terminal.read` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadParams {
    pub address: String,
    pub lines: u64,
}

/// `terminal.read` result.
#[derive(Debug, Serialize)]
pub(crate) struct ReadResult {
    pub address: String,
    pub created_ms: u64,
    pub text: String,
    pub complete: bool,
    pub rows: u16,
    pub cols: u16,
    pub status: Status,
    pub status_seq: u64,
}

/// `terminal.send` params. `if` and `force` may be left out (`force`
/// then is false, hc's default: a client may leave it out for a core whose
/// document does not declare it).
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendParams {
    pub address: String,
    pub text: String,
    pub submit: bool,
    #[serde(rename = "if", default)]
    pub guard: Option<Guard>,
    #[serde(default)]
    pub force: Option<bool>,
}

/// `terminal.send` result.
#[derive(Debug, Serialize)]
pub(crate) struct SendResult {
    pub address: String,
    pub created_ms: u64,
    pub accepted: bool,
    pub status: Status,
    pub status_seq: u64,
    /// False: draft protection held the send to the end and nothing was
    /// written (model from public clients, unverified).
    pub started: bool,
}

/// The terminal record (contract §3).
#[derive(Debug, Clone, Serialize)]
pub struct Record {
    pub address: String,
    pub created_ms: u64,
    pub finished_ms: Option<u64>,
    pub exit_code: Option<i32>,
    pub status: Status,
    pub status_seq: u64,
    pub title: String,
    pub cwd: String,
    pub program: String,
    pub submit_key: &'static str,
    pub rows: u16,
    pub cols: u16,
}
