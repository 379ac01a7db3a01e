//! Core restarts and socket loss: hc killed and restarted on the
//! same socket path under load, and a socket path that disappears or is
//! replaced by a file or a directory. One adapter process lives through all
//! of it; the simulator's input log says what really reached a terminal.

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rmcp::model::CallToolResult;
use serde_json::{Value, json};

use crate::support::mcp::{self, Client, call, is_error, structured, text};
use crate::support::{Sim, SimOptions, run_adapter, send_signal, sha256_hex};

/// Long enough that a send or preflight is still waiting for its reply
/// when the core is killed, well inside the adapter's timeout.
const SLOW_REPLY_MS: u64 = 4_000;
const TIMEOUT_MS: u64 = 10_000;

fn options() -> SimOptions {
    SimOptions {
        idle_records: 8,
        slow_reply_ms: Some(SLOW_REPLY_MS),
        ..SimOptions::default()
    }
}

/// How many times `text` reached a terminal, per the input log.
fn writes_of(sim: &Sim, text: &str) -> usize {
    let sha = sha256_hex(text);
    sim.writes().iter().filter(|w| w["sha256"] == sha).count()
}

async fn send(client: &Client, address: &str, text: &str) -> Value {
    mcp::send_prompt(client, address, text).await
}

async fn list(client: &Client) -> CallToolResult {
    call(client, "list_sessions", json!({"limit": 100})).await
}

/// Polls `list_sessions` until `condition` holds on a successful page.
async fn wait_for_listing(client: &Client, what: &str, condition: impl Fn(&Value) -> bool) {
    crate::support::eventually(what, async || {
        let result = list(client).await;
        (!is_error(&result) && condition(structured(&result))).then_some(())
    })
    .await;
}

fn approved(listing: &Value, address: &str) -> bool {
    listing["sessions"]
        .as_array()
        .expect("sessions")
        .iter()
        .any(|s| s["address"] == address && s["send_approved"] == true)
}

/// Calls counted by the simulator for `method`.
fn calls(sim: &Sim, method: &str) -> u64 {
    sim.calls(method)
}

async fn wait_for_calls(sim: &Sim, method: &str, at_least: u64) {
    crate::support::eventually(&format!("{at_least} {method} calls"), async || {
        (calls(sim, method) >= at_least).then_some(())
    })
    .await;
}

fn assert_no_panic(stderr_log: &Path) {
    let log = std::fs::read_to_string(stderr_log).unwrap_or_default();
    assert!(!log.contains("panicked"), "the adapter panicked:\n{log}");
}

/// A background load of sends (unique texts, to terminals that are never
/// re-approved) and screen reads, recording every send's text and answer.
/// It never lists, so the simulator's `terminal.list` count is the test's.
struct Load {
    stop: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<Vec<(String, Value)>>,
}

impl Load {
    fn start(client: Arc<Client>, addresses: [&'static str; 2]) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let task = tokio::spawn(async move {
            let mut sent = Vec::new();
            let mut n = 0;
            while !flag.load(Ordering::SeqCst) {
                let text = format!("background load {n}");
                let out = send(&client, addresses[n % 2], &text).await;
                sent.push((text, out));
                let _ = call(&client, "read_output", json!({"address": "t8"})).await;
                n += 1;
            }
            sent
        });
        Load { stop, task }
    }

    async fn finish(self) -> Vec<(String, Value)> {
        self.stop.store(true, Ordering::SeqCst);
        self.task.await.expect("the load task")
    }
}

/// Contract section 5 against the input log: SENT wrote once, NOT SENT
/// never wrote, UNKNOWN only after dispatch and at most one write.
fn assert_classified(sim: &Sim, text: &str, out: &Value) {
    let written = writes_of(sim, text);
    match out["outcome"].as_str() {
        Some("sent") => assert_eq!(written, 1, "{text}: {out}"),
        Some("not_sent") => assert_eq!(written, 0, "{text}: {out}"),
        Some("unknown") => {
            assert!(written <= 1, "{text}: {out}");
            assert_eq!(out["reason_code"], "post_dispatch_failure", "{out}");
        }
        _ => panic!("no outcome: {out}"),
    }
}

