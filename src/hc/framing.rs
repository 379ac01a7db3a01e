//! hc's `plain` framing on one Unix-socket stream: one JSON-RPC message per
//! `\n`-terminated line, in lockstep. Writes requests, reads each reply line
//! under the byte cap (enforced while reading, never after buffering), and
//! validates the reply envelope (jsonrpc, id, exactly one of result and
//! error) before decoding the result. No handshake and no timeouts: those
//! are `conn`'s and the client's.
//!
//! jsonrpsee's async client is not used for this layer: it skips
//! notification lines it has no subscription for (hc's contract makes them a
//! protocol violation that must fail the call), accepts batches, and
//! multiplexes requests on one connection, so a timed-out call leaves the
//! connection in use. `jsonrpsee-types` supplies the wire envelope instead.

use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::Arc;

use jsonrpsee_types::{ErrorObject, Id, TwoPointZero};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::value::RawValue;
use socket2::SockRef;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Interest};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use super::error::CoreError;
use super::wire::{self, Method};

/// Most bytes accepted in one reply line. hc replies are small JSON objects;
/// a screen is at most a few hundred KiB, so 1 MiB leaves room while keeping
/// a runaway or hostile reply from growing the adapter's memory.
pub(crate) const MAX_REPLY_BYTES: usize = 1024 * 1024;

/// Read buffer of one connection. Small, so eight idle connections stay tiny.
const READ_BUFFER_BYTES: usize = 16 * 1024;

/// A line buffer grown past this by a large reply is released afterwards, so
/// one big `terminal.list` does not pin a megabyte per pooled connection.
const KEEP_LINE_CAPACITY_BYTES: usize = 64 * 1024;

/// One framed stream to hc. Every error returned here means the caller must
/// drop it.
pub(crate) struct Framed {
    path: Arc<Path>,
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
    line: Vec<u8>,
    request: Vec<u8>,
    /// Set by a write that failed before any byte left.
    sent_nothing: bool,
}

