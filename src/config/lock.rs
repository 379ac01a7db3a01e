//! The config's write lock. The allowlist is the product's authority, so
//! every read-modify-write of the config (`allow`, `revoke`) holds an
//! exclusive `flock` on a lock file beside the real file while it reads,
//! changes and writes it back, and reads it again under the lock: two
//! writers both land, and a revoke is never undone by a writer that read
//! the file before it. The lock file is never removed, so every writer
//! locks the same inode.

use std::fs::OpenOptions;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Why the lock could not be taken; the config is unchanged either way.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another `allow` or `revoke` held the lock past [`LOCK_WAIT`].
    #[error(
        "another allow or revoke has been changing {path} for over {secs} s (it holds {lock}): let it finish, then run this again; the config is unchanged",
        path = path.display(),
        lock = lock.display(),
        secs = LOCK_WAIT.as_secs()
    )]
    Busy {
        /// The config's real path.
        path: PathBuf,
        /// The lock file beside it.
        lock: PathBuf,
    },
    /// The lock file cannot be opened or locked.
    #[error("cannot lock {path} with {lock}: {why}; the config is unchanged", path = path.display(), lock = lock.display())]
    Unusable {
        /// The config's real path.
        path: PathBuf,
        /// The lock file beside it.
        lock: PathBuf,
        /// What failed.
        why: String,
    },
}

/// How long `allow` or `revoke` waits for another to finish with the same
/// config: each holds the lock for a read, an edit and a write.
const LOCK_WAIT: Duration = Duration::from_secs(10);
/// How often a waiting one tries the lock again.
const LOCK_RETRY: Duration = Duration::from_millis(20);

/// The config's exclusive lock (`flock` on a lock file beside it, never
/// removed, so two writers always lock the same inode), held while the
/// file is read, changed and written back; released when dropped.
pub(crate) struct ConfigLock {
    _file: std::fs::File,
}

/// Takes the lock of the config at `resolved` (its real path), waiting at
/// most [`LOCK_WAIT`] for another writer.
pub(crate) async fn lock(resolved: &Path) -> Result<ConfigLock, LockError> {
    let dir = resolved
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = resolved
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let lock_path = dir.join(format!(".{name}.lock"));
    let refused = |why: String| LockError::Unusable {
        path: resolved.to_path_buf(),
        lock: lock_path.clone(),
        why,
    };
    // The folder passed the config's checks, so only its owner can have
    // put something at this name; still, nothing but a private regular
    // file of ours is used, and the open never blocks or follows a link.
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&lock_path)
        .map_err(|e| refused(e.to_string()))?;
    let meta = file.metadata().map_err(|e| refused(e.to_string()))?;
    if !meta.is_file() || meta.uid() != super::current_uid() {
        return Err(refused(
            "it is not a regular file of yours: remove it".to_owned(),
        ));
    }
    let deadline = tokio::time::Instant::now() + LOCK_WAIT;
    loop {
        match rustix::fs::flock(&file, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(ConfigLock { _file: file }),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {}
            Err(e) => return Err(refused(e.to_string())),
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(LockError::Busy {
                path: resolved.to_path_buf(),
                lock: lock_path,
            });
        }
        tokio::time::sleep(LOCK_RETRY).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_writer_waits_for_the_lock_and_gives_up_with_a_clear_line() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("config.json");
        std::fs::write(&config, "{}").unwrap();
        let held = lock(&config).await.unwrap();
        let started = tokio::time::Instant::now();
        let refused = lock(&config).await.err().expect("the lock is held");
        assert!(started.elapsed() >= LOCK_WAIT, "it gave up before waiting");
        let said = refused.to_string();
        assert!(
            said.starts_with("another allow or revoke has been changing")
                && said.ends_with("the config is unchanged"),
            "{said}"
        );
        drop(held);
        assert!(lock(&config).await.is_ok(), "a released lock is free");
    }
}
