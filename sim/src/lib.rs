//! `hc-sim`: a contract-faithful simulator of herdr-core (hc) 0.1.15 for
//! tests, benchmarks and demos. Real programs run in real PTYs, screens come
//! from a real VT parser, and the contract is served on a real Unix socket.
//!
//! Module map, from the wire inwards:
//! - [`wire`]: the contract as data (every method, field, status and code).
//! - [`framing`]: one line under a byte cap → a JSON-RPC call or its error.
//! - [`server`]: binding, the accept loop, one lockstep task per connection.
//! - [`methods`]: the handshake and one function per hc method.
//! - [`faults`]: which faults apply to a call and how its reply goes out.
//! - [`sim`]: the core (identity, terminals, faults, counters, lifecycle).
//! - [`registry`]: addresses and creation times of terminals.
//! - [`terminal`]: one terminal's screen, status and input lock.
//! - [`osc`]: OSC 7501 and mode 2026 taken from program output.
//! - [`input`]: the `terminal.send` write path; [`input_log`]: its record.
//! - [`pty`]: programs in PTYs; [`agent`]: the scripted agent program;
//!   [`reader`]: the line reader (no bracketed paste); [`tty`]: what those
//!   two programs share.
//! - [`control`]: the test-only control socket; [`stats`]: its counters.
//! - [`cli`]: the command line.
//!
//! From the outside in: [`testing`] starts the built `hc-sim` binary as a
//! process and drives it (for tests, benchmarks and the demo).

pub mod agent;
pub mod cli;
mod clock;
pub mod control;
pub mod faults;
pub mod framing;
pub mod input;
pub mod input_log;
pub mod methods;
pub mod osc;
pub mod pty;
pub mod reader;
pub mod registry;
pub mod server;
pub mod sim;
pub mod stats;
pub mod terminal;
pub mod testing;
pub mod tty;
pub mod wire;

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::{Cli, Invocation, ServeConfig};
use crate::sim::{Sim, TerminalKind};

/// Worker threads of the simulator's runtime (PTY I/O has its own threads).
const WORKER_THREADS: usize = 2;

/// Entry point of the `hc-sim` binary: parse, run, map to an exit code.
pub fn main() -> ExitCode {
    let invocation = match Invocation::try_from(Cli::parse()) {
        Ok(invocation) => invocation,
        Err(error) => return fail(&error),
    };
    let config = match invocation {
        Invocation::Agent { delay } => return agent::run(delay),
        Invocation::Reader => return reader::run(),
        Invocation::Serve(config) => config,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(WORKER_THREADS)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => return fail(&error),
    };
    let result = runtime.block_on(run(*config));
    // Connection tasks and blocked PTY writes are abandoned, not awaited.
    runtime.shutdown_background();
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error),
    }
}

fn fail(error: &io::Error) -> ExitCode {
    eprintln!("hc-sim: {error}");
    ExitCode::FAILURE
}

/// Serves until SIGTERM or SIGINT: binds the sockets, creates the initial
/// terminals, prints the ready line, then kills every program and removes
/// the sockets on the way out.
pub async fn run(config: ServeConfig) -> io::Result<()> {
    let mut terminate = signal(SignalKind::terminate())?;
    let mut interrupt = signal(SignalKind::interrupt())?;
    let sim = Arc::new(Sim::new(config.sim.clone())?);
    let mut sockets = SocketFiles::default();
    let listener = server::bind(&config.socket)?;
    sockets.0.push(config.socket.clone());
    let control_listener = match &config.control {
        Some(path) => {
            let listener = server::bind(path)?;
            sockets.0.push(path.clone());
            Some(listener)
        }
        None => None,
    };
    let started = async {
        sim.spawn_many(TerminalKind::Agent, config.agents).await?;
        sim.spawn_many(TerminalKind::Shell, config.shells).await?;
        sim.spawn_many(TerminalKind::Reader, config.readers).await?;
        sim.spawn_many(TerminalKind::Idle, config.idle_records)
            .await
    };
    if let Err(error) = started.await {
        sim.shutdown().await;
        return Err(error);
    }

    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stopped = |mut stopped: tokio::sync::watch::Receiver<bool>| async move {
        let _ = stopped.wait_for(|&stop| stop).await;
    };
    tokio::spawn(server::serve(
        Arc::clone(&sim),
        listener,
        until_stopped(stopped.clone()),
    ));
    if let Some(listener) = control_listener {
        tokio::spawn(control::serve(
            Arc::clone(&sim),
            listener,
            until_stopped(stopped),
        ));
    }
    announce_ready(&sim, &config.socket)?;

    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    let _ = stop.send(true);
    sim.shutdown().await;
    Ok(())
}

/// The one line ever written to stdout.
fn announce_ready(sim: &Sim, socket: &std::path::Path) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    writeln!(
        stdout,
        "ready core_id={} socket={}",
        sim.identity.core_id,
        socket.display()
    )?;
    stdout.flush()
}

/// Socket files this process created, removed when it stops (on every path
/// out of [`run`]).
#[derive(Default)]
struct SocketFiles(Vec<PathBuf>);

impl Drop for SocketFiles {
    fn drop(&mut self) {
        for path in &self.0 {
            let _ = std::fs::remove_file(path);
        }
    }
}
