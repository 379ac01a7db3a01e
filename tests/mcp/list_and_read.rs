//! `list_sessions` pages (nothing that existed throughout is skipped or
//! repeated under churn; cursors from another core or forged are refused)
//! and `read_output` truncation on character boundaries.

use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::json;

use crate::support::mcp::{call, call_invalid, is_error, structured, text};
use crate::support::waits::wait_status;
use crate::support::world::World;
use crate::support::{Sim, SimOptions, in_process};

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
        .terminals
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
