//! Load generator for herdr-core-mcp (run it with `scripts/bench.sh` or
//! `scripts/soak.sh`, which build everything in release mode first).
//!
//! - `loadgen bench`: the performance table, side by side in one
//!   run against the bundled simulator: latency of `read_output` over stdio
//!   and HTTP against the same `terminal.read` sent straight to hc's socket,
//!   HTTP throughput at several concurrencies against the direct socket,
//!   HTTP throughput at 32 clients in OAuth mode against token mode (real
//!   tokens from the test authorization server, `scripts/oauth-deps.sh`),
//!   the adapter's memory, its start-up time, the 1 MiB reply cap, and
//!   `list_sessions` and a fleet wait over 3 machines of 50 terminals
//!   against one core of 150 (`--only machines` runs that phase alone).
//! - `loadgen soak`: many HTTP clients mixing every tool for a long time,
//!   failing on any protocol error or on memory or descriptor growth.
//!
//! The adapter and the simulator run as real processes, exactly as shipped;
//! the clients here are deliberately thin (raw JSON-RPC lines on stdio, a
//! hand-rolled HTTP/1.1 keep-alive client, a raw lockstep hc connection) so
//! that what is measured is the adapter, not a client library.

// The crate's fence lints are for the library's API; a test or example
// binary has none.
#![allow(
    unreachable_pub,
    missing_docs,
    reason = "a bench binary has no API to fence"
)]

mod bench;
mod caps;
mod direct;
mod floor;
mod http;
mod instructions;
mod latency;
mod machines;
mod mix;
mod oauth;
mod patterns;
mod procfs;
mod relay;
mod report;
mod slowbody;
mod soak;
mod starve;
mod stats;
mod stdio;
mod syscalls;
mod throughput;
mod waits;
mod world;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime};

use clap::{Parser, Subcommand, ValueEnum};

/// Errors here are one line for the operator: what failed and why.
pub type Res<T> = Result<T, String>;

#[derive(Parser)]
#[command(
    name = "loadgen",
    about = "Benchmark and soak herdr-core-mcp against the bundled hc simulator"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
    /// Directory holding herdr-core-mcp and examples/hc-sim (default: the
    /// profile directory loadgen was built into).
    #[arg(long, global = true, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
}

