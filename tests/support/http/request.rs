//! One raw HTTP/1.1 request, header by header in wire order, built from a
//! valid authenticated `initialize` or a bare request by small changes, and
//! written out as exact bytes (framing tricks included).

use std::fmt::Write as _;

use super::INITIALIZE;
use crate::support::mcp::TEST_TOKEN;

/// How a request's body goes on the wire.
#[derive(Clone)]
pub enum Framing {
    /// No body and no framing header.
    None,
    /// `Content-Length` and the bytes.
    Sized(Vec<u8>),
    /// `Transfer-Encoding: chunked`, chunks of at most this many bytes.
    Chunked(Vec<u8>, usize),
    /// `Content-Length: n` and no body at all.
    Declared(u64),
}

/// One request, header by header, in wire order.
#[derive(Clone)]
pub struct Req {
    pub method: String,
    pub target: String,
    pub headers: Vec<(String, String)>,
    pub framing: Framing,
}

impl Req {
    /// A valid, authenticated `initialize` POST to `/mcp`.
    pub fn mcp(port: u16) -> Req {
        Req {
            method: "POST".into(),
            target: "/mcp".into(),
            headers: vec![
                ("Host".into(), format!("127.0.0.1:{port}")),
                ("Authorization".into(), format!("Bearer {TEST_TOKEN}")),
                ("Content-Type".into(), "application/json".into()),
                (
                    "Accept".into(),
                    "application/json, text/event-stream".into(),
                ),
                ("Connection".into(), "close".into()),
            ],
            framing: Framing::Sized(INITIALIZE.as_bytes().to_vec()),
        }
    }

    /// A bare request without credentials or body.
    pub fn bare(port: u16, method: &str, target: &str) -> Req {
        Req {
            method: method.into(),
            target: target.into(),
            headers: vec![
                ("Host".into(), format!("127.0.0.1:{port}")),
                ("Connection".into(), "close".into()),
            ],
            framing: Framing::None,
        }
    }

    pub fn method(mut self, method: &str) -> Req {
        self.method = method.into();
        self
    }

    pub fn target(mut self, target: &str) -> Req {
        self.target = target.into();
        self
    }

    /// Replaces every header called `name` with one `name: value`.
    pub fn set(mut self, name: &str, value: &str) -> Req {
        match self
            .headers
            .iter()
            .position(|(n, _)| n.eq_ignore_ascii_case(name))
        {
            Some(i) => {
                self.headers[i].1 = value.into();
                let mut seen = 0;
                self.headers.retain(|(n, _)| {
                    if n.eq_ignore_ascii_case(name) {
                        seen += 1;
                        seen == 1
                    } else {
                        true
                    }
                });
            }
            None => self.headers.push((name.into(), value.into())),
        }
        self
    }

    /// Adds one more `name: value`, keeping any present.
    pub fn add(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub fn remove(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Req {
        self.framing = Framing::Sized(body.into());
        self
    }

    pub fn chunked(mut self, body: impl Into<Vec<u8>>, chunk: usize) -> Req {
        self.framing = Framing::Chunked(body.into(), chunk);
        self
    }

    pub fn declared(mut self, length: u64) -> Req {
        self.framing = Framing::Declared(length);
        self
    }

    pub fn no_body(mut self) -> Req {
        self.framing = Framing::None;
        self
    }

    pub fn bytes(&self) -> Vec<u8> {
        let mut head = format!("{} {} HTTP/1.1\r\n", self.method, self.target);
        for (name, value) in &self.headers {
            let _ = write!(head, "{name}: {value}\r\n");
        }
        match &self.framing {
            Framing::None => {}
            Framing::Sized(body) => {
                let _ = write!(head, "Content-Length: {}\r\n", body.len());
            }
            Framing::Chunked(..) => head.push_str("Transfer-Encoding: chunked\r\n"),
            Framing::Declared(n) => {
                let _ = write!(head, "Content-Length: {n}\r\n");
            }
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        match &self.framing {
            Framing::None | Framing::Declared(_) => {}
            Framing::Sized(body) => bytes.extend_from_slice(body),
            Framing::Chunked(body, size) => {
                for chunk in body.chunks(*size) {
                    bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
                    bytes.extend_from_slice(chunk);
                    bytes.extend_from_slice(b"\r\n");
                }
                bytes.extend_from_slice(b"0\r\n\r\n");
            }
        }
        bytes
    }
}
