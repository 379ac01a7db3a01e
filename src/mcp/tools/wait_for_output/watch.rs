//! One round of `wait_for_output`: `terminal.get` (gone, finished, another
//! lifetime), then `terminal.read` with `lines: 0` (under a wait permit),
//! then, with no permit held, the screen judged against the baseline (the
//! first complete screen), the pattern matched off the async workers.

use std::time::Duration;

use tokio::time::Instant;

use super::OutputPlan;
use super::matcher::{LineMatcher, scan_off_workers};
use super::output::{OutputMatch, WaitForOutputOutput, WaitOutputOutcome};
use crate::hc::client::Polls;
use crate::hc::wire::{ErrorKind, ReadResult};
use crate::hc::{CoreError, CoreId};
use crate::mcp::error::ToolError;
use crate::mcp::state::Matchers;
use crate::mcp::text::{UNTRUSTED_NOTICE, tail_chars};
use crate::mcp::tools::wait::{self, Poll, Watch};

pub(super) struct OutputWatch<'a> {
    plan: &'a OutputPlan,
    matchers: &'a Matchers,
    /// The pattern and what it knows of the last screen's lines; `None`
    /// without a pattern, or once a scan was abandoned with its wait.
    matcher: Option<LineMatcher>,
    /// The last round read a complete screen to judge.
    to_judge: bool,
    /// The last round found the program exited.
    finished: bool,
    pub polls: u64,
    /// The lifetime the wait is bound to: `created_ms` if given, else the
    /// first one seen, on the first core seen.
    pub lifetime: Option<i64>,
    core: Option<CoreId>,
    /// The first complete screen.
    baseline: Option<String>,
    /// The last screen read, and when its text was first seen.
    pub last: Option<(ReadResult, Instant)>,
    /// A complete screen other than the baseline has been seen.
    pub changed: bool,
    /// The first matching line of the last screen.
    pub found: Option<OutputMatch>,
}

impl<'a> OutputWatch<'a> {
    pub(super) fn new(plan: &'a OutputPlan, matchers: &'a Matchers) -> OutputWatch<'a> {
        OutputWatch {
            plan,
            matchers,
            matcher: plan.pattern.clone().map(LineMatcher::new),
            to_judge: false,
            finished: false,
            polls: 0,
            lifetime: plan.created_ms,
            core: None,
            baseline: None,
            last: None,
            changed: false,
            found: None,
        }
    }

    /// The answer after `outcome`, from the last screen read.
    pub(super) fn output(
        &self,
        outcome: WaitOutputOutcome,
        elapsed: Duration,
    ) -> WaitForOutputOutput {
        let plan = self.plan;
        let screen = self.last.as_ref().map(|(screen, _)| screen);
        let (text, total_chars, truncated) =
            tail_chars(screen.map_or("", |s| &s.text), plan.max_chars);
        WaitForOutputOutput {
            outcome,
            elapsed_ms: wait::millis(elapsed),
            timeout_ms: wait::millis(plan.timeout),
            address: plan.address.clone(),
            created_ms: self.lifetime,
            status: screen.map(|s| s.status),
            status_seq: screen.map(|s| s.status_seq),
            found: self.found.clone(),
            screen_changed: self.changed,
            polls: self.polls,
            text: text.to_owned(),
            total_chars,
            truncated,
            complete: screen.is_some_and(|s| s.complete),
            notice: UNTRUSTED_NOTICE.to_owned(),
        }
    }

    /// Keeps `screen` as the last one; returns whether its text is new.
    fn keep(&mut self, screen: ReadResult) -> bool {
        let new = self
            .last
            .as_ref()
            .is_none_or(|(last, _)| last.text != screen.text);
        let seen = match &self.last {
            Some((_, since)) if !new => *since,
            _ => Instant::now(),
        };
        self.last = Some((screen, seen));
        new
    }

    /// Whether the last (complete) screen ends the wait.
    async fn judge_screen(&mut self) -> Option<WaitOutputOutcome> {
        let (screen, since) = self.last.as_ref()?;
        let baseline = self.baseline.as_ref()?;
        if screen.text == *baseline {
            return None;
        }
        self.changed = true;
        let since = *since;
        let matched = if self.plan.pattern.is_some() {
            let matcher = self.matcher.take()?;
            let text = screen.text.clone();
            let (matcher, scan) = scan_off_workers(self.matchers, matcher, text).await;
            self.matcher = Some(matcher);
            // A scan the budget cut short says nothing yet of the lines it
            // did not reach: the next round goes on from there.
            self.found = scan.found.map(|(row, line)| OutputMatch { row, line });
            Some(self.found.is_some())
        } else {
            None
        };
        let quiet_enough = self.plan.quiet.is_none_or(|quiet| since.elapsed() >= quiet);
        match matched {
            Some(true) if quiet_enough => Some(WaitOutputOutcome::Matched),
            None if quiet_enough => Some(WaitOutputOutcome::Settled),
            _ => None,
        }
    }
}

impl Watch for OutputWatch<'_> {
    type Done = WaitOutputOutcome;

    async fn poll(&mut self, client: Polls<'_>) -> Result<Poll<WaitOutputOutcome>, ToolError> {
        self.polls += 1;
        let address = &self.plan.address;
        let record = match client.get(address).await {
            Ok(answer) => {
                if *self.core.get_or_insert_with(|| answer.core.core_id.clone())
                    != answer.core.core_id
                {
                    return Ok(Poll::Done(WaitOutputOutcome::CoreRestarted));
                }
                answer.value
            }
            Err(e) if is_gone(&e) => return Ok(Poll::Done(WaitOutputOutcome::Gone)),
            Err(e) => return Err(e.into()),
        };
        let screen = match client.read(address).await {
            Ok(answer) if Some(&answer.core.core_id) != self.core.as_ref() => {
                return Ok(Poll::Done(WaitOutputOutcome::CoreRestarted));
            }
            Ok(answer) => answer.value,
            Err(e) if is_gone(&e) => return Ok(Poll::Done(WaitOutputOutcome::Gone)),
            Err(e) => return Err(e.into()),
        };
        let bound = *self.lifetime.get_or_insert(record.created_ms);
        if record.created_ms != bound || screen.created_ms != bound {
            return Ok(Poll::Done(WaitOutputOutcome::LifetimeMismatch));
        }
        let complete = screen.complete;
        let new = self.keep(screen);
        // A screen caught mid-update never ends a wait, nor sets the baseline.
        self.to_judge = complete && self.baseline.is_some();
        if complete && self.baseline.is_none() {
            self.baseline = self.last.as_ref().map(|(s, _)| s.text.clone());
        }
        self.finished = record.is_finished();
        Ok(Poll::Pending { changed: new })
    }

    async fn judge(&mut self) -> Option<WaitOutputOutcome> {
        if std::mem::take(&mut self.to_judge)
            && let Some(outcome) = self.judge_screen().await
        {
            return Some(outcome);
        }
        self.finished.then_some(WaitOutputOutcome::Finished)
    }

    fn progress(&self) -> String {
        format!(
            "{} polls; screen changed since the wait began: {}",
            self.polls,
            if self.changed { "yes" } else { "no" }
        )
    }
}

fn is_gone(e: &CoreError) -> bool {
    e.hc_kind() == Some(ErrorKind::NotFound)
}
