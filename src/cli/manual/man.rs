//! The man page's frame and the parts taken from the command line's own
//! definition (synopsis, commands, options); the fixed sections are in
//! `sections`.

use std::collections::BTreeMap;

use clap::{Arg, Command};
use clap_mangen::roff::{Inline, Roff, bold, italic, roman};

use super::sections::{environment, examples, exit_status, files, see_also, version};
use super::{BIN, PAGE_DATE};

/// The man page (roff, section 1).
pub(crate) fn man(command: Command) -> std::io::Result<Vec<u8>> {
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
