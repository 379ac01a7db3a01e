//! Machines (contract §8) end to end, with real simulator processes as
//! the machines' cores: what a coordinator sees of them, a send that lands
//! once on the right machine, and every way a send to a machine's terminal
//! is refused with nothing written anywhere.

use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::in_process;
use crate::support::mcp::{Client, call, is_error, send_prompt, structured, text};
use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions};

/// This core (one agent, `t1`) with machines `build` and `gpu` (one agent
/// each), and a direct client of this core.
struct Fleet {
    here: Sim,
    build: Sim,
    gpu: Sim,
    hc: HcClient,
}

impl Fleet {
    /// Three simulators in this test process: this core with machines
    /// `build` and `gpu`.
    async fn new() -> Fleet {
        Fleet::with(Sim::start).await
    }

    /// The same fleet as three hc-sim processes, `here` told its machines
    /// on its command line (`--machine NAME=SOCKET`).
    async fn processes() -> Fleet {
        Fleet::with(Sim::process).await
    }

    async fn with(start: fn(SimOptions) -> Sim) -> Fleet {
        let build = start(SimOptions::agents(1));
        let gpu = start(SimOptions::agents(1));
        let here = start(
            SimOptions::agents(1)
                .machine("build", &build.socket)
                .machine("gpu", &gpu.socket),
        );
        let hc = HcClient::new(&here.socket, Duration::from_secs(5));
        for address in ["t1", "build/t1", "gpu/t1"] {
            wait_status(&hc, address, TerminalStatus::Idle).await;
        }
        Fleet {
            here,
            build,
            gpu,
            hc,
        }
    }

    /// The allowlist entry of `address` as listed now, bound to
    /// `machine_core` when given.
    async fn entry(&self, address: &str, machine_core: Option<&str>) -> Value {
        let record = self.hc.get(address).await.expect("terminal.get").value;
        let mut entry = json!({"address": address, "created_ms": record.created_ms});
        if let Some(core) = machine_core {
            entry["machineCoreId"] = json!(core);
        }
        entry
    }

    /// The adapter over stdio (in-process), approving `entries`.
    async fn adapter(&self, entries: Vec<Value>, extra: Value) -> Client {
        let mut config = json!({"coreId": self.here.core_id, "sendAllowlist": entries});
        crate::support::merge(&mut config, extra);
        in_process::stdio_with((), &self.here.config(config))
            .await
            .client
    }
}

async fn tool(client: &Client, name: &str, args: Value) -> Value {
    let result = call(client, name, args).await;
    assert!(!is_error(&result), "{name}: {}", text(&result));
    structured(&result).clone()
}

