//! The adapter as a process: arguments and exit codes, its life and
//! signals, restarts of the core, the config file's safety checks (owner,
//! mode, FIFO), and the bounds of its log.

mod argument_errors;
mod config_files;
mod config_safety;
mod distribution;
mod first_hour;
mod lifecycle;
mod log_bounds;
mod restarts;
