//! How to run a simulator: one field per `hc-sim` flag, plus where its
//! binary and its stderr are, and how those fields become the command line
//! (the very one an in-process simulator parses too). Starting it is
//! `Simulator`'s job.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::ValueEnum;

use super::workdir::Paths;
use crate::DiscoverStyle;

/// The keyboard-quiet wait these options ask for unless told otherwise:
/// short, so that tests and benchmarks sending to one terminal in a row do
/// not wait hc's seconds on a keyboard nobody types at. What the wait
/// does is the same at any length; `quiet_ms: None` runs hc's own 3 s.
pub const TEST_QUIET_MS: u64 = 100;

/// How to run a simulator: each field is one `hc-sim` flag (`None` and 0
/// leave the simulator's default), plus where its binary and stderr are.
#[derive(Debug, Clone)]
pub struct Options {
    /// The `hc-sim` binary; `None` looks for it with [`locate_binary`](super::locate_binary). An
    /// in-process simulator runs it for its agents and readers.
    pub binary: Option<PathBuf>,
    /// `--agents`: scripted agents, started first (addresses `t1`…).
    pub agents: usize,
    /// `--shells`: `/bin/sh` terminals, after the agents.
    pub shells: usize,
    /// `--readers`: line readers (no bracketed paste), after the shells.
    pub readers: usize,
    /// `--idle-records`: records with no program, last.
    pub idle_records: usize,
    /// `--agent-delay-ms` (the simulator's default is 300).
    pub agent_delay_ms: Option<u64>,
    /// `--fault` specs (`kind[:method]`), in order.
    pub faults: Vec<String>,
    /// `--slow-reply-ms` (the simulator's default is 3000).
    pub slow_reply_ms: Option<u64>,
    /// `--evidence`: answer as real cores do, not as the model says.
    pub evidence: bool,
    /// `--version`: the version the hello reports (the simulator's default
    /// is 0.1.15).
    pub version: Option<String>,
    /// `--no-discover`: answer `rpc.discover` as an unknown method.
    pub no_discover: bool,
    /// `--discover-style`: how the `rpc.discover` document is worded (the
    /// simulator's default is `model`).
    pub discover_style: Option<DiscoverStyle>,
    /// `--no-if-guard`: a `terminal.send` without the `if` guard.
    pub no_if_guard: bool,
    /// `--draft-protect-ms` (the simulator's default is 60,000).
    pub draft_protect_ms: Option<u64>,
    /// `--quiet-ms`: [`TEST_QUIET_MS`] by default here; `None` keeps the
    /// simulator's own, hc's 3 s.
    pub quiet_ms: Option<u64>,
    /// Pass `--input-log` (the default). [`Simulator::writes`](super::Simulator::writes) reads it; a
    /// benchmark may turn it off to spare the simulator a file write per send.
    pub input_log: bool,
    /// `--machine NAME=SOCKET`: other simulators added as machines.
    pub machines: Vec<(String, PathBuf)>,
    /// `--no-status-reasons`: records and screens without why a status
    /// holds.
    pub no_status_reasons: bool,
    /// Send the simulator's stderr to this file (created or truncated);
    /// `None` shares this process's stderr, as an in-process simulator
    /// always does.
    pub stderr: Option<PathBuf>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            binary: None,
            agents: 0,
            shells: 0,
            readers: 0,
            idle_records: 0,
            agent_delay_ms: None,
            faults: Vec::new(),
            slow_reply_ms: None,
            evidence: false,
            version: None,
            no_discover: false,
            discover_style: None,
            no_if_guard: false,
            draft_protect_ms: None,
            quiet_ms: Some(TEST_QUIET_MS),
            input_log: true,
            machines: Vec::new(),
            no_status_reasons: false,
            stderr: None,
        }
    }
}

impl Options {
    /// `n` agents and nothing else.
    pub fn agents(n: usize) -> Options {
        Options {
            agents: n,
            ..Options::default()
        }
    }

    /// These options with one more machine: the core at `socket` as `name`.
    pub fn machine(mut self, name: &str, socket: &std::path::Path) -> Options {
        self.machines.push((name.to_owned(), socket.to_owned()));
        self
    }

    /// These options with one more `--fault`.
    pub fn fault(mut self, spec: &str) -> Options {
        self.faults.push(spec.to_owned());
        self
    }

    /// The arguments (after the program name) of a simulator with the
    /// files at `paths`.
    pub(super) fn args(&self, paths: &Paths) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec!["--socket".into(), paths.socket.clone().into()];
        args.extend(["--control".into(), paths.control.clone().into()]);
        if let Some(input_log) = &paths.input_log {
            args.extend(["--input-log".into(), input_log.clone().into()]);
        }
        args.extend(self.flags());
        args
    }

    /// The flags after `--socket`, `--control` and `--input-log`.
    fn flags(&self) -> Vec<OsString> {
        let mut flags: Vec<OsString> = Vec::new();
        let mut flag = |name: &str, value: String| {
            flags.push(name.into());
            flags.push(value.into());
        };
        flag("--agents", self.agents.to_string());
        flag("--shells", self.shells.to_string());
        flag("--readers", self.readers.to_string());
        flag("--idle-records", self.idle_records.to_string());
        if let Some(ms) = self.agent_delay_ms {
            flag("--agent-delay-ms", ms.to_string());
        }
        if let Some(ms) = self.slow_reply_ms {
            flag("--slow-reply-ms", ms.to_string());
        }
        for fault in &self.faults {
            flag("--fault", fault.clone());
        }
        if let Some(version) = &self.version {
            flag("--version", version.clone());
        }
        if let Some(ms) = self.draft_protect_ms {
            flag("--draft-protect-ms", ms.to_string());
        }
        if let Some(ms) = self.quiet_ms {
            flag("--quiet-ms", ms.to_string());
        }
        if let Some(style) = self.discover_style.and_then(|s| s.to_possible_value()) {
            flag("--discover-style", style.get_name().to_owned());
        }
        for (name, socket) in &self.machines {
            flag("--machine", format!("{name}={}", socket.display()));
        }
        for (on, name) in [
            (self.evidence, "--evidence"),
            (self.no_discover, "--no-discover"),
            (self.no_if_guard, "--no-if-guard"),
            (self.no_status_reasons, "--no-status-reasons"),
        ] {
            if on {
                flags.push(name.into());
            }
        }
        flags
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_flags_in_a_fixed_order() {
        let options = Options {
            readers: 2,
            agent_delay_ms: Some(50),
            ..Options::agents(1).fault("no-reply:terminal.send")
        };
        let flags: Vec<_> = options
            .flags()
            .into_iter()
            .map(|flag| flag.into_string().unwrap())
            .collect();
        assert_eq!(
            flags,
            [
                "--agents",
                "1",
                "--shells",
                "0",
                "--readers",
                "2",
                "--idle-records",
                "0",
                "--agent-delay-ms",
                "50",
                "--fault",
                "no-reply:terminal.send",
                "--quiet-ms",
                "100",
            ]
        );
    }
}
