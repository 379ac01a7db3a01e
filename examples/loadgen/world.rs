//! The world a measurement runs in: the bundled simulator as a real process
//! (started by `hc_sim::testing`, with its control socket), the adapter as a
//! real process over HTTP, the private config files they read, and the
//! bearer token.

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use hc_sim::testing::{self, Options, Simulator, WorkDir};
use serde_json::{Value, json};

use crate::Res;

/// The release binaries under measurement.
pub struct Bins {
    pub adapter: PathBuf,
    pub sim: PathBuf,
    /// `examples/floor`, needed only by the floor phase.
    floor: PathBuf,
}

impl Bins {
    /// `DIR/herdr-core-mcp` and `DIR/examples/hc-sim`; `DIR` defaults to the
    /// profile directory this example was built into.
    pub fn locate(dir: Option<PathBuf>) -> Res<Bins> {
        let dir = match dir {
            Some(dir) => dir,
            None => std::env::current_exe()
                .map_err(|e| format!("cannot locate loadgen: {e}"))?
                .parent()
                .and_then(Path::parent)
                .map(Path::to_path_buf)
                .ok_or("loadgen is not under target/<profile>/examples")?,
        };
        let bins = Bins {
            adapter: dir.join("herdr-core-mcp"),
            sim: dir.join("examples").join("hc-sim"),
            floor: dir.join("examples").join("floor"),
        };
        for bin in [&bins.adapter, &bins.sim] {
            if !bin.is_file() {
                return Err(format!(
                    "{} is missing: cargo build --release --bin herdr-core-mcp --example hc-sim",
                    bin.display()
                ));
            }
        }
        Ok(bins)
    }

    /// The floor server, when it was built.
    pub fn floor(&self) -> Res<&Path> {
        if self.floor.is_file() {
            Ok(&self.floor)
        } else {
            Err(format!(
                "{} is missing: cargo build --release --example floor",
                self.floor.display()
            ))
        }
    }
}

/// A running simulator with a control socket; terminated on drop (SIGTERM,
/// so it kills its programs first).
pub struct Sim {
    pub socket: PathBuf,
    pub core_id: String,
    simulator: Simulator,
}

impl Sim {
    /// Starts `hc-sim` with `flags` in `DIR/NAME/` (its stderr in
    /// `DIR/NAME.err`) and waits for its ready line. No input log: a
    /// measurement should not pay for a file write per send.
    pub fn start(bins: &Bins, dir: &Path, name: &str, flags: &[&str]) -> Res<Sim> {
        let home = dir.join(name);
        std::fs::create_dir(&home).map_err(|e| format!("cannot create {}: {e}", home.display()))?;
        let options = Options {
            binary: Some(bins.sim.clone()),
            input_log: false,
            stderr: Some(dir.join(format!("{name}.err"))),
            ..sim_options(flags)?
        };
        let simulator = Simulator::start_in(WorkDir::existing(home), options)
            .map_err(|e| format!("starting the simulator {flags:?}: {e}"))?;
        Ok(Sim {
            socket: simulator.socket.clone(),
            core_id: simulator.core_id.clone(),
            simulator,
        })
    }

    pub fn pid(&self) -> u32 {
        self.simulator.pid()
    }

    /// The simulator's control socket.
    pub fn control_path(&self) -> PathBuf {
        self.simulator.control.clone()
    }

    /// One call on the control socket (no handshake, no faults), made on a
    /// blocking thread so the runtime's workers keep running.
    pub async fn control(&self, method: &str, params: Value) -> Res<Value> {
        let control = self.simulator.control.clone();
        let name = method.to_owned();
        tokio::task::spawn_blocking(move || testing::control_call(&control, &name, params))
            .await
            .map_err(|e| format!("control {method}: {e}"))?
            .map_err(|e| e.to_string())
    }

    pub async fn set_faults(&self, faults: &[&str]) -> Res<()> {
        self.control("set_faults", json!({ "faults": faults }))
            .await
            .map(drop)
    }
}

/// The simulator's options from its own flags, which is how the
/// measurements name what they run against (`--agents 1 --shells 1`).
fn sim_options(flags: &[&str]) -> Res<Options> {
    let mut options = Options::default();
    for pair in flags.chunks(2) {
        let [flag, value] = *pair else {
            return Err(format!("hc-sim flag {pair:?} has no value"));
        };
        let count = || {
            value
                .parse::<usize>()
                .map_err(|e| format!("hc-sim {flag} {value}: {e}"))
        };
        let ms = || {
            value
                .parse::<u64>()
                .map_err(|e| format!("hc-sim {flag} {value}: {e}"))
        };
        match flag {
            "--agents" => options.agents = count()?,
            "--shells" => options.shells = count()?,
            "--readers" => options.readers = count()?,
            "--idle-records" => options.idle_records = count()?,
            "--agent-delay-ms" => options.agent_delay_ms = Some(ms()?),
            "--slow-reply-ms" => options.slow_reply_ms = Some(ms()?),
            "--fault" => options.faults.push(value.to_owned()),
            "--machine" => {
                let (name, socket) = value
                    .split_once('=')
                    .ok_or_else(|| format!("hc-sim --machine {value}: not NAME=SOCKET"))?;
                options = options.machine(name, Path::new(socket));
            }
            _ => return Err(format!("hc-sim flag {flag} is not one loadgen passes on")),
        }
    }
    Ok(options)
}

/// SIGTERM, then SIGKILL if the process is still there after 5 s.
pub fn terminate(child: &mut Child) {
    terminate_within(child, Duration::from_secs(5));
}

