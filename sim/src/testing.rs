//! The one way to run the simulator from outside, for tests, benchmarks
//! and the demo: start it with its hc socket, control socket and input log
//! in a directory of its own, drive it over the control socket, read its
//! input log, and stop it, crash it or let Drop stop it. It runs as the
//! built `hc-sim` binary ([`Simulator::start`]: a process, waited for
//! until its ready line) or on a thread of this process with a runtime of
//! its own ([`Simulator::in_process`]: no process to start, so quicker);
//! either way its programs are real processes in real PTYs, and the handle
//! is the same. The API is synchronous and needs no runtime, so sync tests
//! and async callers alike can use it: an async caller runs
//! [`control_call`] on a blocking thread. What the simulator does once it
//! runs is the rest of this crate.
//!
//! ```no_run
//! use hc_sim::testing::{Options, Simulator};
//!
//! let sim = Simulator::start(Options::agents(1)).expect("hc-sim starts");
//! let reader = sim.spawn("reader");
//! assert_eq!(reader["address"], "t2");
//! let dir = sim.stop(); // SIGTERM; the same socket path can serve again:
//! let again = Simulator::in_process_in(dir, Options::default()).expect("hc-sim restarts");
//! ```

mod binary;
mod error;
mod in_process;
mod listener;
mod options;
mod process;
mod workdir;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::time::Duration;

use serde_json::{Value, json};

pub use binary::locate_binary;
pub use error::Error;
use in_process::InProcess;
pub use listener::{command_with_descriptor, command_with_listener};
pub use options::{Options, TEST_QUIET_MS};
use process::Process;
pub use workdir::WorkDir;

use crate::service::{self, Ending};

/// Overrides where [`locate_binary`] looks for `hc-sim`.
pub const BINARY_ENV: &str = "HC_SIM_BIN";
/// The longest path a Unix socket can bind (`sun_path` is 108 bytes with
/// its NUL).
pub const MAX_SOCKET_PATH_BYTES: usize = 107;
/// The hc socket's name in a simulator's directory: fixed, so a restart in
/// the same directory serves the same path.
pub const SOCKET_FILE: &str = "hc.sock";
/// The control socket's name in a simulator's directory.
pub const CONTROL_FILE: &str = "control.sock";
/// The input log's name in a simulator's directory.
pub const INPUT_LOG_FILE: &str = "input.log";
/// How long one control call may take: `spawn` waits up to 10 s for its
/// program to start, `kill` up to 5 s for it to die.
const CONTROL_TIMEOUT: Duration = Duration::from_secs(30);

/// A running simulator with a control socket, as a process or inside this
/// one. Dropping it stops it (a process gets SIGTERM, then SIGKILL after
/// 5 s) and then removes its directory if it owns it.
///
/// The methods that return values directly ([`Simulator::control`] and the
/// conveniences after it) panic on failure, as a test wants; programs use
/// [`Simulator::try_control`].
#[derive(Debug)]
pub struct Simulator {
    /// The hc socket (`DIR/hc.sock`).
    pub socket: PathBuf,
    /// The control socket (`DIR/control.sock`).
    pub control: PathBuf,
    /// The input log (`DIR/input.log`), unless [`Options::input_log`] was off.
    pub input_log: Option<PathBuf>,
    /// The core_id this incarnation announced (new on every start).
    pub core_id: String,
    /// The ready line exactly as printed (as it would be printed, in
    /// process), newline included.
    pub ready_line: String,
    /// Declared before `dir`: the simulator ends before its directory goes.
    runner: Runner,
    /// Where the sockets and the input log live.
    pub dir: WorkDir,
}

/// Where a simulator runs.
#[derive(Debug)]
enum Runner {
    Process(Process),
    InProcess(InProcess),
}

impl Simulator {
    /// Starts the `hc-sim` binary in a fresh temp directory it owns.
    pub fn start(options: Options) -> Result<Simulator, Error> {
        Simulator::start_in(temp_dir()?, options)
    }

    /// Starts the `hc-sim` binary in `dir`: its hc socket is `DIR/hc.sock`,
    /// so a directory handed back by [`Simulator::stop`] or
    /// [`Simulator::crash`] serves the same socket path again (a stale
    /// socket file is replaced).
    pub fn start_in(dir: WorkDir, options: Options) -> Result<Simulator, Error> {
        let binary = binary(&options)?;
        let paths = dir.paths(options.input_log)?;
        let args = options.args(&paths);
        let stderr = options.stderr.as_deref();
        let (process, ready_line, core_id) = Process::start(&binary, args, stderr, &paths.socket)?;
        Ok(Simulator {
            socket: paths.socket,
            control: paths.control,
            input_log: paths.input_log,
            core_id,
            ready_line,
            runner: Runner::Process(process),
            dir,
        })
    }

    /// Runs the simulator on a thread of this process, with a runtime of
    /// its own, in a fresh temp directory it owns. Its agents and readers
    /// still run the `hc-sim` binary; [`Options::stderr`] does not apply.
    pub fn in_process(options: Options) -> Result<Simulator, Error> {
        Simulator::in_process_in(temp_dir()?, options)
    }

    /// Runs the simulator in this process, as [`Simulator::in_process`]
    /// does, in `dir`, as [`Simulator::start_in`] does.
    pub fn in_process_in(dir: WorkDir, options: Options) -> Result<Simulator, Error> {
        let binary = binary(&options)?;
        let paths = dir.paths(options.input_log)?;
        let (simulator, core_id) = InProcess::start(&binary, options.args(&paths))?;
        Ok(Simulator {
            ready_line: service::ready_line(&core_id, &paths.socket),
            socket: paths.socket,
            control: paths.control,
            input_log: paths.input_log,
            core_id,
            runner: Runner::InProcess(simulator),
            dir,
        })
    }

