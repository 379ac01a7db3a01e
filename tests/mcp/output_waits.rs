//! `wait_for_output` end to end against the simulator: waits on what a
//! terminal shows, for agents and for shells that report no status.

use std::time::Duration;

use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::support::mcp::{self, call, call_invalid, is_error, structured, text};
use crate::support::waits::wait_status;
use crate::support::waits::{
    ProgressRecorder, agents, assert_polling_stopped, spawn_calls, worst_read_latency,
};
use crate::support::world::World;
use crate::support::{Sim, SimOptions};
use herdr_core_mcp::wire::TerminalStatus;

async fn wait(world: &World, args: Value) -> Value {
    let result = call(&world.client, "wait_for_output", args).await;
    assert!(!is_error(&result), "{result:?}");
    structured(&result).clone()
}

/// Starts a wait and returns its task; the wait's first read (the
/// baseline) has happened when this returns.
async fn start_wait(world: &World, args: Value) -> tokio::task::JoinHandle<Value> {
    let reads = world.sim.calls("terminal.read");
    let peer = world.client.peer().clone();
    let task = tokio::spawn(async move {
        let result = peer
            .call_tool(
                CallToolRequestParams::new("wait_for_output")
                    .with_arguments(args.as_object().unwrap().clone()),
            )
            .await
            .expect("wait_for_output answered");
        assert!(!is_error(&result), "{result:?}");
        structured(&result).clone()
    });
    world.sim.wait_for_calls("terminal.read", reads).await;
    task
}

