//! What `wait_for_status` answers: the outcome, the target that ended the
//! wait, every target's last seen state, and optionally a screen.

use std::time::Duration;

use schemars::JsonSchema;
use serde::Serialize;

use super::StatusWatch;
use crate::escape::printable;
use crate::hc::HcClient;
use crate::hc::wire::{StatusContext, TerminalRecord, TerminalStatus};
use crate::mcp::error::ToolError;
use crate::mcp::text::{UNTRUSTED_NOTICE, shown_screen, tail_chars};
use crate::mcp::tools::wait;
use crate::mcp::tracking::changes::{Change, ChangeKind};
use crate::mcp::tracking::machines::{MachineChange, MachineChangeKind};

/// How a status wait ended: `reached` (a target reached an `until`
/// state), `timeout`, `finished` (a target's program exited), `gone` (its
/// terminal no longer exists, or left the scope), `unreachable` (its
/// machine is not connected: it may still run), `machine_changed`
/// (without targets: a machine was added, removed, went down, came back
/// or runs another core), `lifetime_mismatch` (another lifetime is at the
/// address), `appeared` (without targets: a terminal came into the scope)
/// or `core_restarted` (hc restarted during the wait).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum WaitOutcome {
    /// A target reached one of the `until` states.
    Reached,
    /// Nothing qualified within timeout_ms.
    Timeout,
    /// A target's program exited.
    Finished,
    /// A target's terminal no longer exists.
    Gone,
    /// A target's machine is not connected (or a covered terminal's, in a
    /// fleet wait): its terminal could not be asked, and may still run.
    Unreachable,
    /// Without targets: a machine was added, removed, or changed its
    /// connection state or its core (`machine_changes` says which).
    MachineChanged,
    /// The terminal at a target's address is another lifetime than the one
    /// waited on: created_ms, or the first one the wait saw.
    LifetimeMismatch,
    /// Without targets: a terminal came into the scope (new, or newly
    /// approved).
    Appeared,
    /// hc restarted (another core_id) during the wait: every terminal the
    /// wait saw is gone, even where a new one has the same address.
    CoreRestarted,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct TargetState {
    pub address: String,
    pub created_ms: Option<i64>,
    /// Last status seen; null if the target was never seen.
    pub status: Option<TerminalStatus>,
    pub status_seq: Option<u64>,
    pub finished: bool,
    /// Why its status holds and since when, when hc says (the reason is
    /// untrusted program text, escaped).
    #[serde(flatten)]
    pub context: StatusContext,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct Screen {
    pub text: String,
    pub total_chars: usize,
    pub truncated: bool,
    pub complete: bool,
    pub notice: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub(crate) struct WaitForStatusOutput {
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
    /// Every target's last seen state (without targets: the covered
    /// terminals, at most 64).
    pub targets: Vec<TargetState>,
    /// With include_output: the ending target's screen.
    pub output: Option<Screen>,
    /// Without targets: which terminals were covered, `approved` or `all`
    /// (`named` when the since came from a targeted wait or a resource).
    pub scope: Option<String>,
    /// Without targets: every change of a covered terminal after the since
    /// given (or the call's start), at most 64, in address order.
    pub changes: Vec<Change>,
    /// Without targets: every machine (of those the config shows) added,
    /// removed, or whose connection state or core changed after the since;
    /// each ends the wait. A terminal on a machine that is not connected is
    /// reported `unreachable`, never `gone`.
    pub machine_changes: Vec<MachineChange>,
    /// True when more changes happened than `changes` holds: call again
    /// with `since`, which resumes right after them.
    pub more: bool,
    /// Pass as `since` to the next wait_for_status without targets: it
    /// then reports every change after this answer. Null when hc never
    /// answered, or when more terminals are covered than a since can hold
    /// (`since_unavailable` then says so).
    pub since: Option<String>,
    /// When `since` is null for covering too many terminals: why, and
    /// which waits do have one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since_unavailable: Option<String>,
    /// On a timeout: why it may never end otherwise (a target that has
    /// never reported a status); else null.
    pub note: Option<String>,
}

impl WaitForStatusOutput {
    pub(super) fn new(
        watch: &StatusWatch<'_>,
        outcome: WaitOutcome,
        ending: Option<usize>,
        output: Option<Screen>,
        elapsed: Duration,
    ) -> WaitForStatusOutput {
        let plan = watch.plan;
        let ended_by = ending.map(|i| (&plan.targets[i], watch.last[i].as_ref()));
        WaitForStatusOutput {
            outcome,
            core_id: watch.core_id.clone(),
            address: ended_by.map(|(t, _)| t.address.clone()),
            created_ms: ended_by.and_then(|(t, r)| r.map(|r| r.created_ms).or(t.created_ms)),
            status: ended_by.and_then(|(_, r)| r.map(|r| r.status)),
            status_seq: ended_by.and_then(|(_, r)| r.map(|r| r.status_seq)),
            elapsed_ms: wait::millis(elapsed),
            timeout_ms: wait::millis(plan.timeout),
            targets: plan
                .targets
                .iter()
                .zip(&watch.last)
                .map(|(t, r)| TargetState {
                    address: t.address.clone(),
                    created_ms: r.as_ref().map(|r| r.created_ms).or(t.created_ms),
                    status: r.as_ref().map(|r| r.status),
                    status_seq: r.as_ref().map(|r| r.status_seq),
                    finished: r.as_ref().is_some_and(TerminalRecord::is_finished),
                    context: r.as_ref().map(|r| r.context.clone()).unwrap_or_default(),
                })
                .collect(),
            output,
            scope: None,
            changes: Vec::new(),
            more: false,
            machine_changes: Vec::new(),
            since: None,
            since_unavailable: None,
            note: (outcome == WaitOutcome::Timeout)
                .then(|| never_reported(&watch.last))
                .flatten(),
        }
    }
}

/// The note of a timeout on targets that have never reported a status: no
/// `until` state can come until their program starts reporting.
fn never_reported(last: &[Option<TerminalRecord>]) -> Option<String> {
    let silent: Vec<String> = last
        .iter()
        .flatten()
        .filter(|r| r.status == TerminalStatus::Unknown && !r.is_finished())
        .map(|r| printable(&r.address).into_owned())
        .collect();
    (!silent.is_empty()).then(|| {
        format!(
            "{} {} never reported a status (a shell, for instance): a wait for a status ends only once its program reports one; check with list_sessions or read_output rather than waiting again",
            silent.join(", "),
            if silent.len() == 1 { "has" } else { "have" }
        )
    })
}

impl TargetState {
    /// A covered terminal as the last look showed it.
    pub(super) fn of(record: &TerminalRecord) -> TargetState {
        TargetState {
            address: record.address.clone(),
            created_ms: Some(record.created_ms),
            status: Some(record.status),
            status_seq: Some(record.status_seq),
            finished: record.is_finished(),
            context: record.context.clone(),
        }
    }
}

pub(super) fn render(out: &WaitForStatusOutput) -> String {
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
            "\n  {}: {}{} seq={}{}",
            printable(&t.address),
            t.status.map_or("-".to_owned(), |s| s.to_string()),
            t.context.suffix(),
            t.status_seq.map_or("-".to_owned(), |s| s.to_string()),
            if t.finished { " finished" } else { "" }
        ));
    }
    for m in &out.machine_changes {
        text.push_str(&format!(
            "\n  machine {}: {}{}",
            printable(&m.machine),
            match m.change {
                MachineChangeKind::Added => "added".to_owned(),
                MachineChangeKind::State => "state changed".to_owned(),
                MachineChangeKind::CoreChanged => "runs another core now".to_owned(),
                MachineChangeKind::Removed => "removed".to_owned(),
            },
            match (m.old_state, m.state) {
                (Some(old), Some(new)) => format!(" ({old} -> {new})"),
                (None, Some(new)) => format!(" ({new})"),
                (Some(old), None) => format!(" (was {old})"),
                (None, None) => String::new(),
            }
        ));
    }
    for c in &out.changes {
        text.push_str(&format!(
            "\n  change {}: {}{} seq {}->{}{}",
            c.address
                .as_deref()
                .map_or_else(|| "(a long address)".into(), printable),
            change_word(c.change),
            c.status
                .map_or(String::new(), |s| format!(" now {s}{}", c.context.suffix())),
            c.old_status_seq.map_or("-".to_owned(), |s| s.to_string()),
            c.status_seq.map_or("-".to_owned(), |s| s.to_string()),
            if c.wanted { "" } else { " (not in until)" },
        ));
    }
    if out.more {
        text.push_str("\n  more changes: call again with since");
    }
    if let Some(note) = &out.note {
        text.push_str(&format!("\nnote: {note}"));
    }
    if let Some(since) = &out.since {
        text.push_str(&format!("\nsince: {since}"));
    }
    if let Some(why) = &out.since_unavailable {
        text.push_str(&format!("\n{why}"));
    }
    if let Some(screen) = &out.output {
        text.push('\n');
        text.push_str(&shown_screen(&screen.text));
    }
    text
}

fn change_word(kind: ChangeKind) -> &'static str {
    match kind {
        ChangeKind::Appeared => "appeared",
        ChangeKind::Status => "status",
        ChangeKind::Finished => "finished",
        ChangeKind::NewLifetime => "new lifetime",
        ChangeKind::Gone => "gone",
        ChangeKind::LeftScope => "left the scope",
        ChangeKind::Unreachable => "unreachable (its machine is not connected)",
        ChangeKind::Reachable => "reachable again",
    }
}

/// The end of `address`'s current screen, at most `max_chars`.
pub(super) async fn read_screen(
    client: &HcClient,
    address: &str,
    max_chars: usize,
) -> Result<Screen, ToolError> {
    let screen = client.read(address).await?.value;
    let (text, total_chars, truncated) = tail_chars(&screen.text, max_chars);
    Ok(Screen {
        text: text.to_owned(),
        total_chars,
        truncated,
        complete: screen.complete,
        notice: UNTRUSTED_NOTICE.to_owned(),
    })
}
