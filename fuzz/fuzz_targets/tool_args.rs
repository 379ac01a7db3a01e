//! Tool-argument rules: control characters, tails, cursors, argument JSON
//! (`herdr_core_mcp::fuzzing::tool_args`).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| herdr_core_mcp::fuzzing::tool_args(data));
