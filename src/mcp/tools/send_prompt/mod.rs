//! `send_prompt`: the only tool that writes. Every refusal happens before
//! dispatch and is NOT SENT by construction; after dispatch only hc's
//! validated `status_mismatch` is NOT SENT and everything else is UNKNOWN
//! (contract section 5). Never retried, never replayed. The steps are in
//! `pipeline`, the verdict and its classification in `verdict`; this file
//! is the tool's face: arguments, output, and the one audit line.
//!
//! The attempt runs in its own task: a cancelled or dropped MCP request
//! cannot cut it between dispatch and classification, and every attempt
//! leaves exactly one audit line, even one that panics (`unknown`,
//! `internal_error`).

pub(crate) mod confirm;
mod follow;
mod machine;
mod pipeline;
mod preflight;
mod refusal;
mod render;
mod unfinished;
pub(crate) mod verdict;

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolResponse, CallToolResult, ContentBlock, InputRequiredResult};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use serde_json::{Map, Value};

use crate::mcp::access;
use crate::mcp::arguments::{BadArguments, address, parse_object};
use crate::mcp::tools::wait_for_status::Watching;
use tokio_util::sync::CancellationToken;

use crate::app::App;
pub(crate) use crate::audit::Outcome;
use crate::audit::{AuditWrite, RecordedAddress, SendRecord};
use crate::caller::Caller;
use crate::config::SendMode;
use crate::escape::printable;
use crate::hc::wire::{SendGuard, TerminalStatus};
use crate::mcp::error::structured;
use crate::mcp::state::{Confirmations, SendLocks};
use confirm::{Asking, Confirmation};
use pipeline::Attempt;
use render::render;
use unfinished::{Known, Unfinished, stopping_error};
use verdict::{Accepted, ReasonCode, Verdict};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct SendPromptArgs {
    /// Terminal address from list_sessions, e.g. "t1" or "machine/t7".
    /// Must be send_approved.
    #[serde(deserialize_with = "address")]
    #[schemars(length(min = 1, max = 128))]
    pub address: String,
    /// The prompt: 1-16000 characters, one line: no control characters (no
    /// ESC, CR, NUL, DEL, C1), and no TAB or LF unless list_sessions shows
    /// multiline_allowed for the terminal. It is pasted, then submitted with
    /// the terminal's own submit key.
    pub text: String,
    /// The terminal's created_ms from list_sessions. When given, nothing is
    /// sent unless the live terminal at `address` is that same lifetime.
    pub created_ms: Option<i64>,
    /// 0-600000 ms (capped by the operator's waitMaxMs). When the prompt is
    /// sent, also wait, in this call, for the turn it started: until the
    /// terminal reports done, idle, blocked or error after it (or finishes,
    /// or goes away), at most this long; `turn` says how it ended, or that
    /// it still runs. Keep it under your host's limit for one tool call
    /// (often 60 s: 50000 is safe). Default 0: answer at once. Never
    /// resends; a not_sent or unknown answer does not wait.
    #[schemars(range(min = 0, max = 600000))]
    pub follow_ms: Option<u64>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct SendPromptOutput {
    pub outcome: Outcome,
    /// Stable machine-readable reason.
    pub reason_code: ReasonCode,
    /// What happened and what to do next.
    pub reason: String,
    /// The send mode of the target's approval (its own, else the top-level
    /// `sendMode`); null when the attempt ended before an approval was
    /// found (an unapproved terminal has no send mode).
    pub send_mode: Option<SendMode>,
    /// Status from the preflight `terminal.get`, when one ran.
    pub preflight_status: Option<TerminalStatus>,
    /// `"idle"` when hc compared the status atomically with the write; null otherwise.
    pub atomic_status_guard: Option<SendGuard>,
    /// Status hc reported on acceptance (or in its status_mismatch refusal).
    pub core_status: Option<TerminalStatus>,
    /// Status sequence number hc reported with `core_status`: pass it as
    /// `after_seq` when waiting for this task to finish.
    pub core_status_seq: Option<u64>,
    pub core_id: Option<String>,
    pub address: String,
    /// The approved lifetime the preflight found (or the one asked for).
    pub created_ms: Option<i64>,
    /// The lifetime hc says the input reached, when it accepted it: another
    /// than `created_ms` only with `accepted_other_lifetime`.
    pub landed_created_ms: Option<i64>,
    /// Characters in `text`.
    pub chars: usize,
    /// How a human confirmed this prompt, when the operator asks for
    /// confirmation (confirm_required in list_sessions); null otherwise.
    pub confirmed: Option<Confirmation>,
    /// Whether this attempt's line reached the operator's audit file.
    pub audit: AuditWrite,
    /// With `follow_ms` and a `sent` outcome: the turn the prompt started,
    /// `ended` (with the status it ended in, and why that status holds) or
    /// still `running`; null otherwise.
    pub turn: Option<follow::Turn>,
    /// With `turn`: pass as wait_for_status's `since` to hear of every
    /// change of this terminal after this answer.
    pub since: Option<String>,
}

/// The send tool, and what it keeps across calls: the app below it, one
/// lock per terminal being sent to, the confirmations' key and questions,
/// and the stop signal of the server.
pub(crate) struct SendPrompt {
    app: Arc<App>,
    locks: Arc<SendLocks>,
    confirmations: Confirmations,
    stopping: CancellationToken,
}

impl SendPrompt {
    /// The send tool over `app`, answering at once when `stopping` is
    /// cancelled.
    pub(crate) fn new(app: Arc<App>, stopping: CancellationToken) -> SendPrompt {
        SendPrompt {
            app,
            locks: Arc::default(),
            confirmations: Confirmations::default(),
            stopping,
        }
    }
}

/// One `send_prompt` call, from its raw arguments: every call leaves
/// exactly one audit line, one whose arguments do not read included
/// (`invalid_arguments`, naming the argument). When `serve` begins to stop
/// before the attempt ends, the call is answered at once with a JSON-RPC
/// error saying so (the attempt itself is cut only by the process's end,
/// and its audit line then says what it knew).
pub(crate) async fn run(
    send: Arc<SendPrompt>,
    arguments: Map<String, Value>,
    caller: Caller,
    asking: Asking,
    ct: CancellationToken,
    follower: Option<Follower<'_>>,
) -> Result<CallToolResponse, ErrorData> {
    let parsed = parse_object::<SendPromptArgs>(&arguments).and_then(|args| match args.follow_ms {
        Some(ms) if ms > follow::MAX_FOLLOW_MS => Err(BadArguments {
            message: format!(
                "invalid arguments: follow_ms must be between 0 and {}, got {ms} [invalid_params]",
                follow::MAX_FOLLOW_MS
            ),
            argument: "follow_ms".to_owned(),
        }),
        _ => Ok(args),
    });
    let args = match parsed {
        Ok(args) => args,
        Err(bad) => {
            access::record_refused(
                send.app.audit(),
                access::WRITER_TOOL,
                Some(&arguments),
                access::Refused::Arguments {
                    argument: &bad.argument,
                },
                &caller,
            );
            return Ok(CallToolResult::error(vec![ContentBlock::text(bad.message)]).into());
        }
    };
    drop(arguments);
    let follow_ms = args.follow_ms;
    let wait_max = send.app.loaded().config().wait_max();
    let known = Arc::new(Known::default());
    // Cut before dispatch by the request's cancel or by the stop alike.
    let cut = send.stopping.child_token();
    let link = tokio::spawn({
        let (cut, request) = (cut.clone(), ct);
        async move {
            tokio::select! {
                () = request.cancelled() => cut.cancel(),
                () = cut.cancelled() => {}
            }
        }
    });
    let stopping = send.stopping.clone();
    let mut task = tokio::spawn({
        let known = Arc::clone(&known);
        async move {
            let loaded = send.app.loaded();
            let unfinished = Unfinished {
                audit: send.app.audit(),
                args: &args,
                caller: &caller,
                known: &known,
                armed: true,
            };
            let attempt =
                pipeline::attempt(&send, &loaded, &args, &caller, &asking, &cut, &known).await;
            // A 2026-07-28 client is asked through an input-required result.
            let question = match &attempt.verdict {
                Verdict::NotSent(verdict::Refusal::ConfirmationPending(question)) => {
                    Some(InputRequiredResult::clone(question))
                }
                _ => None,
            };
            let mut output = SendPromptOutput::new(&args, attempt, loaded.config().operator_flag());
            unfinished.disarm();
            output.audit = send.app.audit().record(&output.record(&args.text, &caller));
            (output, question)
        }
    });
    let joined = tokio::select! {
        biased;
        joined = &mut task => joined,
        () = stopping.cancelled() => return Err(stopping_error(&known)),
    };
    link.abort();
    Ok(match joined {
        Ok((_, Some(question))) => CallToolResponse::InputRequired(question),
        Ok((mut output, None)) => {
            if let Some(follow_ms) = follow_ms.filter(|ms| *ms > 0)
                && let Some(Follower { watching, context }) = follower
                && output.outcome == Outcome::Sent
                && let (Some(created_ms), Some(after_seq)) =
                    (output.landed_created_ms, output.core_status_seq)
            {
                let bound = Duration::from_millis(follow_ms).min(wait_max);
                let followed = follow::run(
                    watching,
                    &output.address,
                    created_ms,
                    after_seq,
                    bound,
                    context,
                );
                let (turn, since) = tokio::select! {
                    biased;
                    followed = followed => followed,
                    () = stopping.cancelled() => (
                        follow::running(after_seq, "herdr-core-mcp is stopping; the prompt was sent".to_owned()),
                        None,
                    ),
                };
                output.turn = Some(turn);
                output.since = since;
            }
            let text = render(&output);
            let is_error =
                output.outcome != Outcome::Sent || output.reason_code != ReasonCode::Accepted;
            structured(&output, text, is_error).into()
        }
        // The attempt task panicked (its audit line says what it knew);
        // whether it dispatched is not known here.
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "UNKNOWN (input may have landed): internal error during send_prompt ({e}) [internal_error]; read the screen before deciding, do not resend blindly"
        ))])
        .into(),
    })
}

