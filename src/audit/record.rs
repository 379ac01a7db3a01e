//! One send attempt's record and the line it becomes: a SHA-256 of the
//! prompt instead of the prompt, every hazardous character escaped. The
//! record's vocabulary ([`Outcome`], [`ReasonCode`]) lives here, below the
//! tool that fills it.

use schemars::JsonSchema;
use serde::Serialize;
use sha2::{Digest, Sha256};

use super::now_ms;
use crate::caller::{Caller, Who};
use crate::config::SendMode;
use crate::escape;
use crate::hc::wire::TerminalStatus;

/// What is recorded of one send attempt.
#[derive(Debug, Clone, Copy)]
pub struct SendRecord<'a> {
    /// The core that answered the preflight, when one did.
    pub core_id: Option<&'a str>,
    /// The terminal address the caller named, as far as it is one.
    pub address: RecordedAddress<'a>,
    /// The lifetime approved at preflight (or the one the caller named).
    pub created_ms: Option<i64>,
    /// The lifetime hc says the input reached, when it is another one.
    pub landed_created_ms: Option<i64>,
    /// The send mode of the target's approval; `None` when the attempt
    /// ended before an approval was found.
    pub send_mode: Option<SendMode>,
    /// The status the preflight `terminal.get` saw, when one ran.
    pub preflight_status: Option<TerminalStatus>,
    /// Sent, not sent, or unknown.
    pub outcome: Outcome,
    /// The stable reason code of the outcome.
    pub reason: ReasonCode,
    /// The prompt: only its length and digest are recorded; `None` when
    /// the call carried no text string (refused for its arguments).
    pub text: Option<&'a str>,
    /// The argument at fault, for a call refused for its arguments
    /// (`invalid_arguments`).
    pub argument: Option<&'a str>,
    /// Who asked for the send (never their token).
    pub caller: &'a Caller,
    /// How a human confirmed it, when one did.
    pub confirmed: Option<&'a Confirmation>,
}

impl<'a> SendRecord<'a> {
    /// The record of an attempt at `address` by `caller` that came to
    /// `outcome` for `reason`, knowing nothing else yet: every other field
    /// is set by who knows it (`SendRecord { core_id, ..SendRecord::of(..) }`).
    pub fn of(
        address: RecordedAddress<'a>,
        text: Option<&'a str>,
        caller: &'a Caller,
        outcome: Outcome,
        reason: ReasonCode,
    ) -> SendRecord<'a> {
        SendRecord {
            core_id: None,
            address,
            created_ms: None,
            landed_created_ms: None,
            send_mode: None,
            preflight_status: None,
            outcome,
            reason,
            text,
            argument: None,
            caller,
            confirmed: None,
        }
    }
}

/// The address of a send attempt as the audit records it.
#[derive(Debug, Clone, Copy)]
pub enum RecordedAddress<'a> {
    /// One a terminal can have (bounded, printable): recorded as it is.
    Named(&'a str),
    /// A string no terminal can have (too long, or holding a quote, a
    /// line break, a control or format character): only its length and
    /// SHA-256 are recorded.
    Unusable(&'a str),
    /// The call named no address string.
    Absent,
}

/// One audit line as written.
#[derive(Serialize)]
struct Line<'a> {
    audit: &'static str,
    at_ms: u128,
    core_id: Option<&'a str>,
    address: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address_chars: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    address_sha256: Option<String>,
    created_ms: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    landed_created_ms: Option<i64>,
    send_mode: Option<SendMode>,
    preflight_status: Option<TerminalStatus>,
    outcome: Outcome,
    reason: ReasonCode,
    #[serde(skip_serializing_if = "Option::is_none")]
    argument: Option<&'a str>,
    chars: Option<usize>,
    sha256: Option<String>,
    caller: &'a Who,
    #[serde(skip_serializing_if = "Option::is_none")]
    confirmed: Option<&'a Confirmation>,
}

/// How the human's confirmation reached this server: `elicitation`
/// (asked during the call) or `input_required` (the client's retry).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ConfirmVia {
    /// `elicitation/create` during the call (a session, before 2026-07-28).
    Elicitation,
    /// An input-required result, answered by the client's retry (2026-07-28).
    InputRequired,
}

/// A send the human confirmed: how, and through which client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Confirmation {
    /// How the answer came.
    pub via: ConfirmVia,
    /// The MCP client that asked the human, as it names itself ("name
    /// version"), escaped; null when it gave no name.
    pub client: Option<String>,
}

