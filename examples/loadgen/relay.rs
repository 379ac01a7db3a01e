//! The floor for any stdio adapter: `loadgen relay --socket PATH` is a child
//! process that does nothing but copy request lines from its stdin to one
//! handshaken hc connection and the reply lines back to its stdout, with
//! blocking I/O on one thread and no JSON work at all. Whatever an adapter
//! that lives in its own process costs beyond this relay is its own doing;
//! the relay's own cost over the direct call is the two extra pipe hops
//! (and the wake-ups they take) that no such adapter can avoid.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::process::Stdio;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::Res;

const HELLO: &str = r#"{"jsonrpc":"2.0","id":0,"method":"hc.hello","params":{"generation":1,"framing":"plain","client":{"name":"loadgen-relay","version":"0"}}}"#;

/// The relay itself (runs in the child).
pub fn serve(socket: &Path) -> Res<()> {
    let stream = UnixStream::connect(socket).map_err(|e| format!("relay: {e}"))?;
    let mut to_hc = stream.try_clone().map_err(|e| format!("relay: {e}"))?;
    let mut from_hc = BufReader::new(stream);
    let mut line = String::new();
    writeln!(to_hc, "{HELLO}").map_err(|e| format!("relay: {e}"))?;
    from_hc
        .read_line(&mut line)
        .map_err(|e| format!("relay: {e}"))?;
    let stdin = std::io::stdin();
    let mut stdin = stdin.lock();
    let mut stdout = std::io::stdout().lock();
    let mut request = String::new();
    loop {
        request.clear();
        if stdin.read_line(&mut request).map_err(|e| e.to_string())? == 0 {
            return Ok(());
        }
        to_hc
            .write_all(request.as_bytes())
            .map_err(|e| e.to_string())?;
        line.clear();
        if from_hc.read_line(&mut line).map_err(|e| e.to_string())? == 0 {
            return Err("relay: hc closed the connection".into());
        }
        stdout
            .write_all(line.as_bytes())
            .and_then(|()| stdout.flush())
            .map_err(|e| e.to_string())?;
    }
}

/// The relay as seen from the bench: a child process to send lines through.
pub struct Relay {
    /// Killed when the relay is dropped.
    child: Child,
    stdin: ChildStdin,
    stdout: tokio::io::BufReader<ChildStdout>,
    next_id: u64,
    pub line: String,
}

impl Relay {
    pub fn spawn(socket: &Path) -> Res<Relay> {
        let exe = std::env::current_exe().map_err(|e| format!("cannot locate loadgen: {e}"))?;
        let mut child = Command::new(exe)
            .arg("relay")
            .arg("--socket")
            .arg(socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the relay: {e}"))?;
        Ok(Relay {
            stdin: child.stdin.take().expect("piped"),
            stdout: tokio::io::BufReader::with_capacity(
                64 * 1024,
                child.stdout.take().expect("piped"),
            ),
            child,
            next_id: 1,
            line: String::new(),
        })
    }

    /// `terminal.read` of the current screen through the relay.
    pub async fn read_screen(&mut self, address: &str) -> Res<()> {
        let id = self.next_id;
        self.next_id += 1;
        let request = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"terminal.read\",\"params\":{{\"address\":\"{address}\",\"lines\":0}}}}\n"
        );
        self.stdin
            .write_all(request.as_bytes())
            .await
            .map_err(|e| format!("relay: {e}"))?;
        self.line.clear();
        if self
            .stdout
            .read_line(&mut self.line)
            .await
            .map_err(|e| format!("relay: {e}"))?
            == 0
        {
            return Err("the relay exited".into());
        }
        Ok(())
    }

    pub fn pid(&self) -> u32 {
        self.child.id().unwrap_or(0)
    }
}
