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

use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::config::{SendMode, check_directories, current_uid};
use crate::escape;
use crate::hc::wire::TerminalStatus;

/// Mode of a newly created audit file: the record is the operator's.
const AUDIT_FILE_MODE: u32 = 0o600;
/// Any permission for group or others: the audit names terminals and when
/// they were prompted, so it is private like the config.
const SHARED_BITS: u32 = 0o077;
/// Lines kept while the file cannot be written (each attempt then is
/// refused, so they accumulate only as fast as refused attempts); past it
/// they are counted, and the count is written once the file takes lines
/// again.
const MAX_UNWRITTEN_LINES: usize = 1_024;

/// What is recorded of one send attempt.
#[derive(Debug, Clone, Copy)]
pub struct SendRecord<'a> {
    /// The core that answered the preflight, when one did.
    pub core_id: Option<&'a str>,
    pub address: &'a str,
    /// The lifetime approved at preflight (or the one the caller named).
    pub created_ms: Option<i64>,
    /// The lifetime hc says the input reached, when it is another one.
    pub landed_created_ms: Option<i64>,
    pub send_mode: SendMode,
    pub preflight_status: Option<TerminalStatus>,
    pub outcome: Outcome,
    pub reason: ReasonCode,
    /// The prompt: only its length and digest are recorded.
    pub text: &'a str,
}

/// One audit line as written.
#[derive(Serialize)]
struct Line<'a> {
    audit: &'static str,
    at_ms: u128,
    core_id: Option<&'a str>,
    address: &'a str,
    created_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    landed_created_ms: Option<i64>,
    send_mode: SendMode,
    preflight_status: Option<TerminalStatus>,
    outcome: Outcome,
    reason: ReasonCode,
    chars: usize,
    sha256: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// hc accepted the input (the task is not necessarily done).
    Sent,
    /// Nothing was written.
    NotSent,
    /// The input may or may not have landed: read the screen before deciding.
    Unknown,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Sent => "sent",
            Outcome::NotSent => "not_sent",
            Outcome::Unknown => "unknown",
        }
    }
}

/// The stable, machine-readable reason of every outcome: `accepted` and
/// `accepted_other_lifetime` (the input landed in another lifetime at the
/// same address: isError) are sent; `post_dispatch_failure` and
/// `internal_error` are unknown; every other one is not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    // sent: hc accepted the input into the approved lifetime.
    Accepted,
    // sent, and isError: hc accepted the input into ANOTHER lifetime at
    // the same address (the approved one ended just before).
    AcceptedOtherLifetime,
    // not_sent: the audit log cannot be written.
    AuditUnavailable,
    TextEmpty,
    TextTooLong,
    ControlCharacter,
    ConfigInvalid,
    NoCoreId,
    Cancelled,
    NotFound,
    PreflightFailed,
    CoreIdMismatch,
    LifetimeMismatch,
    Finished,
    NotApproved,
    StatusNotAllowed,
    DispatchFailed,
    StatusMismatch,
    // unknown: the request reached hc and no valid answer came back.
    PostDispatchFailure,
    // unknown: the adapter failed inside the attempt.
    InternalError,
}

impl ReasonCode {
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Accepted => "accepted",
            ReasonCode::AcceptedOtherLifetime => "accepted_other_lifetime",
            ReasonCode::AuditUnavailable => "audit_unavailable",
            ReasonCode::TextEmpty => "text_empty",
            ReasonCode::TextTooLong => "text_too_long",
            ReasonCode::ControlCharacter => "control_character",
            ReasonCode::ConfigInvalid => "config_invalid",
            ReasonCode::NoCoreId => "no_core_id",
            ReasonCode::Cancelled => "cancelled",
            ReasonCode::NotFound => "not_found",
            ReasonCode::PreflightFailed => "preflight_failed",
            ReasonCode::CoreIdMismatch => "core_id_mismatch",
            ReasonCode::LifetimeMismatch => "lifetime_mismatch",
            ReasonCode::Finished => "finished",
            ReasonCode::NotApproved => "not_approved",
            ReasonCode::StatusNotAllowed => "status_not_allowed",
            ReasonCode::DispatchFailed => "dispatch_failed",
            ReasonCode::StatusMismatch => "status_mismatch",
            ReasonCode::PostDispatchFailure => "post_dispatch_failure",
            ReasonCode::InternalError => "internal_error",
        }
    }
}

