//! Every command the program prints carries the config it was given: a
//! hint run as printed acts on the same config, never silently on the
//! default one (which may name another core). Each scenario below makes
//! the program print its hints for a config that is not the default, and
//! every `herdr-core-mcp <command>` in what it printed must say
//! `--config` with that file.

use std::path::Path;

use serde_json::json;

use crate::support::mcp::{self, send_prompt};
use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions, in_process, run_adapter};
use herdr_core_mcp::wire::TerminalStatus;

/// The subcommands that act on a config.
const ACTING: [&str; 8] = [
    "allow",
    "revoke",
    "inspect-core",
    "doctor",
    "reload",
    "init",
    "status",
    "serve",
];

/// Every command line in `text` that runs a subcommand acting on a config,
/// up to where the hint's words end.
fn hinted_commands(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("herdr-core-mcp ") {
        let after = &rest[at + "herdr-core-mcp ".len()..];
        let command: String = after
            .chars()
            .take_while(|c| !matches!(c, '\n' | ';' | '(' | ')' | '`' | ',' | '"'))
            .collect();
        let word = command.split_whitespace().next().unwrap_or_default();
        if ACTING.contains(&word) {
            found.push(format!("herdr-core-mcp {}", command.trim_end()));
        }
        rest = after;
    }
    found
}

/// Asserts that `text` names at least one command, and that each carries
/// `--config` and `config`.
fn assert_hints_carry(scenario: &str, text: &str, config: &Path) {
    let commands = hinted_commands(text);
    assert!(!commands.is_empty(), "{scenario}: no hint in {text}");
    let flag = format!("--config {}", config.display());
    for command in commands {
        assert!(
            command.contains(&flag),
            "{scenario}: `{command}` does not name {flag}, in:\n{text}"
        );
    }
}

#[test]
fn the_finder_sees_a_hint_without_the_config() {
    let found = hinted_commands("approve again with herdr-core-mcp allow ADDRESS (it updates)");
    assert_eq!(found, ["herdr-core-mcp allow ADDRESS"]);
}

#[tokio::test]
async fn after_hc_restarts_every_hint_names_the_config_it_was_given() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({"coreId": "a-core-that-is-gone"}));
    let path = config.to_str().unwrap();

    let (_, out, err) = run_adapter(&["doctor", "--config", path], &[]);
    assert_hints_carry("doctor after a restart", &(out + &err), &config);

    let client = in_process::stdio(&config).await;
    wait_status(
        &herdr_core_mcp::HcClient::new(&sim.socket, std::time::Duration::from_secs(5)),
        "t1",
        TerminalStatus::Idle,
    )
    .await;
    let refused = send_prompt(&client, "t1", "a prompt").await;
    assert_eq!(refused["reason_code"], "core_id_mismatch", "{refused}");
    assert_hints_carry(
        "send_prompt, core_id_mismatch",
        refused["reason"].as_str().unwrap(),
        &config,
    );
}

#[tokio::test]
async fn refused_sends_name_the_config_in_their_hints() {
    let sim = Sim::start(SimOptions::agents(1));
    for (reason_code, extra) in [
        ("no_core_id", json!({})),
        ("not_approved", json!({"coreId": sim.core_id})),
    ] {
        let config = sim.config(extra);
        let client = in_process::stdio(&config).await;
        let refused = send_prompt(&client, "t1", "a prompt").await;
        assert_eq!(refused["reason_code"], reason_code, "{refused}");
        assert_hints_carry(reason_code, refused["reason"].as_str().unwrap(), &config);
        let listed = mcp::call(&client, "list_sessions", json!({})).await;
        assert!(!mcp::is_error(&listed), "{listed:?}");
    }
}

#[test]
fn the_operators_commands_and_refused_command_lines_name_the_config() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        version: Some("0.1.20".into()),
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let path = config.to_str().unwrap();
    let fresh = sim.dir.path().join("fresh.json");
    let fresh_path = fresh.to_str().unwrap();
    let socket = sim.socket.to_str().unwrap();
    let runs: [(&str, Vec<&str>, &Path); 7] = [
        (
            "init",
            vec!["init", "--socket", socket, "--config", fresh_path],
            &fresh,
        ),
        (
            "inspect-core, unaccepted",
            vec!["inspect-core", "--config", path],
            &config,
        ),
        (
            "--accept without a guard",
            vec![
                "inspect-core",
                "--check-contract",
                "--accept",
                "--config",
                path,
            ],
            &config,
        ),
        (
            "allow, unaccepted",
            vec!["allow", "--config", path, "t1"],
            &config,
        ),
        (
            "allow --normal",
            vec!["allow", "--normal", "--config", path, "t1"],
            &config,
        ),
        (
            "serve --socket",
            vec!["serve", "--socket", socket, "--config", path],
            &config,
        ),
        ("approve", vec!["approve", "--config", path, "t1"], &config),
    ];
    for (scenario, args, config) in runs {
        let (_, out, err) = run_adapter(&args, &[]);
        assert_hints_carry(scenario, &format!("{out}{err}"), config);
    }
}