impl Framed {
    /// Connects to the socket at `path`; nothing is sent yet.
    pub(crate) async fn connect(path: Arc<Path>) -> Result<Framed, CoreError> {
        let stream = UnixStream::connect(&*path)
            .await
            .map_err(|source| connect_error(&path, source))?;
        let (read, writer) = stream.into_split();
        Ok(Framed {
            reader: BufReader::with_capacity(READ_BUFFER_BYTES, read),
            writer,
            next_id: 1,
            line: Vec::new(),
            request: Vec::new(),
            sent_nothing: false,
            path,
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// True unless the runtime already knows that something waits on the
    /// socket (EOF or unsolicited bytes), or the read buffer holds bytes
    /// past the last reply; then the kernel is asked ([`Framed::is_healthy`]).
    /// Costs no system call on a quiet connection. The runtime may not have
    /// seen a close that has only just happened: that connection fails its
    /// next write before a byte leaves ([`Framed::sent_nothing`]).
    pub(crate) fn looks_healthy(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        let stream = self.reader.get_ref().as_ref();
        // `try_io` calls its closure only when the cached readiness says
        // readable; otherwise it answers `WouldBlock` without a syscall.
        match stream.try_io(Interest::READABLE, || Ok(())) {
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
            _ => self.is_healthy(),
        }
    }

    /// True while nothing unexpected is waiting on the socket: no EOF, no
    /// unsolicited bytes, asked of the kernel. Checked before a pooled
    /// connection is reused for a send, so a connection to an hc that has
    /// since exited is never the one a send is dispatched on.
    pub(crate) fn is_healthy(&self) -> bool {
        if !self.reader.buffer().is_empty() {
            return false;
        }
        // Ask the kernel directly (not tokio's cached readiness, which may
        // not have seen hc's close yet): a non-blocking peek (the socket is
        // non-blocking) that finds nothing to read is the only healthy
        // answer; EOF or unsolicited bytes are not.
        let socket = SockRef::from(self.reader.get_ref().as_ref());
        let mut probe = [MaybeUninit::uninit(); 1];
        matches!(socket.peek(&mut probe), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
    }

    /// Writes one request line. Once this starts, the request may have
    /// reached hc, whatever happens next.
    pub(crate) async fn write_request<P: Serialize>(
        &mut self,
        method: Method,
        params: &P,
    ) -> Result<u64, CoreError> {
        let id = self.next_id;
        self.next_id += 1;
        let request = Outgoing {
            jsonrpc: TwoPointZero,
            id,
            method: method.as_str(),
            params,
        };
        self.request.clear();
        serde_json::to_writer(&mut self.request, &request).map_err(|e| CoreError::Protocol {
            path: self.path.to_path_buf(),
            method,
            detail: format!("cannot encode params: {e}"),
        })?;
        self.request.push(b'\n');
        let mut written = 0;
        while written < self.request.len() {
            match self.writer.write(&self.request[written..]).await {
                Ok(0) => {
                    let source = std::io::ErrorKind::WriteZero.into();
                    return Err(self.io_error(method, source));
                }
                Ok(n) => written += n,
                Err(source) => {
                    self.sent_nothing = written == 0;
                    return Err(self.io_error(method, source));
                }
            }
        }
        Ok(id)
    }

    /// True after a write that failed before the kernel took a single byte
    /// of the request (hc had closed the connection: `EPIPE`): hc cannot
    /// have received any of it.
    pub(crate) fn sent_nothing(&self) -> bool {
        self.sent_nothing
    }

    /// Reads and validates the reply to request `id`, decoding its result.
    pub(crate) async fn read_reply<R: DeserializeOwned>(
        &mut self,
        method: Method,
        id: u64,
    ) -> Result<R, CoreError> {
        self.read_line(method).await?;
        if let Some(value) = typed_result(&self.line, id) {
            if self.line.capacity() > KEEP_LINE_CAPACITY_BYTES {
                self.line = Vec::new();
            }
            return Ok(value);
        }
        let parsed = parse_reply(&self.line, id).map_err(|detail| {
            // A web server on the socket answers the JSON line with HTTP.
            if self.line.starts_with(b"HTTP/") {
                let status = String::from_utf8_lossy(&self.line[..self.line.len().min(40)]);
                return self.protocol(
                    method,
                    format!(
                        "it answered with HTTP ({:?}), not JSON-RPC: socketPath names a web server's socket, not hc's",
                        status.trim_end()
                    ),
                );
            }
            self.protocol(method, detail)
        });
        let outcome = match parsed {
            Ok(RpcReply::Result(raw)) => serde_json::from_str::<R>(raw.get())
                .map_err(|e| self.protocol(method, format!("result has the wrong shape: {e}"))),
            Ok(RpcReply::Error(err)) => Err(rpc_error(method, &err)),
            Err(e) => Err(e),
        };
        if self.line.capacity() > KEEP_LINE_CAPACITY_BYTES {
            self.line = Vec::new();
        }
        outcome
    }

    /// One request and its reply, without a deadline (the pool adds it).
    pub(crate) async fn call<P: Serialize, R: DeserializeOwned>(
        &mut self,
        method: Method,
        params: &P,
    ) -> Result<R, CoreError> {
        let id = self.write_request(method, params).await?;
        self.read_reply(method, id).await
    }

    /// Reads one `\n`-terminated line into `self.line`, failing as soon as
    /// it would pass [`MAX_REPLY_BYTES`]: the cap holds while reading.
    async fn read_line(&mut self, method: Method) -> Result<(), CoreError> {
        self.line.clear();
        loop {
            let buf = match self.reader.fill_buf().await {
                Ok(buf) => buf,
                Err(source) => return Err(self.io_error(method, source)),
            };
            if buf.is_empty() {
                return Err(CoreError::Closed {
                    path: self.path.to_path_buf(),
                    method,
                });
            }
            let (take, done) = match memchr::memchr(b'\n', buf) {
                Some(pos) => (pos, true),
                None => (buf.len(), false),
            };
            if self.line.len() + take > MAX_REPLY_BYTES {
                return Err(CoreError::ReplyTooLarge {
                    path: self.path.to_path_buf(),
                    method,
                });
            }
            self.line.extend_from_slice(&buf[..take]);
            self.reader.consume(if done { take + 1 } else { take });
            if done {
                return Ok(());
            }
        }
    }

    pub(crate) fn protocol(&self, method: Method, detail: String) -> CoreError {
        CoreError::Protocol {
            path: self.path.to_path_buf(),
            method,
            detail,
        }
    }

    fn io_error(&self, method: Method, source: std::io::Error) -> CoreError {
        CoreError::Io {
            path: self.path.to_path_buf(),
            method,
            source,
        }
    }
}

fn connect_error(path: &Path, source: std::io::Error) -> CoreError {
    use std::io::ErrorKind as K;
    let path = path.to_path_buf();
    match source.kind() {
        K::NotFound => CoreError::SocketMissing { path },
        // Linux answers ECONNREFUSED both for a stale socket and for a
        // regular file at the path.
        K::ConnectionRefused => match std::fs::metadata(&path) {
            Ok(meta) if meta.is_dir() => CoreError::NotASocket {
                path,
                what: "a directory",
            },
            Ok(meta) if meta.is_file() => CoreError::NotASocket {
                path,
                what: "a regular file",
            },
            _ => CoreError::NotListening { path },
        },
        _ => CoreError::Connect { path, source },
    }
}

pub(crate) fn rpc_error(method: Method, err: &ErrorObject<'_>) -> CoreError {
    let data: Option<serde_json::Value> = err
        .data()
        .and_then(|raw| serde_json::from_str(raw.get()).ok());
    let code = i64::from(err.code());
    CoreError::Rpc {
        method,
        code,
        message: err.message().to_owned(),
        kind: wire::ErrorKind::classify(code, data.as_ref()),
        data,
    }
}

/// A request line: the members in the order JSON-RPC lists them.
#[derive(Serialize)]
struct Outgoing<'a, P> {
    jsonrpc: TwoPointZero,
    id: u64,
    method: &'a str,
    params: &'a P,
}

/// The result of a well-formed reply to request `id`, read in one pass
/// with the envelope; `None` for anything else (an error reply, any
/// violation, a result of the wrong shape), which [`parse_reply`] then
/// reads again to say what is wrong. It takes exactly what the two passes
/// take with the same value: the line is checked as UTF-8 first, as
/// there, and every envelope rule is a required member here.
pub(crate) fn typed_result<R: DeserializeOwned>(line: &[u8], expected_id: u64) -> Option<R> {
    let text = std::str::from_utf8(line).ok()?;
    let reply: TypedReply<R> = serde_json::from_str(text).ok()?;
    let well_formed = reply.id == expected_id && reply.method.is_none() && reply.error.is_none();
    well_formed.then_some(reply.result)
}

/// [`Envelope`] with the result typed and every rule of a good reply a
/// required member: `jsonrpc` is "2.0", `id` a number, `result` present.
#[derive(Deserialize)]
#[serde(bound(deserialize = "R: DeserializeOwned"))]
struct TypedReply<R> {
    #[expect(dead_code, reason = "read only to check it is \"2.0\"")]
    jsonrpc: TwoPointZero,
    id: u64,
    method: Option<IgnoredAny>,
    result: R,
    #[serde(default, deserialize_with = "present")]
    error: Option<IgnoredAny>,
}

pub(crate) enum RpcReply<'a> {
    Result(&'a RawValue),
    Error(ErrorObject<'a>),
}

/// The reply envelope. `result` and `error` record presence even when their
/// value is `null`, so "both" and "neither" are both caught.
#[derive(Deserialize)]
struct Envelope<'a> {
    jsonrpc: Option<TwoPointZero>,
    #[serde(borrow)]
    id: Option<Id<'a>>,
    method: Option<IgnoredAny>,
    #[serde(default, borrow, deserialize_with = "present")]
    result: Option<&'a RawValue>,
    #[serde(default, borrow, deserialize_with = "present")]
    error: Option<ErrorObject<'a>>,
}

fn present<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(deserializer).map(Some)
}

pub(crate) fn parse_reply(line: &[u8], expected_id: u64) -> Result<RpcReply<'_>, String> {
    let text = std::str::from_utf8(line).map_err(|_| "reply is not UTF-8".to_owned())?;
    let trimmed = text.trim_start();
    if trimmed.starts_with('[') {
        return Err("reply is a batch".into());
    }
    if !trimmed.starts_with('{') {
        return Err(format!("reply is not a JSON object: {}", preview(text)));
    }
    let envelope: Envelope<'_> =
        serde_json::from_str(text).map_err(|e| format!("reply is not valid JSON-RPC: {e}"))?;
    if envelope.jsonrpc.is_none() {
        return Err("reply lacks \"jsonrpc\":\"2.0\"".into());
    }
    if envelope.method.is_some() {
        return Err("got a notification or request where a reply was due".into());
    }
    match envelope.id {
        Some(Id::Number(n)) if n == expected_id => {}
        Some(other) => {
            return Err(format!(
                "reply id {other:?} does not match request id {expected_id}"
            ));
        }
        None => return Err("reply has no id".into()),
    }
    match (envelope.result, envelope.error) {
        (Some(result), None) => Ok(RpcReply::Result(result)),
        (None, Some(error)) => Ok(RpcReply::Error(error)),
        (Some(_), Some(_)) => Err("reply has both result and error".into()),
        (None, None) => Err("reply has neither result nor error".into()),
    }
}

fn preview(text: &str) -> Cow<'_, str> {
    const PREVIEW_CHARS: usize = 40;
    match text.char_indices().nth(PREVIEW_CHARS) {
        Some((i, _)) => Cow::Owned(format!("{}…", &text[..i])),
        None => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    //! The reply envelope's rules, and the one-pass read held to the two
    //! passes it stands in for.

    use super::*;

    fn parse(line: &str, id: u64) -> Result<&'static str, String> {
        parse_reply(line.as_bytes(), id).map(|r| match r {
            RpcReply::Result(_) => "result",
            RpcReply::Error(_) => "error",
        })
    }

