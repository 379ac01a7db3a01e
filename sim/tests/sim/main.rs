//! The simulator as the adapter meets it: the built binary on a real socket,
//! real PTYs behind it. Each test starts its own simulator. One test binary,
//! one module per noun:
//! - `protocol`: the handshake, framing errors and faults on the hc socket.
//! - `terminals`: agents, guards, refusals and address reuse.
//! - `reader`: the line reader, and a multi-line paste without bracketed paste.
//! - `emit`: control `emit`, printing on a screen as the program would.
//! - `process`: the ready line, the help text, signals and restarts.

mod emit;
mod process;
mod protocol;
mod reader;
mod support;
mod terminals;
