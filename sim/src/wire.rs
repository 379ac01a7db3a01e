//! The hc 0.1.15 contract as data: every method name, field name, status,
//! limit and error code the simulator serves lives here and nowhere else, so a
//! correction after checking the real `hc.openrpc.json` is a one-place change.
//! This module does no I/O; it builds and parses JSON values only.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

/// The only JSON-RPC version hc speaks.
pub const JSONRPC_VERSION: &str = "2.0";
/// The hc version the simulator claims to be.
pub const HC_VERSION: &str = "0.1.15";
/// The protocol generation of hc 0.1.15 (the only one it supports).
pub const GENERATION: u64 = 1;
/// The only framing of generation 1: one JSON object per `\n`-ended line.
pub const FRAMING_PLAIN: &str = "plain";
/// The submit key of every simulated terminal.
pub const SUBMIT_KEY_ENTER: &str = "enter";
/// What the `enter` submit key writes to the program.
pub const ENTER_BYTES: &[u8] = b"\r";
/// hc caps `terminal.send` text at 64 KiB (contract §4).
pub const MAX_TEXT_BYTES: usize = 65_536;
/// Terminal height of every simulated terminal.
pub const TERMINAL_ROWS: u16 = 40;
/// Terminal width of every simulated terminal.
pub const TERMINAL_COLS: u16 = 120;
/// Bracketed paste start marker (written around a paste when the program
/// enabled mode 2004).
pub const PASTE_START: &[u8] = b"\x1b[200~";
/// Bracketed paste end marker.
pub const PASTE_END: &[u8] = b"\x1b[201~";
/// Method of the notification line the `notification` fault injects (hc
/// 0.1.15 itself never sends notifications on request connections).
pub const STATUS_NOTIFICATION: &str = "terminal.status";

/// The methods of hc 0.1.15.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Method {
    Hello,
    List,
    Get,
    Read,
    Send,
}

impl Method {
    /// Every method, in contract order.
    pub const ALL: [Method; 5] = [
        Method::Hello,
        Method::List,
        Method::Get,
        Method::Read,
        Method::Send,
    ];

    /// The method's wire name.
    pub fn name(self) -> &'static str {
        match self {
            Method::Hello => "hc.hello",
            Method::List => "terminal.list",
            Method::Get => "terminal.get",
            Method::Read => "terminal.read",
            Method::Send => "terminal.send",
        }
    }

    /// The method with this wire name, if hc has one.
    pub fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|method| method.name() == name)
    }
}

/// A terminal's self-reported state (contract §3).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Idle,
    Working,
    Done,
    Blocked,
    Error,
    Unknown,
}

impl Status {
    /// The status's wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Idle => "idle",
            Status::Working => "working",
            Status::Done => "done",
            Status::Blocked => "blocked",
            Status::Error => "error",
            Status::Unknown => "unknown",
        }
    }

    /// A state a program may report over OSC 7501 (`unknown` is not one).
    pub fn from_report(state: &str) -> Option<Status> {
        match state {
            "idle" => Some(Status::Idle),
            "working" => Some(Status::Working),
            "done" => Some(Status::Done),
            "blocked" => Some(Status::Blocked),
            "error" => Some(Status::Error),
            _ => None,
        }
    }
}

/// The statuses an `if` guard can name: only `idle` and `working`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Guard {
    Idle,
    Working,
}

impl Guard {
    pub fn status(self) -> Status {
        match self {
            Guard::Idle => Status::Idle,
            Guard::Working => Status::Working,
        }
    }
}

/// `hc.hello` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HelloParams {
    pub generation: i64,
    pub framing: String,
    pub client: ClientInfo,
}

/// Who is calling, as the client says in `hc.hello`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClientInfo {
    pub name: String,
    pub version: String,
}

/// `hc.hello` result.
#[derive(Debug, Serialize)]
pub struct HelloResult<'a> {
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
pub struct ListParams {
    pub include_finished: bool,
}

/// `terminal.list` result.
#[derive(Debug, Serialize)]
pub struct ListResult {
    pub terminals: Vec<Record>,
}

/// `terminal.get` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GetParams {
    pub address: String,
}

/// `terminal.read` params.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadParams {
    pub address: String,
    pub lines: u64,
}

/// `terminal.read` result.
#[derive(Debug, Serialize)]
pub struct ReadResult {
    pub address: String,
    pub created_ms: u64,
    pub text: String,
    pub complete: bool,
    pub rows: u16,
    pub cols: u16,
    pub status: Status,
    pub status_seq: u64,
}

/// `terminal.send` params. `if` is the only optional field.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SendParams {
    pub address: String,
    pub text: String,
    pub submit: bool,
    #[serde(rename = "if", default)]
    pub guard: Option<Guard>,
    pub force: bool,
}