/// What a follow (`follow_ms`) waits with: the status waits' parts, and
/// the request (its progress token and its cancel).
#[derive(Clone, Copy)]
pub(crate) struct Follower<'a> {
    pub watching: Watching<'a>,
    pub context: &'a RequestContext<RoleServer>,
}

impl SendPromptOutput {
    /// The output of one attempt, built once from its verdict; `flag` is
    /// the ` --config PATH` of the operator's commands it names.
    fn new(args: &SendPromptArgs, attempt: Attempt, flag: &str) -> SendPromptOutput {
        let Attempt {
            preflight,
            guard,
            mode,
            confirmation,
            verdict,
        } = attempt;
        let (outcome, core_status, core_status_seq) = match &verdict {
            Verdict::Sent(Accepted {
                status, status_seq, ..
            }) => (Outcome::Sent, Some(*status), Some(*status_seq)),
            Verdict::NotSent(verdict::Refusal::StatusMismatch { actual, status_seq }) => {
                (Outcome::NotSent, *actual, *status_seq)
            }
            Verdict::NotSent(_) => (Outcome::NotSent, None, None),
            Verdict::Unknown(_) => (Outcome::Unknown, None, None),
        };
        let created_ms = preflight.as_ref().map(|p| p.created_ms).or(args.created_ms);
        let landed_created_ms = match &verdict {
            Verdict::Sent(Accepted {
                other_lifetime: Some(actual),
                ..
            }) => {
                tracing::warn!(address = %printable(&args.address), approved_created_ms = created_ms, actual_created_ms = actual, "input landed in a new terminal lifetime at the same address");
                Some(*actual)
            }
            Verdict::Sent(_) => created_ms,
            _ => None,
        };
        SendPromptOutput {
            outcome,
            reason_code: verdict.code(),
            reason: match &verdict {
                // The dead end of idle-only mode: an agent that reports
                // done after each task never becomes idle by itself.
                Verdict::NotSent(verdict::Refusal::StatusMismatch {
                    actual: Some(TerminalStatus::Done),
                    ..
                }) if mode == Some(SendMode::IdleOnly) => done_in_idle_only(&args.address, flag),
                _ => verdict.reason(&args.address, created_ms),
            },
            send_mode: mode,
            preflight_status: preflight.as_ref().map(|p| p.status),
            atomic_status_guard: guard,
            core_status,
            core_status_seq,
            core_id: preflight.map(|p| p.core_id.to_string()),
            address: args.address.clone(),
            created_ms,
            landed_created_ms,
            chars: args.text.chars().count(),
            confirmed: confirmation,
            audit: AuditWrite::LogOnly,
            turn: None,
            since: None,
        }
    }

