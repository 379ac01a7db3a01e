//! The test world: the bundled simulator on a temp socket (as a real
//! process), its control socket and input log, config files, the adapter
//! binary, and MCP clients talking to it.

#![allow(dead_code, reason = "each test area uses its own share of the helpers")]

pub mod commands;
pub mod http;
pub mod idp;
pub mod in_process;
pub mod limits;
pub mod mcp;
pub mod oauth;
pub mod waits;
pub mod world;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// Longest any test waits for a condition before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The SHA-256 of `text` in hex, as the input log and the audit lines
/// record a prompt.
pub fn sha256_hex(text: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The Python of `.interop/venv`, with the official MCP SDK the tests'
/// Python clients use (installed by scripts/oauth-deps.sh).
pub fn python() -> PathBuf {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join(".interop/venv/bin/python");
    assert!(
        python.is_file(),
        "the Python MCP SDK is not installed: run scripts/oauth-deps.sh (scripts/test.sh does)"
    );
    python
}

/// The adapter binary under test: the one cargo built, or the one named by
/// `HERDR_MCP_BIN` (to run the process-level tests against another build).
pub fn adapter_bin() -> PathBuf {
    std::env::var_os("HERDR_MCP_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_herdr-core-mcp")),
        PathBuf::from,
    )
}

pub use hc_sim::testing::{Options as SimOptions, WorkDir};

/// The bundled simulator (`hc_sim::testing::Simulator`, a real process on
/// sockets in its own directory) plus what the adapter's tests add: config
/// files for an adapter talking to it, and waiting on its counters.
pub struct Sim(hc_sim::testing::Simulator);

impl std::ops::Deref for Sim {
    type Target = hc_sim::testing::Simulator;

    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Sim {
    /// A simulator for one test, inside this test process (see
    /// [`Sim::in_process`]).
    pub fn start(options: SimOptions) -> Sim {
        Sim::in_process(options)
    }

    /// [`Sim::start`] in `dir` (reusing its socket path if restarted).
    pub fn start_in(dir: WorkDir, options: SimOptions) -> Sim {
        Sim::in_process_in(dir, options)
    }

    /// The simulator as its own process (what the bench and the demo run).
    pub fn process(options: SimOptions) -> Sim {
        Sim(hc_sim::testing::Simulator::start(options).expect("start hc-sim"))
    }

    /// Runs the simulator inside this test process instead (a thread with
    /// its own runtime; its agents and readers still run the hc-sim binary),
    /// with the same handle; `pid()` is then this process's own.
    pub fn in_process(options: SimOptions) -> Sim {
        Sim(hc_sim::testing::Simulator::in_process(options).expect("start hc-sim in process"))
    }

    /// As [`Sim::in_process`], in `dir` (reusing its socket path if restarted).
    pub fn in_process_in(dir: WorkDir, options: SimOptions) -> Sim {
        Sim(hc_sim::testing::Simulator::in_process_in(dir, options)
            .expect("start hc-sim in process"))
    }

    /// Stops this simulator (SIGTERM) and hands back its directory.
    pub fn stop(self) -> WorkDir {
        self.0.stop()
    }

    /// Kills this simulator with SIGKILL, as a crash would: its socket file
    /// stays behind, stale.
    pub fn crash(self) -> WorkDir {
        self.0.crash()
    }

    /// Waits until the simulator has seen more than `count` `method` calls.
    pub async fn wait_for_calls(&self, method: &str, count: u64) {
        eventually(&format!("more than {count} {method} calls"), async || {
            (self.calls(method) > count).then_some(())
        })
        .await;
    }

    /// A config file (mode 0600) for an adapter talking to this simulator.
    pub fn config(&self, extra: Value) -> PathBuf {
        let mut config = json!({"socketPath": self.socket, "timeoutMs": 5000});
        merge(&mut config, extra);
        write_config(self.dir.path(), &config)
    }
}

/// Sends `signal` (a `libc::SIG*` number) to a process we started.
pub fn send_signal(pid: u32, signal: i32) {
    let pid = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
        .expect("a pid we started");
    let signal = rustix::process::Signal::from_named_raw(signal).expect("a named signal");
    let _ = rustix::process::kill_process(pid, signal);
}

pub fn merge(base: &mut Value, extra: Value) {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        for (k, v) in extra {
            base.insert(k, v);
        }
    }
}

/// Writes `config` to a fresh 0600 file in `dir`, named by how many came
/// before it there (`config-0.json`, `config-1.json`, ...): the same names
/// whatever else runs in the process, so snapshots read alike under
/// nextest (a process per test) and `cargo test` (one for all).
pub fn write_config(dir: &Path, config: &Value) -> PathBuf {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    for n in 0.. {
        let path = dir.join(format!("config-{n}.json"));
        let file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path);
        match file {
            Ok(mut file) => {
                file.write_all(&serde_json::to_vec_pretty(config).unwrap())
                    .expect("write config");
                return path;
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => panic!("cannot write {}: {e}", path.display()),
        }
    }
    unreachable!("some config-N.json is free")
}

/// How often [`eventually`] asks again.
const POLL_EVERY: Duration = Duration::from_millis(20);

/// Waits until `condition` yields a value, asking again every 20 ms, and
/// fails naming `what` after [`PATIENCE`]. The one poll loop of the tests:
/// a condition that can be awaited is awaited, never slept on.
pub async fn eventually<T>(what: &str, mut condition: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = condition().await {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(POLL_EVERY).await;
    }
}

/// Runs the adapter binary to completion; returns (exit code, stdout, stderr).
pub fn run_adapter(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(adapter_bin());
    command
        .args(args)
        .env_remove("HERDR_MCP_TOKEN")
        .env("RUST_LOG", "warn");
    for (k, v) in env {
        command.env(k, v);
    }
    let output = command.output().expect("run herdr-core-mcp");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A core_id as the adapter's types hold it.
pub fn core(id: &str) -> herdr_core_mcp::CoreId {
    herdr_core_mcp::CoreId::try_from(id.to_owned()).expect("a valid core_id")
}
