//! Starvation: how long an authorised client's *fresh* connection waits for
//! its answer while a crowd of unauthenticated sockets is held open against
//! the HTTP transport. The crowd never sends a byte, and each socket the
//! adapter closes is opened again at once, so the crowd stays as large as
//! the adapter lets it.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use crate::http::HttpClient;
use crate::{Res, progress};

/// Longest one probe may take before it counts as not served.
const PROBE_DEADLINE: Duration = Duration::from_secs(10);
/// Time for the crowd to connect before the probes start.
const SETTLE: Duration = Duration::from_secs(2);

/// One crowd size's figures.
#[derive(Debug, Clone)]
pub struct Row {
    pub held: usize,
    /// Each probe's latency, or why it was not served.
    pub probes: Vec<Result<Duration, String>>,
    /// Sockets of the crowd the adapter closed (and the crowd reopened)
    /// while the probes ran.
    pub reopened: u64,
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

/// Lets this process hold `wanted` sockets at once (up to the hard limit).
pub fn raise_fd_limit(wanted: u64) {
    let _ = rlimit::increase_nofile_limit(wanted);
}

/// `probes` fresh authorised connections, one after another, while `held`
/// idle sockets are kept open.
pub async fn measure(port: u16, token: &str, held: usize, probes: usize) -> Res<Row> {
    progress(&format!(
        "starvation: {probes} fresh authorised connections while {held} idle sockets are held"
    ));
    raise_fd_limit(held as u64 + 1_024);
    let reopened = Arc::new(AtomicU64::new(0));
    let mut crowd = tokio::task::JoinSet::new();
    for _ in 0..held {
        let reopened = Arc::clone(&reopened);
        crowd.spawn(async move {
            loop {
                let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
                    tokio::time::sleep(Duration::from_millis(5)).await;
                    continue;
                };
                let mut buf = [0u8; 256];
                while matches!(stream.read(&mut buf).await, Ok(1..)) {}
                reopened.fetch_add(1, Ordering::Relaxed);
            }
        });
    }
    tokio::time::sleep(SETTLE).await;
    let before = reopened.load(Ordering::Relaxed);
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
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let reopened = reopened.load(Ordering::Relaxed) - before;
    crowd.shutdown().await;
    Ok(Row {
        held,
        probes: results,
        reopened,
    })
}
