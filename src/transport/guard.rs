//! One incoming JSON-RPC message, checked before rmcp sees it (stdio lines
//! and HTTP bodies alike): what is not JSON is answered `-32700`, what is
//! not one JSON-RPC 2.0 message (a batch included: no revision this server
//! offers has them) `-32600`, both with `"id": null`, and an object that
//! repeats a key is refused rather than read as its last value (a host's
//! approval screen may have shown the first). A repeated key inside
//! `tools/call` arguments is an invalid-arguments tool result, like any
//! other bad argument; elsewhere it is `-32602` (or `-32600` when the
//! request's own members repeat).

use rmcp::model::{CallToolResult, ClientJsonRpcMessage, ContentBlock};
use serde_json::{Value, json};

use crate::json_keys::{self, Walked};

const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
const INVALID_PARAMS: i64 = -32602;

/// What to do with one incoming message.
#[derive(Debug)]
pub(super) enum Screened {
    /// Hand it to rmcp.
    Message(Box<ClientJsonRpcMessage>),
    /// A notification rmcp could not read: JSON-RPC never answers those.
    Ignore,
    /// Reply it with this JSON-RPC message instead.
    Reply(Reply),
}

/// A reply the guard writes itself.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Reply {
    message: Value,
    /// The tool call this reply refuses for its arguments, when it is one.
    refused: Option<Box<RefusedCall>>,
    /// It answers a request that was read whole (not a broken message).
    read: bool,
}

/// A `tools/call` the guard answered itself, refused for an argument it
/// repeats: the transport hands it to the surface, which records a refused
/// send like any other send attempt.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct RefusedCall {
    /// The tool named.
    pub tool: String,
    /// The arguments, each repeated one read as its last value.
    pub arguments: serde_json::Map<String, Value>,
    /// The argument given twice (its path below the arguments).
    pub argument: String,
}

impl Reply {
    fn new(message: Value) -> Reply {
        Reply {
            message,
            refused: None,
            read: false,
        }
    }

    fn error(id: Value, code: i64, message: impl Into<String>) -> Reply {
        Reply::new(json!({
            "jsonrpc": "2.0",
            "id": id,
            "error": {"code": code, "message": message.into()},
        }))
    }

    /// Not one valid JSON-RPC message, answered under the request's `id`
    /// (one read from the start of a message too long to read whole).
    pub(super) fn invalid_request_for(id: Value, why: &str) -> Reply {
        Reply::error(id, INVALID_REQUEST, format!("Invalid Request: {why}"))
    }

    /// A request the surface refused before rmcp saw it (`Tools::admit`),
    /// answered under its `id` (a JSON-RPC error of a request that was
    /// read: HTTP 200, like rmcp's own).
    pub(super) fn refused_request(id: Value, why: &str) -> Reply {
        let mut reply = Reply::error(id, INVALID_REQUEST, why);
        reply.read = true;
        reply
    }

    /// The tool call this reply refuses, when it refuses one.
    pub(super) fn refused_call(&self) -> Option<&RefusedCall> {
        self.refused.as_deref()
    }

    /// Not JSON: `-32700`, `"id": null`.
    pub(super) fn parse_error() -> Reply {
        Reply::error(
            Value::Null,
            PARSE_ERROR,
            "Parse error: the message is not valid JSON",
        )
    }

    /// Not one valid JSON-RPC message: `-32600`, `"id": null`.
    pub(super) fn invalid_request(why: &str) -> Reply {
        Reply::error(
            Value::Null,
            INVALID_REQUEST,
            format!("Invalid Request: {why}"),
        )
    }

    /// Whether this is an error (rather than a tool result).
    pub(super) fn is_error(&self) -> bool {
        self.message.get("error").is_some()
    }

    /// Whether it answers a message that was read whole: an HTTP 200
    /// even when it is an error.
    pub(super) fn answers_a_request(&self) -> bool {
        self.read || !self.is_error()
    }

    /// The JSON text, without a newline.
    pub(super) fn to_json(&self) -> String {
        self.message.to_string()
    }
}

