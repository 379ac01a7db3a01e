//! `inspect-core` and the command line: output, exit codes, one-line errors.

use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

use herdr_core_mcp::Approval;
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::{Hello, TerminalStatus};
use herdr_core_mcp::{inspect_json as render_json, inspect_table as render_table};
use serde_json::{Value, json};

use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions, run_adapter, write_config};

fn one_line(stderr: &str) -> &str {
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "expected one line on stderr, got {stderr:?}"
    );
    lines[0]
}

#[tokio::test]
async fn the_table_shows_handshake_facts_and_every_lifetime() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        shells: 1,
        idle_records: 2,
        ..SimOptions::default()
    });
    let client = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&client, "t1", TerminalStatus::Idle).await;
    sim.control("kill", json!({"address": "t2"}));
    let listed = client.list(true).await.unwrap();
    // Pin what varies between runs (ids, clocks, paths); keep everything else.
    let hello = Hello {
        core_id: crate::support::core("c8d1f0a2-0000-4000-8000-000000000000"),
        pid: Some(4242),
        started_ms: Some(1_764_480_000_000),
        ..(*listed.core).clone()
    };
    let mut listing = listed.value;
    for (i, t) in listing.terminals.iter_mut().enumerate() {
        t.created_ms = 1_764_480_000_123 + i as i64 * 1_000;
        t.finished_ms = t.finished_ms.map(|_| 1_764_480_060_000);
        t.cwd = t.cwd.as_ref().map(|_| "/home/ana/src/app".into());
        t.context.status_age_ms = t.context.status_age_ms.map(|_| 1_000);
    }
    // t1 approved, t3 approved for multi-line prompts, the rest not.
    let approvals: Vec<Option<Approval>> = listing
        .terminals
        .iter()
        .map(|t| match t.address.as_str() {
            "t1" => Some(Approval {
                multiline: false,
                send_mode: None,
                confirm: false,
            }),
            "t3" => Some(Approval {
                multiline: true,
                send_mode: None,
                confirm: false,
            }),
            _ => None,
        })
        .collect();
    insta::assert_snapshot!(render_table(&hello, &listing, &approvals));
    insta::assert_snapshot!(
        "inspect_core_json",
        render_json(&hello, &listing, &approvals, None)
    );

    let config = sim.config(json!({}));
    let (code, stdout, stderr) =
        run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains(&sim.core_id), "{stdout}");
    for address in ["t1", "t2", "t3", "t4"] {
        assert!(
            stdout.lines().any(|l| l.starts_with(address)),
            "{address} missing:\n{stdout}"
        );
    }
}

#[tokio::test]
async fn json_output_carries_the_facts_and_full_records() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        idle_records: 3,
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let (code, stdout, stderr) = run_adapter(
        &[
            "inspect-core",
            "--config",
            config.to_str().unwrap(),
            "--json",
        ],
        &[],
    );
    assert_eq!(code, 0, "{stderr}");
    let doc: Value = serde_json::from_str(&stdout).expect("JSON on stdout");
    assert_eq!(doc["core_id"], sim.core_id.as_str());
    assert_eq!(doc["version"], "0.1.15");
    assert_eq!(doc["generation"], 1);
    assert_eq!(doc["framing"], "plain");
    assert!(doc["pid"].as_u64().unwrap() > 0 && doc["started_ms"].as_i64().unwrap() > 0);
    let terminals = doc["terminals"].as_array().unwrap();
    assert_eq!(terminals.len(), 4);
    for field in [
        "address",
        "created_ms",
        "finished_ms",
        "exit_code",
        "status",
        "status_seq",
        "title",
        "cwd",
        "program",
        "submit_key",
        "rows",
        "cols",
    ] {
        assert!(
            terminals[0].get(field).is_some(),
            "{field} missing in {}",
            terminals[0]
        );
    }
}

