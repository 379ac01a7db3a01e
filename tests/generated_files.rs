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

use serde_json::json;

use crate::support::{adapter_bin, run_adapter, write_config};

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

// ------------------------------------------------------------ man page

struct Page {
    roff: String,
    path: PathBuf,
    _dir: tempfile::TempDir,
}

fn man_page() -> Page {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("herdr-core-mcp.1");
    let roff = generated(&["man"]);
    std::fs::write(&path, &roff).unwrap();
    Page {
        roff,
        path,
        _dir: dir,
    }
}

/// The page as `man` shows it, without fonts, in wide lines.
fn rendered(page: &Page) -> String {
    let out = run(Command::new(tool("groff"))
        .args(["-man", "-Tascii", "-P-cbou", "-rLL=150n"])
        .arg(&page.path));
    assert!(out.status.success(), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// The lines of section `name` of the rendered page, trimmed, non-empty.
fn section(rendered: &str, name: &str) -> Vec<String> {
    rendered
        .lines()
        .skip_while(|line| line.trim_end() != name)
        .skip(1)
        .take_while(|line| line.is_empty() || line.starts_with(' '))
        .map(str::trim)
        .filter(|line| !line.is_empty())
        .map(str::to_owned)
        .collect()
}

#[test]
fn groff_and_mandoc_render_the_man_page_without_a_warning() {
    let page = man_page();
    let groff = run(Command::new(tool("groff"))
        .args(["-ww", "-z", "-man"])
        .arg(&page.path));
    assert!(
        groff.status.success() && groff.stderr.is_empty(),
        "groff -ww: {}",
        text(&groff.stderr)
    );
    // mandoc's STYLE notes (long source lines) are not problems; anything
    // from WARNING up is.
    let mandoc = run(Command::new(tool("mandoc"))
        .args(["-T", "lint", "-W", "warning"])
        .arg(&page.path));
    let said = format!("{}{}", text(&mandoc.stdout), text(&mandoc.stderr));
    assert!(
        mandoc.status.success() && said.is_empty(),
        "mandoc -T lint: {said}"
    );
}

#[test]
fn the_man_page_has_the_sections_of_a_man_page() {
    let page = man_page();
    let headings: Vec<&str> = page
        .roff
        .lines()
        .filter_map(|line| line.strip_prefix(".SH "))
        .map(|h| h.trim_matches('"'))
        .collect();
    assert_eq!(
        headings,
        [
            "NAME",
            "SYNOPSIS",
            "DESCRIPTION",
            "COMMANDS",
            "OPTIONS",
            "ENVIRONMENT",
            "FILES",
            "EXIT STATUS",
            "VERSION",
            "EXAMPLES",
            "SEE ALSO"
        ]
    );
    let version = generated(&["--version"]);
    let number = version
        .lines()
        .next()
        .and_then(|l| l.strip_prefix("herdr-core-mcp "))
        .expect("--version starts with the name");
    let th = page
        .roff
        .lines()
        .find(|l| l.starts_with(".TH "))
        .expect(".TH");
    let th_args =
        regex::Regex::new(r#"^\.TH (\S+) 1 (\d{4}-\d{2}-\d{2}) "(.+)" "User Commands"$"#).unwrap();
    let parts = th_args.captures(th).unwrap_or_else(|| panic!("{th}"));
    assert_eq!(&parts[1], r"HERDR\-CORE\-MCP");
    assert_eq!(
        parts[3].replace(r"\-", "-"),
        format!("herdr-core-mcp {number}")
    );
}

#[test]
fn the_man_page_version_is_the_version_one_fact_a_line() {
    let shown = rendered(&man_page());
    let version = generated(&["--version"]);
    let mut expected: Vec<String> = version.lines().map(str::to_owned).collect();
    expected[0] = expected[0].replace("herdr-core-mcp ", "");
    assert_eq!(section(&shown, "VERSION"), expected, "{shown}");
}

#[test]
fn the_man_page_describes_every_command_and_option() {
    let page = man_page();
    let shown = rendered(&page);
    let commands = section(&shown, "COMMANDS");
    let synopsis = section(&shown, "SYNOPSIS");
    let options = section(&shown, "OPTIONS");
    for sub in subcommands() {
        assert!(commands.contains(&sub), "COMMANDS has no {sub}:\n{shown}");
        assert!(
            synopsis
                .iter()
                .any(|l| l.starts_with(&format!("herdr-core-mcp {sub}"))),
            "SYNOPSIS has no {sub}"
        );
        for option in long_options(&sub) {
            let described = |lines: &[String]| {
                lines
                    .iter()
                    .any(|l| l.split([' ', ',']).any(|word| word == option))
            };
            assert!(
                described(&commands) || described(&options),
                "{sub} {option} is not described:\n{shown}"
            );
        }
    }
    // Nothing points at --help's footer, which the page does not have.
    assert!(!shown.contains("this help"), "{shown}");
    // No page per command is pointed at (none is installed).
    assert!(!page.roff.contains(r"herdr\-core\-mcp\-serve(1)"));
}

#[test]
fn the_man_page_names_every_variable_the_program_reads() {
    let shown = rendered(&man_page());
    let environment = section(&shown, "ENVIRONMENT").join("\n");
    let mut read: BTreeSet<String> = [
        "HERDR_MCP_TOKEN",
        "HERDR_MCP_READ_TOKEN",
        "RUST_LOG",
        "XDG_CONFIG_HOME",
        "HOME",
        "LISTEN_FDS",
        "LISTEN_PID",
    ]
    .map(String::from)
    .into();
    // And any other the source reads by name.
    let by_name = regex::Regex::new(
        r#"(?:env::var(?:_os)?|var(?:_os)?|absolute)\("([A-Z][A-Z0-9_]+)"\)|_ENV: &str = "([A-Z][A-Z0-9_]+)""#,
    )
    .unwrap();
    for file in rust_files(&repo_file("src")) {
        let source = std::fs::read_to_string(&file).unwrap();
        for found in by_name.captures_iter(&source) {
            let name = found.get(1).or(found.get(2)).unwrap().as_str();
            read.insert(name.to_owned());
        }
    }
    for name in read {
        let word = regex::Regex::new(&format!(r"\b{name}\b")).unwrap();
        assert!(
            word.is_match(&environment),
            "ENVIRONMENT lacks {name}:\n{environment}"
        );
    }
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn the_man_page_exit_status_and_see_also_are_real() {
    let page = man_page();
    let shown = rendered(&page);
    let status = section(&shown, "EXIT STATUS");
    for code in ["0", "1", "2"] {
        assert!(
            status
                .iter()
                .any(|l| l.split_whitespace().next() == Some(code)),
            "EXIT STATUS lacks {code}: {status:?}"
        );
    }
    // Every page SEE ALSO names is installed here (systemd's come with the
    // systemd package that scripts/check-generated.sh installs).
    tool("systemd-analyze");
    let see_also = section(&shown, "SEE ALSO").join(" ");
    let reference = regex::Regex::new(r"([A-Za-z0-9_.-]+)\((\d)\)").unwrap();
    let named: Vec<_> = reference.captures_iter(&see_also).collect();
    assert!(!named.is_empty(), "SEE ALSO names no page: {see_also}");
    for found in named {
        let (name, section) = (&found[1], &found[2]);
        let installed = ["/usr/share/man", "/usr/local/share/man"]
            .iter()
            .any(|root| {
                ["", ".gz"].iter().any(|ext| {
                    Path::new(root)
                        .join(format!("man{section}/{name}.{section}{ext}"))
                        .is_file()
                })
            });
        assert!(
            installed,
            "SEE ALSO names {name}({section}), which is not installed"
        );
    }
}

// -------------------------------------------------------------- systemd

fn unit(name: &str) -> String {
    std::fs::read_to_string(repo_file(&format!("examples/{name}"))).unwrap()
}

/// The unit's settings (not comments), as `Key=value` lines.
fn settings(unit: &str) -> Vec<&str> {
    unit.lines()
        .map(str::trim)
        .filter(|l| l.contains('=') && !l.starts_with('#') && !l.starts_with(';'))
        .collect()
}

#[test]
fn the_service_starts_without_hcs_folder_and_says_private_tmp_hides_tmp() {
    let service = unit("herdr-core-mcp.service");
    let paths: Vec<&str> = settings(&service)
        .into_iter()
        .filter(|l| l.starts_with("ReadWritePaths="))
        .collect();
    assert_eq!(paths, ["ReadWritePaths=-%t/herdr-core"]);
    assert!(settings(&service).contains(&"PrivateTmp=yes"));
    assert!(
        service.contains("PrivateTmp=yes gives the service its own empty /tmp"),
        "the unit must say what PrivateTmp hides"
    );
}

#[test]
fn the_socket_listens_where_serve_would() {
    // serve takes an inherited socket only on 127.0.0.1:<http.port>; the
    // unit's is the port of a config that does not name one.
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("hc.sock"), "transport": "http"}),
    );
    let loaded = herdr_core_mcp::config::Config::load(&config).expect("a minimal http config");
    let herdr_core_mcp::config::Transport::Http(http) = loaded.transport() else {
        panic!("not http")
    };
    let socket = unit("herdr-core-mcp.socket");
    let listen: Vec<&str> = settings(&socket)
        .into_iter()
        .filter(|l| l.starts_with("ListenStream="))
        .collect();
    assert_eq!(listen, [format!("ListenStream=127.0.0.1:{}", http.port())]);
    assert!(settings(&socket).contains(&"WantedBy=sockets.target"));
}

#[test]
fn systemd_analyze_verifies_both_units() {
    let analyze = tool("systemd-analyze");
    // A home where the units' %h/.local/bin/herdr-core-mcp is this build,
    // and a runtime directory (%t) for the user manager's view.
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join(".local/bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(adapter_bin(), bin.join("herdr-core-mcp")).unwrap();
    let runtime = home.path().join("run");
    std::fs::create_dir(&runtime).unwrap();
    let units = home.path().join("units");
    std::fs::create_dir(&units).unwrap();
    for name in ["herdr-core-mcp.service", "herdr-core-mcp.socket"] {
        std::fs::copy(repo_file(&format!("examples/{name}")), units.join(name)).unwrap();
    }
    let out = run(Command::new(analyze)
        .args(["--user", "verify"])
        .arg(units.join("herdr-core-mcp.socket"))
        .arg(units.join("herdr-core-mcp.service"))
        .env("HOME", home.path())
        .env("XDG_RUNTIME_DIR", &runtime)
        .env_remove("XDG_CONFIG_HOME")
        .env("SYSTEMD_LOG_COLOR", "0"));
    // verify exits 0 on an unknown key or a bad value: any line is a finding.
    let said = format!("{}{}", text(&out.stdout), text(&out.stderr));
    assert!(
        out.status.success() && said.trim().is_empty(),
        "systemd-analyze --user verify: {:?}\n{said}",
        out.status
    );
}
