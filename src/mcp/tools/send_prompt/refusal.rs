//! Why nothing was sent: every [`Refusal`], its [`ReasonCode`] and the
//! words the caller reads, each saying what to do next. All but one are
//! decided before dispatch; `StatusMismatch` is hc's validated refusal.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use rmcp::model::InputRequiredResult;

use super::machine::MachineRefusal;
use crate::audit::ReasonCode;
use crate::config::{ConfigError, SendMode};
use crate::hc::wire::TerminalStatus;
use crate::hc::{CoreError, CoreId};
use crate::mcp::text::MAX_PROMPT_CHARS;

/// Why nothing was sent. Every variant is NOT SENT: all but the last are
/// decided before dispatch, and `StatusMismatch` is hc's validated refusal.
#[derive(Debug)]
pub(crate) enum Refusal {
    /// The caller's token may only read (no send scope).
    InsufficientScope,
    /// `auditLog` could not be written: no send goes unaudited.
    AuditUnavailable,
    TextEmpty,
    TextTooLong {
        chars: usize,
    },
    ControlCharacter {
        index: usize,
        character: char,
    },
    /// TAB or LF to a lifetime not approved for multi-line prompts.
    LineControl {
        index: usize,
        character: char,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
    /// The last reload found an invalid config.
    ConfigInvalid {
        why: Arc<ConfigError>,
    },
    NoCoreId {
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
    /// The MCP request was cancelled before dispatch.
    Cancelled,
    /// The preflight `terminal.get` found no terminal at the address.
    NotFound(CoreError),
    /// The preflight `terminal.get` failed otherwise.
    PreflightFailed(CoreError),
    /// The target's machine may not take the send (hidden, not connected,
    /// or running another core than the approval's).
    Machine(MachineRefusal),
    /// The preflight was answered by another core than `coreId`.
    CoreIdMismatch {
        live: CoreId,
        configured: CoreId,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
    LifetimeMismatch {
        address: String,
        expected: i64,
        actual: i64,
    },
    Finished {
        address: String,
    },
    /// The live lifetime is not approved; `status` is what it reports
    /// (`unknown`: nothing, so no approval would let a prompt through).
    NotApproved {
        address: String,
        created_ms: i64,
        status: TerminalStatus,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
    /// A preflight status the approval's mode cannot send to: `normal`
    /// and neither idle nor done; or `idle-only`, not idle, and a human
    /// would be asked to confirm (never asked a question whose answer
    /// cannot lead to a send).
    StatusNotAllowed {
        status: TerminalStatus,
        mode: SendMode,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
    /// The connection picked to send belongs to another core (hc restarted
    /// after the preflight); nothing was written.
    CoreChanged {
        expected: CoreId,
        actual: CoreId,
        /// ` --config PATH` for the operator's command, or empty.
        flag: String,
    },
    /// The adapter's own sends held its sends' share of the pool past
    /// `timeoutMs`; nothing was dispatched.
    SendsQueued(CoreError),
    /// hc could not be reached to send; nothing was written.
    DispatchFailed(CoreError),
    /// hc's atomic guard refused: nothing was written.
    StatusMismatch {
        actual: Option<TerminalStatus>,
        status_seq: Option<u64>,
    },
    /// hc took the send but did not start the delivery (`started: false`):
    /// nothing was typed, and it is never resent.
    NotStarted,
    /// The approval asks a human: the 2026-07-28 client gets this question
    /// and retries with the answer.
    ConfirmationPending(Box<InputRequiredResult>),
    /// The human declined (or accepted without confirming).
    ConfirmationDeclined,
    /// The human dismissed the question.
    ConfirmationCancelled,
    /// No answer in time.
    ConfirmationTimeout {
        timeout: Duration,
        /// The config key that sets `timeout`.
        key: &'static str,
    },
    /// This client cannot ask a human.
    ConfirmationUnavailable {
        why: String,
    },
    /// The retry's confirmation does not hold.
    ConfirmationInvalid {
        why: String,
    },
}

impl Refusal {
    pub(crate) fn code(&self) -> ReasonCode {
        match self {
            Refusal::InsufficientScope => ReasonCode::InsufficientScope,
            Refusal::AuditUnavailable => ReasonCode::AuditUnavailable,
            Refusal::TextEmpty => ReasonCode::TextEmpty,
            Refusal::TextTooLong { .. } => ReasonCode::TextTooLong,
            Refusal::ControlCharacter { .. } | Refusal::LineControl { .. } => {
                ReasonCode::ControlCharacter
            }
            Refusal::ConfigInvalid { .. } => ReasonCode::ConfigInvalid,
            Refusal::NoCoreId { .. } => ReasonCode::NoCoreId,
            Refusal::Cancelled => ReasonCode::Cancelled,
            Refusal::NotFound(_) => ReasonCode::NotFound,
            Refusal::PreflightFailed(_) => ReasonCode::PreflightFailed,
            Refusal::Machine(MachineRefusal::Hidden { .. }) => ReasonCode::MachineHidden,
            Refusal::Machine(MachineRefusal::Unavailable { .. }) => ReasonCode::MachineUnavailable,
            Refusal::Machine(MachineRefusal::Changed { .. }) => ReasonCode::MachineChanged,
            Refusal::CoreIdMismatch { .. } | Refusal::CoreChanged { .. } => {
                ReasonCode::CoreIdMismatch
            }
            Refusal::LifetimeMismatch { .. } => ReasonCode::LifetimeMismatch,
            Refusal::Finished { .. } => ReasonCode::Finished,
            Refusal::NotApproved { .. } => ReasonCode::NotApproved,
            Refusal::StatusNotAllowed { .. } => ReasonCode::StatusNotAllowed,
            Refusal::DispatchFailed(_) => ReasonCode::DispatchFailed,
            Refusal::SendsQueued(_) => ReasonCode::SendsQueued,
            Refusal::StatusMismatch { .. } => ReasonCode::StatusMismatch,
            Refusal::NotStarted => ReasonCode::NotStarted,
            Refusal::ConfirmationPending(_) => ReasonCode::ConfirmationRequired,
            Refusal::ConfirmationDeclined => ReasonCode::ConfirmationDeclined,
            Refusal::ConfirmationCancelled => ReasonCode::ConfirmationCancelled,
            Refusal::ConfirmationTimeout { .. } => ReasonCode::ConfirmationTimeout,
            Refusal::ConfirmationUnavailable { .. } => ReasonCode::ConfirmationUnavailable,
            Refusal::ConfirmationInvalid { .. } => ReasonCode::ConfirmationInvalid,
        }
    }
}

/// What happened and what to do next, as the model reads it.
impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Refusal::InsufficientScope => write!(
                f,
                "this caller may only read: send_prompt needs the send scope (or HERDR_MCP_TOKEN); nothing was sent"
            ),
            Refusal::AuditUnavailable => write!(
                f,
                "the audit log (auditLog) cannot be written, and no send goes unaudited: nothing was sent. The operator checks the disk and the file (the server log says why); every attempt retries the write, and sends resume once it succeeds"
            ),
            Refusal::TextEmpty => write!(f, "text is empty"),
            Refusal::TextTooLong { chars } => write!(
                f,
                "text has {chars} characters; at most {MAX_PROMPT_CHARS} are sent"
            ),
            Refusal::ControlCharacter { index, character } => write!(
                f,
                "text contains control character U+{:04X} at character {index}; control characters are never sent (no ESC, CR, NUL, DEL or C1; TAB and LF only where the operator allows multi-line prompts)",
                u32::from(*character)
            ),
            Refusal::LineControl {
                index,
                character,
                flag,
            } => write!(
                f,
                "text contains {} (U+{:04X}) at character {index}, and this terminal takes one-line prompts only (multiline_allowed is false): without bracketed paste each line break is an Enter into whatever the line before started, and a TAB is a shell's completion key. Send one line; multi-line prompts need the operator's approval for this terminal (herdr-core-mcp allow --multiline{flag} ADDRESS), given only for programs that read a paste as one input",
                if *character == '\t' { "TAB" } else { "LF" },
                u32::from(*character)
            ),
            Refusal::ConfigInvalid { why } => write!(
                f,
                "sends are off until the config is fixed and reloaded (SIGHUP): {why}"
            ),
            Refusal::NoCoreId { flag } => write!(
                f,
                "no coreId is configured, so nothing can be sent: the operator approves terminals with herdr-core-mcp allow{flag} ADDRESS, which also sets coreId"
            ),
            Refusal::Cancelled => write!(
                f,
                "the request was cancelled before dispatch; nothing was sent"
            ),
            Refusal::NotFound(e) | Refusal::PreflightFailed(e) => {
                write!(f, "preflight terminal.get failed: {e}")
            }
            Refusal::Machine(refusal) => write!(f, "{refusal}"),
            Refusal::CoreIdMismatch {
                live,
                configured,
                flag,
            } => write!(
                f,
                "hc's core_id is {live}, not the configured coreId {configured} (hc restarted?); nothing was sent: the operator approves the terminal again with herdr-core-mcp allow{flag} ADDRESS, which updates coreId"
            ),
            Refusal::LifetimeMismatch {
                address,
                expected,
                actual,
            } => write!(
                f,
                "the terminal at {address} has created_ms {actual}, not {expected}: it is another terminal lifetime"
            ),
            Refusal::Finished { address } => write!(f, "the program in {address} has exited"),
            Refusal::NotApproved {
                address,
                created_ms,
                status: TerminalStatus::Unknown,
                ..
            } => write!(
                f,
                "terminal {address} (created_ms {created_ms}) is not on sendAllowlist, and its program reports no status (a shell, or a program that does not speak OSC 7501); nothing was sent. Prompts go only to a program that reports idle (or done), so approving this terminal would not let one through"
            ),
            Refusal::NotApproved {
                address,
                created_ms,
                flag,
                ..
            } => write!(
                f,
                "terminal {address} (created_ms {created_ms}) is not on sendAllowlist; nothing was sent: only the operator can approve it, with herdr-core-mcp allow{flag} {address}"
            ),
            Refusal::StatusNotAllowed {
                status,
                mode: SendMode::Normal,
                ..
            } => write!(
                f,
                "the terminal is {status}; normal mode sends only to idle or done terminals, so nothing was sent. Wait until it is idle or done (wait_for_status with until: [\"idle\", \"done\"]) and send then"
            ),
            Refusal::StatusNotAllowed {
                status: TerminalStatus::Done,
                flag,
                ..
            } => write!(
                f,
                "the terminal is done, not idle, and idle-only mode sends only to an idle terminal, so the human who confirms prompts to it was not asked and nothing was sent. This agent reports done after its work and may not become idle by itself: if follow-up prompts are wanted, the operator approves it for them with: herdr-core-mcp allow --mode normal{flag} ADDRESS (the confirmation stays)"
            ),
            Refusal::StatusNotAllowed { status, .. } => write!(
                f,
                "the terminal is {status}, not idle, and idle-only mode sends only to an idle terminal, so the human who confirms prompts to it was not asked and nothing was sent. Wait until it is idle (wait_for_status with until: [\"idle\"]) and send then; the human is asked then"
            ),
            Refusal::CoreChanged {
                expected,
                actual,
                flag,
            } => write!(
                f,
                "hc's core_id is now {actual}, not the configured {expected} (hc restarted); nothing was sent: the operator approves the terminal again with herdr-core-mcp allow{flag} ADDRESS"
            ),
            Refusal::SendsQueued(e) => write!(f, "{e}"),
            Refusal::DispatchFailed(e) => {
                write!(f, "could not reach hc to send, nothing was sent: {e}")
            }
            Refusal::StatusMismatch { actual, .. } => write!(
                f,
                "hc refused atomically: the terminal was {}, not idle, when the input would have been written; nothing was sent. Wait until it is idle again (wait_for_status with until: [\"idle\"]) and send then; or the operator may choose sendMode normal, which also sends to done terminals without an atomic guard (README, Send modes)",
                actual.map_or("another status".to_owned(), |s| s.to_string())
            ),
            Refusal::NotStarted => write!(
                f,
                "hc did not start the delivery: the terminal's input may hold the user's draft, which hc protects; nothing was typed. It is not resent: tell the user, or wait until the terminal's input is clear and send again"
            ),
            Refusal::ConfirmationPending(_) => write!(
                f,
                "the operator asks a human to confirm each prompt to this terminal: the client was asked and retries with the answer; nothing was sent yet"
            ),
            Refusal::ConfirmationDeclined => write!(
                f,
                "the human declined this prompt; nothing was sent. Do not send it again unasked: tell the user, or change the prompt if they say so"
            ),
            Refusal::ConfirmationCancelled => {
                write!(f, "the human dismissed the confirmation; nothing was sent")
            }
            Refusal::ConfirmationTimeout { timeout, key } => write!(
                f,
                "nobody confirmed this prompt within {} s ({key}); nothing was sent",
                timeout.as_secs()
            ),
            Refusal::ConfirmationUnavailable { why } => write!(
                f,
                "the operator asks a human to confirm each prompt to this terminal, and {why}; nothing was sent (never sent unconfirmed). Use a client that supports elicitation (form mode)"
            ),
            Refusal::ConfirmationInvalid { why } => write!(
                f,
                "the confirmation was refused: {why}; nothing was sent. Call send_prompt again to be asked afresh"
            ),
        }
    }
}
