//! The running serves of this program and user, read from `/proc`: which
//! config each runs with, which ports it listens on, and when it started.
//! `reload` signals them, `doctor` and `status` name them.
//!
//! A process in `/proc` is a serve of this config only when all of these
//! hold; anything else is a look-alike and is neither signalled nor named:
//! - it runs as the same user (the owner of `/proc/PID`), so another
//!   user's process can neither be signalled nor stop the command;
//! - its executable is a copy of this program, wherever it is installed:
//!   the same file (device and inode of `/proc/PID/exe`), the file since
//!   replaced at the same path (the link then reads `PATH (deleted)`), or
//!   any file that carries this program's marker (`marker`: another
//!   install, another version), so a serve started before an upgrade or
//!   from another copy still gets the signal while a program merely
//!   *named* herdr-core-mcp (a script, an interpreter running one) never
//!   does: SIGHUP would kill a program that does not handle it;
//! - its first argument is the `serve` subcommand;
//! - its `--config` (or its default) resolves, the way that process
//!   resolved it (relative to its working directory, the default under its
//!   own environment), to the same real file.
//!

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::config::default_path;

/// What `/proc/PID/exe` reads as when the file was replaced or removed
/// since the process started.
const DELETED: &str = " (deleted)";

/// This program as the serves to look for run it.
struct Program {
    /// (device, inode) of the running executable.
    file: Option<(u64, u64)>,
    /// Where it was started from.
    path: Option<PathBuf>,
    /// The user it runs as.
    uid: Option<u32>,
}

impl Program {
    fn this() -> Program {
        Program {
            file: file_id(Path::new("/proc/self/exe")),
            path: exe_path(Path::new("/proc/self/exe")),
            uid: std::fs::metadata("/proc/self").ok().map(|m| m.uid()),
        }
    }

    /// The copy of this program process `pid` runs, when it runs as this
    /// user and is this program at all.
    fn runs(&self, pid: u32) -> Option<Installed> {
        let proc = PathBuf::from(format!("/proc/{pid}"));
        let same_user = std::fs::metadata(&proc).ok().map(|m| m.uid());
        if self.uid.is_none() || same_user != self.uid {
            return None;
        }
        let exe = proc.join("exe");
        let path = exe_path(&exe);
        let same_file = self.file.is_some() && file_id(&exe) == self.file;
        let version = if same_file {
            Some(env!("CARGO_PKG_VERSION").to_owned())
        } else {
            super::marker::version_of(&exe)
        };
        let same_path = self.path.is_some() && path == self.path;
        (same_file || same_path || version.is_some()).then_some(Installed { path, version })
    }
}

/// Which copy of this program a serve runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Installed {
    /// Where it was started from (its executable's path).
    pub path: Option<PathBuf>,
    /// The version its marker names, when it carries one.
    pub version: Option<String>,
}

/// (device, inode) of the file a `/proc/*/exe` link points to (it opens
/// even when that file was since deleted).
fn file_id(exe: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(exe).ok().map(|m| (m.dev(), m.ino()))
}

/// The path a process was started from, without the " (deleted)" the
/// kernel adds once the file is replaced.
fn exe_path(exe: &Path) -> Option<PathBuf> {
    let link = std::fs::read_link(exe).ok()?;
    let text = link.to_str()?;
    Some(PathBuf::from(text.strip_suffix(DELETED).unwrap_or(text)))
}

/// The pids of the running serves whose config is `path` (see the module
/// doc for what counts).
pub(crate) fn serving(path: &Path) -> Vec<u32> {
    let wanted = real(path);
    let own = std::process::id();
    let program = Program::this();
    pids()
        .into_iter()
        .filter(|pid| *pid != own)
        .filter(|pid| {
            let args = cmdline(*pid);
            args.get(1).is_some_and(|a| a == "serve")
                && program.runs(*pid).is_some()
                && config_of(*pid, &args).as_deref() == Some(wanted.as_path())
        })
        .collect()
}

/// A running serve of this program and user, and the config it runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Serve {
    pub pid: u32,
    /// The real path of its config, when it can be told.
    pub config: Option<PathBuf>,
    /// The copy of this program it runs.
    pub copy: Installed,
}

/// Every serve of this program that this user runs, whatever its config.
pub(crate) fn all_serves() -> Vec<Serve> {
    let own = std::process::id();
    let program = Program::this();
    pids()
        .into_iter()
        .filter(|pid| *pid != own)
        .filter_map(|pid| {
            let args = cmdline(pid);
            if args.get(1).is_none_or(|a| a != "serve") {
                return None;
            }
            program.runs(pid).map(|copy| Serve {
                pid,
                config: config_of(pid, &args),
                copy,
            })
        })
        .collect()
}

/// The TCP ports process `pid` listens on (its sockets matched against
/// the kernel's listening sockets).
pub(crate) fn listening_ports(pid: u32) -> Vec<u16> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    let inodes: Vec<String> = fds
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.ok()?.path()).ok()?;
            let target = target.to_str()?;
            Some(
                target
                    .strip_prefix("socket:[")?
                    .strip_suffix(']')?
                    .to_owned(),
            )
        })
        .collect();
    let mut ports = Vec::new();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // local_address is HEXIP:HEXPORT, st 0A is LISTEN, inode is field 9.
            let (Some(local), Some(state), Some(inode)) =
                (fields.get(1), fields.get(3), fields.get(9))
            else {
                continue;
            };
            if *state != "0A" || !inodes.iter().any(|i| i == inode) {
                continue;
            }
            if let Some(port) = local
                .rsplit(':')
                .next()
                .and_then(|p| u16::from_str_radix(p, 16).ok())
            {
                ports.push(port);
            }
        }
    }
    ports.sort_unstable();
    ports.dedup();
    ports
}

/// When process `pid` started, in seconds since the epoch.
pub(crate) fn started_s(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which may hold spaces) in parentheses;
    // starttime is field 22 overall, the 20th after it.
    let after = stat.rsplit_once(')')?.1;
    let ticks: u64 = after.split_whitespace().nth(19)?.parse().ok()?;
    let boot: u64 = std::fs::read_to_string("/proc/stat")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("btime ")?.trim().parse().ok())?;
    let per_second = Some(rustix::param::clock_ticks_per_second()).filter(|t| *t > 0)?;
    Some(boot + ticks / per_second)
}

/// `path` with every symlink resolved, or as given when it cannot be.
pub(crate) fn real(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Every process id in `/proc`.
fn pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid > 0)
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

/// The real path of the config serve `pid` (started with `args`) runs with.
fn config_of(pid: u32, args: &[String]) -> Option<PathBuf> {
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
    default_path(|name| {
        environ.split(|b| *b == 0).find_map(|entry| {
            let entry = String::from_utf8_lossy(entry);
            entry
                .strip_prefix(name)
                .and_then(|rest| rest.strip_prefix('='))
                .map(PathBuf::from)
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_is_this_program_and_init_is_not() {
        let program = Program::this();
        assert!(program.file.is_some() && program.path.is_some() && program.uid.is_some());
        assert!(program.runs(std::process::id()).is_some());
        // pid 1 (init) runs another program.
        assert!(program.runs(1).is_none());
    }

    #[test]
    fn a_replaced_executable_reads_as_its_path() {
        assert_eq!(exe_path(Path::new("/nonexistent/exe")), None);
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("exe");
        std::os::unix::fs::symlink("/usr/bin/herdr-core-mcp (deleted)", &link).unwrap();
        assert_eq!(
            exe_path(&link),
            Some(PathBuf::from("/usr/bin/herdr-core-mcp"))
        );
    }
}
