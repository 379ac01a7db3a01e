//! The binary: parse the command line, run one command, map its result to
//! an exit code. Nothing but MCP protocol is ever written to stdout by
//! `serve`; logs go to stderr.
//!
//! Every failure is one line on stderr, written by [`fail`]: the whole
//! message is escaped there (`escape::printable`), so an address, a path
//! or an argument that carries ESC, C1, bidi or line-breaking characters
//! is shown, never obeyed, and never splits the line. Errors are worded
//! where they arise and escaped once, here, rather than at each `format!`.

use std::process::ExitCode;

use clap::FromArgMatches;
use clap::error::ErrorKind;
use herdr_core_mcp::printable;
use herdr_core_mcp::{Cli, cli_definition, meant_command, run_command};

fn main() -> ExitCode {
    let parsed = cli_definition()
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            println!("{}", e.render().to_string().trim_end());
            return ExitCode::SUCCESS;
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            let said = usage_error(&e.render().to_string());
            // `serve --http`, `serve --port 8765`, ...: serve takes only
            // --config; everything else is in the config file.
            let serving = std::env::args().nth(1).as_deref() == Some("serve");
            let first = std::env::args().nth(1).unwrap_or_default();
            let hint = if serving && e.kind() == ErrorKind::UnknownArgument {
                "; serve takes only --config: the transport is chosen in the config (\"transport\": \"http\" or \"stdio\"), the port in http.port".to_owned()
            } else if let Some(meant) =
                meant_command(&first).filter(|_| e.kind() == ErrorKind::InvalidSubcommand)
            {
                format!("; the command for that is `herdr-core-mcp {meant}`")
            } else {
                String::new()
            };
            return fail(&format!("{said}{hint}; see herdr-core-mcp --help"), 2);
        }
    };
    herdr_core_mcp::init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(worker_threads())
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return fail(&format!("cannot start the async runtime: {e}"), 1),
    };
    let result = runtime.block_on(run_command(cli.command));
    // Leave no task running past main (e.g. a blocked stdin reader).
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    herdr_core_mcp::flush_logs(std::time::Duration::from_millis(500));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => fail(&error.to_string(), error.exit_code()),
    }
}

/// Prints `message` as the one escaped stderr line of a failure, and
/// returns `code` to exit with.
fn fail(message: &str, code: u8) -> ExitCode {
    eprintln!("herdr-core-mcp: {}", printable(message));
    ExitCode::from(code)
}

/// clap's error as one line: its text up to the usage, lines joined, so
/// what is missing or wrong stays named ("... not provided: <ADDRESS>").
fn usage_error(rendered: &str) -> String {
    let said: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Usage:"))
        .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
        .collect();
    let line = said.join(" ");
    line.strip_prefix("error: ").unwrap_or(&line).to_owned()
}

/// A small fixed pool: the adapter is I/O-bound and should stay tiny.
fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4))
}
