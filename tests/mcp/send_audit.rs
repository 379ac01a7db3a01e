//! Every `send_prompt` call leaves exactly one audit line, whatever refused
//! it: its arguments (an address no terminal can have, a wrong type, a
//! missing or unknown or repeated argument), the caller's scope, the send
//! rules, or the human; over stdio and HTTP alike, and with two serves
//! appending to one audit file. Counted, not sampled.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::Receiver;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::mcp::{READ_TEST_TOKEN, TEST_TOKEN};
use crate::support::waits::wait_status;
use crate::support::world::audit_lines;
use crate::support::{PATIENCE, Sim, SimOptions, adapter_bin, in_process};

/// A raw stdio session with a spawned `serve`: lines out, lines back
/// (through a thread, so a missing answer fails instead of hanging).
struct RawSession {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    next_id: u64,
}

impl RawSession {
    /// Starts `serve` on `config` and initializes a session that can
    /// answer form elicitation (2025-06-18).
    fn start(config: &Path) -> RawSession {
        let mut child = Command::new(adapter_bin())
            .args(["serve", "--config", config.to_str().unwrap()])
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sent, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if sent.send(line).is_err() {
                    break;
                }
            }
        });
        let mut session = RawSession {
            child,
            stdin,
            lines,
            next_id: 100,
        };
        let init = json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{"elicitation":{"form":{}}},"clientInfo":{"name":"raw","version":"0"}}});
        session.write(&init.to_string());
        session.reply_to(&json!(1), |_| None);
        session.write(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        session
    }

    fn write(&mut self, line: &str) {
        writeln!(self.stdin, "{line}").unwrap();
        self.stdin.flush().unwrap();
    }

    /// Reads lines until the reply to `id`, answering the server's
    /// requests (elicitation) with `answer`.
    fn reply_to(&mut self, id: &Value, answer: impl Fn(&Value) -> Option<Value>) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(PATIENCE)
                .unwrap_or_else(|_| panic!("no reply to {id}"));
            let message: Value =
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}"));
            if message.get("method").is_some() {
                if let Some(request_id) = message.get("id") {
                    let result = answer(&message).unwrap_or_else(|| json!({"action": "decline"}));
                    let reply = json!({"jsonrpc": "2.0", "id": request_id, "result": result});
                    self.write(&reply.to_string());
                }
                continue;
            }
            if &message["id"] == id {
                return message;
            }
        }
    }

    /// One `tools/call` of `send_prompt` with `arguments` written as they
    /// are (a repeated key survives); its reply.
    fn send_raw(&mut self, arguments: &str, answer: impl Fn(&Value) -> Option<Value>) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.write(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"send_prompt","arguments":{arguments}}}}}"#
        ));
        self.reply_to(&json!(id), answer)
    }

    fn end(mut self) {
        drop(self.stdin);
        assert!(self.child.wait().unwrap().success());
    }
}

