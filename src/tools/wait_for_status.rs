//! `wait_for_status`: one bounded call instead of client-side polling. Polls
//! `terminal.get` for 1-16 targets with a short, backing-off interval until
//! one of them reaches a wanted state after a given `status_seq`, finishes,
//! disappears, or the timeout passes. No pooled connection is held between
//! polls, and all waits together use at most [`POLL_CONNECTIONS`] of the
//! pool's connections at a time, so waits never starve the other tools.

use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ProgressNotificationParam, ProgressToken};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use tokio::time::Instant;

use super::read_output::{DEFAULT_READ_CHARS, MAX_READ_CHARS, UNTRUSTED_NOTICE};
use super::text::tail_chars;
use super::{Failure, structured};
use crate::app::App;
use crate::hc::wire::{ErrorKind, TerminalRecord, TerminalStatus};
use crate::inspect::printable;

/// Most targets one wait may watch.
pub const MAX_TARGETS: usize = 16;
/// Pool connections all waits may use at once (of the pool's 8).
pub const POLL_CONNECTIONS: usize = 4;
const MIN_TIMEOUT_MS: u64 = 100;
const MAX_TIMEOUT_MS: u64 = 600_000;
const DEFAULT_TIMEOUT_MS: u64 = 60_000;
/// First poll interval; it grows by half each quiet round up to the maximum,
/// and drops back when something changes.
const FIRST_POLL: Duration = Duration::from_millis(25);
const MAX_POLL: Duration = Duration::from_millis(500);
/// A progress notification goes out at least this often while waiting.
const PROGRESS_EVERY: Duration = Duration::from_secs(5);

/// The states a wait can stop on (`unknown` is not one: it only means the
/// program never reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum UntilStatus {
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
pub struct WaitTarget {
    /// Terminal address, e.g. "t1".
    pub address: String,
    /// The terminal's created_ms: the wait ends with `lifetime_mismatch` if
    /// the terminal at `address` is another lifetime.
    pub created_ms: Option<i64>,
    /// Only a status with a status_seq greater than this counts. Pass
    /// send_prompt's core_status_seq so a `done` from the previous task
    /// never satisfies the wait. Without it the current state counts.
    pub after_seq: Option<u64>,
}

