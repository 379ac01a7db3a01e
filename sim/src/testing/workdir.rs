//! The directory a simulator keeps its sockets and input log in: a fresh
//! one under the system temp dir that is removed when dropped, or one the
//! caller owns and keeps; and the paths of those files in it. Fresh ones
//! have short names, because a Unix socket path must fit in 107 bytes.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{CONTROL_FILE, Error, INPUT_LOG_FILE, MAX_SOCKET_PATH_BYTES, SOCKET_FILE};

/// Where fresh directories go when the system temp dir (`TMPDIR`) is too
/// deep for a socket path to fit.
const SHORT_TEMP_ROOT: &str = "/tmp";

/// A simulator's directory. `Debug` shows the path and whether it is owned.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    /// Removed (with everything in it) on drop.
    owned: bool,
}

impl WorkDir {
    /// A fresh, empty directory, removed with its contents when dropped.
    pub fn temp() -> io::Result<WorkDir> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut root = std::env::temp_dir();
        // The longest name a fresh directory gets, with the longest file in it.
        let longest = root.join(format!("hcsim-{}-{}", u32::MAX, usize::MAX));
        if longest.join(CONTROL_FILE).as_os_str().len() > MAX_SOCKET_PATH_BYTES {
            root = PathBuf::from(SHORT_TEMP_ROOT);
        }
        loop {
            let name = format!(
                "hcsim-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            );
            let path = root.join(name);
            // Left behind by an earlier process with the same pid: skip it.
            match std::fs::create_dir(&path) {
                Ok(()) => return Ok(WorkDir { path, owned: true }),
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => {
                    return Err(io::Error::new(
                        error.kind(),
                        format!("cannot create {}: {error}", path.display()),
                    ));
                }
            }
        }
    }

    /// A directory the caller owns: used as is, never removed.
    pub fn existing(path: impl Into<PathBuf>) -> WorkDir {
        WorkDir {
            path: path.into(),
            owned: false,
        }
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Where a simulator in this directory keeps its files; an error if a
    /// socket path would be too long to bind.
    pub(super) fn paths(&self, input_log: bool) -> Result<Paths, Error> {
        let paths = Paths {
            socket: self.path.join(SOCKET_FILE),
            control: self.path.join(CONTROL_FILE),
            input_log: input_log.then(|| self.path.join(INPUT_LOG_FILE)),
        };
        for path in [&paths.socket, &paths.control] {
            if path.as_os_str().len() > MAX_SOCKET_PATH_BYTES {
                return Err(Error::PathTooLong(path.clone()));
            }
        }
        Ok(paths)
    }
}

/// The files of a simulator in a [`WorkDir`].
#[derive(Debug, Clone)]
pub(super) struct Paths {
    pub(super) socket: PathBuf,
    pub(super) control: PathBuf,
    pub(super) input_log: Option<PathBuf>,
}

impl Drop for WorkDir {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_dir_all(&self.path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fresh_dir_is_removed_on_drop_and_an_existing_one_is_kept() {
        let fresh = WorkDir::temp().unwrap();
        let path = fresh.path().to_path_buf();
        std::fs::write(path.join("file"), b"x").unwrap();
        let kept = WorkDir::existing(&path);
        drop(kept);
        assert!(path.join("file").exists());
        drop(fresh);
        assert!(!path.exists());
    }

    #[test]
    fn fresh_dirs_are_distinct_and_short_enough_for_sockets() {
        let (first, second) = (WorkDir::temp().unwrap(), WorkDir::temp().unwrap());
        assert_ne!(first.path(), second.path());
        let socket = first.path().join(CONTROL_FILE);
        assert!(socket.as_os_str().len() <= MAX_SOCKET_PATH_BYTES);
    }
}
