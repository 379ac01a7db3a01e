//! The randomized fault matrix: 1,000 `send_prompt` attempts
//! through the real adapter binary (two of them over stdio: `idle-only` and
//! `normal`) against one simulator whose terminals span every status, some
//! approved and some not, while rounds of random faults (every fault kind of
//! the contract, on random methods or on every call; slow replies; drops
//! before and after the write) are switched on through the control socket.
//!
//! The simulator's input log is the ground truth. Every attempt's text is
//! unique, so each outcome is matched with the writes of its text (by
//! SHA-256): `not_sent` never wrote, nothing is written twice, `sent` wrote
//! exactly once, `unknown` comes only after dispatch, and a reply that
//! reached the adapter intact is never `unknown` except by a timeout.
//!
//! The seed (FAULT_SEED, decimal or 0x-hex, to replay) fixes the fault
//! schedule, the targets and the texts; the interleaving of parallel
//! attempts is up to the machine, so outcomes vary between runs but the
//! invariants never do.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use herdr_core_mcp::HcClient;
use herdr_core_mcp::SendRequest;
use herdr_core_mcp::wire::{TerminalRecord, TerminalStatus};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::support::mcp::{self, Client, is_error, structured};
use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions};

mod check;
mod schedule;

use check::{check, settled_writes};
use schedule::*;

const ATTEMPTS: usize = 1_000;
/// Attempts per adapter in one round, drawn from this range: from half a
/// pool (8 connections) to more than a pool, so that some calls wait for a
/// connection and some sends have to open a fresh one after their
/// preflight's went elsewhere.
const PER_ADAPTER_ROUND: std::ops::RangeInclusive<usize> = 4..=11;
const DEFAULT_SEED: u64 = 0x7e57_fa17_5eed_0007;
/// Short, so a fault that swallows a reply costs little: a full round with
/// timeouts in preflight and dispatch stays well under a second.
const TIMEOUT_MS: u64 = 250;
/// `sendTimeoutMs`: its lowest value, so a send hc never answers ends soon.
const SEND_TIMEOUT_MS: u64 = 1000;
/// Below the timeout alone, above it when two slow replies meet in one call
/// (a new connection's `hc.hello` plus its request).
const SLOW_REPLY_MS: u64 = 150;
/// The log is read once it has not changed for this long after the last
/// round: longer than a slow reply plus hc's keyboard-quiet wait.
const SETTLE: Duration = Duration::from_millis(600);

/// Reasons a `send_prompt` gives for refusing before dispatch.
const PRE_DISPATCH_REASONS: [&str; 13] = [
    "text_empty",
    "text_too_long",
    "control_character",
    "no_core_id",
    "core_id_mismatch",
    "not_found",
    "lifetime_mismatch",
    "finished",
    "not_approved",
    "status_not_allowed",
    "preflight_failed",
    "dispatch_failed",
    "cancelled",
];
const MODES: [&str; 2] = ["idle-only", "normal"];
/// An address no terminal has.
const MISSING_ADDRESS: &str = "tzz";

/// One terminal the attempts may target.
#[derive(Debug, Clone)]
struct Target {
    address: String,
    created_ms: Option<i64>,
}

/// One attempt and what the adapter answered.
#[derive(Debug)]
struct Attempt {
    round: usize,
    mode: &'static str,
    args: Value,
    sha256: String,
    out: Value,
}

impl Attempt {
    fn outcome(&self) -> &str {
        self.out["outcome"].as_str().unwrap_or("?")
    }

