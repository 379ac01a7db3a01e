//! The HTTP transport against the real binary (`serve` with `"transport":
//! "http"`): a hostile-request battery written as raw HTTP/1.1 bytes, a flood
//! of unauthenticated requests, slow clients, the tools end to end through
//! rmcp's Streamable HTTP client, and fail-closed startup on weak tokens.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use herdr_core_mcp::hc::HcClient;
use herdr_core_mcp::hc::wire::TerminalStatus;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::core_client::wait_status;
use crate::support::in_process;
use crate::support::mcp::{self, Client, HttpAdapter, TEST_TOKEN, call, is_error, structured};
use crate::support::{Sim, SimOptions, run_adapter, write_config};

/// The origin the battery's adapter accepts (so a duplicated allowed
/// `Origin` can be told apart from a foreign one).
const OK_ORIGIN: &str = "https://ok.example";
/// The body cap of spec section 5.
const MAX_BODY: usize = 65_536;
/// A valid `initialize` request (stateless Streamable HTTP, 2025-06-18).
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;
/// How long one raw exchange may take before it counts as hung.
const EXCHANGE_DEADLINE: Duration = Duration::from_secs(10);

/// The config of an HTTP adapter on `port` for `sim`, with `extra` merged in.
fn http_config(sim: &Sim, extra: &Value, port: u16) -> PathBuf {
    let mut config = json!({
        "transport": "http",
        "http": {"port": port},
        "coreId": sim.core_id,
    });
    crate::support::merge(&mut config, extra.clone());
    if let Some(http) = config["http"].as_object_mut() {
        http.insert("port".into(), json!(port));
    }
    sim.config(config)
}

/// Spawns the adapter binary over HTTP for `sim` (for the tests that read
/// its log or its memory).
async fn spawn_http(sim: &Sim, extra: Value) -> HttpAdapter {
    let stderr_log = sim.dir.path().join("adapter-http.stderr");
    mcp::http(|port| http_config(sim, &extra, port), &stderr_log).await
}

/// Serves the adapter over HTTP in-process for `sim`.
async fn serve_http(sim: &Sim, extra: Value) -> in_process::HttpAdapter {
    in_process::http(|port| http_config(sim, &extra, port)).await
}

// ---------------------------------------------------------------------------
// Raw HTTP/1.1: building exact request bytes, reading one response.

