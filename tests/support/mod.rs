//! The test world: the bundled simulator on a temp socket (as a real
//! process), its control socket and input log, config files, the adapter
//! binary, and MCP clients talking to it.

#![allow(dead_code)]

pub mod mcp;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

/// Longest any test waits for a condition before failing.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// The adapter binary under test.
pub fn adapter_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_herdr-core-mcp"))
}

/// The simulator binary (`cargo build --example hc-sim`; `cargo test` and
/// `cargo nextest run` build examples before running tests).
pub fn sim_bin() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe path");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>/deps/<test>");
    let bin = profile_dir.join("examples").join("hc-sim");
    assert!(
        bin.exists(),
        "{} is missing: run `cargo build --example hc-sim` (scripts/test.sh does)",
        bin.display()
    );
    bin
}

/// Options for one simulator run.
#[derive(Debug, Clone, Default)]
pub struct SimOptions {
    pub agents: usize,
    pub shells: usize,
    pub idle_records: usize,
    pub agent_delay_ms: Option<u64>,
    pub faults: Vec<String>,
    pub slow_reply_ms: Option<u64>,
}

impl SimOptions {
    pub fn agents(n: usize) -> SimOptions {
        SimOptions {
            agents: n,
            ..SimOptions::default()
        }
    }
    pub fn fault(mut self, fault: &str) -> SimOptions {
        self.faults.push(fault.to_owned());
        self
    }
}

/// A running simulator in its own temp directory.
pub struct Sim {
    pub dir: TempDir,
    pub socket: PathBuf,
    pub control: PathBuf,
    pub input_log: PathBuf,
    pub core_id: String,
    child: Child,
}

impl Sim {
    pub fn start(options: SimOptions) -> Sim {
        let dir = tempfile::Builder::new()
            .prefix("hcmcp")
            .tempdir()
            .expect("temp dir");
        Sim::start_in(dir, options)
    }

    /// Starts a simulator in `dir` (reusing its socket path if restarted).
    pub fn start_in(dir: TempDir, options: SimOptions) -> Sim {
        let socket = dir.path().join("hc.sock");
        let control = dir.path().join("control.sock");
        let input_log = dir.path().join("input.log");
        let mut command = Command::new(sim_bin());
        command
            .arg("--socket")
            .arg(&socket)
            .arg("--control")
            .arg(&control)
            .arg("--input-log")
            .arg(&input_log)
            .arg("--agents")
            .arg(options.agents.to_string())
            .arg("--shells")
            .arg(options.shells.to_string())
            .arg("--idle-records")
            .arg(options.idle_records.to_string());
        if let Some(ms) = options.agent_delay_ms {
            command.arg("--agent-delay-ms").arg(ms.to_string());
        }
        if let Some(ms) = options.slow_reply_ms {
            command.arg("--slow-reply-ms").arg(ms.to_string());
        }
        for fault in &options.faults {
            command.arg("--fault").arg(fault);
        }
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn hc-sim");
        let mut ready = String::new();
        BufReader::new(child.stdout.take().expect("piped stdout"))
            .read_line(&mut ready)
            .expect("read the ready line");
        let core_id = ready
            .strip_prefix("ready core_id=")
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_else(|| panic!("unexpected ready line {ready:?}"))
            .to_owned();
        Sim {
            dir,
            socket,
            control,
            input_log,
            core_id,
            child,
        }
    }

    /// Stops this simulator (SIGTERM) and hands back its directory.
    pub fn stop(mut self) -> TempDir {
        self.terminate();
        let dir = tempfile::Builder::new()
            .prefix("hcmcp")
            .tempdir()
            .expect("temp dir");
        std::mem::replace(&mut self.dir, dir)
    }

    /// Kills this simulator with SIGKILL, as a crash would: nothing is
    /// cleaned up and its socket file stays behind, stale. Hands back its
    /// directory. Tests crash simulators of idle records only, which leave
    /// no programs behind.
    pub fn crash(mut self) -> TempDir {
        send_signal(self.child.id(), libc::SIGKILL);
        let _ = self.child.wait();
        let dir = tempfile::Builder::new()
            .prefix("hcmcp")
            .tempdir()
            .expect("temp dir");
        std::mem::replace(&mut self.dir, dir)
    }

