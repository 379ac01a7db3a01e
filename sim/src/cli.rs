//! The command line (other tools depend on it exactly):
//! `hc-sim --socket PATH [--agents N] [--shells N] [--readers N]
//! [--idle-records N] [--agent-delay-ms MS] [--input-log FILE]
//! [--fault KIND[:METHOD]]... [--control PATH] [--slow-reply-ms MS]
//! [--evidence] [--version V] [--no-discover] [--no-if-guard]
//! [--draft-protect-ms MS] [--quiet-ms MS] [--discover-style STYLE]
//! [--machine NAME=SOCKET]... [--no-status-reasons]`, and
//! the hidden `hc-sim agent` and `hc-sim reader`. Raw flags are parsed here
//! and validated into an [`Invocation`]; running it is `lib`'s job. The
//! `--help` text of `--fault` is generated from the fault kinds themselves.

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, Subcommand};

use crate::discover::DiscoverStyle;
use crate::faults::{self, Fault};
use crate::input;
use crate::machines::MachineSpec;
use crate::sim::SimOptions;
use crate::wire::HC_VERSION;

/// The shell that `--shells` and control `spawn {"kind":"shell"}` run.
const SHELL: &str = "/bin/sh";

/// A contract-faithful simulator of herdr-core (hc) 0.1.15.
#[derive(Debug, Parser)]
#[command(
    name = "hc-sim",
    subcommand_negates_reqs = true,
    args_conflicts_with_subcommands = true
)]
pub(crate) struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Unix socket to serve hc on (a stale socket file there is replaced).
    #[arg(long, value_name = "PATH", required = true)]
    socket: Option<PathBuf>,
    /// Scripted agents to start, each in its own PTY.
    #[arg(long, value_name = "N", default_value_t = 0)]
    agents: usize,
    /// `/bin/sh` terminals to start.
    #[arg(long, value_name = "N", default_value_t = 0)]
    shells: usize,
    /// Line readers (no bracketed paste) to start, each in its own PTY.
    #[arg(long, value_name = "N", default_value_t = 0)]
    readers: usize,
    /// Lightweight idle records (no program) to create.
    #[arg(long, value_name = "N", default_value_t = 0)]
    idle_records: usize,
    /// How long an agent works on a prompt before reporting done.
    #[arg(long, value_name = "MS", default_value_t = 300)]
    agent_delay_ms: u64,
    /// Append one JSON line per written `terminal.send` to FILE.
    #[arg(long, value_name = "FILE")]
    input_log: Option<PathBuf>,
    /// Inject a fault, on one method or on every call; repeatable
    /// (`--help` lists the kinds).
    #[arg(long = "fault", value_name = "KIND[:METHOD]", long_help = faults::long_help())]
    faults: Vec<Fault>,
    /// Also serve the control socket (for tests) at PATH.
    #[arg(long, value_name = "PATH")]
    control: Option<PathBuf>,
    /// How long the `slow-reply` fault delays a reply.
    #[arg(long, value_name = "MS", default_value_t = 3000)]
    slow_reply_ms: u64,
    /// Answer as public clients show real cores answer, not as the model
    /// says: human-text error messages with `data.hint`, records with
    /// extra fields and without title, submit_key, rows and cols, an agent
    /// at `machine/t7`, and a record showing a status outside the six.
    #[arg(long)]
    evidence: bool,
    /// Play this hc version: the hello and the rpc.discover document
    /// report it (model from public clients, unverified).
    #[arg(long = "version", value_name = "V", default_value = HC_VERSION)]
    hc_version: String,
    /// Answer rpc.discover as a method this core does not have.
    #[arg(long)]
    no_discover: bool,
    /// How the rpc.discover document describes this core: the model's own
    /// words, tersely, with $refs into components, or (for tests of the
    /// check) wrongly in one way each.
    #[arg(long, value_name = "STYLE", value_enum, default_value_t = DiscoverStyle::Model)]
    discover_style: DiscoverStyle,
    /// A core without the `if` guard: terminal.send has no `if`, in the
    /// document and on the wire (a send given one writes regardless).
    #[arg(long)]
    no_if_guard: bool,
    /// How long a draft typed at a terminal holds a send before hc gives up
    /// with `started: false`.
    #[arg(long, value_name = "MS", default_value_t = 60_000)]
    draft_protect_ms: u64,
    /// Add the hc core at SOCKET as machine NAME (its terminals listed as
    /// `NAME/tN`); repeatable.
    #[arg(long = "machine", value_name = "NAME=SOCKET")]
    machines: Vec<MachineSpec>,
    /// A core that does not pass on why a status holds: records and screens
    /// without `status_kind`, `status_msg` and `status_ms`.
    #[arg(long)]
    no_status_reasons: bool,
    /// How long the keyboard must have been quiet before a send types
    /// (hc's is about 3 s; tests shorten it). Below the 10 s after which a
    /// keyboard that keeps going makes the send `busy`.
    #[arg(
        long,
        value_name = "MS",
        default_value_t = input::DEFAULT_KEYBOARD_QUIET_MS,
        value_parser = clap::value_parser!(u64).range(0..input::QUIET_WAIT_LIMIT_MS)
    )]
    quiet_ms: u64,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the scripted agent in the current terminal.
    #[command(hide = true)]
    Agent {
        /// How long to work on a prompt before reporting done.
        #[arg(long, value_name = "MS", default_value_t = 300)]
        delay_ms: u64,
    },
    /// Run the line reader (no bracketed paste) in the current terminal.
    #[command(hide = true)]
    Reader,
}