#[tokio::test]
async fn machines_and_their_terminals_are_listed_with_their_own_cores() {
    let fleet = Fleet::new().await;
    let build_t1 = fleet.entry("build/t1", Some(&fleet.build.core_id)).await;
    let client = fleet.adapter(vec![build_t1], json!({})).await;

    let machines = tool(&client, "list_machines", json!({})).await;
    assert_eq!(machines["core_id"], fleet.here.core_id.as_str());
    assert_eq!(machines["machines_supported"], true);
    assert_eq!(machines["local_terminals"], 1);
    let listed: Vec<(Value, Value, Value, Value, Value)> = machines["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let m = m.clone();
            (
                m["name"].clone(),
                m["state"].clone(),
                m["core_id"].clone(),
                m["terminals"].clone(),
                m["approved"].clone(),
            )
        })
        .collect();
    assert_eq!(
        listed,
        [
            (
                json!("build"),
                json!("connected"),
                json!(fleet.build.core_id),
                json!(1),
                json!(1)
            ),
            (
                json!("gpu"),
                json!("connected"),
                json!(fleet.gpu.core_id),
                json!(1),
                json!(0)
            ),
        ]
    );

    let all = tool(&client, "list_sessions", json!({})).await;
    let sessions: Vec<(Value, Value, Value)> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["address"].clone(),
                s["machine"].clone(),
                s["send_approved"].clone(),
            )
        })
        .collect();
    let mut sorted = sessions.clone();
    sorted.sort_by_key(|s| s.0.to_string());
    assert_eq!(
        sorted,
        [
            (json!("build/t1"), json!("build"), json!(true)),
            (json!("gpu/t1"), json!("gpu"), json!(false)),
            (json!("t1"), Value::Null, json!(false)),
        ],
        "an approval of build/t1 approves neither t1 nor gpu/t1"
    );
    let only_build = tool(&client, "list_sessions", json!({"machine": "build"})).await;
    assert_eq!(only_build["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(only_build["sessions"][0]["address"], "build/t1");
    let only_here = tool(&client, "list_sessions", json!({"machine": ""})).await;
    assert_eq!(only_here["sessions"].as_array().unwrap().len(), 1);
    assert_eq!(only_here["sessions"][0]["address"], "t1");

    let screen = tool(&client, "read_output", json!({"address": "gpu/t1"})).await;
    assert_eq!(screen["address"], "gpu/t1");
}

#[tokio::test]
async fn a_send_lands_once_on_the_right_machine_and_nowhere_else() {
    let fleet = Fleet::processes().await;
    for sim in [&fleet.here, &fleet.build, &fleet.gpu] {
        assert_ne!(sim.pid(), std::process::id(), "a simulator process");
    }
    let entries = vec![
        fleet.entry("build/t1", Some(&fleet.build.core_id)).await,
        fleet.entry("t1", None).await,
    ];
    let client = fleet.adapter(entries, json!({})).await;

    let out = send_prompt(&client, "build/t1", "build the thing").await;
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(fleet.build.writes_to("t1"), 1);
    assert_eq!(fleet.here.writes_to("t1"), 0, "never this core's t1");
    assert_eq!(fleet.gpu.writes_to("t1"), 0, "never gpu's t1");

    // gpu/t1 is not approved: the approval of build/t1 is not its.
    let out = send_prompt(&client, "gpu/t1", "hello").await;
    assert_eq!(out["reason_code"], "not_approved", "{out}");
    assert_eq!(fleet.gpu.writes_to("t1"), 0);
}

#[tokio::test]
async fn a_send_to_another_machine_follows_its_turn() {
    let fleet = Fleet::new().await;
    let entries = vec![fleet.entry("build/t1", Some(&fleet.build.core_id)).await];
    let client = fleet.adapter(entries, json!({})).await;
    let out = tool(
        &client,
        "send_prompt",
        json!({"address": "build/t1", "text": "build it", "follow_ms": 20000}),
    )
    .await;
    assert_eq!(out["outcome"], "sent", "{out}");
    assert_eq!(out["turn"]["state"], "ended", "{out}");
    assert_eq!(out["turn"]["status"], "done", "{out}");
    assert_eq!(fleet.build.writes_to("t1"), 1);
    assert_eq!(fleet.here.writes_to("t1"), 0);
}

#[tokio::test]
async fn a_disconnected_machine_gets_nothing_and_reads_name_it() {
    let fleet = Fleet::new().await;
    let build_t1 = fleet.entry("build/t1", Some(&fleet.build.core_id)).await;
    let client = fleet.adapter(vec![build_t1], json!({})).await;
    fleet
        .here
        .control("machine.disconnect", json!({"name": "build"}));

    let out = send_prompt(&client, "build/t1", "build the thing").await;
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "machine_unavailable", "{out}");
    assert!(
        out["reason"].as_str().unwrap().contains("machine build is"),
        "{out}"
    );
    assert_eq!(fleet.build.writes_to("t1"), 0);
    assert_eq!(fleet.here.writes_to("t1"), 0);

    let read = call(&client, "read_output", json!({"address": "build/t1"})).await;
    assert!(is_error(&read));
    let said = text(&read);
    assert!(said.contains("machine build is disconnected"), "{said}");
    assert!(said.contains("[machine_unavailable]"), "{said}");

    let machines = tool(&client, "list_machines", json!({})).await;
    assert_eq!(machines["machines"][0]["state"], "disconnected");
    assert_eq!(machines["machines"][0]["core_id"], Value::Null);
}

#[tokio::test]
async fn another_core_under_the_same_name_and_lifetime_gets_nothing() {
    let fleet = Fleet::new().await;
    // The approval names the lifetime build/t1 has now, but the core of the
    // machine `build` was before: exactly what a machine re-added under the
    // same name, with a terminal of identical created_ms, looks like.
    let stranger = Sim::start(SimOptions::agents(1));
    fleet
        .here
        .control("machine.remove", json!({"name": "build"}));
    fleet.here.control(
        "machine.add",
        json!({"name": "build", "socket": stranger.socket}),
    );
    wait_status(&fleet.hc, "build/t1", TerminalStatus::Idle).await;
    let entry = fleet.entry("build/t1", Some(&fleet.build.core_id)).await;
    let client = fleet.adapter(vec![entry], json!({})).await;

    let out = send_prompt(&client, "build/t1", "hello").await;
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert_eq!(out["reason_code"], "machine_changed", "{out}");
    assert_eq!(stranger.writes_to("t1"), 0);
    assert_eq!(fleet.build.writes_to("t1"), 0);
}

