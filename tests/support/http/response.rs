//! One raw HTTP/1.1 exchange: the request written on a fresh connection,
//! one response read back and parsed (status, headers, body, and whether
//! the server closed the connection).

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::EXCHANGE_DEADLINE;

/// A parsed response.
#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The server closed the connection after the response.
    pub closed: bool,
}

impl Reply {
    pub fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    pub fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    pub fn summary(&self) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let body: String = body.chars().take(70).collect();
        format!("{} {body:?}", self.status)
    }
}

/// A response's status line and headers.
struct Head {
    /// Bytes up to and including the blank line.
    len: usize,
    pub status: u16,
    pub headers: Vec<(String, String)>,
}

impl Head {
    /// Where the response ends: `Some(total length)` when known, `None`
    /// when it runs to EOF.
    fn end(&self, head_request: bool) -> Option<usize> {
        let status = self.status;
        if head_request || status / 100 == 1 || status == 204 || status == 304 {
            return Some(self.len);
        }
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .and_then(|(_, v)| v.trim().parse::<usize>().ok())
            .map(|n| self.len + n)
    }
}

/// The head of a response once it is complete in `raw`.
fn parse_head(raw: &[u8]) -> Result<Option<Head>, String> {
    let Some(end) = raw.windows(4).position(|w| w == b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = std::str::from_utf8(&raw[..end]).map_err(|e| format!("head is not UTF-8: {e}"))?;
    let mut lines = head.split("\r\n");
    let status_line = lines.next().unwrap_or_default();
    let mut parts = status_line.split(' ');
    let version = parts.next().unwrap_or_default();
    if !version.starts_with("HTTP/1.") {
        return Err(format!("bad status line {status_line:?}"));
    }
    let status = parts
        .next()
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("bad status line {status_line:?}"))?;
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
        .collect();
    Ok(Some(Head {
        len: end + 4,
        status,
        headers,
    }))
}

/// Writes `request` on a fresh connection (in the background, so a server
/// that answers early is not blocked by our write) and reads one response.
/// With `await_close`, also waits (briefly) to see whether the server closes.
pub async fn exchange(port: u16, request: &[u8], await_close: bool) -> Result<Reply, String> {
    let deadline = tokio::time::Instant::now() + EXCHANGE_DEADLINE;
    let stream = tokio::time::timeout_at(deadline, TcpStream::connect(("127.0.0.1", port)))
        .await
        .map_err(|_| "connect timed out".to_owned())?
        .map_err(|e| format!("connect: {e}"))?;
    let (mut reader, mut writer) = stream.into_split();
    let head_request = request.starts_with(b"HEAD ");
    // Written as it connects, as a real client does (a write queued behind
    // the test's other tasks would leave the connection idle meanwhile);
    // what the socket does not take at once is written in the background.
    let sent = writer.try_write(request).unwrap_or(0);
    let request = request[sent..].to_vec();
    let write = tokio::spawn(async move {
        // The server may answer and close before reading everything.
        let _ = writer.write_all(&request).await;
        let _ = writer.flush().await;
        // Keep the write half open until the read side is done.
        writer
    });
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut parsed = None;
    let mut eof = false;
    loop {
        if parsed.is_none() {
            parsed = parse_head(&raw)?;
        }
        if let Some(head) = &parsed
            && let Some(end) = head.end(head_request)
            && raw.len() >= end
        {
            break;
        }
        let read = tokio::time::timeout_at(deadline, reader.read(&mut buf)).await;
        match read {
            Err(_) => {
                return Err(format!(
                    "no complete response in {EXCHANGE_DEADLINE:?} (got {} bytes)",
                    raw.len()
                ));
            }
            Ok(Ok(0)) => {
                eof = true;
                break;
            }
            Ok(Ok(n)) => raw.extend_from_slice(&buf[..n]),
            Ok(Err(_)) if parsed.is_some() => {
                eof = true;
                break;
            }
            Ok(Err(e)) => return Err(format!("read: {e} after {} bytes", raw.len())),
        }
    }
    let head = match parsed {
        Some(p) => p,
        None => parse_head(&raw)?.ok_or_else(|| {
            format!(
                "connection closed without a response ({} bytes: {:?})",
                raw.len(),
                String::from_utf8_lossy(&raw)
            )
        })?,
    };
    let end = head.end(head_request).unwrap_or(raw.len());
    let body = raw[head.len..end.min(raw.len())].to_vec();
    let closed = if eof {
        true
    } else if await_close {
        let wait = tokio::time::timeout(Duration::from_secs(3), reader.read(&mut buf)).await;
        matches!(wait, Ok(Ok(0)) | Ok(Err(_)))
    } else {
        false
    };
    write.abort();
    Ok(Reply {
        status: head.status,
        headers: head.headers,
        body,
        closed,
    })
}