    /// The audit record of this answer.
    fn record<'a>(&'a self, text: &'a str, caller: &'a Caller) -> SendRecord<'a> {
        let address = RecordedAddress::Named(&self.address);
        SendRecord {
            core_id: self.core_id.as_deref(),
            created_ms: self.created_ms,
            landed_created_ms: self
                .landed_created_ms
                .filter(|l| Some(*l) != self.created_ms),
            send_mode: self.send_mode,
            preflight_status: self.preflight_status,
            confirmed: self.confirmed.as_ref(),
            ..SendRecord::of(address, Some(text), caller, self.outcome, self.reason_code)
        }
    }
}

fn done_in_idle_only(address: &str, flag: &str) -> String {
    let address = printable(address);
    format!(
        "hc refused atomically: the terminal was done, not idle; nothing was sent. This agent reports done after its work and may not become idle by itself, so waiting for idle may never end. Read its output (read_output); if follow-up prompts are wanted, the operator approves it for them with: herdr-core-mcp allow --mode normal{flag} {address}"
    )
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::audit::Audit;

    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn an_attempt_that_panics_still_leaves_its_audit_line_as_unknown() {
        let captured = Captured::default();
        let audit = Audit::open(Box::new(captured.clone()), None).unwrap();
        let args = SendPromptArgs {
            address: "t1".into(),
            text: "a prompt".into(),
            created_ms: Some(7),
            follow_ms: None,
        };
        let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let known = Known::default();
            known.learn(|facts| {
                facts.core_id = Some("core-a".into());
                facts.preflight_status = Some(TerminalStatus::Idle);
                facts.dispatching = true;
            });
            let _unfinished = Unfinished {
                audit: &audit,
                args: &args,
                caller: &Caller::stdio(),
                known: &known,
                armed: true,
            };
            panic!("a bug between dispatch and classification");
        }));
        assert!(panicked.is_err());
        let written = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
        let line: serde_json::Value = serde_json::from_str(written.trim_end()).unwrap();
        assert_eq!(line["outcome"], "unknown", "{line}");
        assert_eq!(line["reason"], "internal_error", "{line}");
        assert_eq!(line["address"], "t1");
        assert_eq!(line["created_ms"], 7);
        assert_eq!(line["core_id"], "core-a", "{line}");
        assert_eq!(line["preflight_status"], "idle", "{line}");
        assert!(!written.contains("a prompt"));
    }

    #[test]
    fn an_attempt_cut_before_dispatch_is_not_sent_and_after_it_unknown() {
        for (dispatching, outcome) in [(false, "not_sent"), (true, "unknown")] {
            let captured = Captured::default();
            let audit = Audit::open(Box::new(captured.clone()), None).unwrap();
            let args = SendPromptArgs {
                address: "t2".into(),
                text: "a prompt".into(),
                created_ms: None,
                follow_ms: None,
            };
            let known = Known::default();
            known.learn(|facts| {
                facts.core_id = Some("core-b".into());
                facts.created_ms = Some(42);
                facts.send_mode = Some(SendMode::Normal);
                facts.dispatching = dispatching;
            });
            // Dropped without a panic: the process ended under it.
            drop(Unfinished {
                audit: &audit,
                args: &args,
                caller: &Caller::stdio(),
                known: &known,
                armed: true,
            });
            let written = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
            let line: serde_json::Value = serde_json::from_str(written.trim_end()).unwrap();
            assert_eq!(line["outcome"], outcome, "{line}");
            assert_eq!(line["reason"], "server_stopping", "{line}");
            assert_eq!(line["created_ms"], 42, "{line}");
            assert_eq!(line["core_id"], "core-b", "{line}");
            assert_eq!(line["send_mode"], "normal", "{line}");
        }
    }
}
