//! Refused requests that declare a body and never send it: a crowd of them, each replaced as it closes, must not lock new
//! authorised connections out; real clients still read their refusal; and
//! every JSON-RPC error the HTTP transport answers carries an `id`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::support::in_process::{self, HttpAdapter};
use crate::support::mcp::TEST_TOKEN;
use crate::support::{Sim, SimOptions, eventually};
use herdr_core_mcp::Pace;

/// Slow-body connections held open against the adapter (the issue's
/// figure): more than the unauthenticated connections' hard limit.
const FLOOD: usize = 1_200;
/// New authorised connections timed beside the flood.
const PROBES: usize = 32;
/// Each must be answered within this: the bench holds the tight figure
/// (under 100 ms, release build, adapter in its own process); a debug
/// build sharing a busy CI machine with another flood gets slack (worst
/// seen 0.8 s). Before the fix, about half were reset at once or not
/// answered within 1 s.
const SERVED_WITHIN: Duration = Duration::from_secs(2);
/// The flood stops by itself after this, whatever the test does.
const FLOOD_LIFETIME: Duration = Duration::from_secs(60);
/// The body cap of spec section 5, declared and never sent.
const DECLARED: usize = 65_536;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#;

/// The adapter at the real pace: the floods measure how slots are shared
/// under `serve`'s own deadlines.
async fn serve(sim: &Sim) -> HttpAdapter {
    in_process::http_for_paced(sim, &json!({"coreId": sim.core_id}), Pace::default()).await
}

/// How a flood request is refused.
#[derive(Debug, Clone, Copy)]
enum Refused {
    /// No `Authorization`: 401.
    NoToken,
    /// The right token, a `Host` not allowed: 403.
    WrongHost,
}

/// The head of a `POST /mcp` declaring a 64 KiB body that never follows.
fn slow_body_head(port: u16, refused: Refused) -> Vec<u8> {
    let (host, auth) = match refused {
        Refused::NoToken => (format!("127.0.0.1:{port}"), String::new()),
        Refused::WrongHost => (
            "evil.example".to_owned(),
            format!("Authorization: Bearer {TEST_TOKEN}\r\n"),
        ),
    };
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {DECLARED}\r\n\r\n"
    )
    .into_bytes()
}

/// An authorised `initialize` on a connection of its own.
fn authorised_initialize(port: u16) -> Vec<u8> {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAuthorization: Bearer {TEST_TOKEN}\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Connection: close\r\nContent-Length: {}\r\n\r\n{INITIALIZE}",
        INITIALIZE.len()
    )
    .into_bytes()
}

/// Lets this test process hold the flood's sockets (the in-process adapter
/// raises it further for itself).
fn raise_fd_limit(wanted: u64) {
    let _ = rlimit::increase_nofile_limit(wanted);
}

