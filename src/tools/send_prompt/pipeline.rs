//! One send attempt, top to bottom: `check_input` (text and config, no I/O)
//! → the audit file writable → (a 2026-07-28 retry: its answer opened) →
//! the per-terminal lock → `preflight` (`terminal.get`) → `check_target`
//! (core, lifetime, approval, mode; no I/O) → (an approval that asks for
//! confirmation: the human asked with the lock released, then the lock, the
//! preflight and every check again) → `dispatch` (the one `terminal.send`)
//! → [`classify`]. Every step before dispatch can only refuse, so a refusal
//! is NOT SENT by construction.

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::SendPromptArgs;
use super::confirm::{Asked, Asking, Confirmation, Confirmed, Question, Timeouts};
use super::preflight::{Preflight, preflight};
use super::verdict::{Refusal, Verdict, classify};
use crate::app::Loaded;
use crate::caller::Caller;
use crate::config::{Config, SendMode, TerminalLifetime};
use crate::hc::wire::{SendGuard, TerminalStatus};
use crate::hc::{CoreId, SendRequest};
use crate::tools::Tools;
use crate::tools::text::{MAX_PROMPT_CHARS, first_line_control, forbidden_control};

/// What passed every check before dispatch: the approved lifetime to send
/// to, and the status hc is to compare atomically with the write.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Cleared {
    pub lifetime: TerminalLifetime,
    pub guard: Option<SendGuard>,
    /// The approval's mode (its own, else the top-level one).
    pub mode: SendMode,
    /// The approval asks a human before each prompt.
    pub confirm: bool,
}

/// A finished attempt: what the preflight saw (if it ran), the guard it
/// was dispatched with (if it was), and the verdict.
#[derive(Debug)]
pub(super) struct Attempt {
    pub preflight: Option<Preflight>,
    pub guard: Option<SendGuard>,
    /// The mode the target's approval gave, once it was cleared.
    pub mode: Option<SendMode>,
    /// How the human confirmed it, when one did.
    pub confirmation: Option<Confirmation>,
    pub verdict: Verdict,
}

impl Attempt {
    fn refused(preflight: Option<Preflight>, refusal: Refusal) -> Attempt {
        Attempt {
            preflight,
            guard: None,
            mode: None,
            confirmation: None,
            verdict: Verdict::NotSent(refusal),
        }
    }
}

pub(super) async fn attempt(
    tools: &Tools,
    loaded: &Loaded,
    args: &SendPromptArgs,
    caller: &Caller,
    asking: &Asking,
    ct: &CancellationToken,
) -> Attempt {
    // The transport refuses such a caller first (HTTP 403); this holds
    // whatever the path.
    if !caller.may_send() {
        return Attempt::refused(None, Refusal::InsufficientScope);
    }
    let (config, core_id) = match check_input(args, loaded) {
        Ok(checked) => checked,
        Err(refusal) => return Attempt::refused(None, refusal),
    };
    // Retries any audit line still outstanding: no send goes unaudited.
    if !tools.app().audit().ready() {
        return Attempt::refused(None, Refusal::AuditUnavailable);
    }
    let timeout = config.confirm_timeout();
    let timeouts = Timeouts {
        state: timeout,
        call: config.confirm_call_timeout(),
    };
    let mut confirmed: Option<Confirmed> = None;
    if asking.is_retry() {
        match tools
            .confirmations()
            .answered(asking, args, caller, timeout)
        {
            Ok(answer) => confirmed = Some(answer),
            Err(refusal) => return Attempt::refused(None, refusal),
        }
    }
    // At most two passes: the second after the human confirmed.
    loop {
        let serialized = tokio::select! {
            biased;
            () = ct.cancelled() => return Attempt::refused(None, Refusal::Cancelled),
            guard = tools.send_locks().lock(&args.address) => guard,
        };
        let preflight = tokio::select! {
            biased;
            () = ct.cancelled() => return Attempt::refused(None, Refusal::Cancelled),
            found = preflight(tools, &args.address) => match found {
                Ok(preflight) => preflight,
                Err(refusal) => return Attempt::refused(None, refusal),
            },
        };
        let cleared = match check_target(config, core_id, args, &preflight) {
            Ok(cleared) => cleared,
            Err(refusal) => return refused_with_mode(config, args, preflight, refusal),
        };
        let refuse = |preflight, refusal| Attempt {
            mode: Some(cleared.mode),
            ..Attempt::refused(Some(preflight), refusal)
        };
        if cleared.confirm {
            match &confirmed {
                // What the human confirmed must be what is live now.
                Some(answer)
                    if answer.core_id != preflight.core_id
                        || answer.created_ms != preflight.created_ms =>
                {
                    let refusal = Refusal::LifetimeMismatch {
                        address: args.address.clone(),
                        expected: answer.created_ms,
                        actual: preflight.created_ms,
                    };
                    return refuse(preflight, refusal);
                }
                Some(_) => {}
                None => {
                    // Nobody waits on this terminal's lock while a human reads.
                    drop(serialized);
                    let question = Question {
                        args,
                        caller,
                        preflight: &preflight,
                        mode: cleared.mode,
                    };
                    let asked = tools
                        .confirmations()
                        .ask(asking, &question, timeouts, ct)
                        .await;
                    match asked {
                        Ok(Asked::Confirmed(answer)) => {
                            confirmed = Some(answer);
                            continue;
                        }
                        Ok(Asked::Pending(question)) => {
                            return refuse(preflight, Refusal::ConfirmationPending(question));
                        }
                        Err(refusal) => return refuse(preflight, refusal),
                    }
                }
            }
        }
        if ct.is_cancelled() {
            return refuse(preflight, Refusal::Cancelled);
        }
        let Cleared {
            lifetime,
            guard,
            mode,
            confirm,
        } = cleared;
        let request = SendRequest {
            address: &lifetime.address,
            text: &args.text,
            guard,
        };
        let answer = tools.app().client().send(request, core_id).await;
        let verdict = classify(answer.map(|a| a.value), lifetime.created_ms);
        drop(serialized);
        return Attempt {
            preflight: Some(preflight),
            guard,
            mode: Some(mode),
            confirmation: confirmed.filter(|_| confirm).map(|c| c.confirmation),
            verdict,
        };
    }
}

