//! hc's reply lines through the adapter's JSON-RPC envelope checks and
//! result decoding (`herdr_core_mcp::fuzzing::hc_reply`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| herdr_core_mcp::fuzzing::hc_reply(data));
