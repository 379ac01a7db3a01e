//! `wait_for_status`: waits until any of 1-16 targets reaches a wanted
//! state after a given `status_seq`, finishes, disappears, or the timeout
//! passes. One round of the wait engine is one `terminal.get` per target;
//! the engine (`wait`) owns the deadline, backoff, progress and
//! cancellation. Without targets it waits on the fleet (`fleet`): every
//! terminal of a scope, from a `since` or from the call's start, on the
//! one shared look at hc per tick.

use std::sync::Arc;
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::mcp::arguments::address;
use tokio::time::Instant;

mod fleet;
mod output;
pub(crate) mod turn;

use crate::mcp::tracking::changes::named_since;
use crate::mcp::tracking::ticker::wall_ms;
use output::read_screen;
pub(crate) use output::{WaitForStatusOutput, WaitOutcome};

use super::wait::{self, Ended, Limits, Poll, Watch};
use crate::app::App;
use crate::escape::printable;
use crate::hc::CoreId;
use crate::hc::client::Polls;
use crate::hc::wire::{ErrorKind, TerminalRecord, TerminalStatus};
use crate::mcp::error::{ToolError, structured};
use crate::mcp::seal::SealKey;
use crate::mcp::text::{DEFAULT_READ_CHARS, read_limit};
use crate::mcp::tracking::ticker::Ticker;

/// Most targets one wait may watch.
pub(crate) const MAX_TARGETS: usize = 16;
const MIN_TIMEOUT_MS: u64 = 100;
const MAX_TIMEOUT_MS: u64 = 600_000;
const DEFAULT_TIMEOUT_MS: u64 = 50_000;
/// The states that end a wait when `until` is not given.
const DEFAULT_UNTIL: [UntilStatus; 4] = [
    UntilStatus::Done,
    UntilStatus::Blocked,
    UntilStatus::Error,
    UntilStatus::Idle,
];

/// The states a wait can stop on (`unknown` is not one: it only means the
/// program never reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum UntilStatus {
    Idle,
    Done,
    Blocked,
    Error,
    Working,
}

