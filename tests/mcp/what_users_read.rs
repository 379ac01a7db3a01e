//! What a model or an operator reads, pinned with insta: each tool's text
//! and structured content for its main outcomes, tool errors, the
//! `inspect-core` JSON (in `inspect_core`), and the CLI's error lines. Values that differ from
//! run to run (core ids, creation times, elapsed times, paths) are replaced
//! by placeholders first; everything else must match the snapshot.

use std::os::unix::fs::PermissionsExt;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::mcp::{call, text};
use crate::support::waits::wait_status;
use crate::support::world::World;
use crate::support::{Sim, SimOptions, run_adapter, write_config};

/// Every `status_age_ms` in `value`, as `[age_ms]`: read at each run.
fn scrub_ages(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if key == "status_age_ms" {
                    *field = json!("[age_ms]");
                } else {
                    scrub_ages(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(scrub_ages),
        _ => {}
    }
}

/// Run-to-run values and the placeholders that stand for them.
struct Scrub(Vec<(String, &'static str)>);

impl Scrub {
    /// The simulator's core_id, socket and folder, and every terminal's
    /// creation time and cwd.
    async fn of(sim: &Sim, hc: &HcClient) -> Scrub {
        let mut pairs = vec![
            (sim.core_id.clone(), "[core_id]"),
            (sim.socket.display().to_string(), "[socket]"),
            (sim.dir.path().display().to_string(), "[dir]"),
        ];
        for t in hc.list(true).await.unwrap().value.terminals {
            pairs.push((t.created_ms.to_string(), "[created_ms]"));
            if let Some(cwd) = t.cwd {
                pairs.push((cwd, "[cwd]"));
            }
        }
        Scrub(pairs)
    }

    fn text(&self, text: &str) -> String {
        self.0
            .iter()
            .fold(text.to_owned(), |t, (from, to)| t.replace(from, to))
    }

    /// A tool result as a snapshot: its text, then its structured content.
    fn result(&self, result: &rmcp::model::CallToolResult) -> String {
        let mut structured = result.structured_content.clone().unwrap_or(Value::Null);
        for (key, placeholder) in [("elapsed_ms", "[elapsed_ms]"), ("polls", "[polls]")] {
            if let Some(value) = structured.get_mut(key) {
                *value = json!(placeholder);
            }
        }
        scrub_ages(&mut structured);
        let mut shown = text(result);
        // How long a status has held is read at each run.
        let age = regex::Regex::new(r"for \d+ (ms|s|min)\)").unwrap();
        shown = age.replace_all(&shown, "for [age])").into_owned();
        if let Some(ms) = result
            .structured_content
            .as_ref()
            .and_then(|s| s["elapsed_ms"].as_u64())
        {
            shown = shown.replace(&format!("after {ms} ms"), "after [elapsed_ms] ms");
        }
        if let Some(polls) = result
            .structured_content
            .as_ref()
            .and_then(|s| s["polls"].as_u64())
        {
            shown = shown.replace(&format!("({polls} polls"), "([polls] polls");
        }
        // A since is sealed under a key new at every start.
        if let Some(since) = structured.get_mut("since")
            && let Some(token) = since.as_str()
        {
            shown = shown.replace(token, "[since]");
            *since = json!("[since]");
        }
        let pretty = serde_json::to_string_pretty(&structured).unwrap();
        format!(
            "isError: {:?}\n--- text ---\n{}\n--- structured ---\n{}",
            result.is_error.unwrap_or(false),
            self.text(&shown),
            self.text(&pretty)
        )
    }
}

#[tokio::test]
async fn tool_results_and_errors_read_as_pinned() {
    let world = World::new(SimOptions::agents(1), json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let client = &world.client;
    let scrub = Scrub::of(&world.sim, &world.hc).await;
    let listed = call(client, "list_sessions", json!({})).await;
    insta::assert_snapshot!("list_sessions", scrub.result(&listed));

    let sent = call(
        client,
        "send_prompt",
        json!({"address": "t1", "text": "hello"}),
    )
    .await;
    insta::assert_snapshot!("send_prompt_sent", scrub.result(&sent));
    let seq = sent.structured_content.as_ref().unwrap()["core_status_seq"].clone();
    let waited = call(
        client,
        "wait_for_status",
        json!({"targets": [{"address": "t1", "after_seq": seq}], "until": ["done"],
               "include_output": true, "max_chars": 200}),
    )
    .await;
    insta::assert_snapshot!("wait_for_status_reached", scrub.result(&waited));
    let read = call(
        client,
        "read_output",
        json!({"address": "t1", "max_chars": 60}),
    )
    .await;
    insta::assert_snapshot!("read_output", scrub.result(&read));

    let before = world.sim.calls("terminal.read");
    let peer = client.peer().clone();
    let waiting = tokio::spawn(async move {
        let args = json!({"address": "t1", "pattern": "^BUILD (OK|FAILED)$", "max_chars": 200});
        peer.call_tool(
            rmcp::model::CallToolRequestParams::new("wait_for_output")
                .with_arguments(args.as_object().unwrap().clone()),
        )
        .await
        .unwrap()
    });
    world.sim.wait_for_calls("terminal.read", before).await;
    world
        .sim
        .control("emit", json!({"address": "t1", "text": "\r\nBUILD OK\r\n"}));
    let waited = waiting.await.unwrap();
    insta::assert_snapshot!("wait_for_output_matched", scrub.result(&waited));

    let newcomer = world.sim.spawn("agent");
    let newcomer = newcomer["address"].as_str().unwrap();
    wait_status(&world.hc, newcomer, TerminalStatus::Idle).await;
    let scrub = Scrub::of(&world.sim, &world.hc).await;
    let refused = call(
        client,
        "send_prompt",
        json!({"address": newcomer, "text": "hi"}),
    )
    .await;
    insta::assert_snapshot!("send_prompt_not_approved", scrub.result(&refused));

    world.sim.set_faults(&["drop-after-dispatch:terminal.send"]);
    let unknown = call(
        client,
        "send_prompt",
        json!({"address": "t1", "text": "again"}),
    )
    .await;
    world.sim.set_faults(&[]);
    insta::assert_snapshot!("send_prompt_unknown", scrub.result(&unknown));

    let invalid = call(
        client,
        "read_output",
        json!({"address": "t1", "max_chars": 0}),
    )
    .await;
    insta::assert_snapshot!("invalid_arguments", scrub.result(&invalid));
    let unknown_arg = call(client, "list_sessions", json!({"force": true})).await;
    insta::assert_snapshot!("unknown_argument", scrub.result(&unknown_arg));
    let other_lifetime = call(
        client,
        "read_output",
        json!({"address": "t1", "created_ms": 1}),
    )
    .await;
    insta::assert_snapshot!("lifetime_mismatch", scrub.result(&other_lifetime));
    let missing = call(client, "read_output", json!({"address": "t99"})).await;
    insta::assert_snapshot!("no_such_terminal", scrub.result(&missing));
}

#[test]
fn cli_error_lines_read_as_pinned() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_str().unwrap().to_owned();
    let absent = dir.path().join("absent.json");
    let misspelt = write_config(
        dir.path(),
        &json!({"socketPath": "/run/hc.sock", "sendmode": "normal"}),
    );
    let writable = write_config(dir.path(), &json!({"socketPath": "/run/hc.sock"}));
    std::fs::set_permissions(&writable, std::fs::Permissions::from_mode(0o666)).unwrap();
    let relative = write_config(dir.path(), &json!({"socketPath": "hc.sock"}));
    let no_core = write_config(
        dir.path(),
        &json!({"socketPath": dir.path().join("hc.sock")}),
    );
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"socketPath\": \n").unwrap();
    std::fs::set_permissions(&broken, std::fs::Permissions::from_mode(0o600)).unwrap();
    let path = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let cases: Vec<(&str, Vec<String>)> = vec![
        (
            "broken JSON",
            vec!["inspect-core".into(), "--config".into(), path(&broken)],
        ),
        ("approve for allow", vec!["approve".into(), "t1".into()]),
        ("deny for revoke", vec!["deny".into(), "t1".into()]),
        (
            "absent config",
            vec!["inspect-core".into(), "--config".into(), path(&absent)],
        ),
        (
            "misspelt key",
            vec!["inspect-core".into(), "--config".into(), path(&misspelt)],
        ),
        (
            "writable config",
            vec!["inspect-core".into(), "--config".into(), path(&writable)],
        ),
        (
            "relative socket",
            vec!["inspect-core".into(), "--config".into(), path(&relative)],
        ),
        (
            "no hc",
            vec!["inspect-core".into(), "--config".into(), path(&no_core)],
        ),
        (
            "unknown flag",
            vec!["inspect-core".into(), "--bogus".into()],
        ),
        (
            "revoke nothing",
            vec![
                "revoke".into(),
                "--config".into(),
                path(&no_core),
                "t1".into(),
            ],
        ),
        ("allow without an address", vec!["allow".into()]),
        (
            "--config without a file",
            vec!["inspect-core".into(), "--config".into()],
        ),
        ("no config at the default place", vec!["doctor".into()]),
    ];
    // The default config is looked for under this (empty) directory.
    let xdg = format!("{root}/xdg");
    let mut pinned = String::new();
    for (what, args) in cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stdout, stderr) = run_adapter(&args, &[("XDG_CONFIG_HOME", &xdg)]);
        pinned.push_str(&format!(
            "{what}: exit {code}\n{}{}\n",
            stdout.replace(&root, "[dir]"),
            stderr.trim_end().replace(&root, "[dir]")
        ));
    }
    insta::assert_snapshot!("cli_error_lines", pinned);
}
