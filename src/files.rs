//! Reading a file an operator names on the command line (such as
//! `inspect-core --schema FILE`) without trusting what sits at the path:
//! opened without blocking (a FIFO with no writer, a device or a terminal
//! never stalls the command), refused unless it is a regular file, and
//! never read past its cap, checked on the size the descriptor reports and
//! again while reading (a file that grows meanwhile, or a device that
//! claims size 0 and never ends). Neutral ground: it imports nothing of
//! the adapter.

use std::io::Read;
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// It could not be opened or read.
    #[error("cannot read it: {0}")]
    Io(#[from] std::io::Error),
    /// It is not a regular file.
    #[error("it is {0}, not a regular file")]
    NotAFile(&'static str),
    /// It is bigger than its cap.
    #[error("it is over {max_bytes} bytes, more than such a file can be")]
    TooLarge {
        /// The cap.
        max_bytes: u64,
    },
    /// It is not UTF-8 text.
    #[error("it is not UTF-8 text")]
    NotText,
}

/// The text of the regular file at `path` (symlinks followed), at most
/// `max_bytes` of it.
pub(crate) fn read_text(path: &Path, max_bytes: u64) -> Result<String, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(ReadError::NotAFile(kind_of(&meta.file_type())));
    }
    if meta.len() > max_bytes {
        return Err(ReadError::TooLarge { max_bytes });
    }
    let mut bytes = Vec::new();
    file.take(max_bytes + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > max_bytes {
        return Err(ReadError::TooLarge { max_bytes });
    }
    String::from_utf8(bytes).map_err(|_| ReadError::NotText)
}

/// What a file that is not a regular one is, in words.
pub(crate) fn kind_of(file_type: &std::fs::FileType) -> &'static str {
    if file_type.is_dir() {
        "a directory"
    } else if file_type.is_fifo() {
        "a FIFO"
    } else if file_type.is_socket() {
        "a socket"
    } else if file_type.is_char_device() || file_type.is_block_device() {
        "a device"
    } else {
        "not a regular file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_and_a_device_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("schema.fifo");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // No writer ever opens it: a blocking open would never return.
        let refused = read_text(&fifo, 1024).unwrap_err();
        assert!(
            matches!(refused, ReadError::NotAFile("a FIFO")),
            "{refused}"
        );
        let refused = read_text(Path::new("/dev/zero"), 1024).unwrap_err();
        assert!(
            matches!(refused, ReadError::NotAFile("a device")),
            "{refused}"
        );
        let refused = read_text(dir.path(), 1024).unwrap_err();
        assert!(
            matches!(refused, ReadError::NotAFile("a directory")),
            "{refused}"
        );
    }

    #[test]
    fn a_file_over_its_cap_is_refused_and_one_at_it_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.json");
        std::fs::write(&path, "x".repeat(1025)).unwrap();
        assert!(matches!(
            read_text(&path, 1024),
            Err(ReadError::TooLarge { max_bytes: 1024 })
        ));
        std::fs::write(&path, "x".repeat(1024)).unwrap();
        assert_eq!(read_text(&path, 1024).unwrap().len(), 1024);
    }
}
