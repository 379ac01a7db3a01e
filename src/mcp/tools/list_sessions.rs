//! `list_sessions`: one page of hc's terminals, keyset-paginated by
//! `(created_ms, address)`, each marked with whether sends to it are approved.

use rmcp::model::CallToolResult;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::cursor::{self, Position};
use crate::app::App;
use crate::escape::printable;
use crate::hc::client::Listing;
use crate::hc::wire::{UnreadableRecord, check_machine_name};
use crate::mcp::error::{ToolError, structured};
use crate::mcp::seal::SealKey;
use crate::mcp::session::Session;
use crate::mcp::tracking::changes::{Look, since_of};
use crate::mcp::tracking::since::Scope;
use crate::mcp::tracking::ticker::wall_ms;

/// Page size bounds: enough for a coordinator's view, small enough to keep
/// a page cheap for the model to read.
pub(crate) const MAX_LIMIT: u32 = 100;
pub(crate) const DEFAULT_LIMIT: u32 = 25;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ListSessionsArgs {
    /// Include terminals whose program has exited. Default false.
    #[serde(default)]
    pub include_finished: bool,
    /// Terminals per page, 1-100. Default 25.
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// The `next_cursor` of the previous page, unchanged. Omit for the first page.
    pub cursor: Option<String>,
    /// Only the terminals of this machine (a name from list_machines), or
    /// "" for this core's own. Omit for every terminal. Keep it the same
    /// across pages.
    pub machine: Option<String>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct ListSessionsOutput {
    /// The hc core that produced this page.
    pub core_id: String,
    pub sessions: Vec<Session>,
    /// Pass as `cursor` for the next page; null on the last page.
    pub next_cursor: Option<String>,
    /// Pass as wait_for_status's `since` to be told of every change after
    /// this listing (scope `all`: every terminal hc lists, on every page,
    /// finished ones too). Null only when more terminals are listed than a
    /// since can hold (32 KiB, a few thousand); `since_unavailable` then
    /// says so.
    pub since: Option<String>,
    /// When `since` is null: why, and which waits do have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_unavailable: Option<String>,
    /// On the first page only: records hc listed in a shape this adapter
    /// cannot read (a required field missing or of another type, or an
    /// address it refuses), at most 20, each with its address when it had
    /// a readable one and what was wrong. Empty when every record was read.
    pub unreadable: Vec<UnreadableRecord>,
    /// How many records could not be read in all (first page only).
    pub unreadable_count: usize,
}

/// One page for `args`, from hc through `app`, its cursor and `since`
/// sealed with `seal`.
pub(crate) async fn run(
    app: &App,
    seal: &SealKey,
    args: ListSessionsArgs,
) -> Result<CallToolResult, ToolError> {
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(ToolError::invalid(
            "limit",
            format!("must be between 1 and {MAX_LIMIT}, got {limit}"),
        ));
    }
    if let Some(machine) = args.machine.as_deref().filter(|m| !m.is_empty()) {
        check_machine_name(machine).map_err(|why| ToolError::invalid("machine", why))?;
        app.check_shown(&format!("{machine}/"))?;
    }
    // Finished terminals too, for the since; the page drops them unless asked.
    let made_ms = wall_ms();
    let listed = app.list(true).await?;
    let machines = app.machines().await?;
    let live_core = &listed.core.core_id;
    let core_id = live_core.to_string();
    let after = match &args.cursor {
        Some(cursor) => Some(cursor::open(seal, cursor, &core_id)?),
        None => None,
    };
    let Listing {
        mut terminals,
        mut unreadable,
        mut unreadable_count,
    } = listed.value;
    if args.cursor.is_some() {
        // Named once, on the first page.
        unreadable.clear();
        unreadable_count = 0;
    }
    let look = Look {
        terminals: &terminals,
        in_scope: &|_| true,
        machines: machines.as_deref(),
        listed_ms: made_ms,
    };
    let covered = since_of(&look, &core_id, Scope::All, made_ms, seal);
    let since = covered.seal(seal);
    let since_unavailable = since.is_none().then(|| covered.unavailable());
    if !args.include_finished {
        terminals.retain(|t| !t.is_finished());
    }
    if let Some(machine) = &args.machine {
        let wanted = (!machine.is_empty()).then_some(machine.as_str());
        terminals.retain(|t| t.machine.as_deref() == wanted);
    }
    terminals.sort_by(|a, b| (a.created_ms, &a.address).cmp(&(b.created_ms, &b.address)));
    let start = match &after {
        Some(p) => {
            terminals.partition_point(|t| (t.created_ms, &t.address) <= (p.created_ms, &p.address))
        }
        None => 0,
    };
    let limit = limit as usize;
    let rest = &terminals[start..];
    let page = &rest[..rest.len().min(limit)];
    let next_cursor = (rest.len() > limit).then(|| {
        let last = page.last().expect("a full page has a last record");
        cursor::seal(
            seal,
            &Position {
                core_id: core_id.clone(),
                created_ms: last.created_ms,
                address: last.address.clone(),
            },
        )
    });
    // One snapshot for the whole page: every record is judged by the same config.
    let loaded = app.loaded();
    let approvals = loaded.for_sends().ok();
    let config_mode = loaded.config().send_mode();
    let sessions: Vec<Session> = page
        .iter()
        .map(|record| {
            Session::judged(
                record.clone(),
                approvals.map(AsRef::as_ref),
                live_core,
                config_mode,
            )
        })
        .collect();
    let output = ListSessionsOutput {
        core_id,
        sessions,
        next_cursor,
        since,
        since_unavailable,
        unreadable,
        unreadable_count,
    };
    let text = render(&output);
    Ok(structured(&output, text, false))
}

