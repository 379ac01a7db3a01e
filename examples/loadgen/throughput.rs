//! Calls per second at a given concurrency: `C` HTTP clients, each on its
//! own keep-alive connection in lockstep, against `C` tasks sharing the
//! adapter's own 8-connection pool ([`HcClient`]) straight on the hc socket.
//! Each run also charges the CPU time of every process to the calls made.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use herdr_core_mcp::HcClient;
use tokio::sync::{Barrier, Mutex};

use crate::Res;
use crate::http::HttpClient;
use crate::procfs;

/// How long an HTTP client pauses after a 429 before its next call.
const RATE_LIMITED_PAUSE: Duration = Duration::from_millis(1);

/// The processes whose CPU time a run accounts for.
#[derive(Debug, Clone, Copy)]
pub struct Pids {
    pub adapter: Option<u32>,
    pub sim: u32,
    pub loadgen: u32,
}

#[derive(Debug, Default)]
pub struct Run {
    pub calls: u64,
    pub elapsed: Duration,
    /// HTTP 429 answers (the adapter's rate limit), not counted as calls.
    pub rate_limited: u64,
    pub errors: u64,
    pub first_error: Option<String>,
    /// CPU time per successful call: adapter, simulator, load generator.
    pub cpu_per_call: [Duration; 3],
    /// Highest VmRSS of the adapter sampled during the run (KiB).
    pub peak_rss_kib: u64,
    /// Median time of one call, from request written to answer read (HTTP
    /// runs only).
    pub median: Duration,
}

impl Run {
    pub fn per_second(&self) -> f64 {
        self.calls as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

#[derive(Default)]
struct Tally {
    calls: AtomicU64,
    rate_limited: AtomicU64,
    errors: AtomicU64,
    first_error: Mutex<Option<String>>,
    latencies: Mutex<Vec<Duration>>,
}

impl Tally {
    async fn error(&self, e: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.first_error.lock().await.get_or_insert(e);
    }
}

/// `concurrency` tasks reading `address` through one shared pool.
pub async fn direct(
    client: Arc<HcClient>,
    address: &str,
    concurrency: usize,
    duration: Duration,
    pids: Pids,
) -> Res<Run> {
    let tally = Arc::new(Tally::default());
    let barrier = Arc::new(Barrier::new(concurrency + 1));
    let mut tasks = Vec::new();
    for _ in 0..concurrency {
        let (client, tally, barrier, address) = (
            Arc::clone(&client),
            Arc::clone(&tally),
            Arc::clone(&barrier),
            address.to_owned(),
        );
        tasks.push(tokio::spawn(async move {
            // Warm the pool before the clock starts.
            let _ = client.read(&address).await;
            barrier.wait().await;
            let deadline = Instant::now() + duration;
            while Instant::now() < deadline {
                match client.read(&address).await {
                    Ok(answer) if answer.value.address == address => {
                        tally.calls.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok(_) => {
                        tally
                            .error("terminal.read answered another terminal".into())
                            .await
                    }
                    Err(e) => tally.error(e.to_string()).await,
                }
            }
        }));
    }
    measure(tasks, barrier, tally, pids).await
}

/// `concurrency` HTTP clients calling `read_output` on `address`; client
/// `i` sends `tokens[i % tokens.len()]`.
pub async fn http(
    port: u16,
    tokens: &[String],
    address: &str,
    concurrency: usize,
    duration: Duration,
    pids: Pids,
) -> Res<Run> {
    let tally = Arc::new(Tally::default());
    let barrier = Arc::new(Barrier::new(concurrency + 1));
    let arguments = format!(r#"{{"address":"{address}","max_chars":32768}}"#);
    let mut tasks = Vec::new();
    if tokens.is_empty() {
        return Err("no bearer token for the HTTP clients".into());
    }
    for i in 0..concurrency {
        let mut client = HttpClient::new(port, &tokens[i % tokens.len()]);
        let (tally, barrier, arguments) =
            (Arc::clone(&tally), Arc::clone(&barrier), arguments.clone());
        tasks.push(tokio::spawn(async move {
            // Open the keep-alive connection before the clock starts.
            let warm = client.call_tool("read_output", &arguments).await;
            barrier.wait().await;
            if let Err(e) = warm {
                tally.error(format!("warm-up call: {e}")).await;
                return;
            }
            let deadline = Instant::now() + duration;
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let started = Instant::now();
                let answer = client.call_tool("read_output", &arguments).await;
                latencies.push(started.elapsed());
                match answer {
                    Ok((200, _)) if !client.text().contains(r#""isError":true"#) => {
                        tally.calls.fetch_add(1, Ordering::Relaxed);
                    }
                    Ok((429, _)) => {
                        tally.rate_limited.fetch_add(1, Ordering::Relaxed);
                        // A sane client backs off instead of hammering the gate.
                        tokio::time::sleep(RATE_LIMITED_PAUSE).await;
                    }
                    Ok((status, _)) => {
                        let body: String = client.text().chars().take(300).collect();
                        tally.error(format!("HTTP {status}: {body}")).await;
                    }
                    Err(e) => tally.error(e).await,
                }
            }
            tally.latencies.lock().await.extend(latencies);
        }));
    }
    measure(tasks, barrier, tally, pids).await
}

async fn measure(
    tasks: Vec<tokio::task::JoinHandle<()>>,
    barrier: Arc<Barrier>,
    tally: Arc<Tally>,
    pids: Pids,
) -> Res<Run> {
    let all = [pids.adapter.unwrap_or(0), pids.sim, pids.loadgen];
    barrier.wait().await;
    let started = Instant::now();
    let cpu_before = procfs::cpus(&all);
    let running = Arc::new(AtomicBool::new(true));
    let peak = Arc::new(AtomicU64::new(0));
    let sampler = pids.adapter.map(|pid| {
        let (running, peak) = (Arc::clone(&running), Arc::clone(&peak));
        tokio::spawn(async move {
            while running.load(Ordering::Relaxed) {
                if let Ok(mem) = procfs::mem(pid) {
                    peak.fetch_max(mem.rss_kib, Ordering::Relaxed);
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        })
    });
    for task in tasks {
        task.await.map_err(|e| format!("a load task failed: {e}"))?;
    }
    let elapsed = started.elapsed();
    let cpu_after = procfs::cpus(&all);
    running.store(false, Ordering::Relaxed);
    if let Some(sampler) = sampler {
        let _ = sampler.await;
    }
    let calls = tally.calls.load(Ordering::Relaxed);
    let per_call = |i: usize| {
        let used = cpu_after[i].saturating_sub(cpu_before[i]);
        used.checked_div(u32::try_from(calls.max(1)).unwrap_or(u32::MAX))
            .unwrap_or_default()
    };
    Ok(Run {
        calls,
        elapsed,
        rate_limited: tally.rate_limited.load(Ordering::Relaxed),
        errors: tally.errors.load(Ordering::Relaxed),
        first_error: tally.first_error.lock().await.take(),
        cpu_per_call: [per_call(0), per_call(1), per_call(2)],
        peak_rss_kib: peak.load(Ordering::Relaxed),
        median: crate::stats::median(&mut tally.latencies.lock().await),
    })
}
