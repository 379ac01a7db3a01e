//! The tools' one error type, and the one place it becomes what an
//! assistant reads.
//!
//! Failure shapes: a tool that ran and failed, and arguments that are
//! malformed or out of range, both return a result with `isError` and a text
//! the model can act on (as current MCP revisions ask, and as rmcp already
//! does for arguments that do not deserialize), with `structuredContent`
//! only where it still matches the tool's output schema, as for every
//! `send_prompt` outcome. Only an unknown tool is a JSON-RPC error.

use rmcp::model::{CallToolResult, ContentBlock};
use serde::Serialize;
use serde_json::Value;

use super::tools::cursor::CursorError;
use super::tracking::since::SinceError;
use crate::escape::printable_lines;
use crate::hc::CoreError;

/// Why a read-only tool call failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ToolError {
    /// An argument is malformed or out of range.
    #[error("{argument} {problem}")]
    InvalidArgs {
        /// The argument's name, as the tool's input schema spells it.
        argument: &'static str,
        /// What is wrong with it, worded to follow its name.
        problem: String,
    },
    /// hc could not answer, or answered with an error.
    #[error(transparent)]
    Core(#[from] CoreError),
    /// `created_ms` was given and the live terminal is another lifetime.
    #[error(
        "the terminal at {address} has created_ms {actual}, not {expected}: it is another terminal lifetime"
    )]
    LifetimeMismatch {
        address: String,
        expected: i64,
        actual: i64,
    },
    /// A `list_sessions` cursor that does not open.
    #[error(transparent)]
    Cursor(#[from] CursorError),
    /// A `since` that does not open, or is of another core.
    #[error(transparent)]
    Since(#[from] SinceError),
    /// A fleet wait's timeout passed before the shared look at hc listed
    /// it once: nothing is wrong with the arguments.
    #[error(
        "hc was not listed once within this wait's {timeout_ms} ms: the adapter's look at hc did not complete in time (hc slow to answer terminal.list, or the adapter's own calls holding its connections to hc); no change could be judged. Wait again, or give the wait a longer timeout_ms"
    )]
    NoLook { timeout_ms: u64 },
    /// The terminal is on a machine the config does not show.
    #[error(transparent)]
    Hidden(#[from] crate::config::Hidden),
    /// The client cancelled the call.
    #[error("the wait was cancelled")]
    Cancelled,
    /// `serve` began to stop while the call ran.
    #[error(
        "herdr-core-mcp is stopping (SIGTERM or SIGINT): this wait ended before anything ended it; call again once the server is back"
    )]
    Stopping,
}

impl ToolError {
    /// `argument` is malformed or out of range: `problem` follows its name.
    pub(crate) fn invalid(argument: &'static str, problem: impl Into<String>) -> ToolError {
        ToolError::InvalidArgs {
            argument,
            problem: problem.into(),
        }
    }

    /// The stable code shown in brackets after the message.
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            ToolError::InvalidArgs { .. } => "invalid_params",
            ToolError::Core(e) => core_kind(e),
            ToolError::LifetimeMismatch { .. } => "lifetime_mismatch",
            ToolError::Cursor(CursorError::Invalid) => "invalid_cursor",
            ToolError::Cursor(CursorError::OtherCore { .. }) => "cursor_from_other_core",
            ToolError::Since(SinceError::Invalid) => "invalid_since",
            ToolError::Since(SinceError::OtherCore { .. }) => "since_from_other_core",
            ToolError::NoLook { .. } => "hc_not_listed",
            ToolError::Hidden(_) => "machine_hidden",
            ToolError::Cancelled => "cancelled",
            ToolError::Stopping => "server_stopping",
        }
    }

    /// The `isError` result the model reads.
    pub(crate) fn into_result(self) -> CallToolResult {
        let text = match &self {
            ToolError::InvalidArgs { .. } => {
                format!("invalid arguments: {self} [{}]", self.kind())
            }
            other => format!("{other} [{}]", other.kind()),
        };
        CallToolResult::error(vec![ContentBlock::text(printable_lines(&text))])
    }
}

fn core_kind(e: &CoreError) -> &'static str {
    match e {
        CoreError::SocketMissing { .. }
        | CoreError::NotListening { .. }
        | CoreError::NotASocket { .. }
        | CoreError::Connect { .. } => "hc_unavailable",
        CoreError::HandshakePin { .. } | CoreError::HandshakeRefused { .. } => "hc_incompatible",
        CoreError::Unaccepted { .. } => "hc_unaccepted",
        CoreError::Timeout { .. } => "hc_timeout",
        CoreError::ReplyTooLarge { .. } => "hc_reply_too_large",
        CoreError::Protocol { .. } | CoreError::Closed { .. } | CoreError::Io { .. } => {
            "hc_protocol"
        }
        CoreError::CoreChanged { .. } => "core_changed",
        CoreError::Queued { .. } | CoreError::MachineQueued { .. } => "adapter_busy",
        CoreError::Rpc {
            kind: Some(kind), ..
        } => kind.name(),
        CoreError::Rpc { kind: None, .. } => "hc_error",
    }
}

/// A result with `structuredContent` and a text rendering.
pub(crate) fn structured<T: Serialize>(value: &T, text: String, is_error: bool) -> CallToolResult {
    let value = serde_json::to_value(value).expect("tool outputs always encode");
    structured_value(value, text, is_error)
}

/// [`structured`] of an output already made a JSON value.
pub(crate) fn structured_value(value: Value, text: String, is_error: bool) -> CallToolResult {
    // Not `CallToolResult::structured`: it renders the whole value (screen
    // included) as JSON text only for us to replace it with `text`.
    let content = vec![ContentBlock::text(text)];
    let mut result = if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    };
    result.structured_content = Some(value);
    result
}

/// The edge for the read-only tools: a result either way.
pub(crate) fn respond(outcome: Result<CallToolResult, ToolError>) -> CallToolResult {
    outcome.unwrap_or_else(ToolError::into_result)
}
