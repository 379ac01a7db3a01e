//! The three tools end to end: rmcp's client drives the real adapter binary
//! over stdio against the real simulator; the simulator's input log is the
//! ground truth for what reached a terminal.

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use herdr_core_mcp::hc::HcClient;
use herdr_core_mcp::hc::SendRequest;
use herdr_core_mcp::hc::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::core_client::wait_status;
use crate::support::mcp::{
    self, Client, call, call_invalid, is_error, send_prompt, structured, text,
};
use crate::support::{Sim, SimOptions, adapter_bin, in_process};

/// A simulator, a direct core client for arranging terminal states, and the
/// adapter over stdio: in-process, or the spawned binary when a test reads
/// its log (`stderr_log`).
pub struct World {
    pub sim: Sim,
    pub hc: HcClient,
    pub client: Client,
    pub stderr_log: Option<PathBuf>,
    audit: Option<in_process::AuditLines>,
}

impl World {
    /// Every terminal the simulator starts with is approved; the adapter
    /// runs in-process.
    pub async fn new(options: SimOptions, extra_config: Value) -> World {
        World::build(options, extra_config, false).await
    }

    /// As [`World::new`], with the adapter binary spawned and its log kept.
    pub async fn spawned(options: SimOptions, extra_config: Value) -> World {
        World::build(options, extra_config, true).await
    }

    async fn build(options: SimOptions, extra_config: Value, spawn: bool) -> World {
        let sim = Sim::start(options);
        let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
        let mut config = json!({"coreId": sim.core_id, "sendAllowlist": approve_all(&hc).await});
        crate::support::merge(&mut config, extra_config);
        let config = sim.config(config);
        let (client, stderr_log, audit) = if spawn {
            let stderr_log = sim.dir.path().join("adapter.stderr");
            (
                mcp::stdio(&config, &stderr_log).await,
                Some(stderr_log),
                None,
            )
        } else {
            let served = in_process::stdio_with((), &config).await;
            (served.client, None, Some(served.audit))
        };
        World {
            sim,
            hc,
            client,
            stderr_log,
            audit,
        }
    }

    /// Sends straight to hc (not through the adapter) to arrange a state.
    pub async fn arrange(&self, address: &str, text: &str) {
        let core = self.hc.hello().await.unwrap().core_id.clone();
        let request = SendRequest {
            address,
            text,
            guard: None,
        };
        self.hc.send(request, &core).await.expect("arranging send");
    }

    /// The audit lines the adapter wrote (its captured stream, or its log).
    pub fn audit_lines(&self) -> Vec<String> {
        if let Some(audit) = &self.audit {
            return audit.lines();
        }
        let log = self.stderr_log.as_ref().expect("a spawned adapter's log");
        audit_lines(&std::fs::read_to_string(log).unwrap_or_default())
    }
}

/// The audit lines among a log's lines: JSON objects with `"audit"`.
pub fn audit_lines(log: &str) -> Vec<String> {
    log.lines()
        .filter(|l| l.starts_with("{\"audit\":\"send_prompt\""))
        .map(str::to_owned)
        .collect()
}

pub async fn approve_all(hc: &HcClient) -> Value {
    let listed = hc.list(true).await.expect("list for approval");
    listed
        .value
        .iter()
        .map(|t| json!({"address": t.address, "created_ms": t.created_ms}))
        .collect()
}

