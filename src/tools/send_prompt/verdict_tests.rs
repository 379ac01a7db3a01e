//! `classify` over every answer the client can report, without sockets.

use std::path::PathBuf;

use serde_json::{Value, json};

use super::*;
use crate::hc::wire::Method;

fn core(id: &str) -> CoreId {
    CoreId::try_from(id.to_owned()).unwrap()
}

fn accepted(created_ms: i64) -> SendResult {
    serde_json::from_value(json!({
        "address": "t1", "created_ms": created_ms, "accepted": true,
        "status": "working", "status_seq": 8
    }))
    .unwrap()
}

fn rpc(code: i64, message: &str, data: Option<Value>) -> CoreError {
    CoreError::Rpc {
        method: Method::Send,
        code,
        message: message.to_owned(),
        kind: ErrorKind::classify(code, data.as_ref()),
        data,
    }
}

fn status_mismatch() -> CoreError {
    rpc(
        -32000,
        "status_mismatch",
        Some(
            json!({"kind": "status_mismatch", "address": "t1", "expected": "idle",
                     "actual": "done", "status_seq": 5}),
        ),
    )
}

/// Every failure the core client can report, except hc's validated
/// `status_mismatch`.
fn every_other_failure() -> Vec<CoreError> {
    let path = PathBuf::from("/run/hc.sock");
    let io = || std::io::Error::other("boom");
    let mut all = vec![
        CoreError::SocketMissing { path: path.clone() },
        CoreError::NotListening { path: path.clone() },
        CoreError::Connect {
            path: path.clone(),
            source: io(),
        },
        CoreError::HandshakePin {
            path: path.clone(),
            what: "version",
            expected: "0.1.15".into(),
            actual: "0.1.14".into(),
        },
        CoreError::HandshakeRefused {
            path: path.clone(),
            detail: "no".into(),
        },
        CoreError::Timeout {
            path: path.clone(),
            method: Method::Send,
            timeout_ms: 5,
        },
        CoreError::ReplyTooLarge {
            path: path.clone(),
            method: Method::Send,
        },
        CoreError::Protocol {
            path: path.clone(),
            method: Method::Send,
            detail: "bad".into(),
        },
        CoreError::Closed {
            path: path.clone(),
            method: Method::Send,
        },
        CoreError::Io {
            path,
            method: Method::Send,
            source: io(),
        },
        // status_mismatch that hc did not fully validate is not a refusal.
        rpc(-32000, "status_mismatch", None),
        rpc(-32000, "status_mismatch", Some(json!({"kind": "busy"}))),
        rpc(
            -32001,
            "status_mismatch",
            Some(json!({"kind": "status_mismatch"})),
        ),
        rpc(-32603, "internal error", None),
    ];
    for kind in [
        ErrorKind::NotFound,
        ErrorKind::Finished,
        ErrorKind::Blocked,
        ErrorKind::Busy,
        ErrorKind::UnsupportedGeneration,
        ErrorKind::Internal,
    ] {
        all.push(rpc(
            kind.code(),
            kind.name(),
            Some(json!({"kind": kind.name()})),
        ));
    }
    all
}

#[test]
fn an_acceptance_is_sent_and_says_which_lifetime_got_it() {
    let Verdict::Sent(same) = classify(Ok(accepted(100)), 100) else {
        panic!("not sent")
    };
    assert_eq!(
        same,
        Accepted {
            status: TerminalStatus::Working,
            status_seq: 8,
            other_lifetime: None
        }
    );
    let Verdict::Sent(other) = classify(Ok(accepted(200)), 100) else {
        panic!("not sent")
    };
    assert_eq!(other.other_lifetime, Some(200));
}

#[test]
fn only_a_validated_status_mismatch_after_dispatch_is_not_sent() {
    let verdict = classify(Err(SendError::Dispatched(status_mismatch())), 1);
    let Verdict::NotSent(Refusal::StatusMismatch { actual, status_seq }) = verdict else {
        panic!("{verdict:?}")
    };
    assert_eq!(actual, Some(TerminalStatus::Done));
    assert_eq!(status_seq, Some(5));
    for failure in every_other_failure() {
        let shown = failure.to_string();
        let verdict = classify(Err(SendError::Dispatched(failure)), 1);
        assert!(
            matches!(verdict, Verdict::Unknown(_)),
            "{shown}: {verdict:?}"
        );
        assert_eq!(verdict.code(), ReasonCode::PostDispatchFailure);
    }
}

#[test]
fn the_message_text_never_decides_a_status_mismatch() {
    // A real core puts human text in `message` (and a hint in `data`): code
    // and `data.kind` decide, whatever the text says.
    for message in [
        "status_mismatch",
        "terminal t1 is working, not idle",
        "busy",
        "",
    ] {
        let data = json!({"kind": "status_mismatch", "hint": "see `hc schema`",
            "address": "t1", "expected": "idle", "actual": "done", "status_seq": 5});
        let verdict = classify(
            Err(SendError::Dispatched(rpc(-32000, message, Some(data)))),
            1,
        );
        assert!(
            matches!(verdict, Verdict::NotSent(Refusal::StatusMismatch { .. })),
            "{message:?}: {verdict:?}"
        );
    }
    // And a kind's name in `message` without `data.kind` proves nothing.
    let verdict = classify(
        Err(SendError::Dispatched(rpc(-32000, "status_mismatch", None))),
        1,
    );
    assert!(matches!(verdict, Verdict::Unknown(_)), "{verdict:?}");
}

