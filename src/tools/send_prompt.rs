//! `send_prompt`: the only tool that writes. Every refusal happens before
//! dispatch and is NOT SENT by construction; after dispatch only hc's
//! validated `status_mismatch` is NOT SENT and everything else is UNKNOWN
//! (contract section 5). Never retried, never replayed.
//!
//! The attempt runs in its own task: a cancelled or dropped MCP request
//! cannot cut it between dispatch and classification, and every attempt
//! leaves exactly one audit line.

use std::sync::Arc;

use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::structured;
use super::text::{MAX_PROMPT_CHARS, forbidden_control};
use crate::app::App;
use crate::audit;
use crate::config::{Config, SendMode, TerminalLifetime};
use crate::hc::wire::{ErrorKind, SendGuard, TerminalRecord, TerminalStatus};
use crate::hc::{CoreError, SendError, SendRequest};
use crate::inspect::printable;

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendPromptArgs {
    /// Terminal address from list_sessions, e.g. "t1". Must be send_approved.
    pub address: String,
    /// The prompt: 1-16000 characters; TAB and LF allowed, no other control
    /// characters (no ESC, CR, NUL, DEL, C1). It is pasted, then submitted
    /// with the terminal's own submit key.
    pub text: String,
    /// The terminal's created_ms from list_sessions. When given, nothing is
    /// sent unless the live terminal at `address` is that same lifetime.
    pub created_ms: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
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
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Sent => "sent",
            Outcome::NotSent => "not_sent",
            Outcome::Unknown => "unknown",
        }
    }
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SendPromptOutput {
    pub outcome: Outcome,
    /// Stable machine-readable reason, e.g. `not_approved`, `status_mismatch`.
    pub reason_code: String,
    /// What happened and what to do next.
    pub reason: String,
    pub send_mode: SendMode,
    /// Status from the preflight `terminal.get`, when one ran.
    pub preflight_status: Option<TerminalStatus>,
    /// `"idle"` when hc compared the status atomically with the write; null otherwise.
    pub atomic_status_guard: Option<String>,
    /// Status hc reported on acceptance (or in its status_mismatch refusal).
    pub core_status: Option<TerminalStatus>,
    /// Status sequence number hc reported with `core_status`: pass it as
    /// `after_seq` when waiting for this task to finish.
    pub core_status_seq: Option<u64>,
    pub core_id: Option<String>,
    pub address: String,
    pub created_ms: Option<i64>,
    /// Characters in `text`.
    pub chars: usize,
}

pub async fn run(app: Arc<App>, args: SendPromptArgs, ct: CancellationToken) -> CallToolResult {
    let attempt = tokio::spawn(async move {
        let output = attempt(&app, &args, &ct).await;
        audit::record_send(&output, &args.text);
        output
    });
    let output = match attempt.await {
        Ok(output) => output,
        // The attempt task panicked; whether it dispatched is not known.
        Err(e) => {
            return CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
                "internal error during send_prompt ({e}); the input may or may not have landed: read the screen before deciding"
            ))]);
        }
    };
    let text = render(&output);
    structured(&output, text, output.outcome != Outcome::Sent)
}

async fn attempt(app: &App, args: &SendPromptArgs, ct: &CancellationToken) -> SendPromptOutput {
    let config = app.config();
    let mut out = SendPromptOutput {
        outcome: Outcome::NotSent,
        reason_code: String::new(),
        reason: String::new(),
        send_mode: config.send_mode,
        preflight_status: None,
        atomic_status_guard: None,
        core_status: None,
        core_status_seq: None,
        core_id: None,
        address: args.address.clone(),
        created_ms: args.created_ms,
        chars: args.text.chars().count(),
    };
    match dispatch(app, &config, args, ct, &mut out).await {
        Ok(()) => {}
        Err(Refusal { code, reason }) => {
            out.outcome = Outcome::NotSent;
            out.reason_code = code.to_owned();
            out.reason = reason;
        }
    }
    out
}

/// A pre-dispatch refusal: NOT SENT, with its reason.
struct Refusal {
    code: &'static str,
    reason: String,
}

