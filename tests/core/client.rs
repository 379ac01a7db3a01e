//! The core client against the simulator: pool bounds, faults, caps, pins.

use std::sync::Arc;
use std::time::{Duration, Instant};

use herdr_core_mcp::wire::{ErrorKind, SendGuard, TerminalStatus};
use herdr_core_mcp::{CoreError, HcClient, SendError, SendRequest};
use serde_json::json;

use crate::support::waits::wait_status;
use crate::support::{Sim, SimOptions};

fn client(sim: &Sim, timeout_ms: u64) -> HcClient {
    HcClient::new(&sim.socket, Duration::from_millis(timeout_ms))
}

fn send<'a>(address: &'a str, text: &'a str, guard: Option<SendGuard>) -> SendRequest<'a> {
    SendRequest {
        address,
        text,
        guard,
    }
}

#[tokio::test]
async fn sixty_four_concurrent_calls_never_open_more_than_eight_connections() {
    let sim = Sim::start(SimOptions {
        agents: 2,
        idle_records: 50,
        ..SimOptions::default()
    });
    let client = Arc::new(client(&sim, 10_000));
    let calls: Vec<_> = (0..64)
        .map(|i| {
            let client = Arc::clone(&client);
            tokio::spawn(async move {
                if i % 2 == 0 {
                    client.list(true).await.map(|_| ())
                } else {
                    client.get("t1").await.map(|_| ())
                }
            })
        })
        .collect();
    for call in calls {
        call.await.expect("task").expect("call succeeds");
    }
    let stats = sim.stats();
    let peak = stats["connections_peak"].as_u64().unwrap();
    assert!((1..=8).contains(&peak), "peak connections {peak}: {stats}");
    assert!(stats["connections_total"].as_u64().unwrap() <= 8, "{stats}");
    assert_eq!(
        client.pool().idle_count() as u64,
        stats["connections_open"].as_u64().unwrap()
    );
}

#[tokio::test]
async fn every_fault_kind_fails_with_its_error_and_the_connection_is_discarded() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        slow_reply_ms: Some(3_000),
        ..SimOptions::default()
    });
    let client = client(&sim, 700);
    type Check = fn(&CoreError) -> bool;
    let table: [(&str, Check); 8] = [
        (
            "id-mismatch",
            |e| matches!(e, CoreError::Protocol { detail, .. } if detail.contains("id")),
        ),
        ("malformed-json", |e| {
            matches!(e, CoreError::Protocol { .. })
        }),
        (
            "notification",
            |e| matches!(e, CoreError::Protocol { detail, .. } if detail.contains("notification")),
        ),
        ("oversized-reply", |e| {
            matches!(e, CoreError::ReplyTooLarge { .. }) && e.to_string().contains("exceeded 1 MiB")
        }),
        ("endless-reply", |e| {
            matches!(e, CoreError::ReplyTooLarge { .. })
        }),
        ("no-reply", |e| {
            matches!(
                e,
                CoreError::Timeout {
                    timeout_ms: 700,
                    ..
                }
            )
        }),
        ("drop-after-dispatch", |e| {
            matches!(e, CoreError::Closed { .. })
        }),
        ("slow-reply", |e| matches!(e, CoreError::Timeout { .. })),
    ];
    for (kind, expected) in table {
        client
            .get("t1")
            .await
            .expect("healthy call before the fault");
        let opened_before = sim.stats()["connections_total"].as_u64().unwrap();
        sim.set_faults(&[&format!("{kind}:terminal.get")]);
        let error = client.get("t1").await.expect_err(kind);
        assert!(expected(&error), "{kind}: unexpected error {error:?}");
        sim.set_faults(&[]);
        client
            .get("t1")
            .await
            .unwrap_or_else(|e| panic!("{kind}: call after the fault failed: {e}"));
        let opened_after = sim.stats()["connections_total"].as_u64().unwrap();
        assert_eq!(
            opened_after,
            opened_before + 1,
            "{kind}: the faulted connection was reused"
        );
    }
}

#[tokio::test]
async fn a_100_mib_reply_fails_without_holding_more_than_about_one_mib() {
    let sim = Sim::start(SimOptions::agents(1).fault("oversized-reply:terminal.list"));
    let client = client(&sim, 10_000);
    client.get("t1").await.expect("warm-up call");
    let before = peak_rss_kib();
    let started = Instant::now();
    let error = client.list(true).await.expect_err("oversized reply");
    let elapsed = started.elapsed();
    let growth_kib = peak_rss_kib() - before;
    eprintln!("100 MiB reply rejected in {elapsed:?}; peak RSS grew by {growth_kib} KiB");
    assert!(
        matches!(error, CoreError::ReplyTooLarge { .. }),
        "{error:?}"
    );
    assert!(growth_kib < 4 * 1024, "peak RSS grew by {growth_kib} KiB");
}

