//! `follow_ms`: a `sent` answer that also waits, in the same call, for the
//! turn the send started, and says how it ended (`turn`). Following never
//! resends and never changes the send's outcome: a `sent` is `sent`
//! whatever the turn does, and a cancelled or cut follow says the turn is
//! still `running`.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Serialize;

use crate::hc::wire::{StatusContext, TerminalStatus};
use crate::mcp::error::ToolError;
use crate::mcp::tools::wait_for_status::turn::{Followed, follow};
use crate::mcp::tools::wait_for_status::{WaitOutcome, Watching};

/// The longest `follow_ms`, as the waits' `timeout_ms`.
pub(crate) const MAX_FOLLOW_MS: u64 = 600_000;

/// Whether the turn the send started has ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum TurnState {
    /// It reached `done`, `idle`, `blocked` or `error` after the send, or
    /// its terminal finished or went away.
    Ended,
    /// Still going when the follow stopped (its bound, a cancel, the
    /// server stopping, or its machine out of reach): wait on with
    /// `wait_for_status` from `after_seq`.
    Running,
}

/// The turn a `sent` prompt started, as the follow saw it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Turn {
    pub state: TurnState,
    /// How the follow ended, in `wait_for_status`'s words (`reached`,
    /// `finished`, `gone`, `lifetime_mismatch`, `timeout`, ...).
    pub ended_by: WaitOutcome,
    /// The terminal's status when the follow ended; null if never seen.
    pub status: Option<TerminalStatus>,
    pub status_seq: Option<u64>,
    /// Why that status holds and since when, when hc says (the reason is
    /// untrusted program text, escaped).
    #[serde(flatten)]
    pub context: StatusContext,
    /// How long the follow took, in ms.
    pub elapsed_ms: u64,
    /// While `running`: pass as the target's `after_seq` to
    /// `wait_for_status` to go on waiting for this turn.
    pub after_seq: Option<u64>,
    /// Why the follow stopped early (a cancel, an error asking hc), when
    /// it did.
    pub note: Option<String>,
}

/// Follows the turn of a send that landed in `address` (lifetime
/// `created_ms`), after `after_seq`, for `bound`; with the since of what it
/// saw.
pub(super) async fn run(
    w: Watching<'_>,
    address: &str,
    created_ms: i64,
    after_seq: u64,
    bound: Duration,
    context: &RequestContext<RoleServer>,
) -> (Turn, Option<String>) {
    let followed = follow(w, address, created_ms, after_seq, bound, context).await;
    match followed {
        Ok(Followed {
            outcome,
            last,
            elapsed,
            since,
        }) => {
            let state = match outcome {
                WaitOutcome::Reached
                | WaitOutcome::Finished
                | WaitOutcome::Gone
                | WaitOutcome::LifetimeMismatch
                | WaitOutcome::CoreRestarted => TurnState::Ended,
                _ => TurnState::Running,
            };
            let turn = Turn {
                state,
                ended_by: outcome,
                status: last.as_ref().map(|r| r.status),
                status_seq: last.as_ref().map(|r| r.status_seq),
                context: last.map(|r| r.context).unwrap_or_default(),
                elapsed_ms: u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX),
                after_seq: (state == TurnState::Running).then_some(after_seq),
                note: None,
            };
            (turn, since)
        }
        Err(e) => {
            let note = match e {
                ToolError::Cancelled => "the follow was cancelled; the prompt was sent".to_owned(),
                other => format!("the follow stopped: {other}; the prompt was sent"),
            };
            (running(after_seq, note), None)
        }
    }
}

/// A turn whose follow stopped before it could say more.
pub(super) fn running(after_seq: u64, note: String) -> Turn {
    Turn {
        state: TurnState::Running,
        ended_by: WaitOutcome::Timeout,
        status: None,
        status_seq: None,
        context: StatusContext::default(),
        elapsed_ms: 0,
        after_seq: Some(after_seq),
        note: Some(note),
    }
}

/// The turn in one line of the text answer.
pub(super) fn line(turn: &Turn) -> String {
    let state = match turn.state {
        TurnState::Ended => "ended",
        TurnState::Running => "still running",
    };
    let mut line = format!(
        "\nturn {state} ({:?}) after {} ms: {}{} seq {}",
        turn.ended_by,
        turn.elapsed_ms,
        turn.status.map_or("-".to_owned(), |s| s.to_string()),
        turn.context.suffix(),
        turn.status_seq.map_or("-".to_owned(), |s| s.to_string()),
    );
    if let Some(after) = turn.after_seq {
        line.push_str(&format!(
            "; wait on with wait_for_status, after_seq {after}"
        ));
    }
    if let Some(note) = &turn.note {
        line.push_str(&format!("; {note}"));
    }
    line
}
