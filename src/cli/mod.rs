//! The command line: the subcommands and their flags (`clap`), what each
//! runs (`run`: the server, or one of the operator's commands in
//! [`crate::ops`]), the man page and completions (`manual`), and the one
//! error type of a whole command with its exit code (`error`: 0 ok, 2 usage
//! or config error, 1 runtime failure).

mod error;
mod manual;
mod run;
mod usage;

pub use run::run;
pub use usage::usage_error;

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::{CommandFactory, Parser, Subcommand};

use crate::config::SendMode;
use crate::hc::wire::PINNED_VERSION;
use crate::mcp::PROTOCOL_VERSIONS;

/// The command line: one subcommand and its flags.
#[derive(Debug, Parser)]
#[command(
    name = "herdr-core-mcp",
    version,
    about = "MCP server that lets AI assistants see and prompt the existing terminals of a local herdr-core (hc), safely: hc 0.1.15 built in, newer cores once checked and accepted",
    propagate_version = true
)]
pub struct Cli {
    /// The subcommand to run.
    #[command(subcommand)]
    pub command: Command,
}

/// `--config FILE`, optional everywhere.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfigArg {
    /// The operator's JSON config (default: see the end of this help).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
}

/// Subcommands people reach for by another name, and the one they mean.
const MEANT: [(&str, &str); 7] = [
    ("approve", "allow"),
    ("aprove", "allow"),
    ("grant", "allow"),
    ("deny", "revoke"),
    ("disallow", "revoke"),
    ("unapprove", "revoke"),
    ("inspect", "inspect-core"),
];

/// The subcommand meant by `word`, when it is another name for one.
fn meant(word: &str) -> Option<&'static str> {
    MEANT
        .iter()
        .find_map(|(said, meant)| (*said == word).then_some(*meant))
}

/// How MCP hosts reach a config `init` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum InitTransport {
    /// The host starts `serve` and speaks MCP on its stdin and stdout.
    Stdio,
    /// `serve` listens on 127.0.0.1 for MCP Streamable HTTP.
    Http,
}

impl From<InitTransport> for crate::config::RawTransport {
    fn from(transport: InitTransport) -> Self {
        match transport {
            InitTransport::Stdio => crate::config::RawTransport::Stdio,
            InitTransport::Http => crate::config::RawTransport::Http,
        }
    }
}

