//! `loadgen bench`: every figure of the performance table, measured side by
//! side in one run against one simulator. The order is: latency (direct,
//! stdio and HTTP interleaved in rounds, so background load hits all three
//! alike), memory after 10,000 calls, throughput per concurrency level
//! (direct then HTTP at each level), OAuth against token mode at 32 clients
//! (interleaved cells, `oauth`), starvation (an authorised client's
//! fresh connection beside crowds of idle sockets, then beside the
//! slow-body flood), output waits and pattern costs, `list_sessions` and
//! a fleet wait over machines against one core (`machines`), start-up,
//! then the two byte-cap cases.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use herdr_core_mcp::HcClient;
use serde_json::json;

use crate::caps;
use crate::direct::DirectConn;
use crate::http::HttpClient;
use crate::latency::{self, Expect};
use crate::procfs::{self, Mem};
use crate::relay::Relay;
use crate::report::{Cap, MemRow, Results};
use crate::slowbody::{self, Variant};
use crate::stats::Latency;
use crate::stdio::{self, StdioAdapter};
use crate::throughput::{self, Pids};
use crate::world::{self, Bins, HttpAdapter, Sim};
use crate::{Res, progress};

#[derive(Debug, Clone)]
pub struct Options {
    /// Timed lockstep calls per path and screen.
    pub latency_calls: usize,
    pub warmup: usize,
    /// Calls each adapter has served when "after N calls" memory is read.
    pub calls: usize,
    pub level: Duration,
    pub levels: Vec<usize>,
    pub startup_runs: usize,
    pub cap_runs: usize,
    /// Idle unauthenticated sockets held open in each starvation run.
    pub starve_crowds: Vec<usize>,
    /// Fresh authorised connections timed in each starvation run.
    pub starve_probes: usize,
    /// Slow-body connections in each slow-body flood run.
    pub slow_body_crowd: usize,
    /// Fresh authorised connections timed in each slow-body flood run.
    pub slow_body_probes: usize,
    /// When the awaited line is printed after a wait_for_output begins.
    pub wait_delays: Vec<Duration>,
    pub wait_rounds: usize,
    /// The OAuth rows (`pairs` 0 skips them).
    pub oauth: crate::oauth::Options,
    /// Machines against one core (`rounds` 0 skips them).
    pub machines: crate::machines::Options,
}

/// Terminals of the simulator the output waits run on, one wait each.
const WAIT_TERMINALS: usize = 10;

/// Rounds the latency samples are split into (direct, stdio, HTTP in turn).
const ROUNDS: usize = 5;

/// Fills the shell's screen: 60 rows of ~95 characters, some not ASCII,
/// so the last 40 stay on screen.
const FILL_COMMAND: &str = "i=0; while [ $i -lt 60 ]; do echo \"row $i: the quick brown fox \
jumps over the lazy dog; 0123456789 ABCDEFGHIJKLMNOPQRSTUVWXYZ é日本\"; i=$((i+1)); done\r";

