//! The content-free audit record: one JSON line per send attempt, with a
//! SHA-256 of the prompt instead of the prompt. Never the text, never the
//! screen. The tool that sends fills a [`SendRecord`]; this module writes
//! it, before the tool answers, to its own always-on stream (stderr for
//! `serve`: no log level can switch it off, but like every log line it is
//! dropped rather than block when stderr is not read) and, when the
//! operator set `auditLog`, appended to that file.
//!
//! The file is not lossy. It is opened like a file an attacker may have
//! prepared (`O_NOFOLLOW`, `O_NONBLOCK`, a regular file of the operator's
//! own, private, in directories only the operator can change), and a line
//! that cannot be written is kept and written again, in order, before
//! anything else. While one is outstanding, [`Audit::ready`] says no and
//! sends are refused before dispatch, so there is never an unaudited send.
//!
//! The record's vocabulary ([`Outcome`], [`ReasonCode`]) lives here, below
//! the tool that fills it.

mod file;
mod record;

use crate::lock::held;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;

pub(crate) use file::AuditError;
use file::AuditFile;
pub(crate) use record::{
    ConfirmVia, Confirmation, Outcome, ReasonCode, RecordedAddress, SendRecord,
};

/// Whether an attempt's own line reached the audit file: `written`;
/// `not_written` (kept, written first once the file takes lines again,
/// and sends are refused until then); `log_only` (no `auditLog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditWrite {
    /// Appended to `auditLog`.
    Written,
    /// `auditLog` could not be written; the line is kept and written
    /// first once it can be, and sends are refused until then.
    NotWritten,
    /// No `auditLog` is configured: the line went to the log only.
    LogOnly,
}

/// Where audit lines go.
pub struct Audit {
    stream: Mutex<Box<dyn Write + Send>>,
    file: Option<AuditFile>,
}

impl Audit {
    /// Audit lines to `stream`, and appended to the file at `file` when
    /// given (created 0600 if absent; opened and checked now, so a path
    /// that cannot be used is refused at start).
    pub fn open(stream: Box<dyn Write + Send>, file: Option<&Path>) -> Result<Audit, AuditError> {
        let file = match file {
            Some(path) => Some(AuditFile::open(path)?),
            None => None,
        };
        Ok(Audit {
            stream: Mutex::new(stream),
            file,
        })
    }

    /// Whether `serve` would accept `path` as `auditLog`, checked without
    /// creating or opening it.
    pub fn check_file(path: &Path) -> Result<(), AuditError> {
        file::check(path)
    }

    /// Whether a send may go ahead: no `auditLog`, or every line for it is
    /// written (this retries the outstanding ones).
    pub fn ready(&self) -> bool {
        self.file.as_ref().is_none_or(AuditFile::flush)
    }

    /// Writes one line for `record` to the stream and the file. The file
    /// write is a `write` on an `O_APPEND` descriptor, done before this
    /// returns: it is in the kernel, and survives the adapter being killed.
    pub fn record(&self, record: &SendRecord<'_>) -> AuditWrite {
        let mut line = record::line(record);
        line.push('\n');
        if let Err(e) = held(&self.stream).write_all(line.as_bytes()) {
            tracing::error!("cannot write the audit line: {e}");
        }
        match &self.file {
            None => AuditWrite::LogOnly,
            Some(file) => file.append(line),
        }
    }
}

pub(crate) fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}
