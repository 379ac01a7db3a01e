//! `loadgen bench --only floor` (and the last phase of the full bench): the
//! adapter against the floor of its own stack, `examples/floor`, a minimal
//! rmcp server on the same crates with one `read_output` tool and no
//! checks, plus the do-nothing stdio relay (the floor of any stdio
//! adapter). Three paths: stdio with one client, HTTP with one client
//! (the floor on one hc connection), HTTP with 32 clients (the floor on
//! eight, as many as the adapter's pool). The servers take turns within
//! each round, the first one changing every round, so background load
//! hits them alike; each figure is the median of the rounds' figures, and
//! the report gives the ratios adapter / floor, which the machine's speed
//! mostly cancels out of. CPU is the server process's own (every thread,
//! to the nanosecond); syscalls per call come from `strace -c -f` on
//! separate, untimed calls, and user-space instructions per call on each
//! path from valgrind, which the machine's load does not move.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::direct::DirectConn;
use crate::http::HttpClient;
use crate::latency::{self, Expect};
use crate::relay::Relay;
use crate::stdio::StdioAdapter;
use crate::syscalls::{self, Syscalls};

mod report;
use crate::throughput::{self, Pids};
use crate::world::{self, Bins, HttpAdapter, Sim};
use crate::{Res, procfs, progress, stats};

#[derive(Debug, Clone)]
pub struct Options {
    /// Rounds; each server takes one turn per path in each.
    pub rounds: usize,
    /// Lockstep calls per server and turn (stdio, HTTP with one client).
    pub calls: usize,
    /// Length of one turn at 32 clients.
    pub crowd_turn: Duration,
    /// Lockstep calls traced per server for the syscall counts.
    pub traced_calls: usize,
}

/// Concurrent HTTP clients of the crowded path.
const CROWD: usize = 32;
/// hc connections of the floor on the crowded path: the adapter's pool size.
const CROWD_CONNS: usize = 8;
/// Untimed calls per server before the first round.
const WARMUP: usize = 300;

/// One server's figures in one turn.
#[derive(Debug, Clone, Copy, Default)]
struct Turn {
    cpu_per_call: Duration,
    median: Duration,
    per_second: f64,
}

/// One server's turns on one path, and its syscalls per call.
#[derive(Debug, Default)]
struct Column {
    turns: Vec<Turn>,
    syscalls: Option<Syscalls>,
    /// Heap allocations per call.
    allocations: Option<f64>,
}

impl Column {
    fn cpu(&self) -> Duration {
        median_of(self.turns.iter().map(|t| t.cpu_per_call).collect())
    }
    fn wall(&self) -> Duration {
        median_of(self.turns.iter().map(|t| t.median).collect())
    }
    fn per_second(&self) -> f64 {
        let mut rates: Vec<f64> = self.turns.iter().map(|t| t.per_second).collect();
        rates.sort_by(f64::total_cmp);
        rates.get(rates.len() / 2).copied().unwrap_or(0.0)
    }
}

fn median_of(mut samples: Vec<Duration>) -> Duration {
    stats::median(&mut samples)
}

/// What the phase measured, ready to print.
pub struct Floor {
    rounds: usize,
    calls: usize,
    crowd_turn: Duration,
    /// stdio: adapter, floor, relay.
    stdio: [Column; 3],
    /// HTTP with one client: adapter, floor.
    http1: [Column; 2],
    /// HTTP with 32 clients: adapter, floor.
    http32: [Column; 2],
    /// Idle over stdio after initialize: adapter, floor (VmRSS, KiB).
    idle_stdio_kib: [u64; 2],
    /// The same split into (RssAnon, RssFile), KiB.
    idle_stdio_split: [(u64, u64); 2],
    /// Highest VmRSS sampled at 32 HTTP clients: adapter, floor (KiB).
    crowd_kib: [u64; 2],
    /// Idle over HTTP in token mode, listening: adapter, floor on one hc
    /// connection (VmRSS, KiB).
    idle_http_kib: [u64; 2],
    /// The binaries' sizes on disk: adapter, floor (bytes).
    binary_bytes: [u64; 2],
    /// User-space instructions per call on each path (valgrind).
    instructions: Option<crate::instructions::Counts>,
    /// Calls counted for `instructions`.
    counted_calls: usize,
}

