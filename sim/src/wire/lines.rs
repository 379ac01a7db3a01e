//! Whole lines on the hc socket: a response (success or error), a
//! notification, and the opening of a response that a fault streams.

use serde_json::{Value, json};

use super::{JSONRPC_VERSION, RpcError, Status};

/// One response line (with its `\n`), success or error.
pub(crate) fn response_line(id: &Value, reply: &Result<Value, RpcError>) -> String {
    let message = match reply {
        Ok(result) => json!({ "jsonrpc": JSONRPC_VERSION, "id": id, "result": result }),
        Err(error) => json!({ "jsonrpc": JSONRPC_VERSION, "id": id, "error": error.to_value() }),
    };
    let mut line = message.to_string();
    line.push('\n');
    line
}

/// One notification line (with its `\n`).
pub(crate) fn notification_line(method: &str, params: Value) -> String {
    let message = json!({ "jsonrpc": JSONRPC_VERSION, "method": method, "params": params });
    let mut line = message.to_string();
    line.push('\n');
    line
}

/// Params of the `terminal.status` notification line (see
/// [`super::STATUS_NOTIFICATION`]).
pub(crate) fn status_notification_params(address: &str, status: Status, status_seq: u64) -> Value {
    json!({ "address": address, "status": status, "status_seq": status_seq })
}

/// The opening of a success response whose `result` is a JSON string, used
/// by the faults that stream a reply: `{"jsonrpc":"2.0","id":<id>,"result":`.
pub(crate) fn result_prefix(id: &Value) -> String {
    format!("{{\"jsonrpc\":\"{JSONRPC_VERSION}\",\"id\":{id},\"result\":")
}

/// Field names of a hello result that the `wrong-*` faults rewrite.
pub(crate) mod hello_fields {
    pub(crate) const VERSION: &str = "version";
    pub(crate) const GENERATION: &str = "generation";
    pub(crate) const FRAMING: &str = "framing";
}
