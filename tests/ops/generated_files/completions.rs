//! The completion scripts, run by the shells that read them.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{generated, long_options, run, subcommands, text, tool};

/// Loads the script as a user's shell would, finds the function that
/// `complete` registered for herdr-core-mcp, and calls it as readline does
/// (COMP_WORDS, COMP_CWORD, COMP_LINE, COMP_POINT; arguments: command,
/// current word, previous word). Prints COMPREPLY one entry a line, and on
/// stderr the `complete -p` line and any `compopt` the function asked for
/// (`compopt` itself only works while readline completes).
const BASH_HARNESS: &str = r#"
set -u
script=$1; shift
source "$script" || exit 90
spec=$(complete -p herdr-core-mcp) || exit 91
printf 'spec: %s\n' "$spec" >&2
fn=$(sed -n 's/.* -F \([^ ]*\) .*/\1/p' <<<"$spec")
declare -F "$fn" >/dev/null || exit 92
compopt() { printf 'compopt %s\n' "$*" >&2; }
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
"$fn" "${COMP_WORDS[0]}" "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
for reply in "${COMPREPLY[@]}"; do printf '%s\n' "$reply"; done
"#;

struct Bash {
    dir: tempfile::TempDir,
    script: PathBuf,
}

impl Bash {
    fn new() -> Bash {
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("herdr-core-mcp.bash");
        std::fs::write(&script, generated(&["completions", "bash"])).unwrap();
        Bash { dir, script }
    }

    /// COMPREPLY for the command line `words` (the last one being typed),
    /// run in `cwd`; and what the harness said on stderr.
    fn complete_in(&self, cwd: &Path, words: &[&str]) -> (Vec<String>, String) {
        let out = run(Command::new(tool("bash"))
            .args(["--norc", "--noprofile", "-c", BASH_HARNESS, "harness"])
            .arg(&self.script)
            .args(words)
            .current_dir(cwd));
        let said = text(&out.stderr);
        assert!(
            out.status.success(),
            "bash {words:?}: {:?}\n{said}",
            out.status
        );
        let replies = text(&out.stdout).lines().map(str::to_owned).collect();
        (replies, said)
    }

    fn complete(&self, words: &[&str]) -> Vec<String> {
        self.complete_in(self.dir.path(), words).0
    }
}

#[test]
fn bash_registers_the_completion_for_the_hyphenated_name() {
    let bash = Bash::new();
    let (_, said) = bash.complete_in(bash.dir.path(), &["herdr-core-mcp", ""]);
    let spec = said
        .lines()
        .find_map(|line| line.strip_prefix("spec: "))
        .expect("complete -p printed the spec");
    assert!(
        spec.starts_with("complete ") && spec.ends_with(" herdr-core-mcp") && spec.contains(" -F "),
        "{spec}"
    );
}

#[test]
fn bash_completes_a_subcommand_from_its_start() {
    let bash = Bash::new();
    assert_eq!(bash.complete(&["herdr-core-mcp", "al"]), ["allow"]);
    assert_eq!(
        bash.complete(&["herdr-core-mcp", "inspect"]),
        ["inspect-core"]
    );
    let all = bash.complete(&["herdr-core-mcp", ""]);
    for sub in subcommands() {
        assert!(all.contains(&sub), "{sub} not offered: {all:?}");
    }
}

#[test]
fn bash_completes_a_subcommands_own_options() {
    let bash = Bash::new();
    let offered: BTreeSet<String> = bash
        .complete(&["herdr-core-mcp", "allow", "--"])
        .into_iter()
        .collect();
    for option in ["--multiline", "--dry-run", "--config", "--help"] {
        assert!(
            offered.contains(option),
            "allow --<TAB> lacks {option}: {offered:?}"
        );
    }
    // Every subcommand, the hyphenated one included, offers exactly the
    // long options its --help lists.
    for sub in subcommands() {
        let offered: BTreeSet<String> = bash
            .complete(&["herdr-core-mcp", &sub, "--"])
            .into_iter()
            .collect();
        assert_eq!(offered, long_options(&sub), "{sub} --<TAB>");
    }
}