impl UntilStatus {
    fn matches(self, status: TerminalStatus) -> bool {
        matches!(
            (self, status),
            (UntilStatus::Idle, TerminalStatus::Idle)
                | (UntilStatus::Done, TerminalStatus::Done)
                | (UntilStatus::Blocked, TerminalStatus::Blocked)
                | (UntilStatus::Error, TerminalStatus::Error)
                | (UntilStatus::Working, TerminalStatus::Working)
        )
    }
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitTarget {
    /// Terminal address, e.g. "t1" or "machine/t7".
    #[serde(deserialize_with = "address")]
    #[schemars(length(min = 1, max = 128))]
    pub address: String,
    /// The terminal's created_ms: the wait ends with `lifetime_mismatch` if
    /// the terminal at `address` is another lifetime.
    pub created_ms: Option<i64>,
    /// Only a status with a status_seq greater than this counts. Pass
    /// send_prompt's core_status_seq so a `done` from the previous task
    /// never satisfies the wait. Without it the current state counts.
    pub after_seq: Option<u64>,
}

/// Which terminals a wait without targets covers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum FleetScope {
    /// The approved terminals (core and lifetime on the allowlist).
    Approved,
    /// Every terminal hc lists (reading status is read-only).
    All,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct WaitForStatusArgs {
    /// 1-16 terminals to watch; the wait ends when ANY of them qualifies.
    /// Omitted: every approved terminal that is live when the call starts,
    /// each counted after its status_seq then, so the wait ends at the
    /// first change of any of them into an `until` state (the answer's
    /// `address` says which).
    pub targets: Option<Vec<WaitTarget>>,
    /// Without targets: the `since` of a previous wait_for_status answer
    /// (or of list_sessions, or a terminal resource), unchanged. The wait
    /// then answers at once with every change after it (a higher
    /// status_seq, a new lifetime, a terminal gone, finished or new), and
    /// otherwise waits for the first; nothing that happened between two
    /// calls is missed. Each answer carries the since to pass next.
    #[schemars(length(max = 16384))]
    pub since: Option<String>,
    /// Without targets: `approved` (the approved terminals; the default
    /// without since) or `all` (every terminal hc lists). With since it
    /// defaults to, and must be, the since's own scope.
    pub scope: Option<FleetScope>,
    /// States that end the wait. Default ["done", "blocked", "error", "idle"];
    /// with since, every status change ends it unless until is given
    /// (changes to other states are still reported).
    #[schemars(extend("default" = ["done", "blocked", "error", "idle"]))]
    pub until: Option<Vec<UntilStatus>>,
    /// Longest wait, 100-600000 ms (never above the operator's waitMaxMs).
    /// Default 50000: under the 60 s many hosts give one tool call. Keep it
    /// under your host's limit, and call again to wait longer.
    #[schemars(range(min = 100, max = 600000), extend("default" = DEFAULT_TIMEOUT_MS))]
    pub timeout_ms: Option<u64>,
    /// Also return the screen of the target that ended the wait.
    #[serde(default)]
    #[schemars(extend("default" = false))]
    pub include_output: bool,
    /// With include_output: at most this many characters (the END of the
    /// screen), 1-32768. Default 12000.
    #[schemars(range(min = 1, max = 32768), extend("default" = DEFAULT_READ_CHARS))]
    pub max_chars: Option<u32>,
}

/// The validated arguments every status wait shares.
struct Bounds {
    /// As given (the default depends on the kind of wait).
    until: Option<Vec<UntilStatus>>,
    timeout: Duration,
    max_chars: usize,
    include_output: bool,
}

impl Bounds {
    fn new(args: &WaitForStatusArgs, wait_max: Duration) -> Result<Bounds, ToolError> {
        if args.until.as_ref().is_some_and(Vec::is_empty) {
            return Err(ToolError::invalid("until", "must name at least one state"));
        }
        let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
        if !(MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
            return Err(ToolError::invalid(
                "timeout_ms",
                format!("must be between {MIN_TIMEOUT_MS} and {MAX_TIMEOUT_MS}, got {timeout_ms}"),
            ));
        }
        let max_chars = read_limit(args.max_chars, DEFAULT_READ_CHARS)
            .map_err(|problem| ToolError::invalid("max_chars", problem))?;
        Ok(Bounds {
            until: args.until.clone(),
            timeout: Duration::from_millis(timeout_ms).min(wait_max),
            max_chars,
            include_output: args.include_output,
        })
    }
}

/// The validated arguments of a wait on named targets.
struct StatusPlan {
    targets: Vec<WaitTarget>,
    until: Vec<UntilStatus>,
    timeout: Duration,
    max_chars: usize,
    include_output: bool,
}

impl StatusPlan {
    fn new(targets: Vec<WaitTarget>, bounds: Bounds) -> Result<StatusPlan, ToolError> {
        if targets.is_empty() || targets.len() > MAX_TARGETS {
            return Err(ToolError::invalid(
                "targets",
                format!(
                    "must hold 1 to {MAX_TARGETS} entries, got {}",
                    targets.len()
                ),
            ));
        }
        Ok(StatusPlan {
            targets,
            until: bounds.until.unwrap_or_else(|| DEFAULT_UNTIL.to_vec()),
            timeout: bounds.timeout,
            max_chars: bounds.max_chars,
            include_output: bounds.include_output,
        })
    }
}

/// The targets' last seen records; done when one of them qualifies. Each
/// target is bound to one lifetime: its created_ms, else the first one
/// seen at its address, on the first core seen, so a wait never follows an
/// address into another terminal or a restarted hc.
struct StatusWatch<'a> {
    plan: &'a StatusPlan,
    last: Vec<Option<TerminalRecord>>,
    /// Each target's lifetime (created_ms), once known.
    bound: Vec<Option<i64>>,
    /// The core the wait is bound to: the first one that answered.
    core: Option<CoreId>,
    core_id: String,
}

