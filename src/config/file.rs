//! Reading the config file. It holds send authority, so whoever can write
//! it, or replace it, can grant that authority. The path is resolved
//! through symlinks first; every directory above it must be owned by the
//! current user or root and not writable by others unless sticky (as
//! `/tmp` is); then the real file is opened once, without blocking and
//! without following a link (a FIFO or a device never stalls a command),
//! and checked on the open descriptor (a regular file of sane size, owned
//! by the current user or root, writable by nobody else), and only then is
//! it read.

use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};

use crate::files::kind_of;
use std::path::{Path, PathBuf};

use super::error::ConfigError;

/// Where the config is when `--config` is not given, under the XDG config
/// directory (`$XDG_CONFIG_HOME`, else `~/.config`).
pub(crate) const DEFAULT_PATH: &str = "herdr-core-mcp/config.json";

/// The default config ([`DEFAULT_PATH`]) under the environment `var`
/// reads (this process's, or another's from `/proc`): under
/// `$XDG_CONFIG_HOME`, else `$HOME/.config`; a relative value counts as
/// unset, as the XDG rules say.
pub(crate) fn default_path(var: impl Fn(&str) -> Option<PathBuf>) -> Option<PathBuf> {
    let absolute = |name: &str| var(name).filter(|p| p.is_absolute());
    let base =
        absolute("XDG_CONFIG_HOME").or_else(|| absolute("HOME").map(|h| h.join(".config")))?;
    Some(base.join(DEFAULT_PATH))
}

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
pub(crate) struct Checked {
    /// The file's text.
    pub text: String,
    /// Its real path (symlinks resolved), where it is rewritten.
    pub resolved: PathBuf,
}

/// Resolves `path`, checks the file and its directories, and reads it.
pub(crate) fn read_checked(path: &Path) -> Result<Checked, ConfigError> {
    let read_error = |source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    };
    let resolved = std::fs::canonicalize(path).map_err(|source| {
        if source.kind() == std::io::ErrorKind::NotFound {
            ConfigError::Missing {
                path: path.to_path_buf(),
                create: create_command(path),
            }
        } else {
            read_error(source)
        }
    })?;
    let refuse = |why: String| ConfigError::Unsafe {
        path: path.to_path_buf(),
        resolved: resolved.clone(),
        why,
    };
    // The folders first: in a folder others can write, whatever sits at
    // the path may be theirs, a FIFO that would block the open included.
    let me = current_uid();
    check_directories(&resolved, me).map_err(refuse)?;
    // Never blocks: a FIFO or a device opens at once (O_NONBLOCK) and is
    // refused below; the resolved path has no symlink left, so one that
    // appears now is refused too (O_NOFOLLOW).
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOFOLLOW | libc::O_NOCTTY)
        .open(&resolved)
        .map_err(read_error)?;
    let meta = file.metadata().map_err(read_error)?;
    if !meta.is_file() {
        return Err(ConfigError::NotAFile {
            path: path.to_path_buf(),
            kind: kind_of(&meta.file_type()),
        });
    }
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
    if meta.len() > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    // The size was checked on the descriptor; the read is capped as well,
    // so a file that grows meanwhile is still refused, not read whole.
    let mut text = String::new();
    file.take(MAX_CONFIG_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(read_error)?;
    if text.len() as u64 > MAX_CONFIG_BYTES {
        return Err(ConfigError::TooLarge {
            path: path.to_path_buf(),
        });
    }
    Ok(Checked { text, resolved })
}

/// Replaces the file at `path` (a config already read and checked) with
/// `text` atomically: a temp file beside it with its mode, synced, renamed
/// over it, and the directory synced. On failure, what failed ("read" or
/// "write") and why; the old file is then unchanged.
pub(crate) fn replace(path: &Path, text: &str) -> Result<(), (&'static str, std::io::Error)> {
    let mode = std::fs::metadata(path)
        .map_err(|e| ("read", e))?
        .permissions()
        .mode()
        & 0o777;
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let written = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temp)?;
        file.set_permissions(std::fs::Permissions::from_mode(mode))?;
        std::io::Write::write_all(&mut file, text.as_bytes())?;
        file.sync_all()?;
        std::fs::rename(&temp, path)?;
        std::fs::File::open(dir)?.sync_all()
    })();
    if let Err(e) = written {
        let _ = std::fs::remove_file(&temp);
        return Err(("write", e));
    }
    Ok(())
}

/// What a file that is not a regular one is, for the refusal.
/// Every directory above `resolved` (a path without symlinks): owned by
/// `me` or root, and not writable by others unless sticky.
pub(crate) fn check_directories(resolved: &Path, me: u32) -> Result<(), String> {
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

pub(crate) fn current_uid() -> u32 {
    rustix::process::geteuid().as_raw()
}

/// ` --config PATH` (absolute, one shell word) for a command about the
/// config at `path`, or empty when `path` is the default config.
pub(super) fn config_flag(path: &Path) -> String {
    let default = default_path(|name| std::env::var_os(name).map(PathBuf::from));
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if default.as_deref() == Some(absolute.as_path()) {
        String::new()
    } else {
        format!(" --config {}", shell_word(&absolute))
    }
}

/// The command that creates a missing config at `path`: `init`, which
/// makes its folders 0700 and the file 0600 and prints the next steps,
/// with `--config` unless `path` is the default.
fn create_command(path: &Path) -> String {
    format!("herdr-core-mcp init{}", config_flag(path))
}

/// `path` as one shell word: unchanged when it is plain, else single-quoted.
fn shell_word(path: &Path) -> String {
    let text = path.to_string_lossy();
    let plain = text
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%".contains(&b));
    if plain && !text.is_empty() {
        text.into_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A missing config's message names `init` with the config as one
    /// shell word: a shell reads back exactly the path.
    #[test]
    fn the_create_command_is_init_with_the_path_as_one_shell_word() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("new dir's").join("config.json");
        let command = create_command(&path);
        let word = command
            .strip_prefix("herdr-core-mcp init --config ")
            .unwrap_or_else(|| panic!("{command}"));
        let echoed = std::process::Command::new("sh")
            .args(["-c", &format!("printf %s {word}")])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8(echoed.stdout).unwrap(),
            path.to_str().unwrap()
        );
    }
}