fn refuse(code: &'static str, reason: impl Into<String>) -> Refusal {
    Refusal {
        code,
        reason: reason.into(),
    }
}

/// Checks everything, then dispatches once. Every `Err` is pre-dispatch.
async fn dispatch(
    app: &App,
    config: &Config,
    args: &SendPromptArgs,
    ct: &CancellationToken,
    out: &mut SendPromptOutput,
) -> Result<(), Refusal> {
    check_text(&args.text, out.chars)?;
    if let Some(why) = app.sends_refused() {
        return Err(refuse(
            "config_invalid",
            format!("sends are off until the config is fixed and reloaded (SIGHUP): {why}"),
        ));
    }
    let Some(core_id) = config.core_id.as_deref() else {
        return Err(refuse(
            "no_core_id",
            "no coreId is configured, so nothing can be sent: the operator sets coreId (from inspect-core) and approves terminals",
        ));
    };
    let _serialized = tokio::select! {
        biased;
        () = ct.cancelled() => return Err(cancelled()),
        guard = app.send_locks.lock(&args.address) => guard,
    };
    let preflight = tokio::select! {
        biased;
        () = ct.cancelled() => return Err(cancelled()),
        r = app.client.get(&args.address) => r,
    };
    let preflight = preflight.map_err(|e| {
        refuse(
            if e.hc_kind() == Some(ErrorKind::NotFound) {
                "not_found"
            } else {
                "preflight_failed"
            },
            format!("preflight terminal.get failed: {e}"),
        )
    })?;
    let record = preflight.value;
    out.core_id = Some(preflight.core.core_id.clone());
    out.created_ms = Some(record.created_ms);
    out.preflight_status = Some(record.status);
    let guard = check_target(config, core_id, &preflight.core.core_id, args, &record)?;
    out.atomic_status_guard = guard.map(|g| g.as_str().to_owned());
    if ct.is_cancelled() {
        return Err(cancelled());
    }

    let request = SendRequest {
        address: &args.address,
        text: &args.text,
        guard,
    };
    match app.client.send(request, core_id).await {
        Ok(accepted) => {
            let value = accepted.value;
            out.outcome = Outcome::Sent;
            out.core_status = Some(value.status);
            out.core_status_seq = Some(value.status_seq);
            out.reason_code = "accepted".into();
            out.reason = if value.created_ms == record.created_ms {
                "hc accepted the input; the task is not necessarily done: read_output (or wait for status) to follow it".into()
            } else {
                tracing::warn!(address = %args.address, approved_created_ms = record.created_ms, actual_created_ms = value.created_ms, "input landed in a new terminal lifetime at the same address");
                format!(
                    "hc accepted the input, but into a NEW terminal at {} (created_ms {}, not the approved {}): the old one ended between preflight and send; check that terminal",
                    args.address, value.created_ms, record.created_ms
                )
            };
            Ok(())
        }
        Err(SendError::NotDispatched(CoreError::CoreChanged { expected, actual })) => Err(refuse(
            "core_id_mismatch",
            format!(
                "hc's core_id is now {actual}, not the configured {expected} (hc restarted); nothing was sent"
            ),
        )),
        Err(SendError::NotDispatched(e)) => Err(refuse(
            "dispatch_failed",
            format!("could not reach hc to send, nothing was sent: {e}"),
        )),
        Err(SendError::Dispatched(e)) if e.hc_kind() == Some(ErrorKind::StatusMismatch) => {
            if let CoreError::Rpc {
                data: Some(data), ..
            } = &e
            {
                out.core_status = data
                    .get("actual")
                    .and_then(|s| serde_json::from_value(s.clone()).ok());
                out.core_status_seq = data.get("status_seq").and_then(serde_json::Value::as_u64);
            }
            let actual = out
                .core_status
                .map_or("another status".to_owned(), |s| s.to_string());
            Err(refuse(
                "status_mismatch",
                format!(
                    "hc refused atomically: the terminal was {actual}, not idle, when the input would have been written; nothing was sent"
                ),
            ))
        }
        Err(SendError::Dispatched(e)) => {
            out.outcome = Outcome::Unknown;
            out.reason_code = "post_dispatch_failure".into();
            out.reason = format!(
                "the request reached hc but no valid acceptance came back ({e}); the input may have landed: read_output before deciding, do not resend blindly"
            );
            Ok(())
        }
    }
}

