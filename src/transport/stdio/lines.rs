//! The stdio transport as rmcp sees it: newline-delimited JSON-RPC whose
//! every line passes the `guard` first. A malformed line is answered here
//! (`-32700` / `-32600` with `"id": null`) and the session goes on; only
//! valid messages reach rmcp. One writer task owns the output: every frame,
//! rmcp's or the guard's, is written whole before the next, so lines never
//! interleave.

use std::io;
use std::pin::Pin;

use rmcp::RoleServer;
use rmcp::model::ClientJsonRpcMessage;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::transport::guard::{self, Answer, Verdict};
use crate::transport::http::MAX_BODY_BYTES;

/// Longest line read: the same cap as an HTTP body. Longer lines are
/// answered `-32600` and skipped up to their end.
const MAX_LINE_BYTES: usize = MAX_BODY_BYTES;
/// Frames waiting for the writer.
const WRITE_QUEUE: usize = 64;

type Reader = Pin<Box<dyn AsyncRead + Send>>;
type Writer = Pin<Box<dyn AsyncWrite + Send>>;

pub struct Lines {
    read: BufReader<Reader>,
    /// The line being read; a partial line survives a cancelled receive.
    line: Vec<u8>,
    /// Skipping the rest of an oversized line.
    discarding: bool,
    out: Option<mpsc::Sender<Vec<u8>>>,
    /// The guard's answer not yet queued (survives a cancelled receive).
    pending: Option<Vec<u8>>,
    writer: Option<JoinHandle<io::Result<()>>>,
    /// Whether a request has reached rmcp: before the first one, rmcp ends
    /// the session on any notification or response, so those are dropped.
    started: bool,
}

enum Line {
    Full,
    Oversized,
    Eof,
}

impl Lines {
    pub fn new(reader: Reader, mut writer: Writer) -> Lines {
        let (out, mut frames) = mpsc::channel::<Vec<u8>>(WRITE_QUEUE);
        let writer = tokio::spawn(async move {
            while let Some(frame) = frames.recv().await {
                writer.write_all(&frame).await?;
                writer.flush().await?;
            }
            Ok(())
        });
        Lines {
            read: BufReader::new(reader),
            line: Vec::new(),
            discarding: false,
            out: Some(out),
            pending: None,
            writer: Some(writer),
            started: false,
        }
    }

    /// Reads one `\n`-terminated line into `self.line`, never past the cap.
    /// Cancel-safe: bytes are copied and consumed with no await between.
    async fn read_line(&mut self) -> io::Result<Line> {
        loop {
            let available = self.read.fill_buf().await?;
            if available.is_empty() {
                return Ok(Line::Eof);
            }
            let newline = available.iter().position(|b| *b == b'\n');
            let take = newline.map_or(available.len(), |i| i + 1);
            let mut done = None;
            if self.discarding {
                self.discarding = newline.is_none();
            } else if self.line.len() + take > MAX_LINE_BYTES + 1 {
                self.line.clear();
                self.discarding = newline.is_none();
                done = Some(Line::Oversized);
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
    fn judge(&mut self) -> Option<Verdict> {
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

fn frame(answer: &Answer) -> Vec<u8> {
    let mut frame = answer.to_json().into_bytes();
    frame.push(b'\n');
    frame
}

impl Transport<RoleServer> for Lines {
    type Error = io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleServer>,
    ) -> impl Future<Output = Result<(), io::Error>> + Send + 'static {
        let out = self.out.clone();
        async move {
            let mut frame = serde_json::to_vec(&item).map_err(io::Error::other)?;
            frame.push(b'\n');
            let closed = || io::Error::new(io::ErrorKind::BrokenPipe, "stdout is closed");
            out.ok_or_else(closed)?
                .send(frame)
                .await
                .map_err(|_| closed())
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleServer>> {
        loop {
            if self.pending.is_some() {
                // reserve, then a synchronous send: a receive cancelled
                // while waiting for room loses nothing.
                let permit = self.out.as_ref()?.reserve().await.ok()?;
                permit.send(self.pending.take().expect("checked above"));
            }
            match self.read_line().await {
                Ok(Line::Full) => {}
                Ok(Line::Oversized) => {
                    let answer = Answer::invalid_request(&format!(
                        "the message is over {MAX_LINE_BYTES} bytes: send fewer characters"
                    ));
                    self.pending = Some(frame(&answer));
                    continue;
                }
                Ok(Line::Eof) | Err(_) => return None,
            }
            match self.judge() {
                None | Some(Verdict::Ignore) => {}
                Some(Verdict::Answer(answer)) => self.pending = Some(frame(&answer)),
                Some(Verdict::Message(message)) => {
                    self.started |= matches!(*message, ClientJsonRpcMessage::Request(_));
                    if self.started {
                        return Some(*message);
                    }
                }
            }
        }
    }

    async fn close(&mut self) -> Result<(), io::Error> {
        // The writer ends once the frames already queued are written.
        drop(self.out.take());
        if let Some(writer) = self.writer.take() {
            writer.await.map_err(io::Error::other)??;
        }
        Ok(())
    }
}
