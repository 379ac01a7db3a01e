//! The adapter over stdio, driven with raw JSON-RPC lines over the child's
//! pipes: no MCP client library on the timed path, so what is measured is
//! the adapter (plus two pipe hops), not a client.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::Res;
use crate::world::Bins;

pub const PROTOCOL_VERSION: &str = "2025-06-18";

pub struct StdioAdapter {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
    request: Vec<u8>,
    /// The last line the adapter wrote, without its `\n`.
    pub line: String,
}

impl StdioAdapter {
    /// Spawns `serve` (not yet initialized); its stderr goes to `log`.
    pub fn spawn(bins: &Bins, config: &Path, log: &Path) -> Res<StdioAdapter> {
        let mut command = Command::new(&bins.adapter);
        command.arg("serve").arg("--config").arg(config);
        StdioAdapter::spawn_command(command, log)
    }

    /// Spawns the floor server (`examples/floor`) over stdio in front of
    /// hc's `socket`, with `conns` connections.
    pub fn spawn_floor(bins: &Bins, socket: &Path, conns: usize, log: &Path) -> Res<StdioAdapter> {
        let mut command = Command::new(bins.floor()?);
        command.args(crate::world::floor_args(socket, conns, "stdio"));
        StdioAdapter::spawn_command(command, log)
    }

    /// Spawns `command`, a stdio server; its stderr goes to `log`.
    pub fn spawn_command(mut command: Command, log: &Path) -> Res<StdioAdapter> {
        let stderr = std::fs::File::create(log).map_err(|e| format!("adapter log: {e}"))?;
        let program = command.as_std().get_program().to_owned();
        let mut child = command
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(stderr)
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", program.display()))?;
        Ok(StdioAdapter {
            stdin: child.stdin.take().expect("piped"),
            stdout: BufReader::with_capacity(64 * 1024, child.stdout.take().expect("piped")),
            child,
            next_id: 1,
            request: Vec::new(),
            line: String::new(),
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }

    /// Sends `initialize` and waits for its answer; then `initialized`.
    pub async fn initialize(&mut self) -> Res<()> {
        self.send_initialize().await?;
        self.read_line().await?;
        check_response(&self.line, 0)?;
        self.write_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await
    }

    /// Writes the `initialize` request only (for start-up timing).
    pub async fn send_initialize(&mut self) -> Res<()> {
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"{PROTOCOL_VERSION}","capabilities":{{}},"clientInfo":{{"name":"loadgen","version":"0"}}}}}}"#
        );
        self.write_line(&line).await
    }

    /// One `tools/call`; returns its id (the answer is in `self.line`).
    pub async fn call_tool(&mut self, name: &str, arguments_json: &str) -> Res<u64> {
        let id = self.next_id;
        self.next_id += 1;
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments_json}}}}}"#
        );
        self.write_line(&line).await?;
        self.read_line().await?;
        Ok(id)
    }

    /// Closes stdin (the adapter's signal to leave) and waits for the exit.
    pub async fn close(self) -> Res<()> {
        self.close_within(Duration::from_secs(5)).await
    }

    /// [`StdioAdapter::close`], waiting up to `limit` for the exit.
    pub async fn close_within(mut self, limit: Duration) -> Res<()> {
        drop(self.stdin);
        match tokio::time::timeout(limit, self.child.wait()).await {
            Ok(Ok(_)) => Ok(()),
            _ => {
                let _ = self.child.kill().await;
                Err(format!(
                    "the stdio server did not exit within {} s of stdin closing",
                    limit.as_secs()
                ))
            }
        }
    }

    async fn write_line(&mut self, line: &str) -> Res<()> {
        self.request.clear();
        self.request.extend_from_slice(line.as_bytes());
        self.request.push(b'\n');
        self.stdin
            .write_all(&self.request)
            .await
            .map_err(|e| format!("writing to the adapter: {e}"))
    }

    async fn read_line(&mut self) -> Res<()> {
        self.line.clear();
        let n = self
            .stdout
            .read_line(&mut self.line)
            .await
            .map_err(|e| format!("reading from the adapter: {e}"))?;
        if n == 0 {
            return Err("the adapter closed stdout".into());
        }
        if self.line.ends_with('\n') {
            self.line.pop();
        }
        Ok(())
    }
}

/// Checks a JSON-RPC response line: version, id, and a `result`.
pub fn check_response(line: &str, id: u64) -> Res<Value> {
    let mut reply: Value =
        serde_json::from_str(line).map_err(|e| format!("response is not JSON ({e}): {line}"))?;
    if reply["jsonrpc"] != "2.0" || reply["id"] != id {
        return Err(format!("response does not answer request {id}: {line}"));
    }
    match reply.get_mut("result") {
        Some(result) => Ok(result.take()),
        None => Err(format!("JSON-RPC error: {line}")),
    }
}

/// A tool result that did not fail (`isError` absent or false).
pub fn tool_ok(line: &str, id: u64) -> Res<Value> {
    let result = check_response(line, id)?;
    if result["isError"] == true {
        return Err(format!("tool failed: {}", tool_text(&result)));
    }
    Ok(result)
}

/// A tool result that failed with a text containing `needle`.
pub fn tool_failed_with(line: &str, id: u64, needle: &str) -> Res<()> {
    let result = check_response(line, id)?;
    let text = tool_text(&result);
    if result["isError"] != true || !text.contains(needle) {
        return Err(format!(
            "expected a tool failure with {needle:?}, got: {text}"
        ));
    }
    Ok(())
}

pub fn tool_text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

/// Time from `spawn` to the `initialize` answer, then a clean exit.
pub async fn time_startup(bins: &Bins, config: &Path, log: &Path) -> Res<Duration> {
    let started = Instant::now();
    let mut adapter = StdioAdapter::spawn(bins, config, log)?;
    adapter.send_initialize().await?;
    adapter.read_line().await?;
    let elapsed = started.elapsed();
    check_response(&adapter.line, 0)?;
    adapter.close().await?;
    Ok(elapsed)
}
