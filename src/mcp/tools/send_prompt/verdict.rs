//! What a send attempt came to, as types: a [`Verdict`] (`Sent`,
//! `NotSent(Refusal)`, `Unknown(Why)`), every reason as a [`ReasonCode`],
//! and [`classify`], the pure function from hc's answer to a dispatched
//! `terminal.send` to its verdict (contract section 5). Nothing here does
//! I/O, so the whole rule is unit-tested without sockets.

pub(crate) use super::refusal::Refusal;
pub(crate) use crate::audit::ReasonCode;
use crate::hc::wire::{ErrorKind, SendResult, TerminalStatus};
use crate::hc::{CoreError, SendError};

/// How a send attempt ended.
#[derive(Debug)]
pub(crate) enum Verdict {
    /// hc accepted the input (the task is not necessarily done).
    Sent(Accepted),
    /// Nothing was written.
    NotSent(Refusal),
    /// The request reached hc and no valid answer came back: the input may
    /// have landed.
    Unknown(Why),
}

/// hc's acceptance.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Accepted {
    /// What hc observed right after enqueueing.
    pub status: TerminalStatus,
    pub status_seq: u64,
    /// Set when the input landed in another lifetime at the same address
    /// than the one approved at preflight (the old terminal ended between
    /// preflight and send): its created_ms.
    pub other_lifetime: Option<i64>,
}

/// Why a dispatched send has no known outcome.
#[derive(Debug)]
pub(crate) struct Why(pub CoreError);

impl Verdict {
    pub(crate) fn code(&self) -> ReasonCode {
        match self {
            Verdict::Sent(Accepted {
                other_lifetime: None,
                ..
            }) => ReasonCode::Accepted,
            Verdict::Sent(Accepted {
                other_lifetime: Some(_),
                ..
            }) => ReasonCode::AcceptedOtherLifetime,
            Verdict::NotSent(refusal) => refusal.code(),
            Verdict::Unknown(_) => ReasonCode::PostDispatchFailure,
        }
    }

    /// What happened and what to do next.
    pub(crate) fn reason(&self, address: &str, approved_created_ms: Option<i64>) -> String {
        match self {
            Verdict::Sent(Accepted {
                other_lifetime: None,
                ..
            }) => "hc accepted the input; the task is not necessarily done: read_output (or wait for status) to follow it".into(),
            Verdict::Sent(Accepted {
                other_lifetime: Some(actual),
                ..
            }) => format!(
                "SENT TO ANOTHER TERMINAL: hc accepted the input into a NEW terminal lifetime at {address} (created_ms {actual}), not the approved one (created_ms {}), which ended between the preflight and the send. hc names terminals by address only, so this cannot be prevented. The prompt was typed into a program nobody approved: read_output of {address} now and tell the operator",
                approved_created_ms.map_or("-".to_owned(), |c| c.to_string())
            ),
            Verdict::NotSent(refusal) => refusal.to_string(),
            Verdict::Unknown(Why(e)) => format!(
                "the request reached hc but no valid acceptance came back ({e}); the input may have landed: read_output before deciding, do not resend blindly"
            ),
        }
    }
}

/// The verdict of one dispatch attempt, from what the client reported.
/// Only hc's validated `status_mismatch` is NOT SENT after dispatch; every
/// other failure after dispatch is UNKNOWN; a failure before dispatch is
/// NOT SENT. `approved_created_ms` is the lifetime the preflight approved.
pub(crate) fn classify(answer: Result<SendResult, SendError>, approved_created_ms: i64) -> Verdict {
    match answer {
        Ok(result) => Verdict::Sent(Accepted {
            status: result.status,
            status_seq: result.status_seq,
            other_lifetime: (result.created_ms != approved_created_ms).then_some(result.created_ms),
        }),
        Err(SendError::NotDispatched(CoreError::CoreChanged {
            expected,
            actual,
            flag,
        })) => Verdict::NotSent(Refusal::CoreChanged {
            expected,
            actual,
            flag,
        }),
        Err(SendError::NotDispatched(
            e @ (CoreError::Queued { .. } | CoreError::MachineQueued { .. }),
        )) => Verdict::NotSent(Refusal::SendsQueued(e)),
        Err(SendError::NotDispatched(e)) => Verdict::NotSent(Refusal::DispatchFailed(e)),
        Err(SendError::Dispatched(e)) if e.hc_kind() == Some(ErrorKind::StatusMismatch) => {
            let data = match &e {
                CoreError::Rpc { data, .. } => data.as_ref(),
                _ => None,
            };
            Verdict::NotSent(Refusal::StatusMismatch {
                actual: data
                    .and_then(|d| d.get("actual"))
                    .and_then(|s| serde_json::from_value(s.clone()).ok()),
                status_seq: data
                    .and_then(|d| d.get("status_seq"))
                    .and_then(serde_json::Value::as_u64),
            })
        }
        Err(SendError::Dispatched(e)) => Verdict::Unknown(Why(e)),
        Err(SendError::NotStarted(_)) => Verdict::NotSent(Refusal::NotStarted),
    }
}

#[cfg(test)]
mod tests {
    //! `classify` over every answer the client can report, without sockets.

    use std::path::PathBuf;

    use serde_json::{Value, json};

    use super::*;
    use crate::config::SendMode;
    use crate::hc::CoreId;
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
                flag: String::new(),
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
            flag: " --config /home/op/hc-test.json".into(),
        };
        let verdict = classify(Err(SendError::NotDispatched(changed)), 1);
        assert_eq!(verdict.code(), ReasonCode::CoreIdMismatch);
        assert_eq!(
            verdict.reason("t1", Some(1)),
            "hc's core_id is now c2, not the configured c1 (hc restarted); nothing was sent: the operator approves the terminal again with herdr-core-mcp allow --config /home/op/hc-test.json ADDRESS"
        );
        let queued = CoreError::Queued {
            method: crate::hc::wire::Method::Send,
            class: crate::hc::share::Class::Send,
            waited_ms: 15_000,
            in_use: crate::hc::share::InUse {
                reads: 0,
                waits: 1,
                sends: 4,
            },
        };
        let verdict = classify(Err(SendError::NotDispatched(queued)), 1);
        assert_eq!(verdict.code(), ReasonCode::SendsQueued);
        let reason = verdict.reason("t1", Some(1));
        assert!(reason.contains("nothing was written"), "{reason}");
        assert!(reason.contains("4 of 4 for sends"), "{reason}");
        assert!(!reason.contains("check hc"), "{reason}");
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
                mode: SendMode::Normal,
                flag: String::new(),
            }),
            Verdict::NotSent(Refusal::StatusNotAllowed {
                status: TerminalStatus::Done,
                mode: SendMode::IdleOnly,
                flag: " --config /home/op/hc-test.json".into(),
            }),
            classify(
                Err(SendError::NotDispatched(CoreError::CoreChanged {
                    expected: core("c1"),
                    actual: core("c2"),
                    flag: String::new(),
                })),
                100,
            ),
            classify(
                Err(SendError::NotDispatched(CoreError::Queued {
                    method: crate::hc::wire::Method::Send,
                    class: crate::hc::share::Class::Send,
                    waited_ms: 15_000,
                    in_use: crate::hc::share::InUse {
                        reads: 1,
                        waits: 2,
                        sends: 4,
                    },
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
}
