//! The audit file: opened as a path an attacker may have prepared, and
//! appended to without losing a line (see the parent module).

use crate::lock::held;
use std::collections::VecDeque;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::{AuditWrite, now_ms};
use crate::config::{check_directories, current_uid};
use crate::escape;

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

/// Why the audit file cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// It could not be opened (or created).
    #[error(
        "cannot open auditLog {path} for appending: {source}; fix the path or its directory, or remove auditLog"
    )]
    Open {
        /// The `auditLog` path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Its last component is a symbolic link.
    #[error("auditLog {path} is a symbolic link: name the file itself, a regular file of your own")]
    Symlink {
        /// The `auditLog` path.
        path: PathBuf,
    },
    /// It is a FIFO, a device, a socket or a directory.
    #[error(
        "auditLog {path} is not a regular file ({kind}): name a regular file of your own, e.g. ~/.local/state/herdr-core-mcp/audit.jsonl"
    )]
    NotAFile {
        /// The `auditLog` path.
        path: PathBuf,
        /// What is there instead, e.g. `a FIFO`.
        kind: &'static str,
    },
    /// Someone else could read, change or replace it.
    #[error("auditLog {path} is refused: {why}")]
    Unsafe {
        /// The `auditLog` path.
        path: PathBuf,
        /// Who else has access to it or its directories, and the fix.
        why: String,
    },
}

pub(super) struct AuditFile {
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

impl AuditFile {
    /// The file at `path`, opened and checked now.
    pub(super) fn open(path: &Path) -> Result<AuditFile, AuditError> {
        Ok(AuditFile {
            path: path.to_path_buf(),
            state: Mutex::new(FileState {
                file: open_checked(path)?,
                unwritten: VecDeque::new(),
                written_of_first: 0,
                lost: 0,
            }),
        })
    }

    /// Queues `line` behind any outstanding ones and writes what it can.
    pub(super) fn append(&self, line: String) -> AuditWrite {
        {
            let mut state = held(&self.state);
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
    pub(super) fn flush(&self) -> bool {
        let mut guard = held(&self.state);
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

/// The directories above `path` (only you or root may change them).
fn check_parents(path: &Path, me: u32) -> Result<(), AuditError> {
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
    check_directories(&parent.join(name), me).map_err(|why| AuditError::Unsafe {
        path: path.to_path_buf(),
        why,
    })
}

/// What is at `path` as it is (not followed): a regular file, not a link.
fn check_kind(path: &Path, meta: &std::fs::Metadata) -> Result<(), AuditError> {
    if meta.file_type().is_symlink() {
        return Err(AuditError::Symlink {
            path: path.to_path_buf(),
        });
    }
    if !meta.is_file() {
        return Err(AuditError::NotAFile {
            path: path.to_path_buf(),
            kind: file_kind(meta),
        });
    }
    Ok(())
}

/// The file is yours and nobody else's.
fn check_private(path: &Path, meta: &std::fs::Metadata, me: u32) -> Result<(), AuditError> {
    let unsafe_because = |why: String| AuditError::Unsafe {
        path: path.to_path_buf(),
        why,
    };
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
    Ok(())
}

/// What [`open_checked`] would say of `path`, without creating or opening
/// it (for `doctor`, which writes nothing): the directories, and the file
/// if it is there (a missing one is created 0600 by `serve`).
pub(super) fn check(path: &Path) -> Result<(), AuditError> {
    let me = current_uid();
    check_parents(path, me)?;
    match std::fs::symlink_metadata(path) {
        Ok(meta) => {
            check_kind(path, &meta)?;
            check_private(path, &meta, me)
        }
        Err(_) => Ok(()),
    }
}

/// Opens `path` for appending as an untrusted path: never through a
/// symlink, never blocking on a FIFO, and only a private regular file of
/// the operator's in directories only the operator (or root) can change.
fn open_checked(path: &Path) -> Result<File, AuditError> {
    let me = current_uid();
    check_parents(path, me)?;
    // What is there already, as it is (not followed): the open below
    // refuses the same again, but cannot tell a FIFO from other errors.
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        check_kind(path, &meta)?;
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
    check_kind(path, &meta)?;
    check_private(path, &meta, me)?;
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
