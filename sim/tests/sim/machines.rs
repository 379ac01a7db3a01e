//! Machines (contract §8) with real cores: a simulator adds others as
//! machines over real hc connections, lists their terminals as `NAME/tN`,
//! forwards reads and sends to them, refuses what it cannot forward, and
//! says `machine_lost` when a forwarded send is cut.

use hc_sim::testing::{Options, Simulator};
use serde_json::{Value, json};

use crate::support::{
    Client, eventually, greeted_client, send_params, start, start_in, text, wait_for_status,
};

/// A core with `remote` added as machine `build`.
fn federated(remote: &Simulator) -> Simulator {
    start(Options::default().machine("build", &remote.socket))
}

fn machine(client: &mut Client, name: &str) -> Value {
    let list = client.result("machine.list", json!({}));
    let machines = list["machines"].as_array().expect("machines is an array");
    machines
        .iter()
        .find(|machine| machine["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn a_machine_is_listed_with_its_core_and_its_terminals_as_name_slash_address() {
    let remote = start(Options::agents(1));
    let core = start(Options {
        idle_records: 1,
        ..Options::default().machine("build", &remote.socket)
    });
    let mut client = greeted_client(&core);

    let build = machine(&mut client, "build");
    assert_eq!(build["state"], "connected", "{build}");
    assert_eq!(build["core_id"], remote.core_id.as_str());
    assert_eq!(build["version"], "0.1.15");
    assert!(build["since_ms"].as_u64().is_some(), "{build}");

    let list = client.result("terminal.list", json!({ "include_finished": false }));
    let addresses: Vec<_> = list["terminals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|record| (record["address"].clone(), record["machine"].clone()))
        .collect();
    assert_eq!(
        addresses,
        [
            (json!("t1"), Value::Null),
            (json!("build/t1"), json!("build"))
        ]
    );
    let record = client.result("terminal.get", json!({ "address": "build/t1" }));
    assert_eq!(record["machine"], "build");
    assert_eq!(record["program"], "sim-agent");
}

#[test]
fn a_send_to_a_machine_lands_once_there_under_its_own_guard() {
    let remote = start(Options::agents(1));
    let core = federated(&remote);
    let mut client = greeted_client(&core);
    wait_for_status(&mut client, "build/t1", "idle");

    let sent = client.result(
        "terminal.send",
        send_params("build/t1", "hello there", Some("idle")),
    );
    assert_eq!(sent["address"], "build/t1");
    assert_eq!(sent["machine"], "build");
    assert_eq!(sent["accepted"], true);
    let writes = remote.writes();
    assert_eq!(writes.len(), 1, "{writes:?}");
    assert_eq!(writes[0]["address"], "t1");
    assert!(core.writes().is_empty(), "nothing is written on this core");

    // The machine's core applies its own guard: its refusal comes back as
    // it phrased it, with this core's address for the terminal.
    wait_for_status(&mut client, "build/t1", "done");
    let refused = client.error(
        "terminal.send",
        send_params("build/t1", "again", Some("idle")),
    );
    assert_eq!(refused["code"], -32000, "{refused}");
    assert_eq!(refused["data"]["kind"], "status_mismatch");
    assert_eq!(refused["data"]["address"], "build/t1");
    assert_eq!(remote.writes().len(), 1);

    let read = client.result(
        "terminal.read",
        json!({ "address": "build/t1", "lines": 0 }),
    );
    assert!(text(&read).contains("reply: hello there"), "{read}");
    // An unknown machine, or a machine's terminal asked of the wrong name,
    // is not found: never a local terminal.
    let unknown = client.error("terminal.get", json!({ "address": "gpu/t1" }));
    assert_eq!(unknown["data"]["kind"], "not_found", "{unknown}");
}

#[test]
fn a_disconnected_machine_gets_nothing_and_says_so() {
    let remote = start(Options::agents(1));
    let core = federated(&remote);
    let mut client = greeted_client(&core);
    wait_for_status(&mut client, "build/t1", "idle");

    let entry = core.control("machine.disconnect", json!({ "name": "build" }));
    assert_eq!(entry["state"], "disconnected");
    let build = machine(&mut client, "build");
    assert_eq!(build["state"], "disconnected");
    assert!(build.get("core_id").is_none(), "{build}");

    let refused = client.error("terminal.send", send_params("build/t1", "hi", Some("idle")));
    assert_eq!(refused["code"], -32005, "{refused}");
    assert_eq!(refused["data"]["kind"], "machine_unavailable");
    assert_eq!(refused["data"]["machine"], "build");
    assert_eq!(refused["data"]["state"], "disconnected");
    let list = client.result("terminal.list", json!({ "include_finished": true }));
    assert_eq!(
        list["terminals"],
        json!([]),
        "a disconnected machine lists nothing"
    );
    assert!(remote.writes().is_empty());

    let entry = core.control("machine.connect", json!({ "name": "build" }));
    assert_eq!(entry["state"], "connected", "{entry}");
    client.result("terminal.send", send_params("build/t1", "hi", Some("idle")));
    assert_eq!(remote.writes().len(), 1);
}

#[test]
fn a_name_re_added_for_another_core_and_a_restarted_core_show_new_core_ids() {
    let first = start(Options::agents(1));
    let second = start(Options::agents(1));
    let core = federated(&first);
    let mut client = greeted_client(&core);

    core.control("machine.remove", json!({ "name": "build" }));
    assert_eq!(machine(&mut client, "build"), Value::Null);
    let added = core.control(
        "machine.add",
        json!({ "name": "build", "socket": second.socket }),
    );
    assert_eq!(added["core_id"], second.core_id.as_str());

    let dir = second.stop();
    let restarted = start_in(dir, Options::agents(1));
    let seen = eventually("build to show the restarted core", || {
        let build = machine(&mut client, "build");
        (build["core_id"] == restarted.core_id.as_str()).then_some(build)
    });
    assert_eq!(seen["state"], "connected");
}

#[test]
fn a_send_cut_in_flight_is_machine_lost() {
    let remote = start(Options::agents(1).fault("no-reply:terminal.send"));
    let core = federated(&remote);
    let mut client = greeted_client(&core);
    wait_for_status(&mut client, "build/t1", "idle");

    let socket = core.socket.clone();
    let sending = std::thread::spawn(move || {
        let mut client = Client::connect(&socket);
        client.result("hc.hello", crate::support::hello_params(1));
        client.error("terminal.send", send_params("build/t1", "hi", Some("idle")))
    });
    // The send is in flight once the machine's core counted it.
    eventually("the machine to receive the send", || {
        (remote.calls("terminal.send") == 1).then_some(())
    });
    core.control("machine.disconnect", json!({ "name": "build" }));
    let lost = sending.join().expect("the sending thread ends");
    assert_eq!(lost["code"], -32006, "{lost}");
    assert_eq!(lost["data"]["kind"], "machine_lost");
    assert_eq!(lost["data"]["machine"], "build");
}
