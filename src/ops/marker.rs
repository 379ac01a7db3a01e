//! How a copy of this program is told from any other program, wherever it
//! was installed: every build carries [`MARKER`] (this version's), and a
//! running process is a copy of it when its executable (`/proc/PID/exe`,
//! readable even after the file was replaced) holds a marker. The needle
//! it is looked for with is assembled at run time, so the only place its
//! bytes appear in a build is the marker itself: a look-alike (a script
//! named herdr-core-mcp, an interpreter running one) holds none.

use std::io::Read;
use std::path::Path;

use memchr::memmem;

/// What every build of this program carries, with its version.
pub(crate) const MARKER: &str = concat!(
    "herdr-core-mcp program marker v",
    env!("CARGO_PKG_VERSION"),
    "\0"
);

/// The marker's fixed part, backwards (see the module doc).
const PREFIX_BACKWARDS: &[u8] = b"v rekram margorp pcm-eroc-rdreh";
/// A version longer than this is no version of ours.
const MAX_VERSION: usize = 32;
/// How much of an executable is read looking for the marker (it is in the
/// read-only data, ahead of any debug information).
const MAX_READ: u64 = 96 * 1024 * 1024;
/// Read in pieces of this size.
const CHUNK: usize = 1024 * 1024;

/// Keeps the marker in the build: the linker drops data nothing refers to.
pub(crate) fn keep() {
    std::hint::black_box(MARKER.as_ptr());
}

/// The version of this program the executable at `exe` is, when it is a
/// copy of it at all.
pub(crate) fn version_of(exe: &Path) -> Option<String> {
    let prefix: Vec<u8> = PREFIX_BACKWARDS.iter().rev().copied().collect();
    let finder = memmem::Finder::new(&prefix);
    let mut file = std::fs::File::open(exe).ok()?.take(MAX_READ);
    let mut window: Vec<u8> = Vec::with_capacity(CHUNK + prefix.len() + MAX_VERSION);
    let mut chunk = vec![0u8; CHUNK];
    loop {
        let n = file.read(&mut chunk).ok()?;
        window.extend_from_slice(&chunk[..n]);
        let mut from = 0;
        while let Some(at) = finder.find(&window[from..]) {
            let start = from + at + prefix.len();
            let tail = &window[start..window.len().min(start + MAX_VERSION + 1)];
            match tail.iter().position(|b| *b == 0) {
                Some(end) if is_version(&tail[..end]) => {
                    return Some(String::from_utf8_lossy(&tail[..end]).into_owned());
                }
                // Cut off at the window's end: read on, keeping it.
                None if n > 0 && tail.len() <= MAX_VERSION => break,
                _ => from = start,
            }
        }
        if n == 0 {
            return None;
        }
        // Keep enough to find a marker that straddles two pieces.
        let keep = prefix.len() + MAX_VERSION;
        let cut = window.len().saturating_sub(keep);
        window.drain(..cut);
    }
}

/// A version as cargo writes one: `0.1.0`, `1.2.3-rc.1`.
fn is_version(bytes: &[u8]) -> bool {
    !bytes.is_empty()
        && bytes[0].is_ascii_digit()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || b".-+".contains(b))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_is_found_with_its_version_and_a_look_alike_is_not() {
        keep();
        let this = std::env::current_exe().unwrap();
        assert_eq!(
            version_of(&this).as_deref(),
            Some(env!("CARGO_PKG_VERSION"))
        );
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("herdr-core-mcp");
        std::fs::write(&script, "#!/bin/sh\nexec sleep 60\n").unwrap();
        assert_eq!(version_of(&script), None);
        assert_eq!(version_of(Path::new("/bin/sh")), None);
    }

    /// A marker of another version, assembled here so that this test
    /// binary holds no second marker of its own.
    fn marker(version: &str) -> Vec<u8> {
        let mut bytes: Vec<u8> = PREFIX_BACKWARDS.iter().rev().copied().collect();
        bytes.extend_from_slice(version.as_bytes());
        bytes.push(0);
        bytes
    }

    #[test]
    fn a_marker_across_two_pieces_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("exe");
        let mut bytes = vec![b'x'; CHUNK - 10];
        bytes.extend_from_slice(&marker("9.8.7"));
        bytes.extend_from_slice(b"tail");
        std::fs::write(&file, &bytes).unwrap();
        assert_eq!(version_of(&file).as_deref(), Some("9.8.7"));
        std::fs::write(&file, marker("not-a-version")).unwrap();
        assert_eq!(version_of(&file), None);
    }
}
