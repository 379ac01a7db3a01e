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
//! - [`evidence`]: replies as real cores send them (`--evidence`).
//! - [`machines`]: other cores this core added, reached over real hc
//!   connections (contract §8).
//! - [`discover`]: the core's own OpenRPC document, worded one of several
//!   ways (`--discover-style`).
//! - [`sim`]: the core (identity, terminals, faults, counters, lifecycle).
//! - [`registry`]: addresses and creation times of terminals.
//! - [`terminal`]: one terminal's screen, status and input lock.
//! - [`osc`]: OSC 7501 and mode 2026 taken from program output.
//! - [`input`]: the `terminal.send` write path; [`input_log`]: its record.
//! - [`pty`]: programs in PTYs; [`agent`]: the scripted agent program;
//!   [`reader`]: the line reader (no bracketed paste); [`tty`]: what those
//!   two programs share.
//! - [`control`]: the test-only control socket; [`stats`]: its counters.
//! - [`service`]: one simulator from bound sockets to its end, in the
//!   binary or inside a test.
//! - [`cli`]: the command line.
//!
//! From the outside in: [`testing`] runs the simulator, as the built
//! `hc-sim` binary or on a thread of the caller's process, and drives it
//! (for tests, benchmarks and the demo).

mod agent;
mod cli;
mod clock;
mod control;
mod discover;
pub mod evidence;
pub mod faults;
mod framing;
mod input;
mod input_log;
mod machines;
mod methods;
mod osc;
mod pty;
mod reader;
mod registry;
mod server;
mod service;
mod sim;
mod stats;
mod terminal;
pub mod testing;
mod tty;
mod wire;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;
use tokio::signal::unix::{SignalKind, signal};

use crate::cli::{Cli, Invocation, ServeConfig};
pub use crate::discover::DiscoverStyle;
use crate::service::{Ending, Service};

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
    let runtime = match service::runtime() {
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
    let service = Service::start(config).await?;
    announce_ready(&service.ready_line())?;
    service
        .serve_until(async {
            tokio::select! {
                _ = terminate.recv() => {}
                _ = interrupt.recv() => {}
            }
            Ending::Stop
        })
        .await;
    Ok(())
}

/// The one line ever written to stdout.
fn announce_ready(line: &str) -> io::Result<()> {
    let mut stdout = io::stdout().lock();
    stdout.write_all(line.as_bytes())?;
    stdout.flush()
}
