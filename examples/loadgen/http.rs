//! A minimal HTTP/1.1 keep-alive client for the adapter's `/mcp`: one TCP
//! connection, one request at a time, `Content-Length` or chunked bodies.
//! Hand-rolled so that the client costs next to nothing on a machine whose
//! cores the adapter and the simulator share; every request carries the
//! headers a stateless Streamable HTTP POST needs.

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::Res;
use crate::stdio::PROTOCOL_VERSION;

pub struct HttpClient {
    port: u16,
    head: String,
    conn: Option<BufReader<TcpStream>>,
    request: Vec<u8>,
    header_line: String,
    next_id: u64,
    /// Body of the last response.
    pub body: Vec<u8>,
    /// TCP connections opened so far.
    pub connects: u64,
}

impl HttpClient {
    pub fn new(port: u16, token: &str) -> HttpClient {
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {token}\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: {PROTOCOL_VERSION}\r\n"
        );
        HttpClient {
            port,
            head,
            conn: None,
            request: Vec::new(),
            header_line: String::new(),
            next_id: 1,
            body: Vec::new(),
            connects: 0,
        }
    }

    /// One `tools/call`; returns the HTTP status and the request id (the
    /// body is in `self.body`).
    pub async fn call_tool(&mut self, name: &str, arguments_json: &str) -> Res<(u16, u64)> {
        let id = self.next_id;
        self.next_id += 1;
        let json = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{arguments_json}}}}}"#
        );
        Ok((self.post(&json).await?, id))
    }

    /// POSTs `json` to `/mcp` and reads the whole response.
    pub async fn post(&mut self, json: &str) -> Res<u16> {
        if self.conn.is_none() {
            let stream = TcpStream::connect(("127.0.0.1", self.port))
                .await
                .map_err(|e| format!("connect: {e}"))?;
            stream.set_nodelay(true).map_err(|e| e.to_string())?;
            self.conn = Some(BufReader::with_capacity(64 * 1024, stream));
            self.connects += 1;
        }
        self.request.clear();
        self.request.extend_from_slice(self.head.as_bytes());
        self.request
            .extend_from_slice(format!("Content-Length: {}\r\n\r\n", json.len()).as_bytes());
        self.request.extend_from_slice(json.as_bytes());
        let result = self.exchange().await;
        if result.is_err() {
            self.conn = None;
        }
        result
    }

    async fn exchange(&mut self) -> Res<u16> {
        let conn = self.conn.as_mut().expect("connected");
        conn.get_mut()
            .write_all(&self.request)
            .await
            .map_err(|e| format!("write: {e}"))?;
        let line = &mut self.header_line;
        let mut status = None;
        let mut length = None;
        let mut chunked = false;
        let mut close = false;
        loop {
            line.clear();
            let n = conn
                .read_line(line)
                .await
                .map_err(|e| format!("read: {e}"))?;
            if n == 0 {
                return Err("the server closed the connection".into());
            }
            let text = line.trim_end();
            if text.is_empty() {
                break;
            }
            if status.is_none() {
                status = text
                    .strip_prefix("HTTP/1.1 ")
                    .and_then(|rest| rest.get(..3))
                    .and_then(|code| code.parse::<u16>().ok());
                if status.is_none() {
                    return Err(format!("bad status line {text:?}"));
                }
                continue;
            }
            let Some((name, value)) = text.split_once(':') else {
                return Err(format!("bad header {text:?}"));
            };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = value.parse::<usize>().ok();
            } else if name.eq_ignore_ascii_case("transfer-encoding") {
                chunked = value.eq_ignore_ascii_case("chunked");
            } else if name.eq_ignore_ascii_case("connection") {
                close = value.eq_ignore_ascii_case("close");
            }
        }
        self.body.clear();
        if chunked {
            loop {
                line.clear();
                conn.read_line(line)
                    .await
                    .map_err(|e| format!("read: {e}"))?;
                let size = usize::from_str_radix(line.trim().split(';').next().unwrap_or(""), 16)
                    .map_err(|_| format!("bad chunk size {line:?}"))?;
                let start = self.body.len();
                self.body.resize(start + size + 2, 0);
                conn.read_exact(&mut self.body[start..])
                    .await
                    .map_err(|e| format!("read: {e}"))?;
                self.body.truncate(start + size);
                if size == 0 {
                    break;
                }
            }
        } else {
            let length = length.unwrap_or(0);
            self.body.resize(length, 0);
            conn.read_exact(&mut self.body)
                .await
                .map_err(|e| format!("read: {e}"))?;
        }
        if close {
            self.conn = None;
        }
        Ok(status.expect("a status line was read"))
    }

    /// The body as text.
    pub fn text(&self) -> &str {
        std::str::from_utf8(&self.body).unwrap_or("<not UTF-8>")
    }
}
