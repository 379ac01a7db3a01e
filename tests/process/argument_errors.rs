//! A tool argument of the wrong type is refused with an error that names
//! it, for every argument of every tool: an assistant that sent
//! `"limit": "x"` learns which of its arguments to fix.

use serde_json::{Value, json};

use crate::support::mcp::{self, call_invalid};
use crate::support::{Sim, SimOptions};

/// (tool, arguments with exactly one of the wrong type, that argument's
/// path as the error must name it). Every other argument is valid, or
/// left out.
fn wrong_types() -> Vec<(&'static str, Value, &'static str)> {
    let target = json!({"address": "t1"});
    vec![
        (
            "list_sessions",
            json!({"include_finished": "x"}),
            "include_finished",
        ),
        ("list_sessions", json!({"limit": "x"}), "limit"),
        ("list_sessions", json!({"cursor": 5}), "cursor"),
        ("list_sessions", json!({"machine": 5}), "machine"),
        ("read_output", json!({"address": 5}), "address"),
        (
            "read_output",
            json!({"address": "t1", "created_ms": "abc"}),
            "created_ms",
        ),
        (
            "read_output",
            json!({"address": "t1", "max_chars": true}),
            "max_chars",
        ),
        (
            "send_prompt",
            json!({"address": 5, "text": "hi"}),
            "address",
        ),
        (
            "send_prompt",
            json!({"address": "t1", "text": ["hi"]}),
            "text",
        ),
        (
            "send_prompt",
            json!({"address": "t1", "text": "hi", "created_ms": "abc"}),
            "created_ms",
        ),
        (
            "send_prompt",
            json!({"address": "t1", "text": "hi", "follow_ms": "soon"}),
            "follow_ms",
        ),
        ("wait_for_status", json!({"targets": "t1"}), "targets"),
        (
            "wait_for_status",
            json!({"targets": [{"address": 5}]}),
            "targets[0].address",
        ),
        (
            "wait_for_status",
            json!({"targets": [{"address": "t1", "created_ms": "abc"}]}),
            "targets[0].created_ms",
        ),
        (
            "wait_for_status",
            json!({"targets": [{"address": "t1", "after_seq": -1}]}),
            "targets[0].after_seq",
        ),
        (
            "wait_for_status",
            json!({"targets": [target], "until": 5}),
            "until",
        ),
        (
            "wait_for_status",
            json!({"targets": [target], "until": [5]}),
            "until[0]",
        ),
        (
            "wait_for_status",
            json!({"targets": [target], "timeout_ms": "x"}),
            "timeout_ms",
        ),
        (
            "wait_for_status",
            json!({"targets": [target], "include_output": "x"}),
            "include_output",
        ),
        (
            "wait_for_status",
            json!({"targets": [target], "max_chars": "x"}),
            "max_chars",
        ),
        ("wait_for_status", json!({"since": 5}), "since"),
        ("wait_for_status", json!({"scope": "everyone"}), "scope"),
        (
            "wait_for_output",
            json!({"address": 5, "quiet_ms": 100}),
            "address",
        ),
        (
            "wait_for_output",
            json!({"address": "t1", "created_ms": "abc", "quiet_ms": 100}),
            "created_ms",
        ),
        (
            "wait_for_output",
            json!({"address": "t1", "pattern": 5}),
            "pattern",
        ),
        (
            "wait_for_output",
            json!({"address": "t1", "quiet_ms": "x"}),
            "quiet_ms",
        ),
        (
            "wait_for_output",
            json!({"address": "t1", "quiet_ms": 100, "timeout_ms": "x"}),
            "timeout_ms",
        ),
        (
            "wait_for_output",
            json!({"address": "t1", "quiet_ms": 100, "max_chars": "x"}),
            "max_chars",
        ),
    ]
}

#[tokio::test]
async fn every_wrong_type_argument_error_names_the_argument() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({"coreId": sim.core_id}));
    let client = mcp::stdio(&config, &sim.dir.path().join("adapter.stderr")).await;
    let table = wrong_types();

    // The table covers every argument the tools declare, nested ones too.
    let tools = client.list_all_tools().await.expect("tools/list");
    assert_eq!(tools.len(), 6, "a tool was added: extend the table");
    for tool in &tools {
        let schema = Value::Object((*tool.input_schema).clone());
        for argument in argument_paths(&schema) {
            assert!(
                table
                    .iter()
                    .any(|(t, _, a)| *t == tool.name && *a == argument),
                "{}.{argument} is not in the table",
                tool.name
            );
        }
    }

    let mut unnamed = Vec::new();
    for (tool, args, argument) in table {
        let said = call_invalid(&client, tool, args.clone()).await;
        if !said.contains(&format!("`{argument}`")) {
            unnamed.push(format!("{tool} {args}: {said}"));
        }
    }
    assert!(
        unnamed.is_empty(),
        "{} error(s) do not name the argument:\n{}",
        unnamed.len(),
        unnamed.join("\n")
    );
    client.cancel().await.ok();
}

/// Every argument an input schema declares, as the error path names it:
/// `limit`, and for a list of objects `targets[0].after_seq` too.
fn argument_paths(schema: &Value) -> Vec<String> {
    let resolve = |v: &Value| -> Value {
        match v.get("$ref").and_then(Value::as_str) {
            Some(reference) => {
                let name = reference.rsplit('/').next().unwrap();
                schema["$defs"][name].clone()
            }
            None => v.clone(),
        }
    };
    let mut paths = Vec::new();
    let none = serde_json::Map::new();
    let properties = schema["properties"].as_object().unwrap_or(&none);
    for (name, property) in properties {
        paths.push(name.clone());
        let items = resolve(&property["items"]);
        if let Some(fields) = items["properties"].as_object() {
            paths.extend(fields.keys().map(|field| format!("{name}[0].{field}")));
        }
    }
    paths
}

/// A reader that closed the pipe (`--version | head -c0`) gets exit 0 and
/// no panic on stderr, for clap's own output and a command's.
#[test]
fn output_into_a_closed_pipe_is_no_failure_and_no_panic() {
    use std::process::{Command, Stdio};
    for args in [&["--version"][..], &["--help"], &["completions", "bash"]] {
        // The read end is closed before the program starts: its first
        // write meets EPIPE.
        let (reader, writer) = std::io::pipe().expect("a pipe");
        drop(reader);
        let out = Command::new(crate::support::adapter_bin())
            .args(args)
            .stdout(Stdio::from(writer))
            .stderr(Stdio::piped())
            .output()
            .expect("run herdr-core-mcp");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    }
}

/// First mistakes get the fix: `allow -m normal` names `--mode normal`,
/// `revoke` alone names `--all`, `inspect-core --socket` names socketPath
/// and `init --socket`, and a socketPath that is a folder says so.
#[test]
fn first_mistakes_name_the_fix() {
    use crate::support::run_adapter;
    for (args, said) in [
        (&["allow", "-m", "normal", "t1"][..], "--mode normal"),
        (&["revoke"], "revoke --all"),
        (
            &["inspect-core", "--socket", "/run/hc.sock"],
            "init --socket PATH",
        ),
    ] {
        let (code, _, stderr) = run_adapter(args, &[]);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(stderr.contains(said), "{args:?}: {stderr}");
    }
    let dir = crate::support::WorkDir::temp().unwrap();
    let config = crate::support::write_config(dir.path(), &json!({"socketPath": dir.path()}));
    let (code, _, stderr) =
        run_adapter(&["inspect-core", "--config", config.to_str().unwrap()], &[]);
    assert_ne!(code, 0);
    assert!(stderr.contains("is a directory, not a socket"), "{stderr}");
}
