//! The checker's own connection to the core, below the adapter's strict
//! framing so it can see what that framing would only refuse: a line that
//! is not JSON, binary frames, a reply that never ends. It asks only what
//! [`Ask`] can name, the four read methods, `rpc.discover` and one method
//! no core has; the one `terminal.send` it can spell is the guard check's
//! ([`Probe::ask_guard`]: empty text, no submit, no force, a mismatching
//! `if`), which types nothing. Each reply is bounded like the adapter's
//! (1 MiB, the config's `timeoutMs`; `sendTimeoutMs` for that send). With `--record`, every
//! exchange is written as a JSON line with screen text, titles, cwds and
//! argv replaced by their length and SHA-256, so it can be shared.

use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

use crate::hc::framing::MAX_REPLY_BYTES;
use crate::hc::wire::Method;

/// Bytes of a reply that is not JSON shown in hex.
pub(super) const SHOWN_BYTES: usize = 32;
/// The method asked to see how the core answers one it does not have.
pub(super) const UNKNOWN_METHOD: &str = "herdr_core_mcp.contract_probe";
/// Fields whose strings the record keeps as they are: the protocol's own
/// words and the model's non-private facts. Every other string is kept
/// only as its length and digest.
const SHAREABLE_FIELDS: [&str; 20] = [
    "jsonrpc",
    "method",
    "address",
    "status",
    "expected",
    "actual",
    "if",
    "submit_key",
    "program",
    "app",
    "state",
    "core_id",
    "version",
    "framing",
    "kind",
    "message",
    "name",
    "no_reply",
    "first_hex",
    "id",
];

/// What the checker may ask: never a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ask {
    Hello,
    List,
    Get,
    Read,
    /// The core's own OpenRPC document.
    Discover,
    /// A method no core has, to see the error shape.
    Unknown,
    /// `machine.list` (contract §8, a model): read-only.
    Machines,
}

impl Ask {
    pub(super) fn method(self) -> &'static str {
        match self {
            Ask::Hello => Method::Hello.as_str(),
            Ask::List => Method::List.as_str(),
            Ask::Get => Method::Get.as_str(),
            Ask::Read => Method::Read.as_str(),
            Ask::Discover => Method::Discover.as_str(),
            Ask::Unknown => UNKNOWN_METHOD,
            Ask::Machines => Method::MachineList.as_str(),
        }
    }

    /// The method whose result the adapter's decoders read, when it is one.
    pub(super) fn read(self) -> Option<Method> {
        match self {
            Ask::Hello => Some(Method::Hello),
            Ask::List => Some(Method::List),
            Ask::Get => Some(Method::Get),
            Ask::Read => Some(Method::Read),
            Ask::Discover | Ask::Unknown | Ask::Machines => None,
        }
    }
}

/// What came back for one request.
#[derive(Debug)]
pub(super) enum Received {
    /// One line of JSON.
    Json(Value),
    /// Bytes that are not one JSON line: how many, and the first ones.
    NotJson { bytes: usize, first: Vec<u8> },
    /// The core closed the connection.
    Closed,
    /// Nothing (or no line end) within the timeout.
    TimedOut,
    /// More than 1 MiB without a line end.
    TooLarge,
}

pub(super) struct Probe {
    stream: UnixStream,
    buffer: Vec<u8>,
    next_id: u64,
    timeout: Duration,
    record: Option<std::fs::File>,
}

impl Probe {
    /// Connects to the core at `socket`; `record` names the file every
    /// exchange is written to (created 0600, or truncated).
    pub(super) async fn connect(
        socket: &Path,
        timeout: Duration,
        record: Option<&Path>,
    ) -> Result<Probe, String> {
        let record = match record {
            Some(path) => Some(
                open_record(path)
                    .map_err(|e| format!("cannot write the record {}: {e}", path.display()))?,
            ),
            None => None,
        };
        let stream = tokio::time::timeout(timeout, UnixStream::connect(socket))
            .await
            .map_err(|_| format!("connecting to {} timed out", socket.display()))?
            .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
        Ok(Probe {
            stream,
            buffer: Vec::new(),
            next_id: 1,
            timeout,
            record,
        })
    }

    /// Sends one request and reads its reply; the request's id with it.
    pub(super) async fn ask(&mut self, ask: Ask, params: Value) -> (u64, Received) {
        self.exchange(ask.method(), params, self.timeout).await
    }

    /// `terminal.get` of `address`.
    pub(super) async fn ask_record(&mut self, address: &str) -> (u64, Received) {
        self.ask(Ask::Get, json!({"address": address})).await
    }

    /// The guard check's one send: to `address`, empty text, no submit,
    /// no force (`force: false`, or no `force` at all when the core's
    /// document does not declare it), `if` set to `sent_if` (a status the
    /// terminal is not in), bounded by `timeout`. Nothing else can be
    /// written through a probe.
    pub(super) async fn ask_guard(
        &mut self,
        address: &str,
        sent_if: &'static str,
        timeout: Duration,
        force: bool,
    ) -> (u64, Received) {
        let mut params = json!({
            "address": address,
            "text": "",
            "submit": false,
            "if": sent_if,
        });
        if force {
            params["force"] = json!(false);
        }
        self.exchange(Method::Send.as_str(), params, timeout).await
    }

