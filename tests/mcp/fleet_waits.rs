//! Fleet waits with `since` end to end over stdio against the simulator: a
//! change between two calls is reported by the second at once, every
//! change of one call is reported, more than 64 come in turns, a since of
//! another core or an edited one is refused, 256 terminals stay under the
//! bound, and however many waits run hc is listed once a tick.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::mcp::{call, is_error, structured, text};
use crate::support::waits::{agents, spawn_calls, wait_status};
use crate::support::world::{World, approve_all};
use crate::support::{Sim, SimOptions, in_process};
use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;

async fn wait(world: &World, args: Value) -> Value {
    let result = call(&world.client, "wait_for_status", args).await;
    assert!(!is_error(&result), "{result:?}");
    structured(&result).clone()
}

fn since(answer: &Value) -> String {
    answer["since"]
        .as_str()
        .unwrap_or_else(|| panic!("no since in {answer}"))
        .to_owned()
}

/// A world of `n` idle records, all approved, and the since of a
/// `list_sessions` call with `args`.
async fn idle_world(n: usize, args: Value) -> (World, String) {
    let options = SimOptions {
        idle_records: n,
        ..SimOptions::default()
    };
    let world = World::new(options, json!({})).await;
    let listed = call(&world.client, "list_sessions", args).await;
    let token = since(structured(&listed));
    (world, token)
}

