//! A terminal as the tools and resources show it: hc's record, and what
//! the config in force approves of that exact lifetime on that core.

use schemars::JsonSchema;
use serde::Serialize;

use crate::config::{Config, SendMode, TerminalLifetime};
use crate::hc::CoreId;
use crate::hc::wire::TerminalRecord;

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct Session {
    #[serde(flatten)]
    pub record: TerminalRecord,
    /// True when this exact lifetime (address, created_ms) is on the
    /// operator's allowlist AND hc's core_id is the configured one.
    pub send_approved: bool,
    /// True when send_approved and the operator also allowed multi-line
    /// prompts (TAB and LF) for it; otherwise send one line only.
    pub multiline_allowed: bool,
    /// When send_approved: how it may be prompted. `idle-only`: only while
    /// idle; `normal`: also when done (an agent that reports done after
    /// each task can take follow-ups). Null when not approved.
    pub send_mode: Option<SendMode>,
    /// True when send_approved and each prompt to it waits for a human to
    /// confirm it in your MCP client (send_prompt asks; a client that
    /// cannot ask gets not_sent, confirmation_unavailable).
    pub confirm_required: bool,
}

impl Session {
    /// `record` with what the config approves of it on core `live_core`
    /// (nothing when the config cannot send).
    pub(crate) fn judged(
        record: TerminalRecord,
        approvals: Option<&Config>,
        live_core: &CoreId,
        config_mode: SendMode,
    ) -> Session {
        let lifetime = TerminalLifetime {
            address: record.address.clone(),
            created_ms: record.created_ms,
        };
        let approval = approvals.and_then(|config| config.approval(live_core, &lifetime));
        Session {
            record,
            send_approved: approval.is_some(),
            multiline_allowed: approval.is_some_and(|a| a.multiline),
            send_mode: approval.map(|a| a.mode(config_mode)),
            confirm_required: approval.is_some_and(|a| a.confirm),
        }
    }
}