    async fn exchange(
        &mut self,
        method: &str,
        params: Value,
        timeout: Duration,
    ) -> (u64, Received) {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.note("request", &request);
        let mut line = request.to_string();
        line.push('\n');
        let received = match self.stream.write_all(line.as_bytes()).await {
            Ok(()) => self.read_reply(timeout).await,
            Err(_) => Received::Closed,
        };
        match &received {
            Received::Json(value) => self.note("reply", value),
            Received::NotJson { bytes, first } => self.note(
                "reply",
                &json!({"not_json": {"bytes": bytes, "first_hex": hex(first)}}),
            ),
            other => self.note("reply", &json!({"no_reply": format!("{other:?}")})),
        }
        (id, received)
    }

    /// One reply: bytes up to a line end, within the timeout and the cap.
    async fn read_reply(&mut self, timeout: Duration) -> Received {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if let Some(end) = self.buffer.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.buffer.drain(..=end).collect();
                let line = &line[..line.len() - 1];
                return match serde_json::from_slice::<Value>(line) {
                    Ok(value) => Received::Json(value),
                    Err(_) => not_json(line),
                };
            }
            if self.buffer.len() > MAX_REPLY_BYTES {
                return Received::TooLarge;
            }
            let mut chunk = [0u8; 64 * 1024];
            match tokio::time::timeout_at(deadline, self.stream.read(&mut chunk)).await {
                Err(_) if self.buffer.is_empty() => return Received::TimedOut,
                // Bytes without a line end: binary frames, say.
                Err(_) => return not_json(&std::mem::take(&mut self.buffer)),
                Ok(Ok(0)) if self.buffer.is_empty() => return Received::Closed,
                Ok(Ok(0)) => return not_json(&std::mem::take(&mut self.buffer)),
                Ok(Ok(n)) => self.buffer.extend_from_slice(&chunk[..n]),
                Ok(Err(_)) => return Received::Closed,
            }
        }
    }

    fn note(&mut self, direction: &str, message: &Value) {
        if let Some(file) = &mut self.record {
            let line = json!({
                "at_ms": crate::audit::now_ms(),
                "direction": direction,
                "message": redacted(message),
            });
            let _ = writeln!(file, "{line}");
        }
    }
}

/// The record file: private (0600, whatever it was before), a regular
/// file, opened without following a link or blocking on a FIFO.
fn open_record(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::PermissionsExt;
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(path)?;
    if !file.metadata()?.is_file() {
        return Err(std::io::Error::other("it is not a regular file"));
    }
    file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    file.set_len(0)?;
    Ok(file)
}

fn not_json(bytes: &[u8]) -> Received {
    Received::NotJson {
        bytes: bytes.len(),
        first: bytes[..bytes.len().min(SHOWN_BYTES)].to_vec(),
    }
}

/// Bytes as lowercase hex pairs, separated by spaces.
pub(super) fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `message` with every string kept only when its key is one the model
/// names as not private (addresses, statuses, numbers, the handshake's
/// facts, error codes and kinds); every other string (screens, titles,
/// cwds, argv, a foreground command line, labels, hints: anything a core
/// may add) is replaced by its length and SHA-256, so the record can be
/// shared. Objects and arrays keep their shape.
pub(super) fn redacted(message: &Value) -> Value {
    redacted_under(None, message)
}

fn redacted_under(key: Option<&str>, value: &Value) -> Value {
    match value {
        Value::Object(fields) => Value::Object(
            fields
                .iter()
                .map(|(k, v)| (k.clone(), redacted_under(Some(k), v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(|v| redacted_under(key, v)).collect()),
        Value::String(_) if key.is_some_and(|k| SHAREABLE_FIELDS.contains(&k)) => value.clone(),
        Value::String(_) => digest_of(value),
        other => other.clone(),
    }
}

fn digest_of(value: &Value) -> Value {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let digest: String = Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    json!({"redacted": true, "chars": text.chars().count(), "sha256": digest})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_record_keeps_no_screen_title_cwd_or_argv() {
        let reply = json!({"result": {"terminals": [{"address": "t1", "title": "secret title",
            "cwd": "/home/ana/secret", "argv": ["claude", "--key", "k"], "status": "idle",
            "foreground": "vim secret-plan.txt", "labels": {"team": "secret-team"}}],
            "text": "a screen with a password"}});
        let shown = redacted(&reply).to_string();
        for private in [
            "secret title",
            "/home/ana/secret",
            "--key",
            "password",
            "secret-plan",
            "secret-team",
        ] {
            assert!(!shown.contains(private), "{private} in {shown}");
        }
        assert!(shown.contains(r#""address":"t1""#) && shown.contains(r#""status":"idle""#));
        assert_eq!(redacted(&reply)["result"]["text"]["chars"], 24);
    }
}
