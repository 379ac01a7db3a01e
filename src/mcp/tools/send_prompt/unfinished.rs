//! A send cut before it ends: what an attempt has learned so far
//! ([`Known`]), the audit line it still leaves when its task is dropped
//! ([`Unfinished`]), and the answer to a send still running when `serve`
//! begins to stop.

use std::sync::Mutex;

use rmcp::ErrorData;
use rmcp::model::ErrorCode;

use super::verdict::ReasonCode;
use super::{Outcome, SendPromptArgs};
use crate::audit::{Audit, RecordedAddress, SendRecord};
use crate::caller::Caller;
use crate::config::SendMode;
use crate::hc::wire::TerminalStatus;
use crate::lock::held;

/// The answer to a send still running when `serve` begins to stop.
pub(super) fn stopping_error(known: &Known) -> ErrorData {
    let facts = known.facts();
    let (outcome, what) = if facts.dispatching {
        (
            Outcome::Unknown,
            "it was dispatched to hc, which had not answered (hc may hold a send while a user's draft sits in the terminal): its outcome is unknown, and the input may land",
        )
    } else {
        (
            Outcome::NotSent,
            "it had not been dispatched, and never will be: nothing was sent",
        )
    };
    ErrorData::new(
        ErrorCode::INTERNAL_ERROR,
        format!(
            "herdr-core-mcp is stopping (SIGTERM or SIGINT), and this send_prompt had not ended: {what}. Once the server is back, read the terminal's screen (read_output) before deciding; do not resend blindly [server_stopping]"
        ),
        Some(serde_json::json!({
            "outcome": outcome,
            "reason_code": ReasonCode::ServerStopping,
            "address": facts.address,
            "core_id": facts.core_id,
            "created_ms": facts.created_ms,
        })),
    )
}

/// What an attempt has learned so far, for the answer and the audit line
/// of an attempt cut before it ends (by the process's end, or a panic).
#[derive(Default)]
pub(super) struct Known(Mutex<Facts>);

/// The facts themselves.
#[derive(Debug, Clone, Default)]
pub(super) struct Facts {
    pub address: Option<String>,
    pub core_id: Option<String>,
    pub created_ms: Option<i64>,
    pub preflight_status: Option<TerminalStatus>,
    pub send_mode: Option<SendMode>,
    /// `terminal.send` may have been written: from here on, only hc's
    /// answer can say it was not.
    pub dispatching: bool,
}

impl Known {
    /// Records what `learn` adds.
    pub(super) fn learn(&self, learn: impl FnOnce(&mut Facts)) {
        learn(&mut held(&self.0));
    }

    fn facts(&self) -> Facts {
        held(&self.0).clone()
    }
}

/// An attempt under way: dropped without being finished (its task
/// panicked, or the process ended under it), it writes the attempt's audit
/// line with what it knew: `unknown` once dispatch may have begun, else
/// `not_sent`.
pub(super) struct Unfinished<'a> {
    pub audit: &'a Audit,
    pub args: &'a SendPromptArgs,
    pub caller: &'a Caller,
    pub known: &'a Known,
    /// Cleared once the attempt ended: it then records its own line.
    pub armed: bool,
}

impl Unfinished<'_> {
    /// The attempt ended and records its own line.
    pub(super) fn disarm(mut self) {
        self.armed = false;
    }
}

impl Drop for Unfinished<'_> {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let facts = self.known.facts();
        let outcome = if facts.dispatching {
            Outcome::Unknown
        } else {
            Outcome::NotSent
        };
        let reason = if std::thread::panicking() {
            ReasonCode::InternalError
        } else {
            ReasonCode::ServerStopping
        };
        let address = RecordedAddress::Named(&self.args.address);
        self.audit.record(&SendRecord {
            core_id: facts.core_id.as_deref(),
            created_ms: facts.created_ms.or(self.args.created_ms),
            send_mode: facts.send_mode,
            preflight_status: facts.preflight_status,
            ..SendRecord::of(address, Some(&self.args.text), self.caller, outcome, reason)
        });
    }
}