/// Checks one message: a stdio line without its newline, or an HTTP body.
pub(super) fn check(bytes: &[u8]) -> Screened {
    let bytes = without_bom(bytes);
    if let Err(answer) = precheck(bytes) {
        return Screened::Reply(answer);
    }
    match serde_json::from_slice::<ClientJsonRpcMessage>(bytes) {
        Ok(message) => Screened::Message(Box::new(message)),
        Err(_) if is_notification(bytes) => Screened::Ignore,
        Err(_) => Screened::Reply(Reply::invalid_request("not a valid JSON-RPC 2.0 message")),
    }
}

fn without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes)
}

/// Everything [`check`] refuses before reading the message as JSON-RPC:
/// not JSON, a repeated key at any depth, a batch, not an object. Cheaper
/// than [`check`] (nothing is built), for a caller whose next reader parses
/// the message anyway and whose refusal of a malformed one can be replaced
/// by [`check`]'s answer.
pub(super) fn precheck(bytes: &[u8]) -> Result<(), Reply> {
    let bytes = without_bom(bytes);
    if let Err(e) = json_keys::check(bytes) {
        return Err(match e {
            Walked::NotJson => Reply::parse_error(),
            Walked::Repeated(repeat) => repeated_key(bytes, &repeat.path, &repeat.key),
        });
    }
    match bytes.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => Ok(()),
        Some(b'[') => Err(Reply::invalid_request(
            "batches are not supported (no protocol revision this server offers has them)",
        )),
        _ => Err(Reply::invalid_request("not a JSON-RPC object")),
    }
}

/// The answer to a message that repeats `key` at `path` (members from the
/// top, e.g. `["params", "arguments"]`).
fn repeated_key(bytes: &[u8], path: &[String], key: &str) -> Reply {
    let shown = if path.is_empty() {
        format!("`{key}`")
    } else {
        format!("`{key}` in {}", path.join("."))
    };
    // Read once more, last value wins, only to learn the id and method: a
    // top-level repeat makes both untrustworthy.
    let object: Option<serde_json::Map<String, Value>> = serde_json::from_slice(bytes).ok();
    let (Some(object), false) = (object, path.is_empty()) else {
        return Reply::invalid_request(&format!("the message repeats the member {shown}"));
    };
    let Some(id) = object
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
    else {
        return Reply::invalid_request(&format!("the message repeats {shown}"));
    };
    let is_call = object.get("method").and_then(Value::as_str) == Some("tools/call");
    if is_call
        && path.first().is_some_and(|p| p == "params")
        && path.get(1).is_some_and(|p| p == "arguments")
    {
        let text = format!(
            "invalid arguments: the argument {shown} is given twice; give each argument once [invalid_params]"
        );
        let result = CallToolResult::error(vec![ContentBlock::text(text)]);
        let params = object.get("params");
        let refused = RefusedCall {
            tool: params
                .and_then(|p| p.get("name"))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            arguments: params
                .and_then(|p| p.get("arguments"))
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default(),
            argument: path[2..]
                .iter()
                .map(String::as_str)
                .chain([key])
                .collect::<Vec<_>>()
                .join("."),
        };
        return Reply {
            message: json!({"jsonrpc": "2.0", "id": id, "result": result}),
            refused: Some(Box::new(refused)),
            read: true,
        };
    }
    Reply::error(
        id.clone(),
        INVALID_PARAMS,
        format!("Invalid params: {shown} is given twice"),
    )
}

/// Longest string `id` read from the start of an oversized message.
const MAX_LEADING_ID_CHARS: usize = 256;