#[tokio::test]
async fn a_restarted_machine_core_invalidates_its_approvals() {
    let Fleet {
        here,
        build,
        gpu: _gpu,
        hc,
    } = Fleet::new().await;
    let record = hc.get("build/t1").await.unwrap().value;
    let entry = json!({
        "address": "build/t1",
        "created_ms": record.created_ms,
        "machineCoreId": build.core_id,
    });
    let mut config = json!({"coreId": here.core_id, "sendAllowlist": [entry]});
    crate::support::merge(&mut config, json!({}));
    let client = in_process::stdio_with((), &here.config(config))
        .await
        .client;

    let old_core = build.core_id.clone();
    let restarted = Sim::start_in(build.stop(), SimOptions::agents(1));
    crate::support::eventually("build to reconnect to its new core", async || {
        let machines = hc.machines().await.ok()?.value?;
        let build = machines.find("build")?.clone();
        (build.core_id.as_ref().map(ToString::to_string) == Some(restarted.core_id.clone()))
            .then_some(())
    })
    .await;
    assert_ne!(restarted.core_id, old_core);
    wait_status(&hc, "build/t1", TerminalStatus::Idle).await;
    let out = send_prompt(&client, "build/t1", "hello").await;
    assert_eq!(out["outcome"], "not_sent", "{out}");
    assert!(
        ["not_approved", "machine_changed"].contains(&out["reason_code"].as_str().unwrap()),
        "{out}"
    );
    assert_eq!(restarted.writes_to("t1"), 0);
}