pub async fn run(bins: &Bins, o: &Options) -> Res<Results> {
    let dir = tempfile::tempdir().map_err(|e| format!("temp dir: {e}"))?;
    let dir = dir.path();
    progress("starting hc-sim (1 agent, 1 shell)");
    let sim = Sim::start(bins, dir, "hc", &["--agents", "1", "--shells", "1"])?;
    let mut direct = DirectConn::connect(&sim.socket).await?;
    let (agent, shell) = terminals(&mut direct).await?;
    let full_text = fill_screen(&sim, &mut direct, &shell).await?;
    direct.read_screen(&agent).await?;
    let small_text = direct.result()?["text"].as_str().unwrap_or("").to_owned();
    let screens = [
        Expect {
            address: &shell,
            text: &full_text,
        },
        Expect {
            address: &agent,
            text: &small_text,
        },
    ];
    let token = world::random_token()?;
    let (listener, port) = world::bind_port()?;
    let stdio_config =
        world::write_config(dir, "stdio.json", &world::stdio_config(&sim, json!({})))?;
    let http_config =
        world::write_config(dir, "http.json", &world::http_config(&sim, port, json!({})))?;

    progress("starting the adapter over stdio and over HTTP");
    let mut stdio = StdioAdapter::spawn(bins, &stdio_config, &dir.join("stdio.err"))?;
    stdio.initialize().await?;
    let http = HttpAdapter::start(bins, &http_config, listener, &token, &dir.join("http.err"))?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut mem = vec![
        MemRow::new(
            "idle (after initialize)",
            "stdio",
            procfs::mem(stdio.pid())?,
        ),
        MemRow::new("idle (listening)", "HTTP", procfs::mem(http.pid())?),
    ];

    progress(&format!(
        "latency: {} timed calls per path and screen, in {ROUNDS} rounds",
        o.latency_calls
    ));
    let mut client = HttpClient::new(port, &token);
    let mut samples: [[Vec<Duration>; 4]; 2] = Default::default();
    let mut relay = Relay::spawn(&sim.socket)?;
    let per_round = o.latency_calls.div_ceil(ROUNDS);
    let lockstep = [stdio.pid(), http.pid(), relay.pid()];
    let cpu_before = procfs::cpus(&lockstep);
    for round in 0..ROUNDS {
        let warmup = if round == 0 { o.warmup } else { 0 };
        for (s, expect) in screens.iter().enumerate() {
            samples[s][0].extend(latency::direct(&mut direct, expect, warmup, per_round).await?);
            samples[s][1].extend(latency::stdio(&mut stdio, expect, warmup, per_round).await?);
            samples[s][2].extend(latency::http(&mut client, expect, warmup, per_round).await?);
            samples[s][3].extend(latency::relay(&mut relay, expect, warmup, per_round).await?);
        }
    }
    let latencies = samples.map(|paths| paths.map(|mut s| Latency::of(&mut s)));
    let served = 2 * (o.warmup + per_round * ROUNDS);
    let cpu_after = procfs::cpus(&lockstep);
    let lockstep_cpu = [0, 1, 2].map(|i| {
        cpu_after[i].saturating_sub(cpu_before[i])
            / u32::try_from(served).unwrap_or(u32::MAX).max(1)
    });
    let rest = o.calls.saturating_sub(served);
    latency::stdio(&mut stdio, &screens[0], rest, 0).await?;
    latency::http(&mut client, &screens[0], rest, 0).await?;
    drop(client);
    let calls_done = served.max(o.calls);
    mem.push(MemRow::new(
        &format!("after {} calls", crate::stats::count(calls_done as f64)),
        "stdio",
        procfs::mem(stdio.pid())?,
    ));
    mem.push(MemRow::new(
        &format!("after {} calls", crate::stats::count(calls_done as f64)),
        "HTTP",
        procfs::mem(http.pid())?,
    ));

    let pool = Arc::new(HcClient::new(&sim.socket, Duration::from_secs(15)));
    let pids = Pids {
        adapter: None,
        sim: sim.pid(),
        loadgen: std::process::id(),
    };
    let mut levels = Vec::new();
    for &c in &o.levels {
        progress(&format!(
            "throughput at {c} concurrent: direct, then HTTP, {} s each",
            o.level.as_secs_f64()
        ));
        let direct_run = throughput::direct(Arc::clone(&pool), &shell, c, o.level, pids).await?;
        let http_pids = Pids {
            adapter: Some(http.pid()),
            ..pids
        };
        let http_run = throughput::http(
            port,
            std::slice::from_ref(&token),
            &shell,
            c,
            o.level,
            http_pids,
        )
        .await?;
        if c == *o.levels.iter().max().unwrap_or(&0) {
            let now = procfs::mem(http.pid())?;
            mem.push(MemRow::new(
                &format!("under {c}-client load (highest VmRSS sampled every 50 ms; VmHWM after)"),
                "HTTP",
                Mem {
                    rss_kib: http_run.peak_rss_kib,
                    hwm_kib: now.hwm_kib,
                },
            ));
        }
        levels.push((c, direct_run, http_run));
    }
    pool.close();

    let oauth = if o.oauth.pairs > 0 {
        Some(crate::oauth::compare(bins, dir, &sim, &shell, &token, &o.oauth).await?)
    } else {
        None
    };

    let mut starvation = Vec::new();
    for &held in &o.starve_crowds {
        starvation.push(crate::starve::measure(port, &token, held, o.starve_probes).await?);
    }
    let mut slow_body = Vec::new();
    for variant in [Variant::NoToken, Variant::WrongHost] {
        let crowd = o.slow_body_crowd;
        slow_body.push(slowbody::measure(port, &token, variant, crowd, o.slow_body_probes).await?);
    }

    progress(&format!(
        "starting hc-sim ({WAIT_TERMINALS} agents) and an adapter for output waits"
    ));
    let waits_sim = Sim::start(
        bins,
        dir,
        "waits",
        &["--agents", &WAIT_TERMINALS.to_string()],
    )?;
    let (waits_listener, waits_port) = world::bind_port()?;
    let waits_config = world::write_config(
        dir,
        "waits.json",
        &world::http_config(&waits_sim, waits_port, json!({})),
    )?;
    let waits_http = HttpAdapter::start(
        bins,
        &waits_config,
        waits_listener,
        &token,
        &dir.join("waits.err"),
    )?;
    let addresses: Vec<String> = HcClient::new(&waits_sim.socket, Duration::from_secs(5))
        .list(false)
        .await
        .map_err(|e| format!("listing the output-wait terminals: {e}"))?
        .value
        .terminals
        .into_iter()
        .map(|t| t.address)
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let output_waits = crate::waits::measure(
        &waits_sim,
        waits_port,
        &token,
        &addresses,
        &o.wait_delays,
        o.wait_rounds,
    )
    .await?;
    let pattern_costs = crate::patterns::costs()?;
    let stalling_before = crate::patterns::stalling_cost_before()?;
    let beside_costly_waits = crate::patterns::beside_waits(
        &waits_sim,
        waits_port,
        &token,
        &addresses[0],
        &addresses[1..3],
    )
    .await?;
    drop(waits_http);
    drop(waits_sim);

    let machines = if o.machines.rounds > 0 {
        Some(crate::machines::run(bins, &o.machines).await?)
    } else {
        None
    };

    progress(&format!(
        "start-up: {} spawns to the initialize answer",
        o.startup_runs
    ));
    let log = dir.join("startup.err");
    stdio::time_startup(bins, &stdio_config, &log).await?; // warm the page cache
    let mut startup = Vec::new();
    for _ in 0..o.startup_runs {
        startup.push(stdio::time_startup(bins, &stdio_config, &log).await?);
    }

    progress("cap: a 100 MiB terminal.read reply");
    let before = procfs::mem(stdio.pid())?;
    sim.set_faults(&["oversized-reply:terminal.read"]).await?;
    let arguments = screens[0].arguments();
    let oversized = cap(&mut stdio, "read_output", &arguments, o.cap_runs, dir).await;
    sim.set_faults(&[]).await?;
    let id = stdio.call_tool("read_output", &arguments).await?;
    stdio::tool_ok(&stdio.line, id)
        .map_err(|e| format!("the adapter did not recover after the oversized replies: {e}"))?;
    let after = procfs::mem(stdio.pid())?;
    mem.push(MemRow::new(
        &format!(
            "before the 100 MiB replies (VmHWM {})",
            crate::stats::mib(before.hwm_kib)
        ),
        "stdio",
        before,
    ));
    mem.push(MemRow::new("after the 100 MiB replies", "stdio", after));
    stdio.close().await?;
    drop(http);
    drop(sim);

    progress("cap: list_sessions on a core with 10,000 terminals");
    let big = Sim::start(bins, dir, "big", &["--idle-records", "10000"])?;
    let mut direct = DirectConn::connect(&big.socket).await?;
    direct
        .call("terminal.list", r#"{"include_finished":false}"#)
        .await?;
    let list_reply_bytes = direct.line.len() as u64 + 1;
    let count = direct.result()?["terminals"].as_array().map_or(0, Vec::len);
    let big_config = world::write_config(dir, "big.json", &world::stdio_config(&big, json!({})))?;
    let mut adapter = StdioAdapter::spawn(bins, &big_config, &dir.join("big-stdio.err"))?;
    adapter.initialize().await?;
    let big_list = cap(&mut adapter, "list_sessions", "{}", o.cap_runs, dir).await;
    adapter.close().await?;

    Ok(Results {
        screen_chars: [full_text.chars().count(), small_text.chars().count()],
        latency: latencies,
        latency_calls: per_round * ROUNDS,
        lockstep_cpu,
        level: o.level,
        levels,
        oauth,
        memory: mem,
        startup,
        starvation,
        slow_body,
        output_waits,
        pattern_costs,
        stalling_before,
        beside_costly_waits,
        machines,
        oversized: oversized.with_note(
            "fault oversized-reply:terminal.read: a valid reply whose result is a 100 MiB string"
                .into(),
        ),
        big_list: big_list.with_note(format!(
            "{count} terminals: terminal.list reply of {}",
            crate::stats::bytes(list_reply_bytes)
        )),
    })
}

/// `runs` timed refusals, then one traced for the bytes read.
async fn cap(
    adapter: &mut StdioAdapter,
    tool: &str,
    arguments: &str,
    runs: usize,
    dir: &Path,
) -> Cap {
    let mut times = Vec::new();
    for _ in 0..runs {
        match caps::time_refusal(adapter, tool, arguments).await {
            Ok(t) => times.push(t),
            Err(e) => return Cap::failed(e),
        }
    }
    match caps::bytes_read(adapter, tool, arguments, dir).await {
        Ok(bytes) => Cap::ok(times, bytes),
        Err(e) => Cap::failed(e),
    }
}

/// The agent's and the shell's addresses.
pub async fn terminals(direct: &mut DirectConn) -> Res<(String, String)> {
    direct
        .call("terminal.list", r#"{"include_finished":false}"#)
        .await?;
    let list = direct.result()?;
    let find = |program: &str| -> Res<String> {
        list["terminals"]
            .as_array()
            .and_then(|ts| ts.iter().find(|t| t["program"] == program))
            .and_then(|t| t["address"].as_str())
            .map(str::to_owned)
            .ok_or_else(|| format!("no {program} terminal in {list}"))
    };
    Ok((find("sim-agent")?, find("sh")?))
}

/// Types [`FILL_COMMAND`] into the shell and waits for a full, still screen.
pub async fn fill_screen(sim: &Sim, direct: &mut DirectConn, shell: &str) -> Res<String> {
    sim.control("type", json!({"address": shell, "text": FILL_COMMAND}))
        .await?;
    let mut last = String::new();
    for _ in 0..200 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        direct.read_screen(shell).await?;
        let text = direct.result()?["text"].as_str().unwrap_or("").to_owned();
        if text.lines().count() >= 39 && text.contains("row 59") && text == last {
            return Ok(text);
        }
        last = text;
    }
    Err(format!("the shell's screen never filled: {last:?}"))
}

impl Cap {
    fn with_note(mut self, note: String) -> Cap {
        self.note = note;
        self
    }
}