#[derive(Subcommand)]
enum Cmd {
    /// Measure the performance table and check the targets.
    Bench {
        /// Timed lockstep calls per path and screen.
        #[arg(long, default_value_t = 5000)]
        latency_calls: usize,
        /// Untimed calls per path and screen before the first round.
        #[arg(long, default_value_t = 500)]
        warmup: usize,
        /// Calls each adapter has served when its memory is read "after N calls".
        #[arg(long, default_value_t = 10_000)]
        calls: usize,
        /// Seconds per throughput cell.
        #[arg(long, default_value_t = 5.0)]
        level_secs: f64,
        /// Concurrency levels, comma-separated.
        #[arg(long, value_delimiter = ',', default_value = "1,8,32,128")]
        levels: Vec<usize>,
        /// Spawns timed for start-up.
        #[arg(long, default_value_t = 20)]
        startup_runs: usize,
        /// Timed refusals per byte-cap case.
        #[arg(long, default_value_t = 5)]
        cap_runs: usize,
        /// Idle unauthenticated sockets held open per starvation run.
        #[arg(long, value_delimiter = ',', default_value = "0,1000,10000")]
        starve_crowds: Vec<usize>,
        /// Fresh authorised connections timed per starvation run.
        #[arg(long, default_value_t = 20)]
        starve_probes: usize,
        /// Slow-body connections (headers declaring 64 KiB, no body)
        /// replaced as they close, per slow-body flood run.
        #[arg(long, default_value_t = 1_200)]
        slow_body_crowd: usize,
        /// Fresh authorised connections timed per slow-body flood run.
        #[arg(long, default_value_t = 100)]
        slow_body_probes: usize,
        /// Seconds after a wait_for_output begins that the awaited line is
        /// printed, one latency row each.
        #[arg(long, value_delimiter = ',', default_value = "0.2,2,20")]
        wait_delays: Vec<f64>,
        /// Rounds of concurrent waits (one per terminal) per delay.
        #[arg(long, default_value_t = 2)]
        wait_rounds: usize,
        /// Pairs of OAuth-mode and token-mode cells at 32 clients, the pairs
        /// alternating which goes first; 0 skips the OAuth rows (which need
        /// node and scripts/oauth-deps.sh).
        #[arg(long, default_value_t = 4)]
        oauth_pairs: usize,
        /// Seconds per OAuth or token-mode cell.
        #[arg(long, default_value_t = 5.0)]
        oauth_secs: f64,
        /// Rounds of the machines phase (`list_sessions` and a fleet wait
        /// over 3 machines of 50 terminals against one core of 150), one
        /// fleet wait per setup each; 0 skips the phase.
        #[arg(long, default_value_t = 20)]
        machine_rounds: usize,
        /// Timed `list_sessions` calls per setup and round of the machines
        /// phase (at least 1: the round's fleet wait takes its since).
        #[arg(long, default_value_t = 20)]
        machine_lists: usize,
        /// Run only this phase (`floor`: the adapter against the minimal
        /// rmcp server and the relay; `machines`: list and fleet wait over
        /// machines against one core).
        #[arg(long, value_enum)]
        only: Option<Phase>,
        /// Rounds of the floor phase.
        #[arg(long, default_value_t = 5)]
        floor_rounds: usize,
        /// Lockstep calls per server and turn in the floor phase.
        #[arg(long, default_value_t = 2000)]
        floor_calls: usize,
        /// Seconds per turn at 32 HTTP clients in the floor phase.
        #[arg(long, default_value_t = 3.0)]
        floor_crowd_secs: f64,
        /// Lockstep calls traced per server for the syscall counts.
        #[arg(long, default_value_t = 500)]
        floor_traced_calls: usize,
    },
    /// Run the soak and judge memory and descriptor growth.
    Soak {
        /// How long to run.
        #[arg(long, default_value_t = 600)]
        duration_secs: u64,
        /// Concurrent HTTP clients.
        #[arg(long, default_value_t = 32)]
        clients: usize,
        /// Seconds between samples (default: a twentieth of the run, 1-5 s).
        #[arg(long)]
        sample_secs: Option<u64>,
        /// Seed of the clients' choices (default: from the clock; printed).
        #[arg(long)]
        seed: Option<u64>,
    },
    /// The do-nothing stdio relay the bench measures as the floor.
    #[command(hide = true)]
    Relay {
        #[arg(long)]
        socket: PathBuf,
    },
}

