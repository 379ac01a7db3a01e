//! One hc connection from this core to a machine's core, spoken as any hc
//! client speaks it (contract §1–2): connect, `hc.hello`, then one call at
//! a time. Whether a failure came before or after a request was written is
//! kept apart, since only the second can have taken effect there.

use std::path::Path;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::framing::{self, Line};
use crate::wire::{FRAMING_PLAIN, GENERATION, JSONRPC_VERSION, Method};

/// Longest reply line taken from a machine: a list of many terminals or a
/// long screen fits well within it.
const MAX_REPLY_BYTES: usize = 16 * 1024 * 1024;
/// Notification lines skipped before a reply before the link gives up.
const MAX_SKIPPED_LINES: usize = 64;

/// Who answered the hello at the other end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Peer {
    pub core_id: String,
    pub version: String,
}

/// A machine's answer to one call.
#[derive(Debug)]
pub(crate) enum Answer {
    Result(Value),
    Error {
        code: i64,
        message: String,
        data: Map<String, Value>,
    },
}

/// The link broke after the request was written (or while writing it):
/// the call may have taken effect there.
#[derive(Debug)]
pub(crate) struct Lost(pub String);

/// An open, greeted connection to a machine's core.
pub(crate) struct Link {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
}

impl Link {
    /// Connects to the core at `socket` and greets it as `version` of hc.
    /// Nothing but the hello has been written when this fails.
    pub(crate) async fn open(socket: &Path, version: &str) -> Result<(Link, Peer), String> {
        let stream = UnixStream::connect(socket)
            .await
            .map_err(|error| format!("cannot connect to {}: {error}", socket.display()))?;
        let (reader, writer) = stream.into_split();
        let mut link = Link {
            reader: BufReader::new(reader),
            writer,
            next_id: 1,
        };
        let params = json!({
            "generation": GENERATION,
            "framing": FRAMING_PLAIN,
            "client": { "name": "hc", "version": version },
        });
        let hello = match link.call(Method::Hello.name(), params).await {
            Ok(Answer::Result(result)) => result,
            Ok(Answer::Error { message, .. }) => return Err(format!("hello refused: {message}")),
            Err(Lost(why)) => return Err(why),
        };
        let text = |key: &str| hello.get(key).and_then(Value::as_str).map(str::to_owned);
        if hello.get("generation").and_then(Value::as_u64) != Some(GENERATION)
            || hello.get("framing").and_then(Value::as_str) != Some(FRAMING_PLAIN)
        {
            return Err("the machine's core speaks another generation or framing".into());
        }
        match (text("core_id"), text("version")) {
            (Some(core_id), Some(version)) => Ok((link, Peer { core_id, version })),
            _ => Err("the machine's hello lacks core_id or version".into()),
        }
    }

    /// Writes one request and reads its reply, skipping notifications.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Result<Answer, Lost> {
        let id = self.next_id;
        self.next_id += 1;
        let request =
            json!({ "jsonrpc": JSONRPC_VERSION, "id": id, "method": method, "params": params });
        let mut line = request.to_string();
        line.push('\n');
        self.writer
            .write_all(line.as_bytes())
            .await
            .map_err(|error| Lost(format!("writing {method}: {error}")))?;
        for _ in 0..MAX_SKIPPED_LINES {
            let line = match framing::read_line(&mut self.reader, MAX_REPLY_BYTES).await {
                Ok(Some(Line::Complete(line))) => line,
                Ok(Some(Line::TooLong)) => return Err(Lost(format!("{method}: reply too long"))),
                Ok(None) => return Err(Lost(format!("{method}: connection closed"))),
                Err(error) => return Err(Lost(format!("{method}: {error}"))),
            };
            let Ok(Value::Object(mut reply)) = serde_json::from_slice::<Value>(&line) else {
                return Err(Lost(format!("{method}: reply is not a JSON object")));
            };
            match reply.get("id") {
                None => continue,
                Some(got) if got.as_u64() == Some(id) => {}
                Some(_) => return Err(Lost(format!("{method}: reply to another request"))),
            }
            if let Some(result) = reply.remove("result") {
                return Ok(Answer::Result(result));
            }
            let error = reply.remove("error").unwrap_or(Value::Null);
            let code = error.get("code").and_then(Value::as_i64);
            let message = error.get("message").and_then(Value::as_str);
            return match (code, message) {
                (Some(code), Some(message)) => Ok(Answer::Error {
                    code,
                    message: message.to_owned(),
                    data: match error.get("data") {
                        Some(Value::Object(data)) => data.clone(),
                        _ => Map::new(),
                    },
                }),
                _ => Err(Lost(format!(
                    "{method}: reply has neither result nor error"
                ))),
            };
        }
        Err(Lost(format!("{method}: no reply among the notifications")))
    }
}
