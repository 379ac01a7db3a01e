//! What a running serve started with, of the settings a reload cannot
//! change (`Config::restart_settings`: socketPath, transport and http,
//! timeoutMs, sendTimeoutMs, auditLog), so that `reload` can name the ones
//! the file now says otherwise, and `doctor` can flag such a serve. A serve
//! writes one private file, named by its pid, in this user's runtime
//! folder (`$XDG_RUNTIME_DIR/herdr-core-mcp/serves`, else a 0700 folder of
//! this user under the temp folder), and removes it when it ends. A file
//! whose pid is not a serve any more is ignored.

use std::collections::BTreeMap;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::PathBuf;

use crate::config::Config;

/// The folder of the files.
fn folder() -> PathBuf {
    let base = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.is_absolute())
        .unwrap_or_else(|| {
            std::env::temp_dir().join(format!("herdr-core-mcp-{}", crate::config::current_uid()))
        });
    base.join("herdr-core-mcp").join("serves")
}

fn file_of(pid: u32) -> PathBuf {
    folder().join(format!("{pid}.json"))
}

/// The file of this process, removed when dropped.
pub(crate) struct Recorded(PathBuf);

impl Drop for Recorded {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Records what this serve started with; `None` when the file cannot be
/// written (then `reload` and `doctor` cannot compare, and say nothing of
/// it).
pub(crate) fn record(config: &Config) -> Option<Recorded> {
    let folder = folder();
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&folder)
        .ok()?;
    let path = file_of(std::process::id());
    let text = serde_json::to_string(&config.restart_settings()).ok()?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&path)
        .ok()?;
    file.write_all(text.as_bytes()).ok()?;
    Some(Recorded(path))
}

/// The settings a reload cannot change that serve `pid` started with and
/// `config` (the file now) says otherwise; `None` when that serve recorded
/// nothing.
pub(crate) fn needing_restart(pid: u32, config: &Config) -> Option<Vec<&'static str>> {
    let text = std::fs::read_to_string(file_of(pid)).ok()?;
    let started: BTreeMap<String, String> = serde_json::from_str(&text).ok()?;
    let now = config.restart_settings();
    Some(
        now.iter()
            .filter(|(key, value)| started.get(**key) != Some(*value))
            .map(|(key, _)| *key)
            .collect(),
    )
}
