//! The simulator as the adapter meets it: the built binary on a real socket,
//! real PTYs behind it. Each test starts its own simulator.

mod support;

use serde_json::json;
use support::{Client, Simulator, eventually, hello_params, record, send_params, wait_for_status};

#[test]
fn ready_line_names_a_fresh_core_id_and_the_socket() {
    let first = Simulator::start(&[]);
    let second = Simulator::start(&[]);
    for sim in [&first, &second] {
        let expected_tail = format!(" socket={}\n", sim.socket.display());
        let core_id = sim
            .ready_line
            .strip_prefix("ready core_id=")
            .and_then(|rest| rest.strip_suffix(&expected_tail))
            .unwrap_or_else(|| panic!("unexpected ready line {:?}", sim.ready_line));
        assert_eq!(core_id.len(), 36, "a UUID: {core_id}");
        assert_eq!(&core_id[14..15], "4", "a v4 UUID: {core_id}");
    }
    assert_ne!(first.ready_line, second.ready_line);
}

#[test]
fn handshake_is_required_first_and_returns_the_pinned_identity() {
    let sim = Simulator::start(&[]);
    let mut client = Client::connect(&sim.socket);
    let refused = client.error("terminal.list", json!({ "include_finished": false }));
    assert_eq!(refused["code"], -32600);
    assert_eq!(refused["message"], "handshake_required");

    let hello = client.result("hc.hello", hello_params(1));
    assert_eq!(hello["version"], "0.1.15");
    assert_eq!(hello["generation"], 1);
    assert_eq!(hello["framing"], "plain");
    assert_eq!(hello["pid"], sim.child.id());
    let core_id = hello["core_id"].as_str().expect("core_id is a string");
    assert!(sim.ready_line.contains(core_id));
    assert!(hello["started_ms"].as_u64().is_some());
}

#[test]
fn another_generation_is_refused_with_the_supported_list() {
    let sim = Simulator::start(&[]);
    let mut client = Client::connect(&sim.socket);
    let error = client.error("hc.hello", hello_params(2));
    assert_eq!(
        error,
        json!({
            "code": -32010,
            "message": "unsupported_generation",
            "data": { "kind": "unsupported_generation", "supported": [1] },
        })
    );
}

#[test]
fn bad_lines_each_get_an_error_and_the_connection_lives_on() {
    let sim = Simulator::start(&[]);
    let mut client = sim.greeted_client();
    for (line, code) in [
        ("not json", -32700),
        ("[1,2]", -32600),
        ("{\"id\":1}", -32600),
    ] {
        client.send_line(line);
        let reply: serde_json::Value = serde_json::from_str(&client.read_line().unwrap()).unwrap();
        assert_eq!(reply["error"]["code"], code, "for {line}");
    }
    let error = client.error("terminal.list", json!({ "include_finished": "yes" }));
    assert_eq!(error["code"], -32602);
    let error = client.error("terminal.kill", json!({}));
    assert_eq!(error["code"], -32601);
    let result = client.result("terminal.list", json!({ "include_finished": false }));
    assert_eq!(result["terminals"], json!([]));
}

#[test]
fn agent_round_trip_goes_working_then_done_with_the_reply_on_screen() {
    let sim = Simulator::start(&["--agents", "1", "--agent-delay-ms", "600"]);
    let mut client = sim.greeted_client();
    let before = wait_for_status(&mut client, "t1", "idle");
    assert_eq!(before["program"], "sim-agent");

    let sent = client.result(
        "terminal.send",
        send_params("t1", "hello\nsecond line", Some("idle")),
    );
    assert_eq!(sent["accepted"], true);
    assert_eq!(sent["created_ms"], before["created_ms"]);

    let working = wait_for_status(&mut client, "t1", "working");
    assert_eq!(
        working["status_seq"],
        before["status_seq"].as_u64().unwrap() + 1
    );
    let done = wait_for_status(&mut client, "t1", "done");
    assert_eq!(
        done["status_seq"],
        before["status_seq"].as_u64().unwrap() + 2
    );
    let screen = client.result("terminal.read", json!({ "address": "t1", "lines": 0 }));
    let text = screen["text"].as_str().unwrap();
    assert!(
        text.contains("reply: hello\nreply: second line"),
        "screen: {text:?}"
    );
    assert!(
        !text.contains("7501"),
        "status reports are stripped: {text:?}"
    );
    assert_eq!(screen["complete"], true);
    assert_eq!(
        (screen["rows"].as_u64(), screen["cols"].as_u64()),
        (Some(40), Some(120))
    );

    let log = sim.input_log();
    assert_eq!(log.len(), 1);
    assert_eq!(log[0]["address"], "t1");
    assert_eq!(log[0]["bytes"], "hello\nsecond line".len());
}

