//! The one integration-test binary: every test runs real processes (the
//! bundled hc simulator, the adapter binary) over real sockets.

mod support;

mod approve;
mod argument_errors;
mod config_safety;
mod core_client;
mod fault_matrix;
#[cfg(feature = "fuzzing")]
mod fuzz_corpus;
mod http_flood;
mod http_transport;
mod inspect_core;
mod lifecycle;
mod operator;
mod operator_hardening;
mod output_waits;
mod pattern_costs;
mod restarts;
mod send_record;
mod stdio_tools;
pub mod wait_tools;
mod what_users_read;