#[test]
fn config_errors_exit_2_with_one_clear_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("absent.json");
    let misspelt = write_config(
        dir.path(),
        &json!({"socketPath": "/run/hc.sock", "sendmode": "normal"}),
    );
    let writable = write_config(dir.path(), &json!({"socketPath": "/run/hc.sock"}));
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o666)).unwrap();
    for (config, needle) in [
        (&missing, "does not exist: create it"),
        (&misspelt, "sendmode"),
        (&writable, "chmod 600"),
    ] {
        let (code, stdout, stderr) =
            run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
        assert_eq!(code, 2, "{stderr}");
        assert!(stdout.is_empty(), "{stdout}");
        assert!(one_line(&stderr).contains(needle), "{stderr}");
    }
}

#[test]
fn an_absent_core_exits_1_naming_the_socket() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("hc.sock");
    let config = write_config(dir.path(), &json!({"socketPath": socket}));
    let (code, stdout, stderr) =
        run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    assert!(stdout.is_empty());
    let line = one_line(&stderr);
    assert!(
        line.contains(&socket.display().to_string()) && line.contains("socketPath"),
        "{line}"
    );
}

#[test]
fn usage_errors_exit_2_and_help_and_version_exit_0() {
    let (code, _, stderr) = run_adapter(&["inspect-core", "--bogus"], &[]);
    assert_eq!(code, 2);
    assert!(one_line(&stderr).contains("--bogus"), "{stderr}");
    let (code, _, _) = run_adapter(&[], &[]);
    assert_eq!(code, 2);
    let (code, stdout, _) = run_adapter(&["--help"], &[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("inspect-core") && stdout.contains("serve"));
    let (code, stdout, _) = run_adapter(&["serve", "--help"], &[]);
    assert_eq!(code, 0);
    assert!(stdout.contains("--config"));
    let (code, stdout, _) = run_adapter(&["--version"], &[]);
    assert_eq!(code, 0);
    assert_eq!(
        stdout.trim(),
        format!(
            "herdr-core-mcp {}\nspeaks hc 0.1.15\nMCP revisions offered: 2024-11-05, 2025-06-18, 2025-11-25, 2026-07-28",
            env!("CARGO_PKG_VERSION")
        )
    );
}

#[tokio::test]
async fn hostile_titles_reach_no_output_raw() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&client, "t1", TerminalStatus::Idle).await;
    // (U+009D, OSC in C1, ends the simulator's title sequence itself; the
    // escaper's own tests cover it.)
    let hostile = "evil\u{202e}txt.exe\u{7f}\u{9b}31m\u{2067}end";
    sim.control(
        "emit",
        json!({"address": "t1", "text": format!("\u{1b}]2;{hostile}\u{7}")}),
    );
    let title = crate::support::eventually("the hostile title to be set", async || {
        let title = client.get("t1").await.unwrap().value.title;
        title.filter(|t| t.contains("end"))
    })
    .await;
    let raw: Vec<char> = title
        .chars()
        .filter(|c| herdr_core_mcp::is_hazard(*c))
        .collect();
    assert!(raw.len() >= 3, "the simulator kept the hazards: {title:?}");
    let config = sim.config(json!({}));
    let config = config.to_str().unwrap();
    for args in [
        vec!["inspect-core", "--config", config],
        vec!["inspect-core", "--config", config, "--json"],
    ] {
        let (code, stdout, stderr) = run_adapter(&args, &[]);
        assert_eq!(code, 0, "{stderr}");
        let leaked: Vec<char> = stdout
            .chars()
            .filter(|c| *c != '\n' && herdr_core_mcp::is_hazard(*c))
            .collect();
        assert!(
            leaked.is_empty(),
            "{args:?} printed {leaked:?} raw:\n{stdout}"
        );
        if args.contains(&"--json") {
            // Escaped, the JSON still says the same title.
            let doc: Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(doc["terminals"][0]["title"], title.as_str());
        } else {
            assert!(stdout.contains("\\u{202e}"), "{stdout}");
        }
    }
}
