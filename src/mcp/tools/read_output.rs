//! `read_output`: the current screen of one terminal (never history), cut to
//! its last `max_chars` characters, marked as untrusted program output.

use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::mcp::arguments::address;

use crate::app::App;
use crate::escape::printable;
use crate::hc::wire::{StatusContext, TerminalStatus};
use crate::mcp::error::{ToolError, structured_value};
use crate::mcp::text::{
    DEFAULT_READ_CHARS, UNTRUSTED_NOTICE, read_limit, shown_screen, tail_chars,
};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ReadOutputArgs {
    /// Terminal address from list_sessions, e.g. "t1" or "machine/t7".
    #[serde(deserialize_with = "address")]
    #[schemars(length(min = 1, max = 128))]
    pub address: String,
    /// The terminal's created_ms from list_sessions. When given, the read
    /// fails unless the live terminal at `address` is that same lifetime.
    pub created_ms: Option<i64>,
    /// Return at most this many characters (the END of the screen), 1-32768.
    /// Default 12000.
    #[schemars(range(min = 1, max = 32768))]
    pub max_chars: Option<u32>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ReadOutputOutput {
    pub core_id: String,
    pub address: String,
    pub created_ms: i64,
    pub status: TerminalStatus,
    pub status_seq: u64,
    /// Why the status holds and since when, when hc says (the reason is
    /// untrusted program text, escaped).
    #[serde(flatten)]
    pub context: StatusContext,
    /// The last `max_chars` characters of the current screen.
    pub text: String,
    /// Characters on the whole screen.
    pub total_chars: usize,
    /// True when `text` is only the end of the screen.
    pub truncated: bool,
    /// hc's flag: false when the screen was caught mid-update.
    pub complete: bool,
    pub notice: String,
}

/// The screen `args` asks for, read through `app` (never from a machine
/// the config does not show).
pub(crate) async fn run(app: &App, args: ReadOutputArgs) -> Result<CallToolResult, ToolError> {
    let max_chars = read_limit(args.max_chars, DEFAULT_READ_CHARS)
        .map_err(|problem| ToolError::invalid("max_chars", problem))?;
    app.check_shown(&args.address)?;
    let read = app.client().read(&args.address).await?;
    let screen = read.value;
    if let Some(expected) = args.created_ms
        && expected != screen.created_ms
    {
        return Err(ToolError::LifetimeMismatch {
            address: args.address,
            expected,
            actual: screen.created_ms,
        });
    }
    let context = screen.status_context();
    let (tail, total_chars, truncated) = tail_chars(&screen.text, max_chars);
    let shown_chars = if truncated {
        tail.chars().count()
    } else {
        total_chars
    };
    // The screen is moved, its head cut off in place: no copy of the text.
    let start = screen.text.len() - tail.len();
    let mut text = screen.text;
    text.drain(..start);
    let output = ReadOutputOutput {
        core_id: read.core.core_id.to_string(),
        address: screen.address,
        created_ms: screen.created_ms,
        status: screen.status,
        status_seq: screen.status_seq,
        context,
        text,
        total_chars,
        truncated,
        complete: screen.complete,
        notice: UNTRUSTED_NOTICE.to_owned(),
    };
    let rendering = render(&output, shown_chars);
    Ok(structured_value(output.into_value(), rendering, false))
}

/// What the model reads: a header line, the notice and the escaped screen.
fn render(output: &ReadOutputOutput, shown_chars: usize) -> String {
    let mut text = String::with_capacity(output.text.len() + 256);
    text.push_str(&format!(
        "{} (created_ms {}) status={} seq={}",
        printable(&output.address),
        output.created_ms,
        output.status,
        output.status_seq,
    ));
    text.push_str(&output.context.suffix());
    if output.truncated {
        text.push_str(&format!(
            ", last {shown_chars} of {} chars",
            output.total_chars
        ));
    }
    if !output.complete {
        text.push_str(", caught mid-update (complete=false)");
    }
    text.push('\n');
    text.push_str(&shown_screen(&output.text));
    text
}

impl ReadOutputOutput {
    /// The structured output, the screen moved into it rather than copied
    /// (`serde_json::to_value` would copy it): the same JSON, key for key
    /// and in order, as serializing the struct (a unit test holds them
    /// equal).
    fn into_value(self) -> Value {
        let mut map = Map::with_capacity(10);
        map.insert("core_id".into(), Value::String(self.core_id));
        map.insert("address".into(), Value::String(self.address));
        map.insert("created_ms".into(), self.created_ms.into());
        map.insert(
            "status".into(),
            serde_json::to_value(self.status).expect("a status encodes"),
        );
        map.insert("status_seq".into(), self.status_seq.into());
        if let Value::Object(context) =
            serde_json::to_value(&self.context).expect("a status context encodes")
        {
            map.extend(context);
        }
        map.insert("text".into(), Value::String(self.text));
        map.insert("total_chars".into(), self.total_chars.into());
        map.insert("truncated".into(), self.truncated.into());
        map.insert("complete".into(), self.complete.into());
        map.insert("notice".into(), Value::String(self.notice));
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_moved_value_is_the_serialized_struct() {
        for (status, truncated) in [
            (TerminalStatus::Idle, false),
            (TerminalStatus::Blocked, true),
        ] {
            // Read once: the age is the clock's at that reading.
            let context = if truncated {
                StatusContext::of(Some("permission"), Some("Allow?\u{2028}"), Some(1))
            } else {
                StatusContext::default()
            };
            let output = || ReadOutputOutput {
                core_id: "core-a".into(),
                address: "machine/t7".into(),
                created_ms: 1_796_000_000_000,
                status,
                status_seq: 42,
                context: context.clone(),
                text: "a screen\nwith \u{1b}[31m escapes ü".into(),
                total_chars: 31,
                truncated,
                complete: !truncated,
                notice: UNTRUSTED_NOTICE.into(),
            };
            let serialized = serde_json::to_string(&output()).unwrap();
            let moved = serde_json::to_string(&output().into_value()).unwrap();
            assert_eq!(moved, serialized);
        }
    }
}