/// Whether an attempt's own line reached the audit file: `written`;
/// `not_written` (kept, written first once the file takes lines again,
/// and sends are refused until then); `log_only` (no `auditLog`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum AuditWrite {
    // Appended to `auditLog`.
    Written,
    // `auditLog` could not be written; the line is kept and written
    // first once it can be, and sends are refused until then.
    NotWritten,
    // No `auditLog` is configured: the line went to the log only.
    LogOnly,
}

/// Why the audit file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// It could not be opened (or created).
    #[error(
        "cannot open auditLog {path} for appending: {source}; fix the path or its directory, or remove auditLog"
    )]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// Its last component is a symbolic link.
    #[error("auditLog {path} is a symbolic link: name the file itself, a regular file of your own")]
    Symlink { path: PathBuf },
    /// It is a FIFO, a device, a socket or a directory.
    #[error(
        "auditLog {path} is not a regular file ({kind}): name a regular file of your own, e.g. ~/.local/state/herdr-core-mcp/audit.jsonl"
    )]
    NotAFile { path: PathBuf, kind: &'static str },
    /// Someone else could read, change or replace it.
    #[error("auditLog {path} is refused: {why}")]
    Unsafe { path: PathBuf, why: String },
}

/// Where audit lines go.
pub struct Audit {
    stream: Mutex<Box<dyn Write + Send>>,
    file: Option<AuditFile>,
}

struct AuditFile {
    path: PathBuf,
    state: Mutex<FileState>,
}

struct FileState {
    file: File,
    /// Lines not yet (wholly) written, oldest first, with the bytes of the
    /// first one already written.
    unwritten: VecDeque<String>,
    written_of_first: usize,
    /// Lines dropped because `unwritten` was full.
    lost: u64,
}

impl Audit {
    /// Audit lines to `stream`, and appended to the file at `file` when
    /// given (created 0600 if absent; opened and checked now, so a path
    /// that cannot be used is refused at start).
    pub fn open(stream: Box<dyn Write + Send>, file: Option<&Path>) -> Result<Audit, AuditError> {
        let file = match file {
            Some(path) => Some(AuditFile {
                path: path.to_path_buf(),
                state: Mutex::new(FileState {
                    file: open_checked(path)?,
                    unwritten: VecDeque::new(),
                    written_of_first: 0,
                    lost: 0,
                }),
            }),
            None => None,
        };
        Ok(Audit {
            stream: Mutex::new(stream),
            file,
        })
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
        let mut line = line(record);
        line.push('\n');
        if let Err(e) = self
            .stream
            .lock()
            .expect("audit stream")
            .write_all(line.as_bytes())
        {
            tracing::error!("cannot write the audit line: {e}");
        }
        match &self.file {
            None => AuditWrite::LogOnly,
            Some(file) => file.append(line),
        }
    }
}

impl AuditFile {
    /// Queues `line` behind any outstanding ones and writes what it can.
    fn append(&self, line: String) -> AuditWrite {
        {
            let mut state = self.state.lock().expect("audit file");
            if state.unwritten.len() >= MAX_UNWRITTEN_LINES {
                state.lost += 1;
                tracing::error!(
                    "auditLog {} still cannot be written: this attempt's line is lost (counted; the count is written once the file takes lines)",
                    escape::printable(&self.path.display().to_string())
                );
                return AuditWrite::NotWritten;
            }
            state.unwritten.push_back(line);
        }
        if self.flush() {
            AuditWrite::Written
        } else {
            AuditWrite::NotWritten
        }
    }

    /// Writes the outstanding lines in order; whether none is left.
    fn flush(&self) -> bool {
        let mut guard = self.state.lock().expect("audit file");
        let state = &mut *guard;
        if state.lost > 0 {
            let lost = format!(
                "{{\"audit\":\"lines_lost\",\"lines\":{},\"at_ms\":{}}}\n",
                state.lost,
                now_ms()
            );
            state.unwritten.push_back(lost);
            state.lost = 0;
        }
        while let Some(first) = state.unwritten.front() {
            let rest = &first.as_bytes()[state.written_of_first..];
            let len = rest.len();
            match state.file.write(rest) {
                Ok(0) => return self.failed(&std::io::ErrorKind::WriteZero.into()),
                Ok(n) if n == len => {
                    state.unwritten.pop_front();
                    state.written_of_first = 0;
                }
                // A partial line is finished by the next write, so the
                // file never holds half a line followed by another.
                Ok(n) => state.written_of_first += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return self.failed(&e),
            }
        }
        true
    }

