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

use herdr_core_mcp::hc::HcClient;
use herdr_core_mcp::hc::SendRequest;
use herdr_core_mcp::hc::wire::{TerminalRecord, TerminalStatus};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::core_client::wait_status;
use crate::support::mcp::{self, Client, is_error, structured};
use crate::support::{Sim, SimOptions};

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
/// Below the timeout alone, above it when two slow replies meet in one call
/// (a new connection's `hc.hello` plus its request).
const SLOW_REPLY_MS: u64 = 150;
/// The log is read once it has not changed for this long after the last
/// round: longer than a slow reply plus hc's keyboard-quiet wait.
const SETTLE: Duration = Duration::from_millis(600);

/// Every fault kind of the contract (section 7), as the simulator names them.
const FAULT_KINDS: [&str; 11] = [
    "wrong-version",
    "wrong-generation",
    "wrong-framing",
    "id-mismatch",
    "malformed-json",
    "notification",
    "oversized-reply",
    "endless-reply",
    "no-reply",
    "drop-after-dispatch",
    "slow-reply",
];
/// Faults that rewrite a reply's content instead of deciding its delivery.
const REWRITES: [&str; 4] = [
    "wrong-version",
    "wrong-generation",
    "wrong-framing",
    "id-mismatch",
];
/// Deliveries after which no valid reply reaches the adapter.
const CORRUPTING: [&str; 6] = [
    "malformed-json",
    "notification",
    "oversized-reply",
    "endless-reply",
    "no-reply",
    "drop-after-dispatch",
];
/// Methods a fault is pinned to in the coverage rounds: before the write
/// (a new connection's handshake, the preflight), the write itself, every
/// call (empty).
const COVERAGE_METHODS: [&str; 4] = ["hc.hello", "terminal.get", "terminal.send", ""];
/// Methods for the random rounds: also those `send_prompt` never calls.
const RANDOM_METHODS: [&str; 6] = [
    "hc.hello",
    "terminal.get",
    "terminal.send",
    "",
    "terminal.list",
    "terminal.read",
];
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

/// SplitMix64: small, seedable, good enough to schedule faults.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            items.swap(i, self.below(i + 1));
        }
    }
}

fn seed() -> u64 {
    match std::env::var("FAULT_SEED") {
        Ok(text) => {
            let text = text.trim();
            let parsed = match text.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16),
                None => text.parse(),
            };
            parsed.unwrap_or_else(|e| panic!("FAULT_SEED={text:?} is not a u64: {e}"))
        }
        Err(_) => DEFAULT_SEED,
    }
}

fn spec(kind: &str, method: &str) -> String {
    if method.is_empty() {
        kind.to_owned()
    } else {
        format!("{kind}:{method}")
    }
}

fn kind_of(spec: &str) -> &str {
    spec.split_once(':').map_or(spec, |(kind, _)| kind)
}

fn applies_to(spec: &str, method: &str) -> bool {
    spec.split_once(':').is_none_or(|(_, m)| m == method)
}

/// Whether no valid `terminal.send` reply can reach the adapter under
/// `faults`: any id rewrite, or a corrupting first delivery fault (the
/// simulator applies only the first matching one, in configuration order).
fn send_reply_corrupted(faults: &[String]) -> bool {
    let on_send: Vec<&str> = faults
        .iter()
        .filter(|f| applies_to(f, "terminal.send"))
        .map(|f| kind_of(f))
        .collect();
    let first_delivery = on_send.iter().find(|k| !REWRITES.contains(k));
    on_send.contains(&"id-mismatch") || first_delivery.is_some_and(|k| CORRUPTING.contains(k))
}

/// The size of each round (attempts per adapter), adding up to [`ATTEMPTS`].
fn round_sizes(rng: &mut Rng) -> Vec<usize> {
    let span = PER_ADAPTER_ROUND.end() - PER_ADAPTER_ROUND.start() + 1;
    let mut sizes = Vec::new();
    let mut left = ATTEMPTS / MODES.len();
    while left > 0 {
        let size = (PER_ADAPTER_ROUND.start() + rng.below(span)).min(left);
        sizes.push(size);
        left -= size;
    }
    sizes
}

/// The faults of each round: one round per (kind, method) of the coverage
/// set, the rest alternately clean and with 2-3 random faults, in random
/// order.
fn schedule(rng: &mut Rng, rounds: usize) -> Vec<Vec<String>> {
    let mut plan: Vec<Vec<String>> = FAULT_KINDS
        .iter()
        .flat_map(|k| COVERAGE_METHODS.iter().map(move |m| vec![spec(k, m)]))
        .collect();
    assert!(
        plan.len() <= rounds,
        "{} coverage rounds but only {rounds} rounds",
        plan.len()
    );
    let mut extra = 0;
    while plan.len() < rounds {
        if extra % 2 == 0 {
            plan.push(Vec::new());
        } else {
            let n = 2 + rng.below(2);
            plan.push(
                (0..n)
                    .map(|_| {
                        let kind = rng.pick(&FAULT_KINDS);
                        spec(kind, rng.pick(&RANDOM_METHODS))
                    })
                    .collect(),
            );
        }
        extra += 1;
    }
    rng.shuffle(&mut plan);
    plan
}

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
    let listed = hc.list(true).await.expect("list the fixture").value;
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

/// The input log once it has stopped changing: a write the adapter timed
/// out on may land after the call returned.
async fn settled_writes(sim: &Sim) -> Vec<Value> {
    let mut last = sim.writes();
    let mut stable_since = Instant::now();
    let deadline = Instant::now() + crate::support::PATIENCE;
    while stable_since.elapsed() < SETTLE {
        assert!(Instant::now() < deadline, "the input log never settled");
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = sim.writes();
        if now.len() != last.len() {
            last = now;
            stable_since = Instant::now();
        }
    }
    last
}

