//! `hc-sim`: the bundled simulator of herdr-core 0.1.15. The implementation
//! lives in the `hc-sim` workspace crate (`sim/`) so tests and benchmarks use
//! the very same simulator; this file is only its entry point.

// The crate's fence lints are for the library's API; a test or example
// binary has none.
#![allow(
    unreachable_pub,
    missing_docs,
    reason = "an example binary has no API to fence"
)]

fn main() -> std::process::ExitCode {
    hc_sim::main()
}
