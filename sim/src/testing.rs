//! The one way to run the simulator from outside, for tests, benchmarks
//! and the demo: start the built `hc-sim` binary as a process with its hc
//! socket, control socket and input log in a directory of its own, wait for
//! its ready line, drive it over the control socket, read its input log,
//! and stop it (SIGTERM), crash it (SIGKILL) or let Drop terminate it. The
//! API is synchronous and needs no runtime, so sync tests and async callers
//! alike can use it: an async caller runs [`control_call`] on a blocking
//! thread. What the simulator does once it runs is the rest of this crate.
//!
//! ```no_run
//! use hc_sim::testing::{Options, Simulator};
//!
//! let sim = Simulator::start(Options::agents(1)).expect("hc-sim starts");
//! let reader = sim.spawn("reader");
//! assert_eq!(reader["address"], "t2");
//! let dir = sim.stop(); // SIGTERM; the same socket path can serve again:
//! let again = Simulator::start_in(dir, Options::default()).expect("hc-sim restarts");
//! ```

mod binary;
mod error;
mod options;
mod process;
mod workdir;

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

pub use binary::locate_binary;
pub use error::Error;
pub use options::Options;
use process::Process;
pub use workdir::WorkDir;

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

/// A running `hc-sim` process with a control socket. Dropping it
/// terminates the process (SIGTERM, then SIGKILL after 5 s) and then
/// removes its directory if it owns it.
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
    /// The ready line exactly as printed, newline included.
    pub ready_line: String,
    /// Declared before `dir`: the process ends before its directory goes.
    process: Process,
    /// Where the sockets and the input log live.
    pub dir: WorkDir,
}

impl Simulator {
    /// Starts a simulator in a fresh temp directory it owns.
    pub fn start(options: Options) -> Result<Simulator, Error> {
        let dir = WorkDir::temp().map_err(Error::io("create the simulator's directory"))?;
        Simulator::start_in(dir, options)
    }

    /// Starts a simulator in `dir`: its hc socket is `DIR/hc.sock`, so a
    /// directory handed back by [`Simulator::stop`] or [`Simulator::crash`]
    /// serves the same socket path again (a stale socket file is replaced).
    pub fn start_in(dir: WorkDir, options: Options) -> Result<Simulator, Error> {
        let binary = match &options.binary {
            Some(binary) => binary.clone(),
            None => locate_binary()?,
        };
        let socket = dir.path().join(SOCKET_FILE);
        let control = dir.path().join(CONTROL_FILE);
        for path in [&socket, &control] {
            if path.as_os_str().len() > MAX_SOCKET_PATH_BYTES {
                return Err(Error::PathTooLong(path.clone()));
            }
        }
        let input_log = options.input_log.then(|| dir.path().join(INPUT_LOG_FILE));
        let stderr = match &options.stderr {
            Some(path) => Stdio::from(
                File::create(path).map_err(Error::io(format!("create {}", path.display())))?,
            ),
            None => Stdio::inherit(),
        };
        let mut command = Command::new(&binary);
        command.arg("--socket").arg(&socket);
        command.arg("--control").arg(&control);
        if let Some(input_log) = &input_log {
            command.arg("--input-log").arg(input_log);
        }
        command
            .args(options.flags())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(stderr);
        let child = command
            .spawn()
            .map_err(Error::io(format!("start {}", binary.display())))?;
        // From here on, an early return terminates the process (Drop).
        let mut process = Process { child };
        let ready_line = process.ready_line()?;
        let core_id = parse_ready_line(&ready_line, &socket)?;
        Ok(Simulator {
            socket,
            control,
            input_log,
            core_id,
            ready_line,
            process,
            dir,
        })
    }

    /// The simulator's process id (what `hc.hello` reports as `pid`).
    pub fn pid(&self) -> u32 {
        self.process.child.id()
    }

    /// The exit status if the process has exited (reaping it), else `None`.
    pub fn try_wait(&mut self) -> std::io::Result<Option<ExitStatus>> {
        self.process.child.try_wait()
    }

    /// Stops the simulator with SIGTERM (it kills its programs and removes
    /// its sockets; SIGKILL after 5 s) and hands back its directory, for a
    /// restart on the same socket path with [`Simulator::start_in`].
    pub fn stop(self) -> WorkDir {
        let Simulator {
            mut process, dir, ..
        } = self;
        process.terminate();
        dir
    }

    /// Kills the simulator with SIGKILL, as a crash would: its programs are
    /// orphaned, not killed, and its socket files stay behind, stale. Hands
    /// back its directory.
    pub fn crash(self) -> WorkDir {
        let Simulator {
            mut process, dir, ..
        } = self;
        process.kill();
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

/// The core_id from `ready core_id=<id> socket=<path>\n`, checking the
/// socket is the one asked for.
fn parse_ready_line(line: &str, socket: &Path) -> Result<String, Error> {
    let expected_tail = format!(" socket={}", socket.display());
    line.strip_suffix('\n')
        .and_then(|line| line.strip_prefix("ready core_id="))
        .and_then(|rest| rest.strip_suffix(&expected_tail))
        .filter(|core_id| !core_id.is_empty() && !core_id.contains(' '))
        .map(str::to_owned)
        .ok_or_else(|| Error::NotReady(format!("unexpected first line {line:?}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ready_line_gives_the_core_id_for_the_socket_asked_for() {
        let socket = Path::new("/tmp/d/hc.sock");
        let line = "ready core_id=1b4e28ba-2fa1-41d2-883f-0016d3cca427 socket=/tmp/d/hc.sock\n";
        assert_eq!(
            parse_ready_line(line, socket).unwrap(),
            "1b4e28ba-2fa1-41d2-883f-0016d3cca427"
        );
        let elsewhere = "ready core_id=x socket=/tmp/other.sock\n";
        assert!(parse_ready_line(elsewhere, socket).is_err());
        assert!(parse_ready_line("listening\n", socket).is_err());
    }

    #[test]
    fn a_simulator_can_be_shared_across_threads_and_tasks() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Simulator>();
        shareable::<Error>();
    }
}