/// The `id` of a JSON-RPC request read from the start of a message that is
/// too long to read whole (`prefix`, cut anywhere): found when it comes
/// before the first value that runs past the cut, as it does for clients
/// that write `jsonrpc`, `id`, `method` first. A string or number only.
pub(super) fn leading_id(prefix: &[u8]) -> Option<Value> {
    use serde::de::{IgnoredAny, MapAccess, Visitor};

    struct FindId<'a>(&'a mut Option<Value>);

    impl<'de> Visitor<'de> for FindId<'_> {
        type Value = ();

        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON-RPC object")
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                if key == "id" {
                    let id: Value = map.next_value()?;
                    let usable = match &id {
                        Value::Number(_) => true,
                        Value::String(s) => s.chars().count() <= MAX_LEADING_ID_CHARS,
                        _ => false,
                    };
                    *self.0 = usable.then_some(id);
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }

    let mut found = None;
    let mut reader = serde_json::Deserializer::from_slice(without_bom(prefix));
    // The rest of the message is cut off: reading it fails once the id is
    // found (or not), and only what was found counts.
    let _ = serde::Deserializer::deserialize_map(&mut reader, FindId(&mut found));
    found
}

/// An object with a string `method` and no `id` member: a notification.
fn is_notification(bytes: &[u8]) -> bool {
    serde_json::from_slice::<serde_json::Map<String, Value>>(bytes)
        .is_ok_and(|o| o.get("method").is_some_and(Value::is_string) && !o.contains_key("id"))
}

#[cfg(test)]
mod tests {
    //! What the guard answers for each kind of bad message, and that good ones
    //! pass unchanged.

    use serde_json::Value;

    use super::*;

    fn answered(bytes: &str) -> Value {
        match check(bytes.as_bytes()) {
            Screened::Reply(answer) => serde_json::from_str(&answer.to_json()).unwrap(),
            other => panic!("{bytes}: {other:?}"),
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_a_null_id() {
        for bad in ["not json", "{\"jsonrpc\":", "{} trailing", "\u{0}", "[1,"] {
            let answer = answered(bad);
            assert_eq!(answer["error"]["code"], -32700, "{bad}");
            assert_eq!(answer["id"], Value::Null, "{bad}");
            assert!(answer.as_object().unwrap().contains_key("id"), "{bad}");
        }
    }

    #[test]
    fn json_that_is_not_one_message_is_an_invalid_request_with_a_null_id() {
        for bad in [
            r#"{"foo":1}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            "5",
            "[]",
            r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":5}"#,
        ] {
            let answer = answered(bad);
            assert_eq!(answer["error"]["code"], -32600, "{bad}");
            assert_eq!(answer["id"], Value::Null, "{bad}");
        }
        let batch = answered(r#"[{"jsonrpc":"2.0","id":2,"method":"ping"}]"#);
        assert!(
            batch["error"]["message"]
                .as_str()
                .unwrap()
                .contains("batch")
        );
    }

    #[test]
    fn a_repeated_tool_argument_is_an_invalid_arguments_result() {
        let answer = answered(
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_prompt","arguments":{"address":"t3","text":"hi","address":"t4"}}}"#,
        );
        assert_eq!(answer["id"], 7);
        assert_eq!(answer["result"]["isError"], true);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("`address` in params.arguments"), "{text}");
        assert!(text.contains("[invalid_params]"), "{text}");
    }

    #[test]
    fn repeated_keys_elsewhere_are_refused_with_what_can_be_trusted() {
        let deep = answered(
            r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"cursor":"a","cursor":"b"}}"#,
        );
        assert_eq!(deep["id"], "x");
        assert_eq!(deep["error"]["code"], -32602);
        let top = answered(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#);
        assert_eq!(top["id"], Value::Null);
        assert_eq!(top["error"]["code"], -32600);
        let escaped = answered(
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1,"\u0061":2}}}"#,
        );
        assert_eq!(escaped["result"]["isError"], true, "{escaped}");
        let in_array =
            answered(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"l":[{"k":1,"k":2}]}}"#);
        assert!(
            in_array["error"]["message"]
                .as_str()
                .unwrap()
                .contains("params.l.0")
        );
    }

    #[test]
    fn valid_messages_pass_and_bad_notifications_are_ignored() {
        for good in [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":{"a":1}}}}"#,
        ] {
            assert!(
                matches!(check(good.as_bytes()), Screened::Message(_)),
                "{good}"
            );
        }
        assert!(matches!(
            check(br#"{"jsonrpc":"2.0","method":"$/weird","params":5}"#),
            Screened::Ignore
        ));
    }
}
