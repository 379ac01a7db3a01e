//! `hc-sim` as this crate's own binary, the same entry point as the root
//! package's `examples/hc-sim`. Cargo builds it before this crate's
//! integration tests and names it to them (`CARGO_BIN_EXE_hc-sim`), so they
//! never build anything themselves.

fn main() -> std::process::ExitCode {
    hc_sim::main()
}