#[tokio::test]
async fn a_core_killed_mid_load_fails_in_flight_calls_per_contract_and_the_adapter_recovers() {
    let sim = Sim::start(options());
    let allowlist = crate::support::world::approve_all(&herdr_core_mcp::HcClient::new(
        &sim.socket,
        Duration::from_secs(5),
    ))
    .await;
    let config = sim.config(json!({
        "coreId": sim.core_id,
        "sendAllowlist": allowlist,
        "timeoutMs": TIMEOUT_MS,
    }));
    let stderr_log = sim.dir.path().join("adapter.stderr");
    let (client, pid) = mcp::stdio_process((), &config, &stderr_log).await;
    let client = Arc::new(client);
    let old_core = sim.core_id.clone();
    let load = Load::start(Arc::clone(&client), ["t7", "t8"]);

    // In flight at the kill: three sends hc has already carried out (their
    // replies are slowed), two sends still in preflight and a listing.
    let in_flight = |address: &'static str, text: &'static str| {
        let client = Arc::clone(&client);
        tokio::spawn(async move { send(&client, address, text).await })
    };
    let sends_before = calls(&sim, "terminal.send");
    sim.set_faults(&["slow-reply:terminal.send"]);
    let dispatched = [
        ("t1", in_flight("t1", "landed before the crash 1")),
        ("t2", in_flight("t2", "landed before the crash 2")),
        ("t3", in_flight("t3", "landed before the crash 3")),
    ];
    crate::support::eventually("the three writes", async || {
        let landed = (1..=3)
            .map(|i| writes_of(&sim, &format!("landed before the crash {i}")))
            .sum::<usize>();
        (landed == 3).then_some(())
    })
    .await;
    let gets_before = calls(&sim, "terminal.get");
    let lists_before = calls(&sim, "terminal.list");
    // The send fault stays: a reply is faulted after its call was carried out.
    sim.set_faults(&[
        "slow-reply:terminal.send",
        "slow-reply:terminal.get",
        "slow-reply:terminal.list",
    ]);
    let preflighting = [
        in_flight("t4", "still in preflight 4"),
        in_flight("t5", "still in preflight 5"),
    ];
    let listing = {
        let client = Arc::clone(&client);
        tokio::spawn(async move { list(&client).await })
    };
    wait_for_calls(&sim, "terminal.get", gets_before + 2).await;
    wait_for_calls(&sim, "terminal.list", lists_before + 1).await;
    assert!(calls(&sim, "terminal.send") >= sends_before + 3);
    let dir = sim.crash();

    for (address, task) in dispatched {
        let out = task.await.expect("send task");
        assert_eq!(out["outcome"], "unknown", "{address}: {out}");
        assert_eq!(out["reason_code"], "post_dispatch_failure", "{out}");
        let reason = out["reason"].as_str().unwrap();
        assert!(
            reason.contains("closed the connection") || reason.contains("i/o error"),
            "{reason}"
        );
    }
    for task in preflighting {
        let out = task.await.expect("send task");
        assert_eq!(out["outcome"], "not_sent", "{out}");
        assert_eq!(out["reason_code"], "preflight_failed", "{out}");
    }
    let listed = listing.await.expect("list task");
    assert!(is_error(&listed), "{listed:?}");
    assert!(
        text(&listed).contains("closed the connection"),
        "{listed:?}"
    );

    // hc is down; its socket file is stale.
    let socket = dir.path().join("hc.sock");
    let down = list(&client).await;
    assert!(is_error(&down), "{down:?}");
    let message = text(&down);
    assert!(
        message.contains("nobody is listening") && message.contains(&socket.display().to_string()),
        "{message}"
    );
    let refused = send(&client, "t6", "while hc is down").await;
    assert_eq!(refused["outcome"], "not_sent", "{refused}");
    assert_eq!(refused["reason_code"], "preflight_failed", "{refused}");

    // hc comes back on the same path: the same adapter process serves the
    // new core at once, and refuses sends until coreId names it.
    let sim = Sim::start_in(dir, options());
    assert_ne!(sim.core_id, old_core);
    let listing = structured(&list(&client).await).clone();
    assert_eq!(listing["core_id"], sim.core_id.as_str(), "{listing}");
    assert!(
        listing["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["send_approved"] == false),
        "{listing}"
    );
    for address in ["t1", "t2", "t6"] {
        let out = send(&client, address, &format!("after the restart to {address}")).await;
        assert_eq!(out["outcome"], "not_sent", "{out}");
        assert_eq!(out["reason_code"], "core_id_mismatch", "{out}");
        assert!(
            out["reason"].as_str().unwrap().contains(&sim.core_id),
            "{out}"
        );
    }

    // The operator re-approves on the new core; SIGHUP reloads.
    let path = config.to_str().unwrap();
    let (code, _, stderr) = run_adapter(&["allow", "--config", path, "t1"], &[]);
    assert_eq!(code, 0, "{stderr}");
    send_signal(pid, libc::SIGHUP);
    wait_for_listing(&client, "t1 approved on the new core", |l| {
        approved(l, "t1")
    })
    .await;
    let sent = send(&client, "t1", "after re-approval").await;
    assert_eq!(sent["outcome"], "sent", "{sent}");
    assert_eq!(sent["core_id"], sim.core_id.as_str());
    assert_eq!(writes_of(&sim, "after re-approval"), 1);
    // Only the re-approved lifetime: the old core's approvals are gone.
    let other = send(&client, "t2", "not re-approved").await;
    assert_eq!(other["reason_code"], "not_approved", "{other}");

    let background = load.finish().await;
    assert!(!background.is_empty());
    for (text, out) in &background {
        assert_classified(&sim, text, out);
    }
    for i in 1..=3 {
        assert_eq!(writes_of(&sim, &format!("landed before the crash {i}")), 1);
    }
    for i in 4..=5 {
        assert_eq!(writes_of(&sim, &format!("still in preflight {i}")), 0);
    }
    assert_eq!(writes_of(&sim, "while hc is down"), 0);
    assert_no_panic(&stderr_log);
}

#[tokio::test]
async fn a_socket_path_that_vanishes_or_stops_being_a_socket_fails_clearly_and_recovers() {
    let sim = Sim::start(SimOptions {
        idle_records: 2,
        ..SimOptions::default()
    });
    let config = sim.config(json!({"coreId": sim.core_id, "timeoutMs": 2_000}));
    let stderr_log = sim.dir.path().join("adapter.stderr");
    let client = mcp::stdio(&config, &stderr_log).await;
    assert!(!is_error(&list(&client).await));
    let socket = sim.socket.clone();
    let shown = socket.display().to_string();
    // SIGTERM: hc removes its socket file on the way out.
    let dir = sim.stop();
    assert!(!socket.exists());

    let check = async |what: &str, expected: &str| {
        let started = Instant::now();
        let result = list(&client).await;
        assert!(is_error(&result), "{what}: {result:?}");
        let message = text(&result);
        assert!(
            message.contains(expected) && message.contains(&shown),
            "{what}: {message}"
        );
        assert!(message.contains("[hc_unavailable]"), "{what}: {message}");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "{what}: took {:?}",
            started.elapsed()
        );
        let out = send(&client, "t1", "into the void").await;
        assert_eq!(out["outcome"], "not_sent", "{what}: {out}");
        assert_eq!(out["reason_code"], "preflight_failed", "{what}: {out}");
        assert!(
            out["reason"].as_str().unwrap().contains(expected),
            "{what}: {out}"
        );
    };
    check("missing", "no hc socket at").await;
    std::fs::write(&socket, b"not a socket").unwrap();
    check("regular file", "not a socket").await;
    std::fs::remove_file(&socket).unwrap();
    std::fs::create_dir(&socket).unwrap();
    check("directory", "not a socket").await;
    std::fs::remove_dir(&socket).unwrap();

    // A real hc again on the same path: the same adapter serves it.
    let sim = Sim::start_in(
        dir,
        SimOptions {
            idle_records: 2,
            ..SimOptions::default()
        },
    );
    let listing = structured(&list(&client).await).clone();
    assert_eq!(listing["core_id"], sim.core_id.as_str(), "{listing}");
    assert_eq!(listing["sessions"].as_array().unwrap().len(), 2);
    assert_eq!(sim.writes().len(), 0);
    assert_no_panic(&stderr_log);
}
