//! `wait_for_status` without targets: a wait on every terminal of a scope
//! (`approved` or `all`, or the addresses a named since holds), from a
//! `since` or from the call's start. It answers at once when a covered
//! terminal changed after the since, and otherwise follows the one shared
//! look at hc per tick (`tracking::ticker`) until a wanted change, the
//! timeout or a cancel. Every answer reports every change (at most 64,
//! `more` beyond) and a since that resumes right after them: nothing is
//! kept per client, so stdio and stateless HTTP work alike.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use tokio::sync::watch;
use tokio::time::Instant;

use super::output::{self, TargetState, WaitForStatusOutput, WaitOutcome};
use super::{Bounds, DEFAULT_UNTIL, FleetScope, Watching, read_screen};
use crate::config::TerminalLifetime;
use crate::hc::wire::TerminalRecord;
use crate::mcp::error::{ToolError, structured};
use crate::mcp::tools::wait;
use crate::mcp::tracking::changes::{
    Change, ChangeKind, MAX_CHANGES, advance, compare, machine_changes, since_of,
};
use crate::mcp::tracking::machines::MachineChange;
use crate::mcp::tracking::since::{Scope, Since};
use crate::mcp::tracking::ticker::{Sighting, Tick};

pub(super) async fn run(
    w: Watching<'_>,
    since: Option<String>,
    scope: Option<FleetScope>,
    bounds: Bounds,
    context: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let given = since
        .as_deref()
        .map(|token| Since::open(w.seal, token))
        .transpose()?;
    let scope = scope_of(given.as_ref(), scope)?;
    if scope == Scope::Approved && w.app.loaded().for_sends().is_err() {
        return Err(ToolError::invalid(
            "targets",
            "omitted, but the config in force is invalid, so no terminal counts as approved: name the targets to wait on, or pass scope \"all\"",
        ));
    }
    // With a since every change is news; without, the states of old.
    let until = match (&bounds.until, &given) {
        (Some(until), _) => Some(until.clone()),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_UNTIL.to_vec()),
    };
    let wanted_status = |status| {
        until
            .as_ref()
            .is_none_or(|u| u.iter().any(|u| u.matches(status)))
    };
    let started = Instant::now();
    let deadline = started + bounds.timeout;
    let mut ticks = w.ticker.follow(w.app);
    let fresh_after = given.as_ref().map(|s| s.made_ms);
    let Some(mut current) = next_look(w, &mut ticks, fresh_after, deadline, context).await? else {
        return Err(ToolError::NoLook {
            timeout_ms: wait::millis(bounds.timeout),
        });
    };
    let baseline = match given {
        Some(since) => {
            since.check_core(current.core.as_str())?;
            since
        }
        None => {
            let in_scope = |r: &TerminalRecord| in_scope(w, scope, &current, r);
            let look = current.look(&in_scope);
            let baseline = since_of(
                &look,
                current.core.as_str(),
                scope,
                current.asked_ms,
                w.seal,
            );
            let live = current
                .terminals
                .iter()
                .any(|r| !r.is_finished() && (look.in_scope)(r));
            if scope == Scope::Approved && !live {
                return Err(ToolError::invalid(
                    "targets",
                    "omitted, but no approved terminal is live now: name the targets to wait on, or pass scope \"all\"",
                ));
            }
            baseline
        }
    };
    let progress_token = context.meta.get_progress_token();
    let mut last_progress = started;
    let mut reported_so_far = 0;
    loop {
        if current.core.as_str() != baseline.core_id {
            return answer(
                w,
                Answering::restarted(&baseline, &current, scope),
                &bounds,
                started,
            )
            .await;
        }
        let (mut changes, machines) = {
            let in_scope = |r: &TerminalRecord| in_scope(w, scope, &current, r);
            let look = current.look(&in_scope);
            (
                compare(&baseline, &look, w.seal, &wanted_status),
                machine_changes(&baseline, &look, w.seal),
            )
        };
        // The wanted ones first, so they are never cut off by the others.
        changes.sort_by_key(|c| !c.wanted);
        if changes.first().is_some_and(|c| c.wanted) || !machines.is_empty() {
            let answering = Answering::changed(&baseline, &current, scope, changes, machines);
            return answer(w, answering, &bounds, started).await;
        }
        let now = Instant::now();
        if let Some(token) = &progress_token
            && (changes.len() != reported_so_far || now - last_progress >= w.progress)
        {
            let message = format!(
                "{} terminal(s) watched, {} change(s) outside until so far",
                baseline.entries.len(),
                changes.len()
            );
            wait::notify(context, token, now - started, bounds.timeout, message).await;
            last_progress = now;
            reported_so_far = changes.len();
        }
        match next_look(w, &mut ticks, Some(current.asked_ms), deadline, context).await? {
            Some(next) => current = next,
            None => {
                let answering = Answering::changed(&baseline, &current, scope, changes, Vec::new());
                return answer(w, answering, &bounds, started).await;
            }
        }
    }
}

