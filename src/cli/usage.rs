//! What a command line clap refused says: clap's own words up to its usage,
//! on one line, then the fix where the mistake is a known one (another
//! name for a command, a flag `serve` or `allow` does not take).

use clap::error::{ContextKind, ContextValue, ErrorKind};

use super::meant;

/// The one line for a refused command line; `args` are the arguments
/// after the program's name.
pub fn usage_error(error: &clap::Error, args: &[String]) -> String {
    let command = args.first().map_or("", String::as_str);
    let unknown = match error.kind() {
        ErrorKind::UnknownArgument => invalid_arg(error),
        _ => None,
    };
    let config = config_flag(args);
    let fix = match (command, unknown) {
        ("serve", Some(flag)) => Some(serve_fix(flag_name(flag), &config)),
        ("allow", Some(flag)) => mode_fix(flag_name(flag), value_after(args, flag), &config),
        ("inspect-core" | "doctor", Some(flag)) => socket_fix(command, flag_name(flag), &config),
        _ => None,
    };
    if let (Some(flag), Some(fix)) = (unknown, fix) {
        // clap's tip for these ("to pass it as a value, use `-- --flag`")
        // leads the wrong way, and a value given with `=` may be a token:
        // the line names the flag alone.
        return format!("unexpected argument '{}' found; {fix}", flag_name(flag));
    }
    let said = clap_line(&error.render().to_string());
    if command == "revoke" && error.kind() == ErrorKind::MissingRequiredArgument {
        return format!(
            "{said}; name the terminal (herdr-core-mcp revoke{config} ADDRESS), or remove every approval with herdr-core-mcp revoke --all{config}"
        );
    }
    match meant(command).filter(|_| error.kind() == ErrorKind::InvalidSubcommand) {
        Some(meant) => format!("{said}; the command for that is `herdr-core-mcp {meant}{config}`"),
        None => said,
    }
}

/// ` --config FILE` as the refused command line gave it (so the commands a
/// fix names act on the same config), or empty.
fn config_flag(args: &[String]) -> String {
    let mut given = args.iter();
    while let Some(arg) = given.next() {
        let file = match arg.strip_prefix("--config=") {
            Some(file) => Some(file.to_owned()),
            None if arg == "--config" => given.next().cloned(),
            None => None,
        };
        if let Some(file) = file {
            return format!(" --config {}", crate::escape::printable(&file));
        }
    }
    String::new()
}

/// The argument clap did not know, as given.
fn invalid_arg(error: &clap::Error) -> Option<&str> {
    match error.get(ContextKind::InvalidArg) {
        Some(ContextValue::String(arg)) => Some(arg),
        _ => None,
    }
}

/// The argument right after `flag` on the command line, if any.
fn value_after<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let at = args.iter().position(|arg| arg == flag)?;
    args.get(at + 1).map(String::as_str)
}

/// `--token=abc` is the flag `--token`.
fn flag_name(arg: &str) -> &str {
    arg.split_once('=').map_or(arg, |(name, _)| name)
}

/// Where what an unknown `serve` flag means is set instead.
fn serve_fix(flag: &str, config: &str) -> String {
    let init = format!(
        "hc's socket is socketPath in the config (`herdr-core-mcp init --socket PATH{config}` writes it)"
    );
    let mode = format!(
        "the send mode is sendMode in the config, or per terminal with `herdr-core-mcp allow --mode MODE{config} ADDRESS`"
    );
    let instead = match flag {
        "--token" | "--bearer-token" | "--read-token" | "--auth" => {
            "the bearer tokens come from the environment: HERDR_MCP_TOKEN (full) and HERDR_MCP_READ_TOKEN (read-only), never from the command line; the auth mode is http.auth in the config"
        }
        "--socket" | "--socket-path" | "--hc-socket" => &init,
        "--port" => "the port is http.port in the config",
        "--host" | "--bind" | "--listen" | "--address" => {
            "HTTP listens on 127.0.0.1 only, at http.port in the config"
        }
        "--mode" | "--send-mode" | "--idle-only" | "--normal" => &mode,
        _ => {
            "the transport is chosen in the config (\"transport\": \"http\" or \"stdio\"), the port in http.port"
        }
    };
    format!("serve takes only --config: {instead}")
}

/// `inspect-core --socket PATH`: the socket is the config's.
fn socket_fix(command: &str, flag: &str, config: &str) -> Option<String> {
    matches!(flag, "--socket" | "--socket-path" | "--hc-socket").then(|| {
        format!(
            "{command} asks the socket the config names (socketPath); to look at another core, write a config for it with `herdr-core-mcp init --socket PATH --config FILE` and run `herdr-core-mcp {command} --config FILE`{}",
            if config.is_empty() { "" } else { " (this config's socketPath is used now)" }
        )
    })
}

/// `allow --normal` or `allow -m normal`: the mode is a value of `--mode`.
fn mode_fix(flag: &str, value: Option<&str>, config: &str) -> Option<String> {
    let mode = match (flag, value) {
        ("--normal", _) => "normal",
        ("--idle-only" | "--idle", _) => "idle-only",
        ("-m", Some(mode @ ("normal" | "idle-only"))) => mode,
        ("-m", _) => "MODE",
        _ => return None,
    };
    Some(format!(
        "the send mode is given as `--mode {mode}`: herdr-core-mcp allow --mode {mode}{config} ADDRESS"
    ))
}

/// clap's error as one line: its text up to the usage, lines joined, so
/// what is missing or wrong stays named ("... not provided: <ADDRESS>"),
/// with its suggestion ("a similar subcommand exists: 'allow'").
fn clap_line(rendered: &str) -> String {
    let said: Vec<&str> = rendered
        .lines()
        .map(str::trim)
        .take_while(|line| !line.starts_with("Usage:"))
        .filter(|line| !line.is_empty() && !line.starts_with("For more information"))
        .collect();
    let mut line = String::new();
    for part in said {
        if !line.is_empty() {
            line.push_str(if part.starts_with("tip:") { "; " } else { " " });
        }
        line.push_str(part);
    }
    line.strip_prefix("error: ").unwrap_or(&line).to_owned()
}
