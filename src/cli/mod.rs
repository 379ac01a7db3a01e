//! The command line: the subcommands and their flags (`clap`), what each
//! runs (`run`), and the one error type of a whole command with its exit
//! code (`error`: 0 ok, 2 usage or config error, 1 runtime failure).

mod error;
mod run;

pub use error::Error;
pub use run::run;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(
    name = "herdr-core-mcp",
    version,
    about = "MCP server that lets AI assistants see and prompt the existing terminals of a local herdr-core (hc) 0.1.15, safely",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over the transport named in the config (stdio or http).
    /// MCP hosts launch this directly.
    Serve {
        /// The operator's JSON config (must not be group- or world-writable).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
    },
    /// Print the core's handshake facts and every terminal's lifetime, read-only.
    /// This is how an operator learns the core_id and the (address, created_ms)
    /// pairs to approve.
    InspectCore {
        /// The operator's JSON config (only socketPath and timeoutMs are used).
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Approve the live terminal at ADDRESS for send_prompt: probes the core,
    /// shows the terminal, and writes coreId and its (address, created_ms)
    /// into the config. A running serve reloads on SIGHUP.
    Allow {
        /// The operator's JSON config, rewritten atomically.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Terminal address, e.g. t1 (see inspect-core).
        address: String,
        /// Also allow multi-line prompts (TAB and LF) for this terminal. Only
        /// for programs that read a paste as one input (agent CLIs with
        /// bracketed paste), never for shells: elsewhere each line break is
        /// an Enter into whatever the line before started.
        #[arg(long)]
        multiline: bool,
    },
    /// Remove the approvals of ADDRESS from the config. A running serve
    /// reloads on SIGHUP.
    Revoke {
        /// The operator's JSON config, rewritten atomically.
        #[arg(long, value_name = "FILE")]
        config: PathBuf,
        /// Terminal address, e.g. t1.
        address: String,
        /// Only the lifetime with this created_ms (default: every lifetime at ADDRESS).
        #[arg(long, value_name = "MS")]
        created_ms: Option<i64>,
    },
}