/// What `herdr-core-mcp` can be asked to do.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve MCP over the transport named in the config (stdio or http).
    /// MCP hosts launch this directly.
    Serve {
        /// The config to serve with (`--config`).
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Print the core's handshake facts and every terminal's lifetime, and
    /// whether it is approved, read-only. This is how an operator learns
    /// the core_id and the (address, created_ms) pairs to approve.
    InspectCore {
        /// The config that names hc's socket (`--config`).
        #[command(flatten)]
        config: ConfigArg,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Report how this core (of any version) differs from the modelled
        /// hc 0.1.15 contract (fields, types, statuses, addresses, error
        /// objects, framing), and judge its own rpc.discover document by
        /// what the adapter sends and reads, each line naming its rule.
        /// Read-only; exit 0 when nothing differs, 1 when something does or
        /// the core cannot be reached.
        #[arg(long)]
        check_contract: bool,
        /// With --check-contract: also judge this OpenRPC document (what
        /// `hc schema` prints) as the core's own is judged.
        #[arg(long, value_name = "FILE", requires = "check_contract")]
        schema: Option<PathBuf>,
        /// With --check-contract: write the exchange to FILE as JSON lines,
        /// screens, titles, cwds and argv replaced by length and SHA-256.
        #[arg(long, value_name = "FILE", requires = "check_contract")]
        record: Option<PathBuf>,
        /// With --check-contract: when nothing found would make a call
        /// fail and the core showed its `if` guard, record the core's
        /// version (and its rpc.discover document's SHA-256, and whether
        /// sends to it leave out `force`) in the config's hcVersions, so
        /// serve, allow and the tools speak to it. Accepts nothing, exit 1,
        /// otherwise, naming the rules that refused.
        #[arg(long, requires = "check_contract")]
        accept: bool,
        /// With --check-contract: see whether the core honours the `if`
        /// guard idle-only sends rest on, on the terminal at ADDRESS: one
        /// terminal.send with empty text, no Enter and an `if` the
        /// terminal does not match, which a guarded core refuses and which
        /// types nothing on any core. Needed to accept a core whose own
        /// document does not declare the guard.
        #[arg(long, value_name = "ADDRESS", requires = "check_contract")]
        guard_check: Option<String>,
    },
    /// Approve the live terminal at ADDRESS for send_prompt: probes the core,
    /// shows the terminal, and writes coreId and its (address, created_ms)
    /// into the config. A running serve reloads on SIGHUP (see reload).
    Allow {
        /// The config to approve the terminal in (`--config`).
        #[command(flatten)]
        config: ConfigArg,
        /// Also allow multi-line prompts (TAB and LF) for this terminal. Only
        /// for programs that read a paste as one input (agent CLIs with
        /// bracketed paste), never for shells: elsewhere each line break is
        /// an Enter into whatever the line before started.
        #[arg(long)]
        multiline: bool,
        /// How this terminal may be prompted: idle-only (only while idle)
        /// or normal (also when done: follow-ups to an agent that reports
        /// done after each task). Default: the config's sendMode.
        #[arg(long, value_name = "MODE", value_enum)]
        mode: Option<ModeArg>,
        /// Ask a human before each prompt to this terminal: send_prompt
        /// shows the target and the exact prompt through the MCP client
        /// (elicitation) and sends only on its confirmation. A client that
        /// cannot ask sends nothing. Hooks or auto-approve modes in a host
        /// can answer for the human: the approval stays the boundary.
        #[arg(long, conflicts_with = "no_confirm")]
        confirm: bool,
        /// Remove the human confirmation an earlier approval of this
        /// terminal asked for (re-approving keeps it otherwise).
        #[arg(long)]
        no_confirm: bool,
        /// Show what would be written, and write nothing.
        #[arg(long)]
        dry_run: bool,
        /// Terminal address, e.g. t1 (see inspect-core).
        address: String,
    },
    /// Remove the approvals of ADDRESS from the config (nothing to remove is
    /// not an error). A running serve reloads on SIGHUP (see reload).
    Revoke {
        /// The config to remove approvals from (`--config`).
        #[command(flatten)]
        config: ConfigArg,
        /// Terminal address, e.g. t1.
        #[arg(required_unless_present = "all", conflicts_with = "all")]
        address: Option<String>,
        /// Only the lifetime with this created_ms (default: every lifetime at ADDRESS).
        #[arg(long, value_name = "MS", requires = "address")]
        created_ms: Option<i64>,
        /// Remove every approval.
        #[arg(long)]
        all: bool,
        /// Show what would be removed, and write nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Check the setup, one line per check with ok or FAIL and the fix:
    /// config, token (HTTP), socket, handshake pins, coreId, each approval,
    /// port. Exits 0 only when every check passes.
    Doctor {
        /// The config to check (`--config`).
        #[command(flatten)]
        config: ConfigArg,
        /// Print JSON: {"checks": [{"status", "check", "detail"}], "failed"}.
        #[arg(long)]
        json: bool,
    },
    /// Tell every running serve of this config to reload it (SIGHUP).
    Reload {
        /// The config whose serves are told to reload (`--config`).
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Write a first, private config (folders 0700, file 0600; never over an
    /// existing one) and print the next steps.
    Init {
        /// Where the new config is written (`--config`).
        #[command(flatten)]
        config: ConfigArg,
        /// hc's socket [default: $XDG_RUNTIME_DIR/herdr-core/hc.sock].
        #[arg(long, value_name = "PATH")]
        socket: Option<PathBuf>,
        /// How MCP hosts reach it: stdio (the host starts it) or http.
        #[arg(long, value_name = "TRANSPORT", value_enum, default_value_t = InitTransport::Stdio)]
        transport: InitTransport,
    },
    /// List this user's running serves: pid, transport, port, since when,
    /// config.
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Print a shell completion script.
    Completions {
        /// bash, zsh, fish, elvish or powershell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff).
    Man,
}

/// `allow --mode`'s values, spelt as in the config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ModeArg {
    /// Only while the terminal is idle (hc's atomic guard).
    IdleOnly,
    /// Also while it is done: follow-ups to an agent that reports done.
    Normal,
}

impl From<ModeArg> for SendMode {
    fn from(mode: ModeArg) -> Self {
        match mode {
            ModeArg::IdleOnly => SendMode::IdleOnly,
            ModeArg::Normal => SendMode::Normal,
        }
    }
}

/// `--version`: the adapter's version, the hc version it speaks and the MCP
/// revisions it offers.
pub(crate) fn long_version() -> &'static str {
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

/// One example per subcommand, shown at the end of its `--help`.
const EXAMPLES: [(&str, &str); 10] = [
    (
        "serve",
        "herdr-core-mcp serve --config ~/.config/herdr-core-mcp/config.json",
    ),
    ("inspect-core", "herdr-core-mcp inspect-core --json"),
    ("allow", "herdr-core-mcp allow --mode normal t1"),
    ("revoke", "herdr-core-mcp revoke --dry-run t1"),
    ("doctor", "herdr-core-mcp doctor --json"),
    ("reload", "herdr-core-mcp reload"),
    (
        "init",
        "herdr-core-mcp init --socket /run/user/1000/herdr-core/hc.sock",
    ),
    ("status", "herdr-core-mcp status --json"),
    (
        "completions",
        "herdr-core-mcp completions bash > ~/.local/share/bash-completion/completions/herdr-core-mcp",
    ),
    (
        "man",
        "herdr-core-mcp man > ~/.local/share/man/man1/herdr-core-mcp.1",
    ),
];

/// What every `--help` ends with: where the config is, the environment,
/// the exit codes, and an example.
fn footer(config: &str, example: &str) -> String {
    let config = if config.is_empty() {
        String::new()
    } else {
        format!("Config: --config defaults to {config}\n\n")
    };
    format!(
        "{config}Environment:\n  HERDR_MCP_TOKEN       bearer token for HTTP (token mode): every tool\n  HERDR_MCP_READ_TOKEN  optional HTTP token for the read tools only\n  RUST_LOG              log filter (logs go to stderr), e.g. info or debug\n  XDG_CONFIG_HOME, HOME where the default config is\n  LISTEN_FDS, LISTEN_PID  a listening socket passed by systemd (HTTP)\n\nExit status: 0 ok, 1 runtime failure, 2 usage or config error\n\nExample:\n  {example}"
    )
}

/// The command line's definition as `--help` shows it: the default config
/// path resolved for this user.
pub fn command() -> clap::Command {
    let config = run::default_config().map_or_else(
        || "nothing: neither XDG_CONFIG_HOME nor HOME is set, so pass --config".to_owned(),
        |p| p.display().to_string(),
    );
    with_footers(&config)
}

/// The definition for generated files (man page, completions), which say
/// where the default config is in general.
pub(crate) fn reference_command() -> clap::Command {
    with_footers(
        "$XDG_CONFIG_HOME/herdr-core-mcp/config.json (else ~/.config/herdr-core-mcp/config.json)",
    )
}

fn with_footers(config: &str) -> clap::Command {
    let mut command = Cli::command()
        .long_version(long_version())
        .after_help(footer(config, "herdr-core-mcp doctor"));
    for (name, example) in EXAMPLES {
        // status, completions and man take no --config.
        let takes_config = !matches!(name, "status" | "completions" | "man");
        let config = if takes_config { config } else { "" };
        command = command.mut_subcommand(name, |sub| sub.after_help(footer(config, example)));
    }
    command
}
