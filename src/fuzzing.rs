//! Entry points for the fuzz targets in `fuzz/` and for the corpus replay
//! test: not an API. Each takes arbitrary bytes, feeds them to a part of the
//! adapter that reads untrusted input (hc's replies, the operator's config,
//! tool arguments) and asserts what must hold whatever the bytes are: the
//! input may be refused, it never panics the adapter, and whatever is
//! accepted obeys the contract. A failed assertion is a finding.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use serde_json::value::RawValue;

use crate::config::{Config, RawConfig, Transport};
use crate::hc::CoreId;
use crate::hc::conn::Connection;
use crate::hc::framing::{RpcReply, parse_reply, rpc_error, typed_result};
use crate::hc::wire::{
    self, GetParams, Hello, ListResult, Method, ReadResult, SendResult, TerminalRecord,
};
use crate::mcp::seal::SealKey;
use crate::mcp::text::{forbidden_control, tail_chars};
use crate::mcp::tools::cursor::{self, CursorError, Position};
use crate::mcp::tracking::since::Since;

/// One reply line as [`Connection`] reads it: byte 0 picks the request id
/// the reply must match, the rest is the line. Whatever `parse_reply`
/// accepts must be a JSON-RPC 2.0 response object with that id and exactly
/// one of `result` and `error`.
pub fn hc_reply(data: &[u8]) {
    let Some((&first, line)) = data.split_first() else {
        return;
    };
    let expected_id = u64::from(first % 4);
    // The one-pass read takes exactly what the two passes take, with the
    // same value, for every result shape.
    agree::<Hello>(line, expected_id);
    agree::<TerminalRecord>(line, expected_id);
    agree::<ListResult>(line, expected_id);
    agree::<ReadResult>(line, expected_id);
    agree::<SendResult>(line, expected_id);
    agree::<Value>(line, expected_id);
    let Ok(reply) = parse_reply(line, expected_id) else {
        return;
    };
    // The oracle reads the envelope's members as raw JSON, so a number
    // out of f64's range inside a result (valid JSON, refused later by the
    // result's shape) does not trip it.
    let members: HashMap<String, Box<RawValue>> =
        serde_json::from_slice(line).expect("an accepted reply is a JSON object");
    let member = |key: &str| {
        members
            .get(key)
            .map(|raw| serde_json::from_str::<Value>(raw.get()))
    };
    let shown = String::from_utf8_lossy(line);
    assert!(
        matches!(member("jsonrpc"), Some(Ok(v)) if v == "2.0"),
        "{shown}"
    );
    let Some(Ok(id)) = member("id") else {
        panic!("accepted a reply without a readable id: {shown}");
    };
    assert!(
        id.as_u64() == Some(expected_id) || id.as_i64() == i64::try_from(expected_id).ok(),
        "accepted id {id} for {expected_id}"
    );
    assert!(
        matches!(member("method"), None | Some(Ok(Value::Null))),
        "accepted a request or notification: {shown}"
    );
    assert_ne!(
        members.contains_key("result"),
        members.contains_key("error"),
        "{shown}"
    );
    match reply {
        RpcReply::Result(raw) => {
            // Every result shape the adapter decodes; none may panic.
            let text = raw.get();
            let _ = serde_json::from_str::<Hello>(text);
            let _ = serde_json::from_str::<TerminalRecord>(text);
            let _ = serde_json::from_str::<ListResult>(text);
            let _ = serde_json::from_str::<ReadResult>(text);
            let _ = serde_json::from_str::<SendResult>(text);
        }
        RpcReply::Error(error) => {
            let error = rpc_error(Method::Send, &error);
            let _ = error.to_string();
            if let Some(kind) = error.hc_kind() {
                // A kind is recognised only when code, message and data.kind agree.
                // (An unknown member out of f64's range makes the oracle
                // unable to read the object; the adapter ignores it.)
                if let Some(Ok(raw)) = member("error") {
                    assert_eq!(raw["code"].as_i64(), Some(kind.code()), "{shown}");
                    assert_eq!(raw["message"], kind.name(), "{shown}");
                    assert_eq!(raw["data"]["kind"], kind.name(), "{shown}");
                }
            }
        }
    }
}

/// `typed_result` against `parse_reply` and a second decode.
fn agree<R: serde::de::DeserializeOwned + std::fmt::Debug>(line: &[u8], id: u64) {
    let one = typed_result::<R>(line, id).map(|r| format!("{r:?}"));
    let two = match parse_reply(line, id) {
        Ok(RpcReply::Result(raw)) => serde_json::from_str::<R>(raw.get())
            .ok()
            .map(|r| format!("{r:?}")),
        _ => None,
    };
    assert_eq!(one, two, "{}", String::from_utf8_lossy(line));
}

