//! `send_prompt`: the only tool that writes. Every refusal happens before
//! dispatch and is NOT SENT by construction; after dispatch only hc's
//! validated `status_mismatch` is NOT SENT and everything else is UNKNOWN
//! (contract section 5). Never retried, never replayed. The steps are in
//! `pipeline`, the verdict and its classification in `verdict`; this file
//! is the tool's face: arguments, output, and the one audit line.
//!
//! The attempt runs in its own task: a cancelled or dropped MCP request
//! cannot cut it between dispatch and classification, and every attempt
//! leaves exactly one audit line.

mod pipeline;
pub mod verdict;

use std::sync::Arc;

use rmcp::model::{CallToolResult, ContentBlock};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use super::Tools;
use super::error::structured;
use crate::audit::SendRecord;
use crate::config::SendMode;
use crate::escape::printable;
use crate::hc::wire::TerminalStatus;
use pipeline::Attempt;
use verdict::{Accepted, Verdict};

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SendPromptArgs {
    /// Terminal address from list_sessions, e.g. "t1". Must be send_approved.
    pub address: String,
    /// The prompt: 1-16000 characters, one line: no control characters (no
    /// ESC, CR, NUL, DEL, C1), and no TAB or LF unless list_sessions shows
    /// multiline_allowed for the terminal. It is pasted, then submitted with
    /// the terminal's own submit key.
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

pub async fn run(tools: Arc<Tools>, args: SendPromptArgs, ct: CancellationToken) -> CallToolResult {
    let task = tokio::spawn(async move {
        let loaded = tools.app().loaded();
        let mode = loaded.config().send_mode();
        let attempt = pipeline::attempt(&tools, &loaded, &args, &ct).await;
        let code = attempt.verdict.code();
        let output = SendPromptOutput::new(mode, &args, attempt);
        tools.app().audit().record(&SendRecord {
            core_id: output.core_id.as_deref(),
            address: &output.address,
            created_ms: output.created_ms,
            send_mode: output.send_mode,
            preflight_status: output.preflight_status,
            outcome: output.outcome.as_str(),
            reason: code.as_str(),
            text: &args.text,
        });
        output
    });
    match task.await {
        Ok(output) => {
            let text = render(&output);
            structured(&output, text, output.outcome != Outcome::Sent)
        }
        // The attempt task panicked; whether it dispatched is not known.
        Err(e) => CallToolResult::error(vec![ContentBlock::text(format!(
            "internal error during send_prompt ({e}); the input may or may not have landed: read the screen before deciding"
        ))]),
    }
}

impl SendPromptOutput {
    /// The output of one attempt, built once from its verdict.
    fn new(mode: SendMode, args: &SendPromptArgs, attempt: Attempt) -> SendPromptOutput {
        let Attempt { preflight, verdict } = attempt;
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
        if let Verdict::Sent(Accepted {
            other_lifetime: Some(actual),
            ..
        }) = &verdict
        {
            tracing::warn!(address = %printable(&args.address), approved_created_ms = created_ms, actual_created_ms = actual, "input landed in a new terminal lifetime at the same address");
        }
        SendPromptOutput {
            outcome,
            reason_code: verdict.code().as_str().to_owned(),
            reason: verdict.reason(&args.address, created_ms),
            send_mode: mode,
            preflight_status: preflight.as_ref().map(|p| p.status),
            atomic_status_guard: preflight
                .as_ref()
                .and_then(|p| p.guard)
                .map(|g| g.as_str().to_owned()),
            core_status,
            core_status_seq,
            core_id: preflight.map(|p| p.core_id.to_string()),
            address: args.address.clone(),
            created_ms,
            chars: args.text.chars().count(),
        }
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
        printable(&out.reason),
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
