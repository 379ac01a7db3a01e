//! The world the simulator's tests build on: the `hc-sim` binary cargo
//! built for them, a running simulator started through `hc_sim::testing`
//! (in this process, or as that binary; its own directory, control socket
//! and input log; stopped on drop), a raw line client, and waiting for a
//! condition with a deadline.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hc_sim::testing::{self, Options, Simulator, WorkDir};
use serde_json::{Value, json};

/// How long any single wait in a test may take before it fails.
pub const DEADLINE: Duration = Duration::from_secs(10);

/// The `hc-sim` binary: the one `HC_SIM_BIN` names, else this crate's own,
/// which cargo builds before these tests run.
pub fn binary() -> PathBuf {
    std::env::var_os(testing::BINARY_ENV).map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_hc-sim")),
        PathBuf::from,
    )
}

/// Runs a simulator (with a control socket and an input log) in this
/// process, in a fresh directory.
pub fn start(options: Options) -> Simulator {
    start_in(WorkDir::temp().expect("create a temp dir"), options)
}

/// Runs a simulator in this process in `dir`, as [`start`] does.
pub fn start_in(dir: WorkDir, options: Options) -> Simulator {
    Simulator::in_process_in(dir, with_binary(options)).unwrap_or_else(|error| panic!("{error}"))
}

/// Starts the `hc-sim` binary (with a control socket and an input log) in
/// a fresh directory and waits for its ready line: for what only a process
/// shows (its stdout, signals, a crash).
pub fn start_process(options: Options) -> Simulator {
    start_process_in(WorkDir::temp().expect("create a temp dir"), options)
}

/// Starts the `hc-sim` binary in `dir`, as [`start_process`] does.
pub fn start_process_in(dir: WorkDir, options: Options) -> Simulator {
    Simulator::start_in(dir, with_binary(options)).unwrap_or_else(|error| panic!("{error}"))
}

fn with_binary(options: Options) -> Options {
    Options {
        binary: Some(binary()),
        ..options
    }
}

/// A client on the hc socket that already said hello.
pub fn greeted_client(sim: &Simulator) -> Client {
    let mut client = Client::connect(&sim.socket);
    let reply = client.call("hc.hello", hello_params(1));
    assert!(reply.get("result").is_some(), "hello failed: {reply}");
    client
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
    poll(what, || probe().ok_or("never seen"))
}

/// Polls `probe` until it returns `Ok`, failing the test at [`DEADLINE`]
/// with the last `Err` (what was seen instead).
pub fn poll<T, E: std::fmt::Display>(what: &str, mut probe: impl FnMut() -> Result<T, E>) -> T {
    let deadline = Instant::now() + DEADLINE;
    loop {
        match probe() {
            Ok(value) => return value,
            Err(seen) if Instant::now() >= deadline => {
                panic!("timed out waiting for {what}; last seen: {seen}")
            }
            Err(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

/// The record of `address`, fetched over `client`.
pub fn record(client: &mut Client, address: &str) -> Value {
    client.result("terminal.get", json!({ "address": address }))
}

/// The `terminal.read` result (current screen only) of `address`.
pub fn screen(client: &mut Client, address: &str) -> Value {
    client.result("terminal.read", json!({ "address": address, "lines": 0 }))
}

/// Waits until `address` reports `status`; returns its record.
pub fn wait_for_status(client: &mut Client, address: &str, status: &str) -> Value {
    eventually(&format!("{address} to be {status}"), || {
        let record = record(client, address);
        (record["status"] == status).then_some(record)
    })
}

/// The `text` of a `terminal.read` result.
pub fn text(read: &Value) -> &str {
    read["text"]
        .as_str()
        .expect("terminal.read text is a string")
}

/// Waits until the screen of `address` satisfies `done`; returns the read.
pub fn wait_for_screen(
    client: &mut Client,
    address: &str,
    what: &str,
    done: impl Fn(&Value) -> bool,
) -> Value {
    poll(what, || {
        let read = screen(client, address);
        if done(&read) { Ok(read) } else { Err(read) }
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
