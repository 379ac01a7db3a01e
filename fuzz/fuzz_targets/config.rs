//! Config text through parsing and validation (`herdr_core_mcp::fuzzing::config`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| herdr_core_mcp::fuzzing::config(data));
