//! The content-free audit record: one line per send attempt, with a SHA-256
//! of the prompt instead of the prompt. Never the text, never the screen.

use sha2::{Digest, Sha256};

use crate::tools::send_prompt::SendPromptOutput;

/// Logs one send attempt at target `audit`.
pub fn record_send(out: &SendPromptOutput, text: &str) {
    let digest = Sha256::digest(text.as_bytes());
    let sha256: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    tracing::info!(
        target: "audit",
        core_id = out.core_id.as_deref().unwrap_or("-"),
        address = %crate::inspect::printable(&out.address),
        created_ms = out.created_ms,
        send_mode = out.send_mode.as_str(),
        preflight_status = out.preflight_status.map(|s| s.as_str()),
        outcome = out.outcome.as_str(),
        reason = %out.reason_code,
        chars = out.chars,
        sha256 = %sha256,
        "send_prompt"
    );
}