#[tokio::test]
async fn a_prompt_then_a_pattern_wait_matches_the_reply() {
    let world = World::new(agents(1, 300), json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let waiting = start_wait(
        &world,
        json!({"address": "t1", "pattern": "^reply: .*sparrow", "timeout_ms": 20000}),
    )
    .await;
    let sent = mcp::send_prompt(&world.client, "t1", "name a sparrow").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    let out = waiting.await.unwrap();
    assert_eq!(out["outcome"], "matched", "{out}");
    assert_eq!(out["match"]["line"], "reply: name a sparrow", "{out}");
    let row = out["match"]["row"].as_u64().unwrap() as usize;
    assert_eq!(
        out["text"].as_str().unwrap().lines().nth(row),
        Some("reply: name a sparrow")
    );
    assert_eq!(out["screen_changed"], true);
}

#[tokio::test]
async fn a_quiet_wait_settles_after_the_reply() {
    let world = World::new(agents(1, 300), json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let waiting = start_wait(&world, json!({"address": "t1", "quiet_ms": 500})).await;
    mcp::send_prompt(&world.client, "t1", "say something").await;
    let out = waiting.await.unwrap();
    assert_eq!(out["outcome"], "settled", "{out}");
    assert!(
        out["text"]
            .as_str()
            .unwrap()
            .contains("reply: say something"),
        "{out}"
    );
    assert!(out["elapsed_ms"].as_u64().unwrap() >= 500, "{out}");
}

#[tokio::test]
async fn a_pattern_already_on_an_unchanged_screen_never_ends_the_wait() {
    let world = World::new(agents(1, 60_000), json!({})).await;
    wait_status(&world.hc, "t1", TerminalStatus::Idle).await;
    let before = world.hc.read("t1").await.unwrap().value.text;
    assert!(before.contains("sim-agent>"), "{before}");
    let out = wait(
        &world,
        json!({"address": "t1", "pattern": "sim-agent>", "timeout_ms": 800, "max_chars": 100}),
    )
    .await;
    // Timeout is a normal result, and still carries the last screen.
    assert_eq!(out["outcome"], "timeout", "{out}");
    assert_eq!(out["match"], Value::Null);
    assert_eq!(out["screen_changed"], false);
    assert_eq!(out["text"], before.as_str());
    assert!(out["polls"].as_u64().unwrap() >= 3, "{out}");
}

#[tokio::test]
async fn finished_gone_and_another_lifetime_end_the_wait() {
    let world = World::new(agents(3, 60_000), json!({})).await;
    for a in ["t1", "t2", "t3"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let t3 = world.hc.get("t3").await.unwrap().value.created_ms;
    let killed = start_wait(&world, json!({"address": "t1", "quiet_ms": 60000})).await;
    world.sim.control("kill", json!({"address": "t1"}));
    assert_eq!(killed.await.unwrap()["outcome"], "finished");
    let removed = start_wait(&world, json!({"address": "t2", "pattern": "x"})).await;
    world.sim.control("remove", json!({"address": "t2"}));
    assert_eq!(removed.await.unwrap()["outcome"], "gone");
    world.sim.control("remove", json!({"address": "t3"}));
    let reborn = world.sim.spawn("agent");
    assert_eq!(reborn["address"], "t2", "the freed address is reused first");
    let reused = world.sim.spawn("agent");
    assert_eq!(reused["address"], "t3");
    let out = wait(
        &world,
        json!({"address": "t3", "created_ms": t3, "pattern": "x", "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(out["outcome"], "lifetime_mismatch", "{out}");
}

#[tokio::test]
async fn a_wait_on_a_shell_that_reports_no_status_works() {
    let world = World::new(
        SimOptions {
            shells: 1,
            ..SimOptions::default()
        },
        json!({}),
    )
    .await;
    let record = world.hc.get("t1").await.unwrap().value;
    assert_eq!(
        record.status,
        TerminalStatus::Unknown,
        "a shell reports nothing"
    );
    let waiting = start_wait(
        &world,
        // Anchored: the typed command line itself contains "BUILD OK".
        json!({"address": "t1", "pattern": "^BUILD (OK|FAILED)$", "quiet_ms": 200}),
    )
    .await;
    world.sim.control(
        "type",
        json!({"address": "t1", "text": "echo compiling; echo BUILD OK\r"}),
    );
    let out = waiting.await.unwrap();
    assert_eq!(out["outcome"], "matched", "{out}");
    assert_eq!(out["match"]["line"], "BUILD OK", "{out}");
    assert_eq!(out["status"], "unknown");
}

#[tokio::test]
async fn bad_wait_arguments_name_the_argument() {
    let world = World::new(agents(1, 300), json!({})).await;
    for (args, says) in [
        (json!({"address": "t1"}), "pattern or quiet_ms"),
        (
            json!({"address": "t1", "pattern": "(x"}),
            "regular expression",
        ),
        (
            json!({"address": "t1", "pattern": "a".repeat(1001)}),
            "at most 1000",
        ),
        (json!({"address": "t1", "quiet_ms": 50}), "quiet_ms"),
        (
            json!({"address": "t1", "pattern": "x", "timeout_ms": 700000}),
            "timeout_ms",
        ),
        (
            json!({"address": "t1", "pattern": "x", "max_chars": 40000}),
            "max_chars",
        ),
        (
            json!({"address": "t1", "pattern": "x", "lines": 5}),
            "lines",
        ),
    ] {
        let said = call_invalid(&world.client, "wait_for_output", args.clone()).await;
        assert!(said.contains(says), "{args}: {said}");
    }
}

#[tokio::test]
async fn progress_arrives_and_cancellation_stops_the_reads() {
    let sim = Sim::start(agents(1, 60_000));
    let hc = herdr_core_mcp::HcClient::new(&sim.socket, Duration::from_secs(5));
    wait_status(&hc, "t1", TerminalStatus::Idle).await;
    let recorder = ProgressRecorder::default();
    let config = sim.config(json!({}));
    let client = crate::support::in_process::stdio_with(recorder.clone(), &config)
        .await
        .client;
    let args = json!({"address": "t1", "pattern": "never shown", "timeout_ms": 60000});
    let handle = mcp::start_call(&client, "wait_for_output", args).await;
    sim.control(
        "emit",
        json!({"address": "t1", "text": "\r\nsomething new\r\n"}),
    );
    let progress = crate::support::eventually("a progress notification", async || {
        recorder.0.lock().unwrap().last().cloned()
    })
    .await;
    assert_eq!(progress.progress_token, handle.progress_token);
    handle.cancel(Some("test".into())).await.expect("cancel");
    assert_polling_stopped(&sim, "terminal.read").await;
}

#[tokio::test]
async fn sixty_four_concurrent_output_waits_leave_reads_fast() {
    let world = World::new(agents(2, 60_000), json!({})).await;
    for a in ["t1", "t2"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let baseline = worst_read_latency(&world, 10).await;
    let reads = world.sim.calls("terminal.read");
    let args = json!({"address": "t1", "pattern": "never", "timeout_ms": 3000});
    let waits = spawn_calls(&world, "wait_for_output", &args, 64);
    world.sim.wait_for_calls("terminal.read", reads + 64).await;
    let worst = worst_read_latency(&world, 20).await;
    eprintln!("read_output worst latency: {baseline:?} alone, {worst:?} beside 64 output waits");
    assert!(
        worst < Duration::from_millis(500).max(baseline * 20),
        "reads starved: {worst:?}"
    );
    for wait in waits {
        let result = wait.await.unwrap().expect("wait result");
        assert_eq!(
            structured(&result)["outcome"],
            "timeout",
            "{}",
            text(&result)
        );
    }
}