/// The scope a wait covers: the since's own (an explicit one must agree),
/// else the one asked for, else `approved`.
fn scope_of(given: Option<&Since>, asked: Option<FleetScope>) -> Result<Scope, ToolError> {
    let asked = asked.map(|s| match s {
        FleetScope::Approved => Scope::Approved,
        FleetScope::All => Scope::All,
    });
    match (given.map(|s| s.scope), asked) {
        (Some(own), Some(asked)) if own != asked => Err(ToolError::invalid(
            "scope",
            format!(
                "is {}, but the since covers scope {}: pass the since's scope (or none), or call without since",
                asked.as_str(),
                own.as_str()
            ),
        )),
        (Some(own), _) => Ok(own),
        (None, asked) => Ok(asked.unwrap_or(Scope::Approved)),
    }
}

/// Whether `record` of `sighting` is in `scope` now (the config in force
/// decides what is approved; a named since's own keys decide for it).
fn in_scope(w: Watching<'_>, scope: Scope, sighting: &Sighting, record: &TerminalRecord) -> bool {
    match scope {
        Scope::All | Scope::Named => true,
        Scope::Approved => w.app.loaded().for_sends().is_ok_and(|config| {
            config.is_send_approved(
                &sighting.core,
                &TerminalLifetime {
                    address: record.address.clone(),
                    created_ms: record.created_ms,
                },
            )
        }),
    }
}

/// The next look at hc asked after `fresh_after` (any look without it),
/// or `None` once `deadline` passes. A tick on which hc could not be
/// listed is asked again by this wait, so that its error is the wait's.
async fn next_look(
    w: Watching<'_>,
    ticks: &mut watch::Receiver<Tick>,
    fresh_after: Option<u64>,
    deadline: Instant,
    context: &RequestContext<RoleServer>,
) -> Result<Option<Arc<Sighting>>, ToolError> {
    loop {
        let tick = ticks.borrow_and_update().clone();
        match tick {
            Tick::Seen(seen) if fresh_after.is_none_or(|after| seen.asked_ms > after) => {
                return Ok(Some(seen));
            }
            Tick::Failed => return Ok(Some(Arc::new(Sighting::now(w.app).await?))),
            Tick::Seen(_) | Tick::Nothing => {}
        }
        tokio::select! {
            biased;
            () = context.ct.cancelled() => return Err(ToolError::Cancelled),
            () = tokio::time::sleep_until(deadline) => return Ok(None),
            changed = ticks.changed() => if changed.is_err() {
                return Ok(None);
            },
        }
    }
}

/// What an answer is made of.
struct Answering {
    outcome: WaitOutcome,
    scope: Scope,
    /// Every change found, wanted ones first.
    changes: Vec<Change>,
    /// Every machine change found.
    machines: Vec<MachineChange>,
    sighting: Arc<Sighting>,
    /// The since the answer hands out, before its changes are applied.
    base: Since,
}