pub async fn run(bins: &Bins, o: &Options) -> Res<Floor> {
    // LOADGEN_KEEP_DIR keeps the phase's files (the valgrind outputs, for
    // `cg_annotate` or `cg_diff` by function) in that folder; otherwise
    // they go in a temporary one.
    let temporary;
    let kept = std::env::var_os("LOADGEN_KEEP_DIR").map(std::path::PathBuf::from);
    let dir = match &kept {
        Some(kept) => {
            std::fs::create_dir_all(kept).map_err(|e| format!("{}: {e}", kept.display()))?;
            kept.as_path()
        }
        None => {
            temporary = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
            temporary.path()
        }
    };
    progress("floor: starting hc-sim (1 agent, 1 shell)");
    let sim = Sim::start(bins, dir, "hc", &["--agents", "1", "--shells", "1"])?;
    let mut direct = DirectConn::connect(&sim.socket).await?;
    let (_, shell) = crate::bench::terminals(&mut direct).await?;
    let text = crate::bench::fill_screen(&sim, &mut direct, &shell).await?;
    drop(direct);
    let expect = Expect {
        address: &shell,
        text: &text,
    };
    let token = world::random_token()?;
    let config = world::write_config(dir, "stdio.json", &world::stdio_config(&sim, json!({})))?;
    let mut stdio = [
        StdioAdapter::spawn(bins, &config, &dir.join("stdio.err"))?,
        StdioAdapter::spawn_floor(bins, &sim.socket, 1, &dir.join("floor-stdio.err"))?,
    ];
    for server in &mut stdio {
        server.initialize().await?;
    }
    let mut relay = Relay::spawn(&sim.socket)?;
    let (listener, adapter_port) = world::bind_port()?;
    let http_config = world::write_config(
        dir,
        "http.json",
        &world::http_config(&sim, adapter_port, json!({})),
    )?;
    let adapter_http =
        HttpAdapter::start(bins, &http_config, listener, &token, &dir.join("http.err"))?;
    let (listener, floor1_port) = world::bind_port()?;
    let floor1 = HttpAdapter::start_floor(bins, &sim.socket, 1, listener, &dir.join("f1.err"))?;
    let (listener, floor8_port) = world::bind_port()?;
    let floor8 = HttpAdapter::start_floor(
        bins,
        &sim.socket,
        CROWD_CONNS,
        listener,
        &dir.join("f8.err"),
    )?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let idle_stdio_kib = [
        procfs::mem(stdio[0].pid())?.rss_kib,
        procfs::mem(stdio[1].pid())?.rss_kib,
    ];
    let idle_stdio_split = [
        procfs::rss_split(stdio[0].pid())?,
        procfs::rss_split(stdio[1].pid())?,
    ];
    let idle_http_kib = [
        procfs::mem(adapter_http.pid())?.rss_kib,
        procfs::mem(floor1.pid())?.rss_kib,
    ];
    let size = |path: &std::path::Path| {
        std::fs::metadata(path)
            .map(|m| m.len())
            .map_err(|e| format!("{}: {e}", path.display()))
    };
    let binary_bytes = [size(&bins.adapter)?, size(bins.floor()?)?];
    let mut http1 = [
        HttpClient::new(adapter_port, &token),
        HttpClient::new(floor1_port, &token),
    ];
    let http_pids = [adapter_http.pid(), floor1.pid()];
    let crowd = [
        (adapter_port, adapter_http.pid()),
        (floor8_port, floor8.pid()),
    ];

    progress("floor: warming up");
    for server in &mut stdio {
        latency::stdio(server, &expect, WARMUP, 0).await?;
    }
    latency::relay(&mut relay, &expect, WARMUP, 0).await?;
    for client in &mut http1 {
        latency::http(client, &expect, WARMUP, 0).await?;
    }

    let mut floor = Floor {
        rounds: o.rounds,
        calls: o.calls,
        crowd_turn: o.crowd_turn,
        stdio: Default::default(),
        http1: Default::default(),
        http32: Default::default(),
        idle_stdio_kib,
        idle_stdio_split,
        idle_http_kib,
        binary_bytes,
        crowd_kib: [0; 2],
        instructions: None,
        counted_calls: o.traced_calls,
    };
    let pids = |pid| Pids {
        adapter: Some(pid),
        sim: sim.pid(),
        loadgen: std::process::id(),
    };
    // One turn of the 32 clients against the server on `port` (pid `pid`).
    let crowd_run = |port, pid| {
        throughput::http(
            port,
            std::slice::from_ref(&token),
            &shell,
            CROWD,
            o.crowd_turn,
            pids(pid),
        )
    };
    for round in 0..o.rounds {
        progress(&format!(
            "floor: round {} of {}: stdio, HTTP, HTTP at {CROWD} clients",
            round + 1,
            o.rounds
        ));
        for i in rotation(round, 3) {
            let turn = if i == 2 {
                timed(
                    relay.pid(),
                    o.calls,
                    latency::relay(&mut relay, &expect, 0, o.calls),
                )
                .await?
            } else {
                let pid = stdio[i].pid();
                let server = &mut stdio[i];
                timed(pid, o.calls, latency::stdio(server, &expect, 0, o.calls)).await?
            };
            floor.stdio[i].turns.push(turn);
        }
        for i in rotation(round, 2) {
            let client = &mut http1[i];
            // The adapter closes a keep-alive connection idle for 5 s (the
            // other turns take longer): one untimed call reconnects.
            if latency::http(client, &expect, 1, 0).await.is_err() {
                latency::http(client, &expect, 1, 0).await?;
            }
            let turn = timed(
                http_pids[i],
                o.calls,
                latency::http(client, &expect, 0, o.calls),
            )
            .await?;
            floor.http1[i].turns.push(turn);
        }
        for i in rotation(round, 2) {
            let (port, pid) = crowd[i];
            let cpu_before = procfs::cpu_exact(pid);
            let run = crowd_run(port, pid).await?;
            if let Some(e) = &run.first_error {
                return Err(format!(
                    "floor: {} errors at {CROWD} clients: {e}",
                    run.errors
                ));
            }
            let cpu = procfs::cpu_exact(pid).saturating_sub(cpu_before);
            floor.crowd_kib[i] = floor.crowd_kib[i].max(run.peak_rss_kib);
            floor.http32[i].turns.push(Turn {
                cpu_per_call: cpu / u32::try_from(run.calls.max(1)).unwrap_or(u32::MAX),
                median: run.median,
                per_second: run.per_second(),
            });
        }
    }

    progress("floor: syscalls per call (strace -c -f)");
    let n = o.traced_calls;
    for i in 0..2 {
        let server = &mut stdio[i];
        let pid = server.pid();
        floor.stdio[i].syscalls =
            syscalls::count(pid, dir, n, latency::stdio(server, &expect, 0, n)).await?;
        let client = &mut http1[i];
        if latency::http(client, &expect, 1, 0).await.is_err() {
            latency::http(client, &expect, 1, 0).await?;
        }
        floor.http1[i].syscalls =
            syscalls::count(http_pids[i], dir, n, latency::http(client, &expect, 0, n)).await?;
        let (port, pid) = crowd[i];
        floor.http32[i].syscalls = syscalls::count_run(pid, dir, async {
            crowd_run(port, pid).await.map(|run| run.calls)
        })
        .await?;
    }
    progress("floor: heap allocations per call (perf stat on libc's allocator)");
    for i in 0..2 {
        let server = &mut stdio[i];
        let pid = server.pid();
        floor.stdio[i].allocations = syscalls::allocations(pid, dir, async {
            latency::stdio(server, &expect, 0, n)
                .await
                .map(|_| n as u64)
        })
        .await?;
        let client = &mut http1[i];
        if latency::http(client, &expect, 1, 0).await.is_err() {
            latency::http(client, &expect, 1, 0).await?;
        }
        floor.http1[i].allocations = syscalls::allocations(http_pids[i], dir, async {
            latency::http(client, &expect, 0, n).await.map(|_| n as u64)
        })
        .await?;
        let (port, pid) = crowd[i];
        floor.http32[i].allocations = syscalls::allocations(pid, dir, async {
            crowd_run(port, pid).await.map(|run| run.calls)
        })
        .await?;
    }
    floor.stdio[2].syscalls = syscalls::count(
        relay.pid(),
        dir,
        n,
        latency::relay(&mut relay, &expect, 0, n),
    )
    .await?;
    for server in stdio {
        server.close().await?;
    }
    drop((http1, adapter_http, floor1, floor8));
    progress("floor: instructions per call on the three paths (valgrind, when installed)");
    let servers = crate::instructions::Servers {
        bins,
        stdio_config: &config,
        token: &token,
        sim: &sim,
        crowd: CROWD,
        crowd_conns: CROWD_CONNS,
    };
    floor.instructions = crate::instructions::per_call(&servers, &expect, dir, n).await?;
    Ok(floor)
}

/// `n` turns starting at a different one each round.
fn rotation(round: usize, n: usize) -> impl Iterator<Item = usize> {
    (0..n).map(move |k| (round + k) % n)
}

/// One turn of `calls` lockstep calls: the server's CPU per call, the
/// median call and the calls per second.
async fn timed(
    pid: u32,
    calls: usize,
    work: impl Future<Output = Res<Vec<Duration>>>,
) -> Res<Turn> {
    let cpu_before = procfs::cpu_exact(pid);
    let started = Instant::now();
    let mut samples = work.await?;
    let elapsed = started.elapsed();
    let cpu = procfs::cpu_exact(pid).saturating_sub(cpu_before);
    let calls = u32::try_from(calls.max(1)).unwrap_or(u32::MAX);
    Ok(Turn {
        cpu_per_call: cpu / calls,
        median: stats::median(&mut samples),
        per_second: f64::from(calls) / elapsed.as_secs_f64().max(1e-9),
    })
}
