//! Reading the config file. It holds send authority, so whoever can write
//! it, or replace it, can grant that authority. The path is resolved
//! through symlinks first; the real file is opened once and checked on the
//! open descriptor (a regular file of sane size, owned by the current user
//! or root, writable by nobody else), every directory above it must be
//! owned by the current user or root and not writable by others unless
//! sticky (as `/tmp` is), and only then is it read.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use super::ConfigError;

/// Config files bigger than this are not configs; refuse before parsing.
const MAX_CONFIG_BYTES: u64 = 1024 * 1024;
/// Write permission for group or others.
const WRITABLE_BY_OTHERS: u32 = 0o022;
/// The sticky bit: in such a directory only an entry's owner may rename or
/// delete it.
const STICKY: u32 = 0o1000;
const ROOT: u32 = 0;

/// A config file's text, and the real path it was read from (symlinks
/// resolved), which is where it is rewritten.
#[derive(Debug)]
pub struct Checked {
    pub text: String,
    pub resolved: PathBuf,
}

/// Resolves `path`, checks the file and its directories, and reads it.
pub fn read_checked(path: &Path) -> Result<Checked, ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let resolved = std::fs::canonicalize(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ConfigError::Missing {
                path: path.to_path_buf(),
            }
        } else {
            read_error(source)
        }
    })?;
    let mut file = std::fs::File::open(&resolved).map_err(read_error)?;
    let meta = file.metadata().map_err(read_error)?;
    let refuse = |why: String| ConfigError::Unsafe {
        path: path.to_path_buf(),
        resolved: resolved.clone(),
        why,
    };
    if !meta.is_file() {
        return Err(ConfigError::NotAFile {
            path: path.to_path_buf(),
        });
    }
    let me = current_uid();
    if meta.uid() != me && meta.uid() != ROOT {
        return Err(refuse(format!(
            "it is owned by uid {}, not by you (uid {me}) or root: use a config file of your own",
            meta.uid()
        )));
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & WRITABLE_BY_OTHERS != 0 {
        return Err(refuse(format!(
            "it is writable by group or others (mode {:o}): run chmod 600 {}",
            mode & 0o777,
            resolved.display()
        )));
    }
    check_directories(&resolved, me).map_err(refuse)?;
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    let mut text = String::new();
    file.read_to_string(&mut text).map_err(read_error)?;
    Ok(Checked { text, resolved })
}

/// Every directory above `resolved` (a path without symlinks): owned by
/// `me` or root, and not writable by others unless sticky.
fn check_directories(resolved: &Path, me: u32) -> Result<(), String> {
    for dir in resolved.ancestors().skip(1) {
        let meta =
            std::fs::metadata(dir).map_err(|e| format!("cannot check {}: {e}", dir.display()))?;
        let mode = meta.permissions().mode();
        if meta.uid() != me && meta.uid() != ROOT {
            return Err(format!(
                "its directory {} is owned by uid {}, not by you (uid {me}) or root, who can replace the file: keep the config in a directory of your own",
                dir.display(),
                meta.uid()
            ));
        }
        if mode & WRITABLE_BY_OTHERS != 0 && mode & STICKY == 0 {
            return Err(format!(
                "its directory {} is writable by group or others without the sticky bit (mode {:o}), so they can replace the file: run chmod go-w {}",
                dir.display(),
                mode & 0o7777,
                dir.display()
            ));
        }
    }
    Ok(())
}

fn current_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}