/// What to do, validated.
#[derive(Debug)]
pub(crate) enum Invocation {
    Serve(Box<ServeConfig>),
    Agent { delay: Duration },
    Reader,
}

/// A validated simulator configuration.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    pub socket: PathBuf,
    pub control: Option<PathBuf>,
    pub agents: usize,
    pub shells: usize,
    pub readers: usize,
    pub idle_records: usize,
    pub sim: SimOptions,
}

impl TryFrom<Cli> for Invocation {
    type Error = io::Error;

    fn try_from(cli: Cli) -> io::Result<Invocation> {
        match cli.command {
            Some(Command::Agent { delay_ms }) => {
                return Ok(Invocation::Agent {
                    delay: Duration::from_millis(delay_ms),
                });
            }
            Some(Command::Reader) => return Ok(Invocation::Reader),
            None => {}
        }
        let socket = cli.socket.ok_or_else(|| {
            io::Error::new(io::ErrorKind::InvalidInput, "--socket PATH is required")
        })?;
        let own_program = std::env::current_exe().map_err(|error| {
            io::Error::new(error.kind(), format!("cannot locate own binary: {error}"))
        })?;
        let cwd = std::env::current_dir().map_err(|error| {
            io::Error::new(
                error.kind(),
                format!("cannot read the current directory: {error}"),
            )
        })?;
        Ok(Invocation::Serve(Box::new(ServeConfig {
            socket,
            control: cli.control,
            agents: cli.agents,
            shells: cli.shells,
            readers: cli.readers,
            idle_records: cli.idle_records,
            sim: SimOptions {
                own_program,
                agent_delay: Duration::from_millis(cli.agent_delay_ms),
                shell_program: PathBuf::from(SHELL),
                cwd,
                input_log: cli.input_log,
                faults: cli.faults,
                slow_reply: Duration::from_millis(cli.slow_reply_ms),
                evidence: cli.evidence,
                version: cli.hc_version,
                discover: !cli.no_discover,
                discover_style: cli.discover_style,
                if_guard: !cli.no_if_guard,
                draft_protect: Duration::from_millis(cli.draft_protect_ms),
                machines: cli.machines,
                status_reasons: !cli.no_status_reasons,
                keyboard_quiet: Duration::from_millis(cli.quiet_ms),
            },
        })))
    }
}
