//! The simulated hc core: its identity (core_id, pid, started_ms), its
//! terminals, the faults and counters in force, and the lifecycle of
//! terminals (spawn, kill, remove, shut down). The sockets that expose it
//! live in `server` and `control`.

use std::io;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use crate::clock::unix_ms;
use crate::discover::style::DiscoverStyle;
use crate::faults::{Fault, FaultSet};
use crate::input::Patience;
use crate::input_log::InputLog;
use crate::machines::{MachineSpec, Machines};
use crate::pty::{self, ProgramSpec};
use crate::registry::{Registry, Slot};
use crate::stats::Stats;
use crate::terminal::{Backend, Terminal};
use crate::wire::{self, Status};

/// How long a new program may take to show signs of life (the first status
/// report of an agent or a reader, the shell's first output) before it is
/// served anyway.
const STARTUP_WAIT: Duration = Duration::from_secs(10);
/// How long `kill` waits for the killed program to be reaped.
const KILL_WAIT: Duration = Duration::from_secs(5);

/// Who the core is, fixed for the process's life.
#[derive(Debug, Clone)]
pub struct Identity {
    /// A new UUID v4 per start.
    pub core_id: String,
    pub pid: u32,
    pub started_ms: u64,
}

/// What kind of terminal to create.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TerminalKind {
    /// The scripted agent (`hc-sim agent`) in a PTY.
    Agent,
    /// `/bin/sh` in a PTY.
    Shell,
    /// The line reader (`hc-sim reader`) in a PTY: no bracketed paste.
    Reader,
    /// A record with no program (status idle, input dropped).
    Idle,
}

/// Everything the core needs from the command line.
#[derive(Debug, Clone)]
pub struct SimOptions {
    /// The simulator's own binary, run as `agent --delay-ms MS` for an
    /// agent and as `reader` for a reader.
    pub own_program: PathBuf,
    pub agent_delay: Duration,
    pub shell_program: PathBuf,
    /// The cwd of every program, and of every record.
    pub cwd: PathBuf,
    pub input_log: Option<PathBuf>,
    pub faults: Vec<Fault>,
    pub slow_reply: Duration,
    /// Answer the way public clients of real cores show (`--evidence`):
    /// see `evidence`.
    pub evidence: bool,
    /// The version the hello and the document report (`--version`).
    pub version: String,
    /// Whether `rpc.discover` is answered (not `--no-discover`).
    pub discover: bool,
    /// How the `rpc.discover` document is worded (`--discover-style`).
    pub discover_style: DiscoverStyle,
    /// Whether `terminal.send` has the `if` guard (not `--no-if-guard`).
    pub if_guard: bool,
    /// How long a draft holds a send (`--draft-protect-ms`).
    pub draft_protect: Duration,
    /// Machines to add at start (`--machine NAME=SOCKET`).
    pub machines: Vec<MachineSpec>,
    /// Whether records and screens carry `status_kind`, `status_msg` and
    /// `status_ms` (not `--no-status-reasons`).
    pub status_reasons: bool,
    /// How long the keyboard must be quiet before a send types
    /// (`--quiet-ms`).
    pub keyboard_quiet: Duration,
}

pub struct Sim {
    pub identity: Identity,
    pub registry: Registry,
    pub faults: FaultSet,
    pub stats: Arc<Stats>,
    pub input_log: Option<InputLog>,
    pub slow_reply: Duration,
    /// Replies reshaped as real cores send them (`--evidence`).
    pub evidence: bool,
    pub version: String,
    pub discover: bool,
    pub discover_style: DiscoverStyle,
    pub if_guard: bool,
    /// How long a send waits on the user (draft, keyboard).
    pub(crate) patience: Patience,
    /// The other cores this core added (contract §8).
    pub machines: Machines,
    /// Whether records and screens say why a status holds.
    pub status_reasons: bool,
    options: SimOptions,
}

impl Sim {
    pub fn new(options: SimOptions) -> io::Result<Sim> {
        let input_log = options
            .input_log
            .as_deref()
            .map(InputLog::open)
            .transpose()?;
        Ok(Sim {
            identity: Identity {
                core_id: uuid::Uuid::new_v4().to_string(),
                pid: std::process::id(),
                started_ms: unix_ms(),
            },
            registry: Registry::default(),
            faults: FaultSet::new(options.faults.clone()),
            stats: Arc::default(),
            input_log,
            slow_reply: options.slow_reply,
            evidence: options.evidence,
            version: options.version.clone(),
            discover: options.discover,
            discover_style: options.discover_style,
            if_guard: options.if_guard,
            patience: Patience {
                draft_protect: options.draft_protect,
                keyboard_quiet: options.keyboard_quiet,
            },
            machines: Machines::new(&options.version),
            status_reasons: options.status_reasons,
            options,
        })
    }

    /// The record of `terminal` as this core lists it: without why its
    /// status holds on a core that does not pass that on.
    pub fn record(&self, terminal: &Terminal) -> wire::Record {
        let mut record = terminal.record();
        if !self.status_reasons {
            record.why = wire::StatusWhy::default();
        }
        record
    }

    /// An agent at `address`, an address this core would not hand out
    /// itself (`machine/t7`: a terminal of a connected machine).
    pub async fn spawn_agent_at(&self, address: &str) -> io::Result<Arc<Terminal>> {
        let slot = self.registry.reserve_named(address)?;
        let terminal = self.start_program(slot, TerminalKind::Agent)?;
        wait_started(&terminal, TerminalKind::Agent).await;
        Ok(terminal)
    }

