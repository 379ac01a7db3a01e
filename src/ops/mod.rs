//! The operator's toolkit: the commands an operator runs beside the server,
//! each returning the text it prints and an error of its own. None of them
//! serves MCP; the CLI wires them to subcommands and exit codes.
//!
//! - [`inspect`]: `inspect-core`, the read-only probe;
//! - [`contract`]: `inspect-core --check-contract`, how a core and its
//!   documents differ from the modelled contract;
//! - [`approve`]: `allow` and `revoke`, the only writers of the allowlist;
//! - [`doctor`]: every check a serve would make, without serving;
//! - [`machines`]: the core's machines as these commands show them;
//! - [`reload`]: SIGHUP to each running serve of a config;
//! - [`setup`]: `init` (a first config) and `status` (the running serves);
//! - [`serves`]: which processes are this user's serves, from `/proc`;
//!   [`marker`]: how any copy of this program is recognised.

pub(crate) mod accept;
pub(crate) mod approve;
pub(crate) mod contract;
pub(crate) mod doctor;
mod edit;
pub(crate) mod inspect;
pub(crate) mod machines;
pub(crate) mod marker;
mod reapproval;
pub(crate) mod reload;
pub(crate) mod serves;
pub(crate) mod setup;
pub(crate) mod started;
