//! The stdio transport as raw lines: every stdout line of a session is
//! JSON-RPC, and malformed lines get JSON-RPC errors while the session goes
//! on.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use crate::support::{Sim, SimOptions, adapter_bin};

#[test]
fn every_stdout_line_of_a_session_is_json_rpc() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({"coreId": sim.core_id}));
    let mut child = Command::new(adapter_bin())
        .args(["serve", "--config", config.to_str().unwrap()])
        .env("RUST_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let messages = [
        json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        json!({"jsonrpc":"2.0","id":2,"method":"tools/list"}),
        json!({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"list_sessions","arguments":{}}}),
        json!({"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_output","arguments":{"address":"t1"}}}),
        json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"send_prompt","arguments":{"address":"t1","text":"hi"}}}),
        json!({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"send_prompt","arguments":{"address":"t1","text":"hi","force":true}}}),
    ];
    let mut lines = stdout.lines();
    let mut answered = 0;
    for message in &messages {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
        if message.get("id").is_some() {
            let line = lines.next().expect("a reply line").unwrap();
            let reply: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
            assert_eq!(reply["jsonrpc"], "2.0", "{line}");
            assert_eq!(reply["id"], message["id"], "{line}");
            answered += 1;
        }
    }
    drop(stdin);
    for line in lines {
        let line = line.unwrap();
        let reply: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
        assert_eq!(reply["jsonrpc"], "2.0", "{line}");
    }
    assert_eq!(answered, 6);
    let status = child.wait().unwrap();
    assert!(status.success(), "exit on stdin EOF: {status:?}");
    assert_eq!(sim.writes().len(), 0, "no send was approved");
}

#[test]
fn malformed_lines_get_json_rpc_errors_and_the_session_goes_on() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({"coreId": sim.core_id}));
    let mut child = Command::new(adapter_bin())
        .args(["serve", "--config", config.to_str().unwrap()])
        .env("RUST_LOG", "warn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // Replies arrive through a thread, so a line that gets no answer fails
    // the test instead of hanging it.
    let (replies, arrived) = std::sync::mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if replies.send(line).is_err() {
                break;
            }
        }
    });
    let mut exchange = |line: &str| -> Value {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        let reply = arrived
            .recv_timeout(crate::support::PATIENCE)
            .unwrap_or_else(|_| panic!("no reply to {line}"));
        serde_json::from_str(&reply).unwrap_or_else(|e| panic!("not JSON ({e}): {reply}"))
    };
    let null_id_error = |reply: &Value, code: i64| {
        assert_eq!(reply["error"]["code"], code, "{reply}");
        assert!(
            reply.as_object().unwrap().get("id") == Some(&Value::Null),
            "{reply}"
        );
    };
    // Before the session even starts: bad lines are answered, not fatal.
    null_id_error(&exchange("not json at all"), -32700);
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let initialized = exchange(init);
    // 2025-03-26 (which requires batches) is not offered: the newest
    // revision with an initialize handshake is answered instead.
    assert_eq!(
        initialized["result"]["protocolVersion"], "2025-11-25",
        "{initialized}"
    );
    // A notification gets no reply: the next line's reply comes first.
    let truncated = r#"{"jsonrpc":"2.0","id":2,"method":"#;
    let initialized = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    null_id_error(&exchange(&format!("{initialized}\n{truncated}")), -32700);
    null_id_error(&exchange(r#"{"foo":1}"#), -32600);
    null_id_error(
        &exchange(r#"[{"jsonrpc":"2.0","id":3,"method":"ping"}]"#),
        -32600,
    );
    let repeated = exchange(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"read_output","arguments":{"address":"t1","address":"t9"}}}"#,
    );
    assert_eq!(repeated["id"], 4, "{repeated}");
    assert_eq!(repeated["result"]["isError"], true, "{repeated}");
    let said = repeated["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        said.contains("`address`") && said.contains("invalid arguments"),
        "{said}"
    );
    let pong = exchange(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    assert_eq!(pong["id"], 5, "{pong}");
    assert!(pong.get("result").is_some(), "the session goes on: {pong}");
    drop(stdin);
    assert!(child.wait().unwrap().success());
}
