//! The world the simulator's tests build on: the built `hc-sim` binary, a
//! running simulator on sockets in a fresh directory (killed and cleaned up on
//! drop), a raw line client, and waiting for a condition with a deadline.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any single wait in a test may take before it fails.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The `hc-sim` example binary, built (or brought up to date) once per test
/// run: `cargo test -p hc-sim` does not build the root package's examples.
/// `HC_SIM_BIN` overrides it.
pub fn binary() -> &'static Path {
    static BINARY: OnceLock<PathBuf> = OnceLock::new();
    BINARY.get_or_init(|| {
        if let Some(path) = std::env::var_os("HC_SIM_BIN") {
            return PathBuf::from(path);
        }
        // target/<profile>/deps/<test exe> → target/<profile>/examples/hc-sim
        let exe = std::env::current_exe().expect("test executable path");
        let profile_dir = exe
            .parent()
            .and_then(Path::parent)
            .expect("target/<profile> dir");
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
            .parent()
            .expect("workspace root");
        let mut build = Command::new(env!("CARGO"));
        build
            .args(["build", "--example", "hc-sim"])
            .current_dir(workspace);
        if profile_dir
            .file_name()
            .is_some_and(|name| name == "release")
        {
            build.arg("--release");
        }
        let status = build.status().expect("run cargo build --example hc-sim");
        assert!(status.success(), "cargo build --example hc-sim failed");
        profile_dir.join("examples").join("hc-sim")
    })
}

/// A fresh directory under the system temp dir, removed on drop. Kept short:
/// a Unix socket path must fit in 108 bytes.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let name = format!(
            "hcsim-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let path = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&path).expect("create temp dir");
        TempDir(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A running simulator with a control socket and an input log.
pub struct Simulator {
    pub child: Child,
    pub ready_line: String,
    pub socket: PathBuf,
    pub control: PathBuf,
    pub input_log: PathBuf,
    /// Declared last: dropped after the child is killed.
    _dir: TempDir,
}

impl Simulator {
    /// Starts `hc-sim` with `args` on top of socket, control and input log,
    /// and waits for its ready line.
    pub fn start(args: &[&str]) -> Simulator {
        let dir = TempDir::new();
        let socket = dir.path().join("hc.sock");
        let control = dir.path().join("ctl.sock");
        let input_log = dir.path().join("input.log");
        let mut child = Command::new(binary())
            .arg("--socket")
            .arg(&socket)
            .arg("--control")
            .arg(&control)
            .arg("--input-log")
            .arg(&input_log)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .spawn()
            .expect("spawn hc-sim");
        let stdout = child.stdout.take().expect("piped stdout");
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut line = String::new();
            let _ = BufReader::new(stdout).read_line(&mut line);
            let _ = sender.send(line);
        });
        let ready_line = receiver
            .recv_timeout(DEADLINE)
            .expect("hc-sim printed no ready line in time");
        Simulator {
            child,
            ready_line,
            socket,
            control,
            input_log,
            _dir: dir,
        }
    }

    /// A client on the hc socket that already said hello.
    pub fn greeted_client(&self) -> Client {
        let mut client = Client::connect(&self.socket);
        let reply = client.call("hc.hello", hello_params(1));
        assert!(reply.get("result").is_some(), "hello failed: {reply}");
        client
    }

    /// A client on the control socket.
    pub fn control(&self) -> Client {
        Client::connect(&self.control)
    }

    /// The input log's lines, parsed.
    pub fn input_log(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.input_log)
            .unwrap_or_default()
            .lines()
            .map(|line| serde_json::from_str(line).expect("input log line is JSON"))
            .collect()
    }
}

impl Drop for Simulator {
    /// SIGTERM first, so the simulator reaps its own programs; SIGKILL if it
    /// has not exited by the deadline.
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            // SAFETY: signals our own, not yet reaped, child process.
            unsafe { libc::kill(self.child.id() as i32, libc::SIGTERM) };
            let deadline = Instant::now() + DEADLINE;
            while let Ok(None) = self.child.try_wait() {
                if Instant::now() >= deadline {
                    let _ = self.child.kill();
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        let _ = self.child.wait();
    }
}

pub fn hello_params(generation: u64) -> Value {
    json!({
        "generation": generation,
        "framing": "plain",
        "client": { "name": "hc-sim-tests", "version": "0" },
    })
}

/// A raw line JSON-RPC client, one request at a time.
pub struct Client {
    reader: BufReader<UnixStream>,
    writer: UnixStream,
    next_id: u64,
}

impl Client {
    pub fn connect(path: &Path) -> Client {
        let stream = UnixStream::connect(path).expect("connect to simulator");
        stream
            .set_read_timeout(Some(DEADLINE))
            .expect("set read timeout");
        let writer = stream.try_clone().expect("clone stream");
        Client {
            reader: BufReader::new(stream),
            writer,
            next_id: 1,
        }
    }

    /// Sends one request and returns the whole response object.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        self.send_line(&request.to_string());
        let response = self
            .read_line()
            .unwrap_or_else(|| panic!("no reply to {method}"));
        let response: Value = serde_json::from_str(&response).expect("reply is JSON");
        assert_eq!(response["id"], id, "reply id");
        response
    }

    /// The `result` of a call that must succeed.
    pub fn result(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} failed: {response}"),
        }
    }

    /// The `error` of a call that must fail.
    pub fn error(&mut self, method: &str, params: Value) -> Value {
        let response = self.call(method, params);
        match response.get("error") {
            Some(error) => error.clone(),
            None => panic!("{method} succeeded: {response}"),
        }
    }

    pub fn send_line(&mut self, line: &str) {
        self.writer
            .write_all(format!("{line}\n").as_bytes())
            .expect("write request");
    }

    /// The next line, or `None` when the simulator closed the connection.
    pub fn read_line(&mut self) -> Option<String> {
        let mut line = String::new();
        match self.reader.read_line(&mut line) {
            Ok(0) => None,
            Ok(_) => Some(line),
            Err(error) => panic!("reading a reply failed: {error}"),
        }
    }
}

/// Polls `probe` until it returns `Some`, failing the test at [`DEADLINE`].
pub fn eventually<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + DEADLINE;
    loop {
        if let Some(value) = probe() {
            return value;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The record of `address`, fetched over `client`.
pub fn record(client: &mut Client, address: &str) -> Value {
    client.result("terminal.get", json!({ "address": address }))
}

/// Waits until `address` reports `status`; returns its record.
pub fn wait_for_status(client: &mut Client, address: &str, status: &str) -> Value {
    eventually(&format!("{address} to be {status}"), || {
        let record = record(client, address);
        (record["status"] == status).then_some(record)
    })
}

/// `terminal.send` params with everything spelled out.
pub fn send_params(address: &str, text: &str, guard: Option<&str>) -> Value {
    let mut params = json!({ "address": address, "text": text, "submit": true, "force": false });
    if let Some(guard) = guard {
        params["if"] = json!(guard);
    }
    params
}
