//! Floods: a thousand concurrent unauthenticated POSTs all get 401 without
//! the adapter's memory growing, and idle sockets (also under a low
//! descriptor limit) cannot starve an authorised client.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::io::AsyncReadExt;
use tokio::net::TcpStream;

use crate::support::http::request::Req;
use crate::support::http::response::exchange;
use crate::support::http::{http_config, serve_http, spawn_http};
use crate::support::mcp;
use crate::support::{Sim, SimOptions};

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
    let _ = rlimit::increase_nofile_limit(wanted);
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
/// the server closes them) until the returned guard is dropped. They run on
/// a thread and runtime of their own, as a flood from another process
/// would: the test's own client is never queued behind the crowd's tasks.
fn hold_idle_sockets(port: u16, count: usize) -> IdleSockets {
    let connected = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = Arc::clone(&connected);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let thread = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("the crowd's runtime");
        runtime.block_on(async move {
            let mut held = tokio::task::JoinSet::new();
            for _ in 0..count {
                let counter = Arc::clone(&counter);
                held.spawn(async move {
                    let mut first = true;
                    loop {
                        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)).await else {
                            // Backlog full: back off, not spin.
                            tokio::time::sleep(Duration::from_millis(10)).await;
                            continue;
                        };
                        if std::mem::take(&mut first) {
                            counter.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        let mut buf = [0u8; 64];
                        // Returns when the server closes it; then connect again.
                        while matches!(stream.read(&mut buf).await, Ok(1..)) {}
                    }
                });
            }
            // Dropping the set (and the runtime) closes every socket.
            let _ = stopped.await;
            held.abort_all();
        });
    });
    IdleSockets {
        stop: Some(stop),
        thread: Some(thread),
        connected,
    }
}

/// The idle-socket crowd: its thread, and how many of its sockets have
/// connected at least once.
struct IdleSockets {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    connected: Arc<std::sync::atomic::AtomicUsize>,
}

impl IdleSockets {
    /// Waits until every socket of the crowd has connected once.
    async fn all_connected(&self, count: usize) {
        crate::support::eventually("every idle socket connected once", async || {
            (self.connected.load(std::sync::atomic::Ordering::SeqCst) >= count).then_some(())
        })
        .await;
    }

    /// Stops the crowd and closes its sockets.
    fn abort(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl Drop for IdleSockets {
    fn drop(&mut self) {
        self.abort();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_unauthenticated_sockets_cannot_starve_an_authorised_client() {
    const IDLE: usize = 600;
    raise_fd_limit(8_192);
    let sim = Sim::start(SimOptions::default());
    let adapter = serve_http(&sim, json!({})).await;
    let port = adapter.port;
    let mut holder = hold_idle_sockets(port, IDLE);
    holder.all_connected(IDLE).await;
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
    let mut holder = hold_idle_sockets(port, IDLE);
    crate::support::eventually("the idle sockets to take their share", async || {
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