#[test]
fn guard_mismatch_writes_nothing() {
    let sim = Simulator::start(&["--agents", "1"]);
    let mut client = sim.greeted_client();
    let idle = wait_for_status(&mut client, "t1", "idle");

    let error = client.error(
        "terminal.send",
        send_params("t1", "must not arrive", Some("working")),
    );
    assert_eq!(error["code"], -32000);
    assert_eq!(error["message"], "status_mismatch");
    assert_eq!(error["data"]["kind"], "status_mismatch");
    assert_eq!(error["data"]["expected"], "working");
    assert_eq!(error["data"]["actual"], "idle");
    assert_eq!(error["data"]["status_seq"], idle["status_seq"]);
    assert!(sim.input_log().is_empty());
    let screen = client.result("terminal.read", json!({ "address": "t1", "lines": 0 }));
    assert!(!screen["text"].as_str().unwrap().contains("must not arrive"));

    let error = client.error("terminal.send", send_params("t1", "x", Some("done")));
    assert_eq!(error["code"], -32602, "`if` accepts only idle and working");
    assert!(sim.input_log().is_empty());
}

#[test]
fn a_blocked_agent_refuses_input_until_forced() {
    let sim = Simulator::start(&["--agents", "1"]);
    let mut client = sim.greeted_client();
    wait_for_status(&mut client, "t1", "idle");
    client.result("terminal.send", send_params("t1", "do it /block", None));
    wait_for_status(&mut client, "t1", "blocked");

    let error = client.error("terminal.send", send_params("t1", "y", None));
    assert_eq!(
        error,
        json!({ "code": -32003, "message": "blocked", "data": { "kind": "blocked", "address": "t1" } })
    );
    assert_eq!(sim.input_log().len(), 1, "the refused send wrote nothing");

    let mut forced = send_params("t1", "y", None);
    forced["force"] = json!(true);
    client.result("terminal.send", forced);
    wait_for_status(&mut client, "t1", "done");
    assert_eq!(sim.input_log().len(), 2);
}

#[test]
fn a_removed_address_is_reused_with_a_new_created_ms() {
    let sim = Simulator::start(&["--idle-records", "3"]);
    let mut client = sim.greeted_client();
    let mut control = sim.control();
    let old = record(&mut client, "t2");

    control.result("kill", json!({ "address": "t2" }));
    let finished = client.error("terminal.send", send_params("t2", "x", None));
    assert_eq!(finished["code"], -32002);
    let fresh = control.result("spawn", json!({ "kind": "idle" }));
    assert_eq!(
        fresh["address"], "t4",
        "a finished terminal keeps its address"
    );

    control.result("remove", json!({ "address": "t2" }));
    assert_eq!(
        client.error("terminal.get", json!({ "address": "t2" }))["code"],
        -32001
    );
    let reused = control.result("spawn", json!({ "kind": "idle" }));
    assert_eq!(reused["address"], "t2");
    assert!(reused["created_ms"].as_u64() > fresh["created_ms"].as_u64());
    assert!(reused["created_ms"].as_u64() > old["created_ms"].as_u64());

    let listed = client.result("terminal.list", json!({ "include_finished": true }));
    let order: Vec<_> = listed["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| record["address"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(order, ["t1", "t3", "t4", "t2"], "sorted by created_ms");
}

#[test]
fn a_faulted_send_writes_and_logs_before_the_connection_drops() {
    let sim = Simulator::start(&[
        "--idle-records",
        "1",
        "--fault",
        "drop-after-dispatch:terminal.send",
    ]);
    let mut client = sim.greeted_client();
    client.send_line(&json!({ "jsonrpc": "2.0", "id": 9, "method": "terminal.send", "params": send_params("t1", "lost reply", None) }).to_string());
    assert_eq!(
        client.read_line(),
        None,
        "the connection closes without a reply"
    );
    assert_eq!(
        sim.input_log().len(),
        1,
        "the input was written all the same"
    );

    let mut control = sim.control();
    control.result("set_faults", json!({ "faults": [] }));
    let mut client = sim.greeted_client();
    client.result("terminal.send", send_params("t1", "kept", None));
    let stats = control.result("stats", json!({}));
    assert_eq!(stats["calls"]["terminal.send"], 2);
    assert_eq!(stats["connections_total"], 2);
}

#[test]
fn sigterm_kills_the_programs_removes_the_sockets_and_exits_zero() {
    let mut sim = Simulator::start(&["--agents", "1", "--shells", "1"]);
    let pid = sim.child.id();
    let children: Vec<i32> = std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("children")).ok())
        .flat_map(|list| {
            list.split_whitespace()
                .map(|p| p.parse().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(!children.is_empty(), "the agent and the shell are children");

    // SAFETY: signals our own child process.
    unsafe { libc::kill(pid as i32, libc::SIGTERM) };
    let status = eventually("hc-sim to exit", || sim.child.try_wait().unwrap());
    assert!(status.success(), "exit status {status:?}");
    assert!(!sim.socket.exists() && !sim.control.exists());
    for child in children {
        eventually("the programs to be gone", || {
            let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            (stat.is_empty() || stat.contains(") Z ")).then_some(())
        });
    }
}
