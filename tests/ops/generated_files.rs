//! The files the adapter generates or ships for the system around it, each
//! checked by the program that reads it: the bash completion run in bash
//! the way readline runs it (`al<TAB>`, `allow --<TAB>`, `--config <TAB>`),
//! the fish one asked by fish, the zsh one parsed and registered by zsh,
//! the man page through `groff -ww` and `mandoc -T lint`, and the systemd
//! units through `systemd-analyze verify`.
//!
//! bash is everywhere; zsh, fish, groff, mandoc and systemd-analyze may not
//! be. A missing one fails its test and names `scripts/check-generated.sh`,
//! which installs them (apt) and runs these tests: nothing is skipped.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::run_adapter;

mod completions;
mod man_page;
mod units;

/// A tool these checks need, from `PATH`; fails (never skips) without it.
fn tool(name: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| {
            panic!(
                "{name} is not installed; scripts/check-generated.sh installs it \
                 (apt-get) and runs these tests"
            )
        })
}

/// What `herdr-core-mcp ARGS` prints (it must succeed).
fn generated(args: &[&str]) -> String {
    let (code, stdout, stderr) = run_adapter(args, &[]);
    assert_eq!(code, 0, "herdr-core-mcp {args:?}: {stderr}");
    stdout
}

fn run(command: &mut Command) -> Output {
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(path)
}

// ---------------------------------------------------------------- bash

/// The subcommands `--help` lists.
fn subcommands() -> Vec<String> {
    let help = generated(&["--help"]);
    let listed: Vec<String> = help
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .filter_map(|line| line.split_whitespace().next().map(str::to_owned))
        .collect();
    assert!(listed.len() >= 8, "no commands found in --help:\n{help}");
    listed
}

/// The long options `herdr-core-mcp SUB --help` lists (clap's own `help`
/// subcommand takes none, nor `--help`).
fn long_options(sub: &str) -> BTreeSet<String> {
    if sub == "help" {
        return BTreeSet::new();
    }
    let option = regex::Regex::new(r"^\s+(?:-\w, )?(--[A-Za-z0-9][A-Za-z0-9-]*)").unwrap();
    generated(&[sub, "--help"])
        .lines()
        .skip_while(|line| !line.starts_with("Options:"))
        .filter_map(|line| option.captures(line).map(|c| c[1].to_owned()))
        .collect()
}