fn peak_rss_kib() -> i64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("proc status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

#[tokio::test]
async fn each_handshake_pin_names_expected_and_actual() {
    for (fault, expected, actual) in [
        ("wrong-generation", "1", "2"),
        ("wrong-framing", "plain", ""),
    ] {
        let sim = Sim::start(SimOptions::agents(1).fault(&format!("{fault}:hc.hello")));
        let error = client(&sim, 2_000).hello().await.expect_err(fault);
        let CoreError::HandshakePin {
            expected: e,
            actual: a,
            ..
        } = &error
        else {
            panic!("{fault}: unexpected error {error:?}")
        };
        assert_eq!(e, expected, "{fault}");
        assert!(a.contains(actual) && a != expected, "{fault}: actual {a}");
        let message = error.to_string();
        assert!(
            message.contains(expected) && message.contains(a.as_str()),
            "{message}"
        );
        assert!(
            message.contains(&sim.socket.display().to_string()),
            "{message}"
        );
    }
}

#[tokio::test]
async fn a_version_neither_built_in_nor_accepted_is_refused_naming_the_check() {
    let sim = Sim::start(SimOptions::agents(1).fault("wrong-version:hc.hello"));
    let error = client(&sim, 2_000).hello().await.expect_err("0.1.14");
    let CoreError::Unaccepted { version, .. } = &error else {
        panic!("unexpected error {error:?}")
    };
    assert_eq!(version, "0.1.14");
    let message = error.to_string();
    for said in [
        "version 0.1.14, which this adapter has not accepted",
        "nothing was sent",
        "inspect-core --check-contract --accept",
    ] {
        assert!(message.contains(said), "no {said:?} in {message}");
    }
}

#[tokio::test]
async fn a_missing_or_dead_socket_fails_fast_naming_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nothing.sock");
    let regular = dir.path().join("file.sock");
    std::fs::write(&regular, b"not a socket").unwrap();
    let stale = dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    for (path, expect_missing) in [(&missing, true), (&regular, false), (&stale, false)] {
        let started = Instant::now();
        let error = HcClient::new(path, Duration::from_secs(10))
            .hello()
            .await
            .expect_err("no hc");
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "took {:?}",
            started.elapsed()
        );
        assert_eq!(
            matches!(error, CoreError::SocketMissing { .. }),
            expect_missing,
            "{error:?}"
        );
        assert!(
            error.to_string().contains(&path.display().to_string()),
            "{error}"
        );
    }
}

#[tokio::test]
async fn the_idle_guard_refuses_a_working_terminal_and_writes_nothing() {
    let sim = Sim::start(SimOptions {
        agents: 1,
        agent_delay_ms: Some(60_000),
        ..SimOptions::default()
    });
    let client = client(&sim, 5_000);
    wait_status(&client, "t1", TerminalStatus::Idle).await;
    let core = client.hello().await.unwrap().core_id.clone();
    client
        .send(send("t1", "first task", Some(SendGuard::Idle)), &core)
        .await
        .expect("sent");
    wait_status(&client, "t1", TerminalStatus::Working).await;
    assert_eq!(sim.writes_to("t1"), 1);
    let refused = client
        .send(send("t1", "second", Some(SendGuard::Idle)), &core)
        .await;
    let Err(SendError::Dispatched(error)) = refused else {
        panic!("expected a dispatched status_mismatch, got {refused:?}")
    };
    assert_eq!(
        error.hc_kind(),
        Some(ErrorKind::StatusMismatch),
        "{error:?}"
    );
    assert_eq!(sim.writes_to("t1"), 1, "status_mismatch wrote input");
}

#[tokio::test]
async fn a_blocked_terminal_is_refused_without_force() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = client(&sim, 5_000);
    wait_status(&client, "t1", TerminalStatus::Idle).await;
    let core = client.hello().await.unwrap().core_id.clone();
    client
        .send(send("t1", "please /block", None), &core)
        .await
        .expect("sent");
    wait_status(&client, "t1", TerminalStatus::Blocked).await;
    let refused = client.send(send("t1", "y", None), &core).await;
    let Err(SendError::Dispatched(error)) = refused else {
        panic!("expected hc's blocked refusal, got {refused:?}")
    };
    assert_eq!(error.hc_kind(), Some(ErrorKind::Blocked), "{error:?}");
    assert_eq!(sim.writes_to("t1"), 1);
}

#[tokio::test]
async fn a_send_on_another_core_is_not_dispatched() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = client(&sim, 5_000);
    let refused = client
        .send(
            send("t1", "hi", None),
            &crate::support::core("some-other-core"),
        )
        .await;
    assert!(
        matches!(
            refused,
            Err(SendError::NotDispatched(CoreError::CoreChanged { .. }))
        ),
        "{refused:?}"
    );
    assert_eq!(sim.writes().len(), 0);
}

#[tokio::test]
async fn a_removed_terminal_s_address_is_reused_with_a_new_created_ms() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = client(&sim, 5_000);
    let first = client.get("t1").await.unwrap().value;
    sim.control("remove", json!({"address": "t1"}));
    let error = client.get("t1").await.expect_err("removed");
    assert_eq!(error.hc_kind(), Some(ErrorKind::NotFound), "{error:?}");
    let spawned = sim.spawn("agent");
    assert_eq!(spawned["address"], "t1");
    let second = client.get("t1").await.unwrap().value;
    assert!(
        second.created_ms > first.created_ms,
        "{first:?} vs {second:?}"
    );
}

#[tokio::test]
async fn idle_connections_to_a_restarted_core_are_dropped_not_reused() {
    let sim = Sim::start(SimOptions::agents(1));
    let client = Arc::new(client(&sim, 5_000));
    let warm_up: Vec<_> = (0..16)
        .map(|_| {
            let client = Arc::clone(&client);
            tokio::spawn(async move { client.get("t1").await.map(|_| ()) })
        })
        .collect();
    for call in warm_up {
        call.await.unwrap().expect("warm-up call");
    }
    let parked = client.pool().idle_count();
    assert!(parked > 1, "only {parked} connection(s) parked");
    let old_core = sim.core_id.clone();
    let dir = sim.stop();
    let sim = Sim::start_in(dir, SimOptions::agents(1));
    // Every parked connection points at the old, gone core: each call must
    // get a fresh, handshaken connection instead of failing.
    for _ in 0..parked {
        let answer = client.get("t1").await.expect("served by the new core");
        assert_eq!(answer.core.core_id.as_str(), sim.core_id);
        assert_ne!(answer.core.core_id.as_str(), old_core);
    }
}
