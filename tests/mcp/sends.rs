//! `send_prompt` end to end: the outcome for each send mode and preflight
//! status, every refusal reason with zero writes, sends without or with
//! another core's id, post-dispatch faults (exactly one write, outcome
//! unknown), and a status mismatch reported by hc.

use std::time::Duration;

use herdr_core_mcp::HcClient;
use herdr_core_mcp::wire::TerminalStatus;
use serde_json::{Value, json};

use crate::support::mcp::{call, is_error, send_prompt, structured};
use crate::support::waits::wait_status;
use crate::support::world::{World, approve_all};
use crate::support::{Sim, SimOptions, in_process};

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
        assert_eq!(
            world.wait_audit_lines(6).await.len(),
            6,
            "one audit line per attempt"
        );
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
    let audit = world.wait_audit_lines(cases.len() + 1).await;
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
    let world = World::new(options, json!({"timeoutMs": 1000, "sendTimeoutMs": 1000})).await;
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

/// An unapproved terminal's refusal names no send mode; it suggests
/// `allow` (with this config's `--config`) only for a terminal whose
/// program reports a status, and says why for one that reports none.
#[tokio::test]
async fn an_unapproved_refusal_claims_no_mode_and_never_suggests_approving_a_shell() {
    let options = SimOptions {
        agents: 1,
        shells: 1,
        ..SimOptions::default()
    };
    let world = World::new(options, json!({"sendAllowlist": []})).await;
    let listed = world.hc.list(false).await.unwrap().value.terminals;
    let by_status = |wanted: TerminalStatus| {
        listed
            .iter()
            .find(|t| t.status == wanted)
            .map(|t| t.address.clone())
            .expect("a terminal with that status")
    };
    wait_status(
        &world.hc,
        &by_status(TerminalStatus::Idle),
        TerminalStatus::Idle,
    )
    .await;
    for (address, suggests_allow) in [
        (by_status(TerminalStatus::Idle), true),
        (by_status(TerminalStatus::Unknown), false),
    ] {
        let out = send_prompt(&world.client, &address, "next task").await;
        let reason = out["reason"].as_str().unwrap();
        assert_eq!(out["reason_code"], "not_approved", "{out}");
        assert_eq!(out["send_mode"], Value::Null, "{out}");
        assert_eq!(
            reason.contains("herdr-core-mcp allow --config "),
            suggests_allow,
            "{out}"
        );
        assert_eq!(
            !suggests_allow,
            reason.contains("reports no status"),
            "{out}"
        );
        assert_eq!(world.sim.writes_to(&address), 0);
    }
}
