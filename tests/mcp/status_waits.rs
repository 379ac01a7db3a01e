//! `wait_for_status` end to end over stdio against the simulator.

use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::mcp::{self, call, call_invalid, is_error, structured};
use crate::support::waits::{
    ProgressRecorder, agents, assert_polling_stopped, spawn_calls, wait_status, worst_read_latency,
};
use crate::support::world::World;
use crate::support::{Sim, SimOptions};
use herdr_core_mcp::wire::TerminalStatus;

async fn wait(world: &World, args: Value) -> Value {
    let result = call(&world.client, "wait_for_status", args).await;
    assert!(!is_error(&result), "{result:?}");
    structured(&result).clone()
}

async fn send(world: &World, address: &str, text: &str) -> Value {
    let out = mcp::send_prompt(&world.client, address, text).await;
    assert_eq!(out["outcome"], "sent", "{out}");
    out
}

#[tokio::test]
async fn prompt_then_wait_reaches_done_with_the_reply_on_screen() {
    let world = World::new(agents(1, 300), json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let sent = send(&world, "t1", "write the release notes").await;
    let seq = sent["core_status_seq"].as_u64().unwrap();
    let out = wait(
        &world,
        json!({
            "targets": [{"address": "t1", "after_seq": seq}],
            "until": ["done"],
            "timeout_ms": 10000,
            "include_output": true,
        }),
    )
    .await;
    assert_eq!(out["outcome"], "reached", "{out}");
    assert_eq!(out["address"], "t1");
    assert_eq!(out["status"], "done");
    assert!(out["status_seq"].as_u64().unwrap() > seq, "{out}");
    let screen = out["output"]["text"].as_str().unwrap();
    assert!(
        screen.contains("reply: write the release notes"),
        "{screen}"
    );
}

#[tokio::test]
async fn a_stale_done_satisfies_only_a_wait_without_after_seq() {
    let world = World::new(agents(1, 20_000), json!({"sendMode": "normal"})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    // A previous task: the agent ends it in `done` (released with `go`).
    world.arrange("t1", "first /hold").await;
    wait_status(&world.hc, "t1", TerminalStatus::Working).await;
    world.arrange("t1", "go").await;
    wait_status(&world.hc, "t1", TerminalStatus::Done).await;
    let sent = send(&world, "t1", "second task").await;
    let seq = sent["core_status_seq"].as_u64().unwrap();
    // Without after_seq the leftover `done` (or any current state) counts at once...
    let started = Instant::now();
    let stale = wait(
        &world,
        json!({"targets": [{"address": "t1"}], "until": ["done", "working"], "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(stale["outcome"], "reached", "{stale}");
    assert!(started.elapsed() < Duration::from_secs(2));
    // ...with after_seq, only a later `done` would: the task runs 20 s, so it times out.
    let fresh = wait(&world, json!({"targets": [{"address": "t1", "after_seq": seq + 1}], "until": ["done"], "timeout_ms": 600})).await;
    assert_eq!(fresh["outcome"], "timeout", "{fresh}");
    assert!(fresh["elapsed_ms"].as_u64().unwrap() >= 600);
    assert_eq!(fresh["targets"][0]["status"], "working", "{fresh}");
}

#[tokio::test]
async fn block_reaches_blocked_and_a_kill_is_finished() {
    let world = World::new(agents(2, 60_000), json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let sent = send(&world, "t1", "needs approval /block").await;
    let out = wait(
        &world,
        json!({
            "targets": [{"address": "t1", "after_seq": sent["core_status_seq"]}],
            "timeout_ms": 10000,
        }),
    )
    .await;
    assert_eq!(out["outcome"], "reached", "{out}");
    assert_eq!(out["status"], "blocked");

    wait_status(&world.hc, "t2", TerminalStatus::Idle).await;
    world.arrange("t2", "long job").await;
    wait_status(&world.hc, "t2", TerminalStatus::Working).await;
    let waiting = {
        let client = world.client.peer().clone();
        tokio::spawn(async move {
            let params = CallToolRequestParams::new("wait_for_status").with_arguments(
                json!({"targets": [{"address": "t2"}], "until": ["done"], "timeout_ms": 20000})
                    .as_object()
                    .unwrap()
                    .clone(),
            );
            client.call_tool(params).await
        })
    };
    world.sim.wait_for_calls("terminal.get", 0).await;
    world.sim.control("kill", json!({"address": "t2"}));
    let result = waiting.await.unwrap().expect("wait result");
    let out = structured(&result);
    assert_eq!(out["outcome"], "finished", "{out}");
    assert_eq!(out["address"], "t2");
    assert_eq!(out["targets"][0]["finished"], true);
}

#[tokio::test]
async fn of_two_targets_the_faster_one_wins_and_a_gone_one_ends_the_wait() {
    let sim_options = SimOptions {
        agents: 2,
        agent_delay_ms: Some(200),
        ..SimOptions::default()
    };
    let world = World::new(sim_options, json!({})).await;
    for a in ["t1", "t2"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let slow = send(&world, "t1", "slow /hold").await;
    let fast = send(&world, "t2", "quick").await;
    let out = wait(
        &world,
        json!({
            "targets": [
                {"address": "t1", "after_seq": slow["core_status_seq"]},
                {"address": "t2", "after_seq": fast["core_status_seq"]},
            ],
            "until": ["done"],
            "timeout_ms": 10000,
        }),
    )
    .await;
    assert_eq!(out["outcome"], "reached", "{out}");
    assert_eq!(out["address"], "t2");
    assert_eq!(out["targets"][0]["status"], "working");

    world.sim.control("remove", json!({"address": "t1"}));
    let gone = wait(
        &world,
        json!({"targets": [{"address": "t1"}], "until": ["done"], "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(gone["outcome"], "gone", "{gone}");
    let reused = world.sim.spawn("agent");
    assert_eq!(reused["address"], "t1");
    let mismatch = wait(&world, json!({"targets": [{"address": "t1", "created_ms": slow["created_ms"]}], "timeout_ms": 5000})).await;
    assert_eq!(mismatch["outcome"], "lifetime_mismatch", "{mismatch}");
}

#[tokio::test]
async fn bad_wait_arguments_are_invalid_params() {
    let world = World::new(agents(1, 300), json!({})).await;
    let seventeen: Vec<Value> = (0..17)
        .map(|i| json!({"address": format!("t{i}")}))
        .collect();
    for (args, needle) in [
        (json!({"targets": []}), "targets"),
        (json!({"targets": seventeen}), "targets"),
        (
            json!({"targets": [{"address": "t1"}], "until": []}),
            "until",
        ),
        (
            json!({"targets": [{"address": "t1"}], "until": ["unknown"]}),
            "unknown",
        ),
        (
            json!({"targets": [{"address": "t1"}], "timeout_ms": 99}),
            "timeout_ms",
        ),
        (
            json!({"targets": [{"address": "t1"}], "timeout_ms": 600001}),
            "timeout_ms",
        ),
    ] {
        let message = call_invalid(&world.client, "wait_for_status", args.clone()).await;
        assert!(message.contains(needle), "{args}: {message}");
    }
}

#[tokio::test]
async fn the_operator_s_wait_max_caps_the_timeout() {
    let world = World::new(agents(1, 60_000), json!({"waitMaxMs": 300})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    world.arrange("t1", "busy").await;
    wait_status(&world.hc, "t1", TerminalStatus::Working).await;
    let out = wait(
        &world,
        json!({"targets": [{"address": "t1"}], "until": ["done"], "timeout_ms": 600000}),
    )
    .await;
    assert_eq!(out["outcome"], "timeout");
    assert_eq!(out["timeout_ms"], 300);
}

#[tokio::test]
async fn progress_arrives_and_cancellation_stops_polling() {
    let sim = Sim::start(agents(1, 60_000));
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let core = hc.hello().await.unwrap().core_id.clone();
    let request = herdr_core_mcp::SendRequest {
        address: "t1",
        text: "busy",
        guard: None,
    };
    hc.send(request, &core).await.unwrap();
    wait_status(&hc, "t1", TerminalStatus::Working).await;
    let recorder = ProgressRecorder::default();
    let config = sim.config(json!({}));
    let client = crate::support::in_process::stdio_with(recorder.clone(), &config)
        .await
        .client;
    let args = json!({"targets": [{"address": "t1"}], "until": ["done"], "timeout_ms": 60000});
    let handle = mcp::start_call(&client, "wait_for_status", args).await;
    // The first poll sees t1 for the first time: a progress notification.
    crate::support::eventually("a progress notification", async || {
        recorder.0.lock().unwrap().first().cloned()
    })
    .await;
    let progress = recorder.0.lock().unwrap()[0].clone();
    assert_eq!(progress.progress_token, handle.progress_token);
    assert!(
        progress
            .message
            .as_deref()
            .unwrap_or_default()
            .contains("t1: working"),
        "{progress:?}"
    );
    handle.cancel(Some("test".into())).await.expect("cancel");
    assert_polling_stopped(&sim, "terminal.get").await;
}

#[tokio::test]
async fn sixty_four_concurrent_waits_leave_reads_fast() {
    let world = World::new(agents(2, 60_000), json!({})).await;
    for a in ["t1", "t2"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    world.arrange("t1", "busy").await;
    wait_status(&world.hc, "t1", TerminalStatus::Working).await;
    // Baseline read latency with nothing else going on.
    let baseline = worst_read_latency(&world, 10).await;
    let args = json!({"targets": [{"address": "t1"}], "until": ["done"], "timeout_ms": 3000});
    let waits = spawn_calls(&world, "wait_for_status", &args, 64);
    world.sim.wait_for_calls("terminal.get", 64).await;
    let worst = worst_read_latency(&world, 20).await;
    eprintln!("read_output worst latency: {baseline:?} alone, {worst:?} beside 64 waits");
    assert!(
        worst < Duration::from_millis(500).max(baseline * 20),
        "reads starved: {worst:?}"
    );
    for wait in waits {
        let result = wait.await.unwrap().expect("wait result");
        assert_eq!(structured(&result)["outcome"], "timeout");
    }
}

/// Without targets, a wait watches every approved terminal from the call's
/// start and ends at the first change of any of them, naming it; with
/// nothing approved it is an invalid argument naming `targets`.
#[tokio::test]
async fn without_targets_the_first_approved_terminal_to_change_ends_the_wait() {
    let world = World::new(agents(2, 300), json!({})).await;
    for a in ["t1", "t2"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let lists = world.sim.calls("terminal.list");
    let waiting = spawn_calls(&world, "wait_for_status", &json!({"timeout_ms": 10000}), 1);
    // The wait has taken its baseline once it has listed the terminals.
    crate::support::eventually("the wait to list the terminals", async || {
        (world.sim.calls("terminal.list") > lists).then_some(())
    })
    .await;
    send(&world, "t2", "the first task").await;
    let result = waiting.into_iter().next().unwrap().await.unwrap().unwrap();
    let out = structured(&result).clone();
    assert_eq!(out["outcome"], "reached", "{out}");
    assert_eq!(out["address"], "t2", "{out}");
    assert_eq!(out["status"], "done", "{out}");
    assert_eq!(out["targets"].as_array().map(Vec::len), Some(2), "{out}");

    let unapproved = World::new(agents(1, 300), json!({"sendAllowlist": []})).await;
    let refused = call_invalid(&unapproved.client, "wait_for_status", json!({})).await;
    assert!(refused.contains("targets"), "{refused}");
    assert!(refused.contains("no approved terminal"), "{refused}");
}

#[tokio::test]
async fn a_timeout_on_a_terminal_that_never_reported_a_status_says_so() {
    let world = World::new(
        SimOptions {
            agents: 1,
            shells: 1,
            ..SimOptions::default()
        },
        json!({}),
    )
    .await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    // t2 is the shell: it never reports a status.
    let out = wait(
        &world,
        json!({"targets": [{"address": "t2"}], "until": ["done"], "timeout_ms": 1000}),
    )
    .await;
    assert_eq!(out["outcome"], "timeout", "{out}");
    assert_eq!(out["targets"][0]["status"], "unknown", "{out}");
    let note = out["note"].as_str().expect("a note on the timeout");
    assert!(
        note.starts_with("t2 has never reported a status (a shell, for instance)"),
        "{note}"
    );
    // The agent, which does report, times out without one.
    let out = wait(
        &world,
        json!({"targets": [{"address": "t1"}], "until": ["done"], "timeout_ms": 1000}),
    )
    .await;
    assert_eq!(out["outcome"], "timeout", "{out}");
    assert_eq!(out["note"], Value::Null, "{out}");
}