    /// A record with no program whose status hc shows as `word`, a status
    /// outside the six the contract models (as a newer core may report).
    pub fn add_record_showing(&self, word: &'static str) -> Arc<Terminal> {
        let slot = self.registry.reserve();
        let cwd = self.options.cwd.display().to_string();
        let terminal = Arc::new(Terminal::record_showing(
            slot.address.clone(),
            slot.created_ms,
            cwd,
            word,
        ));
        self.registry.insert(&slot, Arc::clone(&terminal));
        terminal
    }

    /// Creates a terminal and returns once its program showed signs of life
    /// (or `STARTUP_WAIT` passed).
    pub async fn spawn(&self, kind: TerminalKind) -> io::Result<Arc<Terminal>> {
        let terminal = self.spawn_started(kind)?;
        wait_started(&terminal, kind).await;
        Ok(terminal)
    }

    /// Creates `count` terminals of a kind, starting them all before waiting.
    pub async fn spawn_many(&self, kind: TerminalKind, count: usize) -> io::Result<()> {
        let terminals = (0..count)
            .map(|_| self.spawn_started(kind))
            .collect::<io::Result<Vec<_>>>()?;
        for terminal in &terminals {
            wait_started(terminal, kind).await;
        }
        Ok(())
    }

    /// Creates a terminal without waiting for its program.
    fn spawn_started(&self, kind: TerminalKind) -> io::Result<Arc<Terminal>> {
        let slot = self.registry.reserve();
        if kind == TerminalKind::Idle {
            let cwd = self.options.cwd.display().to_string();
            let terminal = Terminal::idle_record(slot.address.clone(), slot.created_ms, cwd);
            let terminal = Arc::new(terminal);
            self.registry.insert(&slot, Arc::clone(&terminal));
            return Ok(terminal);
        }
        self.start_program(slot, kind)
    }

    /// Starts the program of a `kind` terminal in `slot`.
    fn start_program(&self, slot: Slot, kind: TerminalKind) -> io::Result<Arc<Terminal>> {
        let cwd = self.options.cwd.display().to_string();
        let spec = match kind {
            TerminalKind::Idle => unreachable!("an idle record has no program"),
            TerminalKind::Agent => ProgramSpec {
                path: self.options.own_program.clone(),
                args: vec![
                    "agent".into(),
                    "--delay-ms".into(),
                    self.options.agent_delay.as_millis().to_string(),
                ],
                cwd: self.options.cwd.clone(),
            },
            TerminalKind::Shell => ProgramSpec {
                path: self.options.shell_program.clone(),
                args: Vec::new(),
                cwd: self.options.cwd.clone(),
            },
            TerminalKind::Reader => ProgramSpec {
                path: self.options.own_program.clone(),
                args: vec!["reader".into()],
                cwd: self.options.cwd.clone(),
            },
        };
        let (program, watch) = match pty::spawn(&spec) {
            Ok(started) => started,
            Err(error) => {
                self.registry.release(slot);
                return Err(io::Error::other(format!(
                    "cannot start {}: {error}",
                    spec.path.display()
                )));
            }
        };
        let terminal = Arc::new(Terminal::with_program(
            slot.address.clone(),
            slot.created_ms,
            cwd,
            spec.basename(),
            Backend::Pty(program),
        ));
        if let Err(error) = watch.start(&slot.address, Arc::clone(&terminal)) {
            terminal.kill();
            self.registry.release(slot);
            return Err(error);
        }
        self.registry.insert(&slot, Arc::clone(&terminal));
        Ok(terminal)
    }

    /// Kills a terminal's program and waits until its record shows it
    /// finished; false if that did not happen in time.
    pub async fn kill(&self, terminal: &Terminal) -> bool {
        terminal.kill();
        terminal
            .wait_for(KILL_WAIT, |state| state.exit.is_some())
            .await
    }

    /// Removes a terminal entirely (killing a live program); its address
    /// becomes free.
    pub fn remove(&self, address: &str) -> Option<Arc<Terminal>> {
        let terminal = self.registry.remove(address)?;
        terminal.kill();
        Some(terminal)
    }

    /// Kills every live program and reaps it (waiting at most `KILL_WAIT`
    /// in all), so none is left behind as a zombie.
    pub async fn shutdown(&self) {
        self.machines.stop();
        let live = self.registry.list(false);
        for terminal in &live {
            terminal.kill();
        }
        let deadline = tokio::time::Instant::now() + KILL_WAIT;
        for terminal in &live {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            terminal.wait_for(left, |state| state.exit.is_some()).await;
        }
    }

    /// Params of the notification line the `notification` fault injects:
    /// the newest terminal's status, or a made-up one if there is none.
    pub fn status_notification(&self) -> serde_json::Value {
        match self.registry.list(true).pop() {
            Some(terminal) => {
                let record = terminal.record();
                wire::status_notification_params(&record.address, record.status, record.status_seq)
            }
            None => wire::status_notification_params("t1", Status::Idle, 1),
        }
    }
}

async fn wait_started(terminal: &Terminal, kind: TerminalKind) {
    terminal
        .wait_for(STARTUP_WAIT, |state| {
            state.exit.is_some()
                || match kind {
                    TerminalKind::Agent | TerminalKind::Reader => state.status != Status::Unknown,
                    TerminalKind::Shell => state.output_bytes > 0,
                    TerminalKind::Idle => true,
                }
        })
        .await;
}