/// Refused after the approval was found (a mode, a line control): the
/// answer names the approval's mode.
fn refused_with_mode(
    config: &Config,
    args: &SendPromptArgs,
    preflight: Preflight,
    refusal: Refusal,
) -> Attempt {
    let lifetime = TerminalLifetime {
        address: args.address.clone(),
        created_ms: preflight.created_ms,
    };
    let mode = config
        .approval(&preflight.core_id, &lifetime)
        .map(|a| a.mode(config.send_mode()));
    Attempt {
        mode,
        ..Attempt::refused(Some(preflight), refusal)
    }
}

/// The text is sendable and the config allows sends at all. A TAB or LF is
/// refused here, before any hc call, unless some approval at the address
/// takes multi-line prompts (`check_target` then decides on the live one).
fn check_input<'a>(
    args: &SendPromptArgs,
    loaded: &'a Loaded,
) -> Result<(&'a Config, &'a CoreId), Refusal> {
    let text = &args.text;
    if text.is_empty() {
        return Err(Refusal::TextEmpty);
    }
    let chars = text.chars().count();
    if chars > MAX_PROMPT_CHARS {
        return Err(Refusal::TextTooLong { chars });
    }
    if let Some((index, character)) = forbidden_control(text) {
        return Err(Refusal::ControlCharacter { index, character });
    }
    let config = loaded.approvals().map_err(|why| Refusal::ConfigInvalid {
        why: Arc::clone(why),
    })?;
    let flag = || config.operator_flag().to_owned();
    let core_id = config
        .core_id()
        .ok_or_else(|| Refusal::NoCoreId { flag: flag() })?;
    if let Some((index, character)) = first_line_control(text)
        && !config.multiline_possible(&args.address)
    {
        return Err(Refusal::LineControl {
            index,
            character,
            flag: flag(),
        });
    }
    Ok((config, core_id))
}

/// Core identity, lifetime, approval and mode, on what the preflight saw.
fn check_target(
    config: &Config,
    core_id: &CoreId,
    args: &SendPromptArgs,
    preflight: &Preflight,
) -> Result<Cleared, Refusal> {
    if preflight.core_id != *core_id {
        return Err(Refusal::CoreIdMismatch {
            live: preflight.core_id.clone(),
            configured: core_id.clone(),
            flag: config.operator_flag().to_owned(),
        });
    }
    if let Some(expected) = args.created_ms
        && expected != preflight.created_ms
    {
        return Err(Refusal::LifetimeMismatch {
            address: args.address.clone(),
            expected,
            actual: preflight.created_ms,
        });
    }
    if preflight.finished {
        return Err(Refusal::Finished {
            address: args.address.clone(),
        });
    }
    let lifetime = TerminalLifetime {
        address: args.address.clone(),
        created_ms: preflight.created_ms,
    };
    let Some(approval) = config.approval(&preflight.core_id, &lifetime) else {
        return Err(Refusal::NotApproved {
            address: lifetime.address,
            created_ms: lifetime.created_ms,
            status: preflight.status,
            flag: config.operator_flag().to_owned(),
        });
    };
    if let Some((index, character)) = first_line_control(&args.text)
        && !approval.multiline
    {
        return Err(Refusal::LineControl {
            index,
            character,
            flag: config.operator_flag().to_owned(),
        });
    }
    let mode = approval.mode(config.send_mode());
    let guard = guard_for(mode, preflight.status)?;
    Ok(Cleared {
        lifetime,
        guard,
        mode,
        confirm: approval.confirm,
    })
}

/// The send mode's table: which preflight statuses may be sent to, and
/// with which atomic guard.
fn guard_for(mode: SendMode, status: TerminalStatus) -> Result<Option<SendGuard>, Refusal> {
    match (mode, status) {
        (SendMode::IdleOnly, _) | (SendMode::Normal, TerminalStatus::Idle) => {
            Ok(Some(SendGuard::Idle))
        }
        (SendMode::Normal, TerminalStatus::Done) => Ok(None),
        (SendMode::Normal, status) => Err(Refusal::StatusNotAllowed { status }),
    }
}

#[cfg(test)]
#[path = "pipeline_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "pipeline_io_tests.rs"]
mod io_tests;