#[tokio::test]
async fn a_machine_the_config_does_not_show_is_invisible_and_refused_by_name() {
    let fleet = Fleet::new().await;
    let entries = vec![
        fleet.entry("build/t1", Some(&fleet.build.core_id)).await,
        fleet.entry("gpu/t1", Some(&fleet.gpu.core_id)).await,
    ];
    let client = fleet.adapter(entries, json!({"machines": ["gpu"]})).await;

    let machines = tool(&client, "list_machines", json!({})).await;
    let names: Vec<&Value> = machines["machines"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| &m["name"])
        .collect();
    assert_eq!(names, [&json!("gpu")]);
    let all = tool(&client, "list_sessions", json!({})).await;
    let addresses: Vec<&Value> = all["sessions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| &s["address"])
        .collect();
    assert!(!addresses.contains(&&json!("build/t1")), "{all}");
    assert!(addresses.contains(&&json!("gpu/t1")), "{all}");

    for (tool_name, args) in [
        ("read_output", json!({"address": "build/t1"})),
        (
            "wait_for_output",
            json!({"address": "build/t1", "quiet_ms": 100, "timeout_ms": 1000}),
        ),
        (
            "wait_for_status",
            json!({"targets": [{"address": "build/t1"}], "timeout_ms": 1000}),
        ),
    ] {
        let result = call(&client, tool_name, args).await;
        assert!(is_error(&result), "{tool_name}");
        assert!(
            text(&result).contains("[machine_hidden]"),
            "{tool_name}: {}",
            text(&result)
        );
    }
    let reads_before = fleet.build.calls("terminal.read") + fleet.build.calls("terminal.get");
    let out = send_prompt(&client, "build/t1", "hello").await;
    assert_eq!(out["reason_code"], "machine_hidden", "{out}");
    assert_eq!(fleet.build.writes_to("t1"), 0);
    assert_eq!(
        fleet.build.calls("terminal.read") + fleet.build.calls("terminal.get"),
        reads_before,
        "nothing is asked of a hidden machine"
    );
    let out = send_prompt(&client, "gpu/t1", "hello").await;
    assert_eq!(out["outcome"], "sent", "{out}");
}

/// Takes machine `build` down and back (its terminals listed `lag_ms`
/// after it says connected), following fleet waits as a coordinator
/// would: unreachable while down, reachable once back, never gone.
async fn down_and_back(lag_ms: u64) {
    let fleet = Fleet::new().await;
    let client = fleet.adapter(Vec::new(), json!({})).await;
    let listed = tool(&client, "list_sessions", json!({})).await;
    let since = listed["since"].as_str().expect("a since").to_owned();

    fleet
        .here
        .control("machine.disconnect", json!({"name": "build"}));
    let down = tool(
        &client,
        "wait_for_status",
        json!({"since": since, "timeout_ms": 10000}),
    )
    .await;
    assert_eq!(down["outcome"], "unreachable", "{down}");
    assert_eq!(down["machine_changes"][0]["machine"], "build", "{down}");
    assert_eq!(down["machine_changes"][0]["state"], "disconnected");
    assert_eq!(down["machine_changes"][0]["old_state"], "connected");
    let changes: Vec<(&Value, &Value)> = down["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (&c["address"], &c["change"]))
        .collect();
    assert_eq!(
        changes,
        [(&json!("build/t1"), &json!("unreachable"))],
        "never gone"
    );

    // The answer's since has seen it: nothing more until it comes back.
    let since = down["since"].as_str().unwrap().to_owned();
    let quiet = tool(
        &client,
        "wait_for_status",
        json!({"since": since, "timeout_ms": 300}),
    )
    .await;
    assert_eq!(quiet["outcome"], "timeout", "{quiet}");
    let mut since = quiet["since"].as_str().unwrap().to_owned();
    fleet.here.control(
        "machine.connect",
        json!({"name": "build", "listing_lag_ms": lag_ms}),
    );
    // The machine may pass through `connecting`, and say it is connected
    // before its terminals are listed again.
    let (mut states, mut changes) = (Vec::new(), Vec::new());
    for _ in 0..5 {
        let back = tool(
            &client,
            "wait_for_status",
            json!({"since": since, "timeout_ms": 10000}),
        )
        .await;
        assert_ne!(back["outcome"], "timeout", "{back}");
        for m in back["machine_changes"].as_array().unwrap() {
            assert_eq!(m["machine"], "build", "{back}");
            states.push(m["state"].as_str().unwrap().to_owned());
        }
        for c in back["changes"].as_array().unwrap() {
            changes.push((c["address"].clone(), c["change"].clone()));
        }
        since = back["since"].as_str().unwrap().to_owned();
        if !changes.is_empty() {
            break;
        }
    }
    assert_eq!(
        states.last().map(String::as_str),
        Some("connected"),
        "{states:?}"
    );
    assert!(
        states.iter().all(|s| s == "connecting" || s == "connected"),
        "{states:?}"
    );
    assert_eq!(
        changes,
        [(json!("build/t1"), json!("reachable"))],
        "never gone"
    );
}

#[tokio::test]
async fn a_fleet_wait_reports_a_machine_going_down_and_coming_back() {
    down_and_back(0).await;
}

#[tokio::test]
async fn a_machine_connected_before_its_terminals_are_listed_loses_none() {
    // A core may say a machine is connected a while before it lists the
    // machine's terminals again: they are not gone meanwhile.
    down_and_back(1000).await;
}

#[tokio::test]
async fn reads_of_this_core_answer_while_a_machine_hangs() {
    let build = Sim::start(SimOptions::agents(1).fault("no-reply:terminal.read"));
    let here = Sim::start(SimOptions::agents(1).machine("build", &build.socket));
    let hc = HcClient::new(&here.socket, Duration::from_secs(5));
    wait_status(&hc, "build/t1", TerminalStatus::Idle).await;
    let config = here.config(json!({"timeoutMs": 2000}));
    let client = std::sync::Arc::new(in_process::stdio_with((), &config).await.client);

    // More reads of the hung machine than the pool has connections.
    let hung: Vec<_> = (0..8)
        .map(|_| {
            let client = std::sync::Arc::clone(&client);
            tokio::spawn(async move {
                call(&client, "read_output", json!({"address": "build/t1"})).await
            })
        })
        .collect();
    build.wait_for_calls("terminal.read", 1).await;
    let local = call(&client, "read_output", json!({"address": "t1"})).await;
    assert!(!is_error(&local), "{}", text(&local));
    assert!(
        hung.iter().all(|h| !h.is_finished()),
        "this core's read answered while every read of build still hung"
    );
    // Two reads hold build's share until timeoutMs; the others wait for a
    // place and say why they got none (or, given one as their own time
    // runs out, time out at hc).
    let (mut busy, mut timed_out) = (0, 0);
    for handle in hung {
        let result = handle.await.unwrap();
        assert!(is_error(&result));
        let said = text(&result);
        if said.contains("[adapter_busy]") {
            assert!(said.contains("machine build"), "{said}");
            busy += 1;
        } else {
            assert!(said.contains("[hc_timeout]"), "{said}");
            timed_out += 1;
        }
    }
    assert!(
        busy >= 2 && timed_out >= 2,
        "busy {busy}, timed out {timed_out}"
    );
}
