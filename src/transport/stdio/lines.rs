//! The stdio transport as rmcp sees it: newline-delimited JSON-RPC whose
//! every line passes the `guard` first. A malformed line is answered here
//! (`-32700` / `-32600` with `"id": null`) and the session goes on; only
//! valid messages reach rmcp. The output is behind one lock held for a
//! whole frame, rmcp's or the guard's, so lines never interleave; rmcp's
//! replies are written by its own send futures, with no hand-off to
//! another task.

use std::io;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, GetExtensions};
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::Mutex;

use crate::caller::Caller;
use crate::mcp::HerdrServer;
use crate::mcp::access::Refused;
use crate::transport::MAX_MESSAGE_BYTES;
use crate::transport::guard::{self, Reply, Screened};

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

pub(super) struct Lines {
    read: BufReader<Reader>,
    /// The line being read; a partial line survives a cancelled receive.
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    writer: Arc<Mutex<Output>>,
    /// Whether a request has reached rmcp: before the first one, rmcp ends
    /// the session on any notification or response, so those are dropped.
    started: bool,
    /// The surface served, told of tool calls the guard refused.
    server: HerdrServer,
}

/// The output and the buffer each frame is written into, kept from frame to
/// frame (a large answer's is let go afterwards).
struct Output {
    writer: Writer,
    frame: Vec<u8>,
}

/// A frame buffer grown past this by one large answer is released after it.
const KEEP_FRAME_CAPACITY_BYTES: usize = 256 * 1024;

enum Line {
    Full,
    /// Over the cap: answered under the id read from its start, if any.
    Oversized(Option<serde_json::Value>),
    Eof,
}

impl Lines {
    pub(super) fn new(reader: Reader, writer: Writer, server: HerdrServer) -> Lines {
        Lines {
            read: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(Output {
                writer,
                frame: Vec::new(),
            })),
            started: false,
            server,
        }
    }

    /// Writes the guard's answer from a task of its own, so a receive that
    /// is cancelled (rmcp polls it in a select) never cuts a frame short.
    fn answer(&self, answer: &Reply) {
        let writer = Arc::clone(&self.writer);
        let answer = answer.to_json();
        tokio::spawn(async move {
            if let Err(e) = write_frame(&writer, |frame| {
                frame.extend_from_slice(answer.as_bytes());
                Ok(())
            })
            .await
            {
                tracing::debug!("stdio answer not written: {e}");
            }
        });
    }

    /// Reads one `\n`-terminated line into `self.line`, never past the cap.
    /// Cancel-safe: bytes are copied and consumed with no await between.
    async fn read_line(&mut self) -> io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let newline = memchr::memchr(b'\n', available);
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut done = None;
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.line.len() + take > MAX_MESSAGE_BYTES + 1 {
                // The start, up to the cap, is read for the request's id.
                let room = MAX_MESSAGE_BYTES - self.line.len().min(MAX_MESSAGE_BYTES);
                self.line.extend_from_slice(&available[..room.min(take)]);
                let id = guard::leading_id(&self.line);
                self.line.clear();
                self.discarding = newline.is_none();
                done = Some(Line::Oversized(id));
            } else {
                self.line.extend_from_slice(&available[..take]);
                done = newline.map(|_| Line::Full);
            }
            self.read.consume(take);
            if let Some(done) = done {
                return Ok(done);
            }
        }
    }

    /// What to do with the line just read.
    fn judge(&mut self) -> Option<Screened> {
        let text = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let verdict = if text.iter().all(u8::is_ascii_whitespace) {
            None
        } else {
            Some(guard::check(text))
        };
        self.line.clear();
        verdict
    }
}

/// One whole frame, made by `make` in the kept buffer and flushed, under
/// the output lock.
async fn write_frame(
    output: &Mutex<Output>,
    make: impl FnOnce(&mut Vec<u8>) -> io::Result<()>,
) -> io::Result<()> {
    let mut output = output.lock().await;
    let Output { writer, frame } = &mut *output;
    frame.clear();
    make(frame)?;
    frame.push(b'\n');
    let written = async {
        writer.write_all(frame).await?;
        writer.flush().await
    }
    .await;
    if frame.capacity() > KEEP_FRAME_CAPACITY_BYTES {
        *frame = Vec::new();
    }
    written
}

impl Lines {
    /// What the surface takes before rmcp sees a request (`HerdrServer::admit`: a
    /// listen's place among the subscribers), put in its extensions; or the
    /// refusal to answer instead.
    fn admit(&self, message: &mut ClientJsonRpcMessage) -> Result<(), Reply> {
        let ClientJsonRpcMessage::Request(request) = message else {
            return Ok(());
        };
        match self
            .server
            .admit(request.request.method(), &Caller::stdio())
        {
            Ok(Some(seat)) => {
                request.request.extensions_mut().insert(seat);
                Ok(())
            }
            Ok(None) => Ok(()),
            Err(why) => Err(Reply::refused_request(
                serde_json::to_value(&request.id).unwrap_or_default(),
                &why,
            )),
        }
    }
}

impl Transport<RoleServer> for Lines {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let writer = Arc::clone(&self.writer);
        async move {
            write_frame(&writer, |frame| {
                serde_json::to_writer(frame, &item).map_err(io::Error::other)
            })
            .await
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            match self.read_line().await {
                Ok(Line::Full) => {}
                Ok(Line::Oversized(id)) => {
                    self.answer(&Reply::invalid_request_for(
                        id.unwrap_or_default(),
                        &format!(
                            "the message is over {MAX_MESSAGE_BYTES} bytes: send fewer characters"
                        ),
                    ));
                    continue;
                }
                Ok(Line::Eof) | Err(_) => return None,
            }
            match self.judge() {
                None | Some(Screened::Ignore) => {}
                Some(Screened::Reply(answer)) => {
                    if let Some(call) = answer.refused_call() {
                        self.server.refused(
                            &call.tool,
                            Some(&call.arguments),
                            Refused::Arguments {
                                argument: &call.argument,
                            },
                            &Caller::stdio(),
                        );
                    }
                    self.answer(&answer);
                }
                Some(Screened::Message(mut message)) => {
                    if let Err(refused) = self.admit(&mut message) {
                        self.answer(&refused);
                        continue;
                    }
                    self.started |= matches!(*message, ClientJsonRpcMessage::Request(_));
                    if self.started {
                        return Some(*message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        self.writer.lock().await.writer.flush().await
    }
}
