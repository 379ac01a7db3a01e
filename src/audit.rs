//! The content-free audit record: one JSON line per send attempt, with a
//! SHA-256 of the prompt instead of the prompt. Never the text, never the
//! screen. The tool that sends fills a [`SendRecord`]; this module writes
//! it, before the tool answers, to its own always-on stream (stderr for
//! `serve`: no log level can switch it off) and, when the operator set
//! `auditLog`, appended to that file.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::config::SendMode;
use crate::escape;
use crate::hc::wire::TerminalStatus;

/// Mode of a newly created audit file: the record is the operator's.
const AUDIT_FILE_MODE: u32 = 0o600;

/// What is recorded of one send attempt.
#[derive(Debug, Clone, Copy)]
pub struct SendRecord<'a> {
    /// The core that answered the preflight, when one did.
    pub core_id: Option<&'a str>,
    pub address: &'a str,
    pub created_ms: Option<i64>,
    pub send_mode: SendMode,
    pub preflight_status: Option<TerminalStatus>,
    /// `sent`, `not_sent` or `unknown`.
    pub outcome: &'static str,
    /// The reason code.
    pub reason: &'static str,
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
    send_mode: SendMode,
    preflight_status: Option<TerminalStatus>,
    outcome: &'static str,
    reason: &'static str,
    chars: usize,
    sha256: String,
}

/// Why the audit file cannot be used.
#[derive(Debug, thiserror::Error)]
#[error(
    "cannot open auditLog {path} for appending: {source}; fix the path or its directory, or remove auditLog"
)]
pub struct AuditError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Where audit lines go.
pub struct Audit {
    stream: Mutex<Box<dyn Write + Send>>,
    file: Option<(PathBuf, Mutex<File>)>,
}

impl Audit {
    /// Audit lines to `stream`, and appended to the file at `file` when
    /// given (created 0600 if absent; opened now, so a path that cannot be
    /// written is refused at start).
    pub fn open(stream: Box<dyn Write + Send>, file: Option<&Path>) -> Result<Audit, AuditError> {
        let file = match file {
            Some(path) => {
                let opened = OpenOptions::new()
                    .append(true)
                    .create(true)
                    .mode(AUDIT_FILE_MODE)
                    .open(path)
                    .map_err(|source| AuditError {
                        path: path.to_path_buf(),
                        source,
                    })?;
                Some((path.to_path_buf(), Mutex::new(opened)))
            }
            None => None,
        };
        Ok(Audit {
            stream: Mutex::new(stream),
            file,
        })
    }

    /// Lines to stderr only.
    pub fn stderr() -> Audit {
        Audit {
            stream: Mutex::new(Box::new(std::io::stderr())),
            file: None,
        }
    }

    /// Writes one line for `record` to the stream and the file. The file
    /// write is one `write` on an `O_APPEND` descriptor, done before this
    /// returns: it is in the kernel, and survives the adapter being killed.
    pub fn record(&self, record: &SendRecord<'_>) {
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
        if let Some((path, file)) = &self.file
            && let Err(e) = file.lock().expect("audit file").write_all(line.as_bytes())
        {
            tracing::error!(
                "cannot append the audit line to {}: {e}",
                escape::printable(&path.display().to_string())
            );
        }
    }
}

/// The JSON of one record, with every hazardous character escaped.
fn line(record: &SendRecord<'_>) -> String {
    let at_ms = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let line = Line {
        audit: "send_prompt",
        at_ms,
        core_id: record.core_id,
        address: record.address,
        created_ms: record.created_ms,
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
            send_mode: SendMode::IdleOnly,
            preflight_status: Some(TerminalStatus::Idle),
            outcome: "sent",
            reason: "accepted",
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