#[test]
fn every_failure_before_dispatch_is_not_sent() {
    for failure in every_other_failure().into_iter().chain([status_mismatch()]) {
        let verdict = classify(Err(SendError::NotDispatched(failure)), 1);
        assert_eq!(verdict.code(), ReasonCode::DispatchFailed, "{verdict:?}");
    }
    let changed = CoreError::CoreChanged {
        expected: core("c1"),
        actual: core("c2"),
    };
    let verdict = classify(Err(SendError::NotDispatched(changed)), 1);
    assert_eq!(verdict.code(), ReasonCode::CoreIdMismatch);
    assert_eq!(
        verdict.reason("t1", Some(1)),
        "hc's core_id is now c2, not the configured c1 (hc restarted); nothing was sent: the operator approves the terminal again with herdr-core-mcp allow ADDRESS"
    );
}

#[test]
fn a_mismatch_without_its_status_still_says_nothing_was_sent() {
    let bare = rpc(
        -32000,
        "status_mismatch",
        Some(json!({"kind": "status_mismatch"})),
    );
    let verdict = classify(Err(SendError::Dispatched(bare)), 1);
    assert_eq!(
        verdict.reason("t1", Some(1)),
        "hc refused atomically: the terminal was another status, not idle, when the input would have been written; nothing was sent. Wait until it is idle again (wait_for_status with until: [\"idle\"]) and send then; or the operator may choose sendMode normal, which also sends to done terminals without an atomic guard (README, Send modes)"
    );
}

#[test]
fn every_reason_reads_as_pinned() {
    let path = PathBuf::from("/run/hc.sock");
    let not_found = || {
        rpc(
            -32001,
            "not_found",
            Some(json!({"kind": "not_found", "address": "t9"})),
        )
    };
    let verdicts = vec![
        classify(Ok(accepted(100)), 100),
        classify(Ok(accepted(200)), 100),
        Verdict::NotSent(Refusal::TextEmpty),
        Verdict::NotSent(Refusal::TextTooLong { chars: 16_001 }),
        Verdict::NotSent(Refusal::ControlCharacter {
            index: 3,
            character: '\u{1b}',
        }),
        Verdict::NotSent(Refusal::LineControl {
            index: 3,
            character: '\n',
            flag: String::new(),
        }),
        Verdict::NotSent(Refusal::LineControl {
            index: 0,
            character: '\t',
            flag: " --config /home/op/hc-test.json".into(),
        }),
        Verdict::NotSent(Refusal::ConfigInvalid {
            why: std::sync::Arc::new(crate::config::ConfigError::Invalid {
                path: "/c.json".into(),
                invalid: crate::config::Invalid {
                    key: "coreId".into(),
                    problem: "must be 1-128 printable ASCII characters".into(),
                },
            }),
        }),
        Verdict::NotSent(Refusal::NoCoreId {
            flag: String::new(),
        }),
        Verdict::NotSent(Refusal::Cancelled),
        Verdict::NotSent(Refusal::NotFound(not_found())),
        Verdict::NotSent(Refusal::PreflightFailed(CoreError::SocketMissing {
            path: path.clone(),
        })),
        Verdict::NotSent(Refusal::CoreIdMismatch {
            live: core("c2"),
            configured: core("c1"),
            flag: String::new(),
        }),
        Verdict::NotSent(Refusal::LifetimeMismatch {
            address: "t1".into(),
            expected: 99,
            actual: 100,
        }),
        Verdict::NotSent(Refusal::Finished {
            address: "t1".into(),
        }),
        Verdict::NotSent(Refusal::NotApproved {
            address: "t1".into(),
            created_ms: 100,
            status: TerminalStatus::Idle,
            flag: " --config /home/op/hc-test.json".into(),
        }),
        Verdict::NotSent(Refusal::NotApproved {
            address: "t2".into(),
            created_ms: 100,
            status: TerminalStatus::Unknown,
            flag: String::new(),
        }),
        Verdict::NotSent(Refusal::StatusNotAllowed {
            status: TerminalStatus::Working,
        }),
        classify(
            Err(SendError::NotDispatched(CoreError::CoreChanged {
                expected: core("c1"),
                actual: core("c2"),
            })),
            100,
        ),
        classify(
            Err(SendError::NotDispatched(CoreError::NotListening { path })),
            100,
        ),
        classify(Err(SendError::Dispatched(status_mismatch())), 100),
        classify(Err(SendError::Dispatched(not_found())), 100),
    ];
    let pinned: Vec<String> = verdicts
        .iter()
        .map(|v| format!("{}: {}", v.code().as_str(), v.reason("t1", Some(100))))
        .collect();
    insta::assert_snapshot!(pinned.join("\n"));
}