/// What a fake hc sends on one connection: the bytes before the first 0xFF
/// (never in UTF-8) answer `hc.hello`, the rest answers one `terminal.get`.
/// The real [`Connection`] reads them over a Unix socket, with its framing,
/// byte cap, handshake pins and reply checks. A connection that opens must
/// be pinned to hc 0.1.15.
pub fn hc_conn(data: &[u8]) {
    let (hello, reply) = match data.iter().position(|&b| b == 0xff) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let fake = FakeHc::get();
    let server = {
        let hello = hello.to_vec();
        let reply = reply.to_vec();
        let listener = fake.listener.try_clone().expect("clone the listener");
        std::thread::spawn(move || serve_once(&listener, &hello, &reply))
    };
    let runtime = &fake.runtime;
    let outcome = runtime.block_on(async {
        let call = async {
            let mut conn = Connection::open(
                std::sync::Arc::from(fake.path.as_path()),
                &crate::hc::acceptance::Admission::default(),
            )
            .await?;
            let facts = conn.hello().as_ref().clone();
            let params = GetParams { address: "t1" };
            let record = conn.call::<_, TerminalRecord>(Method::Get, &params).await;
            Ok::<_, crate::hc::CoreError>((facts, record))
        };
        tokio::time::timeout(Duration::from_secs(5), call).await
    });
    server.join().expect("the fake hc thread");
    let Ok(opened) = outcome else {
        panic!("a connection to a fake hc that closes hung");
    };
    if let Ok((facts, _record)) = opened {
        assert_eq!(facts.version, wire::PINNED_VERSION);
        assert_eq!(facts.generation, wire::PINNED_GENERATION);
        assert_eq!(facts.framing, wire::PINNED_FRAMING);
        assert!(
            CoreId::try_from(facts.core_id.to_string()).is_ok(),
            "{facts:?}"
        );
    }
}

/// A listening socket and a runtime, made once per fuzzing process.
struct FakeHc {
    path: PathBuf,
    listener: UnixListener,
    runtime: tokio::runtime::Runtime,
}

static FAKE: OnceLock<FakeHc> = OnceLock::new();

/// Removes the fake hc's socket file when the process exits (the static is
/// never dropped).
extern "C" fn remove_fake_socket() {
    if let Some(fake) = FAKE.get() {
        let _ = std::fs::remove_file(&fake.path);
    }
}

impl FakeHc {
    fn get() -> &'static FakeHc {
        FAKE.get_or_init(|| {
            let path = std::env::temp_dir().join(format!(
                "herdr-core-mcp-fuzz-{}-{:?}.sock",
                std::process::id(),
                std::thread::current().id()
            ));
            let _ = std::fs::remove_file(&path);
            let listener = UnixListener::bind(&path).expect("bind the fake hc socket");
            // SAFETY: registers a plain function with no arguments; it only
            // reads a static that is set by then. The crate's one `unsafe`
            // (std has no exit hook; the fuzz targets are never the product).
            #[expect(
                unsafe_code,
                reason = "std has no exit hook; registers a plain function"
            )]
            unsafe {
                libc::atexit(remove_fake_socket)
            };
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            FakeHc {
                path,
                listener,
                runtime,
            }
        })
    }
}

