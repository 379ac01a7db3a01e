//! User-space instructions per `read_output`, counted by valgrind
//! (cachegrind, no cache simulation), for the adapter and the floor, on
//! the floor phase's three paths: stdio, HTTP with one keep-alive client,
//! HTTP with 32. Unlike CPU time, the count does not move with the
//! machine's load, so a change of a few percent shows in one run. Each
//! server runs twice under valgrind, once with a baseline of calls (none
//! over stdio; one per client over HTTP, so the connections' set-up is in
//! both) and once with `calls` more; the difference over `calls` leaves
//! start-up, connections and exit out. The kernel's share (system calls,
//! wake-ups) is not counted: the syscall counts show it is the same for
//! both.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::Res;
use crate::http::HttpClient;
use crate::latency::{self, Expect};
use crate::stdio::StdioAdapter;
use crate::world::{self, Bins, HttpAdapter, Sim};

/// valgrind is slow (tens of times); a server's exit, with its counts
/// written, gets this long.
const EXIT_WITHIN: Duration = Duration::from_secs(120);

/// Instructions per call on each path: adapter, floor.
#[derive(Debug, Clone, Copy)]
pub struct Counts {
    pub stdio: [f64; 2],
    pub http1: [f64; 2],
    pub http32: [f64; 2],
}

/// The servers to count: the adapter's stdio config, the bearer token of
/// its HTTP runs (their configs are the floor phase's), the simulator,
/// and the crowd's size and the floor's hc connections for it.
pub struct Servers<'a> {
    pub bins: &'a Bins,
    pub stdio_config: &'a Path,
    pub token: &'a str,
    pub sim: &'a Sim,
    pub crowd: usize,
    pub crowd_conns: usize,
}

/// Instructions per call on the three paths. `None` without valgrind.
pub async fn per_call(
    servers: &Servers<'_>,
    expect: &Expect<'_>,
    dir: &Path,
    calls: usize,
) -> Res<Option<Counts>> {
    if !available().await {
        return Ok(None);
    }
    let mut counts = Counts {
        stdio: [0.0; 2],
        http1: [0.0; 2],
        http32: [0.0; 2],
    };
    for server in 0..2 {
        counts.stdio[server] = stdio(servers, server, expect, dir, calls).await?;
        counts.http1[server] = http(servers, server, 1, expect, dir, calls).await?;
        counts.http32[server] = http(servers, server, servers.crowd, expect, dir, calls).await?;
    }
    Ok(Some(counts))
}

fn valgrind(out: &Path) -> Vec<String> {
    vec![
        "--tool=cachegrind".into(),
        "--cache-sim=no".into(),
        format!("--cachegrind-out-file={}", out.display()),
    ]
}

/// Server 0 is the adapter, 1 the floor.
async fn stdio(
    servers: &Servers<'_>,
    server: usize,
    expect: &Expect<'_>,
    dir: &Path,
    calls: usize,
) -> Res<f64> {
    let mut counted = [0u64; 2];
    for (run, n) in [0, calls].into_iter().enumerate() {
        let out = dir.join(format!("cachegrind-stdio-{server}-{n}.out"));
        let mut command = Command::new("valgrind");
        command.args(valgrind(&out));
        if server == 0 {
            command
                .arg(&servers.bins.adapter)
                .args(["serve", "--config"])
                .arg(servers.stdio_config);
        } else {
            command.arg(servers.bins.floor()?).args(world::floor_args(
                &servers.sim.socket,
                1,
                "stdio",
            ));
        }
        let log = dir.join(format!("cachegrind-stdio-{server}-{n}.err"));
        let mut stdio = StdioAdapter::spawn_command(command, &log)?;
        stdio.initialize().await?;
        latency::stdio(&mut stdio, expect, 0, n).await?;
        stdio.close_within(EXIT_WITHIN).await?;
        counted[run] = summary(&out)?;
    }
    Ok(counted[1].saturating_sub(counted[0]) as f64 / calls.max(1) as f64)
}

/// `clients` keep-alive clients, each making one call and then its share
/// of `calls` (rounded up to a multiple of `clients`), against the server
/// under valgrind; the floor on as many hc connections as the adapter's
/// pool at more than one client.
async fn http(
    servers: &Servers<'_>,
    server: usize,
    clients: usize,
    expect: &Expect<'_>,
    dir: &Path,
    calls: usize,
) -> Res<f64> {
    let each = calls.div_ceil(clients).max(1);
    let mut counted = [0u64; 2];
    for (run, n) in [0, each].into_iter().enumerate() {
        let out = dir.join(format!("cachegrind-http{clients}-{server}-{n}.out"));
        let log = dir.join(format!("cachegrind-http{clients}-{server}-{n}.err"));
        let (listener, port) = world::bind_port()?;
        let valgrind_bin = Path::new("valgrind");
        let mut command = hc_sim::testing::command_with_listener(valgrind_bin, &listener);
        command.args(valgrind(&out));
        if server == 0 {
            let name = format!("valgrind-http{clients}-{n}.json");
            let config = world::http_config(servers.sim, port, serde_json::json!({}));
            let config = world::write_config(dir, &name, &config)?;
            command
                .arg(&servers.bins.adapter)
                .args(["serve", "--config"])
                .arg(config)
                .env("HERDR_MCP_TOKEN", servers.token);
        } else {
            let conns = if clients > 1 { servers.crowd_conns } else { 1 };
            command.arg(servers.bins.floor()?).args(world::floor_args(
                &servers.sim.socket,
                conns,
                "http",
            ));
        }
        let running = HttpAdapter::spawn_command(command, listener, &log)?;
        let mut tasks = tokio::task::JoinSet::new();
        for _ in 0..clients {
            let mut client = HttpClient::new(port, servers.token);
            let (address, text) = (expect.address.to_owned(), expect.text.to_owned());
            tasks.spawn(async move {
                let expect = Expect {
                    address: &address,
                    text: &text,
                };
                latency::http(&mut client, &expect, 1, n).await.map(drop)
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.map_err(|e| format!("an HTTP client under valgrind failed: {e}"))??;
        }
        running.stop_within(EXIT_WITHIN)?;
        counted[run] = summary(&out)?;
    }
    Ok(counted[1].saturating_sub(counted[0]) as f64 / (each * clients) as f64)
}

async fn available() -> bool {
    Command::new("valgrind")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .await
        .is_ok_and(|s| s.success())
}

/// The `summary:` line of a cachegrind output file: instructions executed.
fn summary(out: &Path) -> Res<u64> {
    let text =
        std::fs::read_to_string(out).map_err(|e| format!("cachegrind {}: {e}", out.display()))?;
    text.lines()
        .find_map(|line| line.strip_prefix("summary:"))
        .and_then(|n| n.trim().parse().ok())
        .ok_or_else(|| format!("cachegrind {}: no summary line", out.display()))
}