    fn reason_code(&self) -> &str {
        self.out["reason_code"].as_str().unwrap_or("?")
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The matrix's world: agents driven into every status, a shell (unknown),
/// idle records (always idle: they take input again and again), a killed
/// agent (finished), and approvals for most of them.
struct Fixture {
    sim: Sim,
    targets: Vec<Target>,
    allowlist: Vec<Value>,
}

async fn fixture() -> Fixture {
    let sim = Sim::start(SimOptions {
        agents: 9,
        shells: 1,
        idle_records: 12,
        agent_delay_ms: Some(30),
        slow_reply_ms: Some(SLOW_REPLY_MS),
        ..SimOptions::default()
    });
    let hc = HcClient::new(&sim.socket, Duration::from_secs(5));
    let listed = hc
        .list(true)
        .await
        .expect("list the fixture")
        .value
        .terminals;
    let by_program = |program: &str| -> Vec<TerminalRecord> {
        listed
            .iter()
            .filter(|t| t.program.as_deref() == Some(program))
            .cloned()
            .collect()
    };
    let agents = by_program("sim-agent");
    let shells = by_program("sh");
    let idle = by_program("idle-record");
    assert_eq!((agents.len(), shells.len(), idle.len()), (9, 1, 12));
    for agent in &agents {
        wait_status(&hc, &agent.address, TerminalStatus::Idle).await;
    }
    let arrange = async |address: &str, text: &str| {
        let request = SendRequest {
            address,
            text,
            guard: None,
        };
        hc.send(request, &crate::support::core(&sim.core_id))
            .await
            .expect("arranging send");
    };
    // agents[0], [1]: idle; [2], [3]: done; [4]: working; [5]: blocked;
    // [6]: error; [7]: idle but not approved; [8]: finished.
    arrange(&agents[2].address, "warm up").await;
    arrange(&agents[3].address, "warm up").await;
    arrange(&agents[4].address, "keep at it /hold").await;
    arrange(&agents[5].address, "ask first /block").await;
    arrange(&agents[6].address, "fail /error").await;
    sim.control("kill", json!({"address": agents[8].address}));
    for (i, status) in [
        (2, TerminalStatus::Done),
        (3, TerminalStatus::Done),
        (4, TerminalStatus::Working),
        (5, TerminalStatus::Blocked),
        (6, TerminalStatus::Error),
    ] {
        wait_status(&hc, &agents[i].address, status).await;
    }
    let unapproved: Vec<&str> = [&agents[7]]
        .into_iter()
        .chain(&idle[9..])
        .map(|t| t.address.as_str())
        .collect();
    let allowlist = listed
        .iter()
        .filter(|t| !unapproved.contains(&t.address.as_str()))
        .map(|t| json!({"address": t.address, "created_ms": t.created_ms}))
        .collect();
    let mut targets: Vec<Target> = listed
        .iter()
        .map(|t| Target {
            address: t.address.clone(),
            created_ms: Some(t.created_ms),
        })
        .collect();
    targets.push(Target {
        address: MISSING_ADDRESS.into(),
        created_ms: None,
    });
    hc.close();
    Fixture {
        sim,
        targets,
        allowlist,
    }
}

/// The arguments of attempt `n` at `target`: mostly a plain prompt, some
/// with the right or a wrong `created_ms`, a few with a control character.
fn arguments(rng: &mut Rng, seed: u64, n: usize, target: &Target) -> Value {
    let text = format!("fault matrix {seed:x} attempt {n}");
    let roll = rng.below(100);
    let mut args = json!({"address": target.address, "text": text});
    match (roll, target.created_ms) {
        (0..4, _) => args["text"] = json!(format!("{text} \u{1b}[201~")),
        (4..8, Some(created_ms)) => args["created_ms"] = json!(created_ms + 1),
        (8..16, Some(created_ms)) => args["created_ms"] = json!(created_ms),
        _ => {}
    }
    args
}

#[tokio::test]
async fn a_thousand_sends_under_random_faults_match_the_input_log() {
    let seed = seed();
    eprintln!("fault matrix: seed {seed:#x} (FAULT_SEED={seed:#x} replays this schedule)");
    let started = Instant::now();
    let mut rng = Rng(seed);
    let fixture = fixture().await;
    let sim = &fixture.sim;
    let baseline = sim.writes().len();
    let mut clients: Vec<Arc<Client>> = Vec::new();
    for mode in MODES {
        let config = sim.config(json!({
            "coreId": sim.core_id,
            "sendAllowlist": fixture.allowlist,
            "sendMode": mode,
            "timeoutMs": TIMEOUT_MS,
            "sendTimeoutMs": SEND_TIMEOUT_MS,
        }));
        clients.push(Arc::new(crate::support::in_process::stdio(&config).await));
    }

    let sizes = round_sizes(&mut rng);
    let plan = schedule(&mut rng, sizes.len());
    let mut attempts: Vec<Attempt> = Vec::with_capacity(ATTEMPTS);
    for (round, (faults, size)) in plan.iter().zip(&sizes).enumerate() {
        let faults: Vec<&str> = faults.iter().map(String::as_str).collect();
        sim.set_faults(&faults);
        let mut calls = tokio::task::JoinSet::new();
        for (m, mode) in MODES.iter().enumerate() {
            // Distinct targets per adapter, so a round is never a queue
            // behind the adapter's per-terminal send lock.
            let mut targets = fixture.targets.clone();
            rng.shuffle(&mut targets);
            for target in targets.iter().take(*size) {
                let n = attempts.len() + calls.len();
                let args = arguments(&mut rng, seed, n, target);
                let client = Arc::clone(&clients[m]);
                calls.spawn(async move {
                    let result = mcp::call(&client, "send_prompt", args.clone()).await;
                    (*mode, args, result)
                });
            }
        }
        while let Some(joined) = calls.join_next().await {
            let (mode, args, result) = joined.expect("an attempt task panicked");
            let out = structured(&result).clone();
            let attempt = Attempt {
                round,
                mode,
                sha256: sha256_hex(args["text"].as_str().expect("text")),
                args,
                out,
            };
            assert_eq!(
                is_error(&result),
                attempt.outcome() != "sent",
                "seed {seed:#x}: isError must follow the outcome: {attempt:?}"
            );
            attempts.push(attempt);
        }
    }
    sim.set_faults(&[]);
    let writes = settled_writes(sim).await;
    let writes = &writes[baseline..];

    let report = check(seed, &plan, &attempts, writes);
    // Both adapters still serve after everything they were put through.
    for client in &clients {
        let listed = mcp::call(client, "list_sessions", json!({"limit": 1})).await;
        assert!(!is_error(&listed), "seed {seed:#x}: {listed:?}");
    }
    eprintln!("{report}elapsed: {:.1?}", started.elapsed());
}