impl Watch for StatusWatch<'_> {
    /// The index of the target that ended the wait, and how.
    type Done = (usize, WaitOutcome);

    async fn poll(&mut self, client: Polls<'_>) -> Result<Poll<Self::Done>, ToolError> {
        let mut changed = false;
        let mut ending = None;
        let mut answered = false;
        for (i, target) in self.plan.targets.iter().enumerate() {
            let outcome = match client.get(&target.address).await {
                Ok(answer) => {
                    answered = true;
                    let core = &answer.core.core_id;
                    self.core_id = core.to_string();
                    if *self.core.get_or_insert_with(|| core.clone()) != *core {
                        return Ok(Poll::Done((i, WaitOutcome::CoreRestarted)));
                    }
                    let record = answer.value;
                    changed |= self.last[i].as_ref().map(|r| (r.status, r.status_seq))
                        != Some((record.status, record.status_seq));
                    let bound = *self.bound[i].get_or_insert(record.created_ms);
                    let outcome = judge(target, bound, &record, &self.plan.until);
                    self.last[i] = Some(record);
                    outcome
                }
                Err(e) if e.hc_kind() == Some(ErrorKind::NotFound) => Some(WaitOutcome::Gone),
                // Its machine is not connected: the terminal may still run.
                Err(e) if e.hc_kind() == Some(ErrorKind::MachineUnavailable) => {
                    answered = true;
                    Some(WaitOutcome::Unreachable)
                }
                Err(e) => return Err(e.into()),
            };
            if ending.is_none() {
                ending = outcome.map(|outcome| (i, outcome));
            }
        }
        if !answered {
            let core = client.hello().await?.core_id.clone();
            self.core_id = core.to_string();
            if self.core.as_ref().is_some_and(|bound| *bound != core) {
                return Ok(Poll::Done((0, WaitOutcome::CoreRestarted)));
            }
        }
        Ok(match ending {
            Some(done) => Poll::Done(done),
            None => Poll::Pending { changed },
        })
    }

    fn progress(&self) -> String {
        let states: Vec<String> = self
            .plan
            .targets
            .iter()
            .zip(&self.last)
            .map(|(t, r)| match r {
                Some(r) => format!(
                    "{}: {} (seq {})",
                    printable(&t.address),
                    r.status,
                    r.status_seq
                ),
                None => format!("{}: not seen", printable(&t.address)),
            })
            .collect();
        states.join(", ")
    }
}

/// Whether this record ends the wait for a target bound to the lifetime
/// `bound`, and how.
fn judge(
    target: &WaitTarget,
    bound: i64,
    record: &TerminalRecord,
    until: &[UntilStatus],
) -> Option<WaitOutcome> {
    if record.created_ms != bound {
        return Some(WaitOutcome::LifetimeMismatch);
    }
    if record.is_finished() {
        return Some(WaitOutcome::Finished);
    }
    let fresh = target
        .after_seq
        .is_none_or(|after| record.status_seq > after);
    (fresh && until.iter().any(|u| u.matches(record.status))).then_some(WaitOutcome::Reached)
}

/// What the status waits use of the surface: the app, the key that seals
/// their `since` tokens, and the one shared look at hc.
#[derive(Clone, Copy)]
pub(crate) struct Watching<'a> {
    pub app: &'a Arc<App>,
    pub seal: &'a SealKey,
    pub ticker: &'a Ticker,
    /// How often progress goes out while the wait goes on.
    pub progress: Duration,
}

/// One wait for `args`, on `w`.
pub(crate) async fn run(
    w: Watching<'_>,
    args: WaitForStatusArgs,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let wait_max = w.app.loaded().config().wait_max();
    let bounds = Bounds::new(&args, wait_max)?;
    let Some(targets) = args.targets else {
        return fleet::run(w, args.since, args.scope, bounds, context).await;
    };
    if args.since.is_some() {
        return Err(ToolError::invalid(
            "since",
            "applies only without targets (a since names what it covers): drop targets or since",
        ));
    }
    if args.scope.is_some() {
        return Err(ToolError::invalid(
            "scope",
            "applies only without targets: drop targets or scope",
        ));
    }
    for target in &targets {
        w.app.check_shown(&target.address)?;
    }
    let plan = StatusPlan::new(targets, bounds)?;
    let started = Instant::now();
    let mut watch = StatusWatch {
        plan: &plan,
        last: vec![None; plan.targets.len()],
        bound: plan.targets.iter().map(|t| t.created_ms).collect(),
        core: None,
        core_id: String::new(),
    };
    let client = w.app.client();
    let ended = wait::run(
        client,
        &mut watch,
        Limits::new(plan.timeout, w.progress),
        context,
    )
    .await?;
    let made_ms = wall_ms();
    let (ending, outcome) = match ended {
        Ended::Done((i, outcome)) => (Some(i), outcome),
        Ended::Timeout => (None, WaitOutcome::Timeout),
    };
    let screen = match ending {
        Some(i) if plan.include_output && watch.last[i].is_some() => {
            Some(read_screen(client, &plan.targets[i].address, plan.max_chars).await?)
        }
        _ => None,
    };
    let mut output = WaitForStatusOutput::new(&watch, outcome, ending, screen, started.elapsed());
    // What this answer shows of its targets, to wait on them after it.
    if !watch.core_id.is_empty() {
        let addresses: Vec<&str> = plan.targets.iter().map(|t| t.address.as_str()).collect();
        let seen: Vec<TerminalRecord> = watch.last.iter().flatten().cloned().collect();
        output.since = named_since(&addresses, &seen, &watch.core_id, made_ms, w.seal).seal(w.seal);
    }
    let text = output::render(&output);
    Ok(structured(&output, text, false))
}