impl Answering {
    fn changed(
        baseline: &Since,
        sighting: &Arc<Sighting>,
        scope: Scope,
        changes: Vec<Change>,
        machines: Vec<MachineChange>,
    ) -> Answering {
        let outcome = match changes.first() {
            Some(c) if c.wanted => match c.change {
                ChangeKind::Status => WaitOutcome::Reached,
                ChangeKind::Finished => WaitOutcome::Finished,
                ChangeKind::Gone | ChangeKind::LeftScope => WaitOutcome::Gone,
                ChangeKind::NewLifetime => WaitOutcome::LifetimeMismatch,
                ChangeKind::Appeared => WaitOutcome::Appeared,
                ChangeKind::Unreachable => WaitOutcome::Unreachable,
                ChangeKind::Reachable => WaitOutcome::MachineChanged,
            },
            _ if !machines.is_empty() => WaitOutcome::MachineChanged,
            _ => WaitOutcome::Timeout,
        };
        Answering {
            outcome,
            scope,
            changes,
            machines,
            sighting: Arc::clone(sighting),
            base: baseline.clone(),
        }
    }

    /// hc restarted: nothing the since saw is there, and the since handed
    /// out starts on the new core.
    fn restarted(baseline: &Since, sighting: &Arc<Sighting>, scope: Scope) -> Answering {
        Answering {
            outcome: WaitOutcome::CoreRestarted,
            scope,
            changes: Vec::new(),
            machines: Vec::new(),
            sighting: Arc::clone(sighting),
            base: Since {
                core_id: sighting.core.to_string(),
                scope,
                made_ms: sighting.asked_ms,
                entries: if scope == Scope::Named {
                    baseline
                        .entries
                        .iter()
                        .map(|e| crate::mcp::tracking::since::Entry {
                            key: e.key.clone(),
                            seen: None,
                        })
                        .collect()
                } else {
                    Vec::new()
                },
                machines: Vec::new(),
            },
        }
    }
}

async fn answer(
    w: Watching<'_>,
    answering: Answering,
    bounds: &Bounds,
    started: Instant,
) -> Result<CallToolResult, ToolError> {
    let Answering {
        outcome,
        scope,
        mut changes,
        machines,
        sighting,
        base,
    } = answering;
    let more = changes.len() > MAX_CHANGES;
    changes.truncate(MAX_CHANGES);
    let next = advance(&base, &changes, &machines, sighting.asked_ms);
    let since = next.seal(w.seal);
    let since_unavailable = since.is_none().then(|| next.unavailable());
    let ending = changes
        .first()
        .filter(|c| c.wanted && outcome != WaitOutcome::Timeout);
    let screen = match ending.and_then(|c| c.address.as_deref().zip(c.created_ms)) {
        Some((address, _)) if bounds.include_output => {
            Some(read_screen(w.app.client(), address, bounds.max_chars).await?)
        }
        _ => None,
    };
    let mut covered: Vec<&TerminalRecord> = sighting
        .terminals
        .iter()
        .filter(|r| match scope {
            Scope::Named => base
                .entry(&crate::mcp::tracking::since::AddressKey::of(
                    &r.address, w.seal,
                ))
                .is_some(),
            _ => in_scope(w, scope, &sighting, r),
        })
        .collect();
    covered.sort_by(|a, b| (a.created_ms, &a.address).cmp(&(b.created_ms, &b.address)));
    let output = WaitForStatusOutput {
        outcome,
        core_id: sighting.core.to_string(),
        address: ending.and_then(|c| c.address.clone()),
        created_ms: ending.and_then(|c| c.created_ms.or(c.old_created_ms)),
        status: ending.and_then(|c| c.status),
        status_seq: ending.and_then(|c| c.status_seq.or(c.old_status_seq)),
        elapsed_ms: wait::millis(started.elapsed()),
        timeout_ms: wait::millis(bounds.timeout),
        targets: covered
            .into_iter()
            .take(MAX_CHANGES)
            .map(TargetState::of)
            .collect(),
        output: screen,
        scope: Some(scope.as_str().to_owned()),
        changes,
        machine_changes: machines,
        more,
        since,
        since_unavailable,
        note: None,
    };
    let text = output::render(&output);
    Ok(structured(&output, text, false))
}
