//! The physical limit: one lockstep connection straight to the simulator's
//! hc socket, handshaken once, sending hand-built request lines and reading
//! whole reply lines with no cap and no parsing on the timed path.

use std::path::Path;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};

use crate::Res;

pub struct DirectConn {
    reader: BufReader<OwnedReadHalf>,
    writer: OwnedWriteHalf,
    next_id: u64,
    request: Vec<u8>,
    /// The last reply line, without its `\n`.
    pub line: Vec<u8>,
}

impl DirectConn {
    /// Connects and performs `hc.hello` (contract section 2).
    pub async fn connect(socket: &Path) -> Res<DirectConn> {
        let stream = UnixStream::connect(socket)
            .await
            .map_err(|e| format!("cannot connect to {}: {e}", socket.display()))?;
        let (read, writer) = stream.into_split();
        let mut conn = DirectConn {
            reader: BufReader::with_capacity(64 * 1024, read),
            writer,
            next_id: 1,
            request: Vec::new(),
            line: Vec::new(),
        };
        conn.call(
            "hc.hello",
            r#"{"generation":1,"framing":"plain","client":{"name":"loadgen","version":"0"}}"#,
        )
        .await?;
        let reply = String::from_utf8_lossy(&conn.line);
        if !reply.contains(r#""version":"0.1.15""#) {
            return Err(format!("unexpected hc.hello reply: {reply}"));
        }
        Ok(conn)
    }

    /// One request line and its whole reply line (in `self.line`).
    pub async fn call(&mut self, method: &str, params_json: &str) -> Res<()> {
        let id = self.next_id;
        self.next_id += 1;
        self.request.clear();
        self.request.extend_from_slice(
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params_json}}}"#)
                .as_bytes(),
        );
        self.request.push(b'\n');
        self.writer
            .write_all(&self.request)
            .await
            .map_err(|e| format!("{method}: write: {e}"))?;
        self.line.clear();
        let n = self
            .reader
            .read_until(b'\n', &mut self.line)
            .await
            .map_err(|e| format!("{method}: read: {e}"))?;
        if n == 0 || self.line.last() != Some(&b'\n') {
            return Err(format!("{method}: hc closed the connection"));
        }
        self.line.pop();
        Ok(())
    }

    /// `terminal.read` of the current screen, as the adapter asks for it.
    pub async fn read_screen(&mut self, address: &str) -> Res<()> {
        self.call(
            "terminal.read",
            &format!(r#"{{"address":"{address}","lines":0}}"#),
        )
        .await
    }

    /// The last reply, checked to be a result (not an error) and decoded.
    pub fn result(&self) -> Res<serde_json::Value> {
        let mut reply: serde_json::Value =
            serde_json::from_slice(&self.line).map_err(|e| format!("reply is not JSON: {e}"))?;
        match reply.get_mut("result") {
            Some(result) => Ok(result.take()),
            None => Err(format!(
                "hc answered an error: {}",
                String::from_utf8_lossy(&self.line)
            )),
        }
    }
}