/// What came of a send attempt: `sent`, `not_sent` or `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// hc accepted the input (the task is not necessarily done).
    Sent,
    /// Nothing was written.
    NotSent,
    /// The input may or may not have landed: read the screen before deciding.
    Unknown,
}

impl Outcome {
    /// The outcome as the tool and the audit line spell it, e.g. `not_sent`.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Sent => "sent",
            Outcome::NotSent => "not_sent",
            Outcome::Unknown => "unknown",
        }
    }
}

/// The stable, machine-readable reason of every outcome: `accepted` and
/// `accepted_other_lifetime` (the input landed in another lifetime at the
/// same address: isError) are sent; `post_dispatch_failure` and
/// `internal_error` are unknown; every other one is not sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReasonCode {
    /// sent: hc accepted the input into the approved lifetime.
    Accepted,
    /// sent, and isError: hc accepted the input into ANOTHER lifetime at
    /// the same address (the approved one ended just before).
    AcceptedOtherLifetime,
    /// not_sent: an argument is missing, of the wrong type or malformed
    /// (an address no terminal can have, a repeated argument); the audit
    /// line names it.
    InvalidArguments,
    /// not_sent: the caller may only read (no send scope).
    InsufficientScope,
    /// not_sent: the audit log cannot be written.
    AuditUnavailable,
    /// not_sent: `text` is empty.
    TextEmpty,
    /// not_sent: `text` has more than 16,000 characters.
    TextTooLong,
    /// not_sent: `text` holds a control character (TAB and LF too, unless the
    /// lifetime takes multi-line prompts).
    ControlCharacter,
    /// not_sent: the last reload found an invalid config.
    ConfigInvalid,
    /// not_sent: no `coreId` is configured.
    NoCoreId,
    /// not_sent: the request was cancelled before dispatch.
    Cancelled,
    /// not_sent: hc has no terminal at the address.
    NotFound,
    /// not_sent: the preflight `terminal.get` failed (hc down, a timeout...).
    PreflightFailed,
    /// not_sent: the terminal is on a machine the config's `machines` does
    /// not show.
    MachineHidden,
    /// not_sent: the terminal's machine is not listed connected (or hc
    /// answered `machine_unavailable` before forwarding anything).
    MachineUnavailable,
    /// not_sent: the terminal's machine runs another core than the one its
    /// approval recorded (`machineCoreId`).
    MachineChanged,
    /// not_sent: hc's core_id is not the configured `coreId` (hc restarted).
    CoreIdMismatch,
    /// not_sent: `created_ms` was given and the live terminal is another lifetime.
    LifetimeMismatch,
    /// not_sent: the terminal's program has exited.
    Finished,
    /// not_sent: the live (address, created_ms) is not on `sendAllowlist`.
    NotApproved,
    /// not_sent: `normal` mode, and the preflight status is neither idle nor done.
    StatusNotAllowed,
    /// not_sent: hc could not be reached to send; nothing was written.
    DispatchFailed,
    /// not_sent: the adapter's own earlier sends held its sends' share of
    /// connections to hc for longer than `timeoutMs`; nothing was written.
    SendsQueued,
    /// not_sent: hc's atomic `if` guard refused; nothing was written.
    StatusMismatch,
    /// not_sent: hc answered `started: false`: it did not start the
    /// delivery (the input held the user's draft) and typed nothing.
    NotStarted,
    /// not_sent: the approval asks a human; the 2026-07-28 client was asked
    /// (an input-required result) and retries with the answer.
    ConfirmationRequired,
    /// not_sent: the human declined the prompt.
    ConfirmationDeclined,
    /// not_sent: the human dismissed the question.
    ConfirmationCancelled,
    /// not_sent: no answer within `confirmTimeoutMs`.
    ConfirmationTimeout,
    /// not_sent: this client cannot ask a human (no form elicitation, or a
    /// stateless HTTP request before 2026-07-28).
    ConfirmationUnavailable,
    /// not_sent: the retry's confirmation is forged, for another call, or used.
    ConfirmationInvalid,
    /// unknown: the request reached hc and no valid answer came back.
    PostDispatchFailure,
    /// unknown: the adapter failed inside the attempt (not_sent when it
    /// failed before dispatch).
    InternalError,
    /// unknown: `serve` stopped (SIGTERM or SIGINT) after dispatch, before
    /// hc answered (not_sent when it stopped before dispatch).
    ServerStopping,
}

