//! The command line: the subcommands and their flags (`clap`), what each
//! runs (`run`, with the operator's `doctor` and `reload` in their own
//! files), and the one error type of a whole command with its exit code
//! (`error`: 0 ok, 2 usage or config error, 1 runtime failure).

mod doctor;
mod error;
mod reload;
mod run;

pub use error::Error;
pub use run::run;

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::{CommandFactory, Parser, Subcommand};

use crate::hc::wire::PINNED_VERSION;
use crate::tools::PROTOCOL_VERSIONS;

/// Where the config is when `--config` is not given, under the XDG config
/// directory (`$XDG_CONFIG_HOME`, else `~/.config`).
pub const DEFAULT_CONFIG: &str = "herdr-core-mcp/config.json";

#[derive(Debug, Parser)]
#[command(
    name = "herdr-core-mcp",
    version,
    about = "MCP server that lets AI assistants see and prompt the existing terminals of a local herdr-core (hc) 0.1.15, safely",
    after_help = "Every --config defaults to $XDG_CONFIG_HOME/herdr-core-mcp/config.json (else ~/.config/herdr-core-mcp/config.json).",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// `--config FILE`, optional everywhere.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArg {
    /// The operator's JSON config [default: $XDG_CONFIG_HOME/herdr-core-mcp/config.json,
    /// else ~/.config/herdr-core-mcp/config.json].
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over the transport named in the config (stdio or http).
    /// MCP hosts launch this directly.
    Serve {
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Print the core's handshake facts and every terminal's lifetime, and
    /// whether it is approved, read-only. This is how an operator learns
    /// the core_id and the (address, created_ms) pairs to approve.
    InspectCore {
        #[command(flatten)]
        config: ConfigArg,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Approve the live terminal at ADDRESS for send_prompt: probes the core,
    /// shows the terminal, and writes coreId and its (address, created_ms)
    /// into the config. A running serve reloads on SIGHUP (see reload).
    Allow {
        #[command(flatten)]
        config: ConfigArg,
        /// Also allow multi-line prompts (TAB and LF) for this terminal. Only
        /// for programs that read a paste as one input (agent CLIs with
        /// bracketed paste), never for shells: elsewhere each line break is
        /// an Enter into whatever the line before started.
        #[arg(long)]
        multiline: bool,
        /// Show what would be written, and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Terminal address, e.g. t1 (see inspect-core).
        address: String,
    },
    /// Remove the approvals of ADDRESS from the config (nothing to remove is
    /// not an error). A running serve reloads on SIGHUP (see reload).
    Revoke {
        #[command(flatten)]
        config: ConfigArg,
        /// Terminal address, e.g. t1.
        address: String,
        /// Only the lifetime with this created_ms (default: every lifetime at ADDRESS).
        #[arg(long, value_name = "MS")]
        created_ms: Option<i64>,
    },
    /// Check the setup, one line per check with ok or FAIL and the fix:
    /// config, token (HTTP), socket, handshake pins, coreId, each approval,
    /// port. Exits 0 only when every check passes.
    Doctor {
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Tell every running serve of this config to reload it (SIGHUP).
    Reload {
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Print a shell completion script.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// `--version`: the adapter's version, the hc version it speaks and the MCP
/// revisions it offers.
pub fn long_version() -> &'static str {
    static LONG: OnceLock<String> = OnceLock::new();
    LONG.get_or_init(|| {
        let revisions: Vec<&str> = PROTOCOL_VERSIONS.iter().map(|v| v.as_str()).collect();
        format!(
            "{}\nspeaks hc {PINNED_VERSION}\nMCP revisions offered: {}",
            env!("CARGO_PKG_VERSION"),
            revisions.join(", ")
        )
    })
}

/// The command line's definition, with the long version.
pub fn command() -> clap::Command {
    Cli::command().long_version(long_version())
}
