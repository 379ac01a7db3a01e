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

use std::collections::BTreeMap;

use clap::{Arg, Command, ValueHint};
use clap_complete::Shell;
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

/// The program's name, as installed and as completed.
const BIN: &str = "herdr-core-mcp";
/// The name the bash script is generated for (no `-`; see the module doc).
const BASH_STANDIN: &str = "herdr_core_mcp";
/// When this page last changed in substance (the `.TH` date).
const PAGE_DATE: &str = "2026-12-01";

/// The completion script for `shell`.
pub fn completion(shell: Shell, command: Command) -> String {
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

/// The man page (roff, section 1).
pub fn man(command: Command) -> std::io::Result<Vec<u8>> {
    let mut command = command.bin_name(BIN);
    command.build();
    let mut page = Roff::new();
    title(&mut page, &command);
    name(&mut page, &command);
    synopsis(&mut page, &command);
    description(&mut page);
    commands(&mut page, &command);
    options(&mut page, &command);
    environment(&mut page, &command);
    files(&mut page);
    exit_status(&mut page);
    version(&mut page, &command);
    examples(&mut page);
    see_also(&mut page);
    let mut out = Vec::new();
    page.to_writer(&mut out)?;
    Ok(out)
}

/// `.TH`, written with every argument present (an empty date would shift
/// the rest) and already escaped.
fn title(page: &mut Roff, command: &Command) {
    let title = roff_escape(&BIN.to_uppercase());
    let source = roff_escape(&format!(
        "{BIN} {}",
        command.get_version().unwrap_or(env!("CARGO_PKG_VERSION"))
    ));
    page.control(
        "TH",
        [
            title.as_str(),
            "1",
            PAGE_DATE,
            source.as_str(),
            "User Commands",
        ],
    );
}

fn name(page: &mut Roff, command: &Command) {
    page.control("SH", ["NAME"]);
    let about = command
        .get_about()
        .map(|a| a.to_string())
        .unwrap_or_default();
    page.text([roman(format!("{BIN} - {}", no_final_period(&about)))]);
}

fn synopsis(page: &mut Roff, command: &Command) {
    page.control("SH", ["SYNOPSIS"]);
    let mut first = true;
    let mut line = |page: &mut Roff, inlines: Vec<Inline>| {
        if !first {
            page.control("br", []);
        }
        first = false;
        page.text(inlines);
    };
    line(
        page,
        vec![
            bold(BIN),
            roman(" ["),
            bold("--help"),
            roman("] ["),
            bold("--version"),
            roman("] "),
            italic("COMMAND"),
            roman(" ["),
            italic("OPTIONS"),
            roman("] ["),
            italic("ARGS"),
            roman("]"),
        ],
    );
    for sub in subcommands(command) {
        line(page, usage(sub));
    }
}

/// Written here: the command line's after-help (its footers) repeats what
/// ENVIRONMENT, FILES and EXIT STATUS say.
fn description(page: &mut Roff) {
    page.control("SH", ["DESCRIPTION"]);
    paragraphs(
        page,
        &[
            &format!(
                "{BIN} lets AI assistants (any MCP host) see and prompt the existing terminals \
                 of a local herdr-core (hc), and nothing more. It speaks hc's JSON-RPC over \
                 hc's Unix socket and serves MCP over stdio, or over bearer-authenticated \
                 Streamable HTTP on 127.0.0.1 (a static token, or OAuth access tokens from \
                 an identity provider)."
            ),
            "It never spawns agents or shells, never runs commands, never starts, stops or \
             updates hc, never sends raw keys and never forces input. Sending is off until \
             the operator approves a terminal with allow: an approval names hc's core_id and \
             one terminal lifetime, (address, created_ms), so a restarted hc or a new \
             terminal at an old address is never approved by an old entry.",
            "An MCP host runs the serve command; the operator uses the others. Each command \
             that needs the config takes --config FILE, and otherwise reads the default one \
             (see FILES).",
        ],
        true,
    );
}

/// Each command: its usage, what it does, and its own options (those
/// several commands share are under OPTIONS).
fn commands(page: &mut Roff, command: &Command) {
    let shared = shared_options(command);
    page.control("SH", ["COMMANDS"]);
    for sub in subcommands(command) {
        page.control("SS", [roff_escape(sub.get_name()).as_str()]);
        page.text(usage(sub));
        let about = sub
            .get_long_about()
            .or(sub.get_about())
            .map(|a| a.to_string())
            .unwrap_or_default();
        paragraphs(page, &[&about], false);
        for arg in sub.get_positionals().filter(|a| !a.is_hide_set()) {
            page.control("TP", []);
            page.text(arg_usage(arg, false));
            page.text([roman(arg_help(arg))]);
        }
        for arg in own_options(sub) {
            if is_shared(arg, &shared) {
                continue;
            }
            page.control("TP", []);
            page.text(arg_usage(arg, false));
            page.text([roman(arg_help(arg))]);
        }
    }
}

/// The options every command takes, and those several commands share.
fn options(page: &mut Roff, command: &Command) {
    page.control("SH", ["OPTIONS"]);
    for arg in command.get_arguments().filter(|a| !a.is_hide_set()) {
        page.control("TP", []);
        page.text(flag_names(arg));
        page.text([roman(format!("{} Every command takes it.", arg_help(arg)))]);
    }
    for (arg, taken_by) in shared_options(command).values() {
        page.control("TP", []);
        page.text(arg_usage(arg, false));
        page.text([roman(format!(
            "{} Taken by: {}.",
            arg_help(arg),
            taken_by.join(", ")
        ))]);
    }
}

fn environment(page: &mut Roff, command: &Command) {
    page.control("SH", ["ENVIRONMENT"]);
    let mut vars: Vec<(&str, &str)> = vec![
        (
            "HERDR_MCP_TOKEN",
            "The bearer token HTTP clients must send, in token mode (the default for \
             \"transport\": \"http\"): it allows every tool. At least 32 bytes; read by serve \
             and doctor, never taken from a command line or the config. Not needed for stdio.",
        ),
        (
            "HERDR_MCP_READ_TOKEN",
            "Optional second bearer token, different from HERDR_MCP_TOKEN and held to the \
             same rules, that allows only the read tools (list_sessions, read_output, \
             wait_for_status, wait_for_output).",
        ),
        (
            "the variables http.auth.introspection names",
            "In OAuth mode with token introspection, the config's clientIdEnv and \
             clientSecretEnv name the variables holding this server's client credentials; \
             serve refuses to start (exit 2) when one is unset or empty.",
        ),
        (
            "RUST_LOG",
            "Log levels (default info); logs go to stderr. Other crates are capped at warn \
             whatever it says, and nothing of a screen, a prompt or a token is logged.",
        ),
        (
            "XDG_CONFIG_HOME",
            "The default config is $XDG_CONFIG_HOME/herdr-core-mcp/config.json when it is \
             an absolute path.",
        ),
        (
            "HOME",
            "Otherwise the default config is ~/.config/herdr-core-mcp/config.json. With \
             neither, a command without --config fails (exit 2).",
        ),
        (
            "LISTEN_FDS, LISTEN_PID",
            "Socket activation (systemd.socket(5)): with LISTEN_FDS=1 and LISTEN_PID naming \
             this process (or unset), serve takes the listening TCP socket on descriptor 3 \
             (LISTEN_FDS_FIRST_FD moves it) and binds nothing itself. That socket must listen \
             on 127.0.0.1 and the config's http.port; any other is refused (exit 2).",
        ),
        (
            "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY",
            "In OAuth mode, the requests to the identity provider (metadata, keys, \
             introspection) go through these proxies, as curl's do; the lower-case names \
             work too.",
        ),
        (
            "SSL_CERT_FILE, SSL_CERT_DIR",
            "In OAuth mode, the CA certificates that the identity provider's https \
             certificate is checked against, instead of the system's.",
        ),
    ];
    if command.find_subcommand("init").is_some() {
        vars.push((
            "XDG_RUNTIME_DIR",
            "Where init puts hc's socket when --socket is not given: \
             $XDG_RUNTIME_DIR/herdr-core/hc.sock. Without it (and without --socket) init \
             fails.",
        ));
    }
    for (var, text) in &vars {
        page.control("TP", []);
        if var.starts_with(|c: char| c.is_ascii_uppercase()) {
            let names: Vec<Inline> = var
                .split(", ")
                .enumerate()
                .flat_map(|(i, name)| {
                    let sep = (i > 0).then(|| roman(", "));
                    sep.into_iter().chain([bold(name)])
                })
                .collect();
            page.text(names);
        } else {
            page.text([roman(*var)]);
        }
        page.text([roman(*text)]);
    }
}

fn files(page: &mut Roff) {
    page.control("SH", ["FILES"]);
    let files: &[(&str, &str)] = &[
        (
            "$XDG_CONFIG_HOME/herdr-core-mcp/config.json, else ~/.config/herdr-core-mcp/config.json",
            "The config (JSON) when no --config is given: hc's socketPath, the transport, the \
             coreId and the approved lifetimes (sendAllowlist) that allow and revoke rewrite, \
             and the http settings. It must be a regular file owned by you (or root) that \
             nobody else can write, in directories nobody else can change.",
        ),
        (
            "the config's socketPath",
            "hc's Unix socket, e.g. /run/user/UID/herdr-core/hc.sock.",
        ),
        (
            "the config's auditLog",
            "If set, every send attempt's audit line (content-free JSON) is appended to it as \
             well as written to stderr. It must be a regular file owned by you, mode 0600.",
        ),
        (
            "~/.config/systemd/user/herdr-core-mcp.service, herdr-core-mcp.socket",
            "The systemd user units (from examples/ in the source): serve over HTTP, and \
             optionally socket activation on 127.0.0.1:8765.",
        ),
        (
            "~/.config/herdr-core-mcp/token.env",
            "The example unit's EnvironmentFile (mode 0600): HERDR_MCP_TOKEN=...",
        ),
    ];
    for (path, text) in files {
        page.control("TP", []);
        if path.starts_with(['$', '~']) {
            page.text([italic(*path)]);
        } else {
            page.text([roman(*path)]);
        }
        page.text([roman(*text)]);
    }
}

fn exit_status(page: &mut Roff) {
    page.control("SH", ["EXIT STATUS"]);
    let codes: &[(&str, &str)] = &[
        ("0", "Success; for doctor, every check passed."),
        (
            "1",
            "A failure while running, such as: hc could not be reached or refused, allow found no \
             live terminal at ADDRESS, doctor found a failing check, reload found no serve \
             to signal, the HTTP port could not be bound, or stdout could not be written.",
        ),
        (
            "2",
            "A usage or config error, which retrying cannot fix, such as: bad arguments, a refused \
             config, a missing or weak token, OAuth credentials missing, an audit log that \
             cannot be opened, an inherited socket on the wrong address, or no --config and \
             no home to find the default in. The example systemd unit does not restart on it.",
        ),
    ];
    for (code, text) in codes {
        page.control("TP", []);
        page.text([bold(*code)]);
        page.text([roman(*text)]);
    }
}

/// The long version, one fact a line.
fn version(page: &mut Roff, command: &Command) {
    page.control("SH", ["VERSION"]);
    let long = command
        .get_long_version()
        .or(command.get_version())
        .map(|v| v.to_string())
        .unwrap_or_else(|| env!("CARGO_PKG_VERSION").to_owned());
    for (i, line) in long.lines().enumerate() {
        if i > 0 {
            page.control("br", []);
        }
        page.text([roman(line)]);
    }
}

fn examples(page: &mut Roff) {
    page.control("SH", ["EXAMPLES"]);
    let examples: &[(&str, &[&str])] = &[
        (
            "See the core and its terminals, approve agent terminal t1 for send_prompt, then \
             check the whole setup:",
            &[
                "herdr-core-mcp inspect-core",
                "herdr-core-mcp allow t1",
                "herdr-core-mcp doctor",
            ],
        ),
        (
            "Show what approving t1 would write, with another config:",
            &["herdr-core-mcp allow --dry-run --config ~/hc-test.json t1"],
        ),
        (
            "Make every running serve of the default config reload it:",
            &["herdr-core-mcp reload"],
        ),
        (
            "Serve MCP over HTTP (the config says \"transport\": \"http\"), the token read \
             from a 0600 file rather than a command line:",
            &["(set -a && . ~/.config/herdr-core-mcp/token.env && exec herdr-core-mcp serve)"],
        ),
        (
            "Install the completions and this page for your user:",
            &[
                "herdr-core-mcp completions bash > ~/.local/share/bash-completion/completions/herdr-core-mcp",
                "herdr-core-mcp completions zsh > ~/.zfunc/_herdr-core-mcp",
                "herdr-core-mcp completions fish > ~/.config/fish/completions/herdr-core-mcp.fish",
                "herdr-core-mcp man > ~/.local/share/man/man1/herdr-core-mcp.1",
            ],
        ),
        (
            "Socket activation with the example units installed in ~/.config/systemd/user \
             (enable the socket, not the service):",
            &[
                "systemctl --user daemon-reload",
                "systemctl --user enable --now herdr-core-mcp.socket",
            ],
        ),
    ];
    for (i, (what, lines)) in examples.iter().enumerate() {
        if i > 0 {
            page.control("PP", []);
        }
        page.text([roman(*what)]);
        page.control("PP", []);
        page.control("RS", ["4"]);
        page.control("EX", []);
        for line in *lines {
            page.text([roman(*line)]);
        }
        page.control("EE", []);
        page.control("RE", []);
    }
}

/// Only pages that exist (systemd's, on Debian in the systemd package).
fn see_also(page: &mut Roff) {
    page.control("SH", ["SEE ALSO"]);
    let pages = [
        ("systemctl", "1"),
        ("systemd.exec", "5"),
        ("systemd.service", "5"),
        ("systemd.socket", "5"),
    ];
    let mut line = Vec::new();
    for (i, (name, section)) in pages.iter().enumerate() {
        if i > 0 {
            line.push(roman(", "));
        }
        line.push(bold(*name));
        line.push(roman(format!("({section})")));
    }
    page.text(line);
}

/// The visible subcommands, in `--help` order.
fn subcommands(command: &Command) -> Vec<&Command> {
    let mut subs: Vec<&Command> = command
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .collect();
    subs.sort_by_key(|s| s.get_display_order());
    subs
}

/// A command's options, without `--help` and `--version` (every command
/// takes those; they are under OPTIONS).
fn own_options(command: &Command) -> impl Iterator<Item = &Arg> {
    command.get_arguments().filter(|a| {
        !a.is_positional() && !a.is_hide_set() && !matches!(a.get_id().as_str(), "help" | "version")
    })
}

/// Options with the same long name and help in more than one command,
/// by long name: the option, and the commands that take it. A long name
/// with different help in different commands is described under each.
fn shared_options(command: &Command) -> BTreeMap<String, (&Arg, Vec<&str>)> {
    let mut groups: BTreeMap<(String, String), (&Arg, Vec<&str>)> = BTreeMap::new();
    for sub in subcommands(command) {
        for arg in own_options(sub) {
            if let Some(long) = arg.get_long() {
                groups
                    .entry((long.to_owned(), arg_help(arg)))
                    .or_insert_with(|| (arg, Vec::new()))
                    .1
                    .push(sub.get_name());
            }
        }
    }
    let mut helps_per_long: BTreeMap<String, usize> = BTreeMap::new();
    for (long, _) in groups.keys() {
        *helps_per_long.entry(long.clone()).or_default() += 1;
    }
    groups
        .into_iter()
        .filter(|((long, _), (_, taken_by))| taken_by.len() > 1 && helps_per_long[long] == 1)
        .map(|((long, _), shared)| (long, shared))
        .collect()
}

/// Whether `arg` is one of the `shared` options (described under OPTIONS).
fn is_shared(arg: &Arg, shared: &BTreeMap<String, (&Arg, Vec<&str>)>) -> bool {
    arg.get_long().is_some_and(|long| shared.contains_key(long))
}

/// `herdr-core-mcp allow [--config FILE] [--multiline] ADDRESS`.
fn usage(sub: &Command) -> Vec<Inline> {
    let mut line = vec![bold(format!("{BIN} {}", sub.get_name()))];
    for arg in own_options(sub) {
        line.push(roman(" "));
        line.extend(arg_usage(arg, true));
    }
    for arg in sub.get_positionals().filter(|a| !a.is_hide_set()) {
        line.push(roman(" "));
        line.extend(arg_usage(arg, true));
    }
    line
}

/// An argument as it is typed: `--config FILE`, `ADDRESS`; optional ones
/// in brackets when `brackets`.
fn arg_usage(arg: &Arg, brackets: bool) -> Vec<Inline> {
    let mut parts = Vec::new();
    let optional = brackets && !arg.is_required_set();
    if optional {
        parts.push(roman("["));
    }
    if arg.is_positional() {
        parts.push(italic(value_name(arg)));
        if arg.get_num_args().is_some_and(|n| n.max_values() > 1) {
            parts.push(roman("..."));
        }
    } else {
        parts.extend(flag_names(arg));
        if arg.get_num_args().is_some_and(|n| n.takes_values()) {
            parts.push(roman(" "));
            parts.push(italic(value_name(arg)));
        }
    }
    if optional {
        parts.push(roman("]"));
    }
    parts
}

/// `-h, --help`.
fn flag_names(arg: &Arg) -> Vec<Inline> {
    let mut names = Vec::new();
    if let Some(short) = arg.get_short() {
        names.push(bold(format!("-{short}")));
    }
    if let Some(long) = arg.get_long() {
        if !names.is_empty() {
            names.push(roman(", "));
        }
        names.push(bold(format!("--{long}")));
    }
    names
}

fn value_name(arg: &Arg) -> String {
    arg.get_value_names()
        .map(|names| {
            names
                .iter()
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_else(|| arg.get_id().as_str().to_uppercase())
}

/// An argument's help as sentences, with its possible values and default.
fn arg_help(arg: &Arg) -> String {
    let mut help = arg
        .get_long_help()
        .or(arg.get_help())
        .map(|h| h.to_string())
        .unwrap_or_default();
    // The help's pointer to --help's footer; on this page, FILES says it.
    help = sentence(&help.replace("see the end of this help", "see FILES"));
    let values: Vec<String> = arg
        .get_possible_values()
        .iter()
        .filter(|v| !v.is_hide_set())
        .map(|v| v.get_name().to_owned())
        .collect();
    let named = |value: &String| {
        help.split(|c: char| !c.is_ascii_alphanumeric())
            .any(|word| word == *value)
    };
    if !values.is_empty() && !arg.is_hide_possible_values_set() && !values.iter().all(named) {
        help.push_str(&format!(" One of: {}.", values.join(", ")));
    }
    let defaults: Vec<String> = arg
        .get_default_values()
        .iter()
        .map(|v| v.to_string_lossy().into_owned())
        .collect();
    let takes_values = arg.get_num_args().is_some_and(|n| n.takes_values());
    if takes_values && !defaults.is_empty() && !arg.is_hide_default_value_set() {
        help.push_str(&format!(" Default: {}.", defaults.join(",")));
    }
    help.trim().to_owned()
}

/// Text (clap's help, doc comments) as paragraphs: blank lines separate
/// them, other line breaks are spaces. The first paragraph opens with `.PP`
/// unless it is the first text after a heading (`after_heading`).
fn paragraphs(page: &mut Roff, texts: &[&str], after_heading: bool) {
    let mut first = after_heading;
    for text in texts {
        for paragraph in text.split("\n\n") {
            let joined = paragraph.split_whitespace().collect::<Vec<_>>().join(" ");
            if joined.is_empty() {
                continue;
            }
            if !first {
                page.control("PP", []);
            }
            first = false;
            page.text([roman(sentence(&joined))]);
        }
    }
}

/// clap drops a one-paragraph doc comment's final period; put it back.
fn sentence(text: &str) -> String {
    let text = text.trim();
    if text.is_empty() || text.ends_with(['.', '!', '?', ':']) {
        text.to_owned()
    } else {
        format!("{text}.")
    }
}

fn no_final_period(text: &str) -> &str {
    text.trim().trim_end_matches('.')
}

/// Escapes text for a macro argument (roff's own `text` escapes text lines).
fn roff_escape(text: &str) -> String {
    text.replace('\\', "\\e").replace('-', "\\-")
}