/// `sockets` connections that each send `head` and wait for the server to
/// close them, then connect again; stopped when dropped (or after
/// [`FLOOD_LIFETIME`]). The flood runs on a thread and runtime of its own,
/// as another process's would: sharing the adapter's two workers, its
/// 1,200 tasks would delay the accept loop's every turn.
struct Flood {
    /// Heads written so far, over all connections.
    sent: Arc<AtomicU64>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Flood {
    fn start(port: u16, head: Vec<u8>, sockets: usize) -> Flood {
        let head: Arc<[u8]> = head.into();
        let sent = Arc::new(AtomicU64::new(0));
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let counter = Arc::clone(&sent);
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime for the flood");
            runtime.block_on(async move {
                let stop_at = Instant::now() + FLOOD_LIFETIME;
                let mut tasks = tokio::task::JoinSet::new();
                for _ in 0..sockets {
                    let (head, sent) = (Arc::clone(&head), Arc::clone(&counter));
                    tasks.spawn(one_socket(port, head, sent, stop_at));
                }
                tokio::select! {
                    _ = stopped => {}
                    () = async { while tasks.join_next().await.is_some() {} } => {}
                }
            });
        });
        Flood {
            sent,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    /// Waits until `count` heads have gone out.
    async fn reaches(&self, count: usize) {
        eventually(&format!("{count} slow-body requests sent"), async || {
            (self.sent.load(Ordering::Relaxed) >= count as u64).then_some(())
        })
        .await;
    }
}

/// One socket of the flood, replaced each time the server closes it.
async fn one_socket(port: u16, head: Arc<[u8]>, sent: Arc<AtomicU64>, stop_at: Instant) {
    while Instant::now() < stop_at {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
            // Backlog full or no port free: back off, not spin.
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        if stream.write_all(&head).await.is_err() {
            continue;
        }
        sent.fetch_add(1, Ordering::Relaxed);
        let mut buf = [0u8; 512];
        // Until the server closes it (or resets it).
        while matches!(stream.read(&mut buf).await, Ok(1..)) {}
    }
}

impl Drop for Flood {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One new authorised connection: the time to its `initialize` answer, or
/// why it was not served within [`SERVED_WITHIN`].
async fn probe(port: u16) -> Result<Duration, String> {
    let started = Instant::now();
    let exchange = async {
        let mut stream = TcpStream::connect(("127.0.0.1", port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        stream
            .write_all(&authorised_initialize(port))
            .await
            .map_err(|e| format!("write: {e}"))?;
        let mut reply = Vec::new();
        stream
            .read_to_end(&mut reply)
            .await
            .map_err(|e| format!("read: {e} after {} bytes", reply.len()))?;
        let reply = String::from_utf8_lossy(&reply);
        if reply.starts_with("HTTP/1.1 200") && reply.contains(r#""protocolVersion""#) {
            Ok(started.elapsed())
        } else if reply.is_empty() {
            Err("closed without an answer".to_owned())
        } else {
            Err(format!(
                "answered {:?}",
                reply.lines().next().unwrap_or_default()
            ))
        }
    };
    tokio::time::timeout(SERVED_WITHIN, exchange)
        .await
        .unwrap_or_else(|_| Err(format!("no answer within {SERVED_WITHIN:?}")))
}

/// [`PROBES`] new authorised connections, one after another, beside
/// [`FLOOD`] slow-body connections refused as `refused`: every one is
/// served.
async fn authorised_clients_are_served_beside(refused: Refused) {
    raise_fd_limit(8_192);
    let sim = Sim::start(SimOptions::default());
    let adapter = serve(&sim).await;
    let port = adapter.port;
    probe(port).await.expect("served before the flood");
    let flood = Flood::start(port, slow_body_head(port, refused), FLOOD);
    flood.reaches(FLOOD).await;
    let mut probes = Vec::with_capacity(PROBES);
    for _ in 0..PROBES {
        probes.push(probe(port).await);
    }
    let sent = flood.sent.load(Ordering::Relaxed);
    drop(flood);
    let failed: Vec<&String> = probes.iter().filter_map(|p| p.as_ref().err()).collect();
    let worst = probes.iter().filter_map(|p| p.as_ref().ok()).max();
    println!(
        "{refused:?} flood of {FLOOD} ({sent} requests sent): {} of {PROBES} served, worst {worst:?}",
        PROBES - failed.len()
    );
    assert!(
        failed.is_empty(),
        "{} of {PROBES} authorised connections not served beside the {refused:?} flood; first: {}",
        failed.len(),
        failed[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_without_a_token_cannot_lock_out_authorised_clients() {
    authorised_clients_are_served_beside(Refused::NoToken).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_bodies_with_a_wrong_host_cannot_lock_out_authorised_clients() {
    authorised_clients_are_served_beside(Refused::WrongHost).await;
}

#[tokio::test]
async fn a_refusal_is_answered_without_waiting_for_the_declared_body() {
    // Before the fix the gate waited 1 s for the body before answering.
    const PROMPT: Duration = Duration::from_millis(500);
    let sim = Sim::start(SimOptions::default());
    let adapter = serve(&sim).await;
    let port = adapter.port;
    for (refused, status) in [(Refused::NoToken, 401), (Refused::WrongHost, 403)] {
        let mut stream = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let started = Instant::now();
        stream
            .write_all(&slow_body_head(port, refused))
            .await
            .unwrap();
        let mut reply = Vec::new();
        let read = tokio::time::timeout(PROMPT, stream.read_to_end(&mut reply)).await;
        let reply = String::from_utf8_lossy(&reply);
        assert!(
            read.is_ok(),
            "{refused:?}: not answered and closed within {PROMPT:?} (got {reply:?})"
        );
        assert!(
            reply.starts_with(&format!("HTTP/1.1 {status}")),
            "{refused:?}: {reply:?}"
        );
        println!(
            "{refused:?}: answered {status} and closed in {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_client_without_a_token_reads_its_401_challenge() {
    // The refusal closes the connection without reading a body that has
    // not arrived; a client that sent its whole request (up to the 64 KiB
    // cap) still reads the answer, every time.
    const ROUNDS: usize = 50;
    let sim = Sim::start(SimOptions::default());
    let adapter = serve(&sim).await;
    let padded = {
        let mut request: Value = serde_json::from_str(INITIALIZE).unwrap();
        let fill = DECLARED - INITIALIZE.len() - r#","pad":"""#.len();
        request["pad"] = Value::String("x".repeat(fill));
        request.to_string()
    };
    assert_eq!(padded.len(), DECLARED);
    let mut answered = 0;
    for body in [INITIALIZE.to_owned(), padded] {
        for _ in 0..ROUNDS {
            // A fresh connection each time: no pooled, kept-alive socket.
            let client = reqwest::Client::builder()
                .pool_max_idle_per_host(0)
                .build()
                .unwrap();
            let reply = client
                .post(adapter.url())
                .header("Content-Type", "application/json")
                .header("Accept", "application/json, text/event-stream")
                .body(body.clone())
                .send()
                .await
                .unwrap_or_else(|e| panic!("no answer to a {}-byte body: {e:?}", body.len()));
            assert_eq!(reply.status(), 401);
            let challenge = reply.headers().get("www-authenticate");
            assert_eq!(challenge.map(|v| v.as_bytes()), Some(&b"Bearer"[..]));
            answered += 1;
        }
    }
    assert_eq!(answered, 2 * ROUNDS);
}

#[tokio::test]
async fn an_error_answering_a_posted_response_carries_a_null_id() {
    let sim = Sim::start(SimOptions::default());
    let adapter = serve(&sim).await;
    let client = reqwest::Client::new();
    for posted in [
        json!({"jsonrpc": "2.0", "id": 7, "result": {}}),
        json!({"jsonrpc": "2.0", "id": 8, "error": {"code": -32000, "message": "no"}}),
    ] {
        let reply = client
            .post(adapter.url())
            .header("Authorization", format!("Bearer {TEST_TOKEN}"))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", "2025-06-18")
            .body(posted.to_string())
            .send()
            .await
            .unwrap();
        let status = reply.status();
        let answer: Value = reply.json().await.unwrap();
        assert_eq!(status, 400, "{posted} -> {answer}");
        assert_eq!(answer["error"]["code"], -32600, "{posted} -> {answer}");
        assert_eq!(
            answer.as_object().unwrap().get("id"),
            Some(&Value::Null),
            "{posted} -> {answer}"
        );
    }
}