    fn failed(&self, e: &std::io::Error) -> bool {
        tracing::error!(
            "cannot append to auditLog {}: {e}; sends are refused (audit_unavailable) until it can be written",
            escape::printable(&self.path.display().to_string())
        );
        false
    }
}

/// Opens `path` for appending as an untrusted path: never through a
/// symlink, never blocking on a FIFO, and only a private regular file of
/// the operator's in directories only the operator (or root) can change.
fn open_checked(path: &Path) -> Result<File, AuditError> {
    let me = current_uid();
    let unsafe_because = |why: String| AuditError::Unsafe {
        path: path.to_path_buf(),
        why,
    };
    let (Some(parent), Some(name)) = (path.parent(), path.file_name()) else {
        return Err(AuditError::NotAFile {
            path: path.to_path_buf(),
            kind: "a directory",
        });
    };
    let parent = std::fs::canonicalize(parent).map_err(|source| AuditError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    check_directories(&parent.join(name), me).map_err(unsafe_because)?;
    // What is there already, as it is (not followed): the open below
    // refuses the same again, but cannot tell a FIFO from other errors.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        if meta.file_type().is_symlink() {
            return Err(AuditError::Symlink {
                path: path.to_path_buf(),
            });
        }
        if !meta.is_file() {
            return Err(AuditError::NotAFile {
                path: path.to_path_buf(),
                kind: file_kind(&meta),
            });
        }
    }
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(AUDIT_FILE_MODE)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|source| {
            if source.raw_os_error() == Some(libc::ELOOP) {
                AuditError::Symlink {
                    path: path.to_path_buf(),
                }
            } else {
                AuditError::Open {
                    path: path.to_path_buf(),
                    source,
                }
            }
        })?;
    let meta = file.metadata().map_err(|source| AuditError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    if !meta.is_file() {
        return Err(AuditError::NotAFile {
            path: path.to_path_buf(),
            kind: file_kind(&meta),
        });
    }
    if meta.uid() != me {
        return Err(unsafe_because(format!(
            "it is owned by uid {}, not by you (uid {me}): run chown {me} {} (or name a file of your own)",
            meta.uid(),
            path.display()
        )));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & SHARED_BITS != 0 {
        return Err(unsafe_because(format!(
            "others have access to it (mode {:o}): run chmod 600 {}",
            mode & 0o777,
            path.display()
        )));
    }
    Ok(file)
}

fn file_kind(meta: &std::fs::Metadata) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    let kind = meta.file_type();
    if kind.is_fifo() {
        "a FIFO"
    } else if kind.is_char_device() || kind.is_block_device() {
        "a device"
    } else if kind.is_socket() {
        "a socket"
    } else if kind.is_dir() {
        "a directory"
    } else {
        "not a regular file"
    }
}

fn now_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis())
}

/// The JSON of one record, with every hazardous character escaped.
fn line(record: &SendRecord<'_>) -> String {
    let line = Line {
        audit: "send_prompt",
        at_ms: now_ms(),
        core_id: record.core_id,
        address: record.address,
        created_ms: record.created_ms,
        landed_created_ms: record.landed_created_ms,
        send_mode: record.send_mode,
        preflight_status: record.preflight_status,
        outcome: record.outcome,
        reason: record.reason,
        chars: record.text.chars().count(),
        sha256: sha256_hex(record.text),
    };
    let json = serde_json::to_string(&line).expect("an audit line always encodes");
    escape::json(&json).into_owned()
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_the_digest_never_the_text_and_no_raw_hazards() {
        let record = SendRecord {
            core_id: Some("c1"),
            address: "t\u{202e}1",
            created_ms: Some(5),
            landed_created_ms: None,
            send_mode: SendMode::IdleOnly,
            preflight_status: Some(TerminalStatus::Idle),
            outcome: Outcome::Sent,
            reason: ReasonCode::Accepted,
            text: "secret prompt",
        };
        let line = line(&record);
        assert!(!line.contains("secret"), "{line}");
        assert!(line.contains(&sha256_hex("secret prompt")));
        assert!(line.contains("t\\u202e1"), "{line}");
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["audit"], "send_prompt");
        assert_eq!(parsed["chars"], 13);
        assert_eq!(parsed["preflight_status"], "idle");
        assert_eq!(parsed["send_mode"], "idle-only");
    }
}