fn changed(answer: &Value) -> BTreeSet<String> {
    answer["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["address"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_change_between_two_waits_is_reported_by_the_second_at_once() {
    let world = World::new(agents(2, 200), json!({})).await;
    for a in ["t1", "t2"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let first = wait(&world, json!({"timeout_ms": 300})).await;
    assert_eq!(first["outcome"], "timeout", "{first}");
    assert_eq!(first["scope"], "approved");
    let before = since(&first);
    // Between the two calls t2 takes a task and finishes it.
    let seq = world.hc.get("t2").await.unwrap().value.status_seq;
    world.arrange("t2", "a task done while nobody waited").await;
    wait_status(&world.hc, "t2", TerminalStatus::Done).await;
    let started = Instant::now();
    let second = wait(&world, json!({"since": before, "timeout_ms": 20000})).await;
    let took = started.elapsed();
    assert_eq!(second["outcome"], "reached", "{second}");
    assert_eq!(second["address"], "t2");
    let change = &second["changes"][0];
    assert_eq!(change["change"], "status", "{second}");
    assert_eq!(change["old_status_seq"], seq, "{second}");
    assert_eq!(change["status"], "done", "{second}");
    assert!(change["status_seq"].as_u64().unwrap() > seq);
    assert_eq!(changed(&second), BTreeSet::from(["t2".to_owned()]));
    assert_eq!(second["more"], false);
    assert!(took < Duration::from_secs(5), "took {took:?}");
    // Nothing happened since: the next wait reports nothing twice.
    let third = wait(&world, json!({"since": since(&second), "timeout_ms": 400})).await;
    assert_eq!(third["outcome"], "timeout", "{third}");
    assert_eq!(third["changes"], json!([]), "{third}");
}

#[tokio::test]
async fn every_terminal_that_changed_during_one_call_is_reported() {
    let world = World::new(agents(3, 400), json!({})).await;
    for a in ["t1", "t2", "t3"] {
        wait_status(&world.hc, a, TerminalStatus::Idle).await;
    }
    let listed = call(&world.client, "list_sessions", json!({})).await;
    let mut token = since(structured(&listed));
    let waiting = spawn_calls(
        &world,
        "wait_for_status",
        &json!({"since": token, "until": ["done"], "timeout_ms": 20000}),
        1,
    );
    for a in ["t1", "t2", "t3"] {
        world.arrange(a, "a task").await;
    }
    let result = waiting.into_iter().next().unwrap().await.unwrap().unwrap();
    let out = structured(&result).clone();
    assert_eq!(out["outcome"], "reached", "{out}");
    assert_eq!(out["scope"], "all");
    assert_eq!(out["status"], "done");
    // The other two were working when the first was done: reported too.
    let all: BTreeSet<String> = ["t1", "t2", "t3"].map(String::from).into();
    assert_eq!(changed(&out), all, "{out}");
    // The loop sees every terminal done, each done once.
    let mut done: Vec<String> = Vec::new();
    token = since(&out);
    let mut answer = out;
    loop {
        for c in answer["changes"].as_array().unwrap() {
            if c["status"] == "done" {
                done.push(c["address"].as_str().unwrap().to_owned());
            }
        }
        if done.len() >= 3 {
            break;
        }
        answer = wait(
            &world,
            json!({"since": token, "until": ["done"], "timeout_ms": 20000}),
        )
        .await;
        token = since(&answer);
    }
    done.sort();
    assert_eq!(done, ["t1", "t2", "t3"]);
}

#[tokio::test]
async fn more_than_sixty_four_changes_come_in_turns_and_none_is_lost() {
    let (world, token) = idle_world(70, json!({})).await;
    let gone: Vec<String> = world
        .hc
        .list(true)
        .await
        .unwrap()
        .value
        .terminals
        .into_iter()
        .map(|t| t.address)
        .collect();
    assert_eq!(gone.len(), 70);
    for address in &gone {
        world.sim.control("remove", json!({"address": address}));
    }
    let first = wait(&world, json!({"since": token, "timeout_ms": 5000})).await;
    assert_eq!(first["outcome"], "gone", "{first}");
    assert_eq!(first["changes"].as_array().unwrap().len(), 64);
    assert_eq!(first["more"], true);
    let second = wait(&world, json!({"since": since(&first), "timeout_ms": 5000})).await;
    assert_eq!(second["changes"].as_array().unwrap().len(), 6, "{second}");
    assert_eq!(second["more"], false);
    let mut reported = changed(&first);
    reported.extend(changed(&second));
    assert_eq!(reported, gone.into_iter().collect::<BTreeSet<_>>());
    assert!(
        second["changes"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["change"] == "gone")
    );
}

#[tokio::test]
async fn a_since_from_before_a_core_restart_is_refused_naming_the_restart() {
    let sim = Sim::start(SimOptions {
        idle_records: 2,
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    let config =
        sim.config(json!({"coreId": sim.core_id, "sendAllowlist": approve_all(&hc).await}));
    let client = in_process::stdio(&config).await;
    let listed = call(&client, "list_sessions", json!({})).await;
    let token = since(structured(&listed));
    let old_core = sim.core_id.clone();
    let sim = Sim::start_in(
        sim.stop(),
        SimOptions {
            idle_records: 2,
            ..SimOptions::default()
        },
    );
    let result = call(
        &client,
        "wait_for_status",
        json!({"since": token, "timeout_ms": 2000}),
    )
    .await;
    assert!(is_error(&result), "{result:?}");
    let message = text(&result);
    for needle in [
        "since_from_other_core",
        "hc restarted",
        &old_core,
        &sim.core_id,
    ] {
        assert!(message.contains(needle), "{needle}: {message}");
    }
}

#[tokio::test]
async fn an_edited_cut_or_made_up_since_is_refused_and_the_server_goes_on() {
    let world = World::new(SimOptions::agents(1), json!({})).await;
    let listed = call(&world.client, "list_sessions", json!({})).await;
    let token = since(structured(&listed));
    let flipped = {
        let mut bytes = token.clone().into_bytes();
        let at = bytes.len() / 2;
        bytes[at] = if bytes[at] == b'A' { b'B' } else { b'A' };
        String::from_utf8(bytes).unwrap()
    };
    for bad in [
        String::new(),
        "x".into(),
        "%%%not base64%%%".into(),
        token[..token.len() - 3].to_owned(),
        token[3..].to_owned(),
        flipped,
        format!("{token}{token}"),
    ] {
        let result = call(
            &world.client,
            "wait_for_status",
            json!({"since": bad, "timeout_ms": 200}),
        )
        .await;
        assert!(is_error(&result), "{bad}: {result:?}");
        let message = text(&result);
        assert!(
            message.contains("invalid_since") && message.contains("without since"),
            "{message}"
        );
    }
    let too_long = call(
        &world.client,
        "wait_for_status",
        json!({"since": "A".repeat(20_000), "timeout_ms": 200}),
    )
    .await;
    assert!(is_error(&too_long), "{too_long:?}");
    // A since of scope all asked for scope approved, and since with targets.
    for (args, argument) in [
        (
            json!({"since": token, "scope": "approved", "timeout_ms": 200}),
            "scope",
        ),
        (
            json!({"since": token, "targets": [{"address": "t1"}]}),
            "since",
        ),
    ] {
        let result = call(&world.client, "wait_for_status", args).await;
        assert!(
            is_error(&result) && text(&result).contains(argument),
            "{result:?}"
        );
    }
    // The real one still opens.
    let fine = wait(&world, json!({"since": token, "timeout_ms": 200})).await;
    assert_eq!(fine["outcome"], "timeout", "{fine}");
}

#[tokio::test]
async fn two_hundred_fifty_six_terminals_stay_under_the_bound_and_are_watched() {
    let (world, token) = idle_world(256, json!({"limit": 1})).await;
    assert!(token.len() <= 16 * 1024, "{} characters", token.len());
    let approved = wait(&world, json!({"timeout_ms": 200})).await;
    assert!(since(&approved).len() <= 16 * 1024);
    assert_eq!(approved["targets"].as_array().unwrap().len(), 64);
    let last = world
        .hc
        .list(true)
        .await
        .unwrap()
        .value
        .terminals
        .pop()
        .unwrap();
    world
        .sim
        .control("remove", json!({"address": last.address}));
    let out = wait(&world, json!({"since": token, "timeout_ms": 5000})).await;
    assert_eq!(out["outcome"], "gone", "{out}");
    assert_eq!(out["changes"][0]["address"], last.address.as_str());
    assert_eq!(out["changes"][0]["old_created_ms"], last.created_ms);
    assert_eq!(out["changes"].as_array().unwrap().len(), 1);
}

/// A fleet past the old 256-terminal bound, as hc lists it: list_sessions
/// hands out a since, and a wait from it reports the one removed.
#[tokio::test]
async fn eleven_hundred_terminals_have_a_since_and_a_removal_is_reported() {
    let (world, token) = idle_world(1_100, json!({"limit": 1})).await;
    assert!(token.len() <= 32 * 1024, "{} characters", token.len());
    let listed = world.hc.list(true).await.unwrap().value.terminals;
    assert_eq!(listed.len(), 1_100);
    let gone = &listed[listed.len() / 2];
    world
        .sim
        .control("remove", json!({"address": gone.address}));
    let out = wait(
        &world,
        json!({"since": token, "scope": "all", "timeout_ms": 5000}),
    )
    .await;
    assert_eq!(out["outcome"], "gone", "{out}");
    assert_eq!(changed(&out), BTreeSet::from([gone.address.clone()]));
}

/// Eight waits at once: hc sees one `terminal.list` a tick of the shared
/// look (the test pace's 25 ms), not one per wait, and no `terminal.get`.
#[tokio::test]
async fn however_many_waits_run_hc_is_listed_once_a_tick() {
    let (world, token) = idle_world(4, json!({})).await;
    let lists = world.sim.calls("terminal.list");
    let waits = spawn_calls(
        &world,
        "wait_for_status",
        &json!({"since": token, "timeout_ms": 1000}),
        8,
    );
    // Every wait has had its first look once hc was listed twice more.
    world.sim.wait_for_calls("terminal.list", lists + 2).await;
    let (lists, gets) = (
        world.sim.calls("terminal.list"),
        world.sim.calls("terminal.get"),
    );
    let started = Instant::now();
    let tick = crate::support::in_process::test_pace().poll;
    tokio::time::sleep(tick * 8).await;
    let listed = world.sim.calls("terminal.list") - lists;
    let window = started.elapsed();
    let ticks = window.as_millis() / tick.as_millis();
    eprintln!("8 waits: {listed} terminal.list calls in {window:?} ({ticks} ticks)");
    assert!(
        listed as u128 <= ticks + 2,
        "{listed} lists in {ticks} ticks"
    );
    assert!(listed >= 2, "the waits stopped looking: {listed}");
    assert_eq!(world.sim.calls("terminal.get"), gets);
    for wait in waits {
        let out = wait.await.unwrap().unwrap();
        assert_eq!(structured(&out)["outcome"], "timeout");
    }
}