impl ReasonCode {
    /// The reason as the tool and the audit line spell it, e.g. `not_approved`.
    pub fn as_str(self) -> &'static str {
        match self {
            ReasonCode::Accepted => "accepted",
            ReasonCode::AcceptedOtherLifetime => "accepted_other_lifetime",
            ReasonCode::InvalidArguments => "invalid_arguments",
            ReasonCode::InsufficientScope => "insufficient_scope",
            ReasonCode::AuditUnavailable => "audit_unavailable",
            ReasonCode::TextEmpty => "text_empty",
            ReasonCode::TextTooLong => "text_too_long",
            ReasonCode::ControlCharacter => "control_character",
            ReasonCode::ConfigInvalid => "config_invalid",
            ReasonCode::NoCoreId => "no_core_id",
            ReasonCode::Cancelled => "cancelled",
            ReasonCode::NotFound => "not_found",
            ReasonCode::PreflightFailed => "preflight_failed",
            ReasonCode::MachineHidden => "machine_hidden",
            ReasonCode::MachineUnavailable => "machine_unavailable",
            ReasonCode::MachineChanged => "machine_changed",
            ReasonCode::CoreIdMismatch => "core_id_mismatch",
            ReasonCode::LifetimeMismatch => "lifetime_mismatch",
            ReasonCode::Finished => "finished",
            ReasonCode::NotApproved => "not_approved",
            ReasonCode::StatusNotAllowed => "status_not_allowed",
            ReasonCode::DispatchFailed => "dispatch_failed",
            ReasonCode::SendsQueued => "sends_queued",
            ReasonCode::StatusMismatch => "status_mismatch",
            ReasonCode::NotStarted => "not_started",
            ReasonCode::ConfirmationRequired => "confirmation_required",
            ReasonCode::ConfirmationDeclined => "confirmation_declined",
            ReasonCode::ConfirmationCancelled => "confirmation_cancelled",
            ReasonCode::ConfirmationTimeout => "confirmation_timeout",
            ReasonCode::ConfirmationUnavailable => "confirmation_unavailable",
            ReasonCode::ConfirmationInvalid => "confirmation_invalid",
            ReasonCode::PostDispatchFailure => "post_dispatch_failure",
            ReasonCode::InternalError => "internal_error",
            ReasonCode::ServerStopping => "server_stopping",
        }
    }
}

/// The JSON of one record, with every hazardous character escaped.
pub(super) fn line(record: &SendRecord<'_>) -> String {
    let (address, unusable) = match record.address {
        RecordedAddress::Named(address) => (Some(address), None),
        RecordedAddress::Unusable(address) => (None, Some(address)),
        RecordedAddress::Absent => (None, None),
    };
    let line = Line {
        audit: "send_prompt",
        at_ms: now_ms(),
        core_id: record.core_id,
        address,
        address_chars: unusable.map(|a| a.chars().count()),
        address_sha256: unusable.map(sha256_hex),
        created_ms: record.created_ms,
        landed_created_ms: record.landed_created_ms,
        send_mode: record.send_mode,
        preflight_status: record.preflight_status,
        outcome: record.outcome,
        reason: record.reason,
        argument: record.argument,
        chars: record.text.map(|t| t.chars().count()),
        sha256: record.text.map(sha256_hex),
        caller: record.caller.who(),
        confirmed: record.confirmed,
    };
    let json = serde_json::to_string(&line).expect("an audit line always encodes");
    escape::json(&json).into_owned()
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_the_digest_never_the_text_and_no_raw_hazards() {
        let record = SendRecord {
            core_id: Some("c1"),
            address: RecordedAddress::Named("t\u{202e}1"),
            created_ms: Some(5),
            landed_created_ms: None,
            send_mode: Some(SendMode::IdleOnly),
            preflight_status: Some(TerminalStatus::Idle),
            outcome: Outcome::Sent,
            reason: ReasonCode::Accepted,
            text: Some("secret prompt"),
            argument: None,
            caller: &Caller::oauth(Some("user\u{1b}1"), Some("client-1"), true),
            confirmed: None,
        };
        let line = line(&record);
        assert!(!line.contains("secret"), "{line}");
        assert!(line.contains(&sha256_hex("secret prompt")));
        assert!(line.contains("t\\u202e1"), "{line}");
        let parsed: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(parsed["audit"], "send_prompt");
        assert_eq!(parsed["chars"], 13);
        assert_eq!(parsed["preflight_status"], "idle");
        assert_eq!(parsed["send_mode"], "idle-only");
        assert!(
            !line.contains('\u{1b}'),
            "the caller's sub is escaped: {line}"
        );
        assert_eq!(
            parsed["caller"],
            serde_json::json!({"kind": "oauth", "sub": "user\u{1b}1", "client_id": "client-1"})
        );
    }
}
