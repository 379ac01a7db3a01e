//! N handshaken hc connections, each in lockstep behind its own lock, taken
//! in turn. No pins, no byte cap, no envelope checks, no timeout.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::sync::Mutex;

const HELLO: &str = r#"{"jsonrpc":"2.0","id":0,"method":"hc.hello","params":{"generation":1,"framing":"plain","client":{"name":"floor","version":"0"}}}"#;

pub struct Conns {
    conns: Vec<Mutex<Conn>>,
    next: AtomicUsize,
}

struct Conn {
    stream: BufReader<UnixStream>,
    next_id: u64,
    line: Vec<u8>,
}

#[derive(Deserialize)]
struct Reply {
    result: Screen,
}

#[derive(Deserialize)]
pub struct Screen {
    pub address: String,
    pub text: String,
}

impl Conns {
    pub async fn open(socket: &Path, count: usize) -> Result<Conns, String> {
        let mut conns = Vec::with_capacity(count);
        for _ in 0..count {
            let stream = UnixStream::connect(socket)
                .await
                .map_err(|e| format!("{}: {e}", socket.display()))?;
            let mut conn = Conn {
                stream: BufReader::new(stream),
                next_id: 1,
                line: Vec::new(),
            };
            conn.exchange(HELLO).await?;
            conns.push(Mutex::new(conn));
        }
        Ok(Conns {
            conns,
            next: AtomicUsize::new(0),
        })
    }

    /// `terminal.read` of the current screen.
    pub async fn read(&self, address: &str) -> Result<Screen, String> {
        let i = self.next.fetch_add(1, Ordering::Relaxed) % self.conns.len();
        let mut conn = self.conns[i].lock().await;
        let id = conn.next_id;
        conn.next_id += 1;
        let request = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"terminal.read","params":{{"address":{},"lines":0}}}}"#,
            serde_json::Value::from(address)
        );
        conn.exchange(&request).await?;
        serde_json::from_slice::<Reply>(&conn.line)
            .map(|reply| reply.result)
            .map_err(|e| format!("hc reply: {e}"))
    }
}

impl Conn {
    async fn exchange(&mut self, request: &str) -> Result<(), String> {
        let mut bytes = Vec::with_capacity(request.len() + 1);
        bytes.extend_from_slice(request.as_bytes());
        bytes.push(b'\n');
        self.stream
            .get_mut()
            .write_all(&bytes)
            .await
            .map_err(|e| format!("hc write: {e}"))?;
        self.line.clear();
        match self.stream.read_until(b'\n', &mut self.line).await {
            Ok(0) => Err("hc closed the connection".into()),
            Ok(_) => Ok(()),
            Err(e) => Err(format!("hc read: {e}")),
        }
    }
}
