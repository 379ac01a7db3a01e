//! The adapter as a process: arguments and exit codes, its life and
//! signals, restarts of the core, the config file's safety checks (owner,
//! mode, FIFO), the bounds of its log, and what it publishes about itself
//! (server.json, the bundle, the npm and PyPI packages).

mod argument_errors;
mod config_files;
mod config_safety;
mod distribution;
mod first_hour;
mod lifecycle;
mod log_bounds;
mod packages;
mod restarts;
