//! Following the turn a send started (`send_prompt` with `follow_ms`): a
//! targeted status wait on the one terminal the send reached, bound to the
//! lifetime it landed in, counting only statuses after the `status_seq` hc
//! answered the send with, until `done`, `idle`, `blocked` or `error`, the
//! terminal's end, or the bound. The same engine and rules as a targeted
//! `wait_for_status` (`StatusWatch`).

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use tokio::time::Instant;

use super::{DEFAULT_UNTIL, StatusPlan, StatusWatch, WaitOutcome, WaitTarget, Watching};
use crate::hc::wire::TerminalRecord;
use crate::mcp::error::ToolError;
use crate::mcp::text::DEFAULT_READ_CHARS;
use crate::mcp::tools::wait::{self, Ended, Limits};
use crate::mcp::tracking::changes::named_since;
use crate::mcp::tracking::ticker::wall_ms;

/// What a follow saw.
#[derive(Debug)]
pub(crate) struct Followed {
    /// How the wait ended (`timeout`: the turn still runs).
    pub outcome: WaitOutcome,
    /// The terminal as last seen, if it was.
    pub last: Option<TerminalRecord>,
    pub elapsed: Duration,
    /// A since of this terminal, for the next wait.
    pub since: Option<String>,
}

/// Follows `address` (lifetime `created_ms`) after `after_seq` for at most
/// `timeout`, through `w`, cancelled with `context`.
pub(crate) async fn follow(
    w: Watching<'_>,
    address: &str,
    created_ms: i64,
    after_seq: u64,
    timeout: Duration,
    context: &RequestContext<RoleServer>,
) -> Result<Followed, ToolError> {
    let plan = StatusPlan {
        targets: vec![WaitTarget {
            address: address.to_owned(),
            created_ms: Some(created_ms),
            after_seq: Some(after_seq),
        }],
        until: DEFAULT_UNTIL.to_vec(),
        timeout,
        max_chars: DEFAULT_READ_CHARS as usize,
        include_output: false,
    };
    let started = Instant::now();
    let mut watch = StatusWatch {
        plan: &plan,
        last: vec![None],
        bound: vec![Some(created_ms)],
        core: None,
        core_id: String::new(),
    };
    let limits = Limits::new(timeout, w.progress);
    let ended = wait::run(w.app.client(), &mut watch, limits, context).await?;
    let outcome = match ended {
        Ended::Done((_, outcome)) => outcome,
        Ended::Timeout => WaitOutcome::Timeout,
    };
    let last = watch.last.pop().flatten();
    let since = (!watch.core_id.is_empty())
        .then(|| {
            let seen: Vec<TerminalRecord> = last.iter().cloned().collect();
            named_since(&[address], &seen, &watch.core_id, wall_ms(), w.seal).seal(w.seal)
        })
        .flatten();
    Ok(Followed {
        outcome,
        last,
        elapsed: started.elapsed(),
        since,
    })
}
