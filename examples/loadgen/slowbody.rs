//! The slow-body flood: how long an authorised client's *fresh* connection
//! waits for its answer while a crowd of unauthenticated connections each
//! send `POST /mcp` headers declaring a 64 KiB body that never follows,
//! and are replaced as the adapter closes them. Two variants: no token
//! (refused 401) and a wrong `Host` (refused 403, checked first).
//!
//! The crowd runs on a thread and runtime of its own, so its tasks never
//! delay a probe's (a separate process would do the same).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::http::HttpClient;
use crate::starve::raise_fd_limit;
use crate::{Res, progress};

/// Longest one probe may take before it counts as not served.
const PROBE_DEADLINE: Duration = Duration::from_secs(10);
/// Longest the crowd may take to send its first round of heads.
const CROWD_READY: Duration = Duration::from_secs(30);
/// The body every crowd request declares (the cap), and never sends.
const DECLARED_BYTES: usize = 64 * 1024;
/// Between probes, so each meets the crowd as it is, not as the last left it.
const PROBE_GAP: Duration = Duration::from_millis(20);

/// How the crowd's requests are refused.
#[derive(Debug, Clone, Copy)]
pub enum Variant {
    /// No `Authorization`: 401.
    NoToken,
    /// The right token and a `Host` not allowed: 403.
    WrongHost,
}

impl Variant {
    pub fn name(self) -> &'static str {
        match self {
            Variant::NoToken => "no token (401)",
            Variant::WrongHost => "wrong Host (403)",
        }
    }

    fn head(self, port: u16, token: &str) -> Vec<u8> {
        let (host, auth) = match self {
            Variant::NoToken => (format!("127.0.0.1:{port}"), String::new()),
            Variant::WrongHost => (
                "evil.example".to_owned(),
                format!("Authorization: Bearer {token}\r\n"),
            ),
        };
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{auth}Content-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {DECLARED_BYTES}\r\n\r\n"
        )
        .into_bytes()
    }
}

/// One variant's figures.
#[derive(Debug, Clone)]
pub struct Row {
    pub variant: Variant,
    pub crowd: usize,
    /// Each probe's connect-to-answer latency, or why it was not served.
    pub probes: Vec<Result<Duration, String>>,
    /// Requests the crowd sent while the probes ran.
    pub crowd_requests: u64,
}

impl Row {
    pub fn served(&self) -> Vec<Duration> {
        self.probes
            .iter()
            .filter_map(|p| p.as_ref().ok().copied())
            .collect()
    }

    pub fn failures(&self) -> usize {
        self.probes.iter().filter(|p| p.is_err()).count()
    }
}

/// `probes` fresh authorised connections, one after another, beside a
/// crowd of `crowd` slow-body connections refused as `variant`.
pub async fn measure(
    port: u16,
    token: &str,
    variant: Variant,
    crowd: usize,
    probes: usize,
) -> Res<Row> {
    progress(&format!(
        "slow-body flood: {probes} fresh authorised connections beside {crowd} connections refused for {}",
        variant.name()
    ));
    raise_fd_limit(crowd as u64 + 1_024);
    let flood = Crowd::start(port, variant.head(port, token), crowd);
    let ready = Instant::now() + CROWD_READY;
    while flood.sent() < crowd as u64 {
        if Instant::now() > ready {
            return Err(format!(
                "the slow-body crowd sent {} of {crowd} requests in {CROWD_READY:?}",
                flood.sent()
            ));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let before = flood.sent();
    let mut results = Vec::with_capacity(probes);
    for _ in 0..probes {
        let mut client = HttpClient::new(port, token);
        let started = Instant::now();
        let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        let probe = match tokio::time::timeout(PROBE_DEADLINE, client.post(ping)).await {
            Ok(Ok(200)) => Ok(started.elapsed()),
            Ok(Ok(status)) => Err(format!("HTTP {status}")),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(format!("no answer within {PROBE_DEADLINE:?}")),
        };
        results.push(probe);
        tokio::time::sleep(PROBE_GAP).await;
    }
    let crowd_requests = flood.sent() - before;
    drop(flood);
    Ok(Row {
        variant,
        crowd,
        probes: results,
        crowd_requests,
    })
}

/// The crowd, on its own thread; stopped (every socket closed) when dropped.
struct Crowd {
    sent: Arc<AtomicU64>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Crowd {
    fn start(port: u16, head: Vec<u8>, sockets: usize) -> Crowd {
        let head: Arc<[u8]> = head.into();
        let sent = Arc::new(AtomicU64::new(0));
        let counter = Arc::clone(&sent);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let thread = std::thread::spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let mut tasks = tokio::task::JoinSet::new();
                for _ in 0..sockets {
                    tasks.spawn(one_socket(port, Arc::clone(&head), Arc::clone(&counter)));
                }
                let _ = stopped.await;
            });
        });
        Crowd {
            sent,
            stop: Some(stop),
            thread: Some(thread),
        }
    }

    fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}

impl Drop for Crowd {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// One crowd socket: sends the head, waits for the adapter to close it,
/// connects again.
async fn one_socket(port: u16, head: Arc<[u8]>, sent: Arc<AtomicU64>) {
    loop {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
            tokio::time::sleep(Duration::from_millis(5)).await;
            continue;
        };
        if stream.write_all(&head).await.is_err() {
            continue;
        }
        sent.fetch_add(1, Ordering::Relaxed);
        let mut buf = [0u8; 512];
        while matches!(stream.read(&mut buf).await, Ok(1..)) {}
    }
}
