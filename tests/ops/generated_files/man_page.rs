//! The man page, rendered and linted by groff and mandoc.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use super::{generated, long_options, repo_file, run, subcommands, text, tool};

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