/// A phase `bench --only` can run by itself.
#[derive(Clone, Copy, ValueEnum)]
enum Phase {
    Floor,
    Machines,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if let Cmd::Relay { socket } = &cli.command {
        return match relay::serve(socket) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("loadgen: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a tokio runtime");
    let outcome = runtime.block_on(run(cli));
    match outcome {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(3),
        Err(e) => {
            eprintln!("loadgen: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs one command; `Ok(false)` when it ran but a target or check failed.
async fn run(cli: Cli) -> Res<bool> {
    let bins = world::Bins::locate(cli.bin_dir)?;
    match cli.command {
        Cmd::Bench {
            latency_calls,
            warmup,
            calls,
            level_secs,
            levels,
            startup_runs,
            cap_runs,
            starve_crowds,
            starve_probes,
            slow_body_crowd,
            slow_body_probes,
            wait_delays,
            wait_rounds,
            oauth_pairs,
            oauth_secs,
            machine_rounds,
            machine_lists,
            only,
            floor_rounds,
            floor_calls,
            floor_crowd_secs,
            floor_traced_calls,
        } => {
            let floor_options = floor::Options {
                rounds: floor_rounds,
                calls: floor_calls,
                crowd_turn: Duration::from_secs_f64(floor_crowd_secs),
                traced_calls: floor_traced_calls,
            };
            let machine_options = machines::Options {
                rounds: machine_rounds,
                lists: machine_lists,
            };
            match only {
                Some(Phase::Floor) => {
                    let load_before = load_average();
                    let floor = floor::run(&bins, &floor_options).await?;
                    println!("## herdr-core-mcp bench: the floor phase\n");
                    print_machine(&load_before);
                    println!("{}", floor.render());
                    return Ok(true);
                }
                Some(Phase::Machines) => {
                    let load_before = load_average();
                    let figures = machines::run(&bins, &machine_options).await?;
                    let mut table = String::new();
                    machines::table(&mut table, &figures);
                    println!("## herdr-core-mcp bench: the machines phase\n");
                    print_machine(&load_before);
                    println!("{}", table.trim_start());
                    return Ok(true);
                }
                None => {}
            }
            let options = bench::Options {
                latency_calls,
                warmup,
                calls,
                level: Duration::from_secs_f64(level_secs),
                levels,
                startup_runs,
                cap_runs,
                starve_crowds,
                starve_probes,
                slow_body_crowd,
                slow_body_probes,
                wait_delays: wait_delays
                    .into_iter()
                    .map(Duration::from_secs_f64)
                    .collect(),
                wait_rounds,
                oauth: oauth::Options {
                    pairs: oauth_pairs,
                    cell: Duration::from_secs_f64(oauth_secs),
                },
                machines: machine_options,
            };
            let load_before = load_average();
            let results = bench::run(&bins, &options).await?;
            let floor = floor::run(&bins, &floor_options).await?;
            let (tables, passed) = results.render();
            println!("## herdr-core-mcp bench\n");
            print_machine(&load_before);
            println!("{tables}");
            println!("{}", floor.render());
            println!(
                "bench: {}",
                if passed {
                    "all targets PASS"
                } else {
                    "some targets MISSED (see the table)"
                }
            );
            Ok(passed)
        }
        Cmd::Soak {
            duration_secs,
            clients,
            sample_secs,
            seed,
        } => {
            let seed = seed.unwrap_or_else(|| {
                SystemTime::now()
                    .duration_since(SystemTime::UNIX_EPOCH)
                    .map_or(1, |d| d.as_nanos() as u64)
            });
            let sample_secs = sample_secs.unwrap_or((duration_secs / 20).clamp(1, 5));
            let options = soak::Options {
                duration: Duration::from_secs(duration_secs),
                clients,
                sample_every: Duration::from_secs(sample_secs),
                seed,
            };
            let load_before = load_average();
            let (table, passed) = soak::run(&bins, &options).await?;
            println!("## herdr-core-mcp soak\n");
            print_machine(&load_before);
            println!("{table}");
            Ok(passed)
        }
        Cmd::Relay { .. } => unreachable!("the relay runs before the runtime starts"),
    }
}

fn print_machine(load_before: &str) {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("model name")
                    .map(|m| m.trim_start_matches([' ', '\t', ':']).to_owned())
            })
        })
        .unwrap_or_else(|| "unknown".into());
    let mem = std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .next()
                .map(|l| l.split_whitespace().nth(1).unwrap_or("0").to_owned())
        })
        .and_then(|kib| kib.parse::<u64>().ok())
        .map_or("unknown".into(), |kib| {
            format!("{:.1} GiB", kib as f64 / (1024.0 * 1024.0))
        });
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let command: Vec<String> = std::env::args().collect();
    println!(
        "- date: {}",
        humantime::format_rfc3339_seconds(SystemTime::now())
    );
    println!(
        "- machine: {cores} CPUs ({cpu}), {mem} RAM, Linux {}",
        kernel.trim()
    );
    println!(
        "- load average before / after: {load_before} / {}",
        load_average()
    );
    println!("- command: `{}`\n", command.join(" "));
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// Progress on stderr, so stdout holds only the report.
pub fn progress(what: &str) {
    eprintln!("loadgen: {what}");
}
