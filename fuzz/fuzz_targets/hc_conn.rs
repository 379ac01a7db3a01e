//! A fake hc's bytes through a real adapter connection: framing, handshake
//! pins and reply checks over a Unix socket (`herdr_core_mcp::fuzzing::hc_conn`).
#![no_main]

libfuzzer_sys::fuzz_target!(
    init: {
        // libFuzzer's C main does not ignore SIGPIPE as a Rust main does; a
        // fake hc that hangs up mid-request must not kill the fuzzer.
        // SAFETY: setting a signal disposition before any thread writes.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_IGN);
        }
    },
    |data: &[u8]| herdr_core_mcp::fuzzing::hc_conn(data)
);