/// Checks every attempt against the log and the round's faults; returns the
/// counts as text.
fn check(seed: u64, plan: &[Vec<String>], attempts: &[Attempt], writes: &[Value]) -> String {
    assert_eq!(attempts.len(), ATTEMPTS, "seed {seed:#x}");
    let mut by_sha: HashMap<&str, Vec<&Value>> = HashMap::new();
    for write in writes {
        let sha = write["sha256"].as_str().expect("sha256 in the input log");
        by_sha.entry(sha).or_default().push(write);
    }
    let mut outcomes: BTreeMap<String, usize> = BTreeMap::new();
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_mode: BTreeMap<String, usize> = BTreeMap::new();
    let mut unknown_written = 0;
    let mut attributed = 0;
    // Attempts in rounds whose faults all hit before the write (hc.hello,
    // terminal.get) or calls send_prompt never makes.
    let mut before_write = (0, 0);
    for attempt in attempts {
        let faults = &plan[attempt.round];
        let pre_write_only =
            !faults.is_empty() && !faults.iter().any(|f| applies_to(f, "terminal.send"));
        if pre_write_only {
            before_write.0 += 1;
            before_write.1 += usize::from(attempt.outcome() == "unknown");
        }
        let context = || {
            format!(
                "seed {seed:#x} round {} faults {faults:?} mode {}: {} -> {}",
                attempt.round, attempt.mode, attempt.args, attempt.out
            )
        };
        let landed = by_sha
            .get(attempt.sha256.as_str())
            .map_or(&[][..], Vec::as_slice);
        attributed += landed.len();
        assert!(
            landed.len() <= 1,
            "written {} times: {}",
            landed.len(),
            context()
        );
        for write in landed {
            assert_eq!(write["address"], attempt.args["address"], "{}", context());
        }
        match attempt.outcome() {
            "sent" => {
                assert_eq!(landed.len(), 1, "sent but not written: {}", context());
                assert_eq!(attempt.reason_code(), "accepted", "{}", context());
                assert_eq!(
                    landed[0]["created_ms"],
                    attempt.out["created_ms"],
                    "{}",
                    context()
                );
                assert!(
                    !send_reply_corrupted(faults),
                    "sent without a valid reply: {}",
                    context()
                );
            }
            "not_sent" => {
                assert!(landed.is_empty(), "not_sent but written: {}", context());
                let reason = attempt.reason_code();
                assert!(
                    reason == "status_mismatch" || PRE_DISPATCH_REASONS.contains(&reason),
                    "not_sent for an unexpected reason: {}",
                    context()
                );
            }
            "unknown" => {
                unknown_written += landed.len();
                assert_eq!(
                    attempt.reason_code(),
                    "post_dispatch_failure",
                    "{}",
                    context()
                );
                // An intact reply (no fault on the send, or only a slow or
                // content-neutral one) leaves a timeout as the only way to
                // not know.
                if !send_reply_corrupted(faults) {
                    let reason = attempt.out["reason"].as_str().unwrap_or_default();
                    assert!(
                        reason.contains("did not answer terminal.send within"),
                        "unknown without a send-stage fault or a timeout: {}",
                        context()
                    );
                }
            }
            other => panic!("outcome {other:?}: {}", context()),
        }
        *outcomes.entry(attempt.outcome().to_owned()).or_default() += 1;
        *reasons
            .entry(format!("{}/{}", attempt.outcome(), attempt.reason_code()))
            .or_default() += 1;
        *by_mode
            .entry(format!("{} {}", attempt.mode, attempt.outcome()))
            .or_default() += 1;
    }
    assert_eq!(
        attributed,
        writes.len(),
        "seed {seed:#x}: the log has writes no attempt made: {writes:?}"
    );
    assert_eq!(
        writes.len(),
        outcomes.get("sent").copied().unwrap_or(0) + unknown_written,
        "seed {seed:#x}: every write is a sent or an unknown"
    );
    for outcome in ["sent", "not_sent", "unknown"] {
        assert!(
            outcomes.get(outcome).copied().unwrap_or(0) > 0,
            "seed {seed:#x}: no {outcome} outcome at all: {outcomes:?}"
        );
    }
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for faults in plan {
        for fault in faults {
            *kinds.entry(kind_of(fault)).or_default() += 1;
        }
    }
    assert_eq!(kinds.len(), FAULT_KINDS.len(), "seed {seed:#x}: {kinds:?}");
    let clean = plan.iter().filter(|f| f.is_empty()).count();
    let corrupted = plan.iter().filter(|f| send_reply_corrupted(f)).count();
    let mut text = format!(
        "fault matrix: seed {seed:#x}, {} attempts in {} rounds ({clean} clean, {corrupted} with no valid send reply)\n\
         writes: {} (of which {unknown_written} behind an unknown)\n\
         outcomes: {outcomes:?}\n",
        attempts.len(),
        plan.len(),
        writes.len(),
    );
    text.push_str(&format!("by mode: {by_mode:?}\n"));
    text.push_str(&format!("by reason: {reasons:?}\n"));
    text.push_str(&format!(
        "faults only before the write: {} attempts, {} unknown (each a terminal.send timeout)\n",
        before_write.0, before_write.1
    ));
    text.push_str(&format!("fault kinds (rounds): {kinds:?}\n"));
    text
}
