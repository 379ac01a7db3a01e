//! What `wait_for_output` answers: the outcome, the match, and the last
//! screen's tail with its status, marked as untrusted output.

use schemars::JsonSchema;
use serde::Serialize;

use crate::escape::printable;
use crate::hc::wire::TerminalStatus;
use crate::mcp::text::shown_screen;

/// How a `wait_for_output` call ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WaitOutputOutcome {
    /// The pattern is on a changed screen (and, with quiet_ms, it has then
    /// been quiet that long).
    Matched,
    /// The screen changed and has then stayed unchanged for quiet_ms.
    Settled,
    /// Nothing qualified within timeout_ms; the last screen is returned.
    Timeout,
    /// The terminal's program exited.
    Finished,
    /// The terminal no longer exists.
    Gone,
    /// The terminal at the address is another lifetime than the one waited on.
    LifetimeMismatch,
    /// hc restarted (another core_id) during the wait: the terminal waited
    /// on is gone, even if a new one has the same address.
    CoreRestarted,
}

/// The first matching line.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct OutputMatch {
    /// Its row on the screen, from 0 at the top.
    pub row: usize,
    /// The line's text.
    pub line: String,
}

/// What `wait_for_output` answers: how the wait ended, the match, and the
/// last screen's tail.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForOutputOutput {
    /// How the wait ended.
    pub outcome: WaitOutputOutcome,
    /// How long the wait took, in ms.
    pub elapsed_ms: u64,
    /// The timeout actually applied.
    pub timeout_ms: u64,
    /// The terminal waited on.
    pub address: String,
    /// The lifetime waited on: `created_ms` if given, else the first one seen;
    /// null if none was seen.
    pub created_ms: Option<i64>,
    /// Status and sequence reported with the last screen.
    pub status: Option<TerminalStatus>,
    /// The `status_seq` reported with that status.
    pub status_seq: Option<u64>,
    /// The first line matching pattern on the last screen, or null.
    #[serde(rename = "match")]
    pub found: Option<OutputMatch>,
    /// Whether a screen other than the first was seen.
    pub screen_changed: bool,
    /// Screens read.
    pub polls: u64,
    /// The last `max_chars` characters of the last screen read.
    pub text: String,
    /// Characters on the whole last screen.
    pub total_chars: usize,
    /// True when `text` is only the end of the last screen.
    pub truncated: bool,
    /// hc's flag for the last screen: false when caught mid-update.
    pub complete: bool,
    /// Said with every screen: its text is untrusted program output.
    pub notice: String,
}

pub(super) fn render(out: &WaitForOutputOutput) -> String {
    let mut text = format!(
        "{:?}: {} after {} ms ({} polls, screen changed: {})",
        out.outcome,
        printable(&out.address),
        out.elapsed_ms,
        out.polls,
        if out.screen_changed { "yes" } else { "no" }
    );
    if let (Some(status), Some(seq)) = (out.status, out.status_seq) {
        text.push_str(&format!(" status={status} seq={seq}"));
    }
    if let Some(found) = &out.found {
        text.push_str(&format!(
            "\nmatch at row {}: {}",
            found.row,
            printable(&found.line)
        ));
    }
    if !out.complete && out.total_chars > 0 {
        text.push_str("\nthe last screen was caught mid-update (complete=false)");
    }
    text.push('\n');
    text.push_str(&shown_screen(&out.text));
    text
}
