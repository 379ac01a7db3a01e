//! `reload`: sends SIGHUP to every running `herdr-core-mcp serve` whose
//! config is this one, so an operator need not find the pid of a serve an
//! MCP host launched.
//!
//! Which processes count as serves of a config is [`super::serves`]'s rule.
//!
//! Every match is signalled, and each one is reported on its own stdout
//! line, failures included. The command fails (exit 1, one summary line)
//! when no serve was found, or when any could not be signalled: the
//! operator asked for every serve to reload, and a serve that did not may
//! still hold a revoked approval. A serve that exited between the scan and
//! the signal needs no reload and is reported, not counted as a failure.

use std::path::{Path, PathBuf};

use rustix::process::{Pid, Signal};

use super::serves::{real, serving};
use crate::escape::printable;

#[derive(Debug, thiserror::Error)]
pub enum ReloadError {
    /// No running serve uses that config.
    #[error(
        "no running herdr-core-mcp serve uses {}: nothing to reload (check --config, or start serve)",
        path.display()
    )]
    NoServe { path: PathBuf },
    /// Some serves were found but could not be signalled.
    #[error(
        "{failed} of {found} serve(s) of {} could not be signalled (see the lines above); they still run with the old config: restart them",
        path.display()
    )]
    Signal {
        failed: usize,
        found: usize,
        path: PathBuf,
    },
}

/// What `reload` prints, one line per serve, and how it ended.
#[derive(Debug)]
pub(crate) struct Reloaded {
    pub text: String,
    pub outcome: Result<(), ReloadError>,
}

/// Signals every serve of `path`, and reports each.
pub(crate) fn run(path: &Path) -> Reloaded {
    let wanted = real(path);
    let shown = printable(&wanted.display().to_string()).into_owned();
    let found = serving(path);
    let now = crate::config::Config::load(path).ok();
    let mut text = String::new();
    let (mut signalled, mut failed) = (0, 0);
    for pid in &found {
        match hang_up(*pid) {
            Ok(()) => {
                signalled += 1;
                text.push_str(&format!("sent SIGHUP to serve (pid {pid}) of {shown}\n"));
                let restart = now
                    .as_ref()
                    .and_then(|config| super::started::needing_restart(*pid, config))
                    .filter(|keys| !keys.is_empty());
                if let Some(keys) = restart {
                    text.push_str(&format!(
                        "RESTART NEEDED: serve (pid {pid}) started with other {}; a reload cannot change {}: it keeps the old values until it is restarted (every other key is applied)\n",
                        keys.join(", "),
                        if keys.len() == 1 { "it" } else { "them" }
                    ));
                }
            }
            Err(e) if e.raw_os_error() == Some(rustix::io::Errno::SRCH.raw_os_error()) => text.push_str(&format!(
                "serve (pid {pid}) exited before it could be signalled; nothing to reload there\n"
            )),
            Err(e) => {
                failed += 1;
                text.push_str(&format!(
                    "FAIL cannot send SIGHUP to serve (pid {pid}) of {shown}: {e}\n"
                ));
            }
        }
    }
    if signalled > 0 {
        text.push_str(
            "each serve logs whether its reload applied; after a failed one, sends stay off until the file is fixed\n",
        );
    }
    let outcome = if failed > 0 {
        Err(ReloadError::Signal {
            failed,
            found: found.len(),
            path: wanted,
        })
    } else if signalled == 0 {
        Err(ReloadError::NoServe { path: wanted })
    } else {
        Ok(())
    };
    Reloaded { text, outcome }
}

/// SIGHUP to `pid`.
fn hang_up(pid: u32) -> std::io::Result<()> {
    // A pid past pid_t, or 0, names no process (and never a group).
    let pid = i32::try_from(pid)
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| std::io::Error::from_raw_os_error(rustix::io::Errno::SRCH.raw_os_error()))?;
    rustix::process::kill_process(pid, Signal::HUP).map_err(std::io::Error::from)
}