fn audit_file(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let lines = audit_lines(&text);
    assert_eq!(
        lines.len(),
        text.lines().count(),
        "every line of the file is a whole audit line"
    );
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// Arguments that no `send_prompt` can take, with the argument at fault.
fn refused_arguments() -> Vec<(String, &'static str)> {
    let long = "t".repeat(4_000);
    let mut cases: Vec<(String, &'static str)> =
        ["t\n1", "t\u{85}1", "t\u{202e}1", "t\u{1b}[2J1", &long]
            .iter()
            .map(|address| {
                (
                    json!({"address": address, "text": "a prompt"}).to_string(),
                    "address",
                )
            })
            .collect();
    cases.extend([
        (
            json!({"address": 7, "text": "a prompt"}).to_string(),
            "address",
        ),
        (json!({"address": "t1", "text": 5}).to_string(), "text"),
        (json!({"address": "t1"}).to_string(), "text"),
        (
            json!({"address": "t1", "text": "a", "force": true}).to_string(),
            "force",
        ),
        (
            json!({"address": "t1", "text": "a", "created_ms": "x"}).to_string(),
            "created_ms",
        ),
        (
            r#"{"address":"t1","text":"meant","text":"typed"}"#.to_owned(),
            "text",
        ),
    ]);
    cases
}

#[test]
fn every_call_refused_for_its_arguments_leaves_one_line_naming_the_argument() {
    let sim = Sim::start(SimOptions::agents(1));
    let log = sim.dir.path().join("audit.log");
    let config = sim.config(json!({"coreId": sim.core_id, "auditLog": log}));
    let mut session = RawSession::start(&config);
    let cases = refused_arguments();
    for (arguments, _) in &cases {
        let reply = session.send_raw(arguments, |_| None);
        assert_eq!(reply["result"]["isError"], true, "{arguments}: {reply}");
    }
    // A quote is an address hc could have: asked for, not found, and
    // recorded (escaped) like any other send attempt.
    let quoted = session.send_raw(r#"{"address":"t\"1","text":"a prompt"}"#, |_| None);
    assert_eq!(
        quoted["result"]["structuredContent"]["reason_code"], "not_found",
        "{quoted}"
    );
    session.end();
    let mut lines = audit_file(&log);
    assert_eq!(lines.len(), cases.len() + 1, "{lines:#?}");
    let quoted = lines.pop().unwrap();
    assert_eq!(quoted["reason"], "not_found", "{quoted}");
    assert_eq!(quoted["address"], "t\"1", "{quoted}");
    for ((arguments, argument), line) in cases.iter().zip(&lines) {
        assert_eq!(line["outcome"], "not_sent", "{arguments}: {line}");
        assert_eq!(line["reason"], "invalid_arguments", "{arguments}: {line}");
        assert_eq!(line["argument"], *argument, "{arguments}: {line}");
        assert_eq!(line["caller"], json!({"kind": "stdio"}), "{line}");
        assert!(!line.to_string().contains("a prompt"), "{line}");
    }
    // An address no terminal can have is kept by length and digest only.
    let long = &lines[4];
    assert_eq!(long["address"], Value::Null, "{long}");
    assert_eq!(long["address_chars"], 4_000, "{long}");
    assert_eq!(lines[0]["address_chars"], 3, "{}", lines[0]);
    assert_eq!(
        lines[6]["chars"],
        Value::Null,
        "no text string: {}",
        lines[6]
    );
    assert_eq!(lines[7]["address"], "t1", "{}", lines[7]);
    assert_eq!(sim.writes().len(), 0);
}

#[test]
fn an_oversized_stdio_message_is_answered_under_its_id() {
    let sim = Sim::start(SimOptions::agents(1));
    let config = sim.config(json!({}));
    let mut session = RawSession::start(&config);
    let huge = "x".repeat(70_000);
    session.write(&format!(
        r#"{{"jsonrpc":"2.0","id":"call-9","method":"tools/call","params":{{"name":"send_prompt","arguments":{{"address":"t1","text":"{huge}"}}}}}}"#
    ));
    let reply = session.reply_to(&json!("call-9"), |_| None);
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    // Where no id comes before the cut, null it is.
    session.write(&format!(
        r#"{{"params":{{"name":"send_prompt","arguments":{{"text":"{huge}"}}}},"id":10,"jsonrpc":"2.0","method":"tools/call"}}"#
    ));
    let reply = session.reply_to(&Value::Null, |_| None);
    assert_eq!(reply["error"]["code"], -32600, "{reply}");
    session.write(r#"{"jsonrpc":"2.0","id":11,"method":"ping"}"#);
    let pong = session.reply_to(&json!(11), |_| None);
    assert!(pong.get("result").is_some(), "the session goes on: {pong}");
    session.end();
}

/// Three agents and a shell: t1 approved in normal mode, t2 approved with
/// a confirmation, t3 and t4 not approved.
async fn mixed_world(log: &Path) -> (Sim, Value) {
    let sim = Sim::start(SimOptions {
        agents: 3,
        shells: 1,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, std::time::Duration::from_secs(5));
    let mut allowlist = Vec::new();
    for (address, extra) in [
        ("t1", json!({"sendMode": "normal"})),
        // Normal mode: an agent that reports done after each task is asked
        // about again (idle-only would refuse before asking).
        ("t2", json!({"confirm": true, "sendMode": "normal"})),
    ] {
        wait_status(&hc, address, TerminalStatus::Idle).await;
        let created_ms = hc.get(address).await.unwrap().value.created_ms;
        let mut entry = json!({"address": address, "created_ms": created_ms});
        crate::support::merge(&mut entry, extra);
        allowlist.push(entry);
    }
    let config = json!({
        "coreId": sim.core_id,
        "sendAllowlist": allowlist,
        "auditLog": log,
    });
    (sim, config)
}

/// The `i`th call of the mix: valid calls to each kind of target, and
/// calls refused for their arguments.
fn mixed_call(i: usize) -> String {
    let refused = refused_arguments();
    match i % 8 {
        // A send that lands takes hc's keyboard-quiet wait: a few of them.
        0 if i.is_multiple_of(40) => {
            json!({"address": "t1", "text": format!("task {i}")}).to_string()
        }
        0 => json!({"address": "t1", "text": "a\u{7}bell"}).to_string(),
        1 | 2 => json!({"address": "t2", "text": format!("confirm {i}")}).to_string(),
        3 => json!({"address": "t3", "text": "not approved"}).to_string(),
        4 => json!({"address": "t4", "text": "a shell"}).to_string(),
        5 => json!({"address": "t9", "text": "nobody there"}).to_string(),
        _ => refused[i % refused.len()].0.clone(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_mixed_calls_leave_exactly_one_line_each_over_both_transports() {
    const PER_TRANSPORT: usize = 500;
    let log = tempfile::tempdir().unwrap();
    let stdio_log = log.path().join("stdio-audit.log");
    let (sim, config) = mixed_world(&stdio_log).await;

    // stdio: the session's human accepts every other question.
    let stdio_config = sim.config(config.clone());
    let mut session = RawSession::start(&stdio_config);
    let mut outcomes = std::collections::BTreeMap::<String, usize>::new();
    for i in 0..PER_TRANSPORT {
        let accept = i % 16 == 1;
        let reply = session.send_raw(&mixed_call(i), |request| {
            (request["method"] == "elicitation/create").then(|| match accept {
                true => json!({"action": "accept", "content": {"confirm": true}}),
                false => json!({"action": "decline"}),
            })
        });
        let out = &reply["result"]["structuredContent"];
        let reason = out["reason_code"].as_str().unwrap_or("invalid_arguments");
        *outcomes.entry(reason.to_owned()).or_default() += 1;
    }
    session.end();
    let stdio_lines = audit_file(&stdio_log);
    assert_eq!(stdio_lines.len(), PER_TRANSPORT, "{outcomes:?}");
    eprintln!("send audit, stdio: {PER_TRANSPORT} calls, reasons {outcomes:?}");
    for reason in [
        "accepted",
        "confirmation_declined",
        "not_approved",
        "not_found",
        "invalid_arguments",
    ] {
        assert!(outcomes.contains_key(reason), "{reason}: {outcomes:?}");
    }

    // HTTP (stateless): the full token and the read token, raw POSTs.
    let http_log = log.path().join("http-audit.log");
    let mut http_config = config;
    http_config["auditLog"] = json!(http_log);
    let adapter = in_process::http_for(&sim, &http_config).await;
    let client = reqwest::Client::new();
    let mut statuses = std::collections::BTreeMap::<u16, usize>::new();
    for i in 0..PER_TRANSPORT {
        let token = if i % 5 == 4 {
            READ_TEST_TOKEN
        } else {
            TEST_TOKEN
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"send_prompt","arguments":{}}}}}"#,
            mixed_call(i)
        );
        let response = client
            .post(adapter.url())
            .bearer_auth(token)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", "2025-06-18")
            .body(body)
            .send()
            .await
            .unwrap();
        *statuses.entry(response.status().as_u16()).or_default() += 1;
    }
    let http_lines = audit_file(&http_log);
    assert_eq!(http_lines.len(), PER_TRANSPORT, "{statuses:?}");
    assert_eq!(adapter.audit.lines().len(), PER_TRANSPORT);
    let read_token = http_lines
        .iter()
        .filter(|l| l["caller"]["kind"] == "read-token")
        .count();
    assert_eq!(read_token, PER_TRANSPORT / 5, "{statuses:?}");
    // The read token's calls are refused for their scope (403), except one
    // that repeats an argument: the guard refuses that first.
    let repeats = (0..PER_TRANSPORT)
        .filter(|i| i % 5 == 4 && mixed_call(*i).contains(r#""text":"meant","text""#))
        .count();
    assert_eq!(
        statuses.get(&403),
        Some(&(PER_TRANSPORT / 5 - repeats)),
        "{statuses:?}"
    );
    eprintln!("send audit, HTTP: {PER_TRANSPORT} calls, statuses {statuses:?}");
}

#[test]
fn two_serves_appending_to_one_audit_file_keep_every_line_whole() {
    const PER_SERVE: usize = 200;
    let sim = Sim::start(SimOptions::agents(1));
    let log = sim.dir.path().join("audit.log");
    let config = sim.config(json!({"coreId": sim.core_id, "auditLog": log}));
    let sessions: Vec<_> = (0..2)
        .map(|_| {
            let config = config.clone();
            std::thread::spawn(move || {
                let mut session = RawSession::start(&config);
                // Written without waiting, so both serves append at once.
                let address = "u".repeat(3_000);
                for i in 0..PER_SERVE {
                    session.write(&format!(
                        r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"send_prompt","arguments":{{"address":"{address}\u0007","text":"{i}"}}}}}}"#,
                        1_000 + i
                    ));
                }
                let mut answered = std::collections::HashSet::new();
                while answered.len() < PER_SERVE {
                    let line = session.lines.recv_timeout(PATIENCE).expect("every reply");
                    let reply: Value = serde_json::from_str(&line).unwrap();
                    assert_eq!(reply["result"]["isError"], true, "{reply}");
                    answered.insert(reply["id"].as_u64().unwrap());
                }
                session.end();
            })
        })
        .collect();
    for session in sessions {
        session.join().unwrap();
    }
    let lines = audit_file(&log);
    assert_eq!(lines.len(), 2 * PER_SERVE);
    assert!(lines.iter().all(|l| l["reason"] == "invalid_arguments"));
}