fn render(output: &ListSessionsOutput) -> String {
    let mut text = format!(
        "core {}: {} terminal(s) on this page{}\n",
        output.core_id,
        output.sessions.len(),
        if output.next_cursor.is_some() {
            " (more: pass next_cursor)"
        } else {
            ""
        }
    );
    for s in &output.sessions {
        let r = &s.record;
        text.push_str(&format!(
            "{}{} created_ms={} status={}{} seq={} program={} title={}{}{}{}\n",
            printable(&r.address),
            r.machine
                .as_deref()
                .map_or(String::new(), |m| format!(" machine={}", printable(m))),
            r.created_ms,
            match &r.reported_status {
                Some(word) => format!("unknown(reported {})", printable(word)),
                None => r.status.to_string(),
            },
            r.context.suffix(),
            r.status_seq,
            printable(r.program.as_deref().unwrap_or("-")),
            printable(r.title.as_deref().unwrap_or("-")),
            if r.is_finished() { " finished" } else { "" },
            match (s.send_mode, s.multiline_allowed) {
                (Some(mode), true) => format!(
                    " send_approved send_mode={} multiline_allowed",
                    mode.as_str()
                ),
                (Some(mode), false) => format!(" send_approved send_mode={}", mode.as_str()),
                (None, _) => String::new(),
            },
            if s.confirm_required {
                " confirm_required"
            } else {
                ""
            },
        ));
    }
    for u in &output.unreadable {
        text.push_str(&format!(
            "unreadable record {}: {}\n",
            printable(u.address.as_deref().unwrap_or("(no address)")),
            printable(&u.problem)
        ));
    }
    if output.unreadable_count > output.unreadable.len() {
        text.push_str(&format!(
            "{} more unreadable record(s)\n",
            output.unreadable_count - output.unreadable.len()
        ));
    }
    if let Some(since) = &output.since {
        text.push_str(&format!(
            "since (pass to wait_for_status to hear of every change after this): {since}\n"
        ));
    }
    if let Some(why) = &output.since_unavailable {
        text.push_str(&format!("{why}\n"));
    }
    text
}
