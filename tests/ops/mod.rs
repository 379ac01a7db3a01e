//! The operator's commands: `inspect-core` and its contract check,
//! `allow` / `revoke` and their lock, `doctor`, `reload`, `init` and
//! `status`, the generated man page and completions, and what a first-time
//! operator reads.

mod approve;
mod check_contract;
mod config_hints;
mod config_locks;
mod discover_styles;
mod doctor_ends;
mod doctor_token;
mod generated_files;
mod inspect_core;
mod newer_cores;
mod operator;
mod operator_hardening;
mod operator_pass;
