//! Plain framing, shared by the hc socket and the control socket: reading one
//! `\n`-ended line under a byte cap, and turning it into a JSON-RPC call or
//! the error that answers it. What a call means is left to `methods` and
//! `control`; writing replies (and faulting them) is left to `faults`.

use serde_json::{Map, Value};
use tokio::io::{AsyncBufRead, AsyncBufReadExt};

use crate::wire::{JSONRPC_VERSION, RpcError};

/// Longest request line accepted. A maximal `terminal.send` (64 KiB of text,
/// every byte escaped as `\u00XX`) is about 400 KB; anything past 1 MiB is
/// not a request hc would accept, and is answered without being buffered.
pub(crate) const MAX_REQUEST_BYTES: usize = 1024 * 1024;

/// One line read from a peer.
#[derive(Debug, PartialEq)]
pub(crate) enum Line {
    /// A complete line, without its `\n`.
    Complete(Vec<u8>),
    /// A line longer than the cap; its bytes were consumed and dropped.
    TooLong,
}

/// Reads the next line, never holding more than `max_bytes` of it. `None`
/// at end of stream (a trailing unterminated fragment is dropped: the peer is
/// gone and cannot read an answer).
pub(crate) async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    max_bytes: usize,
) -> std::io::Result<Option<Line>> {
    let mut line = Vec::new();
    let mut too_long = false;
    loop {
        let buffer = reader.fill_buf().await?;
        if buffer.is_empty() {
            return Ok(None);
        }
        let (chunk, found_end) = match buffer.iter().position(|&byte| byte == b'\n') {
            Some(end) => (&buffer[..end], true),
            None => (buffer, false),
        };
        if !too_long && line.len() + chunk.len() <= max_bytes {
            line.extend_from_slice(chunk);
        } else {
            too_long = true;
            line = Vec::new();
        }
        let consumed = chunk.len() + usize::from(found_end);
        reader.consume(consumed);
        if found_end {
            return Ok(Some(if too_long {
                Line::TooLong
            } else {
                Line::Complete(line)
            }));
        }
    }
}

/// A well-formed JSON-RPC request.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Call {
    pub id: Value,
    pub method: String,
    /// The params object (`{}` when the request had none).
    pub params: Map<String, Value>,
}

/// What a line turned out to be.
#[derive(Debug, PartialEq)]
pub(crate) enum Incoming {
    Call(Call),
    /// A line that is not a usable request, with the id to answer it under
    /// (`null` when none could be read).
    Invalid {
        id: Value,
        error: RpcError,
    },
}

/// Classifies one line. Every line gets an answer: hc takes no client
/// notifications, so a request without `id` is invalid too.
pub(crate) fn parse(line: &Line) -> Incoming {
    let bytes = match line {
        Line::Complete(bytes) => bytes,
        Line::TooLong => {
            let detail = format!("request line exceeds {MAX_REQUEST_BYTES} bytes");
            return invalid(Value::Null, RpcError::invalid_request(detail));
        }
    };
    let message: Value = match serde_json::from_slice(bytes) {
        Ok(message) => message,
        Err(error) => return invalid(Value::Null, RpcError::parse_error(error.to_string())),
    };
    let mut object = match message {
        Value::Object(object) => object,
        Value::Array(_) => {
            let error = RpcError::invalid_request("batch requests are not supported");
            return invalid(Value::Null, error);
        }
        _ => {
            return invalid(
                Value::Null,
                RpcError::invalid_request("a request is a JSON object"),
            );
        }
    };
    let id = match object.remove("id") {
        Some(id @ (Value::Number(_) | Value::String(_) | Value::Null)) => id,
        Some(_) => {
            let error = RpcError::invalid_request("id must be a number, a string or null");
            return invalid(Value::Null, error);
        }
        None => {
            let error = RpcError::invalid_request("request has no id; hc takes no notifications");
            return invalid(Value::Null, error);
        }
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some(JSONRPC_VERSION) {
        let error = RpcError::invalid_request(format!("jsonrpc must be \"{JSONRPC_VERSION}\""));
        return invalid(id, error);
    }
    let method = match object.remove("method") {
        Some(Value::String(method)) => method,
        _ => return invalid(id, RpcError::invalid_request("method must be a string")),
    };
    let params = match object.remove("params") {
        None => Map::new(),
        Some(Value::Object(params)) => params,
        Some(_) => return invalid(id, RpcError::invalid_params("params must be an object")),
    };
    Incoming::Call(Call { id, method, params })
}

fn invalid(id: Value, error: RpcError) -> Incoming {
    Incoming::Invalid { id, error }
}

/// Decodes a call's params into the method's params type; any mismatch
/// (missing, unknown or mistyped field) is `invalid_params`.
pub(crate) fn decode<T: serde::de::DeserializeOwned>(
    params: &Map<String, Value>,
) -> Result<T, RpcError> {
    serde_json::from_value(Value::Object(params.clone()))
        .map_err(|error| RpcError::invalid_params(error.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse_str(text: &str) -> Incoming {
        parse(&Line::Complete(text.as_bytes().to_vec()))
    }

    fn error_code(incoming: Incoming) -> (Value, i64) {
        match incoming {
            Incoming::Invalid { id, error } => (id, error.code),
            Incoming::Call(call) => panic!("expected an error, got {call:?}"),
        }
    }

    #[test]
    fn garbage_is_a_parse_error_under_a_null_id() {
        assert_eq!(error_code(parse_str("{nope")), (Value::Null, -32700));
    }

    #[test]
    fn batches_and_scalars_are_invalid_requests() {
        assert_eq!(error_code(parse_str("[]")), (Value::Null, -32600));
        assert_eq!(error_code(parse_str("7")), (Value::Null, -32600));
    }

    #[test]
    fn wrong_jsonrpc_version_is_answered_under_the_request_id() {
        let line = r#"{"jsonrpc":"1.0","id":5,"method":"terminal.list"}"#;
        assert_eq!(error_code(parse_str(line)), (json!(5), -32600));
    }

    #[test]
    fn a_request_without_params_gets_an_empty_object() {
        let Incoming::Call(call) = parse_str(r#"{"jsonrpc":"2.0","id":"a","method":"m"}"#) else {
            panic!("expected a call");
        };
        assert_eq!(call.id, json!("a"));
        assert!(call.params.is_empty());
    }

    #[tokio::test]
    async fn overlong_lines_are_consumed_without_being_buffered() {
        let input = format!("{}\n{{}}\n", "x".repeat(100));
        let mut reader = tokio::io::BufReader::with_capacity(16, input.as_bytes());
        assert_eq!(
            read_line(&mut reader, 50).await.unwrap(),
            Some(Line::TooLong)
        );
        let next = read_line(&mut reader, 50).await.unwrap();
        assert_eq!(next, Some(Line::Complete(b"{}".to_vec())));
        assert_eq!(read_line(&mut reader, 50).await.unwrap(), None);
    }
}
