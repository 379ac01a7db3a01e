//! `reload`: sends SIGHUP to every running `herdr-core-mcp serve` whose
//! config is this one, so an operator need not find the pid of a serve an
//! MCP host launched. Processes are found in `/proc`: the program's name,
//! the `serve` subcommand, and its `--config` (or its default) resolved the
//! way that process resolved it (relative to its working directory, the
//! default under its own environment).

use std::path::{Path, PathBuf};

use super::DEFAULT_CONFIG;

/// The program name a serve runs under.
const PROGRAM: &str = "herdr-core-mcp";

#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// No running serve uses that config.
    #[error(
        "no running herdr-core-mcp serve uses {path}: nothing to reload (check --config, or start serve)"
    )]
    NoServe { path: PathBuf },
    /// A serve was found but could not be signalled.
    #[error("cannot send SIGHUP to serve (pid {pid}): {source}")]
    Signal {
        pid: i32,
        #[source]
        source: std::io::Error,
    },
}

/// The pids of the running serves whose config is `path`.
pub fn serving(path: &Path) -> Vec<u32> {
    let wanted = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let own = std::process::id();
    serve_pids()
        .into_iter()
        .filter(|pid| *pid != own && config_of(*pid).as_deref() == Some(wanted.as_path()))
        .collect()
}

pub fn run(path: &Path) -> Result<String, ReloadError> {
    let wanted = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut signalled = Vec::new();
    for pid in serving(path) {
        let pid = i32::try_from(pid).expect("pids fit in i32");
        // SAFETY: kill(2) with a pid read from /proc and a valid signal.
        if unsafe { libc::kill(pid, libc::SIGHUP) } != 0 {
            return Err(ReloadError::Signal {
                pid,
                source: std::io::Error::last_os_error(),
            });
        }
        signalled.push(pid.to_string());
    }
    if signalled.is_empty() {
        return Err(ReloadError::NoServe { path: wanted });
    }
    Ok(format!(
        "sent SIGHUP to {} serve process(es) of {} (pid {}); a failed reload is logged by serve, and sends stay off until the file is fixed\n",
        signalled.len(),
        wanted.display(),
        signalled.join(", ")
    ))
}

/// Processes whose command line is `… herdr-core-mcp … serve …`.
fn serve_pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let args = cmdline(*pid);
            let named = args
                .first()
                .is_some_and(|a| Path::new(a).file_name().is_some_and(|n| n == PROGRAM));
            named && args.iter().any(|a| a == "serve")
        })
        .collect()
}

fn cmdline(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| {
            bytes
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect()
        })
        .unwrap_or_default()
}

/// The real path of the config serve `pid` runs with.
fn config_of(pid: u32) -> Option<PathBuf> {
    let args = cmdline(pid);
    let given = args.iter().enumerate().find_map(|(i, a)| {
        a.strip_prefix("--config=").map(str::to_owned).or_else(|| {
            (a == "--config")
                .then(|| args.get(i + 1).cloned())
                .flatten()
        })
    });
    let path = match given {
        Some(given) => {
            let given = PathBuf::from(given);
            if given.is_absolute() {
                given
            } else {
                std::fs::read_link(format!("/proc/{pid}/cwd"))
                    .ok()?
                    .join(given)
            }
        }
        None => default_of(pid)?,
    };
    std::fs::canonicalize(path).ok()
}

/// The default config under the environment of process `pid`.
fn default_of(pid: u32) -> Option<PathBuf> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let var = |name: &str| {
        environ.split(|b| *b == 0).find_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            entry
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        })
    };
    let base = var("XDG_CONFIG_HOME").or_else(|| var("HOME").map(|h| h.join(".config")))?;
    Some(base.join(DEFAULT_CONFIG))
}
