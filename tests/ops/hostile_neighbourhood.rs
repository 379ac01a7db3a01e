//! The operator commands against a hostile neighbourhood: `reload` among
//! processes that only look like a serve, and error lines that carry
//! names (addresses, directories, arguments) built to drive a terminal.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use serde_json::json;

use crate::support::mcp;
use crate::support::{Sim, SimOptions, eventually, run_adapter};

/// A process that looks like `herdr-core-mcp serve --config CONFIG` in
/// `ps` and `/proc/PID/cmdline`, but is a shell: SIGHUP would kill it.
fn look_alike(dir: &std::path::Path, config: &std::path::Path) -> Child {
    // `sh serve ...` runs the script `serve` from its working directory, so
    // the command line reads exactly as a serve's does.
    std::fs::write(dir.join("serve"), "while :; do sleep 1; done\n").unwrap();
    Command::new("/bin/sh")
        .arg0("herdr-core-mcp")
        .arg("serve")
        .arg("--config")
        .arg(config)
        .current_dir(dir)
        // Its `sleep` may outlive it: it must not hold the test's output.
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the look-alike")
}

#[tokio::test]
async fn reload_signals_every_serve_of_this_binary_and_ignores_look_alikes() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let logs = [
        sim.dir.path().join("first.stderr"),
        sim.dir.path().join("second.stderr"),
    ];
    let (first, first_pid) = mcp::stdio_process((), &config, &logs[0]).await;
    let (second, second_pid) = mcp::stdio_process((), &config, &logs[1]).await;
    let mut impostor = look_alike(sim.dir.path(), &config);
    let impostor_pid = impostor.id();
    // Its command line reads exactly as a serve's, once the shell runs.
    eventually("the look-alike's command line", async || {
        let cmdline = std::fs::read(format!("/proc/{impostor_pid}/cmdline")).ok()?;
        cmdline
            .starts_with(b"herdr-core-mcp\0serve\0--config\0")
            .then_some(())
    })
    .await;

    let (code, stdout, stderr) =
        run_adapter(&["reload", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let pids = format!("serves {first_pid} and {second_pid}, look-alike {impostor_pid}");
    let named = |pid: u32| {
        stdout
            .split(|c: char| !c.is_ascii_digit())
            .any(|n| n == pid.to_string())
    };
    assert!(
        !named(impostor_pid),
        "a look-alike was signalled ({pids}): {stdout}"
    );
    for pid in [first_pid, second_pid] {
        let line = format!("sent SIGHUP to serve (pid {pid})");
        assert_eq!(
            stdout.lines().filter(|l| l.starts_with(&line)).count(),
            1,
            "one line per serve ({pids}): {stdout}"
        );
    }
    for log in &logs {
        eventually("each serve's reload in its log", async || {
            std::fs::read_to_string(log)
                .unwrap_or_default()
                .contains("config reloaded")
                .then_some(())
        })
        .await;
    }
    assert!(
        impostor.try_wait().unwrap().is_none(),
        "the look-alike was killed by SIGHUP"
    );
    impostor.kill().unwrap();
    impostor.wait().unwrap();
    drop((first, second));
}

/// Whether `c` would drive a terminal or break a line: Cc, Cf, U+2028/9.
fn hazardous(c: char) -> bool {
    c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') || herdr_core_mcp::is_hazard(c)
}

/// A failure's stderr: exactly one line, nothing in it a terminal obeys.
fn assert_one_clean_line(what: &str, stderr: &str) {
    let line = stderr
        .strip_suffix('\n')
        .unwrap_or_else(|| panic!("{what}: no line end: {stderr:?}"));
    assert!(
        !line.chars().any(hazardous),
        "{what}: raw control or format characters: {stderr:?}"
    );
    assert!(line.starts_with("herdr-core-mcp: "), "{what}: {stderr:?}");
}

/// ESC (clear screen), RLO, CSI as C1, and a line break in one address.
const HOSTILE_ADDRESS: &str = "t9\u{1b}[2J\u{202e}\u{9b}\nX";

#[test]
fn a_hostile_address_is_shown_on_one_escaped_line() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let config = config.to_str().unwrap();
    for args in [
        vec!["allow", "--config", config, HOSTILE_ADDRESS],
        vec!["allow", "--dry-run", "--config", config, HOSTILE_ADDRESS],
    ] {
        let (code, stdout, stderr) = run_adapter(&args, &[]);
        assert_eq!(code, 1, "{args:?}: {stdout}{stderr}");
        assert_one_clean_line(&format!("{args:?}"), &stderr);
        assert!(
            stderr.contains("t9\\u{001b}[2J\\u{202e}\\u{009b}\\u{000a}X"),
            "{stderr}"
        );
    }
    // clap quotes a bad argument back, escaped the same way.
    let bogus = format!("--{HOSTILE_ADDRESS}");
    let (code, _, stderr) = run_adapter(&["inspect-core", &bogus], &[]);
    assert_eq!(code, 2, "{stderr}");
    assert_one_clean_line("unknown flag", &stderr);
}