#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WaitForStatusArgs {
    /// 1-16 terminals to watch; the wait ends when ANY of them qualifies.
    pub targets: Vec<WaitTarget>,
    /// States that end the wait. Default ["done", "blocked", "error", "idle"].
    pub until: Option<Vec<UntilStatus>>,
    /// Longest wait, 100-600000 ms (never above the operator's waitMaxMs).
    /// Default 60000.
    #[schemars(range(min = 100, max = 600000))]
    pub timeout_ms: Option<u64>,
    /// Also return the screen of the target that ended the wait.
    #[serde(default)]
    pub include_output: bool,
    /// With include_output: at most this many characters (the END of the
    /// screen), 1-32768. Default 12000.
    #[schemars(range(min = 1, max = 32768))]
    pub max_chars: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaitOutcome {
    /// A target reached one of the `until` states.
    Reached,
    /// Nothing qualified within timeout_ms.
    Timeout,
    /// A target's program exited.
    Finished,
    /// A target's terminal no longer exists.
    Gone,
    /// The terminal at a target's address is another lifetime than created_ms.
    LifetimeMismatch,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TargetState {
    pub address: String,
    pub created_ms: Option<i64>,
    /// Last status seen; null if the target was never seen.
    pub status: Option<TerminalStatus>,
    pub status_seq: Option<u64>,
    pub finished: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Screen {
    pub text: String,
    pub total_chars: usize,
    pub truncated: bool,
    pub complete: bool,
    pub notice: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct WaitForStatusOutput {
    pub outcome: WaitOutcome,
    pub core_id: String,
    /// The target that ended the wait (null on timeout).
    pub address: Option<String>,
    pub created_ms: Option<i64>,
    pub status: Option<TerminalStatus>,
    pub status_seq: Option<u64>,
    pub elapsed_ms: u64,
    /// The timeout actually applied.
    pub timeout_ms: u64,
    /// Every target's last seen state.
    pub targets: Vec<TargetState>,
    /// With include_output: the ending target's screen.
    pub output: Option<Screen>,
}

struct Plan {
    targets: Vec<WaitTarget>,
    until: Vec<UntilStatus>,
    timeout: Duration,
    max_chars: usize,
    include_output: bool,
}

fn plan(app: &App, args: WaitForStatusArgs) -> Result<Plan, Failure> {
    if args.targets.is_empty() || args.targets.len() > MAX_TARGETS {
        return Err(Failure::InvalidParams(format!(
            "targets must hold 1 to {MAX_TARGETS} entries, got {}",
            args.targets.len()
        )));
    }
    let until = args.until.unwrap_or_else(|| {
        vec![
            UntilStatus::Done,
            UntilStatus::Blocked,
            UntilStatus::Error,
            UntilStatus::Idle,
        ]
    });
    if until.is_empty() {
        return Err(Failure::InvalidParams(
            "until must name at least one state".into(),
        ));
    }
    let timeout_ms = args.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS);
    if !(MIN_TIMEOUT_MS..=MAX_TIMEOUT_MS).contains(&timeout_ms) {
        return Err(Failure::InvalidParams(format!(
            "timeout_ms must be between {MIN_TIMEOUT_MS} and {MAX_TIMEOUT_MS}, got {timeout_ms}"
        )));
    }
    let max_chars = args.max_chars.unwrap_or(DEFAULT_READ_CHARS);
    if !(1..=MAX_READ_CHARS).contains(&max_chars) {
        return Err(Failure::InvalidParams(format!(
            "max_chars must be between 1 and {MAX_READ_CHARS}, got {max_chars}"
        )));
    }
    let timeout = Duration::from_millis(timeout_ms).min(app.config().wait_max);
    Ok(Plan {
        targets: args.targets,
        until,
        timeout,
        max_chars: max_chars as usize,
        include_output: args.include_output,
    })
}

/// What one poll of one target found.
enum Seen {
    Record(TerminalRecord),
    Gone,
}

pub async fn run(
    app: &App,
    args: WaitForStatusArgs,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, Failure> {
    let plan = plan(app, args)?;
    let started = Instant::now();
    let deadline = started + plan.timeout;
    let progress_token = context.meta.get_progress_token();
    let mut last: Vec<Option<TerminalRecord>> = vec![None; plan.targets.len()];
    let mut interval = FIRST_POLL;
    let mut last_progress = started;
    loop {
        let round = tokio::select! {
            biased;
            () = context.ct.cancelled() => return Err(cancelled()),
            round = poll_round(app, &plan.targets) => round?,
        };
        let mut changed = false;
        let mut ending: Option<(usize, WaitOutcome)> = None;
        for (i, (target, seen)) in plan.targets.iter().zip(round.seen).enumerate() {
            let outcome = match seen {
                Seen::Gone => Some(WaitOutcome::Gone),
                Seen::Record(record) => {
                    let outcome = judge(target, &record, &plan.until);
                    changed |= last[i].as_ref().map(|r| (r.status, r.status_seq))
                        != Some((record.status, record.status_seq));
                    last[i] = Some(record);
                    outcome
                }
            };
            if ending.is_none()
                && let Some(outcome) = outcome
            {
                ending = Some((i, outcome));
            }
        }
        let core_id = round.core_id;
        let now = Instant::now();
        if let Some((i, outcome)) = ending {
            return finish(app, &plan, outcome, Some(i), &last, core_id, started).await;
        }
        if now >= deadline {
            return finish(
                app,
                &plan,
                WaitOutcome::Timeout,
                None,
                &last,
                core_id,
                started,
            )
            .await;
        }
        if let Some(token) = &progress_token
            && (changed || now - last_progress >= PROGRESS_EVERY)
        {
            notify(context, token, &plan, &last, now - started).await;
            last_progress = now;
        }
        interval = if changed {
            FIRST_POLL
        } else {
            (interval * 3 / 2).min(MAX_POLL)
        };
        let wake = (now + interval).min(deadline);
        tokio::select! {
            biased;
            () = context.ct.cancelled() => return Err(cancelled()),
            () = tokio::time::sleep_until(wake) => {}
        }
    }
}

fn cancelled() -> Failure {
    Failure::Tool {
        kind: "cancelled",
        message: "the wait was cancelled".into(),
    }
}

struct Round {
    core_id: String,
    seen: Vec<Seen>,
}

/// One `terminal.get` per target under one of the wait permits.
async fn poll_round(app: &App, targets: &[WaitTarget]) -> Result<Round, Failure> {
    let _permit = app
        .wait_permits
        .acquire()
        .await
        .expect("wait permits are never closed");
    let mut seen = Vec::with_capacity(targets.len());
    let mut core_id = String::new();
    for target in targets {
        match app.client.get(&target.address).await {
            Ok(answer) => {
                core_id.clone_from(&answer.core.core_id);
                seen.push(Seen::Record(answer.value));
            }
            Err(e) if e.hc_kind() == Some(ErrorKind::NotFound) => seen.push(Seen::Gone),
            Err(e) => return Err(e.into()),
        }
    }
    if core_id.is_empty() {
        core_id = app.client.hello().await?.core_id.clone();
    }
    Ok(Round { core_id, seen })
}

/// Whether this record ends the wait, and how.
fn judge(
    target: &WaitTarget,
    record: &TerminalRecord,
    until: &[UntilStatus],
) -> Option<WaitOutcome> {
    if target.created_ms.is_some_and(|c| c != record.created_ms) {
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

async fn notify(
    context: &RequestContext<RoleServer>,
    token: &ProgressToken,
    plan: &Plan,
    last: &[Option<TerminalRecord>],
    elapsed: Duration,
) {
    let states: Vec<String> = plan
        .targets
        .iter()
        .zip(last)
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
    let param = ProgressNotificationParam::new(token.clone(), elapsed.as_millis() as f64)
        .with_total(plan.timeout.as_millis() as f64)
        .with_message(states.join(", "));
    if let Err(e) = context.peer.notify_progress(param).await {
        tracing::debug!("progress notification not delivered: {e}");
    }
}

async fn finish(
    app: &App,
    plan: &Plan,
    outcome: WaitOutcome,
    index: Option<usize>,
    last: &[Option<TerminalRecord>],
    core_id: String,
    started: Instant,
) -> Result<CallToolResult, Failure> {
    let ended_by = index.map(|i| (&plan.targets[i], last[i].as_ref()));
    let output = match ended_by {
        Some((target, Some(_))) if plan.include_output => {
            let screen = app.client.read(&target.address).await?.value;
            let (text, total_chars, truncated) = tail_chars(&screen.text, plan.max_chars);
            Some(Screen {
                text: text.to_owned(),
                total_chars,
                truncated,
                complete: screen.complete,
                notice: UNTRUSTED_NOTICE.to_owned(),
            })
        }
        _ => None,
    };
    let output = WaitForStatusOutput {
        outcome,
        core_id,
        address: ended_by.map(|(t, _)| t.address.clone()),
        created_ms: ended_by.and_then(|(t, r)| r.map(|r| r.created_ms).or(t.created_ms)),
        status: ended_by.and_then(|(_, r)| r.map(|r| r.status)),
        status_seq: ended_by.and_then(|(_, r)| r.map(|r| r.status_seq)),
        elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
        timeout_ms: u64::try_from(plan.timeout.as_millis()).unwrap_or(u64::MAX),
        targets: plan
            .targets
            .iter()
            .zip(last)
            .map(|(t, r)| TargetState {
                address: t.address.clone(),
                created_ms: r.as_ref().map(|r| r.created_ms).or(t.created_ms),
                status: r.as_ref().map(|r| r.status),
                status_seq: r.as_ref().map(|r| r.status_seq),
                finished: r.as_ref().is_some_and(TerminalRecord::is_finished),
            })
            .collect(),
        output,
    };
    let text = render(&output);
    Ok(structured(&output, text, false))
}

fn render(out: &WaitForStatusOutput) -> String {
    let mut text = match (&out.address, out.status, out.status_seq) {
        (Some(address), Some(status), Some(seq)) => format!(
            "{:?}: {} is {status} (seq {seq}) after {} ms",
            out.outcome,
            printable(address),
            out.elapsed_ms
        ),
        (Some(address), _, _) => format!(
            "{:?}: {} after {} ms",
            out.outcome,
            printable(address),
            out.elapsed_ms
        ),
        _ => format!("{:?} after {} ms", out.outcome, out.elapsed_ms),
    };
    for t in &out.targets {
        text.push_str(&format!(
            "\n  {}: {} seq={}{}",
            printable(&t.address),
            t.status.map_or("-".to_owned(), |s| s.to_string()),
            t.status_seq.map_or("-".to_owned(), |s| s.to_string()),
            if t.finished { " finished" } else { "" }
        ));
    }
    if let Some(screen) = &out.output {
        text.push_str(&format!(
            "\n{UNTRUSTED_NOTICE}\n--- screen ---\n{}",
            screen.text
        ));
    }
    text
}