#[test]
fn bash_completes_file_names_after_config() {
    let bash = Bash::new();
    let cwd = tempfile::tempdir().unwrap();
    std::fs::write(cwd.path().join("known.json"), "{}").unwrap();
    std::fs::write(cwd.path().join("my config.json"), "{}").unwrap();
    std::fs::create_dir(cwd.path().join("configs")).unwrap();

    let (all, said) = bash.complete_in(cwd.path(), &["herdr-core-mcp", "allow", "--config", ""]);
    let all: BTreeSet<String> = all.into_iter().collect();
    let expected: BTreeSet<String> = ["known.json", "my config.json", "configs"]
        .map(String::from)
        .into();
    assert_eq!(all, expected, "--config <TAB>");
    // Names are quoted and directories get their slash.
    assert!(said.contains("compopt -o filenames"), "{said}");

    let (one, _) = bash.complete_in(cwd.path(), &["herdr-core-mcp", "doctor", "--config", "kn"]);
    assert_eq!(one, ["known.json"]);
    let (spaced, _) = bash.complete_in(cwd.path(), &["herdr-core-mcp", "serve", "--config", "my"]);
    assert_eq!(spaced, ["my config.json"]);
}

#[test]
fn bash_completes_the_shell_names_of_completions() {
    let bash = Bash::new();
    assert_eq!(
        bash.complete(&["herdr-core-mcp", "completions", "fi"]),
        ["fish"]
    );
}

// ----------------------------------------------------------- zsh, fish

#[test]
fn zsh_parses_and_registers_its_completion() {
    let zsh = tool("zsh");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("_herdr-core-mcp");
    std::fs::write(&script, generated(&["completions", "zsh"])).unwrap();
    let parsed = run(Command::new(&zsh).arg("-n").arg(&script));
    assert!(parsed.status.success(), "zsh -n: {}", text(&parsed.stderr));

    // As installed: a _herdr-core-mcp file on fpath, found by compinit.
    let registered = run(Command::new(&zsh)
        .args(["-f", "-c"])
        .arg(
            "fpath=(\"$1\" $fpath); autoload -Uz compinit; compinit -u -d \"$1/.zcompdump\"; \
             print -r -- \"$_comps[herdr-core-mcp]\"",
        )
        .arg("zsh")
        .arg(dir.path())
        .env("HOME", dir.path()));
    assert!(registered.status.success(), "{}", text(&registered.stderr));
    assert_eq!(text(&registered.stdout).trim(), "_herdr-core-mcp");
}

#[test]
fn fish_parses_and_completes() {
    let fish = tool("fish");
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("herdr-core-mcp.fish");
    std::fs::write(&script, generated(&["completions", "fish"])).unwrap();
    std::fs::write(dir.path().join("known.json"), "{}").unwrap();
    let parsed = run(Command::new(&fish).arg("--no-execute").arg(&script));
    assert!(
        parsed.status.success(),
        "fish --no-execute: {}",
        text(&parsed.stderr)
    );

    let complete = |line: &str| -> Vec<String> {
        let out = run(Command::new(&fish)
            .args(["--no-config", "-c"])
            .arg("source $argv[1]; complete -C $argv[2]")
            .arg(&script)
            .arg(line)
            .current_dir(dir.path())
            .env("HOME", dir.path()));
        assert!(out.status.success(), "{line}: {}", text(&out.stderr));
        text(&out.stdout)
            .lines()
            .map(|l| l.split('\t').next().unwrap_or_default().to_owned())
            .collect()
    };
    assert_eq!(complete("herdr-core-mcp al"), ["allow"]);
    let options = complete("herdr-core-mcp allow --");
    for option in ["--multiline", "--dry-run", "--config"] {
        assert!(options.iter().any(|o| o == option), "{options:?}");
    }
    assert!(
        complete("herdr-core-mcp allow --config kn").contains(&"known.json".to_owned()),
        "fish --config <TAB>"
    );
}