fn cancelled() -> Refusal {
    refuse(
        "cancelled",
        "the request was cancelled before dispatch; nothing was sent",
    )
}

fn check_text(text: &str, chars: usize) -> Result<(), Refusal> {
    if text.is_empty() {
        return Err(refuse("text_empty", "text is empty"));
    }
    if chars > MAX_PROMPT_CHARS {
        return Err(refuse(
            "text_too_long",
            format!("text has {chars} characters; at most {MAX_PROMPT_CHARS} are sent"),
        ));
    }
    if let Some((index, c)) = forbidden_control(text) {
        return Err(refuse(
            "control_character",
            format!(
                "text contains control character U+{:04X} at character {index}; only TAB and LF are allowed (no ESC, CR, NUL, DEL or C1)",
                u32::from(c)
            ),
        ));
    }
    Ok(())
}

/// Core identity, lifetime, approval and status checks on the preflight
/// record; returns the guard to dispatch with.
fn check_target(
    config: &Config,
    core_id: &str,
    live_core_id: &str,
    args: &SendPromptArgs,
    record: &TerminalRecord,
) -> Result<Option<SendGuard>, Refusal> {
    if live_core_id != core_id {
        return Err(refuse(
            "core_id_mismatch",
            format!(
                "hc's core_id is {live_core_id}, not the configured coreId {core_id} (hc restarted?): the operator re-approves with inspect-core"
            ),
        ));
    }
    if let Some(expected) = args.created_ms
        && expected != record.created_ms
    {
        return Err(refuse(
            "lifetime_mismatch",
            format!(
                "the terminal at {} has created_ms {}, not {expected}: it is another terminal lifetime",
                args.address, record.created_ms
            ),
        ));
    }
    if record.is_finished() {
        return Err(refuse(
            "finished",
            format!("the program in {} has exited", args.address),
        ));
    }
    let lifetime = TerminalLifetime {
        address: record.address.clone(),
        created_ms: record.created_ms,
    };
    if !config.is_send_approved(live_core_id, &lifetime) {
        return Err(refuse(
            "not_approved",
            format!(
                "terminal {} (created_ms {}) is not on sendAllowlist: the operator approves it (see inspect-core)",
                args.address, record.created_ms
            ),
        ));
    }
    match (config.send_mode, record.status) {
        (SendMode::IdleOnly, _) | (SendMode::Normal, TerminalStatus::Idle) => {
            Ok(Some(SendGuard::Idle))
        }
        (SendMode::Normal, TerminalStatus::Done) => Ok(None),
        (SendMode::Normal, status) => Err(refuse(
            "status_not_allowed",
            format!("the terminal is {status}; normal mode sends only to idle or done terminals"),
        )),
    }
}

fn render(out: &SendPromptOutput) -> String {
    let headline = match out.outcome {
        Outcome::Sent => "SENT",
        Outcome::NotSent => "NOT SENT",
        Outcome::Unknown => "UNKNOWN (input may have landed)",
    };
    let mut text = format!(
        "{headline}: {} [{}]\naddress={} created_ms={} mode={} preflight={} guard={}",
        out.reason,
        out.reason_code,
        printable(&out.address),
        out.created_ms.map_or("-".to_owned(), |c| c.to_string()),
        out.send_mode.as_str(),
        out.preflight_status
            .map_or("-".to_owned(), |s| s.to_string()),
        out.atomic_status_guard.as_deref().unwrap_or("none"),
    );
    if let (Some(status), Some(seq)) = (out.core_status, out.core_status_seq) {
        text.push_str(&format!(" core_status={status} core_status_seq={seq}"));
    }
    text
}