    /// The simulator's process id (what `hc.hello` reports as `pid`): this
    /// process's own for an in-process simulator, so never signal it.
    pub fn pid(&self) -> u32 {
        match &self.runner {
            Runner::Process(process) => process.child.id(),
            Runner::InProcess(_) => std::process::id(),
        }
    }

    /// The exit status if the simulator has ended (reaping a process), else
    /// `None`. An in-process simulator that ended reads as exit 0.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        match &mut self.runner {
            Runner::Process(process) => process.child.try_wait(),
            Runner::InProcess(simulator) => {
                Ok(simulator.has_ended().then(|| ExitStatus::from_raw(0)))
            }
        }
    }

    /// Stops the simulator as SIGTERM does (it kills its programs and
    /// removes its sockets; a process is SIGKILLed after 5 s) and hands back
    /// its directory, for a restart on the same socket path.
    pub fn stop(self) -> WorkDir {
        let Simulator {
            mut runner, dir, ..
        } = self;
        match &mut runner {
            Runner::Process(process) => {
                process.terminate();
            }
            Runner::InProcess(simulator) => simulator.end(Ending::Stop),
        }
        dir
    }

    /// Ends the simulator as a crash would: a process is SIGKILLed, so its
    /// programs are orphaned, not killed; in process, its connections drop
    /// and its programs are killed. Either way its socket files stay behind,
    /// stale. Hands back its directory.
    pub fn crash(self) -> WorkDir {
        let Simulator {
            mut runner, dir, ..
        } = self;
        match &mut runner {
            Runner::Process(process) => {
                process.kill();
            }
            Runner::InProcess(simulator) => simulator.end(Ending::Crash),
        }
        dir
    }

    /// One call on the control socket; the `result`, or why there is none.
    pub fn try_control(&self, method: &str, params: Value) -> Result<Value, Error> {
        control_call(&self.control, method, params)
    }

    /// One call on the control socket that must succeed; its `result`.
    pub fn control(&self, method: &str, params: Value) -> Value {
        self.try_control(method, params)
            .unwrap_or_else(|error| panic!("{error}"))
    }

    /// Control `spawn` of a terminal of `kind` (`agent`, `shell`, `reader`
    /// or `idle`); its record.
    pub fn spawn(&self, kind: &str) -> Value {
        self.control("spawn", json!({ "kind": kind }))
    }

    /// Control `stats`: the hc socket's connection and call counters.
    pub fn stats(&self) -> Value {
        self.control("stats", json!({}))
    }

    /// How many `method` calls the hc socket has answered.
    pub fn calls(&self, method: &str) -> u64 {
        self.stats()["calls"][method].as_u64().unwrap_or(0)
    }

    /// Control `set_faults`: replaces the faults in force (`[]` clears them).
    pub fn set_faults(&self, faults: &[&str]) {
        self.control("set_faults", json!({ "faults": faults }));
    }

    /// The input log's entries, one per send that wrote input, in order.
    /// Panics if the simulator was started without an input log.
    pub fn writes(&self) -> Vec<Value> {
        let path = self
            .input_log
            .as_ref()
            .expect("writes() needs a simulator started with Options::input_log on");
        match std::fs::read_to_string(path) {
            Ok(text) => text
                .lines()
                .map(|line| serde_json::from_str(line).expect("an input log line is JSON"))
                .collect(),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => panic!("cannot read {}: {error}", path.display()),
        }
    }

    /// How many input log entries are for `address` (any lifetime of it).
    pub fn writes_to(&self, address: &str) -> usize {
        self.writes()
            .iter()
            .filter(|entry| entry["address"] == address)
            .count()
    }
}

/// One call on the control socket at `control`, on a connection of its
/// own; the `result`, or why there is none. Blocks for at most 30 s.
pub fn control_call(control: &Path, method: &str, params: Value) -> Result<Value, Error> {
    let action = || format!("control {method} on {}", control.display());
    let mut stream = UnixStream::connect(control).map_err(Error::io(action()))?;
    stream
        .set_read_timeout(Some(CONTROL_TIMEOUT))
        .and_then(|()| stream.set_write_timeout(Some(CONTROL_TIMEOUT)))
        .map_err(Error::io(action()))?;
    let request = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params });
    writeln!(stream, "{request}").map_err(Error::io(action()))?;
    let mut line = String::new();
    BufReader::new(stream)
        .read_line(&mut line)
        .map_err(Error::io(action()))?;
    let bad_reply = || Error::BadReply {
        method: method.to_owned(),
        line: line.clone(),
    };
    let mut reply: Value = serde_json::from_str(&line).map_err(|_| bad_reply())?;
    if let Some(result) = reply.get_mut("result") {
        return Ok(result.take());
    }
    match reply.get_mut("error") {
        Some(error) => Err(Error::Refused {
            method: method.to_owned(),
            error: error.take(),
        }),
        None => Err(bad_reply()),
    }
}

/// A fresh temp directory for a simulator.
fn temp_dir() -> Result<WorkDir, Error> {
    WorkDir::temp().map_err(Error::io("create the simulator's directory"))
}

/// The `hc-sim` binary the options name, or the one [`locate_binary`] finds.
fn binary(options: &Options) -> Result<PathBuf, Error> {
    match &options.binary {
        Some(binary) => Ok(binary.clone()),
        None => locate_binary(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_simulator_can_be_shared_across_threads_and_tasks() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Simulator>();
        shareable::<Error>();
    }
}