/// SIGTERM, then up to `limit` for the exit, then SIGKILL; true when it
/// exited on SIGTERM (or had already exited: nothing is signalled then,
/// as its pid may be another process's by now).
pub fn terminate_within(child: &mut Child, limit: Duration) -> bool {
    if let Ok(Some(_)) = child.try_wait() {
        return true;
    }
    let _ = rustix::process::kill_process(
        rustix::process::Pid::from_child(child),
        rustix::process::Signal::TERM,
    );
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// Writes `config` as a private (0600) JSON file, as the adapter demands.
pub fn write_config(dir: &Path, name: &str, config: &Value) -> Res<PathBuf> {
    let path = dir.join(name);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .open(&path)
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    file.set_permissions(std::fs::Permissions::from_mode(0o600))
        .and_then(|()| file.write_all(config.to_string().as_bytes()))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(path)
}

/// A bearer token that passes the adapter's checks: 24 random bytes in
/// base64 (32 characters), never printed.
pub fn random_token() -> Res<String> {
    use base64::Engine;
    loop {
        let mut raw = [0u8; 24];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut raw))
            .map_err(|e| format!("cannot read /dev/urandom: {e}"))?;
        let token = base64::engine::general_purpose::STANDARD.encode(raw);
        let mut distinct: Vec<char> = token.chars().collect();
        distinct.sort_unstable();
        distinct.dedup();
        if distinct.len() >= 16 {
            return Ok(token);
        }
    }
}

/// A loopback port bound and listening as `serve` binds it (accept queue
/// included), to hand to the adapter.
pub fn bind_port() -> Res<(std::net::TcpListener, u16)> {
    let listener = herdr_core_mcp::listen(([127, 0, 0, 1], 0).into())
        .and_then(|l| l.into_std())
        .map_err(|e| format!("cannot bind a loopback port: {e}"))?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();
    Ok((listener, port))
}

/// The floor server's arguments after its binary: hc's `socket`, `conns`
/// connections, `transport` ("stdio" or "http").
pub fn floor_args(socket: &Path, conns: usize, transport: &str) -> Vec<std::ffi::OsString> {
    let conns = conns.to_string();
    let args = [
        "--socket".as_ref(),
        socket.as_os_str(),
        "--conns".as_ref(),
        conns.as_ref(),
        transport.as_ref(),
    ];
    args.into_iter().map(Into::into).collect()
}

/// The adapter serving HTTP; SIGTERMed on drop.
pub struct HttpAdapter {
    child: Child,
}

impl HttpAdapter {
    /// Starts `serve` on an http config with `listener` passed as systemd
    /// would (descriptor 3, `LISTEN_FDS`, `LISTEN_PID`): connections queue
    /// on it from the start, so there is nothing to wait for.
    pub fn start(
        bins: &Bins,
        config: &Path,
        listener: std::net::TcpListener,
        token: &str,
        log: &Path,
    ) -> Res<Self> {
        let mut command = testing::command_with_listener(&bins.adapter, &listener);
        command
            .arg("serve")
            .arg("--config")
            .arg(config)
            .env("HERDR_MCP_TOKEN", token);
        HttpAdapter::spawn_command(command, listener, log)
    }

    /// Starts the floor server (`examples/floor`) over HTTP in front of hc's
    /// `socket` with `conns` connections, `listener` passed as above.
    pub fn start_floor(
        bins: &Bins,
        socket: &Path,
        conns: usize,
        listener: std::net::TcpListener,
        log: &Path,
    ) -> Res<Self> {
        let mut command = testing::command_with_listener(bins.floor()?, &listener);
        command.args(floor_args(socket, conns, "http"));
        HttpAdapter::spawn_command(command, listener, log)
    }

    /// Starts `command`, a server on `listener` (see
    /// [`hc_sim::testing::command_with_listener`]), its stderr to `log`.
    pub fn spawn_command(
        mut command: std::process::Command,
        listener: std::net::TcpListener,
        log: &Path,
    ) -> Res<Self> {
        let stderr = std::fs::File::create(log).map_err(|e| format!("adapter log: {e}"))?;
        command
            .env("RUST_LOG", "warn")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr);
        let child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", command.get_program().display()))?;
        drop(listener);
        Ok(HttpAdapter { child })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGTERM, then waits up to `limit` for the exit (a server under
    /// valgrind writes its counts as it exits).
    pub fn stop_within(mut self, limit: Duration) -> Res<()> {
        if terminate_within(&mut self.child, limit) {
            return Ok(());
        }
        Err(format!(
            "the server did not exit within {} s of SIGTERM",
            limit.as_secs()
        ))
    }

    /// Still running?
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for HttpAdapter {
    fn drop(&mut self) {
        terminate(&mut self.child);
    }
}

/// The http config of an adapter on `port` in front of `sim`.
pub fn http_config(sim: &Sim, port: u16, extra: Value) -> Value {
    let mut config = json!({
        "socketPath": sim.socket,
        "transport": "http",
        "http": {"port": port},
    });
    merge(&mut config, extra);
    config
}

/// The stdio config of an adapter in front of `sim`.
pub fn stdio_config(sim: &Sim, extra: Value) -> Value {
    let mut config = json!({ "socketPath": sim.socket });
    merge(&mut config, extra);
    config
}

fn merge(config: &mut Value, extra: Value) {
    if let (Value::Object(config), Value::Object(extra)) = (config, extra) {
        config.extend(extra);
    }
}