    #[test]
    fn accepts_exactly_one_of_result_and_error_with_matching_id() {
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":3,"result":{}}"#, 3),
            Ok("result")
        );
        assert_eq!(
            parse(
                r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"not_found"}}"#,
                3
            ),
            Ok("error")
        );
    }

    /// The two passes the one-pass read stands in for.
    fn two_passes<R: DeserializeOwned>(line: &[u8], id: u64) -> Option<R> {
        match parse_reply(line, id).ok()? {
            RpcReply::Result(raw) => serde_json::from_str(raw.get()).ok(),
            RpcReply::Error(_) => None,
        }
    }

    #[test]
    fn the_one_pass_read_takes_exactly_what_the_two_passes_take() {
        let screen = r#"{"address":"t1","created_ms":5,"text":"a\u001b[1mb\nc","complete":true,"status":"idle","status_seq":2}"#;
        let mut lines: Vec<Vec<u8>> = [
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen}}}"#),
            format!(r#"  {{"result":{screen},"id":3,"jsonrpc":"2.0","extra":[1,{{"x":null}}]}} "#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"method":null}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"error":null}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"method":"x"}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":4,"result":{screen}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":"3","result":{screen}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3.0,"result":{screen}}}"#),
            format!(r#"{{"jsonrpc":"1.0","id":3,"result":{screen}}}"#),
            format!(r#"{{"id":3,"result":{screen}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"id":3,"result":{screen}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"result":{screen}}}"#),
            format!(r#"[{{"jsonrpc":"2.0","id":3,"result":{screen}}}]"#),
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"error":{{"code":1,"message":"x"}}}}"#
            ),
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen}}} trailing"#),
            r#"{"jsonrpc":"2.0","id":3,"result":null}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":3,"result":{"address":"t1"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":3,"error":{"code":-32001,"message":"not_found"}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":3}"#.to_owned(),
            "not json".to_owned(),
        ]
        .into_iter()
        .map(String::into_bytes)
        .collect();
        // Bytes that are not UTF-8 in a member nobody reads.
        let mut bad_utf8 =
            format!(r#"{{"jsonrpc":"2.0","id":3,"result":{screen},"x":""#).into_bytes();
        bad_utf8.extend_from_slice(b"\xff\"}");
        lines.push(bad_utf8);
        let mut taken = 0;
        for line in &lines {
            let shown = String::from_utf8_lossy(line);
            let one = typed_result::<wire::ReadResult>(line, 3).map(|r| format!("{r:?}"));
            let two = two_passes::<wire::ReadResult>(line, 3).map(|r| format!("{r:?}"));
            assert_eq!(one, two, "typed: {shown}");
            let one = typed_result::<serde_json::Value>(line, 3);
            assert_eq!(
                one,
                two_passes::<serde_json::Value>(line, 3),
                "value: {shown}"
            );
            taken += usize::from(one.is_some());
        }
        // As a value: the good reply, the one with spare members, the one
        // with a null method, and the null and the partial result. Nothing
        // else is taken.
        assert_eq!(taken, 5);
    }

    #[test]
    fn rejects_every_envelope_violation() {
        let bad = [
            r#"{"jsonrpc":"2.0","id":4,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":3,"result":{}}"#,
            r#"{"id":3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"3","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":3}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":{},"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"result":null,"error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","method":"terminal.status","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"x","result":{}}"#,
            r#"[{"jsonrpc":"2.0","id":3,"result":{}}]"#,
            r#"{"jsonrpc":"2.0","id":3,"result":"#,
            r#"{"jsonrpc":"2.0","id":3,"id":3,"result":{}}"#,
            "not json",
        ];
        for line in bad {
            assert!(parse(line, 3).is_err(), "accepted: {line}");
        }
    }
}
