//! What `completions` and `man` print, both from the command line's own
//! definition (the `clap::Command` the caller passes), so a new command
//! or flag shows up in them without being written twice.
//!
//! Completions are clap_complete's, with two repairs:
//!
//! - bash: clap_complete names the script's states after the binary with
//!   each `-` made `__` in one place and `__subcmd__` in the other, so for
//!   `herdr-core-mcp` no state ever matched and no subcommand's options were
//!   completed. The script is generated for a name without `-` (every state
//!   then agrees) and only the word `complete -F` registers is set back to
//!   the real name.
//! - every shell: a path argument (`--config FILE`) completes as a file
//!   path, so bash quotes names with spaces and marks directories.
//!
//! The man page is written here (with clap_mangen's `roff`) rather than
//! taken whole from clap_mangen, which points at per-command pages that do
//! not exist, runs the version lines together and shifts the `.TH`
//! arguments: a page with NAME, SYNOPSIS, DESCRIPTION, COMMANDS (each one's
//! usage, text and options, from clap), OPTIONS, ENVIRONMENT, FILES, EXIT
//! STATUS, VERSION, EXAMPLES and SEE ALSO.

use clap::{Command, ValueHint};
use clap_complete::Shell;

mod man;
mod sections;

pub(super) use man::man;

/// The program's name, as installed and as completed.
const BIN: &str = "herdr-core-mcp";
/// The name the bash script is generated for (no `-`; see the module doc).
const BASH_STANDIN: &str = "herdr_core_mcp";
/// When this page last changed in substance (the `.TH` date).
const PAGE_DATE: &str = "2026-12-01";

/// The completion script for `shell`.
pub(super) fn completion(shell: Shell, command: Command) -> String {
    let mut command = path_hints(command);
    let mut script = Vec::new();
    match shell {
        Shell::Bash => {
            clap_complete::generate(shell, &mut command, BASH_STANDIN, &mut script);
            register_as_bin(&String::from_utf8_lossy(&script))
        }
        _ => {
            clap_complete::generate(shell, &mut command, BIN, &mut script);
            String::from_utf8_lossy(&script).into_owned()
        }
    }
}

/// Every argument that takes any path (clap's guess for a `PathBuf`) is
/// completed as a file path, in every subcommand.
fn path_hints(command: Command) -> Command {
    command
        .mut_args(|arg| {
            if arg.get_value_hint() == ValueHint::AnyPath {
                arg.value_hint(ValueHint::FilePath)
            } else {
                arg
            }
        })
        .mut_subcommands(path_hints)
}

/// The bash script generated for [`BASH_STANDIN`], registered for [`BIN`]:
/// only the last word of each `complete -F` line changes.
fn register_as_bin(script: &str) -> String {
    let standin = format!(" {BASH_STANDIN}");
    let mut out = String::with_capacity(script.len() + 128);
    out.push_str(&format!(
        "# bash completion for {BIN} (`{BIN} completions bash`)\n"
    ));
    for line in script.lines() {
        match line.strip_suffix(&standin) {
            Some(head) if line.trim_start().starts_with("complete -F ") => {
                out.push_str(head);
                out.push(' ');
                out.push_str(BIN);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    out
}