/// How a request's body goes on the wire.
#[derive(Clone)]
enum Framing {
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
struct Req {
    method: String,
    target: String,
    headers: Vec<(String, String)>,
    framing: Framing,
}

impl Req {
    /// A valid, authenticated `initialize` POST to `/mcp`.
    fn mcp(port: u16) -> Req {
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
    fn bare(port: u16, method: &str, target: &str) -> Req {
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

    fn method(mut self, method: &str) -> Req {
        self.method = method.into();
        self
    }

    fn target(mut self, target: &str) -> Req {
        self.target = target.into();
        self
    }

    /// Replaces every header called `name` with one `name: value`.
    fn set(mut self, name: &str, value: &str) -> Req {
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
    fn add(mut self, name: &str, value: &str) -> Req {
        self.headers.push((name.into(), value.into()));
        self
    }

    fn remove(mut self, name: &str) -> Req {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    fn body(mut self, body: impl Into<Vec<u8>>) -> Req {
        self.framing = Framing::Sized(body.into());
        self
    }

    fn chunked(mut self, body: impl Into<Vec<u8>>, chunk: usize) -> Req {
        self.framing = Framing::Chunked(body.into(), chunk);
        self
    }

    fn declared(mut self, length: u64) -> Req {
        self.framing = Framing::Declared(length);
        self
    }

    fn no_body(mut self) -> Req {
        self.framing = Framing::None;
        self
    }

    fn bytes(&self) -> Vec<u8> {
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

/// A parsed response.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
    /// The server closed the connection after the response.
    closed: bool,
}

impl Reply {
    fn all(&self, name: &str) -> Vec<&str> {
        self.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    fn json(&self) -> Option<Value> {
        serde_json::from_slice(&self.body).ok()
    }

    fn summary(&self) -> String {
        let body = String::from_utf8_lossy(&self.body);
        let body: String = body.chars().take(70).collect();
        format!("{} {body:?}", self.status)
    }
}

/// A response's status line and headers.
struct Head {
    /// Bytes up to and including the blank line.
    len: usize,
    status: u16,
    headers: Vec<(String, String)>,
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
async fn exchange(port: u16, request: &[u8], await_close: bool) -> Result<Reply, String> {
    let deadline = tokio::time::Instant::now() + EXCHANGE_DEADLINE;
    let stream = tokio::time::timeout_at(deadline, TcpStream::connect(("127.0.0.1", port)))
        .await
        .map_err(|_| "connect timed out".to_owned())?
        .map_err(|e| format!("connect: {e}"))?;
    let (mut reader, mut writer) = stream.into_split();
    let request = request.to_vec();
    let head_request = request.starts_with(b"HEAD ");
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

// ---------------------------------------------------------------------------
// The battery.

/// The status a row must get.
#[derive(Debug, Clone, Copy)]
enum Expect {
    Status(u16),
    /// A 4xx, or a 200 whose body is a JSON-RPC error.
    Rejected,
    /// Anything but 2xx, and the connection is closed afterwards.
    NotSuccessAndClosed,
}

/// Extra checks beyond the status; `Cache-Control: no-store` and the
/// absence of any `Access-Control-*` header are checked on every row.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Check {
    /// Exactly one `WWW-Authenticate: Bearer`.
    Challenge,
    /// No `WWW-Authenticate` at all.
    NoChallenge,
    /// The JSON-RPC result of the `initialize` request (id 1).
    Initialized,
    /// `Allow: POST` (the only method of `/mcp`).
    AllowPost,
    /// The server closes the connection after answering.
    Closes,
    /// hyper itself refuses malformed framing before any service runs, so
    /// the gate cannot add `Cache-Control` there (empty 400, no content).
    ParserRefusal,
    /// A JSON-RPC error body with this code and `"id": null`.
    RpcError(i64),
    /// A tool result with `isError` for request id 1.
    ToolError,
    /// The initialize result names this protocol revision.
    Negotiated(&'static str),
}

struct Row {
    name: &'static str,
    request: Vec<u8>,
    expect: Expect,
    checks: &'static [Check],
}

fn row(
    name: &'static str,
    request: impl Into<Vec<u8>>,
    expect: Expect,
    checks: &'static [Check],
) -> Row {
    Row {
        name,
        request: request.into(),
        expect,
        checks,
    }
}

/// `initialize` padded with JSON whitespace to exactly `len` bytes.
fn padded_initialize(len: usize) -> Vec<u8> {
    let mut body = INITIALIZE.as_bytes().to_vec();
    body.resize(len, b' ');
    body
}

/// The rows, one per line (kept as a table on purpose).
#[rustfmt::skip]
fn battery(port: u16) -> Vec<Row> {
    use Check::*;
    use Expect::*;
    let ok = Req::mcp(port);
    let host = |h: &str| ok.clone().set("Host", h).bytes();
    let auth = |a: &str| ok.clone().set("Authorization", a).bytes();
    let origin = |o: &str| ok.clone().set("Origin", o).bytes();
    let get = |path: &str| Req::bare(port, "GET", path).bytes();
    let token_len = TEST_TOKEN.len();
    let mut one_off = TEST_TOKEN.as_bytes().to_vec();
    one_off[token_len - 1] ^= 0x01;
    let one_off = String::from_utf8(one_off).unwrap();
    let wk = "/.well-known/oauth-protected-resource";
    let wk_mcp = "/.well-known/oauth-protected-resource/mcp";
    let unauthenticated = ok.clone().remove("Authorization");
    let preflight = ok.clone().method("OPTIONS").no_body()
        .set("Access-Control-Request-Method", "POST")
        .set("Access-Control-Request-Headers", "authorization, content-type");
    let other_port = if port == 65_535 { 1 } else { port + 1 };
    let big_token = "A".repeat(16 * 1024);
    let bomb = "[".repeat(20_000);
    let object_bomb = r#"{"a":"#.repeat(10_000);
    vec![
        // Controls: the valid request passes, so every refusal below is due
        // to the one thing its row changes.
        row("control_valid_initialize", ok.bytes(), Status(200), &[Initialized, NoChallenge]),
        row("control_localhost_host", host(&format!("localhost:{port}")), Status(200), &[Initialized]),
        row("control_allowed_origin", origin(OK_ORIGIN), Status(200), &[Initialized]),
        row("control_absolute_form_same_authority", ok.clone().target(&format!("http://127.0.0.1:{port}/mcp")).bytes(), Status(200), &[Initialized]),
        row("control_json_charset", ok.clone().set("Content-Type", "application/json; charset=utf-8").bytes(), Status(200), &[Initialized]),
        // Host (DNS rebinding and friends) -> 403.
        row("host_other_port", host(&format!("127.0.0.1:{other_port}")), Status(403), &[NoChallenge]),
        row("host_without_port", host("127.0.0.1"), Status(403), &[]),
        row("host_ip_trailing_dot", host(&format!("127.0.0.1.:{port}")), Status(403), &[]),
        row("host_localhost_trailing_dot", host(&format!("localhost.:{port}")), Status(403), &[]),
        row("host_localhost_dot_no_port", host("localhost."), Status(403), &[]),
        row("host_nip_io", host(&format!("127.0.0.1.nip.io:{port}")), Status(403), &[]),
        row("host_decimal_ip", host(&format!("2130706433:{port}")), Status(403), &[]),
        row("host_hex_ip", host(&format!("0x7f.0.0.1:{port}")), Status(403), &[]),
        row("host_octal_ip", host(&format!("0177.0.0.1:{port}")), Status(403), &[]),
        row("host_short_ip", host(&format!("127.1:{port}")), Status(403), &[]),
        row("host_ipv6_loopback", host(&format!("[::1]:{port}")), Status(403), &[]),
        row("host_ipv4_mapped_ipv6", host(&format!("[::ffff:127.0.0.1]:{port}")), Status(403), &[]),
        row("host_zero_padded_port", host(&format!("127.0.0.1:0{port}")), Status(403), &[]),
        row("host_upper_case", host(&format!("LOCALHOST:{port}")), Status(403), &[]),
        row("host_userinfo", host(&format!("user@127.0.0.1:{port}")), Status(403), &[]),
        row("host_any_address", host(&format!("0.0.0.0:{port}")), Status(403), &[]),
        row("host_foreign_name", host("evil.example"), Status(403), &[]),
        row("host_empty", host(""), Status(403), &[]),
        row("host_missing", ok.clone().remove("Host").bytes(), Status(403), &[]),
        row("host_duplicated_both_valid", ok.clone().add("Host", &format!("127.0.0.1:{port}")).bytes(), Status(403), &[]),
        row("host_duplicated_one_foreign", ok.clone().add("Host", "evil.example").bytes(), Status(403), &[]),
        row("absolute_form_other_authority", ok.clone().target("http://evil.example/mcp").bytes(), Status(403), &[]),
        row("absolute_form_other_port", ok.clone().target("http://127.0.0.1:1/mcp").bytes(), Status(403), &[]),
        row("host_bad_without_token", unauthenticated.clone().set("Host", "evil.example").bytes(), Status(403), &[NoChallenge]),
        row("host_bad_on_well_known", Req::bare(port, "GET", wk).set("Host", "evil.example").bytes(), Status(403), &[NoChallenge]),
        // Origin (with valid auth) -> 403.
        row("origin_foreign", origin("https://evil.example"), Status(403), &[NoChallenge]),
        row("origin_null", origin("null"), Status(403), &[]),
        row("origin_duplicated_both_allowed", ok.clone().set("Origin", OK_ORIGIN).add("Origin", OK_ORIGIN).bytes(), Status(403), &[]),
        row("origin_duplicated_one_foreign", ok.clone().set("Origin", OK_ORIGIN).add("Origin", "https://evil.example").bytes(), Status(403), &[]),
        row("origin_allowed_trailing_slash", origin(&format!("{OK_ORIGIN}/")), Status(403), &[]),
        row("origin_allowed_other_scheme", origin("http://ok.example"), Status(403), &[]),
        row("origin_allowed_explicit_port", origin("https://ok.example:443"), Status(403), &[]),
        row("origin_allowed_suffix", origin("https://ok.example.evil.example"), Status(403), &[]),
        row("origin_self_not_listed", origin(&format!("http://127.0.0.1:{port}")), Status(403), &[]),
        row("origin_empty", origin(""), Status(403), &[]),
        row("origin_foreign_without_token", unauthenticated.clone().set("Origin", "https://evil.example").bytes(), Status(403), &[NoChallenge]),
        row("origin_foreign_on_well_known", Req::bare(port, "GET", wk).set("Origin", "https://evil.example").bytes(), Status(403), &[]),
        // The only unauthenticated answers: 404 without a challenge.
        row("well_known_mcp_get", get(wk_mcp), Status(404), &[NoChallenge]),
        row("well_known_mcp_head", Req::bare(port, "HEAD", wk_mcp).bytes(), Status(404), &[NoChallenge]),
        row("well_known_root_get", get(wk), Status(404), &[NoChallenge]),
        row("well_known_root_head", Req::bare(port, "HEAD", wk).bytes(), Status(404), &[NoChallenge]),
        row("well_known_root_get_with_query", get(&format!("{wk}?resource=x")), Status(404), &[NoChallenge]),
        row("well_known_get_with_token", Req::bare(port, "GET", wk_mcp).set("Authorization", &format!("Bearer {TEST_TOKEN}")).bytes(), Status(404), &[NoChallenge]),
        // Near misses: authentication applies -> 401 + challenge.
        row("well_known_trailing_slash", get(&format!("{wk}/")), Status(401), &[Challenge]),
        row("well_known_mcp_trailing_slash", get(&format!("{wk_mcp}/")), Status(401), &[Challenge]),
        row("well_known_other_case", get("/.well-known/OAuth-Protected-Resource"), Status(401), &[Challenge]),
        row("well_known_mcp_other_case", get("/.well-known/oauth-protected-resource/MCP"), Status(401), &[Challenge]),
        row("well_known_extra_segment", get(&format!("{wk_mcp}/x")), Status(401), &[Challenge]),
        row("well_known_percent_encoded_slash", get("/.well-known/oauth-protected-resource%2Fmcp"), Status(401), &[Challenge]),
        row("well_known_dot_segment", get(&format!("/mcp/..{wk}")), Status(401), &[Challenge]),
        row("well_known_double_slash", get(&format!("/{wk}")), Status(401), &[Challenge]),
        row("well_known_authorization_server", get("/.well-known/oauth-authorization-server"), Status(401), &[Challenge]),
        row("well_known_root_post", Req::bare(port, "POST", wk).body("{}").bytes(), Status(401), &[Challenge]),
        row("well_known_mcp_post", Req::bare(port, "POST", wk_mcp).body("{}").bytes(), Status(401), &[Challenge]),
        row("well_known_root_delete", Req::bare(port, "DELETE", wk).bytes(), Status(401), &[Challenge]),
        row("well_known_mcp_delete", Req::bare(port, "DELETE", wk_mcp).bytes(), Status(401), &[Challenge]),
        row("well_known_options", Req::bare(port, "OPTIONS", wk).bytes(), Status(401), &[Challenge]),
        // Authentication mistakes -> 401 + challenge.
        row("auth_missing", unauthenticated.bytes(), Status(401), &[Challenge]),
        row("auth_empty_value", auth(""), Status(401), &[Challenge]),
        row("auth_basic_scheme", auth("Basic dXNlcjpadThOMnhSNXRCN3dLMW1QNHNEOWZIM2pMNmNWMGdZ"), Status(401), &[Challenge]),
        row("auth_basic_with_token", auth(&format!("Basic {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_bearer_alone", auth("Bearer"), Status(401), &[Challenge]),
        row("auth_bearer_trailing_space", auth("Bearer "), Status(401), &[Challenge]),
        row("auth_token_without_scheme", auth(TEST_TOKEN), Status(401), &[Challenge]),
        row("auth_other_scheme_name", auth(&format!("Token {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_token_prefix", auth(&format!("Bearer {}", &TEST_TOKEN[..16])), Status(401), &[Challenge]),
        row("auth_token_one_byte_short", auth(&format!("Bearer {}", &TEST_TOKEN[..token_len - 1])), Status(401), &[Challenge]),
        row("auth_token_one_byte_off", auth(&format!("Bearer {one_off}")), Status(401), &[Challenge]),
        row("auth_token_one_extra_byte", auth(&format!("Bearer {TEST_TOKEN}x")), Status(401), &[Challenge]),
        row("auth_token_upper_cased", auth(&format!("Bearer {}", TEST_TOKEN.to_ascii_uppercase())), Status(401), &[Challenge]),
        row("auth_head_over_16_kib", auth(&format!("Bearer {big_token}")), Status(431), &[ParserRefusal, Closes]),
        row("auth_token_quoted", auth(&format!("Bearer \"{TEST_TOKEN}\"")), Status(401), &[Challenge]),
        row("auth_double_space", auth(&format!("Bearer  {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_tab_separator", auth(&format!("Bearer\t{TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_token_listed_twice", auth(&format!("Bearer {TEST_TOKEN}, Bearer {TEST_TOKEN}")), Status(401), &[Challenge]),
        row("auth_duplicated_both_correct", ok.clone().add("Authorization", &format!("Bearer {TEST_TOKEN}")).bytes(), Status(401), &[Challenge]),
        row("auth_token_in_query", unauthenticated.clone().target(&format!("/mcp?access_token={TEST_TOKEN}")).bytes(), Status(401), &[Challenge]),
        row("auth_token_in_cookie", unauthenticated.clone().set("Cookie", &format!("access_token={TEST_TOKEN}")).bytes(), Status(401), &[Challenge]),
        row("auth_token_in_other_header", unauthenticated.clone().set("X-Api-Key", TEST_TOKEN).bytes(), Status(401), &[Challenge]),
        row("auth_missing_with_session_id", unauthenticated.clone().set("Mcp-Session-Id", "abc").bytes(), Status(401), &[Challenge]),
        row("auth_lower_case_scheme_accepted", auth(&format!("bearer {TEST_TOKEN}")), Status(200), &[Initialized]),
        row("auth_upper_case_scheme_accepted", auth(&format!("BEARER {TEST_TOKEN}")), Status(200), &[Initialized]),
        // Authenticated, wrong path or method: the 4xx observed, never CORS.
        row("route_upper_case_path", ok.clone().target("/MCP").bytes(), Status(404), &[]),
        row("route_trailing_slash", ok.clone().target("/mcp/").bytes(), Status(404), &[]),
        row("route_root", ok.clone().target("/").bytes(), Status(404), &[]),
        row("route_sub_path", ok.clone().target("/mcp/x").bytes(), Status(404), &[]),
        row("route_asterisk_form", ok.clone().method("OPTIONS").target("*").no_body().bytes(), Status(404), &[]),
        row("method_get", ok.clone().method("GET").no_body().bytes(), Status(405), &[AllowPost]),
        row("method_get_event_stream", ok.clone().method("GET").no_body().set("Accept", "text/event-stream").bytes(), Status(405), &[AllowPost]),
        row("method_delete", ok.clone().method("DELETE").no_body().bytes(), Status(405), &[AllowPost]),
        row("method_put", ok.clone().method("PUT").bytes(), Status(405), &[AllowPost]),
        row("method_trace", ok.clone().method("TRACE").no_body().bytes(), Status(405), &[AllowPost]),
        row("method_options_preflight", preflight.bytes(), Status(405), &[AllowPost]),
        row("method_options_preflight_allowed_origin", preflight.clone().set("Origin", OK_ORIGIN).bytes(), Status(405), &[AllowPost]),
        row("method_options_preflight_without_token", preflight.clone().remove("Authorization").set("Origin", OK_ORIGIN).bytes(), Status(401), &[Challenge]),
        // Bodies: the cap is 65,536 bytes, also when chunked.
        row("body_65536_content_length", ok.clone().body(padded_initialize(MAX_BODY)).bytes(), Status(200), &[Initialized]),
        row("body_65537_content_length", ok.clone().body(padded_initialize(MAX_BODY + 1)).bytes(), Status(413), &[]),
        row("body_65536_chunked_one_chunk", ok.clone().chunked(padded_initialize(MAX_BODY), MAX_BODY).bytes(), Status(200), &[Initialized]),
        row("body_65536_chunked_4_kib_chunks", ok.clone().chunked(padded_initialize(MAX_BODY), 4096).bytes(), Status(200), &[Initialized]),
        row("body_65537_chunked_one_chunk", ok.clone().chunked(padded_initialize(MAX_BODY + 1), MAX_BODY + 1).bytes(), Status(413), &[]),
        row("body_65537_chunked_4_kib_chunks", ok.clone().chunked(padded_initialize(MAX_BODY + 1), 4096).bytes(), Status(413), &[]),
        row("body_1_mib_chunked", ok.clone().chunked(padded_initialize(1 << 20), 16 * 1024).bytes(), Status(413), &[]),
        row("body_declared_10e12_not_sent", ok.clone().remove("Connection").declared(1_000_000_000_000).bytes(), Status(413), &[Closes]),
        row("body_declared_10e12_without_token", unauthenticated.clone().remove("Connection").declared(1_000_000_000_000).bytes(), Status(401), &[Challenge, Closes]),
        row("content_type_text_plain", ok.clone().set("Content-Type", "text/plain").bytes(), Status(415), &[]),
        row("content_type_form", ok.clone().set("Content-Type", "application/x-www-form-urlencoded").bytes(), Status(415), &[]),
        row("content_type_missing", ok.clone().remove("Content-Type").bytes(), Status(415), &[]),
        row("accept_missing", ok.clone().remove("Accept").bytes(), Status(406), &[]),
        row("body_empty", ok.clone().body("").bytes(), Status(400), &[RpcError(-32700)]),
        row("body_invalid_json", ok.clone().body("{not json").bytes(), Status(400), &[RpcError(-32700)]),
        row("body_json_batch", ok.clone().body(format!("[{INITIALIZE}]")).bytes(), Status(400), &[RpcError(-32600)]),
        row("body_not_a_message", ok.clone().body(r#"{"foo":1}"#).bytes(), Status(400), &[RpcError(-32600)]),
        row("body_repeated_id", ok.clone().body(r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#).bytes(), Status(400), &[RpcError(-32600)]),
        row("body_repeated_tool_argument", ok.clone().body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_output","arguments":{"address":"t1","address":"t2"}}}"#).bytes(), Status(200), &[ToolError]),
        row("initialize_asking_2025_03_26", ok.clone().body(INITIALIZE.replace("2025-06-18", "2025-03-26")).bytes(), Status(200), &[Negotiated("2025-11-25")]),
        row("version_header_2025_03_26_on_ping", ok.clone().set("MCP-Protocol-Version", "2025-03-26").body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).bytes(), Status(400), &[RpcError(-32600)]),
        row("version_header_2025_06_18_on_ping", ok.clone().set("MCP-Protocol-Version", "2025-06-18").body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).bytes(), Status(200), &[]),
        row("body_nesting_bomb_20000", ok.clone().body(bomb).bytes(), Rejected, &[]),
        row("alive_after_array_bomb", ok.bytes(), Status(200), &[Initialized]),
        row("body_object_bomb_10000", ok.clone().body(object_bomb).bytes(), Rejected, &[]),
        row("alive_after_object_bomb", ok.bytes(), Status(200), &[Initialized]),
        // Framing tricks: refused, connection closed.
        row("smuggle_content_length_and_chunked", ok.clone().add("Transfer-Encoding", "chunked").bytes(), NotSuccessAndClosed, &[]),
        row("smuggle_duplicate_content_length", ok.clone().add("Content-Length", "5").bytes(), Status(400), &[ParserRefusal, Closes]),
        row("smuggle_obs_fold", obs_folded(&ok), Status(400), &[ParserRefusal, Closes]),
        row("alive_at_the_end", ok.bytes(), Status(200), &[Initialized]),
    ]
}

/// `Authorization` folded onto a continuation line (obsolete line folding).
fn obs_folded(request: &Req) -> Vec<u8> {
    String::from_utf8(request.bytes())
        .unwrap()
        .replacen("Authorization: Bearer ", "Authorization: Bearer\r\n ", 1)
        .into_bytes()
}

/// Checks one reply against its row; the error says what broke.
fn judge(row: &Row, reply: &Reply) -> Result<(), String> {
    let status = reply.status;
    match row.expect {
        Expect::Status(code) if status != code => return Err(format!("expected {code}")),
        Expect::Rejected => {
            let json_rpc_error =
                status == 200 && reply.json().is_some_and(|v| v.get("error").is_some());
            if !(400..500).contains(&status) && !json_rpc_error {
                return Err("expected a 4xx or a JSON-RPC error".into());
            }
        }
        Expect::NotSuccessAndClosed => {
            if (200..300).contains(&status) {
                return Err("expected a refusal".into());
            }
            if !reply.closed {
                return Err("connection left open".into());
            }
        }
        Expect::Status(_) => {}
    }
    if !row.checks.contains(&Check::ParserRefusal) && reply.all("cache-control") != ["no-store"] {
        return Err(format!(
            "Cache-Control is {:?}, not [no-store]",
            reply.all("cache-control")
        ));
    }
    if let Some((name, _)) = reply
        .headers
        .iter()
        .find(|(n, _)| n.to_ascii_lowercase().starts_with("access-control-"))
    {
        return Err(format!("CORS header {name} present"));
    }
    const CLOSING: [u16; 8] = [400, 401, 403, 404, 405, 408, 413, 431];
    if CLOSING.contains(&status)
        && !reply
            .all("connection")
            .iter()
            .any(|v| v.eq_ignore_ascii_case("close"))
    {
        return Err(format!("a {status} without Connection: close"));
    }
    if status == 413 {
        let body = reply.json().ok_or("a 413 without a JSON body")?;
        let message = body["error"]["message"].as_str().unwrap_or_default();
        if body["error"]["code"] != -32600 || !message.contains("65536") {
            return Err(format!("a 413 that does not name the limit: {body}"));
        }
    }
    let challenges = reply.all("www-authenticate");
    for check in row.checks {
        match check {
            Check::Challenge if challenges != ["Bearer"] => {
                return Err(format!("WWW-Authenticate is {challenges:?}, not [Bearer]"));
            }
            Check::NoChallenge if !challenges.is_empty() => {
                return Err(format!("unexpected WWW-Authenticate {challenges:?}"));
            }
            Check::Initialized => {
                let body = reply.json().ok_or("body is not JSON")?;
                if body["id"] != 1 || body["result"]["protocolVersion"] != "2025-06-18" {
                    return Err(format!("not the initialize result: {body}"));
                }
            }
            Check::RpcError(code) => {
                let body = reply.json().ok_or("body is not JSON")?;
                let null_id = body
                    .as_object()
                    .is_some_and(|o| o.get("id") == Some(&Value::Null));
                if body["error"]["code"] != *code || !null_id {
                    return Err(format!("not a {code} error with a null id: {body}"));
                }
            }
            Check::ToolError => {
                let body = reply.json().ok_or("body is not JSON")?;
                if body["id"] != 1 || body["result"]["isError"] != true {
                    return Err(format!("not an isError tool result: {body}"));
                }
            }
            Check::Negotiated(version) => {
                let body = reply.json().ok_or("body is not JSON")?;
                if body["result"]["protocolVersion"] != *version {
                    return Err(format!(
                        "negotiated {}, not {version}",
                        body["result"]["protocolVersion"]
                    ));
                }
            }
            Check::AllowPost if reply.all("allow") != ["POST"] => {
                return Err(format!("Allow is {:?}", reply.all("allow")));
            }
            Check::Closes if !reply.closed => return Err("connection left open".into()),
            _ => {}
        }
    }
    Ok(())
}

#[tokio::test]
async fn hostile_request_battery() {
    let sim = Sim::start(SimOptions::default());
    let adapter = spawn_http(&sim, json!({"http": {"allowedOrigins": [OK_ORIGIN]}})).await;
    let rows = battery(adapter.port);
    assert!(rows.len() >= 50, "only {} rows", rows.len());
    let mut names: Vec<&str> = rows.iter().map(|r| r.name).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), rows.len(), "row names must be unique");
    let mut table = String::new();
    let mut failures = Vec::new();
    for row in &rows {
        let await_close = row.checks.contains(&Check::Closes)
            || matches!(row.expect, Expect::NotSuccessAndClosed);
        let started = Instant::now();
        let (observed, verdict) = match exchange(adapter.port, &row.request, await_close).await {
            Ok(reply) => (reply.summary(), judge(row, &reply)),
            Err(e) => ("-".to_owned(), Err(e)),
        };
        let millis = started.elapsed().as_millis();
        let mark = match &verdict {
            Ok(()) => "ok".to_owned(),
            Err(why) => {
                failures.push(row.name);
                format!("FAIL: {why}")
            }
        };
        let expect = match row.expect {
            Expect::Status(code) => code.to_string(),
            Expect::Rejected => "4xx|rpc-err".into(),
            Expect::NotSuccessAndClosed => "!2xx+close".into(),
        };
        let _ = writeln!(
            table,
            "{:<46} {:>11} {:>5}ms  {:<60} {mark}",
            row.name, expect, millis, observed
        );
    }
    println!("{} rows\n{table}", rows.len());
    let log = std::fs::read_to_string(&adapter.stderr_log).unwrap_or_default();
    assert!(!log.contains(TEST_TOKEN), "the token reached the log");
    assert!(
        failures.is_empty(),
        "{} of {} rows failed: {failures:?}\n{table}",
        failures.len(),
        rows.len()
    );
}

// ---------------------------------------------------------------------------
// Flood and slow clients.

/// Resident memory of a process, in KiB.
fn vm_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("/proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS line")
}

/// Lets this test process hold `wanted` sockets at once.
fn raise_fd_limit(wanted: u64) {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit on our own process with a valid struct.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < wanted {
            limit.rlim_cur = wanted.min(limit.rlim_max);
            libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_unauthenticated_posts_all_get_401() {
    const REQUESTS: usize = 1_000;
    raise_fd_limit(4_096);
    let sim = Sim::start(SimOptions::default());
    let adapter = spawn_http(&sim, json!({})).await;
    let port = adapter.port;
    let pid = adapter.child.id().expect("adapter pid");
    // One authenticated request first, so lazy start-up allocations are in
    // the baseline.
    let warm = exchange(port, &Req::mcp(port).bytes(), false)
        .await
        .unwrap();
    assert_eq!(warm.status, 200, "{}", warm.summary());
    let before = vm_rss_kib(pid);
    let request = Req::mcp(port).remove("Authorization").bytes();
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..REQUESTS {
        let request = request.clone();
        tasks.spawn(async move {
            let mut attempt = exchange(port, &request, false).await;
            // A connect refused under backlog pressure is the kernel's, not
            // the adapter's answer; one retry tells the two apart.
            if matches!(&attempt, Err(e) if e.starts_with("connect")) {
                attempt = exchange(port, &request, false).await;
            }
            attempt.map(|r| (r.status, r.all("www-authenticate") == ["Bearer"]))
        });
    }
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let collected = tokio::time::timeout(Duration::from_secs(60), async {
        while let Some(joined) = tasks.join_next().await {
            let key = match joined.expect("task panicked") {
                Ok((401, true)) => "401 Bearer".to_owned(),
                Ok((status, challenged)) => format!("{status} challenge={challenged}"),
                Err(e) => format!("error: {e}"),
            };
            *outcomes.entry(key).or_default() += 1;
        }
    })
    .await;
    let elapsed = started.elapsed();
    let after = vm_rss_kib(pid);
    println!(
        "{REQUESTS} unauthenticated POSTs in {elapsed:?}: {outcomes:?}; adapter VmRSS before {before} KiB, after {after} KiB, growth {} KiB",
        after.saturating_sub(before)
    );
    assert!(
        collected.is_ok(),
        "not all requests finished within 60 s: {outcomes:?}"
    );
    assert_eq!(outcomes.get("401 Bearer"), Some(&REQUESTS), "{outcomes:?}");
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "VmRSS grew from {before} KiB to {after} KiB"
    );
    // Still serving.
    let alive = exchange(port, &Req::mcp(port).bytes(), false)
        .await
        .unwrap();
    assert_eq!(alive.status, 200, "{}", alive.summary());
}

/// Idle sockets that never send a byte, held open (and opened again when
/// the server closes them) until the returned guard is dropped.
fn hold_idle_sockets(port: u16, count: usize) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut held = tokio::task::JoinSet::new();
        for _ in 0..count {
            held.spawn(async move {
                loop {
                    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
                        tokio::time::sleep(Duration::from_millis(10)).await;
                        continue;
                    };
                    let mut buf = [0u8; 64];
                    // Returns when the server closes it; then connect again.
                    while matches!(stream.read(&mut buf).await, Ok(1..)) {}
                }
            });
        }
        while held.join_next().await.is_some() {}
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_unauthenticated_sockets_cannot_starve_an_authorised_client() {
    const IDLE: usize = 600;
    raise_fd_limit(8_192);
    let sim = Sim::start(SimOptions::default());
    let adapter = serve_http(&sim, json!({})).await;
    let port = adapter.port;
    let holder = hold_idle_sockets(port, IDLE);
    // Let the idle sockets take every slot they can.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut worst = Duration::ZERO;
    for _ in 0..10 {
        let started = Instant::now();
        let reply = exchange(port, &Req::mcp(port).bytes(), false).await;
        let took = started.elapsed();
        let reply = reply.unwrap_or_else(|e| panic!("an authorised client failed: {e}"));
        assert_eq!(reply.status, 200, "{}", reply.summary());
        worst = worst.max(took);
    }
    holder.abort();
    println!("{IDLE} idle sockets held: worst authorised request {worst:?}");
    // Without slots for them, an authorised client waited for idle sockets
    // to time out (seconds); with them it is served at once.
    assert!(worst < Duration::from_secs(2), "worst {worst:?}");
}

/// Open descriptors of a process.
fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_under_a_low_descriptor_limit_neither_starves_clients_nor_spins() {
    // The adapter may open 64 descriptors and cannot raise that; 200 idle
    // sockets would take them all if nothing bounded them.
    const FD_LIMIT: u64 = 64;
    const IDLE: usize = 200;
    raise_fd_limit(4_096);
    let sim = Sim::start(SimOptions::default());
    let stderr_log = sim.dir.path().join("adapter-fd-limit.stderr");
    let extra = json!({});
    let adapter = mcp::http_fd_limited(
        |port| http_config(&sim, &extra, port),
        &stderr_log,
        FD_LIMIT,
    )
    .await;
    let (port, pid) = (adapter.port, adapter.child.id().expect("adapter pid"));
    let holder = hold_idle_sockets(port, IDLE);
    crate::support::eventually("the idle sockets to take their share", || {
        (open_fds(pid) >= 40).then_some(())
    })
    .await;
    let list = Req::mcp(port)
        .add("MCP-Protocol-Version", "2025-06-18")
        .body(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}"#)
        .bytes();
    let mut worst = Duration::ZERO;
    let mut took = Vec::new();
    for _ in 0..10 {
        let started = Instant::now();
        let reply = exchange(port, &list, false).await;
        took.push(started.elapsed());
        worst = worst.max(started.elapsed());
        let reply = reply.unwrap_or_else(|e| panic!("an authorised client failed: {e}"));
        assert_eq!(reply.status, 200, "{}", reply.summary());
        let body = reply.json().unwrap_or_default();
        assert!(
            body["result"]["structuredContent"]["sessions"].is_array(),
            "list_sessions needs a connection to hc: {}",
            reply.summary()
        );
    }
    let peak = open_fds(pid);
    holder.abort();
    let log = std::fs::read_to_string(&stderr_log).unwrap_or_default();
    let accept_lines = log.lines().filter(|l| l.contains("accept")).count();
    println!(
        "{IDLE} idle sockets against a {FD_LIMIT}-descriptor adapter: worst authorised list_sessions {worst:?} ({took:?}), {peak} descriptors open, {accept_lines} accept log lines"
    );
    assert!(worst < Duration::from_secs(2), "worst {worst:?}");
    assert!(
        accept_lines <= 5,
        "{accept_lines} accept log lines: {}",
        log.lines().rev().take(3).collect::<Vec<_>>().join(" | ")
    );
}

/// Waits until the server closes `stream`; returns what it sent and when.
async fn await_server_close(
    mut stream: TcpStream,
    limit: Duration,
) -> (Result<Duration, String>, Vec<u8>) {
    let started = Instant::now();
    let mut received = Vec::new();
    let mut buf = [0u8; 4096];
    let outcome = tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) => return Ok(started.elapsed()),
                Ok(n) => received.extend_from_slice(&buf[..n]),
                // A reset is a close too.
                Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => {
                    return Ok(started.elapsed());
                }
                Err(e) => return Err(format!("read: {e}")),
            }
        }
    })
    .await
    .unwrap_or_else(|_| Err(format!("still open after {limit:?}")));
    (outcome, received)
}

#[tokio::test]
async fn slow_clients_are_cut_off() {
    let limit = Duration::from_secs(15);
    let sim = Sim::start(SimOptions::default());
    let adapter = serve_http(&sim, json!({})).await;
    let port = adapter.port;
    let slow_head = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let head = format!("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthor");
        stream.write_all(head.as_bytes()).await.unwrap();
        await_server_close(stream, limit).await
    };
    let slow_body = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let mut request = Req::mcp(port).remove("Connection").declared(100).bytes();
        request.extend_from_slice(&INITIALIZE.as_bytes()[..10]);
        stream.write_all(&request).await.unwrap();
        await_server_close(stream, limit).await
    };
    let ((head_closed, head_reply), (body_closed, body_reply)) = tokio::join!(slow_head, slow_body);
    let head_reply = String::from_utf8_lossy(&head_reply).into_owned();
    let body_reply = String::from_utf8_lossy(&body_reply).into_owned();
    println!("half a header: closed {head_closed:?}, sent {head_reply:?}");
    println!("10 of 100 body bytes: closed {body_closed:?}, sent {body_reply:?}");
    let head_after = head_closed.expect("a half-sent header is cut off");
    let body_after = body_closed.expect("a half-sent body is cut off");
    // Cut off by the timers (10 s), not at once and not much later.
    for (what, after) in [("header", head_after), ("body", body_after)] {
        assert!(
            after >= Duration::from_secs(5),
            "{what} cut off early: {after:?}"
        );
        assert!(after <= limit, "{what} cut off late: {after:?}");
    }
    assert!(
        body_reply.starts_with("HTTP/1.1 408"),
        "a stalled body must get 408 Request Timeout: {body_reply}"
    );
    // The server is still answering.
    let alive = exchange(port, &Req::mcp(port).bytes(), false)
        .await
        .unwrap();
    assert_eq!(alive.status, 200, "{}", alive.summary());
}

// ---------------------------------------------------------------------------
// The tools end to end over Streamable HTTP.

/// The terminals of a scenario: `approved` is on the allowlist, `unapproved`
/// is not; both are idle agents.
struct Cast<'a> {
    sim: &'a Sim,
    hc: &'a HcClient,
    approved: &'a str,
    unapproved: &'a str,
}

async fn scenario_list_sessions(client: &Client, cast: &Cast<'_>) {
    let result = call(client, "list_sessions", json!({})).await;
    assert!(!is_error(&result), "{result:?}");
    let out = structured(&result);
    assert_eq!(out["core_id"], cast.sim.core_id.as_str(), "{out}");
    let sessions = out["sessions"].as_array().expect("sessions");
    let approval = |address: &str| {
        sessions
            .iter()
            .find(|s| s["address"] == address)
            .unwrap_or_else(|| panic!("{address} not listed: {out}"))["send_approved"]
            .clone()
    };
    assert_eq!(approval(cast.approved), true, "{out}");
    assert_eq!(approval(cast.unapproved), false, "{out}");
    assert_eq!(out["next_cursor"], Value::Null, "{out}");
}

async fn scenario_read_output(client: &Client, cast: &Cast<'_>) {
    let result = call(client, "read_output", json!({"address": cast.approved})).await;
    assert!(!is_error(&result), "{result:?}");
    let out = structured(&result);
    let screen = cast
        .hc
        .read(cast.approved)
        .await
        .expect("terminal.read")
        .value
        .text;
    assert!(!screen.is_empty(), "the agent shows nothing");
    assert_eq!(out["text"], screen.as_str(), "{out}");
    assert_eq!(out["address"], cast.approved);
    assert_eq!(out["core_id"], cast.sim.core_id.as_str());
    assert_eq!(out["total_chars"], screen.chars().count());
    assert_eq!(out["truncated"], false);
    assert!(
        out["notice"]
            .as_str()
            .is_some_and(|n| n.to_lowercase().contains("untrusted")),
        "{out}"
    );
}

async fn scenario_send_to_approved_idle_agent(client: &Client, cast: &Cast<'_>) {
    assert_eq!(cast.sim.writes_to(cast.approved), 0);
    let result = call(
        client,
        "send_prompt",
        json!({"address": cast.approved, "text": "summarise the build log"}),
    )
    .await;
    let out = structured(&result);
    assert!(!is_error(&result), "{out}");
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(out["preflight_status"], "idle", "{out}");
    assert_eq!(out["atomic_status_guard"], "idle", "{out}");
    assert_eq!(cast.sim.writes_to(cast.approved), 1, "exactly one write");
}

async fn scenario_refused_send_to_unapproved(client: &Client, cast: &Cast<'_>) {
    let result = call(
        client,
        "send_prompt",
        json!({"address": cast.unapproved, "text": "rm -rf /"}),
    )
    .await;
    let out = structured(&result);
    assert!(is_error(&result), "{out}");
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "not_approved", "{out}");
    assert_eq!(
        cast.sim.writes_to(cast.unapproved),
        0,
        "a refused send wrote"
    );
}

#[derive(Debug, Clone, Copy)]
enum Transport {
    Stdio,
    Http,
}

/// The same scenarios over each transport, each with its own simulator.
#[tokio::test]
async fn tools_end_to_end_over_streamable_http() {
    for transport in [Transport::Http, Transport::Stdio] {
        let sim = Sim::start(SimOptions::agents(2));
        let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
        for a in ["t1", "t2"] {
            wait_status(&hc, a, TerminalStatus::Idle).await;
        }
        let t1 = hc.get("t1").await.unwrap().value;
        let allowlist = json!([{"address": "t1", "created_ms": t1.created_ms}]);
        let extra = json!({"coreId": sim.core_id, "sendAllowlist": allowlist});
        let stderr_log: PathBuf = sim.dir.path().join("e2e.stderr");
        let (client, _adapter) = match transport {
            Transport::Http => {
                let adapter = spawn_http(&sim, extra).await;
                (adapter.client().await, Some(adapter))
            }
            Transport::Stdio => (mcp::stdio(&sim.config(extra), &stderr_log).await, None),
        };
        let cast = Cast {
            sim: &sim,
            hc: &hc,
            approved: "t1",
            unapproved: "t2",
        };
        scenario_list_sessions(&client, &cast).await;
        scenario_read_output(&client, &cast).await;
        scenario_refused_send_to_unapproved(&client, &cast).await;
        scenario_send_to_approved_idle_agent(&client, &cast).await;
        assert_eq!(sim.writes().len(), 1, "{transport:?}: one write in all");
        client.cancel().await.expect("close the MCP session");
    }
}

// ---------------------------------------------------------------------------
// Startup fails closed on a missing or weak token.

#[test]
fn http_startup_fails_closed_on_a_weak_token() {
    let dir = tempfile::tempdir().unwrap();
    // Held by the test: an adapter that got as far as binding would fail
    // with "cannot listen" (exit 1), not with the token's exit 2.
    let held = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = held.local_addr().unwrap().port();
    let config = write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("hc.sock"), "transport": "http", "http": {"port": port}}),
    );
    let config = config.to_str().unwrap();
    let thirty_one = &TEST_TOKEN[..31];
    let changeme = "changeme-Zq8vN2xR5tB7wK1mP4sD9fH3jL";
    let low_entropy = "abcdefghijk".repeat(3);
    let cases: [(&str, Option<&str>, &str); 4] = [
        ("missing", None, "is not set"),
        ("31 bytes", Some(thirty_one), "31 bytes"),
        ("changeme", Some(changeme), "placeholder"),
        ("11 distinct characters", Some(&low_entropy), "not random"),
    ];
    for (what, token, says) in cases {
        let env: Vec<(&str, &str)> = token.map(|t| ("HERDR_MCP_TOKEN", t)).into_iter().collect();
        let (code, stdout, stderr) = run_adapter(&["serve", "--config", config], &env);
        assert_eq!(code, 2, "{what}: exit {code}, stderr {stderr:?}");
        assert_eq!(stdout, "", "{what}: stdout {stdout:?}");
        let lines: Vec<&str> = stderr.lines().collect();
        assert_eq!(lines.len(), 1, "{what}: not one line: {stderr:?}");
        assert!(
            lines[0].contains("HERDR_MCP_TOKEN") && lines[0].contains(says),
            "{what}: {stderr:?}"
        );
        if let Some(token) = token {
            assert!(!stderr.contains(token), "{what}: the token was printed");
        }
    }
}
