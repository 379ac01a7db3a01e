//! The content-free audit record: one line per send attempt, with a SHA-256
//! of the prompt instead of the prompt. Never the text, never the screen.
//! The tool that sends fills a [`SendRecord`]; this module only writes it.

use sha2::{Digest, Sha256};

use crate::config::SendMode;
use crate::escape::printable;
use crate::hc::wire::TerminalStatus;

/// What is recorded of one send attempt.
#[derive(Debug, Clone, Copy)]
pub struct SendRecord<'a> {
    /// The core that answered the preflight, when one did.
    pub core_id: Option<&'a str>,
    pub address: &'a str,
    pub created_ms: Option<i64>,
    pub send_mode: SendMode,
    pub preflight_status: Option<TerminalStatus>,
    /// `sent`, `not_sent` or `unknown`.
    pub outcome: &'static str,
    /// The reason code.
    pub reason: &'static str,
    /// The prompt: only its length and digest are recorded.
    pub text: &'a str,
}

/// Logs one send attempt at target `audit`.
pub fn record_send(record: &SendRecord<'_>) {
    tracing::info!(
        target: "audit",
        core_id = record.core_id.unwrap_or("-"),
        address = %printable(record.address),
        created_ms = record.created_ms,
        send_mode = record.send_mode.as_str(),
        preflight_status = record.preflight_status.map(TerminalStatus::as_str),
        outcome = record.outcome,
        reason = %record.reason,
        chars = record.text.chars().count(),
        sha256 = %sha256_hex(record.text),
        "send_prompt"
    );
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
