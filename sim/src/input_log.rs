//! The input log (`--input-log FILE`): one JSON line per `terminal.send` that
//! wrote input, appended before the reply goes out, so a test reading the file
//! right after a reply sees every write the simulator made. It holds digests
//! and sizes only, never the text, and whether the request carried `force`
//! (a client may leave it out for a core whose document does not declare
//! it).

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::path::Path;
use std::sync::Mutex;

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::clock::unix_ms;

pub struct InputLog {
    file: Mutex<File>,
}

/// One line of the log.
#[derive(Serialize)]
struct Entry<'a> {
    address: &'a str,
    created_ms: u64,
    /// Lowercase hex SHA-256 of the text's UTF-8 bytes.
    sha256: String,
    /// The text's length in bytes.
    bytes: usize,
    /// Whether the `terminal.send` carried a `force` param at all.
    force_present: bool,
    ts_ms: u64,
}

impl InputLog {
    /// Opens `path` for appending, creating it if needed.
    pub fn open(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(path)?;
        Ok(InputLog {
            file: Mutex::new(file),
        })
    }

    /// Appends the entry for `text` written to one terminal lifetime by a
    /// send that did (or did not) carry `force`, in a single write.
    pub fn append(
        &self,
        address: &str,
        created_ms: u64,
        text: &str,
        force_present: bool,
    ) -> io::Result<()> {
        let entry = Entry {
            address,
            created_ms,
            sha256: sha256_hex(text.as_bytes()),
            bytes: text.len(),
            force_present,
            ts_ms: unix_ms(),
        };
        let mut line = serde_json::to_vec(&entry)?;
        line.push(b'\n');
        let mut file = self
            .file
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        file.write_all(&line)?;
        file.flush()
    }
}

/// Lowercase hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|byte| format!("{byte:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digests_are_lowercase_hex() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
