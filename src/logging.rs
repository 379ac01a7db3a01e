//! Logging: tracing to stderr only, never stdout (stdout carries MCP in
//! stdio mode), ANSI off. `RUST_LOG` sets levels (default `info`) through
//! an `EnvFilter`, and a second, fixed filter after it lets below `warn`
//! only this crate's own events. Other crates, rmcp first among them, log
//! whole requests and results (prompts, screens, and so secrets) at debug
//! and trace, and a more specific `RUST_LOG` directive beats any directive
//! added to the same `EnvFilter`; a separate filter cannot be lifted by any
//! `RUST_LOG` value. This crate never logs a prompt, a screen or a token.
//!
//! Logging never blocks an answer: a host that does not read the process's
//! stderr would otherwise stall every call once the pipe (64 KiB) is full,
//! the answer to a send that already landed included. Lines go through
//! [`stderr`], a queue of at most [`QUEUED_LINES`] drained by one thread;
//! when it is full a line is dropped and counted, and the count is written
//! to stderr as soon as a line gets through again.

use std::io::Write;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::time::Duration;

use tracing::Level;
use tracing::field::{Field, Visit};
use tracing_subscriber::EnvFilter;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::FormatFields;
use tracing_subscriber::fmt::format;

use crate::escape::bounded;
use tracing_subscriber::filter::Targets;
use tracing_subscriber::fmt;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The targets (module paths) whose events may pass below `warn`.
const OWN_TARGET: &str = env!("CARGO_CRATE_NAME");

/// Sends tracing to stderr through the bounded queue: levels from `RUST_LOG`
/// (default `info`), other crates' events only at `warn` and `error`.
pub fn init() {
    let levels = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let output = fmt::layer()
        .fmt_fields(BoundedFields)
        .with_writer(stderr)
        .with_ansi(false)
        .with_target(true);
    // Two global filters: a callsite is enabled only if both enable it, so
    // the cap holds whatever the RUST_LOG filter says, and both answers are
    // cached per callsite.
    let _ = tracing_subscriber::registry()
        .with(levels)
        .with(cap())
        .with(output)
        .try_init();
}

/// Events and spans of this crate at any level; anything else only at
/// `warn` or `error`. A static `Targets` filter, so each callsite's answer
/// is decided once and cached: a dynamic one would be asked again at every
/// span and event of every crate (the bench showed it in the CPU per call).
fn cap() -> Targets {
    Targets::new()
        .with_default(Level::WARN)
        .with_target(OWN_TARGET, Level::TRACE)
}

/// Longest field value a log line shows (a client's method name, path or
/// Host, an address, another crate's error): past it the value is cut and
/// its length given, so no client can make a line as long as its request.
pub(crate) const MAX_FIELD_CHARS: usize = 256;
/// Longest message: this crate's own sentences, with what they quote.
const MAX_MESSAGE_CHARS: usize = 1024;

/// Formats every field of every event and span escaped (control and format
/// characters, U+2028/U+2029) and bounded, whichever crate logged it: rmcp,
/// for one, logs a client's whole method name in its error events.
struct BoundedFields;

impl<'writer> FormatFields<'writer> for BoundedFields {
    fn format_fields<R: RecordFields>(
        &self,
        mut writer: format::Writer<'writer>,
        fields: R,
    ) -> std::fmt::Result {
        let mut visitor = Bounded {
            writer: &mut writer,
            first: true,
            result: Ok(()),
        };
        fields.record(&mut visitor);
        visitor.result
    }
}

struct Bounded<'a, 'writer> {
    writer: &'a mut format::Writer<'writer>,
    first: bool,
    result: std::fmt::Result,
}

impl Visit for Bounded<'_, '_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if self.result.is_err() {
            return;
        }
        let name = field.name();
        let text = format!("{value:?}");
        let separator = if std::mem::take(&mut self.first) {
            ""
        } else {
            " "
        };
        self.result = if name == "message" {
            write!(
                self.writer,
                "{separator}{}",
                bounded(&text, MAX_MESSAGE_CHARS)
            )
        } else {
            let name = name.strip_prefix("r#").unwrap_or(name);
            write!(
                self.writer,
                "{separator}{name}={}",
                bounded(&text, MAX_FIELD_CHARS)
            )
        };
    }
}

/// Lines waiting for stderr at most; past it they are dropped and counted.
pub(crate) const QUEUED_LINES: usize = 1_024;

enum Message {
    Line(Vec<u8>),
    /// Answered once every line queued before it is written.
    Flushed(std::sync::mpsc::Sender<()>),
}

struct Queue {
    sender: SyncSender<Message>,
    dropped: AtomicU64,
}

static QUEUE: OnceLock<Queue> = OnceLock::new();

fn queue() -> &'static Queue {
    QUEUE.get_or_init(|| {
        let (sender, receiver) = std::sync::mpsc::sync_channel(QUEUED_LINES);
        std::thread::Builder::new()
            .name("stderr".into())
            .spawn(move || drain(&receiver))
            .expect("the stderr thread starts");
        Queue {
            sender,
            dropped: AtomicU64::new(0),
        }
    })
}

/// The writer thread: blocks on stderr so that nobody else does. It takes
/// stderr's lock for one line at a time, never while waiting for the next:
/// a command's last words (`main`'s one failure line) would otherwise wait
/// for it forever.
fn drain(receiver: &Receiver<Message>) {
    let mut reported = 0;
    while let Ok(message) = receiver.recv() {
        match message {
            Message::Line(line) => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(&line);
                let dropped = QUEUE.get().map_or(0, |q| q.dropped.load(Ordering::Relaxed));
                if dropped > reported {
                    let _ = writeln!(
                        err,
                        "herdr-core-mcp: {} log line(s) dropped since the last report: stderr was not being read",
                        dropped - reported
                    );
                    reported = dropped;
                }
            }
            Message::Flushed(done) => {
                let _ = done.send(());
            }
        }
    }
}

/// A writer to stderr that never blocks: each `write` is one queued line
/// (tracing writes each event, and the audit each record, in one call).
pub(crate) struct Stderr;

/// The non-blocking stderr writer (a tracing `MakeWriter`).
pub(crate) fn stderr() -> Stderr {
    Stderr
}

impl Write for Stderr {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let queue = queue();
        match queue.sender.try_send(Message::Line(buf.to_vec())) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                queue.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Waits (at most `timeout`) until the lines queued so far are written:
/// for the end of the process.
pub fn flush(timeout: Duration) {
    let Some(queue) = QUEUE.get() else {
        return;
    };
    let (done, written) = std::sync::mpsc::channel();
    if queue.sender.try_send(Message::Flushed(done)).is_ok() {
        let _ = written.recv_timeout(timeout);
    }
}

#[cfg(test)]
mod tests {
    use tracing::Level;

    use super::cap;

    #[test]
    fn only_this_crate_passes_below_warn() {
        let cap = cap();
        assert!(cap.would_enable("herdr_core_mcp", &Level::TRACE));
        assert!(cap.would_enable("herdr_core_mcp::serve", &Level::DEBUG));
        assert!(!cap.would_enable("rmcp::service", &Level::INFO));
        assert!(cap.would_enable("rmcp::service", &Level::WARN));
        assert!(!cap.would_enable("hyper", &Level::DEBUG));
    }
}