/// `terminal.send` result.
#[derive(Debug, Serialize)]
pub struct SendResult {
    pub address: String,
    pub created_ms: u64,
    pub accepted: bool,
    pub status: Status,
    pub status_seq: u64,
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

/// A JSON-RPC error as hc sends it: `message` is the kind, and `data.kind`
/// repeats it (contract §5). Standard codes follow the same shape.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub kind: &'static str,
    pub data: Map<String, Value>,
}

impl RpcError {
    fn new(code: i64, kind: &'static str, data: Value) -> Self {
        let mut data = match data {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        data.insert("kind".into(), kind.into());
        RpcError { code, kind, data }
    }

    pub fn parse_error(detail: impl Into<String>) -> Self {
        Self::new(-32700, "parse_error", json!({ "detail": detail.into() }))
    }

    pub fn invalid_request(detail: impl Into<String>) -> Self {
        Self::new(
            -32600,
            "invalid_request",
            json!({ "detail": detail.into() }),
        )
    }

    pub fn handshake_required() -> Self {
        let detail = format!(
            "the first request on a connection must be {}",
            Method::Hello.name()
        );
        Self::new(-32600, "handshake_required", json!({ "detail": detail }))
    }

    pub fn method_not_found(method: &str) -> Self {
        Self::new(-32601, "method_not_found", json!({ "method": method }))
    }

    pub fn invalid_params(detail: impl Into<String>) -> Self {
        Self::new(-32602, "invalid_params", json!({ "detail": detail.into() }))
    }

    pub fn status_mismatch(address: &str, expected: Status, actual: Status, seq: u64) -> Self {
        let data = json!({
            "address": address,
            "expected": expected,
            "actual": actual,
            "status_seq": seq,
        });
        Self::new(-32000, "status_mismatch", data)
    }

    pub fn not_found(address: &str) -> Self {
        Self::new(-32001, "not_found", json!({ "address": address }))
    }

    pub fn finished(address: &str, finished_ms: u64) -> Self {
        let data = json!({ "address": address, "finished_ms": finished_ms });
        Self::new(-32002, "finished", data)
    }

    pub fn blocked(address: &str) -> Self {
        Self::new(-32003, "blocked", json!({ "address": address }))
    }

    pub fn busy(address: &str) -> Self {
        Self::new(-32004, "busy", json!({ "address": address }))
    }

    pub fn unsupported_generation() -> Self {
        Self::new(
            -32010,
            "unsupported_generation",
            json!({ "supported": [GENERATION] }),
        )
    }

    pub fn internal(detail: impl Into<String>) -> Self {
        Self::new(-32099, "internal", json!({ "detail": detail.into() }))
    }

    /// The `error` member of a response.
    pub fn to_value(&self) -> Value {
        json!({ "code": self.code, "message": self.kind, "data": self.data })
    }
}

/// One response line (with its `\n`), success or error.
pub fn response_line(id: &Value, reply: &Result<Value, RpcError>) -> String {
    let message = match reply {
        Ok(result) => json!({ "jsonrpc": JSONRPC_VERSION, "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": JSONRPC_VERSION, "id": id, "error": error.to_value() }),
    };
    let mut line = message.to_string();
    line.push('\n');
    line
}

/// One notification line (with its `\n`).
pub fn notification_line(method: &str, params: Value) -> String {
    let message = json!({ "jsonrpc": JSONRPC_VERSION, "method": method, "params": params });
    let mut line = message.to_string();
    line.push('\n');
    line
}

/// Params of the `terminal.status` notification line (see
/// [`STATUS_NOTIFICATION`]).
pub fn status_notification_params(address: &str, status: Status, status_seq: u64) -> Value {
    json!({ "address": address, "status": status, "status_seq": status_seq })
}

/// The opening of a success response whose `result` is a JSON string, used
/// by the faults that stream a reply: `{"jsonrpc":"2.0","id":<id>,"result":`.
pub fn result_prefix(id: &Value) -> String {
    format!("{{\"jsonrpc\":\"{JSONRPC_VERSION}\",\"id\":{id},\"result\":")
}

/// Field names of a hello result that the `wrong-*` faults rewrite.
pub mod hello_fields {
    pub const VERSION: &str = "version";
    pub const GENERATION: &str = "generation";
    pub const FRAMING: &str = "framing";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_carry_their_kind_as_message_and_data_kind() {
        let error = RpcError::status_mismatch("t1", Status::Idle, Status::Working, 4).to_value();
        assert_eq!(error["code"], -32000);
        assert_eq!(error["message"], "status_mismatch");
        assert_eq!(error["data"]["kind"], "status_mismatch");
        assert_eq!(error["data"]["expected"], "idle");
        assert_eq!(error["data"]["actual"], "working");
        assert_eq!(error["data"]["status_seq"], 4);
    }

    #[test]
    fn guards_accept_only_idle_and_working() {
        assert!(serde_json::from_value::<Guard>(json!("idle")).is_ok());
        assert!(serde_json::from_value::<Guard>(json!("working")).is_ok());
        assert!(serde_json::from_value::<Guard>(json!("done")).is_err());
    }
}