/// Accepts one connection; answers its first request line with `hello` and
/// its second with `reply`, then closes. A part without a newline is sent
/// and the connection closed, so the client never waits for more.
fn serve_once(listener: &UnixListener, hello: &[u8], reply: &[u8]) {
    let Ok((stream, _)) = listener.accept() else {
        return;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
    let mut writer = stream.try_clone().expect("clone the stream");
    let mut reader = BufReader::new(stream);
    let mut request = Vec::new();
    for answer in [hello, reply] {
        request.clear();
        if !matches!(reader.read_until(b'\n', &mut request), Ok(1..)) {
            return;
        }
        if writer.write_all(answer).is_err() || !answer.ends_with(b"\n") {
            return;
        }
    }
}

/// Config text through the same two steps as `serve`: parse (unknown keys
/// refused), then validate. A config that validates has every value in its
/// documented range, and a parsed config survives a write-and-read round trip.
pub fn config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let path = Path::new("/fuzz/config.json");
    let raw = match RawConfig::parse(path, text) {
        Ok(raw) => raw,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    let written = serde_json::to_string(&raw).expect("a raw config encodes");
    let reread = RawConfig::parse(path, &written)
        .unwrap_or_else(|e| panic!("a config does not read back: {e}\n{written}"));
    assert_eq!(reread, raw, "round trip changed the config: {written}");
    let config = match Config::validate(path, raw.clone()) {
        Ok(config) => config,
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    };
    assert!(config.socket_path().is_absolute(), "{config:?}");
    assert!(
        (100..=60_000).contains(&config.timeout().as_millis()),
        "{config:?}"
    );
    assert!(
        (100..=600_000).contains(&config.wait_max().as_millis()),
        "{config:?}"
    );
    // A config that validates approves only addresses as hc spells them:
    // never empty, never a control character.
    for entry in &reread.send_allowlist {
        assert!(
            !entry.address.is_empty() && !entry.address.chars().any(char::is_control),
            "{config:?}"
        );
    }
    if let Transport::Http(http) = config.transport() {
        assert_ne!(http.port(), 0, "{config:?}");
        assert!(
            http.allowed_hosts()
                .iter()
                .all(|h| !h.is_empty() && !h.contains('/')),
            "{config:?}"
        );
        // An Origin header is exactly scheme://host[:port]: a listed value
        // with anything else could never match one.
        assert!(
            http.allowed_origins().iter().all(|o| {
                let authority = o
                    .strip_prefix("http://")
                    .or_else(|| o.strip_prefix("https://"));
                authority.is_some_and(|a| !a.is_empty() && !a.contains(['/', '?', '#']))
            }),
            "an allowed origin that no Origin header can match: {config:?}"
        );
    }
}

/// Tool-argument rules on arbitrary text: the control-character filter
/// against an independent statement of the rule, `tail_chars` against its
/// promises, cursors (arbitrary ones never open; sealed ones open exactly
/// on their own core, and any edit breaks them), and the argument structs'
/// JSON decoding.
pub fn tool_args(data: &[u8]) {
    let (head, rest) = data.split_at(data.len().min(2));
    let max_chars = head.iter().fold(0usize, |n, &b| n * 256 + usize::from(b));
    let text = String::from_utf8_lossy(rest);

    let refused = |c: char| {
        let code = u32::from(c);
        (code < 0x20 && c != '\t' && c != '\n') || (0x7f..=0x9f).contains(&code)
    };
    let expected = text.chars().enumerate().find(|&(_, c)| refused(c));
    assert_eq!(forbidden_control(&text), expected, "{text:?}");

    let (tail, total, truncated) = tail_chars(&text, max_chars);
    assert_eq!(total, text.chars().count());
    assert_eq!(truncated, total > max_chars);
    assert_eq!(tail.chars().count(), total.min(max_chars));
    assert!(text.ends_with(tail));

    let key = seal_key();
    assert!(
        cursor::open(key, &text, "core").is_err(),
        "an unsealed cursor opened"
    );
    assert!(Since::open(key, &text).is_err(), "an unsealed since opened");
    let position = Position {
        core_id: text.chars().take(8).collect(),
        created_ms: i64::try_from(max_chars).expect("two bytes fit") - 30_000,
        address: text.chars().skip(8).collect(),
    };
    let sealed = cursor::seal(key, &position);
    if sealed.len() <= 1024 {
        assert_eq!(
            cursor::open(key, &sealed, &position.core_id),
            Ok(position.clone())
        );
        let other = format!("{}-other", position.core_id);
        assert!(matches!(
            cursor::open(key, &sealed, &other),
            Err(CursorError::OtherCore { .. })
        ));
    }
    if let Some(&b) = rest.first() {
        let mut edited = sealed.into_bytes();
        let at = usize::from(b) % edited.len();
        edited[at] ^= 1 + (b >> 4);
        if let Ok(edited) = String::from_utf8(edited) {
            assert_eq!(
                cursor::open(key, &edited, &position.core_id),
                Err(CursorError::Invalid),
                "an edited cursor opened: {edited}"
            );
        }
    }

    let _ = serde_json::from_slice::<crate::mcp::tools::send_prompt::SendPromptArgs>(rest);
    let _ = serde_json::from_slice::<crate::mcp::tools::read_output::ReadOutputArgs>(rest);
    let _ = serde_json::from_slice::<crate::mcp::tools::list_sessions::ListSessionsArgs>(rest);
    let _ = serde_json::from_slice::<crate::mcp::tools::wait_for_status::WaitForStatusArgs>(rest);
    let _ = serde_json::from_slice::<crate::mcp::tools::wait_for_output::WaitForOutputArgs>(rest);
}

fn seal_key() -> &'static SealKey {
    static KEY: OnceLock<SealKey> = OnceLock::new();
    KEY.get_or_init(SealKey::random)
}
