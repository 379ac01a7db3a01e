//! JSON-RPC errors as hc sends them (contract §5): one constructor per
//! code, each with the `data` it carries.

use serde_json::{Map, Value, json};

use super::{GENERATION, Method, Status};

/// A JSON-RPC error as hc sends it: `data.kind` names the kind, and
/// `message` is the kind too as the model has it, or human text when set
/// (as real cores send it: `--evidence`). Standard codes follow the same
/// shape.
#[derive(Debug, Clone, PartialEq)]
pub struct RpcError {
    pub code: i64,
    pub kind: &'static str,
    pub data: Map<String, Value>,
    /// Human text for `message` instead of the kind's name.
    pub message: Option<String>,
}

impl RpcError {
    /// The kind of an error another machine's core answered and this core
    /// passes on unchanged (its own `data.kind` stays in `data`).
    pub const FROM_MACHINE: &'static str = "from_machine";

    fn new(code: i64, kind: &'static str, data: Value) -> Self {
        let mut data = match data {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        data.insert("kind".into(), kind.into());
        RpcError {
            code,
            kind,
            data,
            message: None,
        }
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

    /// A call to a terminal of a machine that is not connected: refused
    /// before anything is forwarded (contract §8).
    pub fn machine_unavailable(machine: &str, state: &str) -> Self {
        let data = json!({ "machine": machine, "state": state });
        Self::new(-32005, "machine_unavailable", data)
    }

    /// The connection to a machine was lost while a forwarded call was in
    /// flight: whether it took effect there is unknown (contract §8).
    pub fn machine_lost(address: &str, machine: &str) -> Self {
        let data = json!({ "address": address, "machine": machine });
        Self::new(-32006, "machine_lost", data)
    }

    /// An error another machine's core answered, passed on with its code,
    /// message and data as they came.
    pub fn from_machine(code: i64, message: String, data: Map<String, Value>) -> Self {
        RpcError {
            code,
            kind: Self::FROM_MACHINE,
            data,
            message: Some(message),
        }
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
        let message = self.message.as_deref().unwrap_or(self.kind);
        json!({ "code": self.code, "message": message, "data": self.data })
    }
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
}