/// Drives agents t1..t5 into idle, done, working, blocked, error; t6 is a
/// shell (unknown).
async fn arrange_every_status(world: &World) -> [(&'static str, &'static str); 6] {
    for a in ["t1", "t2", "t3", "t4", "t5"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    world.arrange("t2", "finish a task").await;
    world.arrange("t3", "keep working /hold").await;
    world.arrange("t4", "ask me /block").await;
    world.arrange("t5", "fail /error").await;
    wait_status(&world.hc, "t2", TerminalStatus::Done).await;
    wait_status(&world.hc, "t3", TerminalStatus::Working).await;
    wait_status(&world.hc, "t4", TerminalStatus::Blocked).await;
    wait_status(&world.hc, "t5", TerminalStatus::Error).await;
    [
        ("t1", "idle"),
        ("t2", "done"),
        ("t3", "working"),
        ("t4", "blocked"),
        ("t5", "error"),
        ("t6", "unknown"),
    ]
}

#[tokio::test]
async fn send_mode_by_preflight_status_table() {
    // (mode, status) -> (outcome, reason_code, guard)
    let expected = |mode: &str, status: &str| -> (&'static str, &'static str, Value) {
        match (mode, status) {
            ("idle-only", "idle") => ("sent", "accepted", json!("idle")),
            ("idle-only", _) => ("not_sent", "status_mismatch", json!("idle")),
            ("normal", "idle") => ("sent", "accepted", json!("idle")),
            ("normal", "done") => ("sent", "accepted", Value::Null),
            ("normal", _) => ("not_sent", "status_not_allowed", Value::Null),
            _ => unreachable!(),
        }
    };
    for mode in ["idle-only", "normal"] {
        let options = SimOptions {
            agents: 5,
            shells: 1,
            agent_delay_ms: Some(50),
            ..SimOptions::default()
        };
        let world = World::spawned(options, json!({"sendMode": mode})).await;
        for (address, status) in arrange_every_status(&world).await {
            let writes_before = world.sim.writes_to(address);
            let out = send_prompt(&world.client, address, "next task").await;
            let (outcome, reason, guard) = expected(mode, status);
            let case = format!("{mode} x {status}: {out}");
            assert_eq!(out["outcome"], outcome, "{case}");
            assert_eq!(out["reason_code"], reason, "{case}");
            assert_eq!(out["preflight_status"], status, "{case}");
            assert_eq!(out["atomic_status_guard"], guard, "{case}");
            assert_eq!(out["send_mode"], mode, "{case}");
            let wrote = usize::from(outcome == "sent");
            assert_eq!(
                world.sim.writes_to(address),
                writes_before + wrote,
                "{case}"
            );
            if outcome == "sent" {
                assert!(out["core_status_seq"].as_u64().is_some(), "{case}");
            }
        }
        assert_eq!(world.audit_lines().len(), 6, "one audit line per attempt");
    }
}

#[tokio::test]
async fn every_refusal_reason_is_not_sent_with_zero_writes() {
    let options = SimOptions {
        agents: 4,
        ..SimOptions::default()
    };
    let world = World::spawned(options, json!({})).await;
    for a in ["t1", "t2", "t3", "t4"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let t1 = world.hc.get("t1").await.unwrap().value;
    // t2: killed (finished); t3: removed and replaced (address reuse); t4: a newcomer not approved.
    world.sim.control("kill", json!({"address": "t2"}));
    world.sim.control("remove", json!({"address": "t3"}));
    let reborn = world.sim.spawn("agent");
    assert_eq!(reborn["address"], "t3");
    let fresh = world.sim.spawn("agent");
    let fresh_address = fresh["address"].as_str().unwrap().to_owned();
    let secret = "SECRET-PROMPT-TEXT";
    let cases: Vec<(&str, Value)> = vec![
        ("text_empty", json!({"address": "t1", "text": ""})),
        (
            "text_too_long",
            json!({"address": "t1", "text": "x".repeat(16_001)}),
        ),
        (
            "control_character",
            json!({"address": "t1", "text": format!("{secret}\u{1b}[A")}),
        ),
        (
            "control_character",
            json!({"address": "t1", "text": format!("{secret}\r")}),
        ),
        (
            "control_character",
            json!({"address": "t1", "text": "nul\u{0}"}),
        ),
        (
            "control_character",
            json!({"address": "t1", "text": "del\u{7f}"}),
        ),
        (
            "control_character",
            json!({"address": "t1", "text": "c1\u{9b}31m"}),
        ),
        (
            "control_character",
            json!({"address": "t1", "text": "paste end \u{1b}[201~"}),
        ),
        ("finished", json!({"address": "t2", "text": secret})),
        ("not_approved", json!({"address": "t3", "text": secret})),
        (
            "not_approved",
            json!({"address": fresh_address, "text": secret}),
        ),
        (
            "lifetime_mismatch",
            json!({"address": "t1", "text": secret, "created_ms": t1.created_ms + 1}),
        ),
        ("not_found", json!({"address": "t99", "text": secret})),
    ];
    for (reason, args) in &cases {
        let result = call(&world.client, "send_prompt", args.clone()).await;
        let out = structured(&result);
        assert!(is_error(&result), "{out}");
        assert_eq!(out["outcome"], "not_sent", "{args}: {out}");
        assert_eq!(out["reason_code"], *reason, "{args}: {out}");
    }
    assert_eq!(world.sim.writes().len(), 0, "a refused send wrote input");
    // 16,000 characters exactly is accepted.
    let out = send_prompt(&world.client, "t1", &"y".repeat(16_000)).await;
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(out["chars"], 16_000);
    let audit = world.audit_lines();
    assert_eq!(audit.len(), cases.len() + 1);
    let log = std::fs::read_to_string(world.stderr_log.as_ref().unwrap()).unwrap();
    assert!(!log.contains(secret), "prompt text reached the log");
    assert!(
        audit.iter().all(|l| l.contains(r#""sha256":""#)),
        "{audit:?}"
    );
}

#[tokio::test]
async fn sends_are_refused_without_core_id_or_on_another_core() {
    let sim = Sim::start(SimOptions::agents(1));
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let allowlist = approve_all(&hc).await;
    for (config, reason) in [
        (json!({"sendAllowlist": allowlist}), "no_core_id"),
        (
            json!({"coreId": "c-other", "sendAllowlist": allowlist}),
            "core_id_mismatch",
        ),
    ] {
        let config = sim.config(config);
        let client = in_process::stdio(&config).await;
        let out = send_prompt(&client, "t1", "hello").await;
        assert_eq!(out["outcome"], "not_sent", "{out}");
        assert_eq!(out["reason_code"], reason, "{out}");
        let listed = structured(&call(&client, "list_sessions", json!({})).await).clone();
        assert_eq!(listed["sessions"][0]["send_approved"], false, "{listed}");
    }
    assert_eq!(sim.writes().len(), 0);
}

#[tokio::test]
async fn post_dispatch_faults_are_unknown_with_exactly_one_write() {
    let faults = [
        "drop-after-dispatch",
        "no-reply",
        "id-mismatch",
        "malformed-json",
        "notification",
        "oversized-reply",
    ];
    let options = SimOptions {
        agents: faults.len(),
        ..SimOptions::default()
    };
    let world = World::new(options, json!({"timeoutMs": 1000})).await;
    for (i, fault) in faults.iter().enumerate() {
        let address = format!("t{}", i + 1);
        wait_status(&world.hc, &address, TerminalStatus::Idle).await;
        world.sim.set_faults(&[&format!("{fault}:terminal.send")]);
        let out = send_prompt(&world.client, &address, "do it once").await;
        world.sim.set_faults(&[]);
        assert_eq!(out["outcome"], "unknown", "{fault}: {out}");
        assert_eq!(
            out["reason_code"], "post_dispatch_failure",
            "{fault}: {out}"
        );
        assert_eq!(
            world.sim.writes_to(&address),
            1,
            "{fault}: not exactly one write"
        );
    }
    // Nothing was retried later behind the caller's back.
    let listed = call(&world.client, "list_sessions", json!({})).await;
    assert!(!is_error(&listed));
    assert_eq!(world.sim.writes().len(), faults.len());
}

#[tokio::test]
async fn status_mismatch_from_hc_is_not_sent() {
    let options = SimOptions {
        agents: 1,
        agent_delay_ms: Some(60_000),
        ..SimOptions::default()
    };
    let world = World::new(options, json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    world.arrange("t1", "long task").await;
    wait_status(&world.hc, "t1", TerminalStatus::Working).await;
    let out = send_prompt(&world.client, "t1", "interrupt").await;
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "status_mismatch");
    assert_eq!(out["core_status"], "working");
    assert_eq!(world.sim.writes_to("t1"), 1, "only the arranging write");
}

#[tokio::test]
async fn pagination_skips_and_repeats_nothing_that_existed_throughout() {
    let sim = Sim::start(SimOptions {
        idle_records: 250,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    let initial: Vec<String> = hc
        .list(false)
        .await
        .unwrap()
        .value
        .into_iter()
        .map(|t| t.address)
        .collect();
    assert_eq!(initial.len(), 250);
    let config = sim.config(json!({}));
    let client = in_process::stdio(&config).await;
    let mut seen: Vec<String> = Vec::new();
    let mut removed: Vec<String> = Vec::new();
    let mut cursor: Option<String> = None;
    let mut page = 0;
    loop {
        let mut args = json!({"limit": 25});
        if let Some(c) = &cursor {
            args["cursor"] = json!(c);
        }
        let out = structured(&call(&client, "list_sessions", args).await).clone();
        assert_eq!(out["core_id"], sim.core_id.as_str());
        for s in out["sessions"].as_array().unwrap() {
            seen.push(s["address"].as_str().unwrap().to_owned());
        }
        // Churn between pages: drop one already seen and one not yet seen, add one.
        let victims = [
            initial[(page * 25) % 250].clone(),
            initial[(page * 25 + 137) % 250].clone(),
        ];
        for v in victims {
            if !removed.contains(&v) {
                sim.control("remove", json!({"address": v}));
                removed.push(v);
            }
        }
        sim.spawn("idle");
        page += 1;
        match out["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_owned()),
            None => break,
        }
        assert!(page < 50, "pagination does not end");
    }
    for address in initial.iter().filter(|a| !removed.contains(a)) {
        let times = seen.iter().filter(|s| *s == address).count();
        assert_eq!(times, 1, "{address} seen {times} times");
    }
}

#[tokio::test]
async fn a_cursor_from_another_core_or_forged_is_refused() {
    let sim = Sim::start(SimOptions {
        idle_records: 5,
        ..SimOptions::default()
    });
    let config = sim.config(json!({}));
    let client = in_process::stdio(&config).await;
    let out = structured(&call(&client, "list_sessions", json!({"limit": 2})).await).clone();
    let cursor = out["next_cursor"].as_str().expect("a next page").to_owned();
    let forged = format!("{}x", cursor);
    let result = call(
        &client,
        "list_sessions",
        json!({"limit": 2, "cursor": forged}),
    )
    .await;
    assert!(
        is_error(&result) && text(&result).contains("invalid_cursor"),
        "{result:?}"
    );
    // hc restarts on the same socket: a new core_id.
    let dir = sim.stop();
    let sim = Sim::start_in(
        dir,
        SimOptions {
            idle_records: 5,
            ..SimOptions::default()
        },
    );
    let result = call(
        &client,
        "list_sessions",
        json!({"limit": 2, "cursor": cursor}),
    )
    .await;
    assert!(is_error(&result), "{result:?}");
    let message = text(&result);
    assert!(
        message.contains("cursor_from_other_core") && message.contains(&sim.core_id),
        "{message}"
    );
    let bad_limit = call_invalid(&client, "list_sessions", json!({"limit": 101})).await;
    assert!(bad_limit.contains("limit"), "{bad_limit}");
}

#[tokio::test]
async fn read_output_truncation_never_splits_a_character() {
    let world = World::new(
        SimOptions {
            agents: 1,
            agent_delay_ms: Some(20),
            ..SimOptions::default()
        },
        json!({}),
    )
    .await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    world.arrange("t1", "日本語のテキスト 🙂🚀 émoji ok").await;
    wait_status(&world.hc, "t1", TerminalStatus::Done).await;
    let full = structured(
        &call(
            &world.client,
            "read_output",
            json!({"address": "t1", "max_chars": 32768}),
        )
        .await,
    )
    .clone();
    let screen = full["text"].as_str().unwrap().to_owned();
    assert!(screen.contains("🙂🚀"), "{screen}");
    assert_eq!(full["truncated"], false);
    assert_eq!(full["total_chars"], screen.chars().count());
    for max_chars in [1usize, 3, 7, 20] {
        let out = structured(
            &call(
                &world.client,
                "read_output",
                json!({"address": "t1", "max_chars": max_chars}),
            )
            .await,
        )
        .clone();
        let text = out["text"].as_str().unwrap();
        let expected: String = screen
            .chars()
            .skip(screen.chars().count() - max_chars)
            .collect();
        assert_eq!(text, expected, "max_chars {max_chars}");
        assert_eq!(out["truncated"], true);
        assert_eq!(out["total_chars"], screen.chars().count());
    }
    let mismatch = call(
        &world.client,
        "read_output",
        json!({"address": "t1", "created_ms": 1}),
    )
    .await;
    assert!(is_error(&mismatch) && text(&mismatch).contains("lifetime_mismatch"));
    let bad = call_invalid(
        &world.client,
        "read_output",
        json!({"address": "t1", "max_chars": 0}),
    )
    .await;
    assert!(bad.contains("max_chars"), "{bad}");
}

#[tokio::test]
async fn tools_list_is_pinned() {
    let world = World::new(SimOptions::agents(1), json!({})).await;
    let tools = world.client.list_all_tools().await.expect("tools/list");
    let tools = serde_json::to_value(&tools).unwrap();
    insta::assert_json_snapshot!("tools_list", tools);
}

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

/// The screen of `address` once it contains `needle`.
async fn screen_with(world: &World, address: &str, needle: &str) -> String {
    let deadline = std::time::Instant::now() + crate::support::PATIENCE;
    loop {
        let text = world.hc.read(address).await.unwrap().value.text;
        if text.contains(needle) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{needle:?} never on screen:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_multi_line_prompt_never_reaches_a_terminal_not_approved_for_it() {
    let readers = SimOptions {
        readers: 1,
        ..SimOptions::default()
    };
    let world = World::new(readers, json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let (gets, sends) = (
        world.sim.calls("terminal.get"),
        world.sim.calls("terminal.send"),
    );
    // The old hole: line 1 makes a line-reading program ask, line 2 is
    // typed into the question.
    for (text, named) in [
        ("ask\nSECOND-LINE", "LF (U+000A) at character 3"),
        ("ls\t", "TAB (U+0009) at character 2"),
    ] {
        let result = call(
            &world.client,
            "send_prompt",
            json!({"address": "t1", "text": text}),
        )
        .await;
        let out = structured(&result);
        assert_eq!(out["outcome"], "not_sent", "{out}");
        assert_eq!(out["reason_code"], "control_character", "{out}");
        let reason = out["reason"].as_str().unwrap();
        assert!(
            reason.contains(named) && reason.contains("allow --multiline"),
            "{reason}"
        );
    }
    assert_eq!(
        world.sim.calls("terminal.get"),
        gets,
        "refused before any hc call"
    );
    assert_eq!(world.sim.calls("terminal.send"), sends);
    assert_eq!(world.sim.writes().len(), 0);
    let listed = structured(&call(&world.client, "list_sessions", json!({})).await).clone();
    assert_eq!(listed["sessions"][0]["send_approved"], true, "{listed}");
    assert_eq!(
        listed["sessions"][0]["multiline_allowed"], false,
        "{listed}"
    );
    // One line still goes, and the reader takes it as one line.
    let out = send_prompt(&world.client, "t1", "one line only").await;
    assert_eq!(out["outcome"], "sent", "{out}");
    screen_with(&world, "t1", "line: one line only").await;
}

#[tokio::test]
async fn multi_line_prompts_go_only_where_the_operator_allowed_them() {
    let sim = Sim::start(SimOptions {
        readers: 2,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    for address in ["t1", "t2"] {
        wait_status(&hc, address, TerminalStatus::Idle).await;
    }
    let t1 = hc.get("t1").await.unwrap().value.created_ms;
    let t2 = hc.get("t2").await.unwrap().value.created_ms;
    let allowlist = json!([
        {"address": "t1", "created_ms": t1, "multiline": true},
        {"address": "t2", "created_ms": t2},
    ]);
    let config = sim.config(json!({"coreId": sim.core_id, "sendAllowlist": allowlist}));
    let client = in_process::stdio(&config).await;
    let listed = structured(&call(&client, "list_sessions", json!({})).await).clone();
    let allowed: Vec<(Value, Value)> = listed["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["address"].clone(), s["multiline_allowed"].clone()))
        .collect();
    assert_eq!(
        allowed,
        [(json!("t1"), json!(true)), (json!("t2"), json!(false))]
    );
    let refused = send_prompt(&client, "t2", "ask\nSECOND-LINE").await;
    assert_eq!(refused["reason_code"], "control_character", "{refused}");
    assert_eq!(sim.writes_to("t2"), 0);
    // The operator's decision for t1: the paste goes as it is.
    let sent = send_prompt(&client, "t1", "ask\nSECOND-LINE").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    assert_eq!(sim.writes_to("t1"), 1);
}