    fn terminate(&mut self) {
        // Already reaped (stopped or crashed before this drop): its pid may
        // belong to another process by now.
        if let Ok(Some(_)) = self.child.try_wait() {
            return;
        }
        send_signal(self.child.id(), libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// One call on the control socket.
    pub fn control(&self, method: &str, params: Value) -> Value {
        let mut stream = std::os::unix::net::UnixStream::connect(&self.control)
            .unwrap_or_else(|e| panic!("control socket {}: {e}", self.control.display()));
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        writeln!(stream, "{request}").expect("write control request");
        let mut line = String::new();
        BufReader::new(stream)
            .read_line(&mut line)
            .expect("read control reply");
        let reply: Value = serde_json::from_str(&line).expect("control reply is JSON");
        match reply.get("result") {
            Some(result) => result.clone(),
            None => panic!("control {method} failed: {reply}"),
        }
    }

    pub fn spawn(&self, kind: &str) -> Value {
        self.control("spawn", json!({"kind": kind}))
    }

    pub fn stats(&self) -> Value {
        self.control("stats", json!({}))
    }

    /// How many `method` calls the simulator has answered on its hc socket.
    pub fn calls(&self, method: &str) -> u64 {
        self.stats()["calls"][method].as_u64().unwrap_or(0)
    }

    /// Waits until the simulator has seen more than `count` `method` calls.
    pub async fn wait_for_calls(&self, method: &str, count: u64) {
        eventually(&format!("more than {count} {method} calls"), || {
            (self.calls(method) > count).then_some(())
        })
        .await;
    }

    pub fn set_faults(&self, faults: &[&str]) {
        self.control("set_faults", json!({"faults": faults}));
    }

    /// The input log: one entry per write that reached a terminal.
    pub fn writes(&self) -> Vec<Value> {
        match std::fs::read_to_string(&self.input_log) {
            Ok(text) => text
                .lines()
                .map(|l| serde_json::from_str(l).expect("input log line is JSON"))
                .collect(),
            Err(_) => Vec::new(),
        }
    }

    pub fn writes_to(&self, address: &str) -> usize {
        self.writes()
            .iter()
            .filter(|w| w["address"] == address)
            .count()
    }

    /// A config file (mode 0600) for an adapter talking to this simulator.
    pub fn config(&self, extra: Value) -> PathBuf {
        let mut config = json!({"socketPath": self.socket, "timeoutMs": 5000});
        merge(&mut config, extra);
        write_config(self.dir.path(), &config)
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        self.terminate();
    }
}

/// Sends `signal` to a process we started.
pub fn send_signal(pid: u32, signal: i32) {
    // SAFETY: kill(2) on a pid we own.
    unsafe {
        libc::kill(pid as i32, signal);
    }
}

pub fn merge(base: &mut Value, extra: Value) {
    if let (Some(base), Value::Object(extra)) = (base.as_object_mut(), extra) {
        for (k, v) in extra {
            base.insert(k, v);
        }
    }
}

static CONFIG_SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// Writes `config` to a fresh 0600 file in `dir`.
pub fn write_config(dir: &Path, config: &Value) -> PathBuf {
    let n = CONFIG_SEQ.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let path = dir.join(format!("config-{n}.json"));
    std::fs::write(&path, serde_json::to_vec_pretty(config).unwrap()).expect("write config");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// Waits until `condition` holds, failing after [`PATIENCE`].
pub async fn eventually<T>(what: &str, mut condition: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + PATIENCE;
    loop {
        if let Some(value) = condition() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
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
pub fn core(id: &str) -> herdr_core_mcp::hc::CoreId {
    herdr_core_mcp::hc::CoreId::try_from(id.to_owned()).expect("a valid core_id")
}
