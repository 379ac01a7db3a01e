//! The hc socket's protocol: the handshake, answers to bad lines, and a
//! fault that loses a reply after the call was carried out.

use hc_sim::testing::Options;
use serde_json::json;

use crate::support::{Client, greeted_client, hello_params, send_params, start};

#[test]
fn handshake_is_required_first_and_returns_the_pinned_identity() {
    let sim = start(Options::default());
    let mut client = Client::connect(&sim.socket);
    let refused = client.error("terminal.list", json!({ "include_finished": false }));
    assert_eq!(refused["code"], -32600);
    assert_eq!(refused["message"], "handshake_required");

    let hello = client.result("hc.hello", hello_params(1));
    assert_eq!(hello["version"], "0.1.15");
    assert_eq!(hello["generation"], 1);
    assert_eq!(hello["framing"], "plain");
    assert_eq!(hello["pid"], sim.pid());
    assert_eq!(hello["core_id"], sim.core_id.as_str());
    assert!(hello["started_ms"].as_u64().is_some());
}

#[test]
fn another_generation_is_refused_with_the_supported_list() {
    let sim = start(Options::default());
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
    let sim = start(Options::default());
    let mut client = greeted_client(&sim);
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
fn a_faulted_send_writes_and_logs_before_the_connection_drops() {
    let sim = start(Options {
        idle_records: 1,
        ..Options::default().fault("drop-after-dispatch:terminal.send")
    });
    let mut client = greeted_client(&sim);
    client.send_line(&json!({ "jsonrpc": "2.0", "id": 9, "method": "terminal.send", "params": send_params("t1", "lost reply", None) }).to_string());
    assert_eq!(
        client.read_line(),
        None,
        "the connection closes without a reply"
    );
    assert_eq!(sim.writes_to("t1"), 1, "the input was written all the same");

    sim.set_faults(&[]);
    let mut client = greeted_client(&sim);
    client.result("terminal.send", send_params("t1", "kept", None));
    assert_eq!(sim.calls("terminal.send"), 2);
    assert_eq!(sim.stats()["connections_total"], 2);
}
