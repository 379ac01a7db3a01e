//! The simulator as the adapter meets it: a real socket, real PTYs behind
//! it. Each test starts its own simulator, in its own process unless it
//! needs a process; the `hc-sim` binary (for agents, readers and the
//! process tests) is the one cargo builds for these tests. One test binary,
//! one module per noun:
//! - `protocol`: the handshake, framing errors and faults on the hc socket.
//! - `terminals`: agents, guards, refusals and address reuse.
//! - `reader`: the line reader, and a multi-line paste without bracketed paste.
//! - `emit`: control `emit`, printing on a screen as the program would.
//! - `machines`: other simulators added as machines (contract §8).
//! - `process`: the ready line, the help text, signals and restarts.
//! - `in_process`: the same, for a simulator inside the test's process.

#![allow(
    unreachable_pub,
    missing_docs,
    reason = "a test binary has no API to fence"
)]

mod emit;
mod in_process;
mod machines;
mod process;
mod protocol;
mod reader;
mod support;
mod terminals;
