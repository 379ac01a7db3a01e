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
use herdr_core_mcp::{Cli, cli_definition, run_command, usage_error};

fn main() -> ExitCode {
    let parsed = cli_definition()
        .try_get_matches()
        .and_then(|matches| Cli::from_arg_matches(&matches));
    let cli = match parsed {
        Ok(cli) => cli,
        Err(e) if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) => {
            return shown(&format!("{}\n", e.render().to_string().trim_end()));
        }
        Err(e) if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let _ = e.print();
            return ExitCode::from(2);
        }
        Err(e) => {
            let args: Vec<String> = std::env::args().skip(1).collect();
            return fail(
                &format!("{}; see herdr-core-mcp --help", usage_error(&e, &args)),
                2,
            );
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

/// Prints `text` on stdout. A reader that closed the pipe early (`--version
/// | head -c1`) has what it wanted: that is no failure, and no panic.
fn shown(text: &str) -> ExitCode {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(&format!("cannot write to stdout: {e}"), 1),
    }
}

/// A small fixed pool: the adapter is I/O-bound and should stay tiny.
fn worker_threads() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 4))
}
