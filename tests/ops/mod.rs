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
mod first_setup;
mod generated_files;
mod hostile_neighbourhood;
mod inspect_core;
mod machines;
mod newer_cores;
mod no_dead_ends;