#[test]
fn a_config_in_a_hostile_directory_is_refused_on_one_escaped_line() {
    let dir = tempfile::tempdir().unwrap();
    // Sets the window title, clears the screen, breaks the line.
    let hostile = dir
        .path()
        .join("cfg\u{1b}]0;owned\u{7}\u{1b}[2J\u{2028}\u{202e}dir");
    std::fs::create_dir(&hostile).unwrap();
    let real = hostile.join("config.json");
    std::fs::write(&real, r#"{"socketPath": "/nonexistent/hc.sock"}"#).unwrap();
    // Writable by others: refused, with the real path in the message.
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o666)).unwrap();
    let link = dir.path().join("config.json");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let link = link.to_str().unwrap();
    for args in [
        vec!["inspect-core", "--config", link],
        vec!["allow", "--config", link, "t1"],
        vec!["revoke", "--config", link, "t1"],
        vec!["reload", "--config", link],
        vec!["serve", "--config", link],
    ] {
        let (code, stdout, stderr) = run_adapter(&args, &[]);
        assert_eq!(code, 2, "{args:?}: {stdout}{stderr}");
        assert_eq!(stdout, "", "{args:?}");
        assert_one_clean_line(&format!("{args:?}"), &stderr);
        assert!(stderr.contains("\\u{001b}]0;owned\\u{0007}"), "{stderr}");
    }
}

/// A serve started from another copy of the binary (another install) is
/// this program all the same: `status` names that copy and its version,
/// `reload` signals it, and `doctor` counts its port as the serve's.
#[tokio::test]
async fn a_serve_from_another_copy_of_the_binary_is_found_and_reloaded() {
    let sim = Sim::start(SimOptions::agents(1));
    let copy_dir = sim.dir.path().join("elsewhere");
    std::fs::create_dir(&copy_dir).unwrap();
    let copy = copy_dir.join("herdr-core-mcp");
    std::fs::copy(crate::support::adapter_bin(), &copy).unwrap();
    let config = sim.config(json!({}));
    let log = sim.dir.path().join("copy.stderr");
    let (client, pid) = mcp::stdio_process_of(&copy, &config, &log).await;

    let (code, stdout, stderr) = run_adapter(&["status", "--json"], &[]);
    assert_eq!(code, 0, "{stderr}");
    let status: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let listed = status["serves"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["pid"] == pid)
        .unwrap_or_else(|| panic!("the copy's serve {pid} is not listed: {status}"))
        .clone();
    assert_eq!(listed["exe"], copy.to_str().unwrap(), "{listed}");
    assert_eq!(listed["version"], env!("CARGO_PKG_VERSION"), "{listed}");

    let (code, stdout, stderr) =
        run_adapter(&["reload", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(
        stdout.contains(&format!("sent SIGHUP to serve (pid {pid})")),
        "{stdout}"
    );
    eventually("the copy's reload in its log", async || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .contains("config reloaded")
            .then_some(())
    })
    .await;
    drop(client);
}
