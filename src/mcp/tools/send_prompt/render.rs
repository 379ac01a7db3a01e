//! The text of a `send_prompt` answer: the outcome first, in words a
//! model acts on, then what hc said, the confirmation, the turn and the
//! audit.

use super::verdict::ReasonCode;
use super::{SendPromptOutput, confirm, follow};
use crate::audit::{AuditWrite, Outcome};
use crate::config::SendMode;
use crate::escape::printable;
use crate::hc::wire::SendGuard;

/// The text rendering of `out`.
pub(super) fn render(out: &SendPromptOutput) -> String {
    let headline = match out.outcome {
        Outcome::Sent if out.reason_code == ReasonCode::AcceptedOtherLifetime => {
            "SENT, BUT TO ANOTHER TERMINAL LIFETIME"
        }
        Outcome::Sent => "SENT",
        Outcome::NotSent => "NOT SENT",
        Outcome::Unknown => "UNKNOWN (input may have landed)",
    };
    let mut text = format!(
        "{headline}: {} [{}]\naddress={} created_ms={} mode={} preflight={} guard={}",
        printable(&out.reason),
        out.reason_code.as_str(),
        printable(&out.address),
        out.created_ms.map_or("-".to_owned(), |c| c.to_string()),
        out.send_mode.map_or("-", SendMode::as_str),
        out.preflight_status
            .map_or("-".to_owned(), |s| s.to_string()),
        out.atomic_status_guard.map_or("none", SendGuard::as_str),
    );
    if let (Some(status), Some(seq)) = (out.core_status, out.core_status_seq) {
        text.push_str(&format!(" core_status={status} core_status_seq={seq}"));
    }
    if out.reason_code == ReasonCode::AcceptedOtherLifetime
        && let Some(landed) = out.landed_created_ms
    {
        text.push_str(&format!(" landed_created_ms={landed}"));
    }
    if let Some(confirmed) = &out.confirmed {
        text.push_str(&format!(
            "\nconfirmed by a human through {} ({})",
            confirmed.client.as_deref().unwrap_or("the client"),
            match confirmed.via {
                confirm::ConfirmVia::Elicitation => "elicitation",
                confirm::ConfirmVia::InputRequired => "input-required retry",
            }
        ));
    }
    if let Some(turn) = &out.turn {
        text.push_str(&follow::line(turn));
    }
    if out.audit == AuditWrite::NotWritten {
        text.push_str("\naudit: not_written (auditLog could not be written; the line is kept and written first once it can be)");
    }
    text
}
